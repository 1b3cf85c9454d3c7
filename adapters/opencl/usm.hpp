// SPDX-License-Identifier: Apache-2.0
// USM memory underneath: cl_intel_unified_shared_memory where the context has it,
// otherwise SVM (fine-grain buffer SVM for host and shared, coarse-grain for device).
#pragma once
#include "common.hpp"

namespace ordo::opencl {

// Backend memory of one USM kind, not registered anywhere (pools take chunks this way).
// `device` is ignored for host memory. On failure returns null and sets `err`.
void *usm_get_memory(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                     size_t alignment, ur_result_t &err);
// Gives memory from usm_get_memory back at once (the caller knows nothing uses it).
void usm_release_memory(ur_context_handle_t c, void *p);
// Gives a plain allocation of urUSM*Alloc back at once (padded ones by what OpenCL gave).
void usm_free_plain(ur_context_handle_t c, void *p);

// Whether the devices of `c` can have memory of `kind` (device: that device).
bool usm_kind_supported(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device);

// The USM flavours of two commands (kernel arguments: set_kernel_arg, kernel.cpp).
cl_int usm_enqueue_memcpy(ur_queue_handle_t q, bool blocking, void *dst, const void *src, size_t size, cl_uint n,
                          const cl_event *waits, cl_event *ev);
// Any pattern size: patterns OpenCL cannot fill directly are copied out in doubling steps.
cl_int usm_enqueue_fill(ur_queue_handle_t q, void *dst, const void *pattern, size_t pattern_size, size_t size,
                        cl_uint n, const cl_event *waits, cl_event *ev);

} // namespace ordo::opencl
