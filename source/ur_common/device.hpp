// SPDX-License-Identifier: Apache-2.0
// The urDevice* entry points that are bookkeeping, written once: enumeration of a
// platform's root devices, their fixed reference counts, native handles, binary
// selection by target name and global timestamps. urDeviceGetInfo stays the adapter's
// (ur_common/device_info.hpp has the answers every backend gives alike). Handles are
// checked by `unwrap(handle, T *&)` found by argument-dependent lookup: ordo::unwrap,
// unless the adapter has a stricter overload in its namespace (native CPU's singletons).
#pragma once

#include <cstdint>
#include <cstring>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo::ur_common {

// urDeviceGet over the platform's `devices`; `type_of(const Device *)` names each one's
// type, which DEFAULT and ALL take alike.
template <class Platform, class TypeOf>
ur_result_t device_get(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                       ur_device_handle_t *phDevices, uint32_t *pNumDevices, TypeOf type_of) {
  Platform *p = nullptr;
  if (ur_result_t r = unwrap(hPlatform, p)) return r;
  if (DeviceType < UR_DEVICE_TYPE_DEFAULT || DeviceType > UR_DEVICE_TYPE_CUSTOM)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (NumEntries == 0 && phDevices) return UR_RESULT_ERROR_INVALID_SIZE;
  if (NumEntries > 0 && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const bool any = DeviceType == UR_DEVICE_TYPE_DEFAULT || DeviceType == UR_DEVICE_TYPE_ALL;
  uint32_t n = 0;
  for (auto *d : p->devices) {
    if (!any && type_of(d) != DeviceType) continue;
    if (phDevices && n < NumEntries) phDevices[n] = reinterpret_cast<ur_device_handle_t>(d);
    ++n;
  }
  if (pNumDevices) *pNumDevices = n;
  return UR_RESULT_SUCCESS;
}

// urDeviceRetain and urDeviceRelease of a root device: it lives as long as the process
// and, as UR says for root devices, its reference count stays as it is.
template <class Device> ur_result_t UR_APICALL root_device_keep(ur_device_handle_t hDevice) {
  Device *d = nullptr;
  if (ur_result_t r = unwrap(hDevice, d)) return r;
  (void)d;
  return UR_RESULT_SUCCESS;
}

// urDeviceGetNativeHandle: `Native(const Device *)` is the driver's handle.
template <class Device, ur_native_handle_t (*Native)(const Device *)>
ur_result_t UR_APICALL device_get_native_handle(ur_device_handle_t hDevice, ur_native_handle_t *phNativeDevice) {
  Device *d = nullptr;
  if (ur_result_t r = unwrap(hDevice, d)) return r;
  if (!phNativeDevice) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeDevice = Native(d);
  return UR_RESULT_SUCCESS;
}

// urDeviceGetInfo: the handle and the info arguments checked, then
// `Answer(Device *, ur_device_info_t, InfoWriter &)` answers.
template <class Device, ur_result_t (*Answer)(Device *, ur_device_info_t, InfoWriter &)>
ur_result_t UR_APICALL device_get_info(ur_device_handle_t hDevice, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  Device *d = nullptr;
  if (ur_result_t r = unwrap(hDevice, d)) return r;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return Answer(d, propName, out);
}

// The entry points above and these, for an adapter whose hooks struct `H` gives:
//
//   using Platform = ...; using Device = ...;
//   static ur_device_type_t type_of(const Device *);
//   static ur_native_handle_t native_handle(const Device *);
//   // The one binary target the device takes (UR_DEVICE_BINARY_TARGET_*), null for none.
//   static const char *binary_target(const Device *);
//   // The device's clock in nanoseconds, and the host's (the one clock of the adapter).
//   static ur_result_t device_time_ns(Device *, uint64_t &);
//   static uint64_t host_time_ns();
template <class H> struct device_entry_points {
  using Platform = typename H::Platform;
  using Device = typename H::Device;

  static ur_result_t UR_APICALL get(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                                    ur_device_handle_t *phDevices, uint32_t *pNumDevices) {
    return device_get<Platform>(hPlatform, DeviceType, NumEntries, phDevices, pNumDevices,
                                [](const Device *d) { return H::type_of(d); });
  }

  static ur_result_t UR_APICALL select_binary(ur_device_handle_t hDevice, const ur_device_binary_t *pBinaries,
                                              uint32_t NumBinaries, uint32_t *pSelectedBinary) {
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
    if (!pBinaries || !pSelectedBinary) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (NumBinaries == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    const char *target = H::binary_target(d);
    if (!target) return UR_RESULT_ERROR_INVALID_BINARY;
    for (uint32_t i = 0; i < NumBinaries; ++i) {
      if (pBinaries[i].pDeviceTargetSpec && std::strcmp(pBinaries[i].pDeviceTargetSpec, target) == 0) {
        *pSelectedBinary = i;
        return UR_RESULT_SUCCESS;
      }
    }
    return UR_RESULT_ERROR_INVALID_BINARY;
  }

  static ur_result_t UR_APICALL get_global_timestamps(ur_device_handle_t hDevice, uint64_t *pDeviceTimestamp,
                                                      uint64_t *pHostTimestamp) {
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
    if (pDeviceTimestamp) {
      uint64_t ns = 0;
      if (ur_result_t r = H::device_time_ns(d, ns)) return r;
      *pDeviceTimestamp = ns;
    }
    if (pHostTimestamp) *pHostTimestamp = H::host_time_ns();
    return UR_RESULT_SUCCESS;
  }

  // Every slot but urDeviceGetInfo (and what only some adapters have).
  static void install(ur_dditable_t &t) {
    t.Device.pfnGet = get;
    t.Device.pfnRetain = root_device_keep<Device>;
    t.Device.pfnRelease = root_device_keep<Device>;
    t.Device.pfnSelectBinary = select_binary;
    t.Device.pfnGetNativeHandle = device_get_native_handle<Device, H::native_handle>;
    t.Device.pfnGetGlobalTimestamps = get_global_timestamps;
  }
};

} // namespace ordo::ur_common
