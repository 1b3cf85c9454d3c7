// SPDX-License-Identifier: Apache-2.0
// Internal to the ordered pool: its implementation class, shared by the
// pool's .cpp files. Not part of the API.
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "ordo_pool/detail.hpp"
#include "ordo_pool/ordered_pool.hpp"
#include "ordo_pool/size_bins.hpp"
#include "ordo_pool/adaptive_mutex.hpp"

namespace ordo::pool {
namespace detail {

// The lane cache's lock: held for a few dozen instructions by the thread of one lane
// as a rule, so an uncontended lock must cost next to nothing (a pthread mutex costs
// as much as the cache saves). Spins briefly, then yields: a holder preempted on a
// busy machine gets the core back.
class cache_lock {
public:
  void lock() noexcept {
    for (unsigned spins = 0; held_.exchange(true, std::memory_order_acquire); ++spins) {
      while (held_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
      }
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> held_{false};
};

// Pending blocks asked about (hook / completion) per alloc before the slower
// paths; keeps the common path O(log n).
inline constexpr std::size_t probe_limit = 8;
// Blocks looked at per wait-list event (a free command normally has one).
inline constexpr std::size_t per_event_limit = 16;
// Candidates tried for a naturally aligned fit before asking for a block
// that fits whatever its address.
inline constexpr std::size_t align_tries = 4;
// Blocks of one size class that fit() compares (each may be a cache miss).
inline constexpr std::size_t fit_looks = 8;
// Set nodes / block objects one operation may need at most; stocked up front
// so that no operation can fail half-way through.
inline constexpr std::size_t alloc_nodes = 12, alloc_blocks = 3;
inline constexpr std::size_t free_nodes = 4;
// Blocks kept whole after a free with no pending use (the quick list).
inline constexpr std::size_t quick_slots = 4;
// The lane cache (see impl below): slots per core, cached blocks per lane.
inline constexpr std::size_t cache_slots = 8, cache_per_lane = 4;
// Pending events an alloc asks about before it grows (the rest wait for the next
// alloc, which goes on from there, or for a synchronisation point's collect()).
inline constexpr std::size_t collect_limit = 32;
// Chunk growth (grow()): a new chunk is at least 1/growth_share of what the core holds
// from the backend, at most growth_cap (a request may still need a bigger one).
inline constexpr std::size_t growth_share = 16;
inline constexpr std::size_t growth_cap = std::size_t{1} << 30;

constexpr bool is_pow2(std::size_t v) { return v && !(v & (v - 1)); }
constexpr std::uintptr_t align_up(std::uintptr_t v, std::size_t a) {
  return (v + (a - 1)) & ~static_cast<std::uintptr_t>(a - 1);
}
constexpr std::uintptr_t align_down(std::uintptr_t v, std::size_t a) { return v & ~static_cast<std::uintptr_t>(a - 1); }

} // namespace detail

using namespace detail; // internal header: only the pool's own files see it

class ordered_pool::impl {
public:
  impl(backend &be, const pool_config &cfg, std::shared_ptr<pool_budget> budget);

  impl(backend &be, const pool_config &cfg, void *mem, std::size_t size, std::shared_ptr<pool_budget> budget);

  ~impl();

  status alloc(const alloc_request &rq, alloc_result &out);

  status free(void *ptr, const release_info &rel, bool live_only = false, std::size_t *block_size = nullptr);

  status cancel(const alloc_result &res);

  void collect() {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    drain_cache(true);
    flush_quick();
    collect_locked();
    drop_completed_inherited(true);
  }
  void forget_taken_over() {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    drain_cache(true);
    drop_completed_inherited(false);
  }

  bool close_if_idle() {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    if (closed_) return true;
    if (!drain_cache(true) || live_ != 0 || pending_count_ != 0) return false;
    closed_ = true;
    return true;
  }
  void reopen() {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    closed_ = false;
  }

  std::size_t release_to(std::size_t keep, bool use_threshold);

  void forget_queue(queue_id q);

  bool lookup(const void *ptr, block_info &out) const;

  bool owns(const void *ptr) const {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    return containing(as_uint(ptr)) != nullptr;
  }
  // Under mu_: the live table has room for one more block (false: no memory).
  bool live_room() {
    if (live_index_.has_room()) return true;
    try {
      live_index_.grow();
      return true;
    } catch (const std::bad_alloc &) {
      return false;
    }
  }

