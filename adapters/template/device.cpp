// SPDX-License-Identifier: Apache-2.0
// Devices: enumeration, the info queries, reference counts (root devices keep theirs
// fixed), timestamps. Replace: the answers of urDeviceGetInfo() with what your driver
// reports (read once at discovery into DeviceFacts), the native handle, and the clocks.
// A query your device cannot answer goes to the default: ordo::device_info_default
// (UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION).
#include <chrono>

#include "common.hpp"
#include "ordo/device_info.hpp"
#include "ordo/info.hpp"
#include "ur_common/device.hpp"

namespace ordo::template_adapter {

namespace {

constexpr ur_device_type_t kType = UR_DEVICE_TYPE_CPU;

// urDeviceGet, urDeviceRetain, urDeviceRelease and urDeviceGetNativeHandle are
// ur_common/device.hpp's: a root device keeps its count as it is.
ur_native_handle_t native_handle(const Device *d) {
  return reinterpret_cast<ur_native_handle_t>(d); // your driver's device handle
}

// urDeviceGetInfo's answers, once ur_common/device.hpp has checked the arguments.
ur_result_t device_info(Device *d, ur_device_info_t propName, InfoWriter &out) {
  const DeviceFacts &f = d->facts;
  const ur_device_partition_t no_partitions[1] = {};
  const ur_device_partition_property_t no_partition_properties[1] = {};
  // Host memory: the host reaches every kind, atomically and concurrently.
  const ur_device_usm_access_capability_flags_t usm = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
  switch (propName) {
  case UR_DEVICE_INFO_TYPE: return out.value(kType);
  case UR_DEVICE_INFO_VENDOR_ID: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_DEVICE_ID: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_NAME: return out.string("Ordo template device");
  case UR_DEVICE_INFO_VENDOR: return out.string("Ordo");
  case UR_DEVICE_INFO_DRIVER_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_VERSION: return out.string("0.12");
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_DEVICE_INFO_EXTENSIONS: return out.string("");
  case UR_DEVICE_INFO_PLATFORM: return out.value(reinterpret_cast<ur_platform_handle_t>(d->platform));
  case UR_DEVICE_INFO_REFERENCE_COUNT: return out.value(d->count());
  case UR_DEVICE_INFO_AVAILABLE: return out.boolean(true);
  case UR_DEVICE_INFO_ENDIAN_LITTLE: return out.boolean(true);
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY: return out.boolean(true);
  case UR_DEVICE_INFO_ADDRESS_BITS: return out.value(uint32_t{64});
  case UR_DEVICE_INFO_MAX_COMPUTE_UNITS: return out.value(f.compute_units);
  case UR_DEVICE_INFO_NUM_COMPUTE_UNITS: return out.value(f.compute_units);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS: return out.value(uint32_t{3});
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    const size_t sizes[3] = {1, 1, 1}; // no kernels yet: one work-item
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return out.value(size_t{1});
  case UR_DEVICE_INFO_GLOBAL_MEM_SIZE: return out.value(f.global_mem);
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE: return out.value(f.max_alloc);
  case UR_DEVICE_INFO_LOCAL_MEM_SIZE: return out.value(uint64_t{64 * 1024});
  case UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN: return out.value(uint32_t{64 * 8}); // bits
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value(uint32_t{64});
  case UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: return out.value(size_t{1});
  case UR_DEVICE_INFO_QUEUE_PROPERTIES: return out.value(ur_queue_flags_t{0}); // no queues yet
  case UR_DEVICE_INFO_USM_HOST_SUPPORT:
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT: return out.value(usm);
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: return out.value(ur_device_usm_access_capability_flags_t{0});
  case UR_DEVICE_INFO_PARENT_DEVICE: return out.value(ur_device_handle_t{nullptr});
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES: return out.value(uint32_t{0});
  // Empty lists: no partitioning offered, and a root device was made by none.
  case UR_DEVICE_INFO_SUPPORTED_PARTITIONS: return out.array(no_partitions, 0);
  case UR_DEVICE_INFO_PARTITION_TYPE: return out.array(no_partition_properties, 0);
  // The rest: UNSUPPORTED_ENUMERATION for a query of the spec, INVALID_ENUMERATION for
  // a value that is none (ordo/device_info.hpp).
  default: return ordo::device_info_default(propName, out);
  }
}

uint64_t now_ns() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The device's clock is the host's here; a device reads both as close together as it can.
ur_result_t UR_APICALL urDeviceGetGlobalTimestamps(ur_device_handle_t hDevice, uint64_t *pDevice, uint64_t *pHost) {
  ORDO_UNWRAP(Device, d, hDevice);
  (void)d;
  const uint64_t t = now_ns();
  if (pDevice) *pDevice = t;
  if (pHost) *pHost = t;
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_device_entry_points(ur_dditable_t &t) {
  t.Device.pfnGet = [](ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                       ur_device_handle_t *phDevices, uint32_t *pNumDevices) {
    return ordo::ur_common::device_get<Platform>(hPlatform, DeviceType, NumEntries, phDevices, pNumDevices,
                                                 [](const Device *) { return kType; });
  };
  t.Device.pfnGetInfo = ordo::ur_common::device_get_info<Device, device_info>;
  t.Device.pfnRetain = ordo::ur_common::root_device_keep<Device>;
  t.Device.pfnRelease = ordo::ur_common::root_device_keep<Device>;
  t.Device.pfnGetNativeHandle = ordo::ur_common::device_get_native_handle<Device, native_handle>;
  t.Device.pfnGetGlobalTimestamps = urDeviceGetGlobalTimestamps;
}

} // namespace ordo::template_adapter
