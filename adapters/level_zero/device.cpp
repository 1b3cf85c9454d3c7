// SPDX-License-Identifier: Apache-2.0
// Devices: discovery facts, info queries, timestamps.
#include <algorithm>
#include <cstring>

#include "common.hpp"
#include "ur_common/device.hpp"
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

// urDeviceGetInfo's answers, once ur_common/device.hpp has checked the arguments.
ur_result_t device_info(Device *d, ur_device_info_t propName, InfoWriter &out) {
  const DeviceFacts &f = d->facts;
  const ze_device_properties_t &p = f.props;
  const ze_device_compute_properties_t &c = f.compute;
  const bool fp64 = (f.module.flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0;
  const bool fp16 = (f.module.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
  const uint32_t fp_config = ordo::ur_common::kFullFpConfig;
  const uint32_t order_caps = ordo::ur_common::kAllMemoryOrders;
  ur_result_t shared = UR_RESULT_SUCCESS;
  if (ordo::ur_common::gpu_device_info(d, propName, out, shared)) return shared;

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
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value(uint32_t{64});
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE: return out.value(uint64_t(f.cache_size));
  case UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE: return out.value(uint64_t(p.maxMemAllocSize));
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
  case UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP: return out.boolean(true); // host threads (host_task.cpp)
  case UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS: return out.boolean(true);
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

namespace {

// What ur_common's urDevice* entry points leave to the adapter (ur_common/device.hpp).
struct device_hooks {
  using Platform = level_zero::Platform;
  using Device = level_zero::Device;
  static ur_device_type_t type_of(const Device *d) { return device_type(d->facts.props.type); }
  // Only a driver that compiles SPIR-V takes it; the ahead-of-time targets are device
  // specific and not told apart here.
  static const char *binary_target(const Device *d) {
    return d->facts.module.spirvVersionSupported == 0 ? nullptr : UR_DEVICE_BINARY_TARGET_SPIRV64;
  }
  // The device clock in host nanoseconds: ticks times the timer resolution.
  static ur_result_t device_time_ns(Device *d, uint64_t &ns) {
    uint64_t host = 0, device = 0;
    ORDO_ZE(ze().zeDeviceGetGlobalTimestamps(d->ze, &host, &device));
    uint64_t ns_per_tick = d->facts.props.timerResolution ? d->facts.props.timerResolution : 1;
    ns = device * ns_per_tick;
    return UR_RESULT_SUCCESS;
  }
  static uint64_t host_time_ns() { return host_now_ns(); }
  static ur_native_handle_t native_handle(const Device *d) { return reinterpret_cast<ur_native_handle_t>(d->ze); }
};

} // namespace

void install_device_entry_points(ur_dditable_t &t) {
  ordo::ur_common::device_entry_points<device_hooks>::install(t);
  t.Device.pfnGetInfo = ordo::ur_common::device_get_info<Device, device_info>;
}

} // namespace ordo::level_zero
