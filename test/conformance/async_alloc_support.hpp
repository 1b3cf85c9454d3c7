// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the stream-ordered allocation regression tests and the random
// checker (async_alloc_regression.cpp, async_alloc_random.cpp): pool statistics, and
// a way to keep a queue's commands pending while the test enqueues more.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace conf::async {

inline bool async_supported(ur_device_handle_t d) {
  ur_bool_t b = 0;
  return info(d, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, b) == UR_RESULT_SUCCESS && b;
}

// Counts an extended deleter's calls (urContextSetExtendedDeleter). The counters live
// for the whole process: a context that goes late (or never, the bug looked for) must
// not write into a finished test.
inline void count_deletion(void *counter) { static_cast<std::atomic<int> *>(counter)->fetch_add(1); }
inline std::atomic<int> &new_deleter_counter() {
  static std::mutex mu;
  static std::deque<std::atomic<int>> counters;
  std::lock_guard<std::mutex> lock(mu);
  counters.emplace_back(0);
  return counters.back();
}
// The deleter's calls once every handle is released: an adapter may finish the last
// release on a thread of its own (a worker's hold on a finished command), so a little
// grace.
inline int deletions_after_last_release(const std::atomic<int> &counter) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (counter.load() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return counter.load();
}

inline size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

inline bool overlaps(const void *a, size_t an, const void *b, size_t bn) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bn && y < x + an;
}

// What urUSMPoolGetInfoExp reports about memory.
struct PoolStats {
  size_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
  bool operator==(const PoolStats &o) const {
    return reserved == o.reserved && reserved_high == o.reserved_high && used == o.used && used_high == o.used_high;
  }
  bool operator!=(const PoolStats &o) const { return !(*this == o); }
};
inline std::ostream &operator<<(std::ostream &os, const PoolStats &s) {
  return os << "{reserved " << s.reserved << " (high " << s.reserved_high << "), used " << s.used << " (high "
            << s.used_high << ")}";
}

// The four memory statistics; false if a query failed.
inline bool read_stats(ur_usm_pool_handle_t pool, PoolStats &s) {
  const std::pair<ur_usm_pool_info_t, size_t *> all[] = {{UR_USM_POOL_INFO_RESERVED_CURRENT_EXP, &s.reserved},
                                                         {UR_USM_POOL_INFO_RESERVED_HIGH_EXP, &s.reserved_high},
                                                         {UR_USM_POOL_INFO_USED_CURRENT_EXP, &s.used},
                                                         {UR_USM_POOL_INFO_USED_HIGH_EXP, &s.used_high}};
  for (auto &q : all)
    if (urUSMPoolGetInfoExp(pool, q.first, q.second, nullptr) != UR_RESULT_SUCCESS) return false;
  return true;
}

inline PoolStats stats_of(ur_usm_pool_handle_t pool) {
  PoolStats s;
  EXPECT_TRUE(read_stats(pool, s)) << "urUSMPoolGetInfoExp failed";
  return s;
}

inline ur_result_t reset_high_marks(ur_usm_pool_handle_t pool) {
  size_t any = 0;
  if (ur_result_t r = urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP, &any, sizeof any)) return r;
  return urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &any, sizeof any);
}

inline ur_result_t out_of_memory_for(ur_usm_type_t kind) {
  return kind == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
}

inline ur_result_t enqueue_alloc(ur_usm_type_t kind, ur_queue_handle_t q, ur_usm_pool_handle_t pool, size_t bytes,
                                 uint32_t n, const ur_event_handle_t *waits, void **out, ur_event_handle_t *ev) {
  switch (kind) {
  case UR_USM_TYPE_HOST: return urEnqueueUSMHostAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
  case UR_USM_TYPE_SHARED: return urEnqueueUSMSharedAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
  default: return urEnqueueUSMDeviceAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
  }
}

// Writes `value` into the first `bytes` (a multiple of 4) at `p`.
inline ur_result_t fill32(ur_queue_handle_t q, void *p, size_t bytes, uint32_t value, uint32_t n,
                          const ur_event_handle_t *waits, ur_event_handle_t *ev) {
  return urEnqueueUSMFill(q, p, sizeof value, &value, bytes, n, waits, ev);
}

// First element of `v` that is not `value`, or v.size().
inline size_t first_mismatch(const std::vector<uint32_t> &v, uint32_t value) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != value) return i;
  return v.size();
}

