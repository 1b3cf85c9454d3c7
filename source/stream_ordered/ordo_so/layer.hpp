// SPDX-License-Identifier: Apache-2.0
// The stream-ordered layer: everything UR-facing about USM pools and stream-ordered
// allocation, written once for every adapter (docs/async-alloc.md is the contract,
// docs/adapter-guide.md shows the hooks an adapter writes).
//
// It owns pool handles and their lifetime, the default/current/host pools of each
// context, descriptor parsing and argument checks, limits and statistics per pool
// (one shared budget over every memory class and device the pool serves), the one
// table from core status to ur_result_t, the pointer registry (plain USM and pool
// chunks), queue identities that are never reused, and the ordering knowledge that
// decides reuse rule 1. The ordered pool core (ordo_pool/) does the allocation.
//
// An adapter supplies:
//  - context_hooks, one per context: chunks per memory class, event queries and
//    references, adding a dependency to the command being enqueued, device checks;
//  - adapter_hooks, once: how to find the layer state of a context handle;
//  - its enqueue functions for urEnqueueUSM*AllocExp / urEnqueueUSMFreeExp, which
//    call alloc_in_command() / free_in_command() under the queue's submission lock
//    (so the core sees one queue's allocs and frees in submission order), and
//    order().record() for every command it enqueues (ordering knowledge).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "ordo_pool/adaptive_mutex.hpp"
#include "ordo/object.hpp"
#include "ordo_pool/ordered_pool.hpp"
#include "ur_api.h"

namespace ordo::stream_ordered {
class pool;
class context_pools;
} // namespace ordo::stream_ordered

// The pool handle of every adapter that uses the layer: an ordo::object (ordo/object.hpp);
// ref_count is the user's count, the pool's own count keeps it alive (pool::refs_).
struct ur_usm_pool_handle_t_ : ordo::object {
  ordo::stream_ordered::pool *owner;
  explicit ur_usm_pool_handle_t_(ordo::stream_ordered::pool *p);
};
ORDO_HANDLE_CHECK(ur_usm_pool_handle_t_);

namespace ordo::stream_ordered {

// ---- what an adapter implements ------------------------------------------------

// A memory class: one kind of chunk. The adapter decides which USM kinds a class
// serves (on a CPU every kind is host memory: one class; a GPU has device, shared
// and host classes per device). `device` is null for host memory.
struct mem_class {
  ur_device_handle_t device = nullptr;
  unsigned id = 0; // adapter-defined, e.g. the ur_usm_type_t of the chunks
  bool operator==(const mem_class &o) const { return device == o.device && id == o.id; }
};

class context_hooks {
public:
  virtual ~context_hooks() = default;
  // The class that serves `kind` for `device` (null for host memory), or
  // UNSUPPORTED_FEATURE when the context has no such memory.
  virtual ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device, mem_class &out) = 0;
  // The kind a class's blocks are when nobody says otherwise (for queries).
  virtual ur_usm_type_t primary_kind(const mem_class &c) = 0;
  // Backend memory, at least 64-byte aligned; null when there is none. Called with
  // a pool's lock held: must not call back into the layer.
  virtual void *get_chunk(const mem_class &c, size_t size) = 0;
  virtual void put_chunk(const mem_class &c, void *base, size_t size) = 0;
  // Give a plain allocation (urUSM*Alloc without a pool, `kind` and `device` as made)
  // back to the backend: what leaves the quarantine of freed memory, what the context
  // still holds when it goes, an alloc undone. Called with no lock of the layer held;
  // may block (a driver's free).
  virtual void free_plain(void *base, ur_usm_type_t kind, ur_device_handle_t device) = 0;
  // Events are the adapter's ur_event_handle_t. Cheap, never blocking, no throw;
  // called with a pool's lock held.
  virtual bool event_complete(ur_event_handle_t ev) = 0;
  virtual void retain_event(ur_event_handle_t ev) = 0;
  virtual void release_event(ur_event_handle_t ev) = 0;
  // The ordering node order().record() gave the command whose event this is (0: none,
  // e.g. an event made from a native handle, or one of another context).
  virtual uint64_t event_node(ur_event_handle_t ev) = 0;
  // Make the command being enqueued (alloc_command::adapter_command) wait for `ev`.
  virtual bool add_dependency(void *adapter_command, ur_event_handle_t ev) = 0;
  // Devices and the context itself.
  virtual bool has_device(ur_device_handle_t d) = 0;
  virtual ur_context_handle_t handle() = 0;
  virtual void retain_context() = 0; // a pool the user made holds its context
  virtual void release_context() = 0;
  // Zero `size` bytes at `p` now (urUSM*Alloc from a zero-initialising pool).
  virtual ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) = 0;
  // urUSMHostAllocRegisterExp: make the caller's pages [p, p + size) host memory every
  // device of the context can use (pinned and mapped where the backend pins); undone
  // by unpin_host. Called with the registry's lock held: must not call back into the
  // layer. Only adapters that set adapter_hooks::host_registration are asked.
  virtual ur_result_t pin_host(void *p, size_t size, bool read_only) {
    (void)p, (void)size, (void)read_only;
    return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  }
  virtual void unpin_host(void *p, size_t size) { (void)p, (void)size; }
};

