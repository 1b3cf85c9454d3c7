// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation (docs/async-alloc.md): urEnqueueUSM*AllocExp,
// urEnqueueUSMFreeExp and the urUSMPool*Exp family, on every device that reports
// UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, for each kind of USM it has.
//
// Each rule of the contract is one test; bad input gets its specific result and leaves
// the pool's statistics as they were. Host memory has no device pool, so the host
// tests use a pool from urUSMPoolCreate with the same descriptor where they need
// limits.
#include <atomic>
#include <deque>
#include <ostream>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;

bool async_supported(ur_device_handle_t d) {
  ur_bool_t b = 0;
  return conf::info(d, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, b) == UR_RESULT_SUCCESS && b;
}

// Everything urUSMPoolGetInfoExp reports about memory.
struct PoolStats {
  size_t reserved = 0, reserved_high = 0, used = 0, used_high = 0, threshold = 0, max_size = 0;
  bool operator==(const PoolStats &o) const {
    return reserved == o.reserved && reserved_high == o.reserved_high && used == o.used && used_high == o.used_high &&
           threshold == o.threshold && max_size == o.max_size;
  }
};
std::ostream &operator<<(std::ostream &os, const PoolStats &s) {
  return os << "{reserved " << s.reserved << " (high " << s.reserved_high << "), used " << s.used << " (high "
            << s.used_high << "), threshold " << s.threshold << ", max " << s.max_size << "}";
}

PoolStats stats_of(ur_usm_pool_handle_t pool) {
  PoolStats s;
  const std::pair<ur_usm_pool_info_t, size_t *> all[] = {
      {UR_USM_POOL_INFO_RESERVED_CURRENT_EXP, &s.reserved},   {UR_USM_POOL_INFO_RESERVED_HIGH_EXP, &s.reserved_high},
      {UR_USM_POOL_INFO_USED_CURRENT_EXP, &s.used},           {UR_USM_POOL_INFO_USED_HIGH_EXP, &s.used_high},
      {UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &s.threshold}, {UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP, &s.max_size}};
  for (auto &q : all) EXPECT_SUCCESS(urUSMPoolGetInfoExp(pool, q.first, q.second, nullptr)) << q.first;
  return s;
}

struct KindName {
  std::string operator()(ur_usm_type_t k) const { return conf::usm_kind_name(k); }
};

// One kind of USM on one device: the test kernels, the fixture's in-order queue, and
// helpers that clean up after themselves.
class urAsyncAllocTest : public conf::ProgramTestWith<ur_usm_type_t> {
protected:
  using Base = conf::ProgramTestWith<ur_usm_type_t>;

  ur_usm_type_t kind() const { return std::get<1>(GetParam()); }
  const char *kind_name() const { return conf::usm_kind_name(kind()); }
  ur_result_t out_of_memory() const {
    return kind() == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }

  void SetUp() override {
    CONF_BASE_SETUP(Base);
    if (!async_supported(device()))
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP";
    if (!conf::usm_supported(device(), kind())) GTEST_SKIP() << found().label() << " has no " << kind_name() << " USM";
    fill_kernel = make_kernel("fill");
    increment_kernel = make_kernel("increment");
    ASSERT_NE(nullptr, fill_kernel);
    ASSERT_NE(nullptr, increment_kernel);
  }
  void TearDown() override {
    for (ur_queue_handle_t q : queues) {
      EXPECT_SUCCESS(urQueueFinish(q));
      EXPECT_SUCCESS(urQueueRelease(q));
    }
    if (queue) {
      EXPECT_SUCCESS(urQueueFinish(queue));
    }
    for (ur_event_handle_t e : events)
      if (e) {
        EXPECT_SUCCESS(urEventRelease(e));
      }
    for (ur_usm_pool_handle_t p : pools) EXPECT_SUCCESS(destroy_pool_call(p));
    for (ur_kernel_handle_t k : {fill_kernel, increment_kernel})
      if (k) {
        EXPECT_SUCCESS(urKernelRelease(k));
      }
    Base::TearDown();
  }

