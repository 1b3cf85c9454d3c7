// Small pieces every adapter on ur_common shares: tagged-handle unwrapping, the
// holder count of objects others keep alive, and the info-query argument rules.
#pragma once

#include <atomic>
#include <cstddef>
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