struct adapter_hooks {
  // The layer state of a context handle; null with *err set for a bad handle.
  context_pools *(*pools_of)(ur_context_handle_t ctx, ur_result_t *err) = nullptr;
  // Whether a device handle is valid at all (INVALID_DEVICE vs not in context).
  bool (*is_device)(ur_device_handle_t d) = nullptr;
  // The adapter's context_hooks pin host memory: urUSMHostAllocRegisterExp and
  // urUSMHostAllocUnregisterExp are installed with the pool entry points.
  bool host_registration = false;
};

// Puts the twelve urUSMPool* / urUSMPool*Exp entry points into `t` (and the two
// host-registration ones when the adapter asks for them).
void install_pool_entry_points(ur_dditable_t &t, const adapter_hooks &hooks);

// ---- queue identities and ordering knowledge ----------------------------------

// A queue identity never used before (and never again): a counter, not an address.
const void *new_queue_identity();

// The commands of a context as far as ordering goes: each command is a node with
// its predecessors (its wait list, the previous command of an in-order queue, the
// last barrier of an out-of-order queue). Bounded: old nodes are forgotten, and a
// forgotten or unknown node only loses reuse, never correctness.
class order_graph {
public:
  order_graph();
  ~order_graph();
  // Records a command; returns its node (store it in the command's event).
  // `barrier`: every later command of the queue comes after it (out-of-order queue);
  // without a wait list (`has_wait_list` false) it also follows every earlier command,
  // with one only those events. `waits` are the nodes of the wait list that have one:
  // a barrier whose list had only events without a node follows none of them, not all.
  uint64_t record(const void *queue, bool in_order, bool barrier, const uint64_t *waits, size_t n, bool has_wait_list);
  // Is node `target` a predecessor (transitively) of a command that waits for
  // `waits` and is the next command of `queue`?
  bool ordered_after(uint64_t target, const void *queue, bool in_order, const uint64_t *waits, size_t n) const;
  void forget_queue(const void *queue);

private:
  struct node;
  struct queue_state {
    uint64_t last = 0;
    uint64_t last_barrier = 0;
    std::vector<uint64_t> since_barrier; // out-of-order commands a barrier must follow
    bool since_overflow = false;
  };
  const node *find(uint64_t id) const;
  mutable ordo::pool::adaptive_mutex mu_; // every command of the context records here
  std::vector<node> ring_;
  std::unordered_map<const void *, queue_state> queues_;
  // The queue of the newest record and its state (elements of queues_ keep their place).
  const void *last_queue_ = nullptr;
  queue_state *last_state_ = nullptr;
};

// ---- the layer state of one context ----------------------------------------------

// The alloc command being enqueued, as the core's hooks see it.
struct alloc_command {
  const void *queue = nullptr; // new_queue_identity() of the queue (or stream)
  bool in_order = false;
  const ur_event_handle_t *waits = nullptr;
  uint32_t num_waits = 0;
  void *adapter_command = nullptr; // passed to context_hooks::add_dependency
};

// A block an alloc got, until the command exists (then it is the caller's) or is
// undone with cancel(). A successful alloc_in_command sets every field; nothing else
// reads one, so it is not zeroed first (one per stream-ordered alloc).
struct allocation {
  void *ptr;
  bool needs_zero; // the command must zero `size` bytes first
  size_t size;
  ur_usm_type_t kind;
  ordo::pool::alloc_result result;
  void *core; // internal
};

class pool_ref; // a counted reference to a pool, below

