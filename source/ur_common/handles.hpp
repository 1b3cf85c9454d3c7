// SPDX-License-Identifier: Apache-2.0
// Small pieces every adapter on ur_common shares: the handle-type list its templates
// read, the adapter handle, lane hints and stream-ordered alloc affinity. Handles, their
// holders and unwrap are the one object model (ordo/object.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ordo/object.hpp"
#include "ur_api.h"

namespace ordo::ur_common {

// Optional `static void reap()` of a hooks struct: destroys what the adapter parked where
// destroying it was unsafe (OpenCL: events dropped in a callback or under a pool's lock).
// The entry points that may let go of such objects call it last, on every path.
template <class H, class = void> struct has_reap : std::false_type {};
template <class H> struct has_reap<H, std::void_t<decltype(&H::reap)>> : std::true_type {};
template <class H> void reap_parked() {
  if constexpr (has_reap<H>::value) H::reap();
}

// The handle types ur_common's templates work on; an adapter names its own once
// (`using handle_types = handle_types_of<...>;`) and each hooks struct derives from it.
// An adapter without queues, programs or commands yet leaves those void.
template <class A, class P, class D, class C, class Q = void, class Pr = void, class Cmd = void>
struct handle_types_of {
  using Adapter = A;
  using Platform = P;
  using Device = D;
  using Context = C;
  using Queue = Q;
  using Program = Pr;
  using Command = Cmd;
};

// An adapter handle that keeps nothing of its own: one per adapter library, its user
// count driven by urAdapterGet/Retain/Release (ur_common/adapter.hpp).
struct adapter_object : object {
  static constexpr handle_kind kKind = handle_kind::adapter;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_ARGUMENT;
  adapter_object() : object(kKind) {}
};
ORDO_HANDLE_CHECK(adapter_object);

// urXRetain of an object-model handle: one more user reference, refused once the user's
// last is gone (the object may still be held inside the adapter).
template <class T, class Handle> ur_result_t UR_APICALL retain_user_handle(Handle h) {
  ORDO_UNWRAP(T, o, h);
  if (!o->retain_user()) return ordo::invalid_of(o);
  return UR_RESULT_SUCCESS;
}

// urXRelease of an object-model handle with nothing to do at the user's last release but
// drop the user's holder; the last holder retires the object (OpenCL's objects).
template <class T, class Handle> ur_result_t UR_APICALL release_user_handle(Handle h) {
  ORDO_UNWRAP(T, o, h);
  bool last = false;
  if (!o->release_user(last)) return ordo::invalid_of(o);
  if (last && o->drop()) ordo::retire(o);
  return UR_RESULT_SUCCESS;
}

// The fields of root devices, platforms and contexts every adapter on ur_common has
// alike; each adapter derives its own and adds what its driver keeps.
template <class Platform> struct device_object : object {
  static constexpr handle_kind kKind = handle_kind::device;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_DEVICE;
  device_object() : object(kKind) {}
  Platform *platform = nullptr;
};

template <class Device> struct platform_object : object {
  static constexpr handle_kind kKind = handle_kind::platform;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_PLATFORM;
  platform_object() : object(kKind) {}
  std::vector<Device *> devices;
};

// The context's devices and the deleter urContextSetExtendedDeleter names
// (ur_common/context.hpp).
template <class Device> struct context_object : object {
  static constexpr handle_kind kKind = handle_kind::context;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_CONTEXT;
  context_object() : object(kKind) {}
  std::vector<Device *> devices;
  ur_context_extended_deleter_t deleter = nullptr;
  void *deleter_data = nullptr;

  // Index of `dev` in `devices`, or -1.
  int index_of(const Device *dev) const {
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i] == dev) return static_cast<int>(i);
    return -1;
  }
};

// Where a command should go on a queue of several in-order lanes (streams, command
// lists); a `lane` out of range means wherever the adapter would put it.
struct lane_hint {
  uint32_t lane = UINT32_MAX;
};

// Dependency affinity for stream-ordered allocs on a queue of several in-order lanes
// (docs/async-alloc.md, "An out-of-order queue"): an alloc with no wait list goes to the
// lane of the queue's newest free when that block would serve it (at least the size,
// at most twice). There the pool hands the block over in lane order (reuse rule 1),
// with no question about the free's event and no wait across lanes; the next lane in
// turn would put each round of alloc -> kernel -> free behind a cross-lane wait for the
// previous round's free.
class alloc_affinity {
public:
  lane_hint lane_for(size_t size, uint32_t waits, size_t lanes) const {
    if (waits || lanes < 2) return {};
    const uint64_t v = newest_free_.load(std::memory_order_relaxed);
    const uint64_t lane = v & 0xff, bytes = v >> 8;
    const uint64_t need = (uint64_t(size) + 63) & ~uint64_t(63);
    if (!lane || bytes < need || bytes / 2 > need) return {};
    return {uint32_t(lane - 1)};
  }
  void freed(uint32_t lane, size_t block_size, size_t lanes) {
    if (lanes > 1 && lane < 0xff)
      newest_free_.store((uint64_t(block_size) << 8) | (lane + 1), std::memory_order_relaxed);
  }

private:
  // The newest free's lane + 1 (low 8 bits) and block size (the rest); 0 before any.
  std::atomic<uint64_t> newest_free_{0};
};

} // namespace ordo::ur_common
