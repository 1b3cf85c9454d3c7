// SPDX-License-Identifier: Apache-2.0
// The ordered pool core: block bookkeeping, completion of pending blocks,
// and chunks.
#include "ordo_pool/pool_impl.hpp"

namespace ordo::pool {

block *ordered_pool::impl::new_block() {
  block *b = spare_;
  spare_ = b->next;
  --spare_count_;
  // Spares are often cold (a trim recycles a block per chunk): the next one is read
  // early, so that the next alloc does not wait for it.
  if (spare_) __builtin_prefetch(spare_, 1);
  return new (b) block; // every field in its one line, written whole
}

void ordered_pool::impl::recycle(block *b) {
  b->next = spare_;
  spare_ = b;
  ++spare_count_;
}

bool ordered_pool::impl::stock_up(std::size_t nodes, std::size_t blocks) {
  try {
    nodes_.reserve(nodes);
    while (spare_count_ < blocks) recycle(make_block());
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
    if (b->in_order) pending_queue_.insert(b);
  }
}

void ordered_pool::impl::unindex(block *b) {
  if (b->state == block_state::free) {
    free_.erase(b);
  } else if (b->state == block_state::pending) {
    pending_.erase(b);
    pending_event_.erase(b);
    if (b->in_order) pending_queue_.erase(b);
  }
}

void ordered_pool::impl::drop_release(block *b) {
  if (b->state != block_state::pending) return;
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
  b->size = at - b->addr;
  nb->prev = b;
  nb->next = b->next;
  if (b->next) b->next->prev = nb;
  b->next = nb;
  return nb;
}

void ordered_pool::impl::absorb(block *left, block *right) {
  left->size += right->size;
  left->next = right->next;
  if (right->next) right->next->prev = left;
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

bool ordered_pool::impl::quick_eligible(const block *b, const release_info &rel) const {
  if (quick_count_ == quick_slots || b->has_runs) return false;
  if (!rel.event) return !b->event || be_.event_complete(b->event); // else release_now() decides
  // Only what rule 1 can hand back without a question, and nothing free() would
  // merge with (a neighbour pending, or kept, on the same queue).
  auto same_queue = [&](const block *n) {
    return n && (n->state == block_state::pending || n->state == block_state::quick) && n->event && n->in_order &&
           n->queue == rel.queue;
  };
  return rel.queue && rel.in_order && !same_queue(b->prev) && !same_queue(b->next);
}

void ordered_pool::impl::keep_quick(block *b, const release_info &rel) {
  if (!rel.event) {
    drop_inherited(b);
  } else {
    // The free is ordered after the block's alloc, which was ordered after the
    // releases it took over (see free()): they are no longer needed.
    drop_inherited(b);
    be_.retain_event(rel.event);
    b->event = rel.event;
    b->queue = rel.queue;
    b->in_order = true;
    ++pending_count_;
  }
  b->state = block_state::quick;
  quick_[quick_count_++] = b;
}

block *ordered_pool::impl::take_quick(const alloc_request &rq, std::size_t need, std::size_t align) {
  for (std::size_t i = quick_count_; i-- > 0;) {
    block *b = quick_[i];
    if (b->size != need || (b->addr & (align - 1)) != 0) continue;
    if (b->event && (!cfg_.reuse_ordered || !ordered_after(rq, b))) continue;
    quick_[i] = quick_[--quick_count_];
    quick_[quick_count_] = nullptr;
    if (b->event) --pending_count_; // its release now belongs to the live block (rule 1)
    return b;
  }
  return nullptr;
}

bool ordered_pool::impl::flush_quick() {
  if (quick_count_ == 0) return true;
  if (!stock_up(3 * quick_count_, 0)) // index nodes: three per pending block at most
    return false;
  while (quick_count_) {
    block *b = quick_[--quick_count_];
    quick_[quick_count_] = nullptr;
    if (b->event) {
      b->state = block_state::pending; // already counted in pending_count_
      index(b);
    } else {
      b->state = block_state::free;
      coalesce_free(b);
    }
  }
  return true;
}

chunk *ordered_pool::impl::chunk_of(std::uintptr_t addr) const {
  auto it = chunk_at_.upper_bound(addr);
  if (it == chunk_at_.begin()) return nullptr;
  chunk *c = std::prev(it)->second;
  return addr - as_uint(c->raw) < c->raw_size ? c : nullptr;
}

const block *ordered_pool::impl::containing(std::uintptr_t addr) const {
  if (const block *b = live_index_.find(addr)) return b;
  const chunk *c = chunk_of(addr);
  if (!c) return nullptr;
  for (const block *b = c->first; b; b = b->next)
    if (addr < b->end()) return addr >= b->addr ? b : nullptr;
  return nullptr;
}

void ordered_pool::impl::promote(block *b) {
  pending_.erase(b);
  if (b->in_order) pending_queue_.erase(b);
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
      it = pending_event_.upper_bound(by_event::type{as_uint(ev), std::numeric_limits<std::uintptr_t>::max()});
    }
  }
  return any;
}