  // ---- queues, events, pools ----
  ur_queue_handle_t make_queue(ur_queue_flags_t flags = 0) {
    ur_queue_handle_t q = nullptr;
    EXPECT_SUCCESS(conf::make_queue(context, device(), flags, &q));
    if (q) queues.push_back(q);
    return q;
  }
  bool has_out_of_order() const {
    return conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  }
  ur_event_handle_t *new_event() {
    events.push_back(nullptr);
    return &events.back();
  }
  // A pool for this kind: urUSMPoolCreateExp for device and shared memory,
  // urUSMPoolCreate for host memory (no device owns it).
  ur_usm_pool_handle_t make_pool(size_t max_size, size_t threshold, ur_usm_pool_flags_t flags = 0,
                                 ur_context_handle_t ctx = nullptr) {
    ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max_size, threshold};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, flags};
    ur_usm_pool_handle_t p = nullptr;
    ctx = ctx ? ctx : context;
    EXPECT_SUCCESS(kind() == UR_USM_TYPE_HOST ? urUSMPoolCreate(ctx, &desc, &p)
                                              : urUSMPoolCreateExp(ctx, device(), &desc, &p));
    if (p && ctx == context) pools.push_back(p);
    return p;
  }
  ur_result_t destroy_pool_call(ur_usm_pool_handle_t p, ur_context_handle_t ctx = nullptr) {
    return kind() == UR_USM_TYPE_HOST ? urUSMPoolRelease(p) : urUSMPoolDestroyExp(ctx ? ctx : context, device(), p);
  }
  ur_result_t destroy_pool(ur_usm_pool_handle_t p) {
    for (size_t i = 0; i < pools.size(); ++i)
      if (pools[i] == p) pools.erase(pools.begin() + static_cast<std::ptrdiff_t>(i));
    return destroy_pool_call(p);
  }

  // ---- commands ----
  ur_result_t alloc(ur_queue_handle_t q, size_t bytes, void **out, ur_usm_pool_handle_t pool = nullptr, uint32_t n = 0,
                    const ur_event_handle_t *waits = nullptr, ur_event_handle_t *ev = nullptr) {
    switch (kind()) {
    case UR_USM_TYPE_HOST: return urEnqueueUSMHostAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
    case UR_USM_TYPE_SHARED: return urEnqueueUSMSharedAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
    default: return urEnqueueUSMDeviceAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
    }
  }
  ur_result_t free_async(ur_queue_handle_t q, void *p, uint32_t n = 0, const ur_event_handle_t *waits = nullptr,
                         ur_event_handle_t *ev = nullptr, ur_usm_pool_handle_t pool = nullptr) {
    return urEnqueueUSMFreeExp(q, pool, p, n, waits, ev);
  }
  ur_result_t fill(ur_queue_handle_t q, void *p, size_t n, uint32_t value, uint32_t nwait = 0,
                   const ur_event_handle_t *waits = nullptr, ur_event_handle_t *ev = nullptr) {
    std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, p), arg_value(1, sizeof value, &value)};
    return urEnqueueKernelLaunchWithArgsExp(q, fill_kernel, 1, nullptr, &n, nullptr, 2, args.data(), nullptr, nwait,
                                            waits, ev);
  }
  ur_result_t increment(ur_queue_handle_t q, void *p, size_t n, uint32_t nwait = 0,
                        const ur_event_handle_t *waits = nullptr, ur_event_handle_t *ev = nullptr) {
    ur_exp_kernel_arg_properties_t arg = arg_pointer(0, p);
    return urEnqueueKernelLaunchWithArgsExp(q, increment_kernel, 1, nullptr, &n, nullptr, 1, &arg, nullptr, nwait,
                                            waits, ev);
  }
  std::vector<uint32_t> read(ur_queue_handle_t q, const void *p, size_t n, uint32_t nwait = 0,
                             const ur_event_handle_t *waits = nullptr) {
    std::vector<uint32_t> out(n, 0xcdcdcdcd);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(q, true, out.data(), p, n * sizeof(uint32_t), nwait, waits, nullptr));
    return out;
  }
  // Every element equals `value` (a short message instead of two long vectors).
  static ::testing::AssertionResult all_equal(const std::vector<uint32_t> &v, uint32_t value) {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] != value)
        return ::testing::AssertionFailure() << "element " << i << " is " << v[i] << ", expected " << value;
    return ::testing::AssertionSuccess();
  }
  template <class V> V alloc_info(const void *p, ur_usm_alloc_info_t what) {
    V v{};
    EXPECT_SUCCESS(urUSMGetMemAllocInfo(context, p, what, sizeof v, &v, nullptr)) << what;
    return v;
  }

  ur_kernel_handle_t fill_kernel = nullptr, increment_kernel = nullptr;
  std::vector<ur_queue_handle_t> queues;
  std::deque<ur_event_handle_t> events; // new_event() hands out stable addresses
  std::vector<ur_usm_pool_handle_t> pools;
};

// ---- the rules ------------------------------------------------------------------------------

// Alloc: the pointer is usable by commands ordered after the alloc (in-order queue).
TEST_P(urAsyncAllocTest, AllocIsUsableByLaterCommandsOfTheQueue) {
  const size_t n = 4096;
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(queue, n * 4, &p));
  ASSERT_NE(nullptr, p);
  ASSERT_SUCCESS(fill(queue, p, n, 41));
  ASSERT_SUCCESS(increment(queue, p, n));
  EXPECT_TRUE(all_equal(read(queue, p, n), 42));
  ASSERT_SUCCESS(free_async(queue, p));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

