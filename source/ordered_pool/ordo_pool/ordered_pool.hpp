// SPDX-License-Identifier: Apache-2.0
// The ordered pool core: a backend-agnostic stream-ordered allocator
// (docs/ordered-pool.md explains the model; docs/async-alloc.md is the user's contract).
//
// Thread-safe: every member function may be called from any thread. The pool
// calls its backend with one of its locks held (its mutex, or its lane cache's).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ordo_pool/backend.hpp"

namespace ordo::pool {

// Every result the core can give. Adapters translate these into ur_result_t.
enum class status : int {
  success = 0,
  out_of_memory,     // request cannot be met within the limits; nothing changed
  invalid_size,      // size 0
  invalid_alignment, // alignment not a power of two
  invalid_argument,  // e.g. wait_count > 0 with a null wait_list
  not_owned,         // pointer not inside any chunk of this pool
  not_block_start,   // pointer inside a live block but not its first byte
  double_free,       // pointer inside memory of this pool that is not allocated
  closed,            // the pool was closed (close_if_idle): it makes no more blocks
};

const char *to_string(status s) noexcept;

// Every block starts on this boundary and its size is a multiple of it.
constexpr std::size_t block_granule = 64;

struct pool_config {
  // Most bytes the pool may hold from the backend. 0 means no limit.
  std::size_t max_size = 0;
  // Bytes the pool keeps at release_above_threshold().
  std::size_t release_threshold = 0;
  // New chunks are rounded up to a multiple of this (then capped by max_size).
  std::size_t chunk_granularity = std::size_t{2} << 20;
  // Every alloc result asks the adapter to zero the block (see alloc_result).
  bool zero_init = false;
  // Reuse rules (docs/ordered-pool.md); all on by default.
  bool reuse_ordered = true;         // rule 1: alloc ordered after the free
  bool reuse_completed = true;       // rule 2: free already complete (asked at alloc)
  bool reuse_with_dependency = true; // rule 3: add the free's event to the alloc
};

// What the adapter knows about the alloc command being enqueued.
struct alloc_request {
  std::size_t size = 0;
  std::size_t alignment = 0; // 0 = block_granule; otherwise a power of two
  queue_id queue = nullptr;
  bool in_order = false; // the queue executes commands in submission order
  const event_handle *wait_list = nullptr;
  std::size_t wait_count = 0;
  command_context command = nullptr; // passed back to backend hooks
};

// How an alloc was satisfied (diagnostics and tests).
enum class alloc_source : std::uint8_t {
  free_block,          // memory with no pending use
  ordered,             // rule 1: after the free in queue order / wait list
  completed,           // rule 2: the free was found complete during this call
  internal_dependency, // rule 3: the free's event was added to the command
  new_chunk,           // the pool grew
};

// What an alloc changed, so that cancel() can take it back exactly.
// These two structs have no member initialisers: a successful alloc sets every field,
// and the stream-ordered path makes one per allocation, where zeroing it first costs
// as much as a quarter of the pool's work. Value-initialise ({}) for zeros.
struct alloc_undo {
  std::size_t used_high_before;     // the pool's used high-water mark before
  std::size_t used_high_set;        // the mark this alloc set (0: unchanged)
  std::size_t reserved_high_before; // likewise for a chunk grown for it
  std::size_t reserved_high_set;
  bool grew; // the block lies in a chunk grown for it
};

struct alloc_result {
  void *ptr;
  std::size_t block_size; // bytes charged to "used": size rounded to 64
  // The pool was created with zero_init: the adapter must zero the first
  // `size` bytes on its device as part of the alloc command.
  bool needs_zero;
  std::size_t dependencies_added; // add_dependency() calls that succeeded
  alloc_source source;
  alloc_undo undo;
};

// The free command as the adapter enqueued it. `event` is the free command's
// own event: it completes only after every use of the block. A null event
// means there is no pending use and the block is free at once.
struct release_info {
  event_handle event = nullptr;
  queue_id queue = nullptr;
  bool in_order = false;
};

struct pool_stats {
  std::size_t reserved_current = 0; // bytes held from the backend (or user)
  std::size_t reserved_high = 0;
  std::size_t used_current = 0; // sum of live block sizes (size rounded to 64)
  std::size_t used_high = 0;
};

// Limits and statistics of one UR pool, shared by every core that serves it (a
// pool serving several memory kinds or devices has one core per kind of chunk):
// the maximum size, the release threshold and the four statistics are the pool's,
// not a core's. Lock-free; a core updates it under its own mutex.
//
// "Used" is counted in parts: two per core (up to core_shares cores; more count in one
// shared atomic counter), one changed only under the core's mutex and one only under its
// lane cache's lock, so each update is a plain load and store instead of an atomic
// read-modify-write of a counter every core and thread shares (docs/ordered-pool.md,
// "Statistics").
class pool_budget {
public:
  explicit pool_budget(std::size_t max_size = 0, std::size_t release_threshold = 0)
      : max_(max_size), threshold_(release_threshold) {}
  pool_budget(const pool_budget &) = delete;
  pool_budget &operator=(const pool_budget &) = delete;

