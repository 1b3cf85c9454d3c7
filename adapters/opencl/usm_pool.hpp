// USM pools on the ordered pool core (DESIGN.md §3-§5, docs/ordered-pool.md).
//
// A pool handle holds one core per memory class: a device's class (memory of that
// device) or the host class. A device pool (urUSMPoolCreateExp, the default pools)
// has the one core of its device, a host pool the host core, a context pool
// (urUSMPoolCreate) makes cores as allocations ask for them. A device core takes
// its chunks as shared USM where the device has it (fine-grain SVM), so the same
// blocks serve device and shared allocations; otherwise as device USM (coarse-grain
// SVM), serving device allocations only.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common.hpp"
#include "ordo_pool/ordered_pool.hpp"
#include "usm_registry.hpp"

namespace ordo::ocl {

// What the alloc command being enqueued must also wait for (rule 3 of the pool).
struct CommandDeps {
  ClWaitList *waits = nullptr;           // the command's OpenCL wait list, extended
  std::vector<ur_event_handle_t> held;   // events kept alive until the command is enqueued
};

class PoolCore final : public ordo::pool::backend {
public:
  // A growing core, or (user_memory != null) a fixed one carved from user memory.
  PoolCore(ur_context_handle_t c, ur_device_handle_t device, ur_usm_type_t chunk_kind,
           const ordo::pool::pool_config &cfg, void *user_memory = nullptr, size_t user_size = 0);
  ~PoolCore() override;

  bool serves(ur_usm_type_t kind) const;
  ordo::pool::ordered_pool &pool() { return *pool_; }

  void *get_chunk(std::size_t size) override;
  void put_chunk(void *base, std::size_t size) override;
  bool event_complete(ordo::pool::event_handle ev) override;
  bool add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) override;
  void retain_event(ordo::pool::event_handle ev) override;
  void release_event(ordo::pool::event_handle ev) override;

private:
  ur_context_handle_t context_;
  ur_device_handle_t device_;
  ur_usm_type_t chunk_kind_;
  std::unique_ptr<ordo::pool::ordered_pool> pool_;
};

// The UR result for a pool status.
ur_result_t to_ur(ordo::pool::status s, ur_usm_type_t kind);

} // namespace ordo::ocl

struct ur_usm_pool_handle_t_ : ordo::ocl::ObjectHead {
  enum class Scope { device, host, context };

  ur_usm_pool_handle_t_() : ObjectHead(ordo::ocl::Tag::pool) {}
  ~ur_usm_pool_handle_t_();

  ur_context_handle_t context = nullptr;
  ur_device_handle_t device = nullptr; // Scope::device only
  Scope scope = Scope::context;
  bool is_default = false;             // a context's default or host pool: never destroyed by the user
  ur_usm_pool_flags_t flags = 0;
  ordo::pool::pool_config config;
  // A fixed pool over user memory (ur_usm_pool_buffer_desc_t).
  void *user_memory = nullptr;
  size_t user_size = 0;
  ur_usm_type_t user_type = UR_USM_TYPE_UNKNOWN;
  ur_device_handle_t user_device = nullptr;

  // Cores by memory class: a device, or null for host memory.
  std::mutex cores_mutex;
  std::map<ur_device_handle_t, std::unique_ptr<ordo::ocl::PoolCore>> cores;
  ordo::ocl::PoolCore *only_core = nullptr; // device and host pools: their one core, fixed

  // The core for memory of `kind` on `device` (null device for host memory); makes
  // it on first use. Null with `err` set when this pool cannot serve that memory.
  ordo::ocl::PoolCore *core_for(ur_usm_type_t kind, ur_device_handle_t device, ur_result_t &err);
  template <class F> void for_each_core(F f) {
    std::lock_guard<std::mutex> lock(cores_mutex);
    for (auto &kv : cores) f(*kv.second);
  }
};
ORDO_HANDLE_CHECK(ur_usm_pool_handle_t_);

namespace ordo::ocl {

// The pools of one context: default and current pool per device, the host pool,
// and every pool made in it (for synchronisation points).
class ContextPools {
public:
  explicit ContextPools(ur_context_handle_t c);
  ~ContextPools();
  ContextPools(const ContextPools &) = delete;
  ContextPools &operator=(const ContextPools &) = delete;

  ur_usm_pool_handle_t default_pool(ur_device_handle_t d, ur_result_t &err);
  ur_usm_pool_handle_t current_pool(ur_device_handle_t d, ur_result_t &err);
  void set_current(ur_device_handle_t d, ur_usm_pool_handle_t p);
  void unset_current(ur_usm_pool_handle_t p); // back to the default pool
  ur_usm_pool_handle_t host_pool(ur_result_t &err);

  void add(ur_usm_pool_handle_t p);
  // Forgets a pool about to be destroyed (and stops it being any device's current pool).
  void remove(ur_usm_pool_handle_t p);

  // At urQueueFinish / urEventWait: pools give back memory above their threshold.
  void sync_point();
  // Before a queue's address may be reused for another queue.
  void forget_queue(ur_queue_handle_t q);

private:
  ur_context_handle_t context_;
  std::mutex mutex_;
  std::map<ur_device_handle_t, ur_usm_pool_handle_t> defaults_, current_;
  ur_usm_pool_handle_t host_ = nullptr;
  std::vector<ur_usm_pool_handle_t> all_;
};

// A new pool of the given scope with the settings of `desc` (which may be null).
ur_result_t make_pool(ur_context_handle_t c, ur_device_handle_t device, ur_usm_pool_handle_t_::Scope scope,
                      const ur_usm_pool_desc_t *desc, bool is_default, ur_usm_pool_handle_t *out);
// A live allocation keeps its pool; the last one of a destroyed pool destroys it.
void pool_hold(ur_usm_pool_handle_t p);
void pool_unhold(ur_usm_pool_handle_t p);

// urUSM{Host,Device,Shared}Alloc with a pool: a block with no pending use.
ur_result_t pool_alloc_now(ur_context_handle_t c, ur_usm_pool_handle_t pool, ur_usm_type_t kind,
                           ur_device_handle_t device, size_t size, size_t alignment, void **out);
// urUSMFree of a pool block: back to its pool at once.
ur_result_t pool_free_now(ur_context_handle_t c, const UsmAllocation &a);

} // namespace ordo::ocl