// Free then alloc on one in-order queue: the same block, and the pool does not grow.
TEST_P(urAsyncAllocTest, InOrderQueueReusesTheFreedBlock) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  ASSERT_NE(nullptr, pool);
  const size_t n = 16384;
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(alloc(queue, n * 4, &a, pool));
  ASSERT_SUCCESS(fill(queue, a, n, 7));
  ASSERT_SUCCESS(free_async(queue, a, 0, nullptr, nullptr, pool));
  const PoolStats before = stats_of(pool);
  ASSERT_SUCCESS(alloc(queue, n * 4, &b, pool));
  EXPECT_EQ(a, b) << "ordered after the free on the same in-order queue";
  EXPECT_EQ(before.reserved, stats_of(pool).reserved) << "reused, not grown";
  ASSERT_SUCCESS(fill(queue, b, n, 8));
  EXPECT_TRUE(all_equal(read(queue, b, n), 8));
  ASSERT_SUCCESS(free_async(queue, b, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

// Reuse across two queues: the second queue's alloc waits for the free's event.
TEST_P(urAsyncAllocTest, ReuseAcrossQueuesThroughTheWaitList) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  ur_queue_handle_t other = make_queue();
  ASSERT_NE(nullptr, other);
  const size_t n = 16384;
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(alloc(queue, n * 4, &a, pool));
  ASSERT_SUCCESS(fill(queue, a, n, 1));
  ur_event_handle_t *freed = new_event();
  ASSERT_SUCCESS(free_async(queue, a, 0, nullptr, freed, pool));
  const size_t reserved = stats_of(pool).reserved;
  ASSERT_SUCCESS(alloc(other, n * 4, &b, pool, 1, freed));
  EXPECT_EQ(a, b);
  EXPECT_EQ(reserved, stats_of(pool).reserved);
  ASSERT_SUCCESS(fill(other, b, n, 2));
  EXPECT_TRUE(all_equal(read(other, b, n), 2));
  ASSERT_SUCCESS(free_async(other, b, 0, nullptr, nullptr, pool));
}

// An out-of-order queue: order comes from events alone.
TEST_P(urAsyncAllocTest, OutOfOrderQueueFollowsEvents) {
  if (!has_out_of_order()) GTEST_SKIP() << found().label() << " has no out-of-order queues";
  ur_queue_handle_t ooo = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  const size_t n = 16384;
  void *a = nullptr, *b = nullptr;
  ur_event_handle_t *allocated = new_event(), *filled = new_event(), *bumped = new_event(), *freed = new_event(),
                    *again = new_event();
  ASSERT_SUCCESS(alloc(ooo, n * 4, &a, pool, 0, nullptr, allocated));
  ASSERT_SUCCESS(fill(ooo, a, n, 5, 1, allocated, filled));
  ASSERT_SUCCESS(increment(ooo, a, n, 1, filled, bumped));
  EXPECT_TRUE(all_equal(read(ooo, a, n, 1, bumped), 6));
  ASSERT_SUCCESS(free_async(ooo, a, 1, bumped, freed, pool));
  ASSERT_SUCCESS(alloc(ooo, n * 4, &b, pool, 1, freed, again));
  EXPECT_EQ(a, b);
  ur_event_handle_t *refilled = new_event();
  ASSERT_SUCCESS(fill(ooo, b, n, 9, 1, again, refilled));
  EXPECT_TRUE(all_equal(read(ooo, b, n, 1, refilled), 9));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(*freed));
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
  ASSERT_SUCCESS(urEventGetInfo(*freed, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_COMMAND_ENQUEUE_USM_FREE_EXP, type);
  ASSERT_SUCCESS(free_async(ooo, b, 1, refilled, nullptr, pool));
}

// Rule 3: at its maximum size the pool gives an unordered alloc the block of a pending
// free and makes the alloc wait for that free. The alloc completes after the free, and
// data written after the alloc is not overwritten by the block's previous user.
TEST_P(urAsyncAllocTest, FullPoolMakesTheAllocWaitForThePendingFree) {
  const size_t bytes = 1 << 20, n = bytes / 4;
  ur_usm_pool_handle_t pool = make_pool(bytes, 0);
  ur_queue_handle_t other = make_queue(has_out_of_order() ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(alloc(queue, bytes, &a, pool));
  ASSERT_SUCCESS(fill(queue, a, n, 0));
  for (int i = 0; i < 16; ++i) ASSERT_SUCCESS(increment(queue, a, n)); // keeps the free pending a while
  ur_event_handle_t *freed = new_event(), *allocated = new_event(), *filled = new_event();
  ASSERT_SUCCESS(free_async(queue, a, 0, nullptr, freed, pool));
  ASSERT_SUCCESS(alloc(other, bytes, &b, pool, 0, nullptr, allocated));
  EXPECT_EQ(a, b) << "the only memory the pool may hold";
  ASSERT_SUCCESS(fill(other, b, n, 99, 1, allocated, filled));
  ASSERT_SUCCESS(urEventWait(1, allocated));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(*freed)) << "the alloc ran before the free";
  EXPECT_TRUE(all_equal(read(other, b, n, 1, filled), 99));
  EXPECT_LE(stats_of(pool).reserved_high, bytes);
  ASSERT_SUCCESS(free_async(other, b, 1, filled, nullptr, pool));
}

// Growth and release: memory above the release threshold goes back at urQueueFinish
// and urEventWait; memory below it is kept; SetInfoExp changes the threshold.
TEST_P(urAsyncAllocTest, ReleaseThresholdAppliesAtSynchronisation) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(queue, 1 << 20, &p, pool));
  EXPECT_GE(stats_of(pool).reserved, size_t(1) << 20) << "grown for the request";
  ASSERT_SUCCESS(free_async(queue, p, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(0u, stats_of(pool).reserved) << "threshold 0: everything goes back at urQueueFinish";

  const size_t keep = 8 << 20;
  ASSERT_SUCCESS(
      urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, const_cast<size_t *>(&keep), sizeof keep));
  EXPECT_EQ(keep, stats_of(pool).threshold);
  ASSERT_SUCCESS(alloc(queue, 1 << 20, &p, pool));
  ASSERT_SUCCESS(free_async(queue, p, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const size_t kept = stats_of(pool).reserved;
  EXPECT_GE(kept, size_t(1) << 20) << "below the threshold: kept for reuse";
  EXPECT_EQ(0u, stats_of(pool).used);

  const size_t none = 0;
  ASSERT_SUCCESS(
      urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, const_cast<size_t *>(&none), sizeof none));
  ur_event_handle_t *freed = new_event();
  ASSERT_SUCCESS(alloc(queue, 4096, &p, pool));
  ASSERT_SUCCESS(free_async(queue, p, 0, nullptr, freed, pool));
  ASSERT_SUCCESS(urEventWait(1, freed));
  EXPECT_EQ(0u, stats_of(pool).reserved) << "urEventWait is a synchronisation point too";
}

// Trim gives back what is free, down to the floor asked for, never memory in use.
TEST_P(urAsyncAllocTest, TrimKeepsWhatIsInUse) {
  if (kind() == UR_USM_TYPE_HOST) GTEST_SKIP() << "urUSMPoolTrimToExp takes a device pool; host memory has none";
  ur_usm_pool_handle_t pool = make_pool(0, 64 << 20);
  const size_t n = 1024;
  void *kept = nullptr, *big = nullptr;
  ASSERT_SUCCESS(alloc(queue, n * 4, &kept, pool));
  ASSERT_SUCCESS(fill(queue, kept, n, 3));
  ASSERT_SUCCESS(alloc(queue, 6 << 20, &big, pool));
  ASSERT_SUCCESS(free_async(queue, big, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const PoolStats before = stats_of(pool);
  EXPECT_GE(before.reserved, (size_t(6) << 20) + n * 4);
  ASSERT_SUCCESS(urUSMPoolTrimToExp(context, device(), pool, before.reserved));
  EXPECT_EQ(before.reserved, stats_of(pool).reserved) << "nothing above the floor";
  ASSERT_SUCCESS(urUSMPoolTrimToExp(context, device(), pool, 0));
  const PoolStats after = stats_of(pool);
  EXPECT_LT(after.reserved, before.reserved);
  EXPECT_GE(after.reserved, after.used);
  EXPECT_EQ(before.used, after.used);
  EXPECT_TRUE(all_equal(read(queue, kept, n), 3)) << "a live block survives the trim";
  ASSERT_SUCCESS(free_async(queue, kept, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  ASSERT_SUCCESS(urUSMPoolTrimToExp(context, device(), pool, 0));
  EXPECT_EQ(0u, stats_of(pool).reserved);
}

// Limits: the pool never reserves more than its maximum; a request it cannot meet
// fails with OUT_OF_*_MEMORY and changes nothing.
TEST_P(urAsyncAllocTest, MaximumSizeIsNeverExceeded) {
  const size_t max = 4 << 20;
  ur_usm_pool_handle_t pool = make_pool(max, 0);
  EXPECT_EQ(max, stats_of(pool).max_size);
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(alloc(queue, 3 << 20, &a, pool));
  const PoolStats before = stats_of(pool);
  void *untouched = reinterpret_cast<void *>(0x1000);
  EXPECT_EQ(out_of_memory(), alloc(queue, 3 << 20, &untouched, pool));
  EXPECT_EQ(out_of_memory(), alloc(queue, max + 1, &untouched, pool)) << "past the maximum size";
  EXPECT_EQ(reinterpret_cast<void *>(0x1000), untouched);
  EXPECT_EQ(before, stats_of(pool));
  ASSERT_SUCCESS(alloc(queue, 100, &b, pool));
  EXPECT_LE(stats_of(pool).reserved_high, max);
  const size_t too_big = max + 1;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP,
                                                               const_cast<size_t *>(&too_big), sizeof too_big))
      << "a threshold above the maximum size";
  ASSERT_SUCCESS(free_async(queue, a, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(free_async(queue, b, 0, nullptr, nullptr, pool));
}

// Statistics are exact: used and reserved move with every alloc and free, high-water
// marks follow, and SetInfoExp resets them to the current values.
TEST_P(urAsyncAllocTest, StatisticsAreExact) {
  ur_usm_pool_handle_t pool = make_pool(0, 64 << 20);
  const PoolStats fresh{0, 0, 0, 0, 64 << 20, 0};
  EXPECT_EQ(fresh, stats_of(pool)) << "a new pool";
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(alloc(queue, 1000, &a, pool));
  const PoolStats one = stats_of(pool);
  ASSERT_SUCCESS(alloc(queue, 5000, &b, pool));
  const PoolStats two = stats_of(pool);
  EXPECT_GE(one.used, 1000u);
  EXPECT_GE(two.used - one.used, 5000u);
  EXPECT_EQ(two.used, two.used_high);
  EXPECT_GE(two.reserved, two.used);
  EXPECT_EQ(two.reserved, two.reserved_high);
  ASSERT_SUCCESS(free_async(queue, a, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const PoolStats freed = stats_of(pool);
  EXPECT_EQ(two.used - one.used, freed.used) << "exactly b's share is left";
  EXPECT_EQ(two.used, freed.used_high);
  const size_t any = 0;
  ASSERT_SUCCESS(urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, const_cast<size_t *>(&any), sizeof any));
  EXPECT_EQ(freed.used, stats_of(pool).used_high);
  ASSERT_SUCCESS(free_async(queue, b, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(0u, stats_of(pool).used);
  if (kind() != UR_USM_TYPE_HOST) {
    ASSERT_SUCCESS(urUSMPoolTrimToExp(context, device(), pool, 0));
  }
  ASSERT_SUCCESS(urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP, const_cast<size_t *>(&any), sizeof any));
  const PoolStats reset = stats_of(pool);
  EXPECT_EQ(reset.reserved, reset.reserved_high);
}

// pPool == NULL: the device's current pool (device, shared) or the context's host pool.
TEST_P(urAsyncAllocTest, NullPoolMeansTheCurrentPool) {
  void *a = nullptr, *b = nullptr;
  if (kind() == UR_USM_TYPE_HOST) {
    ASSERT_SUCCESS(alloc(queue, 256, &a));
    ASSERT_SUCCESS(alloc(queue, 256, &b));
    ur_usm_pool_handle_t host = alloc_info<ur_usm_pool_handle_t>(a, UR_USM_ALLOC_INFO_POOL);
    ASSERT_NE(nullptr, host) << "host memory comes from the context's host pool";
    EXPECT_EQ(host, alloc_info<ur_usm_pool_handle_t>(b, UR_USM_ALLOC_INFO_POOL));
    EXPECT_GE(stats_of(host).used, 512u);
  } else {
    ur_usm_pool_handle_t mine = make_pool(0, 0);
    ASSERT_SUCCESS(urUSMPoolSetDevicePoolExp(context, device(), mine));
    ASSERT_SUCCESS(alloc(queue, 256, &a));
    EXPECT_EQ(mine, alloc_info<ur_usm_pool_handle_t>(a, UR_USM_ALLOC_INFO_POOL));
    EXPECT_GE(stats_of(mine).used, 256u);
    ur_usm_pool_handle_t def = nullptr;
    ASSERT_SUCCESS(urUSMPoolGetDefaultDevicePoolExp(context, device(), &def));
    ASSERT_SUCCESS(urUSMPoolSetDevicePoolExp(context, device(), def));
    ASSERT_SUCCESS(alloc(queue, 256, &b));
    EXPECT_EQ(def, alloc_info<ur_usm_pool_handle_t>(b, UR_USM_ALLOC_INFO_POOL));
  }
  ASSERT_SUCCESS(free_async(queue, a));
  ASSERT_SUCCESS(free_async(queue, b));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

// urUSMGetMemAllocInfo answers for stream-ordered memory as for any USM.
TEST_P(urAsyncAllocTest, AllocInfoAnswers) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(queue, 1000, &p, pool));
  const char *inside = static_cast<char *>(p) + 999;
  EXPECT_EQ(kind(), alloc_info<ur_usm_type_t>(inside, UR_USM_ALLOC_INFO_TYPE));
  EXPECT_EQ(p, alloc_info<void *>(inside, UR_USM_ALLOC_INFO_BASE_PTR));
  EXPECT_GE(alloc_info<size_t>(p, UR_USM_ALLOC_INFO_SIZE), 1000u);
  EXPECT_EQ(kind() == UR_USM_TYPE_HOST ? nullptr : device(),
            alloc_info<ur_device_handle_t>(p, UR_USM_ALLOC_INFO_DEVICE));
  EXPECT_EQ(pool, alloc_info<ur_usm_pool_handle_t>(p, UR_USM_ALLOC_INFO_POOL));
  ASSERT_SUCCESS(free_async(queue, p, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, alloc_info<ur_usm_type_t>(p, UR_USM_ALLOC_INFO_TYPE)) << "freed";
}

// A plain urUSMFree of a stream-ordered block returns it at once: any queue may take
// it without ordering.
TEST_P(urAsyncAllocTest, SynchronousFreeReturnsTheBlockAtOnce) {
  ur_usm_pool_handle_t pool = make_pool(0, 16 << 20);
  ur_queue_handle_t other = make_queue();
  void *p = nullptr, *q = nullptr;
  ur_event_handle_t *allocated = new_event();
  ASSERT_SUCCESS(alloc(queue, 4096, &p, pool, 0, nullptr, allocated));
  ASSERT_SUCCESS(urEventWait(1, allocated));
  const size_t used = stats_of(pool).used;
  ASSERT_SUCCESS(urUSMFree(context, p));
  EXPECT_EQ(0u, stats_of(pool).used);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, p)) << "second free";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, p)) << "already freed";
  ASSERT_SUCCESS(alloc(other, 4096, &q, pool));
  EXPECT_EQ(p, q) << "free memory, no ordering needed";
  EXPECT_EQ(used, stats_of(pool).used);
  ASSERT_SUCCESS(free_async(other, q, 0, nullptr, nullptr, pool));
}

// A pool destroyed with allocations live stays usable for them; its handle is gone.
TEST_P(urAsyncAllocTest, DestroyWithLiveAllocationsDefers) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  const size_t n = 1024;
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(queue, n * 4, &p, pool));
  ASSERT_SUCCESS(destroy_pool(pool));
  if (kind() != UR_USM_TYPE_HOST) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMPoolDestroyExp(context, device(), pool)) << "destroyed already";
    void *q = nullptr;
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, alloc(queue, 64, &q, pool)) << "a destroyed pool";
  }
  ASSERT_SUCCESS(fill(queue, p, n, 13));
  EXPECT_TRUE(all_equal(read(queue, p, n), 13)) << "still usable";
  ASSERT_SUCCESS(free_async(queue, p));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, alloc_info<ur_usm_type_t>(p, UR_USM_ALLOC_INFO_TYPE));
}

