// Small pieces every adapter on ur_common shares: tagged-handle unwrapping, the
// holder count of objects others keep alive, and the info-query argument rules.
#pragma once

#include <atomic>
#include <cstdint>

#include "ur_api.h"

namespace ordo::uc {

// Objects that others keep alive: one holder stands for all of the user's
// references, every internal holder (a queue's context, an event's queue, a pool the
// user made holding its context) adds one. The object is destroyed when the last
// one drops.
struct Lifetime {
  std::atomic<uint32_t> holders{1};
  void hold() { holders.fetch_add(1, std::memory_order_relaxed); }
  bool drop() { return holders.fetch_sub(1, std::memory_order_acq_rel) == 1; }
};

// Where a command should go on a queue of several in-order lanes (streams, command
// lists); a `lane` out of range means wherever the adapter would put it.
struct lane_hint {
  uint32_t lane = UINT32_MAX;
};

// Resolves a handle to the adapter object it must be (T has a `tag` and T::kTag,
// T::kInvalid): null gives INVALID_NULL_HANDLE, a handle of another kind T::kInvalid.
template <class T, class H> inline ur_result_t unwrap(H handle, T *&out) {
  out = reinterpret_cast<T *>(handle);
  if (!handle) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  return out->tag == T::kTag ? UR_RESULT_SUCCESS : T::kInvalid;
}

// The argument rules every urXGetInfo shares.
inline ur_result_t check_info_args(size_t size, void *value, size_t *size_ret) {
  if (size == 0 && value) return UR_RESULT_ERROR_INVALID_SIZE;
  if (size != 0 && !value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!value && !size_ret) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::uc
