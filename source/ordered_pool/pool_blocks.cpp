// The ordered pool core: block bookkeeping, completion of pending blocks,
// and chunks.
#include "ordo_pool/pool_impl.hpp"

namespace ordo::pool {

block *ordered_pool::impl::new_block() {
  block *b = spare_;
  spare_ = b->next;
  --spare_count_;
  *b = block{};
  return b;
}

void ordered_pool::impl::recycle(block *b) {
  b->next = spare_;
  spare_ = b;
  ++spare_count_;
}

bool ordered_pool::impl::stock_up(std::size_t nodes, std::size_t blocks) {
  try {
    nodes_.reserve(nodes);
    while (spare_count_ < blocks)
      recycle(new block);
    return true;
  } catch (const std::bad_alloc &) {
    return false;
  }
}

void ordered_pool::impl::index(block *b) {
  if (b->state == block_state::free) {
    free_.insert(b);
  } else if (b->state == block_state::pending) {
    pending_.insert(b);
    pending_event_.insert(b);
    if (b->in_order)
      pending_queue_.insert(b);
  }
}

void ordered_pool::impl::unindex(block *b) {
  if (b->state == block_state::free) {
    free_.erase(b);
  } else if (b->state == block_state::pending) {
    pending_.erase(b);
    pending_event_.erase(b);
    if (b->in_order)
      pending_queue_.erase(b);
  }
}

void ordered_pool::impl::drop_release(block *b) {
  if (b->state != block_state::pending)
    return;
  be_.release_event(b->event);
  --pending_count_;
  b->event = nullptr;
  b->queue = nullptr;
  b->in_order = false;
  b->state = block_state::free;
}

block *ordered_pool::impl::split_at(block *b, std::uintptr_t at) {
  block *nb = new_block();
  nb->addr = at;
  nb->size = b->end() - at;
  nb->owner = b->owner;
  b->size = at - b->addr;
  nb->prev = b;
  nb->next = b->next;
  if (b->next)
    b->next->prev = nb;
  b->next = nb;
  by_addr_.insert(nb);
  return nb;
}

void ordered_pool::impl::absorb(block *left, block *right) {
  left->size += right->size;
  left->next = right->next;
  if (right->next)
    right->next->prev = left;
  by_addr_.erase(right);
  recycle(right);
}

void ordered_pool::impl::coalesce_free(block *b) {
  if (b->prev && b->prev->state == block_state::free) {
    block *p = b->prev;
    free_.erase(p);
    absorb(p, b);
    b = p;
  }
  if (b->next && b->next->state == block_state::free) {
    block *n = b->next;
    free_.erase(n);
    absorb(b, n);
  }
  free_.insert(b);
}

const block *ordered_pool::impl::containing(std::uintptr_t addr) const {
  auto it = by_addr_.upper_bound(addr);
  if (it == by_addr_.begin())
    return nullptr;
  --it;
  return addr < (*it)->end() ? *it : nullptr;
}

void ordered_pool::impl::promote(block *b) {
  pending_.erase(b);
  if (b->in_order)
    pending_queue_.erase(b);
  drop_release(b);
  coalesce_free(b);
}

void ordered_pool::impl::promote_event(event_handle ev) {
  auto it = pending_event_.lower_bound(by_event::type{as_uint(ev), 0});
  while (it != pending_event_.end() && (*it)->event == ev) {
    block *b = *it;
    it = pending_event_.erase(it);
    promote(b);
  }
}

bool ordered_pool::impl::collect_locked() {
  bool any = false;
  auto it = pending_event_.begin();
  while (it != pending_event_.end()) {
    const event_handle ev = (*it)->event;
    if (be_.event_complete(ev)) {
      any = true;
      while (it != pending_event_.end() && (*it)->event == ev) {
        block *b = *it;
        it = pending_event_.erase(it);
        promote(b);
      }
    } else {
      it = pending_event_.upper_bound(
          by_event::type{as_uint(ev), std::numeric_limits<std::uintptr_t>::max()});
    }
  }
  return any;
}

block *ordered_pool::impl::grow(std::size_t need, std::size_t align) {
  if (fixed_)
    return nullptr;
  const std::size_t want = need + (align - block_granule);
  const std::size_t gran = cfg_.chunk_granularity;
  std::size_t size =
      want <= std::numeric_limits<std::size_t>::max() - gran ? align_up(want, gran) : want;
  if (cfg_.max_size) {
    if (stats_.reserved_current >= cfg_.max_size)
      return nullptr;
    const std::size_t room = align_down(cfg_.max_size - stats_.reserved_current, block_granule);
    if (room < want)
      return nullptr;
    size = std::min(size, room);
  }
  std::unique_ptr<chunk> c;
  try {
    c = std::make_unique<chunk>();
    chunks_.reserve(chunks_.size() + 1);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
  void *p = be_.get_chunk(size);
  if (!p && size > want) {
    size = want; // the rounding may be what failed
    p = be_.get_chunk(size);
  }
  if (!p)
    return nullptr;
  const std::uintptr_t lo = align_up(as_uint(p), block_granule);
  const std::uintptr_t hi = align_down(as_uint(p) + size, block_granule);
  if (hi < lo || hi - lo < want) { // a badly aligned chunk lost too much
    be_.put_chunk(p, size);
    return nullptr;
  }
  c->raw = p;
  c->raw_size = size;
  block *b = new_block();
  b->addr = lo;
  b->size = hi - lo;
  b->owner = c.get();
  c->first = b;
  by_addr_.insert(b);
  chunks_.push_back(c.release());
  stats_.reserved_current += size;
  stats_.reserved_high = std::max(stats_.reserved_high, stats_.reserved_current);
  return b;
}

void ordered_pool::impl::drop_chunk(std::size_t i) {
  chunk *c = chunks_[i];
  free_.erase(c->first);
  by_addr_.erase(c->first);
  recycle(c->first);
  be_.put_chunk(c->raw, c->raw_size);
  stats_.reserved_current -= c->raw_size;
  chunks_[i] = chunks_.back();
  chunks_.pop_back();
  delete c;
}

} // namespace ordo::pool
