// SPDX-License-Identifier: Apache-2.0
// urDeviceGetInfo answers that are the same on every GPU adapter on ur_common (Level
// Zero, the stream backend): the capability sets they share and the queries whose
// answer no device of theirs changes (no images, no device-side queues, vector widths
// of one). The adapter's switch asks fixed_device_info (native CPU) or gpu_device_info
// (Level Zero, the stream backend) first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ordo/info.hpp"
#include "ur_api.h"

namespace ordo::ur_common {

constexpr uint32_t kFullFpConfig =
    UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST |
    UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF |
    UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN | UR_DEVICE_FP_CAPABILITY_FLAG_DENORM | UR_DEVICE_FP_CAPABILITY_FLAG_FMA;
constexpr uint32_t kAllMemoryOrders = UR_MEMORY_ORDER_CAPABILITY_FLAG_RELAXED |
                                      UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQUIRE |
                                      UR_MEMORY_ORDER_CAPABILITY_FLAG_RELEASE |
                                      UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQ_REL | UR_MEMORY_ORDER_CAPABILITY_FLAG_SEQ_CST;
constexpr uint32_t kAllMemoryScopes = UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_ITEM |
                                      UR_MEMORY_SCOPE_CAPABILITY_FLAG_SUB_GROUP |
                                      UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_GROUP |
                                      UR_MEMORY_SCOPE_CAPABILITY_FLAG_DEVICE | UR_MEMORY_SCOPE_CAPABILITY_FLAG_SYSTEM;

// True when `propName` is one of those fixed queries; `result` is then its answer.
inline bool fixed_device_info(ur_device_info_t propName, InfoWriter &out, ur_result_t &result) {
  switch (propName) {
  case UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS: result = out.value(uint32_t{3}); return true;
  case UR_DEVICE_INFO_QUEUE_PROPERTIES:
  case UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES: // in-order or out-of-order lanes, profiling
    result = out.value(uint32_t{UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE});
    return true;
  case UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES: result = out.value(uint32_t{0}); return true;
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF: result = out.value(uint32_t{1}); return true;
  case UR_DEVICE_INFO_ADDRESS_BITS: result = out.value(uint32_t{64}); return true;
  case UR_DEVICE_INFO_MAX_READ_IMAGE_ARGS:
  case UR_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS:
  case UR_DEVICE_INFO_MAX_READ_WRITE_IMAGE_ARGS:
  case UR_DEVICE_INFO_MAX_SAMPLERS: result = out.value(uint32_t{0}); return true;
  case UR_DEVICE_INFO_IMAGE2D_MAX_WIDTH:
  case UR_DEVICE_INFO_IMAGE2D_MAX_HEIGHT:
  case UR_DEVICE_INFO_IMAGE3D_MAX_WIDTH:
  case UR_DEVICE_INFO_IMAGE3D_MAX_HEIGHT:
  case UR_DEVICE_INFO_IMAGE3D_MAX_DEPTH:
  case UR_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE:
  case UR_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE: result = out.value(size_t{0}); return true;
  default: return false;
  }
}

// Answers of the GPU adapters on ur_common about what none of their devices is (a
// partition, a composite, an image device, a device with built-in kernels) and what
// all of them are, after fixed_device_info; `d` is the device (its platform, count).
template <class Device>
bool gpu_device_info(const Device *d, ur_device_info_t propName, InfoWriter &out, ur_result_t &result) {
  if (fixed_device_info(propName, out, result)) return true;
  switch (propName) {
  case UR_DEVICE_INFO_ENDIAN_LITTLE:
  case UR_DEVICE_INFO_AVAILABLE:
  case UR_DEVICE_INFO_COMPILER_AVAILABLE: // the driver builds or finishes the modules
  case UR_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC:
  case UR_DEVICE_INFO_USM_POOL_SUPPORT:
  // Stream-ordered allocation runs on the stream-ordered layer over plain driver
  // allocations, not on a driver's memory pools: every device has it.
  case UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP: result = out.boolean(true); return true;
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE: result = out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE); return true;
  case UR_DEVICE_INFO_LOCAL_MEM_TYPE: result = out.value(UR_DEVICE_LOCAL_MEM_TYPE_LOCAL); return true;
  case UR_DEVICE_INFO_MAX_CONSTANT_ARGS: result = out.value(uint32_t{8}); return true;
  case UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: result = out.value(uint32_t{1}); return true;
  case UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES: result = out.value(kAllMemoryScopes); return true;
  case UR_DEVICE_INFO_EXECUTION_CAPABILITIES:
    result = out.value(uint32_t(UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL));
    return true;
  case UR_DEVICE_INFO_BUILT_IN_KERNELS: result = out.string(""); return true;
  case UR_DEVICE_INFO_PLATFORM: result = out.value(reinterpret_cast<ur_platform_handle_t>(d->platform)); return true;
  case UR_DEVICE_INFO_REFERENCE_COUNT: result = out.value(d->count()); return true;
  case UR_DEVICE_INFO_PRINTF_BUFFER_SIZE: result = out.value(size_t{1024 * 1024}); return true;
  case UR_DEVICE_INFO_PARENT_DEVICE:
  case UR_DEVICE_INFO_COMPOSITE_DEVICE: result = out.value(ur_device_handle_t{nullptr}); return true;
  case UR_DEVICE_INFO_SUPPORTED_PARTITIONS:
  case UR_DEVICE_INFO_PARTITION_TYPE:
  case UR_DEVICE_INFO_COMPONENT_DEVICES: result = out.bytes(nullptr, 0); return true;
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES:
  case UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN: result = out.value(uint32_t{0}); return true;
  default: return false;
  }
}

} // namespace ordo::ur_common