class context_pools {
public:
  // `hooks` must outlive this object.
  explicit context_pools(context_hooks &hooks);
  ~context_pools(); // shutdown() if not done
  context_pools(const context_pools &) = delete;
  context_pools &operator=(const context_pools &) = delete;

  context_hooks &hooks() { return hooks_; }
  order_graph &order() { return order_; }

  // --- stream-ordered commands (the adapter's enqueue functions) ---
  // The pool an alloc of `kind` on a queue of `device` draws from: `named`, or the
  // device's current pool (device, shared) or the host pool. Checks the pool.
  ur_result_t resolve(ur_usm_pool_handle_t named, ur_usm_type_t kind, ur_device_handle_t device, pool_ref &out);
  // Under the queue's submission lock. On success the block is the command's.
  ur_result_t alloc_in_command(pool_ref &p, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                               const alloc_command &cmd, allocation &out);
  // The command could not be made after all: the pool is as before.
  void cancel(pool_ref &p, const allocation &a);
  // Before making a free command: `ptr` must be the start of a live block of a pool
  // of this context (of `named`, if not null). INVALID_MEM_OBJECT otherwise.
  ur_result_t check_free(ur_usm_pool_handle_t named, void *ptr, pool_ref &owner);
  // check_free() without asking the core about the block (one core lock fewer per
  // free): the pool that holds `ptr`. For an adapter whose free command does nothing
  // but order: free_in_command() still refuses a pointer that is not a live block's
  // start, and the command it made then had no effect.
  ur_result_t find_owner(ur_usm_pool_handle_t named, void *ptr, pool_ref &owner);
  // Under the queue's submission lock, after the free command exists: the block is
  // released when `release` completes (null: now, no pending use). On success
  // `block_size`, if given, is the bytes the block held.
  ur_result_t free_in_command(pool_ref &owner, void *ptr, ur_event_handle_t release, const void *queue, bool in_order,
                              size_t *block_size = nullptr);
  // A stream-ordered free that has nothing to wait for (no wait list, and nothing
  // unfinished on its in-order queue): check_free() and free_in_command() with no
  // release event in one step, one core call. Same results as that pair; needs no
  // queue lock, since a block with no pending use has no place in a queue's order.
  ur_result_t free_unused(ur_usm_pool_handle_t named, void *ptr);
  // check_free() and free_in_command() in one step, one core call, for a free whose
  // release event exists already (no command to make first); under the queue's
  // submission lock like free_in_command(). Same results as that pair.
  ur_result_t check_and_free(ur_usm_pool_handle_t named, void *ptr, ur_event_handle_t release, const void *queue,
                             bool in_order);

  // --- synchronous USM (urUSM*Alloc with a pool, urUSMFree, queries) ---
  ur_result_t alloc_now(ur_usm_pool_handle_t hPool, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                        size_t align, void **out);
  // urUSMFree: true when `ptr` lies in pool memory (then `result` is set).
  bool free_now(void *ptr, ur_result_t &result);
  struct block_facts {
    void *base = nullptr;
    size_t size = 0;
    ur_usm_type_t kind = UR_USM_TYPE_UNKNOWN;
    ur_device_handle_t device = nullptr;
    ur_usm_pool_handle_t pool = nullptr;
  };
  // urUSMGetMemAllocInfo: the live pool block containing `ptr` (interior pointers too, up to
  // the size asked for: the block's rounding beyond it is no part of the allocation).
  bool block_info(const void *ptr, block_facts &out);