bool ordered_pool::impl::collect_some(std::size_t max_events) {
  if (pending_event_.empty()) return false;
  const std::uintptr_t start = collect_cursor_;
  auto it = pending_event_.lower_bound(by_event::type{start, 0});
  bool any = false, wrapped = false;
  for (std::size_t asked = 0; asked < max_events; ++asked) {
    if (it == pending_event_.end()) {
      if (wrapped || start == 0) break;
      wrapped = true;
      it = pending_event_.begin();
      if (it == pending_event_.end()) break; // every one was promoted
    }
    const event_handle ev = (*it)->event;
    if (wrapped && as_uint(ev) >= start) break; // came round to where this call began
    if (be_.event_complete(ev)) {
      any = true;
      while (it != pending_event_.end() && (*it)->event == ev) {
        block *b = *it;
        it = pending_event_.erase(it);
        promote(b);
      }
    } else {
      it = pending_event_.upper_bound(by_event::type{as_uint(ev), std::numeric_limits<std::uintptr_t>::max()});
    }
  }
  collect_cursor_ = it == pending_event_.end() ? 0 : as_uint((*it)->event);
  return any;
}

block *ordered_pool::impl::grow(std::size_t need, std::size_t align, alloc_undo &undo) {
  if (fixed_) return nullptr;
  const std::size_t want = need + (align - block_granule);
  if (want > max_block_bytes) return nullptr; // no chunk can be that large (detail.hpp)
  const std::size_t gran = cfg_.chunk_granularity;
  std::size_t size = want <= std::numeric_limits<std::size_t>::max() - gran ? align_up(want, gran) : want;
  // Geometric: a core that already holds a lot grows by a share of it (up to a cap), so
  // the number of chunks grows with the log of the pool's size, not with the number of
  // large requests. Each chunk costs the backend a call (and the native CPU device a
  // mapping and a page fault), the pool a chunk record, and a large pool's chunks made
  // one per request were half of its CPU time (docs/ordered-pool.md, "Chunk sizes").
  // The unused part of the newest chunk is at most 1/growth_share of what the core held.
  // Not under a maximum: there the slack of one core's chunk would be room the pool's
  // other cores (its other kinds of memory) can no longer reserve.
  std::size_t room = budget_->room();
  const std::size_t share = std::min(held_ / growth_share, growth_cap);
  if (room == std::numeric_limits<std::size_t>::max() && share > size &&
      share <= std::numeric_limits<std::size_t>::max() - gran)
    size = align_up(share, gran);
  // The maximum is the UR pool's, over every core that shares the budget.
  if (room != std::numeric_limits<std::size_t>::max()) {
    if (align_down(room, block_granule) < want && !make_room(want)) return nullptr;
    room = align_down(budget_->room(), block_granule);
    size = std::min(size, room);
  }
  size = std::min(size, max_block_bytes); // want is at most that (above)
  std::unique_ptr<chunk> c;
  try {
    c = std::make_unique<chunk>();
    // Geometric: reserving exactly one more copied the whole list at every growth,
    // quadratic in the number of chunks (~5·10^4 in the 100k random workload).
    if (chunks_.size() == chunks_.capacity()) chunks_.reserve(std::max<std::size_t>(16, 2 * chunks_.size()));
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
  // Reserved before the backend is asked, so two cores cannot both pass the limit.
  std::size_t hb = 0, hs = 0;
  if (!budget_->try_reserve(size, &hb, &hs)) {
    if (size == want || !budget_->try_reserve(want, &hb, &hs)) return nullptr;
    size = want;
  }
  void *p = be_.get_chunk(size);
  if (!p && size > want) {
    budget_->unreserve(size - want); // the rounding may be what failed
    size = want;
    p = be_.get_chunk(size);
  }
  const std::uintptr_t lo = p ? align_up(as_uint(p), block_granule) : 0;
  const std::uintptr_t hi = p ? align_down(as_uint(p) + size, block_granule) : 0;
  if (p && (hi < lo || hi - lo < want)) { // a badly aligned chunk lost too much
    be_.put_chunk(p, size);
    p = nullptr;
  }
  if (!p) {
    budget_->unreserve(size);
    budget_->undo_reserved_high(hb, hs);
    return nullptr;
  }
  undo.reserved_high_before = hb;
  undo.reserved_high_set = hs;
  c->raw = p;
  c->raw_size = size;
  block *b = new_block();
  b->addr = lo;
  b->size = hi - lo;
  c->first = b;
  try {
    chunk_at_.emplace(as_uint(p), c.get());
  } catch (const std::bad_alloc &) {
    recycle(b);
    be_.put_chunk(p, size);
    budget_->unreserve(size);
    budget_->undo_reserved_high(hb, hs);
    undo.reserved_high_before = undo.reserved_high_set = 0;
    return nullptr;
  }
  chunks_.push_back(c.release());
  held_ += size;
  return b;
}

// Wholly free chunks go back to the backend, newest first, when that leaves room
// under the maximum for a chunk of `want` bytes; otherwise nothing changes (a request
// that cannot fit anyway never costs the pool its chunks).
bool ordered_pool::impl::make_room(std::size_t want) {
  std::size_t freeable = 0;
  for (chunk *c : chunks_)
    if (!c->user_memory && c->wholly_free()) freeable += c->raw_size;
  if (align_down(budget_->room() + freeable, block_granule) < want) return false;
  for (std::size_t i = chunks_.size(); i-- > 0 && align_down(budget_->room(), block_granule) < want;)
    if (!chunks_[i]->user_memory && chunks_[i]->wholly_free()) drop_chunk(i);
  return align_down(budget_->room(), block_granule) >= want;
}

void ordered_pool::impl::drop_chunk(std::size_t i) {
  chunk *c = chunks_[i];
  free_.erase(c->first);
  chunk_at_.erase(as_uint(c->raw));
  recycle(c->first);
  be_.put_chunk(c->raw, c->raw_size);
  budget_->unreserve(c->raw_size);
  held_ -= c->raw_size;
  chunks_[i] = chunks_.back();
  chunks_.pop_back();
  delete c;
}

void ordered_pool::impl::drop_chunk(const chunk *c) {
  for (std::size_t i = 0; i < chunks_.size(); ++i)
    if (chunks_[i] == c) {
      drop_chunk(i);
      return;
    }
}

void ordered_pool::impl::drop_inherited(block *b) {
  if (b->has_runs) {
    for (const inherited_release &r : *b->runs_) be_.release_event(r.event);
    delete b->runs_;
    b->set_runs(nullptr);
  } else if (b->event) {
    be_.release_event(b->event);
  } else {
    b->in_order = false;
    return; // nothing taken over; the queue means nothing without a release
  }
  b->event = nullptr;
  b->queue = nullptr;
  b->in_order = false;
}

void ordered_pool::impl::drop_completed_inherited(bool only_completed) {
  if (!inherited_live_) return;
  bool left = false;
  live_index_.for_each([&](block *b) {
    if (b->has_runs) {
      auto &runs = *b->runs_;
      auto keep = std::remove_if(runs.begin(), runs.end(), [&](const inherited_release &r) {
        if (only_completed && !be_.event_complete(r.event)) return false;
        be_.release_event(r.event);
        return true;
      });
      runs.erase(keep, runs.end());
      if (runs.empty()) {
        delete b->runs_;
        b->set_runs(nullptr);
      } else {
        left = true;
      }
    } else if (b->event) {
      if (!only_completed || be_.event_complete(b->event))
        drop_inherited(b);
      else
        left = true;
    }
  });
  inherited_live_ = left;
}

void ordered_pool::impl::release_now(block *b) {
  if (!b->has_runs) {
    if (b->event && !be_.event_complete(b->event)) {
      // Still the previous owner's: pending on its free, as before the alloc.
      b->state = block_state::pending;
      ++pending_count_;
      index(b);
      return;
    }
    drop_inherited(b);
    b->state = block_state::free;
    coalesce_free(b);
    return;
  }
  // Several pieces (a rule-3 run): each incomplete piece becomes pending on its
  // own release, the rest free. The caller stocked blocks and nodes for the splits.
  std::unique_ptr<std::vector<inherited_release>> runs(b->runs_);
  b->set_runs(nullptr);
  b->event = nullptr;
  block *cur = b; // the part not yet placed; its state is a placeholder (live)
  for (const inherited_release &r : *runs) {
    if (be_.event_complete(r.event)) {
      be_.release_event(r.event);
      continue;
    }
    if (r.addr > cur->addr) {
      block *rest = split_at(cur, r.addr);
      rest->state = block_state::live; // keeps coalescing off it for now
      cur->state = block_state::free;
      coalesce_free(cur);
      cur = rest;
    }
    block *next = nullptr;
    if (r.addr + r.size < cur->end()) {
      next = split_at(cur, r.addr + r.size);
      next->state = block_state::live;
    }
    cur->state = block_state::pending;
    cur->event = r.event; // the run's reference moves to the piece
    cur->queue = r.queue;
    cur->in_order = r.in_order && r.queue;
    ++pending_count_;
    index(cur);
    cur = next;
    if (!cur) break;
  }
  if (cur) {
    cur->state = block_state::free;
    cur->event = nullptr;
    coalesce_free(cur);
  }
}

} // namespace ordo::pool

