// SPDX-License-Identifier: Apache-2.0
// The stream-ordered layer's hooks (PoolHooks, context.hpp; docs/async-alloc.md): chunks
// of SVM / Intel USM memory, event status, zeroing.
#include <cstring>

#include "context.hpp"
#include "device.hpp"
#include "platform.hpp"
#include "usm.hpp"

namespace ordo::opencl {

ur_result_t PoolHooks::memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                                    ordo::stream_ordered::mem_class &out) {
  if (kind == UR_USM_TYPE_HOST && usm_kind_supported(ctx_, kind, nullptr))
    out = ordo::stream_ordered::mem_class{nullptr, UR_USM_TYPE_HOST};
  else if (kind != UR_USM_TYPE_HOST && device && device->usm_caps(usm_shared))
    out = ordo::stream_ordered::mem_class{device, UR_USM_TYPE_SHARED}; // one block serves device or shared
  else if (kind == UR_USM_TYPE_DEVICE && device && device->usm_caps(usm_device))
    out = ordo::stream_ordered::mem_class{device, UR_USM_TYPE_DEVICE};
  else
    return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  return UR_RESULT_SUCCESS;
}

ur_usm_type_t PoolHooks::primary_kind(const ordo::stream_ordered::mem_class &c) {
  return c.device ? UR_USM_TYPE_DEVICE : UR_USM_TYPE_HOST;
}

void *PoolHooks::get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) {
  ur_result_t err = UR_RESULT_SUCCESS;
  return usm_get_memory(ctx_, static_cast<ur_usm_type_t>(c.id), c.device, size, 0, err);
}

// Only chunks with no live or pending block come back, so nothing uses them.
void PoolHooks::put_chunk(const ordo::stream_ordered::mem_class &, void *base, size_t) {
  usm_release_memory(ctx_, base);
}

void PoolHooks::free_plain(void *base, ur_usm_type_t, ur_device_handle_t) { usm_free_plain(ctx_, base); }

bool PoolHooks::event_complete(ur_event_handle_t ev) { return ordo::opencl::event_complete(ev); }

// urUSM*Alloc from a zero-initialising pool: host-accessible memory directly, device
// memory through a short-lived queue of that device.
ur_result_t PoolHooks::zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) {
  if (kind != UR_USM_TYPE_DEVICE) {
    std::memset(p, 0, size);
    return UR_RESULT_SUCCESS;
  }
  cl_int e = CL_SUCCESS;
  cl_command_queue q = cl.clCreateCommandQueueWithProperties(ctx_->cl, device->cl, nullptr, &e);
  if (!q) return to_ur(e);
  unsigned char zero = 0;
  e = ctx_->intel_usm ? ctx_->platform->intel_usm.fill(q, p, &zero, 1, size, 0, nullptr, nullptr)
                      : cl.clEnqueueSVMMemFill(q, p, &zero, 1, size, 0, nullptr, nullptr);
  if (e == CL_SUCCESS) e = finish_queue(q, nullptr);
  release_queue(q);
  return to_ur(e);
}

} // namespace ordo::opencl