  // --- plain USM allocations (the one pointer registry) ---
  void add_plain(void *base, size_t size, ur_usm_type_t kind, ur_device_handle_t device); // may throw
  // Removes the plain allocation starting exactly at `base`; false if none.
  bool take_plain(const void *base, block_facts *out = nullptr);
  // urUSMFree of the plain allocation starting exactly at `base` (false if none): it
  // stays held, freed, in the context's quarantine of recent frees, where commands that
  // name it are refused (docs/async-alloc.md, "Freed memory"). What leaves the quarantine
  // to make room is appended to `release`: the caller gives it back to the backend.
  bool retire_plain(const void *base, block_facts &out, std::vector<block_facts> &release); // may throw
  // Gives each of `release` back to the backend (context_hooks::free_plain).
  void give_back(const std::vector<block_facts> &release);
  // How many times the quarantine has been given back: read before an allocation, for
  // empty_quarantine() after it failed for memory (a stale value costs a retry at most).
  uint64_t quarantine_epoch() const { return emptied_.load(std::memory_order_relaxed); }
  // Gives the whole quarantine back to the backend, for an allocation that failed for
  // memory to try again. True when trying again may succeed: this call gave memory back,
  // or another thread's call did since `epoch` (one still giving back is waited for: its
  // memory is not the backend's until its frees return). False: nothing came back.
  bool empty_quarantine(uint64_t epoch);
  bool find_plain(const void *p, block_facts &out) const; // live allocations only
  // The rule every USM command applies to its region [p, p + bytes): INVALID_SIZE when
  // it wraps the address space or runs past the pool block or plain allocation of this
  // context that holds p; INVALID_MEM_OBJECT when p lies in memory the context freed and
  // still holds (a pool's chunk outside its live blocks, the quarantine); SUCCESS
  // otherwise (memory the context does not know, system memory for one, is the caller's
  // to vouch for). docs/bad-input.md.
  ur_result_t check_usm_region(const void *p, size_t bytes);
  // Every plain allocation still held, the quarantine's included (context teardown frees them).
  std::vector<block_facts> plain_allocations() const;
  // --- host memory the user registered (urUSMHostAllocRegisterExp) ---
  // Known to queries as host USM (find_plain), never freed by urUSMFree; pinned through
  // context_hooks::pin_host. INVALID_VALUE for a range that overlaps USM memory of
  // the context or another registration, or, on unregister, for anything but the
  // first byte of a registration.
  ur_result_t register_host(void *p, size_t size, bool read_only); // may throw
  ur_result_t unregister_host(void *p);
  // --- a fixed pool's memory (ur_usm_pool_buffer_desc_t) ---
  // Claims [base, base + size) for `p`: it must lie inside one plain USM allocation of
  // the context, of `kind`, and share no byte with memory any pool holds; checked and
  // recorded in one step, so two pools can never claim the same bytes. INVALID_VALUE
  // otherwise. While claimed, take_plain() refuses the allocation it lies in.
  ur_result_t claim_user_memory(const void *base, size_t size, ur_usm_type_t kind, pool *p, void *core);
  void unclaim_user_memory(const void *base);

  // --- synchronisation points and lifetime ---
  void sync_point() { sweep(true); } // urQueueFinish, urEventWait: collect, release above thresholds
  void collect() { sweep(false); }   // promote completed frees (their events may hold the context)
  // The user's last release of the context: collect(), and live blocks let go of the
  // releases they took over (no urUSMFree naming the context can come any more).
  void user_released_context();
  void queue_released(const void *queue); // forget its ordering state and lane caches
  void shutdown();                        // the context goes: its pools go with it
  bool any_pools() const { return any_.load(std::memory_order_acquire); }

  // --- used by the entry points and the pool object ---
  ur_result_t default_pool(ur_device_handle_t d, pool_ref &out);
  ur_result_t host_pool(pool_ref &out);
  ur_result_t current_pool(ur_device_handle_t d, pool_ref &out);
  ur_result_t set_current(ur_device_handle_t d, pool &p); // INVALID_VALUE: destroyed meanwhile
  void add_user_pool(pool &p);                            // may throw
  void user_released(pool &p);                            // no longer anyone's current pool; reap when idle
  void reap_if_idle(pool &p);
  void add_range(const void *base, size_t size, pool *p, void *core); // may throw
  void remove_range(const void *base);

private:
  struct range {
    size_t size = 0;
    pool *owner = nullptr; // null: a plain allocation
    void *core = nullptr;
    ur_usm_type_t kind = UR_USM_TYPE_UNKNOWN;
    ur_device_handle_t device = nullptr;
    uint32_t fixed_pools = 0; // plain: fixed pools carved from it (it cannot be freed)
    bool freed = false;       // plain: in the quarantine (urUSMFree'd, not yet given back)
  };
  // The pool whose memory holds `p` (referenced) and the core that owns it.
  pool_ref ref_at(const void *p, void **core) const;
  pool *make_default(ur_device_handle_t d, bool host); // under mu_
  void reap_list(std::vector<pool *> &idle);
  void sweep(bool release);

