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
#include <type_traits>
#include <utility>
#include <vector>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo::ur_common {

// urDeviceGet over the platform's `devices`: `has_type(const Device *, ur_device_type_t)`
// says whether a device is of a type; ALL takes every device, and so does DEFAULT unless
// `default_is_first` (OpenCL: a platform's default device is its first one).
template <class Platform, class HasType>
ur_result_t device_get_if(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                          ur_device_handle_t *phDevices, uint32_t *pNumDevices, HasType has_type,
                          bool default_is_first) {
  Platform *p = nullptr;
  if (ur_result_t r = unwrap(hPlatform, p)) return r;
  if (DeviceType < UR_DEVICE_TYPE_DEFAULT || DeviceType > UR_DEVICE_TYPE_CUSTOM)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (NumEntries == 0 && phDevices) return UR_RESULT_ERROR_INVALID_SIZE;
  if (NumEntries > 0 && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const bool any = DeviceType == UR_DEVICE_TYPE_DEFAULT || DeviceType == UR_DEVICE_TYPE_ALL;
  uint32_t n = 0;
  for (auto &d : p->devices) {
    if (DeviceType == UR_DEVICE_TYPE_DEFAULT && default_is_first && n == 1) break;
    if (!any && !has_type(&*d, DeviceType)) continue;
    if (phDevices && n < NumEntries) phDevices[n] = reinterpret_cast<ur_device_handle_t>(&*d);
    ++n;
  }
  if (pNumDevices) *pNumDevices = n;
  return UR_RESULT_SUCCESS;
}

// The same where `type_of(const Device *)` names each device's one type.
template <class Platform, class TypeOf>
ur_result_t device_get(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                       ur_device_handle_t *phDevices, uint32_t *pNumDevices, TypeOf type_of) {
  return device_get_if<Platform>(
      hPlatform, DeviceType, NumEntries, phDevices, pNumDevices,
      [&](const auto *d, ur_device_type_t type) { return type_of(d) == type; }, false);
}

// urDeviceRetain and urDeviceRelease of a root device: it lives as long as the process
// and, as UR says for root devices, its reference count stays as it is.
template <class Device> ur_result_t UR_APICALL root_device_keep(ur_device_handle_t hDevice) {
  Device *d = nullptr;
  if (ur_result_t r = unwrap(hDevice, d)) return r;
  (void)d;
  return UR_RESULT_SUCCESS;
}

// urDeviceRetain and urDeviceRelease where sub-devices count their references: a root
// device's count stays as it is; a sub-device's goes down to 0 and no further (its
// object stays with the device it was made from). `is_root(const Device *)` tells them apart.
template <class Device, bool (*IsRoot)(const Device *)>
ur_result_t UR_APICALL device_retain(ur_device_handle_t hDevice) {
  Device *d = nullptr;
  if (ur_result_t r = unwrap(hDevice, d)) return r;
  if (!IsRoot(d)) d->retain();
  return UR_RESULT_SUCCESS;
}

template <class Device, bool (*IsRoot)(const Device *)>
ur_result_t UR_APICALL device_release(ur_device_handle_t hDevice) {
  Device *d = nullptr;
  if (ur_result_t r = unwrap(hDevice, d)) return r;
  bool last = false; // every reference released already: INVALID_DEVICE
  return IsRoot(d) || d->release_user(last) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_DEVICE;
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
//
// Each of these instead, where a device differs so (OpenCL gives all of them):
//
//   // In place of type_of, where a device may have several types (GPU, CPU, FPGA, ...),
//   // with binary_targets in place of binary_target: the targets it takes, the preferred
//   // first (nulls skipped).
//   static bool has_type(const Device *, ur_device_type_t);
//   static constexpr bool default_is_first = true; // DEFAULT: the first device only
//   static void binary_targets(const Device *, const char *(&targets)[2]);
//   // In place of the fixed counts: false for a sub-device, whose references count.
//   static bool is_root(const Device *);
//   // Without device_time_ns, urDeviceGetGlobalTimestamps is the adapter's own.
//
// and for urDeviceCreateWithNativeHandle, where every device is one the adapter made:
//
//   using Adapter = ...;
//   static const std::vector<Platform *> &platforms(); // every platform of the adapter
//   // Optional: the sub-device made from `root` (at any depth) with this native handle, or null.
//   static Device *sub_device(Device *root, ur_native_handle_t);
template <class H, class = void> struct has_type_hook : std::false_type {};
template <class H>
struct has_type_hook<H, std::void_t<decltype(H::has_type(nullptr, UR_DEVICE_TYPE_ALL))>> : std::true_type {};
template <class H, class = void> struct has_is_root_hook : std::false_type {};
template <class H> struct has_is_root_hook<H, std::void_t<decltype(H::is_root(nullptr))>> : std::true_type {};
template <class H, class = void> struct has_device_time_hook : std::false_type {};
template <class H>
struct has_device_time_hook<H, std::void_t<decltype(H::device_time_ns(nullptr, std::declval<uint64_t &>()))>>
    : std::true_type {};
template <class H, class = void> struct has_platforms_hook : std::false_type {};
template <class H> struct has_platforms_hook<H, std::void_t<decltype(H::platforms())>> : std::true_type {};
template <class H, class = void> struct has_sub_device_hook : std::false_type {};
template <class H>
struct has_sub_device_hook<H, std::void_t<decltype(H::sub_device(nullptr, ur_native_handle_t{}))>> : std::true_type {};

template <class H> struct device_entry_points {
  using Platform = typename H::Platform;
  using Device = typename H::Device;

  static ur_result_t UR_APICALL get(ur_platform_handle_t hPlatform, ur_device_type_t DeviceType, uint32_t NumEntries,
                                    ur_device_handle_t *phDevices, uint32_t *pNumDevices) {
    if constexpr (has_type_hook<H>::value)
      return device_get_if<Platform>(hPlatform, DeviceType, NumEntries, phDevices, pNumDevices, H::has_type,
                                     H::default_is_first);
    else
      return device_get<Platform>(hPlatform, DeviceType, NumEntries, phDevices, pNumDevices,
                                  [](const Device *d) { return H::type_of(d); });
  }

  static void targets_of(const Device *d, const char *(&targets)[2]) {
    if constexpr (has_type_hook<H>::value) {
      H::binary_targets(d, targets);
    } else {
      targets[0] = H::binary_target(d);
      targets[1] = nullptr;
    }
  }

  static ur_result_t UR_APICALL select_binary(ur_device_handle_t hDevice, const ur_device_binary_t *pBinaries,
                                              uint32_t NumBinaries, uint32_t *pSelectedBinary) {
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
    if (!pBinaries || !pSelectedBinary) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (NumBinaries == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    const char *targets[2] = {};
    targets_of(d, targets);
    for (const char *target : targets) {
      if (!target) continue;
      for (uint32_t i = 0; i < NumBinaries; ++i) {
        if (pBinaries[i].pDeviceTargetSpec && std::strcmp(pBinaries[i].pDeviceTargetSpec, target) == 0) {
          *pSelectedBinary = i;
          return UR_RESULT_SUCCESS;
        }
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

  // The device the adapter made with this native handle; a sub-device found is one more
  // reference handed out, as by urDevicePartition (a root device is not counted).
  static ur_result_t UR_APICALL create_with_native_handle(ur_native_handle_t hNativeDevice,
                                                          ur_adapter_handle_t hAdapter,
                                                          const ur_device_native_properties_t *,
                                                          ur_device_handle_t *phDevice) {
    typename H::Adapter *a = nullptr;
    if (ur_result_t r = unwrap(hAdapter, a)) return r;
    if (!phDevice) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    for (auto *p : H::platforms())
      for (auto &root : p->devices) {
        Device *found = H::native_handle(&*root) == hNativeDevice ? &*root : nullptr;
        if constexpr (has_sub_device_hook<H>::value) {
          if (!found) {
            found = H::sub_device(&*root, hNativeDevice);
            if (found) found->retain();
          }
        }
        if (!found) continue;
        *phDevice = reinterpret_cast<ur_device_handle_t>(found);
        return UR_RESULT_SUCCESS;
      }
    return UR_RESULT_ERROR_INVALID_DEVICE;
  }

  // Every slot but urDeviceGetInfo (and what only some adapters have).
  static void install(ur_dditable_t &t) {
    t.Device.pfnGet = get;
    t.Device.pfnSelectBinary = select_binary;
    t.Device.pfnGetNativeHandle = device_get_native_handle<Device, H::native_handle>;
    if constexpr (has_platforms_hook<H>::value) t.Device.pfnCreateWithNativeHandle = create_with_native_handle;
    if constexpr (has_device_time_hook<H>::value) t.Device.pfnGetGlobalTimestamps = get_global_timestamps;
    if constexpr (has_is_root_hook<H>::value) {
      t.Device.pfnRetain = device_retain<Device, H::is_root>;
      t.Device.pfnRelease = device_release<Device, H::is_root>;
    } else {
      t.Device.pfnRetain = root_device_keep<Device>;
      t.Device.pfnRelease = root_device_keep<Device>;
    }
  }
};

} // namespace ordo::ur_common
