// SPDX-License-Identifier: Apache-2.0
// A cuMemcpy2DAsync descriptor for two plain pointers, where either may be pageable
// host memory: memory the driver knows (its pointer query answers) is addressed
// through UVA, anything else as host memory. Used by the adapter and by the test
// mapping of HIP onto CUDA (test/hip_on_cuda), whose hipMemcpy2DAsync means the same.
#pragma once
#include <cuda.h>

#include <cstddef>

namespace ordo::cuda {

// `known(ptr)`: true when the driver's pointer query answers for ptr.
template <class Known>
CUDA_MEMCPY2D copy_2d(Known known, void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t width,
                      size_t height) {
  CUDA_MEMCPY2D c{};
  if (known(src)) {
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
  }
  if (known(dst)) {
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  } else {
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = dst;
  }
  c.srcPitch = src_pitch;
  c.dstPitch = dst_pitch;
  c.WidthInBytes = width;
  c.Height = height;
  return c;
}

} // namespace ordo::cuda
