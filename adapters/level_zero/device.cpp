// SPDX-License-Identifier: Apache-2.0
// Devices: discovery facts, info queries, timestamps.
#include <algorithm>
#include <cstring>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/device_info.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ur_common/device_info.hpp"

namespace ordo::level_zero {

namespace {

std::string version_string(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

uint32_t usm_flags(ze_memory_access_cap_flags_t z) {
  uint32_t f = 0;
  if (z & ZE_MEMORY_ACCESS_CAP_FLAG_RW) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS;
  if (z & ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS;
  if (z & ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS;
  if (z & ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC)
    f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
  return f;
}

ur_device_type_t device_type(ze_device_type_t t) {
  switch (t) {
  case ZE_DEVICE_TYPE_GPU: return UR_DEVICE_TYPE_GPU;
  case ZE_DEVICE_TYPE_CPU: return UR_DEVICE_TYPE_CPU;
  case ZE_DEVICE_TYPE_FPGA: return UR_DEVICE_TYPE_FPGA;
  case ZE_DEVICE_TYPE_MCA: return UR_DEVICE_TYPE_MCA;
  case ZE_DEVICE_TYPE_VPU: return UR_DEVICE_TYPE_VPU;
  default: return UR_DEVICE_TYPE_CUSTOM;
  }
}

} // namespace

ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t hDevice, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Device, d, hDevice);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  const DeviceFacts &f = d->facts;
  const ze_device_properties_t &p = f.props;
  const ze_device_compute_properties_t &c = f.compute;
  const bool fp64 = (f.module.flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0;
  const bool fp16 = (f.module.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
  const uint32_t fp_config = ordo::ur_common::kFullFpConfig;
  const uint32_t order_caps = ordo::ur_common::kAllMemoryOrders;
  const uint32_t scope_caps = ordo::ur_common::kAllMemoryScopes;
  ur_result_t fixed = UR_RESULT_SUCCESS;
  if (ordo::ur_common::fixed_device_info(propName, out, fixed)) return fixed;

  switch (propName) {
  case UR_DEVICE_INFO_TYPE: return out.value(device_type(p.type));
  case UR_DEVICE_INFO_VENDOR_ID: return out.value(p.vendorId);
  case UR_DEVICE_INFO_DEVICE_ID: return out.value(p.deviceId);
  case UR_DEVICE_INFO_MAX_COMPUTE_UNITS:
  case UR_DEVICE_INFO_NUM_COMPUTE_UNITS: return out.value(p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    size_t sizes[3] = {c.maxGroupSizeX, c.maxGroupSizeY, c.maxGroupSizeZ};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return out.value(size_t(c.maxTotalGroupSize));
  case UR_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    size_t sizes[3] = {c.maxGroupCountX, c.maxGroupCountY, c.maxGroupCountZ};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUPS: return out.value(size_t(c.maxGroupCountX));
  case UR_DEVICE_INFO_SINGLE_FP_CONFIG: return out.value(fp_config);
  case UR_DEVICE_INFO_DOUBLE_FP_CONFIG: return out.value(fp64 ? fp_config : 0u);
  case UR_DEVICE_INFO_HALF_FP_CONFIG: return out.value(fp16 ? fp_config : 0u);
  case UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY: return out.value(p.coreClockRate);
  case UR_DEVICE_INFO_MEMORY_CLOCK_RATE:
  case UR_DEVICE_INFO_MEMORY_BUS_WIDTH: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  case UR_DEVICE_INFO_MAX_MEMORY_BANDWIDTH: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE: return out.value(uint64_t(p.maxMemAllocSize));
  case UR_DEVICE_INFO_GLOBAL_MEM_SIZE: return out.value(uint64_t(f.total_mem));
  case UR_DEVICE_INFO_GLOBAL_MEM_FREE: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // needs Sysman
  case UR_DEVICE_INFO_MAX_PARAMETER_SIZE: return out.value(size_t(f.module.maxArgumentsSize));
  case UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN: return out.value(uint32_t{64 * 8}); // in bits
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE: return out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value(uint32_t{64});
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE: return out.value(uint64_t(f.cache_size));
  case UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE: return out.value(uint64_t(p.maxMemAllocSize));
  case UR_DEVICE_INFO_MAX_CONSTANT_ARGS: return out.value(uint32_t{8});
  case UR_DEVICE_INFO_LOCAL_MEM_TYPE: return out.value(UR_DEVICE_LOCAL_MEM_TYPE_LOCAL);
  case UR_DEVICE_INFO_LOCAL_MEM_SIZE: return out.value(uint64_t(c.maxSharedLocalMemory));
  case UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT: return out.boolean((p.flags & ZE_DEVICE_PROPERTY_FLAG_ECC) != 0);
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY: return out.boolean((p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0);
  case UR_DEVICE_INFO_IS_INTEGRATED_GPU:
    return out.boolean(p.type == ZE_DEVICE_TYPE_GPU && (p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED));
  case UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: return out.value(size_t(p.timerResolution ? p.timerResolution : 1));
  // Command buffers: the shared recorder replays them through this adapter's entry points.
  case UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP:
    return out.boolean(true);                                                // source/command_buffer/graph_capture.cpp
  case UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP: return out.boolean(true); // source/command_buffer/bound_events.cpp
  case UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP: return out.boolean(ordo::command_buffer::kEventSupport);
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP: return out.boolean(ordo::command_buffer::kSubgraphSupport);
  case UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP:
    return out.value(ordo::command_buffer::kUpdateCapabilities);
  case UR_DEVICE_INFO_ATOMIC_64: return out.boolean((f.module.flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS) != 0);
  case UR_DEVICE_INFO_ENDIAN_LITTLE:
  case UR_DEVICE_INFO_AVAILABLE:
  case UR_DEVICE_INFO_COMPILER_AVAILABLE: // the driver builds modules
  case UR_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC:
  case UR_DEVICE_INFO_USM_POOL_SUPPORT:
  case UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP: return out.boolean(true); // host threads (host_task.cpp)
  case UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS: return out.boolean(true);
  // Stream-ordered allocation runs on the stream-ordered layer over zeMemAlloc*:
  // every device has it.
  case UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_IMAGE_PITCH_ALIGN_EXP:
  case UR_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY_EXP:
  case UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH_EXP:
  case UR_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT_EXP:
  case UR_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH_EXP: return out.value(size_t{0});
  case UR_DEVICE_INFO_EXECUTION_CAPABILITIES: return out.value(uint32_t(UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL));
  case UR_DEVICE_INFO_BUILT_IN_KERNELS: return out.string("");
  case UR_DEVICE_INFO_PLATFORM: return out.value(reinterpret_cast<ur_platform_handle_t>(d->platform));
  case UR_DEVICE_INFO_REFERENCE_COUNT: return out.value(d->count());
  case UR_DEVICE_INFO_IL_VERSION: {
    // Empty where the driver takes no SPIR-V (native binaries only, like the CPU test driver).
    uint32_t v = f.module.spirvVersionSupported;
    return out.string(v ? "SPIR-V_" + version_string(ZE_MAJOR_VERSION(v), ZE_MINOR_VERSION(v)) : "");
  }
  case UR_DEVICE_INFO_NAME: return out.string(p.name);
  case UR_DEVICE_INFO_VENDOR: return out.string(p.vendorId == 0x8086 ? "Intel(R) Corporation" : "unknown vendor");
  case UR_DEVICE_INFO_DRIVER_VERSION: return out.string(std::to_string(d->platform->driver_version));
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION:
    return out.string(
        version_string(ZE_MAJOR_VERSION(d->platform->api_version), ZE_MINOR_VERSION(d->platform->api_version)));
  case UR_DEVICE_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_DEVICE_INFO_VERSION:
    return out.string(
        version_string(ZE_MAJOR_VERSION(d->platform->api_version), ZE_MINOR_VERSION(d->platform->api_version)));
  case UR_DEVICE_INFO_EXTENSIONS:
    return out.string(std::string("cl_khr_int64_base_atomics cl_khr_int64_extended_atomics") +
                      (fp64 ? " cl_khr_fp64" : "") + (fp16 ? " cl_khr_fp16" : ""));
  case UR_DEVICE_INFO_PRINTF_BUFFER_SIZE: return out.value(size_t{1024 * 1024});
  case UR_DEVICE_INFO_PARENT_DEVICE: return out.value(ur_device_handle_t{nullptr});
  case UR_DEVICE_INFO_COMPOSITE_DEVICE: return out.value(ur_device_handle_t{nullptr});
  case UR_DEVICE_INFO_SUPPORTED_PARTITIONS:
  case UR_DEVICE_INFO_PARTITION_TYPE:
  case UR_DEVICE_INFO_COMPONENT_DEVICES: return out.bytes(nullptr, 0);
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES:
  case UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS: {
    uint32_t smallest = c.numSubGroupSizes ? c.subGroupSizes[0] : 1;
    return out.value(uint32_t(c.maxTotalGroupSize / (smallest ? smallest : 1)));
  }
  case UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: {
    std::vector<uint32_t> sizes(c.subGroupSizes,
                                c.subGroupSizes + std::min<uint32_t>(c.numSubGroupSizes, ZE_SUBGROUPSIZE_COUNT));
    if (sizes.empty()) sizes.push_back(1);
    return out.array(sizes);
  }
  case UR_DEVICE_INFO_USM_HOST_SUPPORT: return out.value(usm_flags(f.access.hostAllocCapabilities));
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT: return out.value(usm_flags(f.access.deviceAllocCapabilities));
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
    return out.value(usm_flags(f.access.sharedSingleDeviceAllocCapabilities));
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
    return out.value(usm_flags(f.access.sharedCrossDeviceAllocCapabilities));
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: return out.value(usm_flags(f.access.sharedSystemAllocCapabilities));
  case UR_DEVICE_INFO_UUID: return out.array(p.uuid.id, 16);
  case UR_DEVICE_INFO_PCI_ADDRESS: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // needs zeDevicePciGetPropertiesExt
  case UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES: return out.value(order_caps);
  case UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES: return out.value(scope_caps);
  case UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: return out.value(uint32_t{1});
  case UR_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  case UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_GPU_EU_COUNT: return out.value(p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice);
  case UR_DEVICE_INFO_GPU_EU_SIMD_WIDTH: return out.value(p.physicalEUSimdWidth);
  case UR_DEVICE_INFO_GPU_EU_SLICES: return out.value(p.numSlices);
  case UR_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE: return out.value(p.numEUsPerSubslice);
  case UR_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE: return out.value(p.numSubslicesPerSlice);
  case UR_DEVICE_INFO_GPU_HW_THREADS_PER_EU: return out.value(p.numThreadsPerEU);
  // Sysman readings, Windows-only identifiers, newer device properties: the shared default.
  default: return ordo::device_info_default(propName, out);
  }
}

// ---- entry points ------------------------------------------------------------------

ur_result_t UR_APICALL urDeviceGet(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                                   ur_device_handle_t *phDevices, uint32_t *pNumDevices) {
  ORDO_UNWRAP(Platform, p, hPlatform);
  if (DeviceType < UR_DEVICE_TYPE_DEFAULT || DeviceType > UR_DEVICE_TYPE_CUSTOM)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (NumEntries == 0 && phDevices) return UR_RESULT_ERROR_INVALID_SIZE;
  if (NumEntries > 0 && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  std::vector<Device *> match;
  for (Device *d : p->devices) {
    ur_device_type_t t = device_type(d->facts.props.type);
    if (DeviceType == UR_DEVICE_TYPE_DEFAULT || DeviceType == UR_DEVICE_TYPE_ALL || DeviceType == t) match.push_back(d);
  }
  uint32_t count = static_cast<uint32_t>(match.size());
  if (pNumDevices) *pNumDevices = count;
  for (uint32_t i = 0; phDevices && i < count && i < NumEntries; ++i)
    phDevices[i] = reinterpret_cast<ur_device_handle_t>(match[i]);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceRetain(ur_device_handle_t hDevice) {
  ORDO_UNWRAP(Device, d, hDevice);
  (void)d; // root devices live as long as the process and are not counted
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceRelease(ur_device_handle_t hDevice) {
  ORDO_UNWRAP(Device, d, hDevice);
  (void)d; // root devices live as long as the process and are not counted
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceGetNativeHandle(ur_device_handle_t hDevice, ur_native_handle_t *phNativeDevice) {
  ORDO_UNWRAP(Device, d, hDevice);
  if (!phNativeDevice) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeDevice = reinterpret_cast<ur_native_handle_t>(d->ze);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceSelectBinary(ur_device_handle_t hDevice, const ur_device_binary_t *pBinaries,
                                            uint32_t NumBinaries, uint32_t *pSelectedBinary) {
  ORDO_UNWRAP(Device, d, hDevice);
  if (!pBinaries || !pSelectedBinary) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (NumBinaries == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  // Only a driver that compiles SPIR-V takes it; the ahead-of-time targets are device
  // specific and not told apart here.
  if (d->facts.module.spirvVersionSupported == 0) return UR_RESULT_ERROR_INVALID_BINARY;
  for (uint32_t i = 0; i < NumBinaries; ++i) {
    if (pBinaries[i].pDeviceTargetSpec &&
        std::strcmp(pBinaries[i].pDeviceTargetSpec, UR_DEVICE_BINARY_TARGET_SPIRV64) == 0) {
      *pSelectedBinary = i;
      return UR_RESULT_SUCCESS;
    }
  }
  return UR_RESULT_ERROR_INVALID_BINARY;
}

ur_result_t UR_APICALL urDeviceGetGlobalTimestamps(ur_device_handle_t hDevice, uint64_t *pDeviceTimestamp,
                                                   uint64_t *pHostTimestamp) {
  ORDO_UNWRAP(Device, d, hDevice);
  if (pDeviceTimestamp) {
    // The device clock in host nanoseconds: ticks times the timer resolution.
    uint64_t host = 0, device = 0;
    ORDO_ZE(ze().zeDeviceGetGlobalTimestamps(d->ze, &host, &device));
    uint64_t ns_per_tick = d->facts.props.timerResolution ? d->facts.props.timerResolution : 1;
    *pDeviceTimestamp = device * ns_per_tick;
  }
  if (pHostTimestamp) *pHostTimestamp = host_now_ns();
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::level_zero