// Releasing a queue completes its pending frees: afterwards nothing is pending, so a
// synchronisation point with threshold 0 gives every byte back.
TEST_P(urAsyncAllocTest, QueueReleaseCompletesPendingFrees) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), 0, &q));
  const size_t n = 1 << 18;
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(q, n * 4, &p, pool));
  ASSERT_SUCCESS(fill(q, p, n, 0));
  for (int i = 0; i < 8; ++i) ASSERT_SUCCESS(increment(q, p, n));
  ASSERT_SUCCESS(free_async(q, p, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueRelease(q));
  ASSERT_SUCCESS(urQueueFinish(queue)); // a synchronisation point of the context
  EXPECT_EQ(0u, stats_of(pool).reserved);
}

// Free-threaded: threads with a queue each run alloc -> fill -> increment -> free
// pipelines from one pool.
TEST_P(urAsyncAllocTest, ThreadsShareOnePool) {
  ur_usm_pool_handle_t pool = make_pool(0, 16 << 20);
  const int threads = 4, rounds = 25;
  const size_t n = 2048;
  const bool ooo = has_out_of_order();
  std::vector<ur_queue_handle_t> qs;
  for (int t = 0; t < threads; ++t)
    qs.push_back(make_queue(ooo && t % 2 ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0));
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int r = 0; r < rounds && failures == 0; ++r) {
        void *p = nullptr;
        ur_event_handle_t allocated = nullptr, filled = nullptr, bumped = nullptr;
        uint32_t value = uint32_t(t * 1000 + r);
        bool ok = alloc(qs[t], n * 4 * (1 + r % 3), &p, pool, 0, nullptr, &allocated) == UR_RESULT_SUCCESS &&
                  fill(qs[t], p, n, value, 1, &allocated, &filled) == UR_RESULT_SUCCESS &&
                  increment(qs[t], p, n, 1, &filled, &bumped) == UR_RESULT_SUCCESS;
        ok = ok && all_equal(read(qs[t], p, n, 1, &bumped), value + 1);
        ok = ok && free_async(qs[t], p, 1, &bumped, nullptr, pool) == UR_RESULT_SUCCESS;
        for (ur_event_handle_t e : {allocated, filled, bumped})
          if (e) urEventRelease(e);
        if (!ok) {
          ADD_FAILURE() << "thread " << t << " round " << r;
          ++failures;
        }
      }
    });
  for (auto &w : workers) w.join();
  for (ur_queue_handle_t q : qs) ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_EQ(0u, stats_of(pool).used);
}

