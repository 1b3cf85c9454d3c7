// SPDX-License-Identifier: Apache-2.0
// urDevice*: the host CPU as one root device, with real values for every query
// that means something on a CPU.
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "entry_points.hpp"
#include "cpu_info.hpp"
#include "memory.hpp"
#include "ordo/device_info.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "platform.hpp"

namespace ordo::native_cpu {

uint64_t local_memory_size() {
  // Local memory is ordinary memory given to each work-group; we bound it by the
  // per-core L2 so that a group's scratch stays in cache.
  uint64_t l2 = cpu_info().l2_size;
  if (l2 == 0) l2 = 256 * 1024;
  return std::min<uint64_t>(std::max<uint64_t>(l2, 64 * 1024), 16u * 1024 * 1024);
}

uint64_t max_alloc_size() { return cpu_info().memory_size; }

// A cache line, and at least the 128 bytes of OpenCL's largest built-in type (long16),
// the minimum UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN of a full-profile device.
size_t mem_base_align_bytes() {
  size_t align = 128;
  while (align < cpu_info().cacheline) align *= 2;
  return align;
}

namespace {

constexpr ur_queue_flags_t kQueueFlags = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE;
constexpr ur_device_usm_access_capability_flags_t kUsmAccess =
    UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS |
    UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS |
    UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
constexpr ur_memory_order_capability_flags_t kMemoryOrders =
    UR_MEMORY_ORDER_CAPABILITY_FLAG_RELAXED | UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQUIRE |
    UR_MEMORY_ORDER_CAPABILITY_FLAG_RELEASE | UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQ_REL |
    UR_MEMORY_ORDER_CAPABILITY_FLAG_SEQ_CST;
constexpr ur_memory_scope_capability_flags_t kMemoryScopes =
    UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_ITEM | UR_MEMORY_SCOPE_CAPABILITY_FLAG_SUB_GROUP |
    UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_GROUP | UR_MEMORY_SCOPE_CAPABILITY_FLAG_DEVICE |
    UR_MEMORY_SCOPE_CAPABILITY_FLAG_SYSTEM;

ur_device_fp_capability_flags_t fp_config() {
  ur_device_fp_capability_flags_t f =
      UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST |
      UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF |
      UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN | UR_DEVICE_FP_CAPABILITY_FLAG_DENORM;
  if (cpu_info().has_fma) f |= UR_DEVICE_FP_CAPABILITY_FLAG_FMA;
  return f;
}

// Elements of `bytes` size in the widest SIMD register.
uint32_t vector_width(uint32_t bytes) { return cpu_info().vector_bits / 8 / bytes; }

size_t timer_resolution_ns() {
  timespec ts{};
  if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 1;
  size_t ns = static_cast<size_t>(ts.tv_sec) * 1000000000u + static_cast<size_t>(ts.tv_nsec);
  return ns ? ns : 1;
}

ur_result_t UR_APICALL urDeviceGet(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                                   ur_device_handle_t *phDevices, uint32_t *pNumDevices) {
  if (!is_platform(hPlatform)) return bad_handle(hPlatform, UR_RESULT_ERROR_INVALID_PLATFORM);
  if (DeviceType < UR_DEVICE_TYPE_DEFAULT || DeviceType > UR_DEVICE_TYPE_CUSTOM)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (NumEntries == 0 && phDevices) return UR_RESULT_ERROR_INVALID_SIZE;
  if (NumEntries > 0 && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  bool match =
      DeviceType == UR_DEVICE_TYPE_DEFAULT || DeviceType == UR_DEVICE_TYPE_ALL || DeviceType == UR_DEVICE_TYPE_CPU;
  if (phDevices && match) phDevices[0] = device_handle();
  if (pNumDevices) *pNumDevices = match ? 1 : 0;
  return UR_RESULT_SUCCESS;
}

// A root device: retain and release leave its count at 1.
ur_result_t UR_APICALL urDeviceRetain(ur_device_handle_t hDevice) {
  return is_device(hDevice) ? UR_RESULT_SUCCESS : device_error(hDevice);
}
ur_result_t UR_APICALL urDeviceRelease(ur_device_handle_t hDevice) {
  return is_device(hDevice) ? UR_RESULT_SUCCESS : device_error(hDevice);
}

// Source of empty arrays (never a null pointer, even for zero bytes).
const char kNothing = 0;

ur_result_t device_info(ur_device_info_t propName, ordo::InfoWriter &out) {
  const CpuInfo &cpu = cpu_info();
  switch (propName) {
  // ---- identity ----
  case UR_DEVICE_INFO_TYPE: return out.value(UR_DEVICE_TYPE_CPU);
  case UR_DEVICE_INFO_VENDOR_ID: return out.value(cpu.pci_vendor_id);
  case UR_DEVICE_INFO_DEVICE_ID: return out.value(cpu.device_id);
  case UR_DEVICE_INFO_NAME: return out.string(cpu.model_name);
  case UR_DEVICE_INFO_VENDOR: return out.string(cpu.vendor_name);
  case UR_DEVICE_INFO_DRIVER_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_DEVICE_INFO_VERSION: return out.string("0.12");
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_EXTENSIONS:
    return out.string("cl_khr_fp64 cl_khr_int64_base_atomics cl_khr_int64_extended_atomics");
  case UR_DEVICE_INFO_BUILT_IN_KERNELS: return out.string("");
  case UR_DEVICE_INFO_IL_VERSION: return out.string(""); // programs are machine code, no IL
  case UR_DEVICE_INFO_PLATFORM: return out.value(platform_handle());
  case UR_DEVICE_INFO_REFERENCE_COUNT: return out.value(uint32_t{1});
  case UR_DEVICE_INFO_AVAILABLE: return out.boolean(true);
  case UR_DEVICE_INFO_LINKER_AVAILABLE: return out.boolean(true);
  case UR_DEVICE_INFO_ENDIAN_LITTLE: return out.boolean(true);
  case UR_DEVICE_INFO_ADDRESS_BITS: return out.value(uint32_t{64});
  case UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY: return out.value(cpu.max_clock_mhz);

  // ---- compute ----
  case UR_DEVICE_INFO_MAX_COMPUTE_UNITS:
  case UR_DEVICE_INFO_NUM_COMPUTE_UNITS: return out.value(cpu.hardware_threads);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS: return out.value(uint32_t{3});
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    const size_t sizes[3] = {kMaxWorkGroupSize, kMaxWorkGroupSize, kMaxWorkGroupSize};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return out.value(kMaxWorkGroupSize);
  case UR_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    const size_t groups[3] = {kMaxGroupsPerDimension, kMaxGroupsPerDimension, kMaxGroupsPerDimension};
    return out.array(groups, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUPS: return out.value(SIZE_MAX);
  case UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS: return out.value(static_cast<uint32_t>(kMaxWorkGroupSize));
  case UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: return out.value(uint32_t{1}); // one item per sub-group
  case UR_DEVICE_INFO_MAX_PARAMETER_SIZE: return out.value(kMaxParameterSize);
  case UR_DEVICE_INFO_MAX_CONSTANT_ARGS: return out.value(static_cast<uint32_t>(kMaxParameterSize / sizeof(void *)));
  case UR_DEVICE_INFO_EXECUTION_CAPABILITIES:
    return out.value(ur_device_exec_capability_flags_t{UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL});
  case UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES:
    return out.value(
        ur_kernel_launch_properties_flags_t{UR_KERNEL_LAUNCH_PROPERTIES_FLAG_WORK_GROUP_MEMORY |
                                            UR_KERNEL_LAUNCH_PROPERTIES_FLAG_OPPORTUNISTIC_QUEUE_SERIALIZE});
  case UR_DEVICE_INFO_PRINTF_BUFFER_SIZE:
    return out.value(SIZE_MAX); // kernels call the C library's printf

  // ---- floating point and vectors ----
  case UR_DEVICE_INFO_SINGLE_FP_CONFIG:
  case UR_DEVICE_INFO_DOUBLE_FP_CONFIG: return out.value(fp_config());
  case UR_DEVICE_INFO_HALF_FP_CONFIG: return out.value(ur_device_fp_capability_flags_t{0});
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR: return out.value(vector_width(1));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT: return out.value(vector_width(2));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT: return out.value(vector_width(4));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE: return out.value(vector_width(8));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF:
    return out.value(uint32_t{0}); // no half type

  // ---- memory ----
  case UR_DEVICE_INFO_GLOBAL_MEM_SIZE: return out.value(cpu.memory_size);
  case UR_DEVICE_INFO_GLOBAL_MEM_FREE: return out.value(available_memory());
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE: return out.value(max_alloc_size());
  case UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN: return out.value(static_cast<uint32_t>(mem_base_align_bytes() * 8)); // bits
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE: return out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value(cpu.cacheline);
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE:
    return out.value(cpu.l3_size ? cpu.l3_size : cpu.l2_size ? cpu.l2_size : cpu.l1d_size);
  case UR_DEVICE_INFO_LOCAL_MEM_TYPE: return out.value(UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL);
  case UR_DEVICE_INFO_LOCAL_MEM_SIZE: return out.value(local_memory_size());
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY: return out.boolean(true);
  case UR_DEVICE_INFO_USM_HOST_SUPPORT:
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: return out.value(kUsmAccess);
  case UR_DEVICE_INFO_USM_POOL_SUPPORT: return out.boolean(true);
  case UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP: return out.boolean(true); // pool_hooks.cpp, async_alloc.cpp
  case UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT: return out.boolean(true);            // virtual_mem.cpp, physical_mem.cpp
  case UR_DEVICE_INFO_ATOMIC_64: return out.boolean(true);
  case UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES: return out.value(kMemoryOrders);
  case UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES: return out.value(kMemoryScopes);

  // ---- queues and timers ----
  case UR_DEVICE_INFO_QUEUE_PROPERTIES:
  case UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES: return out.value(kQueueFlags);
  case UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES: return out.value(ur_queue_flags_t{0});
  case UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: return out.value(uint32_t{1});
  case UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: return out.value(timer_resolution_ns());

  // ---- images and samplers: none (IMAGE_SUPPORT: false by the shared default) ----
  case UR_DEVICE_INFO_MAX_READ_IMAGE_ARGS:
  case UR_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS:
  case UR_DEVICE_INFO_MAX_READ_WRITE_IMAGE_ARGS:
  case UR_DEVICE_INFO_MAX_SAMPLERS: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_IMAGE2D_MAX_WIDTH:
  case UR_DEVICE_INFO_IMAGE2D_MAX_HEIGHT:
  case UR_DEVICE_INFO_IMAGE3D_MAX_WIDTH:
  case UR_DEVICE_INFO_IMAGE3D_MAX_HEIGHT:
  case UR_DEVICE_INFO_IMAGE3D_MAX_DEPTH:
  case UR_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE:
  case UR_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE: return out.value(size_t{0});

  // ---- partitioning: a root device that cannot be split ----
  case UR_DEVICE_INFO_PARENT_DEVICE: return out.value(ur_device_handle_t{nullptr});
  case UR_DEVICE_INFO_SUPPORTED_PARTITIONS: return out.bytes(&kNothing, 0);
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN: return out.value(ur_device_affinity_domain_flags_t{0});
  case UR_DEVICE_INFO_PARTITION_TYPE: return out.bytes(&kNothing, 0);
  case UR_DEVICE_INFO_COMPONENT_DEVICES: return out.bytes(&kNothing, 0);
  case UR_DEVICE_INFO_COMPOSITE_DEVICE: return out.value(ur_device_handle_t{nullptr});

  // ---- experimental features: the ones this adapter has ----
  case UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP: return out.boolean(true); // the layer's (pool_hooks.cpp)
  case UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP:
    return out.value(ur_exp_device_2d_block_array_capability_flags_t{0});
  case UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP:
    return out.boolean(true);                                                // source/command_buffer/graph_capture.cpp
  case UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP: return out.boolean(true); // source/command_buffer/bound_events.cpp
  case UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP: return out.boolean(ordo::command_buffer::kEventSupport);
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP: return out.boolean(true); // source/derived/timestamp.cpp
  case UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP: return out.boolean(true);             // source/derived/peer_access.cpp
  case UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP: return out.boolean(true); // ipc_physical_mem.cpp
  case UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP:
    return out.value(ordo::command_buffer::kUpdateCapabilities);

  // Everything else: queries meaningless for a CPU (memory clock, UUID, PCI address, the
  // GPU_* and XE_* topology, power and fan, LUID and node mask, image pitch and linear
  // image limits, mipmap anisotropy) answer UNSUPPORTED_ENUMERATION, and a value that is
  // no ur_device_info_t of the spec INVALID_ENUMERATION (ordo/device_info.hpp).
  default: return ordo::device_info_default(propName, out);
  }
}

ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t hDevice, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  if (!is_device(hDevice)) return device_error(hDevice);
  // The component-device list of a device that is not composite is empty: a caller
  // that sizes its array by the (empty) answer passes no buffer and no size pointer,
  // and there is nothing to return (UR's conformance suite does this; docs/native-cpu.md).
  if (propName == UR_DEVICE_INFO_COMPONENT_DEVICES && propSize == 0 && !pPropValue && !pPropSizeRet)
    return UR_RESULT_SUCCESS;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  return guarded([&] {
    ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
    return device_info(propName, out);
  });
}

ur_result_t UR_APICALL urDeviceSelectBinary(ur_device_handle_t hDevice, const ur_device_binary_t *pBinaries,
                                            uint32_t NumBinaries, uint32_t *pSelectedBinary) {
  if (!is_device(hDevice)) return device_error(hDevice);
  if (!pBinaries || !pSelectedBinary) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (NumBinaries == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < NumBinaries; ++i) {
    const char *target = pBinaries[i].pDeviceTargetSpec;
    if (target && std::strcmp(target, UR_DEVICE_BINARY_TARGET_NATIVE_CPU) == 0) {
      *pSelectedBinary = i;
      return UR_RESULT_SUCCESS;
    }
  }
  return UR_RESULT_ERROR_INVALID_BINARY;
}

// The device is the host: both timestamps come from the same monotonic clock.
ur_result_t UR_APICALL urDeviceGetGlobalTimestamps(ur_device_handle_t hDevice, uint64_t *pDeviceTimestamp,
                                                   uint64_t *pHostTimestamp) {
  if (!is_device(hDevice)) return device_error(hDevice);
  uint64_t t = now_ns();
  if (pDeviceTimestamp) *pDeviceTimestamp = t;
  if (pHostTimestamp) *pHostTimestamp = t;
  return UR_RESULT_SUCCESS;
}

} // namespace

Device::Device() : ordo::object(kKind) {}

Device &the_device() {
  static Device *d = new Device;
  return *d;
}

void install_device_entry_points(ur_dditable_t &t) {
  t.Device.pfnGet = urDeviceGet;
  t.Device.pfnGetInfo = urDeviceGetInfo;
  t.Device.pfnRetain = urDeviceRetain;
  t.Device.pfnRelease = urDeviceRelease;
  t.Device.pfnSelectBinary = urDeviceSelectBinary;
  t.Device.pfnGetGlobalTimestamps = urDeviceGetGlobalTimestamps;
}

} // namespace ordo::native_cpu