  context_hooks &hooks_;
  order_graph order_;
  mutable std::mutex mu_;
  std::map<ur_device_handle_t, pool *> defaults_; // per device; key null: the host pool
  // The same, readable without the lock: entries are only appended (under mu_).
  static constexpr size_t kFastDefaults = 16;
  struct fast_default {
    std::atomic<ur_device_handle_t> device{nullptr};
    std::atomic<pool *> p{nullptr};
  };
  fast_default fast_[kFastDefaults];
  std::atomic<size_t> fast_count_{0};
  pool *find_default(ur_device_handle_t d) const;
  ur_result_t context_default(ur_device_handle_t d, bool host, pool_ref &out); // key null: the host pool
  std::map<ur_device_handle_t, pool *> current_;                               // a pool the user set
  std::atomic<size_t> current_count_{0};                                       // lock-free "no pool set" check
  std::vector<pool *> all_;                                                    // each with a reference
  std::atomic<bool> any_{false};
  mutable std::shared_mutex ranges_mu_;
  std::map<uintptr_t, range> ranges_; // pool chunks (and fixed pools' user memory)
  // Changes (under ranges_mu_) with every change of ranges_, to a value no context ever
  // had: a thread's last default-pool answer of ref_at() stands while it is unchanged.
  std::atomic<uint64_t> ranges_version_;
  void ranges_changed();             // under ranges_mu_, exclusive
  std::map<uintptr_t, range> plain_; // plain USM allocations, the quarantine's included
  struct quarantined {
    uintptr_t base;
    size_t size;
  };
  std::deque<quarantined> quarantine_; // freed plain allocations, oldest first
  size_t quarantine_bytes_ = 0;
  // empty_quarantine() calls giving back what they took (counted under emptying_mu_,
  // which is never held while memory goes back), and those that gave back something.
  std::mutex emptying_mu_;
  std::condition_variable emptying_done_;
  uint32_t emptying_ = 0;
  std::atomic<uint64_t> emptied_{0};
  // What a caller learns of an entry of plain_ or registered_.
  static block_facts facts_of(uintptr_t base, const range &r) {
    return block_facts{reinterpret_cast<void *>(base), r.size, r.kind, r.device, nullptr};
  }
  std::map<uintptr_t, range> registered_; // host memory the user registered
};

// ---- pools ------------------------------------------------------------------------

enum class pool_scope : uint8_t {
  device,  // urUSMPoolCreateExp and a device's default pool: device and shared memory
  host,    // the context's host pool
  context, // urUSMPoolCreate: every kind, every device of the context
};

struct pool_settings {
  ordo::pool::pool_config config;
  ur_usm_pool_flags_t flags = 0;
  void *user_memory = nullptr; // ur_usm_pool_buffer_desc_t
  size_t user_size = 0;
  ur_usm_type_t user_kind = UR_USM_TYPE_UNKNOWN;
  ur_device_handle_t user_device = nullptr;
};

// One UR pool. References: the user's (handle's ref_count; a default pool's belongs
// to the context), an internal one while the context lists it, one per call in
// progress (pool_ref). The object goes when the internal count reaches zero.
class pool {
public:
  pool(context_pools &ctx, pool_scope scope, ur_device_handle_t device, bool is_default, const pool_settings &s);
  ~pool();
  pool(const pool &) = delete;
  pool &operator=(const pool &) = delete;

  ur_usm_pool_handle_t handle() { return &handle_; }
  static pool *from(ur_usm_pool_handle_t h) { return h->owner; }
  context_pools &context() { return ctx_; }
  pool_scope scope() const { return scope_; }
  ur_device_handle_t device() const { return device_; }
  bool is_default() const { return is_default_; }
  bool destroyed() const { return destroyed_.load(std::memory_order_acquire); }

  // Whether this pool may hold `kind` memory for `device`: SUCCESS, INVALID_VALUE
  // (another kind), INVALID_DEVICE (another device), UNSUPPORTED_FEATURE.
  ur_result_t serves(ur_usm_type_t kind, ur_device_handle_t device) const;
  ordo::pool::pool_budget &budget() { return *budget_; }
  size_t live_allocations() const;
  // A stream-ordered free of `ptr` if it starts a live block of one of this pool's
  // first cores (see ordered_pool::free_if_live); not_owned, nothing changed, if not.
  ordo::pool::status free_if_live(void *ptr, const ordo::pool::release_info &rel);
  size_t pending_blocks() const;
  void collect();
  void forget_taken_over();
  void drop_lane(const void *queue); // a queue (lane) is gone: its cached blocks go back
  void release_above_threshold();
  void trim_to(size_t keep);
  struct core; // an ordered_pool with its backend, per memory class
  // At the maximum: the other cores give back wholly free chunks, so that the budget
  // has room for `need` more bytes in `except`; nothing is given back when that would
  // not make room (a refused request changes nothing). True when room was made.
  bool release_idle_except(const core *except, size_t need);