// A request past UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE from the default pool gets the answer
// urUSM*Alloc gives the same size: INVALID_USM_SIZE, on every adapter (Level Zero
// answered OUT_OF_*_MEMORY from its pool's growth before).
TEST_P(urAsyncAllocTest, PastTheDeviceMaximumIsInvalidUsmSizeAsForTheSynchronousAlloc) {
  uint64_t max = 0;
  ASSERT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, sizeof(max), &max, nullptr));
  if (max == 0 || max >= SIZE_MAX - 1) GTEST_SKIP() << "no finite UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE";
  const size_t size = size_t(max) + 1;
  void *sync_out = nullptr;
  ur_result_t sync = UR_RESULT_SUCCESS;
  switch (kind()) {
  case UR_USM_TYPE_HOST: sync = urUSMHostAlloc(context, nullptr, nullptr, size, &sync_out); break;
  case UR_USM_TYPE_SHARED: sync = urUSMSharedAlloc(context, device(), nullptr, nullptr, size, &sync_out); break;
  default: sync = urUSMDeviceAlloc(context, device(), nullptr, nullptr, size, &sync_out); break;
  }
  if (sync == UR_RESULT_SUCCESS) urUSMFree(context, sync_out);
  ASSERT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, sync) << "urUSM*Alloc of MAX_MEM_ALLOC_SIZE + 1";
  void *out = reinterpret_cast<void *>(0x1000);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, alloc(queue, size, &out));
  EXPECT_EQ(reinterpret_cast<void *>(0x1000), out);
}

