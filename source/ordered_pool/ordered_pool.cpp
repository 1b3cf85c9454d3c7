// SPDX-License-Identifier: Apache-2.0
// The ordered pool core: entry points, construction and destruction.
// docs/ordered-pool.md describes the model; comments here say why.
#include <algorithm>

#include "ordo_pool/pool_impl.hpp"

namespace ordo::pool {

const char *to_string(status s) noexcept {
  switch (s) {
  case status::success: return "success";
  case status::out_of_memory: return "out of memory";
  case status::invalid_size: return "invalid size";
  case status::invalid_alignment: return "invalid alignment";
  case status::invalid_argument: return "invalid argument";
  case status::not_owned: return "pointer not owned by the pool";
  case status::not_block_start: return "pointer is not the start of its block";
  case status::double_free: return "double free";
  case status::closed: return "pool closed";
  }
  return "unknown status";
}

// --- the shared budget ------------------------------------------------------

namespace {
// Raise a high-water mark to `v`; says what it was and what this call set it to.
void raise_high(std::atomic<std::size_t> &high, std::size_t v, std::size_t *before, std::size_t *set) {
  std::size_t old = high.load(std::memory_order_acquire);
  if (before) *before = old;
  if (set) *set = 0;
  while (old < v) {
    if (high.compare_exchange_weak(old, v, std::memory_order_acq_rel)) {
      if (before) *before = old;
      if (set) *set = v;
      return;
    }
  }
}

void undo_high(std::atomic<std::size_t> &high, std::size_t before, std::size_t set, std::size_t now) {
  if (set == 0) return;
  std::size_t expected = set; // unless someone raised it since
  high.compare_exchange_strong(expected, std::max(before, now), std::memory_order_acq_rel);
}
} // namespace

bool pool_budget::try_reserve(std::size_t bytes, std::size_t *high_before, std::size_t *high_set) {
  std::size_t cur = reserved_.load(std::memory_order_acquire);
  do {
    if (max_ && (cur > max_ || bytes > max_ - cur)) return false;
  } while (!reserved_.compare_exchange_weak(cur, cur + bytes, std::memory_order_acq_rel));
  raise_high(reserved_high_, cur + bytes, high_before, high_set);
  return true;
}

std::size_t pool_budget::room() const {
  if (!max_) return std::numeric_limits<std::size_t>::max();
  const std::size_t r = reserved();
  return r >= max_ ? 0 : max_ - r;
}

void pool_budget::add_used(std::size_t bytes, std::size_t *high_before, std::size_t *high_set) {
  shared_.in.fetch_add(bytes, std::memory_order_seq_cst);
  raise_used_high(high_before, high_set);
}

// Every count read twice, until both readings agree: the counts only grow, so they were
// then all the values of one moment (between the two readings), and the sum is what the
// pool held at that moment; unless a block's count was moving between a core's parts
// then (its move count odd), when the reader reads again. One instance per number of
// cores, so the reads of the common one-core pool are a straight line.
template <std::size_t Cores> std::size_t pool_budget::used_over() const {
  constexpr std::size_t n = 2 + 5 * Cores; // the shared part, then per core: in and out of each part, moves
  auto read = [this](std::size_t *c) {
    c[0] = shared_.in.load(std::memory_order_seq_cst);
    c[1] = shared_.out.load(std::memory_order_seq_cst);
    for (std::size_t i = 0; i < Cores; ++i) {
      c[2 + 5 * i] = shares_[i].core.in.load(std::memory_order_seq_cst);
      c[3 + 5 * i] = shares_[i].core.out.load(std::memory_order_seq_cst);
      c[4 + 5 * i] = shares_[i].cache.in.load(std::memory_order_seq_cst);
      c[5 + 5 * i] = shares_[i].cache.out.load(std::memory_order_seq_cst);
      c[6 + 5 * i] = shares_[i].moving.load(std::memory_order_seq_cst);
    }
  };
  auto settled = [](const std::size_t *c) {
    for (std::size_t i = 0; i < Cores; ++i)
      if (c[6 + 5 * i] % 2) return false;
    return true;
  };
  std::size_t first[n], again[n];
  read(first);
  for (;;) {
    read(again);
    if (std::equal(first, first + n, again) && settled(first)) break;
    std::copy(again, again + n, first);
  }
  std::size_t sum = first[0] - first[1];
  for (std::size_t i = 0; i < Cores; ++i)
    sum += first[2 + 5 * i] - first[3 + 5 * i] + first[4 + 5 * i] - first[5 + 5 * i];
  return sum;
}

std::size_t pool_budget::used() const {
  static_assert(core_share_count == 4, "one instance of used_over per number of cores");
  switch (shares_in_use_.load(std::memory_order_acquire)) {
  case 0:
  case 1: return used_over<1>();
  case 2: return used_over<2>();
  case 3: return used_over<3>();
  default: return used_over<4>();
  }
}

void pool_budget::raise_used_high(std::size_t *high_before, std::size_t *high_set) {
  raise_high(used_high_, used(), high_before, high_set);
}

pool_budget::core_shares *pool_budget::claim_shares() {
  for (std::size_t i = 0; i < core_share_count; ++i) {
    bool free = false;
    if (!shares_[i].taken.compare_exchange_strong(free, true, std::memory_order_acq_rel)) continue;
    std::size_t in_use = shares_in_use_.load(std::memory_order_relaxed);
    while (in_use < i + 1 && !shares_in_use_.compare_exchange_weak(in_use, i + 1, std::memory_order_acq_rel)) {
    }
    return &shares_[i];
  }
  return nullptr;
}

void pool_budget::return_shares(core_shares *s) {
  if (!s) return;
  // The core is gone (nothing changes its parts). In this order a reader meeting the
  // fold half done sees too little, never too much.
  const std::size_t in = s->core.in.load(std::memory_order_acquire) + s->cache.in.load(std::memory_order_acquire);
  const std::size_t out = s->core.out.load(std::memory_order_acquire) + s->cache.out.load(std::memory_order_acquire);
  shared_.out.fetch_add(out, std::memory_order_seq_cst);
  s->core.in.store(0, std::memory_order_seq_cst);
  s->cache.in.store(0, std::memory_order_seq_cst);
  shared_.in.fetch_add(in, std::memory_order_seq_cst);
  s->core.out.store(0, std::memory_order_seq_cst);
  s->cache.out.store(0, std::memory_order_seq_cst);
  s->taken.store(false, std::memory_order_release);
}

void pool_budget::undo_used_high(std::size_t before, std::size_t set) { undo_high(used_high_, before, set, used()); }

void pool_budget::undo_reserved_high(std::size_t before, std::size_t set) {
  undo_high(reserved_high_, before, set, reserved());
}

pool_stats pool_budget::stats() const {
  pool_stats st;
  st.reserved_current = reserved_.load(std::memory_order_acquire);
  st.reserved_high = reserved_high_.load(std::memory_order_acquire);
  st.used_current = used();
  raise_high(used_high_, st.used_current, nullptr, nullptr);
  st.used_high = used_high_.load(std::memory_order_acquire);
  return st;
}

status pool_budget::set_release_threshold(std::size_t bytes) {
  if (max_ && bytes > max_) return status::invalid_argument;
  threshold_.store(bytes, std::memory_order_release);
  return status::success;
}

// --- the core -----------------------------------------------------------------

ordered_pool::impl::impl(backend &be, const pool_config &cfg, std::shared_ptr<pool_budget> budget)
    : be_(be), cfg_(cfg), budget_(std::move(budget)) {
  if (!budget_) budget_ = std::make_shared<pool_budget>(cfg.max_size, cfg.release_threshold);
  shares_ = budget_->claim_shares();
  // No chunk is larger than a block may be (detail.hpp), and rounding stays in range.
  cfg_.chunk_granularity =
      align_up(std::min(std::max(cfg_.chunk_granularity, block_granule), max_block_bytes), block_granule);
  // Teach the node recycler the node size (all sets share one node type).
  block probe;
  pending_event_.insert(&probe);
  pending_event_.erase(&probe);
}

ordered_pool::impl::impl(backend &be, const pool_config &cfg, void *mem, std::size_t size,
                         std::shared_ptr<pool_budget> budget)
    : impl(be, cfg,
           budget ? std::move(budget) : std::make_shared<pool_budget>(size, std::min(cfg.release_threshold, size))) {
  fixed_ = true;
  // The user's memory is what the pool holds. A shared budget whose other cores hold some
  // of its maximum has room for less: the pool then holds (and uses) only what it could
  // reserve, so that what it gives back at the end is what it took.
  std::size_t held = size;
  while (!budget_->try_reserve(held)) held = std::min(held, budget_->room());
  auto c = std::make_unique<chunk>();
  c->raw = mem;
  c->raw_size = held;
  c->user_memory = true;
  const std::uintptr_t lo = align_up(as_uint(mem), block_granule);
  // Beyond a block's largest size the memory goes unused (detail.hpp, max_block_bytes).
  const std::uintptr_t hi = align_down(as_uint(mem) + std::min(held, max_block_bytes), block_granule);
  if (mem && hi > lo) {
    recycle(make_block());
    block *b = new_block();
    b->addr = lo;
    b->size = hi - lo;
    c->first = b;
    free_.insert(b);
  }
  chunk_at_.emplace(as_uint(mem), c.get());
  chunks_.push_back(c.release());
}

ordered_pool::impl::~impl() {
  for (std::size_t i = 0; i < cache_count_; ++i) // blocks are live to the core: theirs are below
    if (cache_[i].event) be_.release_event(cache_[i].event);
  cache_count_ = 0;
  for (chunk *c : chunks_) {
    for (block *b = c->first; b;) {
      block *n = b->next;
      if (b->state == block_state::pending || (b->state == block_state::quick && b->event))
        be_.release_event(b->event);
      else if (b->state == block_state::live)
        drop_inherited(b);
      b = n; // block objects go with block_store_
    }
    if (!c->user_memory) be_.put_chunk(c->raw, c->raw_size);
    budget_->unreserve(c->raw_size);
    delete c;
  }
  spare_ = nullptr;
  chunk_at_.clear();
  free_.clear();
  pending_.clear();
  pending_queue_.clear();
  pending_event_.clear();
  budget_->return_shares(shares_);
}

status ordered_pool::impl::alloc(const alloc_request &rq, alloc_result &out) {
  if (rq.size == 0) return status::invalid_size;
  std::size_t align = rq.alignment ? rq.alignment : block_granule;
  if (!is_pow2(align)) return status::invalid_alignment;
  align = std::max(align, block_granule);
  if (rq.wait_count && !rq.wait_list) return status::invalid_argument;
  // Far beyond any memory; keeps the arithmetic below from overflowing.
  constexpr std::size_t huge = std::numeric_limits<std::size_t>::max() / 4;
  if (rq.size > huge || align > huge) return status::out_of_memory;
  const std::size_t need = align_up(rq.size, block_granule);
  if (need > max_block_bytes) return status::out_of_memory; // detail.hpp; grow() checks the alignment slack
  // A closed pool has nothing live, so nothing cached: the cache never answers for it.
  if (cache_alloc(rq, need, align, out)) return status::success;

  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  if (closed_) return status::closed;
  if (!live_room()) return status::out_of_memory;
  alloc_undo undo{};
  block *live = take_quick(rq, need, align);
  search s{rq, need, align};
  if (live && live->event) {
    s.source = alloc_source::ordered;
  } else if (!live) {
    // As the quick list: a miss puts cached blocks back first, so that the search
    // (and growth) sees every freed block.
    if (!drain_cache(false) || !flush_quick() || !stock_up(alloc_nodes, alloc_blocks)) return status::out_of_memory;
    live = find_memory(s, undo);
    if (!live) return status::out_of_memory;
  }

  live->state = block_state::live;
  live->set_requested(rq.size);
  if (live->event || live->has_runs) inherited_live_ = true;
  live_index_.insert(live);
  ++live_;
  add_used(core_part, live->size, undo);

  out.ptr = reinterpret_cast<void *>(live->addr);
  out.block_size = live->size;
  out.needs_zero = cfg_.zero_init;
  out.dependencies_added = s.deps;
  out.source = s.source;
  out.undo = undo;
  return status::success;
}

block *ordered_pool::impl::find_memory(search &s, alloc_undo &undo) {
  const std::size_t need = s.need, align = s.align;
  auto grown = [&]() -> block * {
    block *fresh = grow(need, align, undo);
    if (!fresh) return nullptr;
    s.source = alloc_source::new_chunk;
    undo.grew = true;
    return take_range(fresh, fresh, align_up(fresh->addr, align), need);
  };
  block *b = find_reusable(s);
  // Near the maximum, growing may give chunks back (make_room()): every completed
  // free counts before that, as ever. Elsewhere a bounded look suffices first.
  const bool near_limit = budget_->room() < need + align;
  if (!b && cfg_.reuse_completed && (near_limit ? collect_locked() : collect_some(collect_limit))) {
    b = fit(free_, need, align);
    s.source = alloc_source::completed;
  }
  if (!b) {
    if (block *live = grown()) return live;
    // Cannot grow (the backend has no memory): now every completed free counts.
    if (!near_limit && cfg_.reuse_completed && collect_locked()) {
      b = fit(free_, need, align);
      s.source = alloc_source::completed;
      if (!b)
        if (block *live = grown()) return live;
    }
  }
  if (b) {
    unindex(b);
    // A pending block (rule 1) hands its release over to the new owner.
    return take_range(b, b, align_up(b->addr, align), need, b->state == block_state::pending);
  }
  if (!cfg_.reuse_with_dependency) return nullptr;
  s.source = alloc_source::internal_dependency;
  return take_with_dependencies(s);
}

status ordered_pool::impl::free(void *ptr, const release_info &rel, bool live_only, std::size_t *block_size) {
  const std::uintptr_t addr = as_uint(ptr);
  status cached = status::success;
  if (cache_free(addr, rel, live_only, cached, block_size)) return cached;
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  // A live block's start is in the live index; containing() would look there first too.
  block *b = live_only ? live_index_.find(addr) : containing(addr);
  if (!b) return status::not_owned;
  __builtin_prefetch(b);
  if (!stock_up(free_nodes, 0)) return status::out_of_memory;
  // Once freed blocks merge, a stale pointer may land mid-block: anything
  // not live is reported as a double free.
  if (b->state != block_state::live) return status::double_free;
  // A large pool misses the cache on nearly every block: the neighbours a free merges
  // with are read below, so both loads start now.
  if (b->prev) __builtin_prefetch(b->prev);
  if (b->next) __builtin_prefetch(b->next);
  if (cache_count_ != 0) {
    std::lock_guard<cache_lock> hold_cache(cache_mu_);
    const int i = cache_find(b);
    if (i >= 0 && !cache_[i].lent) // freed already, waiting in the cache
      return live_only ? status::not_owned : status::double_free;
    if (i >= 0 && b->addr == addr) unlend(std::size_t(i)); // the core frees it: its taken-over release goes with it
  }
  if (b->addr != addr) return status::not_block_start;
  const std::size_t k = inherited_count(b);
  // A run list (even one drop_completed_inherited() shrank to one release; more than one
  // release is always a list) is cut into pieces by release_now(): their blocks and nodes first.
  if (!rel.event && b->has_runs && !stock_up(free_nodes + 6 * k, 2 * k)) return status::out_of_memory;
  if (rel.event && cache_count_ != 0 && !stock_up(3 * free_nodes, 0)) // two neighbours may go back
    return status::out_of_memory;
  if (cache_keep(b, rel)) { // counted out; else cached neighbours it would merge with are back in the core
    if (block_size) *block_size = b->size;
    return status::success;
  }
  // A block that does not stay whole in the quick list merges with its neighbours
  // as ever: they must be in the indexes first.
  const bool quick = quick_eligible(b, rel);
  if (!quick && !flush_quick()) return status::out_of_memory;

  --live_;
  live_index_.erase(b->addr);
  sub_used(core_part, b->size);
  if (block_size) *block_size = b->size;
  if (quick) {
    keep_quick(b, rel);
    return status::success;
  }
  if (!rel.event) {
    release_now(b);
    return status::success;
  }

  // The free command is ordered after this block's alloc, which waited for the
  // releases it took over: they are no longer needed.
  drop_inherited(b);
  be_.retain_event(rel.event);
  b->event = rel.event;
  b->queue = rel.queue;
  b->in_order = rel.in_order && rel.queue;
  make_pending(b);
  return status::success;
}

void ordered_pool::impl::make_pending(block *b) {
  b->state = block_state::pending;
  ++pending_count_;
  if (b->in_order) {
    // Frees recorded earlier on the same in-order queue complete before
    // this one, so neighbours pending there can share its event.
    if (same_queue_pending(b->prev, b)) {
      block *p = b->prev;
      unindex(p);
      drop_release(p);
      p->event = b->event;
      p->queue = b->queue;
      p->in_order = true;
      p->state = block_state::pending;
      b->state = block_state::free; // its reference moved to p
      absorb(p, b);
      b = p;
    }
    if (same_queue_pending(b->next, b)) {
      block *n = b->next;
      unindex(n);
      drop_release(n);
      absorb(b, n);
    }
  }
  index(b);
}

status ordered_pool::impl::cancel(const alloc_result &res) {
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  block *b = containing(as_uint(res.ptr));
  if (!b) return status::not_owned;
  if (b->state != block_state::live) return status::double_free;
  if (cache_count_ != 0) {
    std::lock_guard<cache_lock> hold_cache(cache_mu_);
    const int i = cache_find(b);
    if (i >= 0 && !cache_[i].lent) return status::double_free;
    if (i >= 0 && b->addr == as_uint(res.ptr)) {
      // Lent by the cache for this alloc: it goes back as it was (its release too).
      cache_entry &e = cache_[i];
      e.lent = false;
      e.requested = 0;
      sub_used(cache_part, e.size);
      budget_->undo_used_high(res.undo.used_high_before, res.undo.used_high_set);
      return status::success;
    }
  }
  if (b->addr != as_uint(res.ptr)) return status::not_block_start;
  const std::size_t k = inherited_count(b);
  if (!stock_up(free_nodes + 6 * k, 2 * k) || !flush_quick()) return status::out_of_memory;
  chunk *owner = chunk_of(b->addr);
  --live_;
  live_index_.erase(b->addr);
  sub_used(core_part, b->size);
  release_now(b);
  budget_->undo_used_high(res.undo.used_high_before, res.undo.used_high_set);
  if (res.undo.grew && owner && owner->wholly_free() && !owner->user_memory) {
    drop_chunk(owner);
    budget_->undo_reserved_high(res.undo.reserved_high_before, res.undo.reserved_high_set);
  }
  return status::success;
}

std::size_t ordered_pool::impl::release_to(std::size_t keep, bool use_threshold) {
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  if (use_threshold) keep = budget_->release_threshold();
  drain_cache(true); // cached blocks, like quick ones, keep their chunks busy
  flush_quick();     // quick blocks keep their chunks from looking wholly free
  collect_locked();
  std::size_t released = 0;
  // Newest chunks first: older ones are more likely to be busy again soon.
  for (std::size_t i = chunks_.size(); i-- > 0 && budget_->reserved() > keep;) {
    chunk *c = chunks_[i];
    if (c->user_memory || !c->wholly_free()) continue;
    released += c->raw_size;
    drop_chunk(i);
  }
  return released;
}

void ordered_pool::impl::forget_queue(queue_id q) {
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  drain_lane(q);
  flush_quick(); // quick blocks carry their queue too
  auto it = pending_queue_.lower_bound(by_queue::type{as_uint(q), 0, 0});
  while (it != pending_queue_.end() && (*it)->queue == q) {
    block *b = *it;
    it = pending_queue_.erase(it);
    b->in_order = false;
    b->queue = nullptr;
  }
  // Releases live blocks took over from q (a synchronous free makes them pending again)
  // and those of blocks the lane cache lent: the identity may name another queue next.
  auto forget = [q](queue_id &queue, bool &in_order) {
    if (queue != q) return;
    queue = nullptr;
    in_order = false;
  };
  if (inherited_live_)
    live_index_.for_each([&](block *b) {
      if (b->has_runs) {
        for (inherited_release &r : *b->runs_) forget(r.queue, r.in_order);
      } else if (b->event && b->queue == q) {
        b->queue = nullptr;
        b->in_order = false;
      }
    });
  std::lock_guard<cache_lock> hold_cache(cache_mu_);
  for (std::size_t i = 0; i < cache_count_; ++i)
    if (cache_[i].lent) forget(cache_[i].queue, cache_[i].in_order);
}

bool ordered_pool::impl::lookup(const void *ptr, block_info &out) const {
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  const block *b = containing(as_uint(ptr));
  if (!b || b->state != block_state::live) return false;
  std::size_t requested = b->requested();
  if (cache_count_ != 0) {
    std::lock_guard<cache_lock> hold_cache(cache_mu_);
    const int i = cache_find(b);
    if (i >= 0 && !cache_[i].lent) return false; // freed: answered like any freed block
    if (i >= 0) requested = cache_[i].requested;
  }
  out.base = reinterpret_cast<void *>(b->addr);
  out.size = requested;
  out.block_size = b->size;
  return true;
}

// --- public forwarding ------------------------------------------------------

ordered_pool::ordered_pool(backend &be, const pool_config &cfg) : impl_(std::make_unique<impl>(be, cfg, nullptr)) {}
ordered_pool::ordered_pool(backend &be, const pool_config &cfg, std::shared_ptr<pool_budget> budget)
    : impl_(std::make_unique<impl>(be, cfg, std::move(budget))) {}
ordered_pool::ordered_pool(backend &be, const pool_config &cfg, void *user_memory, std::size_t size)
    : impl_(std::make_unique<impl>(be, cfg, user_memory, size, nullptr)) {}
ordered_pool::ordered_pool(backend &be, const pool_config &cfg, void *user_memory, std::size_t size,
                           std::shared_ptr<pool_budget> budget)
    : impl_(std::make_unique<impl>(be, cfg, user_memory, size, std::move(budget))) {}
ordered_pool::~ordered_pool() = default;

status ordered_pool::alloc(const alloc_request &req, alloc_result &out) { return impl_->alloc(req, out); }
status ordered_pool::free(void *ptr, const release_info &rel) { return impl_->free(ptr, rel); }
status ordered_pool::free(void *ptr, const release_info &rel, std::size_t &block_size) {
  return impl_->free(ptr, rel, false, &block_size);
}
status ordered_pool::free_if_live(void *ptr, const release_info &rel) { return impl_->free(ptr, rel, true); }
status ordered_pool::cancel(const alloc_result &res) { return impl_->cancel(res); }
void ordered_pool::collect() { impl_->collect(); }
bool ordered_pool::close_if_idle() { return impl_->close_if_idle(); }
void ordered_pool::reopen() { impl_->reopen(); }
void ordered_pool::forget_taken_over() { impl_->forget_taken_over(); }
std::size_t ordered_pool::release_above_threshold() { return impl_->release_to(0, true); }
std::size_t ordered_pool::trim_to(std::size_t keep) { return impl_->release_to(keep, false); }
void ordered_pool::forget_queue(queue_id q) { impl_->forget_queue(q); }
void ordered_pool::drop_lane(queue_id q) { impl_->drop_lane(q); }
bool ordered_pool::lookup(const void *ptr, block_info &out) const { return impl_->lookup(ptr, out); }
bool ordered_pool::owns(const void *ptr) const { return impl_->owns(ptr); }
pool_stats ordered_pool::stats() const { return impl_->budget().stats(); }
pool_budget &ordered_pool::budget() { return impl_->budget(); }
void ordered_pool::reset_reserved_high() { impl_->budget().reset_reserved_high(); }
void ordered_pool::reset_used_high() { impl_->budget().reset_used_high(); }
std::size_t ordered_pool::release_threshold() const { return impl_->budget().release_threshold(); }
status ordered_pool::set_release_threshold(std::size_t bytes) { return impl_->budget().set_release_threshold(bytes); }
std::size_t ordered_pool::max_size() const { return impl_->budget().max_size(); }
bool ordered_pool::zero_init() const { return impl_->zero_init(); }
bool ordered_pool::is_fixed() const { return impl_->is_fixed(); }
std::size_t ordered_pool::live_allocations() const { return impl_->live_allocations(); }
std::size_t ordered_pool::idle_bytes() const { return impl_->idle_bytes(); }
std::size_t ordered_pool::pending_blocks() const { return impl_->pending_blocks(); }
std::size_t ordered_pool::chunk_count() const { return impl_->chunk_count(); }

} // namespace ordo::pool
