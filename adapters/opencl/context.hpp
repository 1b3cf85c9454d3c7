// SPDX-License-Identifier: Apache-2.0
// A UR context: one cl_context over devices of one platform, plus what UR keeps per
// context: its live queues, and (in the stream-ordered layer) its USM allocations,
// pools and ordering knowledge.
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.hpp"
#include "pool_hooks.hpp"

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