// ---- bad input: its own result, and the pool as it was ------------------------------------

TEST_P(urAsyncAllocTest, BadInputGetsItsErrorAndChangesNothing) {
  ur_usm_pool_handle_t pool = make_pool(4 << 20, 0);
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(queue, 4096, &p, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const PoolStats before = stats_of(pool);
  auto unchanged = [&](const char *what) { EXPECT_EQ(before, stats_of(pool)) << "after " << what; };
  void *out = reinterpret_cast<void *>(0x1000);

  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, alloc(queue, 0, &out, pool));
  unchanged("size 0");
  EXPECT_EQ(out_of_memory(), alloc(queue, (4 << 20) + 1, &out, pool));
  unchanged("a request past the maximum size");
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, alloc(queue, 64, &out, pool, 1, nullptr));
  ur_event_handle_t null_event = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, alloc(queue, 64, &out, pool, 1, &null_event));
  unchanged("an inconsistent wait list (alloc)");
  EXPECT_EQ(reinterpret_cast<void *>(0x1000), out);

  int on_stack = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, &on_stack));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, static_cast<char *>(p) + 64)) << "interior";
  void *plain = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), kind(), 64, &plain));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, plain)) << "a plain urUSM*Alloc";
  ASSERT_SUCCESS(urUSMFree(context, plain));
  unchanged("frees of pointers no pool owns");
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, free_async(queue, p, 1, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, free_async(queue, p, 1, &null_event));
  unchanged("an inconsistent wait list (free)");

  // Another pool of the same context does not own the block.
  ur_usm_pool_handle_t second = make_pool(0, 0);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, p, 0, nullptr, nullptr, second));
  unchanged("a free naming a pool that does not own the block");

  // A pool of another context.
  ur_context_handle_t other_context = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other_context));
  ur_usm_pool_handle_t foreign = make_pool(0, 0, 0, other_context);
  ASSERT_NE(nullptr, foreign);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, alloc(queue, 64, &out, foreign));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, free_async(queue, p, 0, nullptr, nullptr, foreign));
  if (kind() != UR_USM_TYPE_HOST) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urUSMPoolSetDevicePoolExp(context, device(), foreign));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urUSMPoolTrimToExp(context, device(), foreign, 0));
  }
  ASSERT_SUCCESS(destroy_pool_call(foreign, other_context));
  ASSERT_SUCCESS(urContextRelease(other_context));
  unchanged("a pool of another context");

  // A pool of the wrong kind of memory.
  if (kind() == UR_USM_TYPE_HOST) {
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
    ur_usm_pool_handle_t device_pool = nullptr;
    ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &device_pool));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, alloc(queue, 64, &out, device_pool)) << "a device pool";
    ASSERT_SUCCESS(urUSMPoolDestroyExp(context, device(), device_pool));
  } else if (conf::usm_supported(device(), UR_USM_TYPE_HOST)) {
    void *h = nullptr;
    ASSERT_SUCCESS(urEnqueueUSMHostAllocExp(queue, nullptr, 64, nullptr, 0, nullptr, &h, nullptr));
    ur_usm_pool_handle_t host_pool = alloc_info<ur_usm_pool_handle_t>(h, UR_USM_ALLOC_INFO_POOL);
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, alloc(queue, 64, &out, host_pool)) << "the host pool";
    ASSERT_SUCCESS(free_async(queue, h));
  }
  unchanged("a pool of the wrong kind");

  // The default pool belongs to the context.
  ur_usm_pool_handle_t def = nullptr;
  ASSERT_SUCCESS(urUSMPoolGetDefaultDevicePoolExp(context, device(), &def));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMPoolDestroyExp(context, device(), def));

  // Read-only properties.
  size_t value = 0;
  for (ur_usm_pool_info_t ro :
       {UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP, UR_USM_POOL_INFO_USED_CURRENT_EXP})
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, urUSMPoolSetInfoExp(pool, ro, &value, sizeof value)) << ro;
  unchanged("writes of read-only properties");

  // Double free.
  ASSERT_SUCCESS(free_async(queue, p, 0, nullptr, nullptr, pool));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const PoolStats after_free = stats_of(pool);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, p, 0, nullptr, nullptr, pool));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, p));
  EXPECT_EQ(after_free, stats_of(pool)) << "after a double free";
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urAsyncAllocTest, ur_usm_type_t,
                                   ::testing::Values(UR_USM_TYPE_DEVICE, UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED),
                                   KindName);

