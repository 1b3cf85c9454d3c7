// SPDX-License-Identifier: Apache-2.0
// The adapter, its one platform and its one device (the host CPU): process-wide
// singletons that are never deleted.
#pragma once
#include <array>
#include <mutex>

#include "common.hpp"

namespace ordo::native_cpu {

struct Adapter : ordo::object {
  static constexpr handle_kind kKind = handle_kind::adapter;
  // The user's count starts at 0: urAdapterGet counts. `mu` serialises the first-reference
  // and last-reference transitions (the worker pool's start and stop).
  Adapter() : ordo::object(kKind) { ref_count.store(0); }
  std::mutex mu;
};
ORDO_HANDLE_CHECK(Adapter);

struct Device : ordo::object {
  static constexpr handle_kind kKind = handle_kind::device;
  Device() : ordo::object(kKind) {}
};
ORDO_HANDLE_CHECK(Device);

// Made at the first use; handles outlive static destructors.
template <class T> T &singleton() {
  static T *one = new T;
  return *one;
}

// `devices`: the one root device (ur_common/device.hpp's urDeviceGet walks it).
struct Platform : ordo::object {
  static constexpr handle_kind kKind = handle_kind::platform;
  Platform() : ordo::object(kKind), devices{&singleton<Device>()} {}
  const std::array<Device *, 1> devices;
};
ORDO_HANDLE_CHECK(Platform);

inline Adapter &the_adapter() { return singleton<Adapter>(); }
inline Platform &the_platform() { return singleton<Platform>(); }
inline Device &the_device() { return singleton<Device>(); }

inline ur_adapter_handle_t adapter_handle() { return reinterpret_cast<ur_adapter_handle_t>(&the_adapter()); }
inline ur_platform_handle_t platform_handle() { return reinterpret_cast<ur_platform_handle_t>(&the_platform()); }
inline ur_device_handle_t device_handle() { return reinterpret_cast<ur_device_handle_t>(&the_device()); }

inline bool is_adapter(ur_adapter_handle_t h) { return h && h == adapter_handle(); }
inline bool is_platform(ur_platform_handle_t h) { return h && h == platform_handle(); }
inline bool is_device(ur_device_handle_t h) { return h && h == device_handle(); }
inline ur_result_t device_error(ur_device_handle_t h) { return bad_handle(h, UR_RESULT_ERROR_INVALID_DEVICE); }

// The one object model's unwrap (ordo/object.hpp) for the singletons, found by
// argument-dependent lookup from ur_common's entry points: a pointer compare, so an
// unknown handle is never read.
inline ur_result_t unwrap(ur_adapter_handle_t h, Adapter *&out) {
  out = is_adapter(h) ? &the_adapter() : nullptr;
  return out ? UR_RESULT_SUCCESS : bad_handle(h, UR_RESULT_ERROR_INVALID_ARGUMENT);
}
inline ur_result_t unwrap(ur_platform_handle_t h, Platform *&out) {
  out = is_platform(h) ? &the_platform() : nullptr;
  return out ? UR_RESULT_SUCCESS : bad_handle(h, UR_RESULT_ERROR_INVALID_PLATFORM);
}
inline ur_result_t unwrap(ur_device_handle_t h, Device *&out) {
  out = is_device(h) ? &the_device() : nullptr;
  return out ? UR_RESULT_SUCCESS : device_error(h);
}

// Limits the adapter enforces and reports (device.cpp).
constexpr size_t kMaxWorkGroupSize = 8192;
constexpr size_t kMaxGroupsPerDimension = 0x7fffffff;
constexpr size_t kMaxParameterSize = 64 * 1024;
uint64_t local_memory_size();
uint64_t max_alloc_size();

} // namespace ordo::native_cpu