// --- the lane cache (pool_impl.hpp says what an entry is) ---------------------------

namespace ordo::pool {

std::size_t ordered_pool::impl::cached_blocks(bool with_event_only) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < cache_count_; ++i)
    if (!cache_[i].lent && (!with_event_only || cache_[i].event)) ++n;
  return n;
}

int ordered_pool::impl::cache_find(const block *b) const {
  for (std::size_t i = 0; i < cache_count_; ++i)
    if (cache_[i].b == b) return int(i);
  return -1;
}

// Keeps the order (newest last): an alloc takes the most recently freed block first.
void ordered_pool::impl::cache_erase(std::size_t i) {
  for (; i + 1 < cache_count_; ++i) cache_[i] = cache_[i + 1];
  cache_[--cache_count_] = cache_entry{};
  cache_hint_.store(cache_count_, std::memory_order_release);
}

bool ordered_pool::impl::cache_alloc(const alloc_request &rq, std::size_t need, std::size_t align, alloc_result &out) {
  if (cache_hint_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<cache_lock> hold_cache(cache_mu_);
  for (std::size_t i = cache_count_; i-- > 0;) {
    cache_entry &e = cache_[i];
    if (e.lent || e.size != need || (e.addr & (align - 1)) != 0) continue;
    alloc_source source = alloc_source::free_block;
    if (e.event) {
      // Rule 1 without asking the backend, as the quick list: the same in-order queue
      // or the wait list. Else rule 2: a completed release orders nothing any more.
      const bool same_lane = rq.in_order && rq.queue && e.in_order && e.queue == rq.queue;
      if (cfg_.reuse_ordered && (same_lane || in_wait_list(rq, e.event))) {
        source = alloc_source::ordered; // the release stays with the block (taken over)
      } else if (cfg_.reuse_completed && be_.event_complete(e.event)) {
        be_.release_event(e.event);
        e.event = nullptr;
        e.queue = nullptr;
        e.in_order = false;
        source = alloc_source::completed;
      } else {
        continue;
      }
    }
    e.lent = true;
    e.requested = rq.size;
    out.undo = alloc_undo{};
    add_used(cache_part, e.size, out.undo);
    out.ptr = reinterpret_cast<void *>(e.addr);
    out.block_size = e.size;
    out.needs_zero = cfg_.zero_init;
    out.dependencies_added = 0;
    out.source = source;
    return true;
  }
  return false;
}

bool ordered_pool::impl::cache_free(std::uintptr_t addr, const release_info &rel, bool live_only, status &st,
                                    std::size_t *block_size) {
  if (cache_hint_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<cache_lock> hold_cache(cache_mu_);
  std::size_t i = 0;
  while (i < cache_count_ && cache_[i].addr != addr) ++i;
  if (i == cache_count_) return false;
  cache_entry &e = cache_[i];
  if (!e.lent) {
    st = live_only ? status::not_owned : status::double_free; // as the core answers for a freed block
    return true;
  }
  // What free() would keep: a release rule 1 can hand back by queue order, or none
  // (then the block's own taken-over release must have completed: else it goes back
  // pending on it, which is the core's to do).
  if (rel.event ? !(rel.in_order && rel.queue) : (e.event && !be_.event_complete(e.event))) return false;
  const queue_id lane = rel.event ? rel.queue : nullptr;
  std::size_t on_lane = 0;
  for (std::size_t j = 0; j < cache_count_; ++j)
    if (!cache_[j].lent && cache_[j].queue == lane) ++on_lane;
  if (on_lane >= cache_per_lane) return false;
  // The free is ordered after the block's alloc, which was ordered after the release
  // it took over: that one is no longer needed (unless it is this free's own event, as
  // frees with nothing between them may share one).
  if (e.event != rel.event) {
    if (rel.event) be_.retain_event(rel.event);
    if (e.event) be_.release_event(e.event);
    e.event = rel.event;
  }
  e.queue = lane;
  e.in_order = rel.event != nullptr;
  e.lent = false;
  e.requested = 0;
  sub_used(cache_part, e.size);
  if (block_size) *block_size = e.size;
  st = status::success;
  return true;
}

void ordered_pool::impl::unlend(std::size_t i) {
  const cache_entry e = cache_[i];
  if (shares_) budget_->move_used(*shares_, e.size); // the core's to count out when it frees it
  block *b = e.b;
  b->set_requested(e.requested);
  b->event = e.event; // the entry's reference moves to the block
  b->queue = e.queue;
  b->in_order = e.in_order;
  if (b->event) inherited_live_ = true;
  cache_erase(i);
}

void ordered_pool::impl::retire(std::size_t i) {
  const cache_entry e = cache_[i];
  cache_erase(i);
  block *b = e.b;
  --live_;
  live_index_.erase(b->addr);
  if (!e.event) {
    release_now(b); // no taken-over release (cache_keep dropped it): free, merged
    return;
  }
  b->event = e.event; // the entry's reference moves to the pending block
  b->queue = e.queue;
  b->in_order = e.in_order;
  // Not merged with neighbours pending on the same queue (as free() merges): a
  // neighbour freed on that queue after this block was cached holds a later event,
  // and a merged run keeps one event only.
  b->state = block_state::pending;
  ++pending_count_;
  index(b);
}

bool ordered_pool::impl::cache_keep(block *b, const release_info &rel) {
  if (b->has_runs) return false;
  if (rel.event ? !(rel.in_order && rel.queue) : (b->event && !be_.event_complete(b->event))) return false;
  const queue_id lane = rel.event ? rel.queue : nullptr;
  std::lock_guard<cache_lock> hold_cache(cache_mu_);
  if (rel.event) {
    // free() merges neighbours pending on the same in-order queue (one event for the
    // whole run): a block with such a neighbour goes that way, cached ones included.
    bool merges = false;
    for (block *n : {b->prev, b->next}) {
      if (n && (n->state == block_state::pending || n->state == block_state::quick) && n->event && n->in_order &&
          n->queue == lane)
        merges = true;
      const int j = n && n->state == block_state::live ? cache_find(n) : -1;
      if (j >= 0 && !cache_[j].lent && cache_[j].event && cache_[j].queue == lane) {
        retire(std::size_t(j));
        merges = true;
      }
    }
    if (merges) return false;
  }
  std::size_t on_lane = 0;
  for (std::size_t j = 0; j < cache_count_; ++j)
    if (!cache_[j].lent && cache_[j].queue == lane) ++on_lane;
  if (on_lane >= cache_per_lane) return false;
  if (cache_count_ == cache_slots) {
    // A lent block long in use holds a slot only to make its free cheap: the oldest
    // one makes room (it stays live, an ordinary block of the core).
    std::size_t j = 0;
    while (j < cache_count_ && !cache_[j].lent) ++j;
    if (j == cache_count_) return false;
    unlend(j);
  }
  // Counted out before the entry is visible: a cache_alloc on another thread (no mu_)
  // may lend it the moment cache_mu_ is let go, and would count it in again.
  sub_used(core_part, b->size);
  drop_inherited(b); // completed, or ordered before this free (see free())
  if (rel.event) be_.retain_event(rel.event);
  cache_entry &e = cache_[cache_count_++];
  e.b = b;
  e.addr = b->addr;
  e.size = b->size;
  e.requested = 0;
  e.event = rel.event;
  e.queue = lane;
  e.in_order = rel.event != nullptr;
  e.lent = false;
  cache_hint_.store(cache_count_, std::memory_order_release);
  return true;
}

bool ordered_pool::impl::drain_cache(bool lent_too) {
  if (cache_count_ == 0) return true;
  if (!stock_up(free_nodes * cache_count_, 0)) return false;
  std::lock_guard<cache_lock> hold_cache(cache_mu_);
  for (std::size_t i = cache_count_; i-- > 0;) {
    if (!cache_[i].lent)
      retire(i);
    else if (lent_too)
      unlend(i);
  }
  return true;
}

void ordered_pool::impl::drain_lane(queue_id q) {
  if (cache_count_ == 0 || !q || !stock_up(free_nodes * cache_count_, 0))
    return; // without memory for nodes the blocks wait for the next collect()
  std::lock_guard<cache_lock> hold_cache(cache_mu_);
  for (std::size_t i = cache_count_; i-- > 0;)
    if (!cache_[i].lent && cache_[i].queue == q) retire(i);
}

} // namespace ordo::pool