  // Reserve `bytes` more from the backend: false (nothing changed) beyond the maximum.
  bool try_reserve(std::size_t bytes, std::size_t *high_before = nullptr, std::size_t *high_set = nullptr);
  void unreserve(std::size_t bytes) { reserved_.fetch_sub(bytes, std::memory_order_acq_rel); }
  // Bytes the maximum still allows (SIZE_MAX without one).
  std::size_t room() const;
  void add_used(std::size_t bytes, std::size_t *high_before = nullptr, std::size_t *high_set = nullptr);
  void sub_used(std::size_t bytes) { shared_.out.fetch_add(bytes, std::memory_order_seq_cst); }

  // A part of "used": bytes counted in and bytes counted out, each only ever growing,
  // so two readings that agree were the values of one moment (a count that went down
  // and up again between them could match without being so).
  struct alignas(64) used_part {
    std::atomic<std::size_t> in{0}, out{0};
  };
  // One core's parts (null when every pair is taken: the core then uses add_used and
  // sub_used above). `core` changes only under the core's mutex, `cache` only under its
  // lane cache's lock, each with a plain load and store. Each block's alloc and free are
  // counted in the same part (move_used carries a lent block's count over when the core
  // takes it back).
  struct core_shares {
    used_part core, cache;
    // Odd while move_used() is under way: a reader that meets one, or sees it change,
    // reads again (the block is live throughout, in one part or the other).
    std::atomic<std::size_t> moving{0};
    std::atomic<bool> taken{false};
  };
  core_shares *claim_shares();
  void return_shares(core_shares *shares); // folds what they count into the shared part
  // The store is sequentially consistent (an exchange on x86) and so are the reads of the
  // sum: of two allocs counted in different parts at the same instant, at least one sees
  // the other's bytes, so the high-water mark records the peak both made.
  void add_used(used_part &part, std::size_t bytes, std::size_t *high_before, std::size_t *high_set) {
    part.in.store(part.in.load(std::memory_order_relaxed) + bytes, std::memory_order_seq_cst);
    raise_used_high(high_before, high_set);
  }
  void sub_used(used_part &part, std::size_t bytes) {
    part.out.store(part.out.load(std::memory_order_relaxed) + bytes, std::memory_order_release);
  }
  // Under both locks (so one at a time per core).
  void move_used(core_shares &s, std::size_t bytes) {
    const std::size_t m = s.moving.load(std::memory_order_relaxed);
    s.moving.store(m + 1, std::memory_order_seq_cst);
    sub_used(s.cache, bytes);
    s.core.in.store(s.core.in.load(std::memory_order_relaxed) + bytes, std::memory_order_seq_cst);
    s.moving.store(m + 2, std::memory_order_seq_cst);
  }
  // An undone alloc: a high-water mark it set goes back, unless something raised it since.
  void undo_used_high(std::size_t before, std::size_t set);
  void undo_reserved_high(std::size_t before, std::size_t set);

  // The pool's statistics (the shared budget's, when the core has one).
  pool_stats stats() const;
  pool_budget &budget();
  std::size_t reserved() const { return reserved_.load(std::memory_order_acquire); }
  void reset_reserved_high() { reserved_high_.store(reserved(), std::memory_order_release); }
  void reset_used_high() { used_high_.store(used(), std::memory_order_release); }
  std::size_t max_size() const { return max_; }
  std::size_t release_threshold() const { return threshold_.load(std::memory_order_acquire); }
  // invalid_argument above a non-zero maximum.
  status set_release_threshold(std::size_t bytes);

private:
  static constexpr std::size_t core_share_count = 4;
  std::size_t used() const; // the shared count and every part
  template <std::size_t Cores> std::size_t used_over() const;
  // The mark follows the sum: an alloc raises it to the sum it reads after counting its
  // block, and so does a stats() that finds the sum above it.
  void raise_used_high(std::size_t *high_before, std::size_t *high_set);

  const std::size_t max_;
  std::atomic<std::size_t> threshold_;
  std::atomic<std::size_t> reserved_{0}, reserved_high_{0};
  used_part shared_;                              // the cores without parts of their own
  mutable std::atomic<std::size_t> used_high_{0}; // stats() raises it
  core_shares shares_[core_share_count];
  std::atomic<std::size_t> shares_in_use_{0}; // slots ever claimed: used() reads no more
};

struct block_info {
  void *base = nullptr;
  std::size_t size = 0;       // the size the caller asked for
  std::size_t block_size = 0; // the size the pool charged (multiple of 64)
};

class ordered_pool {
public:
  // A growing pool that takes chunks from `be` (which must outlive it).
  ordered_pool(backend &be, const pool_config &cfg);
  // A core that shares `budget` (limits, threshold, statistics) with other cores
  // of the same UR pool; cfg.max_size and cfg.release_threshold are ignored.
  ordered_pool(backend &be, const pool_config &cfg, std::shared_ptr<pool_budget> budget);
  // A fixed pool carved out of [user_memory, user_memory + size): it never
  // grows and never gives that memory to the backend. max_size() == size.
  ordered_pool(backend &be, const pool_config &cfg, void *user_memory, std::size_t size);
  ordered_pool(backend &be, const pool_config &cfg, void *user_memory, std::size_t size,
               std::shared_ptr<pool_budget> budget);
  // Releases every held event and returns every backend chunk, live
  // allocations included (check live_allocations() first to defer).
  ~ordered_pool();
  ordered_pool(const ordered_pool &) = delete;
  ordered_pool &operator=(const ordered_pool &) = delete;

