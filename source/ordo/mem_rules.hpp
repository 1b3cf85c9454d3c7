// SPDX-License-Identifier: Apache-2.0
// The rules for memory-object flags and regions that UR's spec leaves to OpenCL's
// (clCreateBuffer, clCreateSubBuffer, clEnqueueMapBuffer), once for every adapter, so
// that the same input gets the same answer everywhere (docs/conformance.md).
#pragma once
#include <cstddef>

#include "ur_api.h"

namespace ordo::mem {

constexpr ur_mem_flags_t kAccessFlags = UR_MEM_FLAG_READ_WRITE | UR_MEM_FLAG_WRITE_ONLY | UR_MEM_FLAG_READ_ONLY;
constexpr ur_mem_flags_t kHostPointerFlags = UR_MEM_FLAG_USE_HOST_POINTER | UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER;
constexpr ur_mem_flags_t kAllocationFlags =
    UR_MEM_FLAG_USE_HOST_POINTER | UR_MEM_FLAG_ALLOC_HOST_POINTER | UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER;

// At most one of READ_WRITE, WRITE_ONLY, READ_ONLY.
inline bool one_access_flag(ur_mem_flags_t flags) {
  const ur_mem_flags_t a = flags & kAccessFlags;
  return (a & (a - 1)) == 0;
}

// urMemBufferCreate beyond the spec's parameter rules: INVALID_VALUE for two access
// flags, or a buffer that would be the caller's memory and allocated memory at once.
inline ur_result_t check_buffer_flags(ur_mem_flags_t flags) {
  if (!one_access_flag(flags)) return UR_RESULT_ERROR_INVALID_VALUE;
  if ((flags & UR_MEM_FLAG_USE_HOST_POINTER) && (flags & (kAllocationFlags & ~UR_MEM_FLAG_USE_HOST_POINTER)))
    return UR_RESULT_ERROR_INVALID_VALUE;
  return UR_RESULT_SUCCESS;
}

// urMemBufferPartition: one access flag at most and no host-pointer flags
// (INVALID_VALUE); a non-empty region inside the parent (INVALID_BUFFER_SIZE).
inline ur_result_t check_sub_buffer(ur_mem_flags_t flags, const ur_buffer_region_t &region, size_t parent_size) {
  if (!one_access_flag(flags) || (flags & kAllocationFlags)) return UR_RESULT_ERROR_INVALID_VALUE;
  if (region.size == 0 || region.origin > parent_size || region.size > parent_size - region.origin)
    return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
  return UR_RESULT_SUCCESS;
}

// A non-empty range inside memory of `total` bytes (enqueue read/write/copy/map).
inline bool range_inside(size_t offset, size_t size, size_t total) {
  return size != 0 && offset <= total && size <= total - offset;
}

// urEnqueueMemBufferMap: WRITE_INVALIDATE_REGION excludes READ and WRITE.
inline bool map_flags_ok(ur_map_flags_t flags) {
  return !((flags & UR_MAP_FLAG_WRITE_INVALIDATE_REGION) && (flags & (UR_MAP_FLAG_READ | UR_MAP_FLAG_WRITE)));
}

} // namespace ordo::mem