// ---- the pools of a device ------------------------------------------------------------------

class urAsyncPoolTest : public conf::ContextTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::ContextTest);
    if (!async_supported(device()))
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP";
  }
};

TEST_P(urAsyncPoolTest, DefaultPoolIsTheSameHandleEachTime) {
  ur_usm_pool_handle_t a = nullptr, b = nullptr, current = nullptr;
  ASSERT_SUCCESS(urUSMPoolGetDefaultDevicePoolExp(context, device(), &a));
  ASSERT_SUCCESS(urUSMPoolGetDefaultDevicePoolExp(context, device(), &b));
  ASSERT_NE(nullptr, a);
  EXPECT_EQ(a, b);
  ASSERT_SUCCESS(urUSMPoolGetDevicePoolExp(context, device(), &current));
  EXPECT_EQ(a, current) << "the current pool starts as the default";
  ur_context_handle_t owner = nullptr;
  ASSERT_SUCCESS(urUSMPoolGetInfoExp(a, UR_USM_POOL_INFO_CONTEXT, &owner, nullptr));
  EXPECT_EQ(context, owner);
}

TEST_P(urAsyncPoolTest, SetAndGetTheCurrentPool) {
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t mine = nullptr, current = nullptr, def = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &mine));
  ASSERT_SUCCESS(urUSMPoolSetDevicePoolExp(context, device(), mine));
  ASSERT_SUCCESS(urUSMPoolGetDevicePoolExp(context, device(), &current));
  EXPECT_EQ(mine, current);
  ASSERT_SUCCESS(urUSMPoolDestroyExp(context, device(), mine));
  ASSERT_SUCCESS(urUSMPoolGetDevicePoolExp(context, device(), &current));
  ASSERT_SUCCESS(urUSMPoolGetDefaultDevicePoolExp(context, device(), &def));
  EXPECT_EQ(def, current) << "a destroyed pool is no longer current";
}

