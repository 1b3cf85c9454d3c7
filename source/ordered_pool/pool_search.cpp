// SPDX-License-Identifier: Apache-2.0
// The ordered pool core: finding memory for an alloc (the reuse rules) and
// carving the block out of it.
#include "ordo_pool/pool_impl.hpp"

#include <algorithm>
#include <memory>

namespace ordo::pool {

block *ordered_pool::impl::fit(const size_bins &bins, std::size_t need, std::size_t align) {
  // The smallest fitting block among the first fit_looks of class c (lowest address
  // on a tie, as the size tree had it).
  auto best_in = [&](unsigned c, std::size_t at_least) {
    block *best = nullptr;
    std::size_t looks = 0;
    for (block *b = bins.head(c); b && looks < fit_looks; b = b->bin_next, ++looks)
      if (b->size >= at_least && fits(b, need, align) &&
          (!best || b->size < best->size || (b->size == best->size && b->addr < best->addr)))
        best = b;
    return best;
  };
  // Need's own class may hold smaller blocks; every block of a class above is big enough.
  unsigned c = bins.first_from(size_bins::class_of(need));
  for (std::size_t tries = 0; c != size_bins::none && tries < 2; ++tries, c = bins.first_from(c + 1))
    if (block *b = best_in(c, need)) return b;
  if (align == block_granule) return nullptr;
  c = bins.first_from(size_bins::class_at_least(need + align - block_granule));
  return c == size_bins::none ? nullptr : best_in(c, 0);
}

block *ordered_pool::impl::fit_queue(queue_id q, std::size_t need, std::size_t align) {
  const std::uintptr_t qk = as_uint(q);
  auto it = pending_queue_.lower_bound(by_queue::type{qk, need, 0});
  for (std::size_t k = 0; it != pending_queue_.end() && (*it)->queue == q && k < align_tries; ++it, ++k)
    if (fits(*it, need, align)) return *it;
  if (align == block_granule) return nullptr;
  it = pending_queue_.lower_bound(by_queue::type{qk, need + align - block_granule, 0});
  return it != pending_queue_.end() && (*it)->queue == q ? *it : nullptr;
}

bool ordered_pool::impl::in_wait_list(const alloc_request &rq, event_handle ev) const {
  for (std::size_t i = 0; i < rq.wait_count; ++i)
    if (rq.wait_list[i] == ev) return true;
  return false;
}

block *ordered_pool::impl::indexed_candidate(search &s) {
  const std::size_t need = s.need, align = s.align;
  block *best = fit(free_, need, align);
  s.source = alloc_source::free_block;
  auto consider = [&](block *c) {
    if (c && (!best || c->size < best->size)) {
      best = c;
      s.source = alloc_source::ordered;
    }
  };
  if (!cfg_.reuse_ordered) return best;
  if (s.rq.in_order && s.rq.queue) consider(fit_queue(s.rq.queue, need, align));
  for (std::size_t i = 0; i < s.rq.wait_count; ++i) {
    const event_handle ev = s.rq.wait_list[i];
    if (!ev) continue;
    auto it = pending_event_.lower_bound(by_event::type{as_uint(ev), 0});
    for (std::size_t k = 0; it != pending_event_.end() && (*it)->event == ev && k < per_event_limit; ++it, ++k)
      if (fits(*it, need, align)) consider(*it);
  }
  return best;
}

block *ordered_pool::impl::find_reusable(search &s) {
  const std::size_t need = s.need, align = s.align;
  block *best = indexed_candidate(s);
  if ((best && best->size == need) || (!cfg_.reuse_ordered && !cfg_.reuse_completed)) return best;

  // Pending blocks of the right size may be ordered through the backend's
  // reachability hook, or already complete. With a candidate in hand only
  // a tighter one is worth a question, and one question is enough.
  const std::size_t budget = best ? 1 : probe_limit;
  std::size_t asked = 0;
  block *taken = nullptr;
  bool promoted = false;
  pending_.visit(need, 4 * probe_limit, [&](block *c) {
    if (best && c->size >= best->size) // classes only grow: past best's, nothing is tighter
      return size_bins::class_of(c->size) > size_bins::class_of(best->size);
    if (asked++ == budget) return true;
    if (!fits(c, need, align)) return false;
    if (cfg_.reuse_ordered && be_.is_ordered_before(s.rq.command, c->event)) {
      taken = c;
      return true;
    }
    if (cfg_.reuse_completed && be_.event_complete(c->event)) {
      promote_event(c->event);
      promoted = true;
      return true;
    }
    return false;
  });
  if (taken) {
    s.source = alloc_source::ordered;
    return taken;
  }
  if (promoted) {
    // Promotion coalesces, which may recycle `best`: search again.
    block *again = indexed_candidate(s);
    if (again && s.source == alloc_source::free_block) s.source = alloc_source::completed;
    return again;
  }
  return best;
}

block *ordered_pool::impl::take_with_dependencies(search &s) {
  const std::size_t need = s.need, align = s.align;
  if (block *c = fit(pending_, need, align)) {
    if (!ordered_after(s.rq, c) && !be_.is_ordered_before(s.rq.command, c->event)) {
      if (!be_.add_dependency(s.rq.command, c->event)) return nullptr;
      ++s.deps;
    }
    unindex(c);
    return take_range(c, c, align_up(c->addr, align), need, true);
  }
  // No single block is big enough: look for adjacent free and pending
  // blocks that together are. Slow (walks every block), but only reached
  // when the pool is at its limit.
  for (chunk *ch : chunks_) {
    block *run = nullptr;
    for (block *b = ch->first; b; b = b->next) {
      if (b->state == block_state::live) {
        run = nullptr;
        continue;
      }
      if (!run) run = b;
      const std::uintptr_t start = align_up(run->addr, align);
      if (b->end() < start || b->end() - start < need) continue;
      block *first = run;
      while (first->end() <= start) first = first->next;
      return take_window(s, first, b, start);
    }
  }
  return nullptr;
}

block *ordered_pool::impl::take_window(search &s, block *first, block *last, std::uintptr_t start) {
  // The new owner takes over each piece's release; more than one distinct
  // event needs a list, made before anything changes.
  std::size_t distinct = 0, pieces = 0;
  event_handle seen = nullptr;
  for (block *b = first;; b = b->next) {
    if (b->state == block_state::pending) {
      ++pieces;
      if (b->event != seen) ++distinct;
      seen = b->event;
    }
    if (b == last) break;
  }
  std::unique_ptr<std::vector<inherited_release>> runs;
  if (distinct > 1) {
    try {
      runs = std::make_unique<std::vector<inherited_release>>();
      runs->reserve(pieces); // cutting the ends splits no piece in two
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
  }
  event_handle added = nullptr;
  for (block *b = first;; b = b->next) {
    if (b->state == block_state::pending && b->event != added && !ordered_after(s.rq, b) &&
        !be_.is_ordered_before(s.rq.command, b->event)) {
      if (!be_.add_dependency(s.rq.command, b->event)) return nullptr;
      added = b->event;
      ++s.deps;
    }
    if (b == last) break;
  }
  for (block *b = first;; b = b->next) {
    unindex(b);
    if (b == last) break;
  }
  return take_range(first, last, start, s.need, true, runs.release());
}

block *ordered_pool::impl::take_range(block *first, block *last, std::uintptr_t start, std::size_t need, bool inherit,
                                      std::vector<inherited_release> *runs) {
  std::unique_ptr<std::vector<inherited_release>> run_list(runs);
  const std::uintptr_t stop = start + need;
  if (last->end() > stop) {
    block *tail = split_at(last, stop);
    tail->state = last->state;
    if (last->state == block_state::pending) {
      tail->event = last->event;
      tail->queue = last->queue;
      tail->in_order = last->in_order;
      be_.retain_event(tail->event); // before `last` may drop its own
      ++pending_count_;
    }
    index(tail);
  }
  if (start > first->addr) {
    block *mid = split_at(first, start);
    if (inherit && first->state == block_state::pending) {
      mid->state = block_state::pending; // its bytes were pending too
      mid->event = first->event;
      mid->queue = first->queue;
      mid->in_order = first->in_order;
      be_.retain_event(mid->event);
      ++pending_count_;
    }
    index(first); // the head keeps first's state
    if (first == last) last = mid;
    first = mid;
  }
  // The pieces first..last tile [start, stop). Their releases go to the new
  // block (inherit) or are dropped.
  inherited_release one;
  for (block *b = first;;) {
    block *next = b == last ? nullptr : b->next;
    if (inherit && b->state == block_state::pending) {
      inherited_release r{b->addr, b->size, b->event, b->queue, b->in_order};
      if (!one.event)
        one = r;
      else if (r.event == one.event && !run_list)
        be_.release_event(r.event); // one event covers the whole block anyway
      else
        run_list->push_back(r); // reserved by take_window
      --pending_count_;
      b->event = nullptr;
      b->queue = nullptr;
      b->in_order = false;
      b->state = block_state::free;
    } else {
      drop_release(b);
    }
    if (b != first) absorb(first, b);
    if (!next) break;
    b = next;
  }
  if (run_list && !run_list->empty()) {
    run_list->push_back(one);
    std::sort(run_list->begin(), run_list->end(),
              [](const inherited_release &a, const inherited_release &b) { return a.addr < b.addr; });
    first->set_runs(run_list.release());
  } else {
    // One release for the whole block: a piece that was free is held back a
    // little longer than needed, never too little.
    first->event = one.event;
    first->queue = one.queue;
    first->in_order = one.in_order;
  }
  return first;
}

} // namespace ordo::pool
