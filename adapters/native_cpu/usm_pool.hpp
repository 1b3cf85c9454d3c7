// USM pools of the native CPU adapter, on the ordered pool core (DESIGN.md §3, §5;
// docs/ordered-pool.md; docs/native-cpu.md, "Stream-ordered allocation").
//
// Every kind of USM is host memory here, so each pool has exactly one core, which
// serves every kind the pool may hold: a device pool (urUSMPoolCreateExp, a
// device's default pool) device and shared memory, the context's host pool host
// memory, a context pool (urUSMPoolCreate) all three, a fixed pool
// (ur_usm_pool_buffer_desc_t) the kind of the memory it was carved from.
//
// Pool blocks are not in the USM registry: the context maps each chunk of pool
// memory to its pool, and the core knows its live blocks (base, size).
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "common.hpp"
#include "ordo_pool/ordered_pool.hpp"

namespace nc {

struct Context;
struct Event;
struct Pool;
struct Queue;
class CommandBuilder;

// What an enqueued alloc tells the core's hooks about itself (its command_context).
// The pool is called with the queue's mutex held.
struct AllocCommand {
  CommandBuilder *builder = nullptr; // null: an allocation outside any queue
  Queue *queue = nullptr;
  uint32_t num_waits = 0;
  const ur_event_handle_t *waits = nullptr;
};

// The core's view of this adapter: chunks are aligned host memory, events are the
// scheduler's events, and a dependency is one more edge of the alloc command.
class PoolBackend final : public ordo::pool::backend {
public:
  explicit PoolBackend(Pool &pool) : pool_(pool) {}
  void *get_chunk(std::size_t size) override;
  void put_chunk(void *base, std::size_t size) override;
  bool event_complete(ordo::pool::event_handle ev) override;
  bool add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) override;
  void retain_event(ordo::pool::event_handle ev) override;
  void release_event(ordo::pool::event_handle ev) override;
  // Exact here: the scheduler knows every edge, so a free reached from the alloc's
  // wait list or queue through other commands counts as ordered (rule 1).
  bool is_ordered_before(ordo::pool::command_context cmd, ordo::pool::event_handle ev) override;

private:
  Pool &pool_;
};

enum class PoolScope : uint8_t {
  Device,  // urUSMPoolCreateExp and the default pool: device and shared memory
  Host,    // the context's host pool
  Context, // urUSMPoolCreate: every kind
};

// What urUSMPoolCreate(Exp) asked for.
struct PoolSettings {
  ordo::pool::pool_config config;
  ur_usm_pool_flags_t flags = 0;
  void *user_memory = nullptr; // ur_usm_pool_buffer_desc_t
  size_t user_size = 0;
  ur_usm_type_t user_kind = UR_USM_TYPE_UNKNOWN;
};

// References: the user's handle (HandleBase::ref_count; a default pool keeps one
// that the user cannot release), one internal reference while the context lists
// the pool, and one per call in progress. A pool the user made holds its context.
struct Pool : Object<Pool> {
  using handle_type = ur_usm_pool_handle_t;
  static constexpr Kind kKind = Kind::Pool;
  // An unknown or destroyed pool is an invalid value (docs/async-alloc.md, "Errors").
  static ur_result_t invalid_handle(ur_usm_pool_handle_t h) { return bad_handle(h, UR_RESULT_ERROR_INVALID_VALUE); }

  Pool(Context &ctx, PoolScope scope, bool is_default, const PoolSettings &settings);
  ~Pool();
  // Destroyed by the user: no longer anyone's current pool; its memory goes back
  // once its last allocation is freed and no command can still use it.
  void on_user_released();

  ordo::pool::ordered_pool &core() { return *core_; }
  bool serves(ur_usm_type_t kind) const;
  // Where an allocation of `kind` from this pool fails: OUT_OF_{DEVICE,HOST}_MEMORY.
  static ur_result_t to_ur(ordo::pool::status s, ur_usm_type_t kind);

  // The kind of a live block. Blocks of the pool's primary kind are not recorded.
  ur_usm_type_t kind_of(const void *base) const;
  void set_kind(const void *base, ur_usm_type_t kind); // after the alloc; may throw
  void clear_kind(const void *base);                   // before the free

