// The ordered pool core: a backend-agnostic stream-ordered allocator
// (DESIGN.md §3, §5; docs/ordered-pool.md explains the model).
//
// Thread-safe: every member function may be called from any thread. The pool
// calls its backend with its mutex held.
#pragma once

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

struct alloc_result {
  void *ptr = nullptr;
  std::size_t block_size = 0; // bytes charged to "used": size rounded to 64
  // The pool was created with zero_init: the adapter must zero the first
  // `size` bytes on its device as part of the alloc command.
  bool needs_zero = false;
  std::size_t dependencies_added = 0; // add_dependency() calls that succeeded
  alloc_source source = alloc_source::free_block;
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

struct block_info {
  void *base = nullptr;
  std::size_t size = 0;       // the size the caller asked for
  std::size_t block_size = 0; // the size the pool charged (multiple of 64)
};

class ordered_pool {
public:
  // A growing pool that takes chunks from `be` (which must outlive it).
  ordered_pool(backend &be, const pool_config &cfg);
  // A fixed pool carved out of [user_memory, user_memory + size): it never
  // grows and never gives that memory to the backend. max_size() == size.
  ordered_pool(backend &be, const pool_config &cfg, void *user_memory, std::size_t size);
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
  // O(log n) when memory is found without growing; growing first asks every
  // pending event once (O(pending)); rule 3 may walk all blocks.
  status alloc(const alloc_request &req, alloc_result &out);

  // Stream-ordered free: the block becomes reusable per the reuse rules.
  // The pool retains rel.event while it needs it. Errors: not_owned,
  // not_block_start, double_free; out_of_memory only when the host has no
  // memory left for bookkeeping. The pool is unchanged on every error.
  status free(void *ptr, const release_info &rel);
  // Synchronous free: the caller promises no pending use.
  status free_now(void *ptr) { return free(ptr, release_info{}); }

  // Promote every pending block whose release event has completed.
  void collect();
  // At a synchronisation point: collect, then return wholly free chunks
  // while reserved > release threshold. Returns the bytes returned.
  std::size_t release_above_threshold();
  // As above with an explicit floor (urUSMPoolTrimToExp).
  std::size_t trim_to(std::size_t min_bytes_to_keep);
  // Drop the queue identity from pending blocks (before `q` may be reused).
  void forget_queue(queue_id q);

  // The live block containing `ptr` (interior pointers too).
  bool lookup(const void *ptr, block_info &out) const;
  // True when `ptr` lies in memory this pool holds (allocated or not).
  bool owns(const void *ptr) const;

  pool_stats stats() const;
  void reset_reserved_high(); // high-water mark := current
  void reset_used_high();
  std::size_t release_threshold() const;
  // invalid_argument when above a non-zero max size.
  status set_release_threshold(std::size_t bytes);
  std::size_t max_size() const; // 0 = unlimited
  bool zero_init() const;
  bool is_fixed() const;

  std::size_t live_allocations() const;
  std::size_t pending_blocks() const;
  std::size_t chunk_count() const;

private:
  class impl;
  std::unique_ptr<impl> impl_;
};

} // namespace ordo::pool