// Pools and devices must match: a device pool of another device, or a device not in
// the context, is INVALID_DEVICE.
TEST_P(urAsyncPoolTest, PoolOfAnotherDevice) {
  ur_device_handle_t other = nullptr;
  for (const urinfo::FoundDevice &d : conf::devices())
    if (d.platform == platform() && d.device != device() && async_supported(d.device)) other = d.device;
  if (!other) GTEST_SKIP() << found().label() << " is the only device of its platform with stream-ordered allocation";
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, urUSMPoolCreateExp(context, other, &desc, &pool))
      << "a device not in the context";
  ur_device_handle_t both[2] = {device(), other};
  ur_context_handle_t shared = nullptr;
  ASSERT_SUCCESS(urContextCreate(2, both, nullptr, &shared));
  ASSERT_SUCCESS(urUSMPoolCreateExp(shared, other, &desc, &pool));
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(shared, device(), nullptr, &q));
  void *p = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, urEnqueueUSMDeviceAllocExp(q, pool, 64, nullptr, 0, nullptr, &p, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, urUSMPoolSetDevicePoolExp(shared, device(), pool));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, urUSMPoolTrimToExp(shared, device(), pool, 0));
  EXPECT_EQ(0u, stats_of(pool).used);
  ASSERT_SUCCESS(urQueueRelease(q));
  ASSERT_SUCCESS(urUSMPoolDestroyExp(shared, other, pool));
  ASSERT_SUCCESS(urContextRelease(shared));
}

CONF_INSTANTIATE_DEVICE_SUITE(urAsyncPoolTest);

} // namespace
