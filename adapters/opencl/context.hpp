// SPDX-License-Identifier: Apache-2.0
// A UR context: one cl_context over devices of one platform, plus what UR keeps per
// context: its live queues, and (in the stream-ordered layer) its USM allocations,
// pools and ordering knowledge, reached through its PoolHooks (pool_hooks.cpp).
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.hpp"
#include "event.hpp"
#include "ur_common/pool_hooks.hpp"

// What ur_common's pool_hooks_base calls on this adapter's handles, found by
// argument-dependent lookup (the handle types are global).
void context_hold(ur_context_handle_t_ *c);
void context_drop(ur_context_handle_t_ *c);
// The event may hold the last reference to its queue or context, whose destruction
// locks the calling pool again: destroyed later, on a safe path (event.hpp).
inline void event_drop(ur_event_handle_t_ *e) { ordo::opencl::event_unhold_deferred(e); }
inline ur_context_handle_t event_context(const ur_event_handle_t_ *e) { return e->context; }

namespace ordo::opencl {
// The alloc command being enqueued, as the pool extends it (reuse rule 3): the events
// it must also wait for, held until the command exists.
struct AllocDeps {
  ClWaitList *waits = nullptr;
  std::vector<ur_event_handle_t> held;
  bool wait_for(ur_event_handle_t_ *ev);
};

// Memory classes: host memory is one class; device and shared memory of a device
// share one class (shared chunks) where the device has shared USM (fine-grain SVM),
// else the class is device memory only.
class PoolHooks final : public ordo::ur_common::pool_hooks_base<ur_context_handle_t_, ur_device_handle_t_,
                                                                ur_event_handle_t_, AllocDeps> {
public:
  using pool_hooks_base::pool_hooks_base;
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  ur_usm_type_t primary_kind(const ordo::stream_ordered::mem_class &c) override;
  void *get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) override;
  void put_chunk(const ordo::stream_ordered::mem_class &c, void *base, size_t size) override;
  bool event_complete(ur_event_handle_t ev) override;
  ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) override;
};
} // namespace ordo::opencl

struct ur_context_handle_t_ : ordo::object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::context;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_CONTEXT;
  ur_context_handle_t_() : object(kKind) {}

  cl_context cl = nullptr;
  ur_platform_handle_t platform = nullptr;
  std::vector<ur_device_handle_t> devices;
  bool intel_usm = false; // USM through cl_intel_unified_shared_memory (else SVM)

  // Queues alive in this context: a synchronous urUSMFree waits for their work.
  std::mutex queues_mutex;
  std::vector<ur_queue_handle_t> queues;

  // Its pools, USM allocations (plain and pooled) and ordering knowledge: the
  // stream-ordered layer, through this context's hooks.
  ordo::opencl::PoolHooks pool_hooks{this};
  std::unique_ptr<ordo::stream_ordered::context_pools> pools;

  // Plain USM allocations whose address was rounded up for alignment: what the
  // backend gave, by the address handed out.
  std::mutex padded_mutex;
  std::unordered_map<const void *, void *> padded;

  ur_context_extended_deleter_t deleter = nullptr;
  void *deleter_data = nullptr;

  int index_of(const ur_device_handle_t_ *d) const {
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i] == d) return int(i);
    return -1;
  }
  bool has_device(ur_device_handle_t d) const { return index_of(d) >= 0; }
};
ORDO_HANDLE_CHECK(ur_context_handle_t_);

namespace ordo::opencl {
// Drops one holder (ordo::object); the last one tears the context down
// (ur_common/context.hpp) and retires it.
void context_unhold(ur_context_handle_t c);
// Waits until every command enqueued so far on the context's queues has finished.
ur_result_t context_wait_all_queues(ur_context_handle_t c);
} // namespace ordo::opencl