  pool_budget &budget() { return *budget_; }
  const pool_budget &budget() const { return *budget_; }
  bool zero_init() const { return cfg_.zero_init; }
  bool is_fixed() const { return fixed_; }
  std::size_t live_allocations() const {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    std::lock_guard<cache_lock> hold_cache(cache_mu_);
    return live_ - cached_blocks(false);
  }
  std::size_t idle_bytes() {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    drain_cache(false);
    flush_quick();
    std::size_t n = 0;
    for (const chunk *c : chunks_)
      if (!c->user_memory && c->wholly_free()) n += c->raw_size;
    return n;
  }
  std::size_t pending_blocks() const {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    std::lock_guard<cache_lock> hold_cache(cache_mu_);
    return pending_count_ + cached_blocks(true);
  }

  // --- the lane cache: the paths that take no core mutex ---------------------
  // An alloc served from the cache: true with `out` set, false (nothing changed) when
  // no cached block may serve it.
  bool cache_alloc(const alloc_request &rq, std::size_t need, std::size_t align, alloc_result &out);
  // A free decided by the cache: true with `st` set (success, or double_free for a
  // cached block); false when the core must decide (nothing changed).
  // With `live_only` (free_if_live) a cached block is not_owned, as a freed one.
  bool cache_free(std::uintptr_t addr, const release_info &rel, bool live_only, status &st, std::size_t *block_size);
  // The core's changes to "used" (under mu_) go to its part `core`, the cache's (under
  // cache_mu_) to its part `cache` (pool_budget::core_shares); without parts, to the
  // pool-wide count.
  using used_part_of = pool_budget::used_part pool_budget::core_shares::*;
  static constexpr used_part_of core_part = &pool_budget::core_shares::core;
  static constexpr used_part_of cache_part = &pool_budget::core_shares::cache;
  void add_used(used_part_of part, std::size_t bytes, alloc_undo &undo) {
    if (shares_)
      budget_->add_used(shares_->*part, bytes, &undo.used_high_before, &undo.used_high_set);
    else
      budget_->add_used(bytes, &undo.used_high_before, &undo.used_high_set);
  }
  void sub_used(used_part_of part, std::size_t bytes) {
    if (shares_)
      budget_->sub_used(shares_->*part, bytes);
    else
      budget_->sub_used(bytes);
  }
  // Under mu_: cached blocks of lane `q` go back to the core (its queue is gone).
  void drain_lane(queue_id q);
  void drop_lane(queue_id q) {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    drain_lane(q);
  }
  std::size_t chunk_count() const {
    std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
    return chunks_.size();
  }

private:
  struct search {
    const alloc_request &rq;
    std::size_t need;
    std::size_t align;
    alloc_source source = alloc_source::free_block;
    std::size_t deps = 0;
  };

  // --- block objects and indexes -------------------------------------------

  block *new_block();
  void recycle(block *b);
  block *make_block() { return new (block_store_.get()) block; } // may throw std::bad_alloc
  bool stock_up(std::size_t nodes, std::size_t blocks);

  void index(block *b);
  void unindex(block *b);

  // Give up a pending block's event reference (the block is unindexed).
  void drop_release(block *b);

  // A live block's taken-over releases (see block::event): dropped when a free
  // command releases it (that command is ordered after the alloc, which waited
  // for them), or turned back into pending pieces by a synchronous free.
  void drop_inherited(block *b);
  // Under mu_: live blocks let go of taken-over releases that have completed
  // (they order nothing any more). Walks the live blocks only after an alloc took
  // one over since the last walk found none left.
  // With `only_completed` false, every taken-over release goes (forget_taken_over).
  void drop_completed_inherited(bool only_completed);
  // Turns the live, unindexed block `b` into free and pending pieces.
  void release_now(block *b);
  std::size_t inherited_count(const block *b) const { return b->has_runs ? b->runs_->size() : (b->event ? 1 : 0); }

  // New block for [at, b->end()); b keeps [b->addr, at). Neither is indexed
  // by state; the new one starts free and without release information.
  block *split_at(block *b, std::uintptr_t at);

  // Merge `right` (the next block of `left`) into `left`.
  void absorb(block *left, block *right);

  // A free, unindexed block joins its free neighbours and the free index.
  void coalesce_free(block *b);

  static bool same_queue_pending(const block *n, const block *b) {
    return n && n->state == block_state::pending && n->in_order && n->queue == b->queue;
  }