  void add_ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void drop_ref();
  // urUSMPoolDestroyExp / the user's last urUSMPoolRelease. False when already done.
  bool end_user_handle();
  // A reference unless the pool is already going (no reference left): for finding a
  // pool from its memory, which stays registered until the pool's destructor.
  bool try_add_ref();
  // A destroyed pool with nothing live or pending is closed before it is reaped: an
  // alloc that took its reference earlier then answers `closed` instead of getting a
  // block the pool's last reference would free (every core, and no new core after).
  bool close_if_idle();
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  // A fixed pool: its memory, claimed after construction (context_pools::claim_user_memory).
  ur_result_t claim_user_memory();

  // --- used by context_pools ---
  core *core_for(const mem_class &c, ur_result_t &err); // makes it on first use
  ur_usm_type_t kind_of(const void *base, ur_usm_type_t primary) const;
  void set_kind(const void *base, ur_usm_type_t kind, ur_usm_type_t primary); // may throw
  void clear_kind(const void *base);
  std::atomic<bool> reaped{false};

private:
  ur_usm_pool_handle_t_ handle_;
  context_pools &ctx_;
  const pool_scope scope_;
  const ur_device_handle_t device_;
  const bool is_default_;
  const pool_settings settings_;
  std::shared_ptr<ordo::pool::pool_budget> budget_;
  std::atomic<uint32_t> refs_{1};
  std::atomic<bool> destroyed_{false};
  std::atomic<bool> closed_{false}; // under cores_mu_ when set
  bool claimed_ = false;
  mutable std::mutex cores_mu_;
  std::vector<std::unique_ptr<core>> cores_;
  // The first cores, readable without the lock: only appended (under cores_mu_).
  static constexpr size_t kFastCores = 8;
  std::atomic<core *> fast_cores_[kFastCores] = {};
  std::atomic<size_t> fast_core_count_{0};
  mutable std::mutex kinds_mu_;
  std::atomic<size_t> kinds_count_{0};
  std::unordered_map<uintptr_t, ur_usm_type_t> kinds_; // blocks not of their class's primary kind
};

// A reference that keeps a pool alive. A context's default and host pools live as
// long as the context, which every caller holds, so theirs are borrowed (no count).
class pool_ref {
public:
  pool_ref() = default;
  explicit pool_ref(pool *p) : p_(p), counted_(p != nullptr) {
    if (p_) p_->add_ref();
  }
  static pool_ref borrowed(pool *p) {
    pool_ref r;
    r.p_ = p;
    return r;
  }
  // A counted reference taken with pool::try_add_ref() already.
  static pool_ref adopt(pool *p) {
    pool_ref r;
    r.p_ = p;
    r.counted_ = true;
    return r;
  }
  pool_ref(const pool_ref &o) : p_(o.p_), counted_(o.counted_), core_hint(o.core_hint), via_current(o.via_current) {
    if (counted_) p_->add_ref();
  }
  pool_ref &operator=(const pool_ref &o) {
    pool_ref tmp(o);
    std::swap(p_, tmp.p_);
    std::swap(counted_, tmp.counted_);
    core_hint = o.core_hint;
    via_current = o.via_current;
    return *this;
  }
  ~pool_ref() {
    if (counted_) p_->drop_ref();
  }
  pool *get() const { return p_; }
  pool *operator->() const { return p_; }
  pool &operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }

private:
  pool *p_ = nullptr;
  bool counted_ = false;

public:
  void *core_hint = nullptr; // internal: the core check_free found the block in
  bool via_current = false;  // internal: resolve() found it as the current pool (pPool == NULL)
};

// A live, not destroyed pool handle of this adapter, referenced; INVALID_VALUE
// (docs/async-alloc.md, "Errors") for anything else, INVALID_NULL_HANDLE for null.
ur_result_t acquire(ur_usm_pool_handle_t h, pool_ref &out);

// The one table from core status to ur_result_t.
ur_result_t to_result(ordo::pool::status s, ur_usm_type_t kind);

} // namespace ordo::stream_ordered