  // Allocate for the command described by `req`. On anything but success,
  // `out` and the pool are unchanged (add_dependency() may have been called
  // on req.command; the adapter discards that command anyway).
  //
  // Ordering contract: for one in-order queue, alloc() and free() calls
  // must reach the pool in the order their commands enter that queue (make
  // the pool call and the submission under the queue's submission lock).
  // A free with no release, or one on an in-order queue, keeps its block in a small
  // lane cache in front of the pool's mutex; an alloc of that size it may take (rule 1
  // on the same in-order queue or the wait list, or a release that has completed)
  // takes it there, with no mutex of the pool and no live-table change
  // (docs/async-alloc.md, "The lane cache"). Otherwise:
  // O(1) for the size of the previous free with nothing pending (the quick list),
  // O(log n) when memory is found without growing; before growing it asks at most
  // 32 pending events (round robin over calls), and every one only when the pool
  // cannot grow; rule 3 may walk all blocks.
  status alloc(const alloc_request &req, alloc_result &out);

  // Stream-ordered free: the block becomes reusable per the reuse rules.
  // The pool retains rel.event while it needs it. Errors: not_owned,
  // not_block_start, double_free; out_of_memory only when the host has no
  // memory left for bookkeeping. The pool is unchanged on every error.
  status free(void *ptr, const release_info &rel);
  // As free(), and on success `block_size` is the bytes the block held (a multiple of 64).
  status free(void *ptr, const release_info &rel, std::size_t &block_size);
  // As free(), but only for the start of one of this pool's live blocks: anything
  // else is not_owned at once, with nothing changed (a cheap probe, O(1), before
  // looking the pointer up elsewhere).
  status free_if_live(void *ptr, const release_info &rel);
  // Synchronous free: the caller promises no pending use *of its own*. A block
  // the alloc took over from an earlier owner's free that may not have completed
  // (rules 1 and 3) stays pending on that free: nobody else gets it before.
  status free_now(void *ptr) { return free(ptr, release_info{}); }
  // Undo an alloc whose command never came to exist (an error after alloc()):
  // as free_now, and the statistics and a chunk grown for it are as before.
  status cancel(const alloc_result &res);

  // Promote every pending block whose release event has completed, and let go of
  // completed releases that live blocks took over (an event can hold its queue and
  // the queue its context: a block never freed must not keep them).
  void collect();
  // Closes the pool when nothing is live or pending in it, atomically with respect to
  // alloc(): afterwards every alloc() answers `closed` with nothing changed. True when
  // closed (or closed already). reopen() undoes it.
  bool close_if_idle();
  void reopen();
  // Live blocks let go of every release they took over, complete or not. Only for when
  // no synchronous free or undone alloc of them can come any more (their context's
  // last user handle is gone): a stream-ordered free never needs them.
  void forget_taken_over();
  // At a synchronisation point: collect, then return wholly free chunks
  // while reserved > release threshold. Returns the bytes returned.
  std::size_t release_above_threshold();
  // As above with an explicit floor (urUSMPoolTrimToExp).
  std::size_t trim_to(std::size_t min_bytes_to_keep);
  // Drop the queue identity from pending blocks (before `q` may be reused).
  void forget_queue(queue_id q);
  // The queue `q` is gone: blocks its frees left in the lane cache go back to the
  // pool (pending on their releases), so no slot waits for a lane that never comes.
  void drop_lane(queue_id q);

  // The live block containing `ptr` (interior pointers too).
  bool lookup(const void *ptr, block_info &out) const;
  // True when `ptr` lies in memory this pool holds (allocated or not).
  bool owns(const void *ptr) const;

  // The pool's statistics (the shared budget's, when the core has one).
  pool_stats stats() const;
  pool_budget &budget();
  void reset_reserved_high(); // high-water mark := current
  void reset_used_high();
  std::size_t release_threshold() const;
  // invalid_argument when above a non-zero max size.
  status set_release_threshold(std::size_t bytes);
  std::size_t max_size() const; // 0 = unlimited
  bool zero_init() const;
  bool is_fixed() const;

  std::size_t live_allocations() const;
  // Bytes in chunks with nothing live or pending in them (what trim_to could give back).
  std::size_t idle_bytes() const;
  std::size_t pending_blocks() const;
  std::size_t chunk_count() const;

private:
  class impl;
  std::unique_ptr<impl> impl_;
};

} // namespace ordo::pool