  // The block holding `addr`: a live block's start from the live table (O(1)),
  // anything else by walking its chunk's blocks (errors and interior pointers).
  const block *containing(std::uintptr_t addr) const;
  // The chunk whose memory holds `addr`, or null (a look-up among the chunks).
  chunk *chunk_of(std::uintptr_t addr) const;
  block *containing(std::uintptr_t addr) {
    return const_cast<block *>(static_cast<const impl *>(this)->containing(addr));
  }

  // --- search --------------------------------------------------------------

  static bool fits(const block *b, std::size_t need, std::size_t align) {
    return align_up(b->addr, align) + need <= b->end();
  }

  // A good fit from size classes: the smallest fitting block among the first few of
  // need's class, else of the next non-empty class. A block of need + align - 64
  // bytes fits at any 64-aligned address, so an aligned search stays O(1) too.
  static block *fit(const size_bins &bins, std::size_t need, std::size_t align);

  block *fit_queue(queue_id q, std::size_t need, std::size_t align);

  bool in_wait_list(const alloc_request &rq, event_handle ev) const;

  // Rule 1 without asking the backend anything.
  bool ordered_after(const alloc_request &rq, const block *b) const {
    return (rq.in_order && rq.queue && b->in_order && b->queue == rq.queue) || in_wait_list(rq, b->event);
  }

  // Plain free blocks and rule 1 through the indexes: the smallest wins.
  block *indexed_candidate(search &s);

  // Rules 1 and 2 plus plain free blocks.
  block *find_reusable(search &s);

  // The search of alloc() past the quick list: reuse, growth, rule 3. The block
  // comes back unindexed, or null with nothing changed.
  block *find_memory(search &s, alloc_undo &undo);

  // Rule 3: a pending block (or a run of adjacent non-live blocks) whose
  // release events become dependencies of the alloc command.
  block *take_with_dependencies(search &s);

  block *take_window(search &s, block *first, block *last, std::uintptr_t start);

  // Carve [start, start + need) out of the consecutive, unindexed, non-live
  // blocks first..last. Cut-off ends keep their state (a pending end keeps a
  // reference to its event); the carved block comes back unindexed.
  // With `inherit`, the pending pieces' releases move to the new live block.
  block *take_range(block *first, block *last, std::uintptr_t start, std::size_t need, bool inherit = false,
                    std::vector<inherited_release> *runs = nullptr);

  // --- the quick list -------------------------------------------------------
  // An alloc/free pair of one size is the common case: the free keeps the block
  // whole (state quick), either free (no release event) or pending on an in-order
  // queue's release, and the next alloc of exactly that size that may take it (no
  // event, or rule 1 without asking the backend) does so without touching the
  // size indexes. Everything else first flushes the list (the blocks become free
  // and coalesce, or pending and indexed), so the indexes, chunk accounting and the
  // other rules never see a quick block. A quick block with an event counts as
  // pending (pending_blocks()) and holds its event reference.
  // Whether free() may keep `b` (live) in the quick list for `rel`.
  bool quick_eligible(const block *b, const release_info &rel) const;
  void keep_quick(block *b, const release_info &rel);
  block *take_quick(const alloc_request &rq, std::size_t need, std::size_t align);
  // False only when the host has no memory for the index nodes (nothing changed).
  bool flush_quick();