// Keeps a queue's later commands (and everything ordered after them) pending until
// open(), so a free stays pending while the test enqueues what follows it; reuse
// rule 2 (the free has completed) then cannot hide a missing rule 1 or 3.
//
// Where the device runs host tasks this is exact: a host task that waits for the
// test. Elsewhere it is a run of large fills of a scratch buffer, calibrated to last
// about `target_ms`; whether it outlasted the enqueues is then read from its event.
class QueueHold {
public:
  QueueHold() = default;
  QueueHold(const QueueHold &) = delete;
  QueueHold &operator=(const QueueHold &) = delete;
  ~QueueHold() { open(); } // owners must also finish the queue before releasing the scratch

  // Enqueues the hold on the in-order queue `q`; `ev` receives its event (the caller
  // releases it).
  ur_result_t start(ur_context_handle_t ctx, ur_device_handle_t dev, ur_queue_handle_t q, ur_event_handle_t *ev,
                    unsigned target_ms = 400) {
    ur_bool_t host_tasks = 0;
    if (info(dev, UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP, host_tasks) == UR_RESULT_SUCCESS && host_tasks) {
      opened_.store(false);
      ur_result_t r = urEnqueueHostTaskExp(q, &QueueHold::wait_for_open, this, nullptr, 0, nullptr, ev);
      if (r == UR_RESULT_SUCCESS) {
        exact_ = true;
        return r;
      }
      if (r != UR_RESULT_ERROR_UNSUPPORTED_FEATURE) return r;
    }
    exact_ = false;
    if (!scratch_) {
      if (ur_result_t r = urUSMDeviceAlloc(ctx, dev, nullptr, nullptr, kScratch, &scratch_)) return r;
      ctx_ = ctx;
      // One fill, timed, says how many make up the hold.
      auto t0 = std::chrono::steady_clock::now();
      if (ur_result_t r = fill32(q, scratch_, kScratch, 1, 0, nullptr, nullptr)) return r;
      if (ur_result_t r = urQueueFinish(q)) return r;
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
      fills_ = static_cast<unsigned>(std::min<long long>(4000, std::max<long long>(8, target_ms * 1000LL / (us + 1))));
    }
    for (unsigned i = 0; i + 1 < fills_; ++i)
      if (ur_result_t r = fill32(q, scratch_, kScratch, i, 0, nullptr, nullptr)) return r;
    return fill32(q, scratch_, kScratch, 7, 0, nullptr, ev);
  }
  void open() { opened_.store(true); }
  // The hold is exact (a host task), not a timed run of fills.
  bool exact() const { return exact_; }
  // Lengthens the next timed hold (after one that ended too early).
  void lengthen(unsigned factor) { fills_ = std::min(fills_ * factor, 40000u); }
  unsigned fills() const { return fills_; }
  // Call after the queue holding it has finished.
  void release_scratch() {
    if (scratch_) urUSMFree(ctx_, scratch_);
    scratch_ = nullptr;
  }

private:
  static constexpr size_t kScratch = 16 << 20;
  static void wait_for_open(void *self) {
    auto *h = static_cast<QueueHold *>(self);
    // Bounded, so a test that forgets to open cannot hang the suite.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!h->opened_.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::atomic<bool> opened_{true};
  bool exact_ = false;
  void *scratch_ = nullptr;
  ur_context_handle_t ctx_ = nullptr;
  unsigned fills_ = 0;
};

// ---- the lifetime mode of the random checker (async_alloc_random_lifetimes.cpp) ----

// What the lifetime programs did, over a run.
struct LifetimeTotals {
  std::atomic<uint64_t> programs{0}, calls{0}, churns{0}, pools_destroyed{0}, fixed_tried{0}, fixed_made{0},
      backing_refused{0}, registered{0}, limit_checks{0}, offset_frees{0}, left_live{0}, deleter_checks{0};
};

// One program of the lifetime mode for `seed`: pools created, made current, trimmed and
// destroyed while threads allocate through them, fixed pools, registered host memory,
// pools at their maximum, frees at every offset of a block, and a teardown with blocks
// left live that the context's extended deleter must see through. False when a check
// failed; `failure` says which and what led to it, `calls` how many operations ran.
bool run_lifetime_program(const urinfo::FoundDevice &dev, uint64_t seed, LifetimeTotals &totals, std::string &failure,
                          size_t &calls);
// One line for the run's summary.
std::string describe(const LifetimeTotals &t);

} // namespace conf::async
