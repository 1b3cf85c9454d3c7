// SPDX-License-Identifier: Apache-2.0
// A UR context: one cl_context over devices of one platform, its live queues, and the
// stream-ordered layer's state (USM allocations, pools, ordering), through PoolHooks.
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.hpp"
#include "event.hpp"
#include "queue.hpp" // AsyncCommand, the pool's alloc command
#include "ur_common/handles.hpp"
#include "ur_common/pool_hooks.hpp"

// What ur_common's pool_hooks_base calls on this adapter's handles, found by
// argument-dependent lookup (the handle types are global).
void context_hold(ur_context_handle_t_ *c);
void context_drop(ur_context_handle_t_ *c);
// The event may hold the last reference to its queue or context, whose destruction
// locks the calling pool again: destroyed later, on a safe path (event.hpp).
inline void event_drop(ur_event_handle_t_ *e) { ordo::opencl::event_unhold_deferred(e); }
inline ur_context_handle_t event_context(const ur_event_handle_t_ *e) { return e->ctx; }

namespace ordo::opencl {

// Memory classes: host memory is one class; device and shared memory of a device
// share one class (shared chunks) where the device has shared USM (fine-grain SVM),
// else the class is device memory only.
class PoolHooks final : public ordo::ur_common::pool_hooks_base<ur_context_handle_t_, ur_device_handle_t_,
                                                                ur_event_handle_t_, AsyncCommand> {
public:
  using pool_hooks_base::pool_hooks_base;
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  ur_usm_type_t primary_kind(const ordo::stream_ordered::mem_class &c) override;
  ORDO_POOL_HOOKS_OVERRIDES;
};
} // namespace ordo::opencl

struct ur_context_handle_t_ : ordo::ur_common::context_object<ur_device_handle_t_> {
  cl_context cl = nullptr;
  ur_platform_handle_t platform = nullptr;
  bool intel_usm = false; // USM through cl_intel_unified_shared_memory (else SVM)

  // Queues alive in this context: a synchronous urUSMFree waits for their work.
  std::mutex queues_mutex;
  std::vector<ur_queue_handle_t> queues;

  ordo::opencl::PoolHooks pool_hooks{this};
  std::unique_ptr<ordo::stream_ordered::context_pools> pools;

  // Plain USM allocations whose address was rounded up for alignment: what the
  // backend gave, by the address handed out.
  std::mutex padded_mutex;
  std::unordered_map<const void *, void *> padded;

  bool has_device(ur_device_handle_t d) const { return index_of(d) >= 0; }
};
ORDO_HANDLE_CHECK(ur_context_handle_t_);

namespace ordo::opencl {
// Drops one holder; the last one tears the context down (ur_common/context.hpp).
void context_unhold(ur_context_handle_t c);
// Waits until every command enqueued so far on the context's queues has finished.
ur_result_t context_wait_all_queues(ur_context_handle_t c);
} // namespace ordo::opencl
