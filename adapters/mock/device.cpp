// SPDX-License-Identifier: Apache-2.0
// The mock's one device, "Mock device": a CPU-like device whose memory is host memory.
#include <cstring>

#include "mock.hpp"

namespace mock {

ur_device_handle_t the_device() {
  static ur_device_handle_t_ device;
  return &device;
}

namespace {

ur_result_t check(ur_device_handle_t h) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_device_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_DEVICE;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceGet(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                                   ur_device_handle_t *phDevices, uint32_t *pNumDevices) {
  if (!hPlatform) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_platform_handle_t_>(hPlatform)) return UR_RESULT_ERROR_INVALID_PLATFORM;
  if (DeviceType > UR_DEVICE_TYPE_CUSTOM || DeviceType < UR_DEVICE_TYPE_DEFAULT)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (NumEntries == 0 && phDevices) return UR_RESULT_ERROR_INVALID_SIZE;
  if (NumEntries > 0 && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const bool match =
      DeviceType == UR_DEVICE_TYPE_ALL || DeviceType == UR_DEVICE_TYPE_DEFAULT || DeviceType == UR_DEVICE_TYPE_CPU;
  if (phDevices && match) phDevices[0] = the_device();
  if (pNumDevices) *pNumDevices = match ? 1 : 0;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t h, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  if (ur_result_t r = check(h)) return r;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  const ur_device_usm_access_capability_flags_t usm = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
  switch (propName) {
  case UR_DEVICE_INFO_TYPE: return out.value(UR_DEVICE_TYPE_CPU);
  case UR_DEVICE_INFO_VENDOR_ID: return out.value<uint32_t>(0x0);
  case UR_DEVICE_INFO_DEVICE_ID: return out.value<uint32_t>(0x0);
  case UR_DEVICE_INFO_MAX_COMPUTE_UNITS: return out.value<uint32_t>(4);
  case UR_DEVICE_INFO_NUM_COMPUTE_UNITS: return out.value<uint32_t>(4);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS: return out.value<uint32_t>(3);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    const size_t sizes[3] = {1024, 1024, 1024};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return out.value<size_t>(1024);
  case UR_DEVICE_INFO_QUEUE_PROPERTIES:
  case UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES:
    return out.value<ur_queue_flags_t>(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE);
  case UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES: return out.value<ur_queue_flags_t>(0);
  case UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY: return out.value<uint32_t>(1000);
  case UR_DEVICE_INFO_ADDRESS_BITS: return out.value<uint32_t>(64);
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE: return out.value<uint64_t>(1ull << 30);
  case UR_DEVICE_INFO_GLOBAL_MEM_SIZE: return out.value<uint64_t>(4ull << 30);
  case UR_DEVICE_INFO_GLOBAL_MEM_FREE: return out.value<uint64_t>(4ull << 30);
  case UR_DEVICE_INFO_LOCAL_MEM_SIZE: return out.value<uint64_t>(64 * 1024);
  case UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN: return out.value<uint32_t>(1024);
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value<uint32_t>(64);
  case UR_DEVICE_INFO_IMAGE_SUPPORT: return out.boolean(false);
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY: return out.boolean(true);
  case UR_DEVICE_INFO_ENDIAN_LITTLE: return out.boolean(true);
  case UR_DEVICE_INFO_AVAILABLE: return out.boolean(true);
  case UR_DEVICE_INFO_COMPILER_AVAILABLE: return out.boolean(false);
  case UR_DEVICE_INFO_LINKER_AVAILABLE: return out.boolean(false);
  case UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT: return out.boolean(false);
  case UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: return out.value<size_t>(1);
  case UR_DEVICE_INFO_PLATFORM: return out.value(the_platform());
  case UR_DEVICE_INFO_REFERENCE_COUNT: return out.value<uint32_t>(h->count());
  case UR_DEVICE_INFO_NAME: return out.string("Mock device");
  case UR_DEVICE_INFO_VENDOR: return out.string("Ordo");
  case UR_DEVICE_INFO_DRIVER_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_DEVICE_INFO_VERSION: return out.string("0.12");
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_EXTENSIONS: return out.string("");
  case UR_DEVICE_INFO_BUILT_IN_KERNELS: return out.string("");
  case UR_DEVICE_INFO_IL_VERSION: return out.string("");
  case UR_DEVICE_INFO_PARENT_DEVICE: return out.value<ur_device_handle_t>(nullptr);
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES: return out.value<uint32_t>(0);
  case UR_DEVICE_INFO_USM_HOST_SUPPORT:
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT: return out.value(usm);
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: return out.value<ur_device_usm_access_capability_flags_t>(0);
  case UR_DEVICE_INFO_ATOMIC_64: return out.boolean(true);
  case UR_DEVICE_INFO_USM_POOL_SUPPORT: return out.boolean(false);
  case UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT: return out.boolean(false);
  case UR_DEVICE_INFO_UUID: {
    const uint8_t uuid[16] = {'o', 'r', 'd', 'o', '-', 'm', 'o', 'c', 'k', 0, 0, 0, 0, 0, 0, 1};
    return out.array(uuid, 16);
  }
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

// The root device is not reference counted (as for every adapter's root devices).
ur_result_t UR_APICALL urDeviceRetain(ur_device_handle_t h) { return check(h); }
ur_result_t UR_APICALL urDeviceRelease(ur_device_handle_t h) { return check(h); }

ur_result_t UR_APICALL urDeviceGetNativeHandle(ur_device_handle_t h, ur_native_handle_t *phNative) {
  if (ur_result_t r = check(h)) return r;
  if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNative = reinterpret_cast<ur_native_handle_t>(h);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urDeviceGetGlobalTimestamps(ur_device_handle_t h, uint64_t *pDevice, uint64_t *pHost) {
  if (ur_result_t r = check(h)) return r;
  const uint64_t t = now_ns();
  if (pDevice) *pDevice = t;
  if (pHost) *pHost = t;
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_device(ur_dditable_t &t) {
  t.Device.pfnGet = urDeviceGet;
  t.Device.pfnGetInfo = urDeviceGetInfo;
  t.Device.pfnRetain = urDeviceRetain;
  t.Device.pfnRelease = urDeviceRelease;
  t.Device.pfnGetNativeHandle = urDeviceGetNativeHandle;
  t.Device.pfnGetGlobalTimestamps = urDeviceGetGlobalTimestamps;
}

} // namespace mock