  Context &context;
  const PoolScope scope;
  const bool is_default;
  const ur_usm_pool_flags_t flags;
  const ur_usm_type_t primary_kind;
  void *const user_memory;
  const size_t user_size;
  std::atomic<bool> destroyed{false};
  std::atomic<bool> reaped{false};

private:
  PoolBackend backend_;
  std::unique_ptr<ordo::pool::ordered_pool> core_;
  std::atomic<size_t> other_kinds_count_{0};
  mutable std::mutex kinds_mu_;
  std::unordered_map<uintptr_t, ur_usm_type_t> other_kinds_;
};
ORDO_HANDLE_CHECK(Pool);

inline ur_usm_pool_handle_t to_handle(Pool *p) { return reinterpret_cast<ur_usm_pool_handle_t>(p); }

// The pools of one context: the device's default and current pool, the host pool,
// every pool with memory (for synchronisation points), and which pool each chunk
// of pool memory belongs to.
class ContextPools {
public:
  explicit ContextPools(Context &ctx) : ctx_(ctx) {}
  ~ContextPools();
  ContextPools(const ContextPools &) = delete;
  ContextPools &operator=(const ContextPools &) = delete;

  // ~Context: the default and host pools go (no other pool can be left: each holds
  // the context).
  void shutdown();

  // May throw std::bad_alloc (first use). The default and host pools live as long
  // as the context; another current pool is held by `hold` for the caller.
  Pool &default_pool();
  Pool &host_pool();
  Pool &current_pool(Ref<Pool> &hold);
  // The default pool if it exists yet (no locking).
  Pool *default_if_made() const { return default_.load(std::memory_order_acquire); }
  void set_current(Pool &p);
  // A destroyed pool stops being the current pool (back to the default).
  void unset_current(Pool &p);

  // A pool the user made (urUSMPoolCreate(Exp)); the context lists it until reaped.
  void add(Pool &p);
  // The pool whose memory holds `ptr`, or none.
  Ref<Pool> pool_at(const void *ptr) const;
  void add_range(const void *base, size_t size, Pool *p); // may throw
  void remove_range(const void *base);

  // urQueueFinish / urEventWait: every pool gives back memory above its threshold;
  // destroyed pools with nothing left in use go.
  void sync_point();
  // A queue with stream-ordered frees is released: completed frees are collected
  // and the pools forget the queue's identity.
  void queue_released(Queue &q);
  // The user released the context: completed frees are collected (their events
  // hold the context).
  void collect_all();
  // A destroyed pool whose last allocation was freed may go now.
  void reap_if_idle(Pool &p);

  bool any() const { return any_.load(std::memory_order_acquire); }

private:
  Pool *make_default(PoolScope scope); // under mu_
  void reap_list(std::vector<Pool *> &idle);

  Context &ctx_;
  mutable std::mutex mu_;
  // Set once under mu_, read without it.
  std::atomic<Pool *> default_{nullptr}; // the device's default pool
  std::atomic<Pool *> host_{nullptr};
  std::atomic<Pool *> current_{nullptr}; // null: the default; written under mu_
  std::vector<Pool *> all_; // each with an internal reference
  std::atomic<bool> any_{false};
  mutable std::shared_mutex ranges_mu_;
  std::map<uintptr_t, std::pair<size_t, Pool *>> ranges_; // chunk base -> (size, pool)
};

// Hooks for queue.cpp, event.cpp, usm.cpp.
void pools_sync_point(Context &ctx);
void pools_queue_released(Context &ctx, Queue &q);

// urUSM{Host,Device,Shared}Alloc with a pool: a block with no pending use.
ur_result_t pool_alloc_now(Context &ctx, ur_usm_pool_handle_t hPool, ur_usm_type_t kind, size_t size, size_t align,
                           void **ppMem);
// urUSMFree of pool memory: true when `ptr` is a live pool block (then `result` is set).
bool pool_free_now(Context &ctx, void *ptr, ur_result_t &result);

// urUSMGetMemAllocInfo of pool memory: true when `ptr` lies in a live pool block.
struct PoolBlockInfo {
  void *base = nullptr;
  size_t size = 0;
  ur_usm_type_t kind = UR_USM_TYPE_UNKNOWN;
  ur_usm_pool_handle_t pool = nullptr;
};
bool pool_block_info(Context &ctx, const void *ptr, PoolBlockInfo &out);

} // namespace nc