  // --- the lane cache -------------------------------------------------------
  // A free that rule 1 (same in-order queue) or an absent release lets hand straight
  // back keeps its block in a small table in front of the core, and the next alloc of
  // that size on that lane takes it (docs/async-alloc.md, "The lane cache"). Neither
  // path takes mu_ or touches the live table: the block stays in the live table the
  // whole time, and the table says what it is.
  //  - cached: freed. Not "used" (the budget's used bytes drop at the free), its
  //    entry holds its free's release event (null: free at once). Only an alloc on
  //    that in-order lane (rule 1), one whose wait list holds the event, or any alloc
  //    once the event has completed, takes it. Every core path that answers about a
  //    block (lookup, free, cancel, live_allocations, pending_blocks) treats it as
  //    freed; every path that needs the core's own picture (collect, close, trims,
  //    growth, destruction) first retires it into the core as a plain free.
  //  - lent: handed out by the cache, live; the entry remembers it so that its next
  //    free can go back to the cache without mu_. Its `event` is the release it took
  //    over (as a quick block's): a core path that frees or forgets it moves that into
  //    the block first (unlend).
  // Entries change count only under mu_ and cache_mu_ (keep, unlend, retire); the
  // paths without mu_ only turn cached into lent and back, under cache_mu_.
  struct cache_entry {
    block *b = nullptr;
    std::uintptr_t addr = 0;
    std::size_t size = 0;         // the block's (a multiple of 64)
    std::size_t requested = 0;    // lent: the size the caller asked for
    event_handle event = nullptr; // one reference; see above
    queue_id queue = nullptr;
    bool in_order = false;
    bool lent = false;
  };
  // Under cache_mu_.
  std::size_t cached_blocks(bool with_event_only) const;
  int cache_find(const block *b) const;
  void cache_erase(std::size_t i);
  // Under mu_ and cache_mu_: a lent entry's block becomes a plain live block.
  void unlend(std::size_t i);
  // Under mu_ and cache_mu_, free_nodes stocked: a cached entry's block becomes a
  // plain free in the core (pending on its event, unmerged; or free).
  void retire(std::size_t i);
  // Under mu_: free() keeps the live block `b` in the cache for `rel` (true), or not.
  // Not when a neighbour is pending, quick or cached on the same in-order queue: free()
  // merges those (a cached one goes back to the core first, free_nodes stocked each).
  bool cache_keep(block *b, const release_info &rel);
  // Under mu_: retire every cached entry (and unlend every lent one with `lent_too`).
  // False only when the host has no memory for index nodes (nothing changed).
  bool drain_cache(bool lent_too);
  // The part of free() after the block left the live table, for a release event
  // whose reference the block already holds in b->event (b pending, indexed).
  void make_pending(block *b);

  // --- completion ----------------------------------------------------------

  // A pending block whose event completed (already out of pending_event_)
  // becomes plain free memory.
  void promote(block *b);

  void promote_event(event_handle ev);

  // Ask about every distinct pending event once; O(pending).
  bool collect_locked();
  // Ask about at most `max_events` distinct pending events, going on from where the
  // last call stopped (round robin), so that an alloc's cost does not grow with the
  // number of pending frees. True when one had completed.
  bool collect_some(std::size_t max_events);

  // --- chunks --------------------------------------------------------------

  // A new chunk big enough for the request, as one free unindexed block; or
  // nullptr (limit reached, backend out of memory), with nothing changed.
  block *grow(std::size_t need, std::size_t align, alloc_undo &undo);

  void drop_chunk(std::size_t i);
  void drop_chunk(const chunk *c);
  bool make_room(std::size_t want);

  backend &be_;
  pool_config cfg_;
  bool fixed_ = false;
  mutable ordo::pool::adaptive_mutex mu_; // every queue of the pool takes it (adaptive_mutex.hpp)
  node_recycler nodes_;                   // declared before the sets: it must outlive them
  object_slabs<block> block_store_;       // every block object; they go back only with the pool
  block *spare_ = nullptr;
  std::size_t spare_count_ = 0;
  std::vector<chunk *> chunks_;
  std::size_t held_ = 0; // bytes of the backend's chunks (not the user's memory)
  using alloc_t = recycling_allocator<block *>;
  live_table live_index_;                      // live blocks by start address
  std::map<std::uintptr_t, chunk *> chunk_at_; // chunks by raw address
  size_bins free_;                             // free blocks by size class
  size_bins pending_;                          // pending blocks by size class
  block_set<by_queue> pending_queue_{key_less<by_queue>{}, alloc_t{&nodes_}};
  block_set<by_event> pending_event_{key_less<by_event>{}, alloc_t{&nodes_}};
  std::shared_ptr<pool_budget> budget_;
  pool_budget::core_shares *shares_ = nullptr; // this core's parts of "used"
  std::size_t live_ = 0;
  std::size_t pending_count_ = 0;
  block *quick_[quick_slots] = {};
  std::size_t quick_count_ = 0;
  std::uintptr_t collect_cursor_ = 0; // the event collect_some() asks about next
  mutable cache_lock cache_mu_;       // after mu_ when both are held
  cache_entry cache_[cache_slots];
  std::size_t cache_count_ = 0;            // under cache_mu_; changes under mu_ too
  std::atomic<std::size_t> cache_hint_{0}; // cache_count_, read without a lock
  bool inherited_live_ = false;            // some live block may hold a taken-over release
  bool closed_ = false;                    // close_if_idle(): no more allocs
};

} // namespace ordo::pool
