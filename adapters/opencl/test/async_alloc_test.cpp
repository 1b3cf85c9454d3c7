// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation (urEnqueueUSM*AllocExp, urEnqueueUSMFreeExp, urUSMPool*Exp)
// on the real device, through the ordered pool core.
#include <thread>
#include <vector>

#include "adapter_fixture.hpp"

namespace ocltest {
namespace {

class AsyncAlloc : public OpenCLTest {
protected:
  void SetUp() override {
    OpenCLTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ur_bool_t async = 0;
    OCL_ASSERT_OK(
        t().Device.pfnGetInfo(device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof async, &async, nullptr));
    if (!async) GTEST_SKIP() << "the device reports no stream-ordered allocation";
    program = build_test_program();
    ASSERT_NE(nullptr, program);
    OCL_ASSERT_OK(t().Kernel.pfnCreate(program, "fill", &fill));
    OCL_ASSERT_OK(t().Kernel.pfnCreate(program, "increment", &increment));
  }
  void TearDown() override {
    for (ur_kernel_handle_t k : {fill, increment})
      if (k) {
        EXPECT_EQ(UR_RESULT_SUCCESS, t().Kernel.pfnRelease(k));
      }
    if (program) {
      EXPECT_EQ(UR_RESULT_SUCCESS, t().Program.pfnRelease(program));
    }
    OpenCLTest::TearDown();
  }
  ur_result_t alloc(ur_queue_handle_t q, size_t size, void **p, uint32_t n = 0, const ur_event_handle_t *wait = nullptr,
                    ur_event_handle_t *ev = nullptr, ur_usm_pool_handle_t pool = nullptr) {
    return t().EnqueueExp.pfnUSMDeviceAllocExp(q, pool, size, nullptr, n, wait, p, ev);
  }
  ur_result_t free_async(ur_queue_handle_t q, void *p, uint32_t n = 0, const ur_event_handle_t *wait = nullptr,
                         ur_event_handle_t *ev = nullptr) {
    return t().EnqueueExp.pfnUSMFreeExp(q, nullptr, p, n, wait, ev);
  }
  ur_result_t fill_with(ur_queue_handle_t q, void *p, size_t n, uint32_t value, uint32_t nwait = 0,
                        const ur_event_handle_t *wait = nullptr, ur_event_handle_t *ev = nullptr) {
    size_t global[1] = {n};
    return launch(q, fill, 1, global, nullptr, {pointer_arg(0, p), value_arg(1, 4, &value)}, nwait, wait, ev);
  }
  std::vector<uint32_t> read(ur_queue_handle_t q, const void *p, size_t n, uint32_t nwait = 0,
                             const ur_event_handle_t *wait = nullptr) {
    std::vector<uint32_t> out(n);
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Enqueue.pfnUSMMemcpy(q, true, out.data(), p, n * 4, nwait, wait, nullptr));
    return out;
  }
  size_t pool_stat(ur_usm_pool_handle_t pool, ur_usm_pool_info_t what) {
    size_t v = 0;
    EXPECT_EQ(UR_RESULT_SUCCESS, t().USMExp.pfnPoolGetInfoExp(pool, what, &v, nullptr));
    return v;
  }
  ur_usm_pool_handle_t make_pool(size_t max_size, size_t threshold, ur_usm_pool_flags_t flags = 0) {
    ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max_size, threshold};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, flags};
    ur_usm_pool_handle_t pool = nullptr;
    EXPECT_EQ(UR_RESULT_SUCCESS, t().USMExp.pfnPoolCreateExp(context, device, &desc, &pool));
    return pool;
  }
  bool complete(ur_event_handle_t e) {
    ur_event_status_t s{};
    EXPECT_EQ(UR_RESULT_SUCCESS,
              t().Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr));
    return s == UR_EVENT_STATUS_COMPLETE;
  }

  // A gate: an OpenCL user event as a UR event (from its native handle). Commands
  // waiting for it stay pending until open() (the adapter has no user events).
  struct Gate {
    ur_event_handle_t event = nullptr;
    void *native = nullptr;
    int32_t (*set_status)(void *, int32_t) = nullptr;
    void open() {
      if (set_status && native) set_status(native, 0); // CL_COMPLETE
      native = nullptr;
    }
  };
  Gate make_gate() {
    Gate g;
    void *cl = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL); // the library the adapter uses
    if (!cl) return g;
    auto create = reinterpret_cast<void *(*)(void *, int32_t *)>(dlsym(cl, "clCreateUserEvent"));
    g.set_status = reinterpret_cast<int32_t (*)(void *, int32_t)>(dlsym(cl, "clSetUserEventStatus"));
    ur_native_handle_t native_context = 0;
    if (!create || !g.set_status || t().Context.pfnGetNativeHandle(context, &native_context)) return g;
    int32_t err = 0;
    g.native = create(reinterpret_cast<void *>(native_context), &err);
    ur_event_native_properties_t props{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, true};
    if (g.native && t().Event.pfnCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(g.native), context, &props,
                                                        &g.event) != UR_RESULT_SUCCESS)
      g.native = nullptr;
    return g;
  }

  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t fill = nullptr, increment = nullptr;
};

TEST_F(AsyncAlloc, DeviceReportsPoolsToo) {
  ur_bool_t pools = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_USM_POOL_SUPPORT, sizeof pools, &pools, nullptr));
  EXPECT_TRUE(pools);
}

// One in-order queue: a block freed earlier on the queue is reused at once.
TEST_F(AsyncAlloc, InOrderQueueReusesTheFreedBlock) {
  const size_t n = 4096;
  void *a = nullptr, *b = nullptr;
  OCL_ASSERT_OK(alloc(queue, n * 4, &a));
  OCL_ASSERT_OK(fill_with(queue, a, n, 11));
  EXPECT_EQ(std::vector<uint32_t>(n, 11), read(queue, a, n));
  OCL_ASSERT_OK(free_async(queue, a));
  OCL_ASSERT_OK(alloc(queue, n * 4, &b));
  EXPECT_EQ(a, b); // ordered after the free on the same in-order queue
  OCL_ASSERT_OK(fill_with(queue, b, n, 12));
  EXPECT_EQ(std::vector<uint32_t>(n, 12), read(queue, b, n));
  OCL_ASSERT_OK(free_async(queue, b));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
}

// Out of order: events order alloc, kernel, free; the free's event lets a later
// alloc take the same block.
TEST_F(AsyncAlloc, OutOfOrderQueueFollowsEvents) {
  const size_t n = 1 << 14;
  void *a = nullptr, *b = nullptr;
  ur_event_handle_t allocated = nullptr, filled = nullptr, incremented = nullptr, freed = nullptr, again = nullptr;
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &a, 0, nullptr, &allocated));
  OCL_ASSERT_OK(fill_with(ooo_queue, a, n, 5, 1, &allocated, &filled));
  size_t global[1] = {n};
  OCL_ASSERT_OK(launch(ooo_queue, increment, 1, global, nullptr, {pointer_arg(0, a)}, 1, &filled, &incremented));
  EXPECT_EQ(std::vector<uint32_t>(n, 6), read(ooo_queue, a, n, 1, &incremented));
  OCL_ASSERT_OK(free_async(ooo_queue, a, 1, &incremented, &freed));
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &b, 1, &freed, &again));
  EXPECT_EQ(a, b);
  OCL_ASSERT_OK(t().Event.pfnWait(1, &again));
  EXPECT_TRUE(complete(freed));
  ur_command_t cmd{};
  OCL_ASSERT_OK(t().Event.pfnGetInfo(freed, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr));
  EXPECT_EQ(UR_COMMAND_ENQUEUE_USM_FREE_EXP, cmd);
  OCL_ASSERT_OK(t().Event.pfnGetInfo(again, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr));
  EXPECT_EQ(UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP, cmd);
  OCL_ASSERT_OK(free_async(ooo_queue, b));
  for (ur_event_handle_t e : {allocated, filled, incremented, freed, again}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
}

// Across queues of one context: B's alloc waits for A's free through its wait list.
TEST_F(AsyncAlloc, ReuseAcrossQueuesThroughTheWaitList) {
  const size_t n = 4096;
  void *a = nullptr, *b = nullptr;
  ur_event_handle_t freed = nullptr;
  OCL_ASSERT_OK(alloc(queue, n * 4, &a));
  OCL_ASSERT_OK(fill_with(queue, a, n, 1));
  OCL_ASSERT_OK(free_async(queue, a, 0, nullptr, &freed));
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &b, 1, &freed));
  EXPECT_EQ(a, b);
  OCL_ASSERT_OK(free_async(ooo_queue, b));
  OCL_ASSERT_OK(t().Event.pfnRelease(freed));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
}

// A barrier with a wait list follows only that list, also when the layer knows nothing
// of its events (here: one made from a cl_event). Before the fix its empty list of known
// events made it a barrier that follows everything before it on the queue, command C
// included, which follows a still-pending free: the next alloc on the queue then took
// the freed block while its old owner's last use had not run.
TEST_F(AsyncAlloc, BarrierWaitingForAForeignEventDoesNotOrderAfterAFree) {
  Gate hold = make_gate(), done = make_gate();
  if (!hold.event || !done.event) GTEST_SKIP() << "no OpenCL user events to hold the free";
  done.open(); // the barrier's only event: complete already
  const size_t n = 1 << 14;
  void *x = nullptr, *y = nullptr, *scratch = nullptr;
  OCL_ASSERT_OK(t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, 64, &scratch));
  ur_event_handle_t freed = nullptr;
  OCL_ASSERT_OK(alloc(queue, n * 4, &x));
  OCL_ASSERT_OK(fill_with(queue, x, n, 1, 1, &hold.event)); // x's last use, held
  OCL_ASSERT_OK(free_async(queue, x, 0, nullptr, &freed));
  OCL_ASSERT_OK(fill_with(ooo_queue, scratch, 16, 2, 1, &freed)); // C: after the free
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWaitWithBarrier(ooo_queue, 1, &done.event, nullptr));
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &y));
  const bool pending = !complete(freed);
  const char *xb = static_cast<const char *>(x), *yb = static_cast<const char *>(y);
  const bool overlaps = yb < xb + n * 4 && xb < yb + n * 4;
  if (pending) {
    EXPECT_FALSE(overlaps) << "y got x's memory while x's free was pending: the barrier waits only for an event "
                              "that had completed, so it does not order y after the free";
  }
  hold.open();
  OCL_ASSERT_OK(free_async(ooo_queue, y));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  for (ur_event_handle_t e : {freed, hold.event, done.event}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
  OCL_ASSERT_OK(t().USM.pfnFree(context, scratch));
}

// A pool at its maximum size makes an unordered alloc wait for the free that
// releases the memory (rule 3), rather than fail or hand it out early.
TEST_F(AsyncAlloc, FullPoolAddsTheFreeAsADependency) {
  const size_t bytes = 2 << 20, n = bytes / 4;
  ur_usm_pool_handle_t pool = make_pool(bytes, 0);
  ASSERT_NE(nullptr, pool);
  void *a = nullptr, *b = nullptr;
  OCL_ASSERT_OK(alloc(queue, bytes, &a, 0, nullptr, nullptr, pool));
  // Keep queue A busy so its free is still pending when B allocates.
  for (int i = 0; i < 20; ++i) OCL_ASSERT_OK(fill_with(queue, a, n, uint32_t(i)));
  ur_event_handle_t freed = nullptr, allocated = nullptr;
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, &freed));
  OCL_ASSERT_OK(alloc(ooo_queue, bytes, &b, 0, nullptr, &allocated, pool));
  EXPECT_EQ(a, b);
  OCL_ASSERT_OK(t().Event.pfnWait(1, &allocated));
  EXPECT_TRUE(complete(freed)); // the alloc ran only after the free
  OCL_ASSERT_OK(fill_with(ooo_queue, b, n, 99, 1, &allocated));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  EXPECT_EQ(std::vector<uint32_t>(n, 99), read(ooo_queue, b, n));
  EXPECT_LE(pool_stat(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP), bytes);
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(ooo_queue, pool, b, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  OCL_ASSERT_OK(t().Event.pfnRelease(freed));
  OCL_ASSERT_OK(t().Event.pfnRelease(allocated));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
}

TEST_F(AsyncAlloc, LimitsAndStatisticsAreExact) {
  const size_t max = 4 << 20;
  ur_usm_pool_handle_t pool = make_pool(max, 0);
  ASSERT_NE(nullptr, pool);
  EXPECT_EQ(max, pool_stat(pool, UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP));
  void *a = nullptr, *b = nullptr;
  OCL_ASSERT_OK(alloc(queue, 3 << 20, &a, 0, nullptr, nullptr, pool));
  EXPECT_EQ(size_t(3) << 20, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, alloc(queue, 3 << 20, &b, 0, nullptr, nullptr, pool));
  EXPECT_EQ(size_t(3) << 20, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP)); // nothing changed
  OCL_ASSERT_OK(alloc(queue, 100, &b, 0, nullptr, nullptr, pool));
  EXPECT_EQ((size_t(3) << 20) + 128, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP)); // 100 -> 128
  EXPECT_LE(pool_stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), max);
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, b, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue)); // threshold 0: everything goes back
  EXPECT_EQ(0u, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  EXPECT_EQ(0u, pool_stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP));
  EXPECT_EQ((size_t(3) << 20) + 128, pool_stat(pool, UR_USM_POOL_INFO_USED_HIGH_EXP));
  size_t zero = 0;
  OCL_ASSERT_OK(t().USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &zero, sizeof zero));
  EXPECT_EQ(0u, pool_stat(pool, UR_USM_POOL_INFO_USED_HIGH_EXP));
  size_t too_big = max + 1;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            t().USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &too_big, sizeof too_big));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
}

TEST_F(AsyncAlloc, ThresholdKeepsMemoryAndTrimReleasesIt) {
  ur_usm_pool_handle_t pool = make_pool(0, 8 << 20);
  void *a = nullptr;
  OCL_ASSERT_OK(alloc(queue, 1 << 20, &a, 0, nullptr, nullptr, pool));
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  size_t kept = pool_stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP);
  EXPECT_GE(kept, size_t(1) << 20); // below the threshold: kept for reuse
  OCL_ASSERT_OK(t().USMExp.pfnPoolTrimToExp(context, device, pool, 0));
  EXPECT_EQ(0u, pool_stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
}

TEST_F(AsyncAlloc, DefaultAndCurrentPools) {
  ur_usm_pool_handle_t d1 = nullptr, d2 = nullptr, cur = nullptr;
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDefaultDevicePoolExp(context, device, &d1));
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDefaultDevicePoolExp(context, device, &d2));
  EXPECT_EQ(d1, d2);
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDevicePoolExp(context, device, &cur));
  EXPECT_EQ(d1, cur);
  ur_usm_pool_handle_t mine = make_pool(0, 0);
  OCL_ASSERT_OK(t().USMExp.pfnPoolSetDevicePoolExp(context, device, mine));
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDevicePoolExp(context, device, &cur));
  EXPECT_EQ(mine, cur);
  // pPool == NULL takes the current pool.
  void *p = nullptr;
  OCL_ASSERT_OK(alloc(queue, 256, &p));
  ur_usm_pool_handle_t owner = nullptr;
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_POOL, sizeof owner, &owner, nullptr));
  EXPECT_EQ(mine, owner);
  OCL_ASSERT_OK(free_async(queue, p));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, mine));
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDevicePoolExp(context, device, &cur));
  EXPECT_EQ(d1, cur); // back to the default
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, t().USMExp.pfnPoolDestroyExp(context, device, d1));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
}

TEST_F(AsyncAlloc, AllocationsAnswerAllocInfo) {
  void *p = nullptr;
  OCL_ASSERT_OK(alloc(queue, 1000, &p));
  ur_usm_type_t type{};
  size_t size = 0;
  void *base = nullptr;
  ur_device_handle_t d = nullptr;
  char *inside = static_cast<char *>(p) + 999;
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, inside, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_DEVICE, type);
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, inside, UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr));
  EXPECT_EQ(p, base);
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_SIZE, sizeof size, &size, nullptr));
  EXPECT_EQ(1000u, size);
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_DEVICE, sizeof d, &d, nullptr));
  EXPECT_EQ(device, d);
  OCL_ASSERT_OK(free_async(queue, p));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
}

TEST_F(AsyncAlloc, BadInputIsRefusedAndChangesNothing) {
  void *p = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, alloc(queue, 0, &p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, alloc(queue, 64, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, alloc(queue, 64, &p, 1, nullptr));
  ur_exp_async_usm_alloc_properties_t bad{UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES, nullptr, 0x100};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            t().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, 64, &bad, 0, nullptr, &p, nullptr));
  OCL_ASSERT_OK(alloc(queue, 256, &p));
  ur_usm_pool_handle_t pool = nullptr;
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDefaultDevicePoolExp(context, device, &pool));
  size_t used = pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP);
  int on_stack = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, &on_stack));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, static_cast<char *>(p) + 64));
  // Memory from urUSMDeviceAlloc is not stream-ordered.
  void *plain = nullptr;
  OCL_ASSERT_OK(t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, 64, &plain));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, plain));
  OCL_ASSERT_OK(t().USM.pfnFree(context, plain));
  // A pool that does not own the pointer.
  ur_usm_pool_handle_t other = make_pool(0, 0);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, t().EnqueueExp.pfnUSMFreeExp(queue, other, p, 0, nullptr, nullptr));
  // A device pool cannot serve host memory.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            t().EnqueueExp.pfnUSMHostAllocExp(queue, other, 64, nullptr, 0, nullptr, &plain, nullptr));
  EXPECT_EQ(used, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  OCL_ASSERT_OK(free_async(queue, p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, free_async(queue, p)); // double free
  // A pool of another context.
  ur_context_handle_t other_context = nullptr;
  OCL_ASSERT_OK(t().Context.pfnCreate(1, &device, nullptr, &other_context));
  ur_usm_pool_handle_t foreign = nullptr;
  OCL_ASSERT_OK(t().USMExp.pfnPoolGetDefaultDevicePoolExp(other_context, device, &foreign));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, alloc(queue, 64, &p, 0, nullptr, nullptr, foreign));
  OCL_ASSERT_OK(t().Context.pfnRelease(other_context));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, other));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
}

// Destroying a pool with live allocations waits for their frees.
TEST_F(AsyncAlloc, DestroyIsDeferredWhileAllocationsLive) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  void *p = nullptr;
  OCL_ASSERT_OK(alloc(queue, 4096, &p, 0, nullptr, nullptr, pool));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
  // Destroyed, though alive for its allocation: a second destroy is refused.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, t().USMExp.pfnPoolDestroyExp(context, device, pool));
  OCL_ASSERT_OK(fill_with(queue, p, 1024, 3)); // still usable
  EXPECT_EQ(std::vector<uint32_t>(1024, 3), read(queue, p, 1024));
  OCL_ASSERT_OK(free_async(queue, p)); // the pool goes now
  ur_usm_type_t type{};
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type);
}

TEST_F(AsyncAlloc, SynchronousFreeReturnsTheBlockAtOnce) {
  void *p = nullptr, *q = nullptr;
  ur_event_handle_t allocated = nullptr;
  OCL_ASSERT_OK(alloc(queue, 512, &p, 0, nullptr, &allocated));
  OCL_ASSERT_OK(t().Event.pfnWait(1, &allocated));
  OCL_ASSERT_OK(t().USM.pfnFree(context, p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, t().USM.pfnFree(context, p));
  OCL_ASSERT_OK(alloc(ooo_queue, 512, &q)); // any queue, no ordering needed
  EXPECT_EQ(p, q);
  OCL_ASSERT_OK(free_async(ooo_queue, q));
  OCL_ASSERT_OK(t().Event.pfnRelease(allocated));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
}

TEST_F(AsyncAlloc, HostAndSharedMemoryAreHostAccessible) {
  for (ur_usm_type_t kind : {UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED}) {
    void *p = nullptr;
    ur_event_handle_t allocated = nullptr;
    ur_result_t r =
        kind == UR_USM_TYPE_HOST
            ? t().EnqueueExp.pfnUSMHostAllocExp(queue, nullptr, 4096, nullptr, 0, nullptr, &p, &allocated)
            : t().EnqueueExp.pfnUSMSharedAllocExp(queue, nullptr, 4096, nullptr, 0, nullptr, &p, &allocated);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) continue; // that kind of USM is absent
    OCL_ASSERT_OK(r);
    OCL_ASSERT_OK(fill_with(queue, p, 1024, 77, 1, &allocated));
    OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
    EXPECT_EQ(77u, static_cast<uint32_t *>(p)[1023]);
    ur_usm_type_t type{};
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
    EXPECT_EQ(kind, type);
    OCL_ASSERT_OK(free_async(queue, p));
    OCL_ASSERT_OK(t().Event.pfnRelease(allocated));
  }
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
}

TEST_F(AsyncAlloc, ZeroInitializedPoolZeroesReusedBlocks) {
  ur_usm_pool_handle_t pool = make_pool(0, 16 << 20, UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK);
  void *p = nullptr, *q = nullptr;
  OCL_ASSERT_OK(alloc(queue, 4096, &p, 0, nullptr, nullptr, pool));
  OCL_ASSERT_OK(fill_with(queue, p, 1024, 0xdeadbeef));
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, p, 0, nullptr, nullptr));
  OCL_ASSERT_OK(alloc(queue, 4096, &q, 0, nullptr, nullptr, pool));
  EXPECT_EQ(p, q);
  EXPECT_EQ(std::vector<uint32_t>(1024, 0), read(queue, q, 1024));
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, q, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
}

// Reuse rule 1 through the context's ordering knowledge: a block freed on one queue
// goes to an alloc on another queue that waits for a barrier, or an events-wait,
// after the free, while the free is still pending (neither completed nor a
// dependency the pool had to add).
TEST_F(AsyncAlloc, ReuseAcrossQueuesThroughBarriersAndEventsWaits) {
  const char *how[] = {"barrier on the in-order queue", "events-wait naming the free",
                       "barrier on the out-of-order queue"};
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(how[variant]);
    ur_queue_handle_t qa = variant == 2 ? ooo_queue : queue, qb = variant == 2 ? queue : ooo_queue;
    Gate gate = make_gate();
    ASSERT_NE(nullptr, gate.event);
    ur_usm_pool_handle_t pool = make_pool(0, 0); // may grow: rule 3 never needed
    void *a = nullptr, *b = nullptr, *unordered = nullptr;
    ur_event_handle_t freed = nullptr, after = nullptr;
    OCL_ASSERT_OK(alloc(qa, 4096, &a, 0, nullptr, nullptr, pool));
    OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(qa, pool, a, 1, &gate.event, &freed));
    if (variant == 1)
      OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(qa, 1, &freed, &after));
    else
      OCL_ASSERT_OK(t().Enqueue.pfnEventsWaitWithBarrier(qa, 0, nullptr, &after));
    OCL_ASSERT_OK(alloc(qb, 4096, &unordered, 0, nullptr, nullptr, pool));
    EXPECT_NE(a, unordered); // not ordered after the pending free
    OCL_ASSERT_OK(alloc(qb, 4096, &b, 1, &after, nullptr, pool));
    EXPECT_EQ(a, b); // ordered after it through `after`
    EXPECT_FALSE(complete(freed));
    gate.open();
    OCL_ASSERT_OK(t().Queue.pfnFinish(qa));
    OCL_ASSERT_OK(t().Queue.pfnFinish(qb));
    OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(qb, pool, b, 0, nullptr, nullptr));
    OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(qb, pool, unordered, 0, nullptr, nullptr));
    OCL_ASSERT_OK(t().Queue.pfnFinish(qb));
    for (ur_event_handle_t e : {freed, after, gate.event}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
    OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
  }
}

// A block an alloc took over from a pending free (rule 1) stays pending on that free
// when the new owner frees it synchronously: nobody unordered gets it before.
TEST_F(AsyncAlloc, SynchronousFreeOfATakenOverBlockKeepsThePendingFree) {
  Gate gate = make_gate();
  ASSERT_NE(nullptr, gate.event);
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  void *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  OCL_ASSERT_OK(alloc(queue, 4096, &a, 0, nullptr, nullptr, pool));
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 1, &gate.event, nullptr));
  OCL_ASSERT_OK(alloc(queue, 4096, &b, 0, nullptr, nullptr, pool));
  EXPECT_EQ(a, b); // same in-order queue
  OCL_ASSERT_OK(t().USM.pfnFree(context, b));
  OCL_ASSERT_OK(alloc(ooo_queue, 4096, &c, 0, nullptr, nullptr, pool));
  EXPECT_NE(a, c); // still pending on the gated free
  gate.open();
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  OCL_ASSERT_OK(alloc(ooo_queue, 4096, &d, 0, nullptr, nullptr, pool));
  EXPECT_EQ(a, d); // the free completed
  OCL_ASSERT_OK(t().USM.pfnFree(context, c));
  OCL_ASSERT_OK(t().USM.pfnFree(context, d));
  OCL_ASSERT_OK(t().Event.pfnRelease(gate.event));
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
}

// One budget per pool over every memory class: a 4 MiB urUSMPoolCreate pool holding
// 3 MiB of host memory has no room for 3 MiB of device memory, synchronous or not.
TEST_F(AsyncAlloc, PoolLimitIsSharedByEveryKind) {
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, 4 << 20, 0};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t pool = nullptr;
  OCL_ASSERT_OK(t().USM.pfnPoolCreate(context, &desc, &pool));
  void *h = nullptr, *d = nullptr;
  ur_result_t r = t().USM.pfnHostAlloc(context, nullptr, pool, 3 << 20, &h);
  if (r == UR_RESULT_ERROR_INVALID_OPERATION || r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    OCL_ASSERT_OK(t().USM.pfnPoolRelease(pool));
    GTEST_SKIP() << "no host USM";
  }
  OCL_ASSERT_OK(r);
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, t().USM.pfnDeviceAlloc(context, device, nullptr, pool, 3 << 20, &d));
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, alloc(queue, 3 << 20, &d, 0, nullptr, nullptr, pool));
  EXPECT_LE(pool_stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), size_t(4) << 20);
  EXPECT_EQ(size_t(3) << 20, pool_stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  OCL_ASSERT_OK(t().USM.pfnFree(context, h));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue)); // threshold 0: the host memory goes back
  OCL_ASSERT_OK(t().USM.pfnDeviceAlloc(context, device, nullptr, pool, 3 << 20, &d));
  OCL_ASSERT_OK(t().USM.pfnFree(context, d));
  OCL_ASSERT_OK(t().USM.pfnPoolRelease(pool));
}

// Threads each run alloc -> fill -> increment -> free pipelines on their own queue,
// all drawing from the one default pool.
TEST_F(AsyncAlloc, ThreadsShareTheDefaultPool) {
  const int threads = 4, rounds = 40;
  const size_t n = 2048;
  std::vector<std::thread> pool;
  for (int th = 0; th < threads; ++th)
    pool.emplace_back([&, th] {
      ur_queue_handle_t q = nullptr;
      ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                  th % 2 ? ur_queue_flags_t(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE) : 0u};
      ASSERT_EQ(UR_RESULT_SUCCESS, t().Queue.pfnCreate(context, device, &props, &q));
      for (int r = 0; r < rounds; ++r) {
        void *p = nullptr;
        ur_event_handle_t allocated = nullptr, filled = nullptr, bumped = nullptr;
        ASSERT_EQ(UR_RESULT_SUCCESS, alloc(q, n * 4, &p, 0, nullptr, &allocated));
        uint32_t value = uint32_t(th * 1000 + r);
        ASSERT_EQ(UR_RESULT_SUCCESS, fill_with(q, p, n, value, 1, &allocated, &filled));
        size_t global[1] = {n};
        ASSERT_EQ(UR_RESULT_SUCCESS,
                  launch(q, increment, 1, global, nullptr, {pointer_arg(0, p)}, 1, &filled, &bumped));
        std::vector<uint32_t> out = read(q, p, n, 1, &bumped);
        ASSERT_EQ(std::vector<uint32_t>(n, value + 1), out) << "thread " << th << " round " << r;
        ASSERT_EQ(UR_RESULT_SUCCESS, free_async(q, p, 1, &bumped));
        for (ur_event_handle_t e : {allocated, filled, bumped}) ASSERT_EQ(UR_RESULT_SUCCESS, t().Event.pfnRelease(e));
      }
      EXPECT_EQ(UR_RESULT_SUCCESS, t().Queue.pfnRelease(q));
    });
  for (auto &th : pool) th.join();
}

// An alloc or free waiting for one event of its out-of-order queue shares that event's
// cl_event instead of making a marker; its UR event is still its own: command type,
// queue, and never complete (nor running) before the command it waits for completes.
TEST_F(AsyncAlloc, AllocAndFreeOnOneEventKeepTheirOwnEvents) {
  Gate gate = make_gate();
  ASSERT_NE(nullptr, gate.event);
  const size_t n = 1024;
  void *a = nullptr, *b = nullptr, *unordered = nullptr;
  ur_event_handle_t allocated = nullptr, filled = nullptr, again = nullptr, freed = nullptr;
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &a, 0, nullptr, &allocated));
  const ur_event_handle_t fill_waits[2] = {allocated, gate.event};
  OCL_ASSERT_OK(fill_with(ooo_queue, a, n, 3, 2, fill_waits, &filled));
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &b, 1, &filled, &again));
  OCL_ASSERT_OK(free_async(ooo_queue, a, 1, &filled, &freed));
  OCL_ASSERT_OK(alloc(queue, n * 4, &unordered));
  EXPECT_NE(a, unordered); // the free is pending
  struct {
    ur_event_handle_t e;
    ur_command_t cmd;
  } expect[] = {{again, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP}, {freed, UR_COMMAND_ENQUEUE_USM_FREE_EXP}};
  for (auto &x : expect) {
    ur_command_t cmd{};
    OCL_ASSERT_OK(t().Event.pfnGetInfo(x.e, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr));
    EXPECT_EQ(x.cmd, cmd);
    ur_queue_handle_t q = nullptr;
    OCL_ASSERT_OK(t().Event.pfnGetInfo(x.e, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
    EXPECT_EQ(ooo_queue, q);
    ur_event_status_t st{};
    OCL_ASSERT_OK(t().Event.pfnGetInfo(x.e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr));
    EXPECT_NE(UR_EVENT_STATUS_COMPLETE, st);
    EXPECT_NE(UR_EVENT_STATUS_RUNNING, st);
  }
  gate.open();
  const ur_event_handle_t both[2] = {again, freed};
  OCL_ASSERT_OK(t().Event.pfnWait(2, both));
  EXPECT_TRUE(complete(filled));
  EXPECT_TRUE(complete(again));
  EXPECT_TRUE(complete(freed));
  OCL_ASSERT_OK(free_async(ooo_queue, b, 1, &again));
  OCL_ASSERT_OK(free_async(queue, unordered));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  for (ur_event_handle_t e : {allocated, filled, again, freed, gate.event}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
}

// A barrier between the event and the alloc or free: they follow the barrier too, so
// neither may share the event (it completes before the barrier does).
TEST_F(AsyncAlloc, AllocAndFreeAfterABarrierFollowIt) {
  Gate gate = make_gate();
  ASSERT_NE(nullptr, gate.event);
  const size_t n = 1024;
  void *a = nullptr, *b = nullptr;
  ur_event_handle_t filled = nullptr, barrier = nullptr, allocated = nullptr, freed = nullptr;
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &a));
  OCL_ASSERT_OK(fill_with(ooo_queue, a, n, 1, 0, nullptr, &filled));
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWaitWithBarrier(ooo_queue, 1, &gate.event, &barrier));
  OCL_ASSERT_OK(alloc(ooo_queue, n * 4, &b, 1, &filled, &allocated));
  OCL_ASSERT_OK(free_async(ooo_queue, a, 1, &filled, &freed));
  OCL_ASSERT_OK(t().Event.pfnWait(1, &filled));
  EXPECT_FALSE(complete(allocated));
  EXPECT_FALSE(complete(freed));
  gate.open();
  const ur_event_handle_t both[2] = {allocated, freed};
  OCL_ASSERT_OK(t().Event.pfnWait(2, both));
  EXPECT_TRUE(complete(barrier));
  OCL_ASSERT_OK(free_async(ooo_queue, b, 1, &allocated));
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  for (ur_event_handle_t e : {filled, barrier, allocated, freed, gate.event}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
}

// On an in-order queue a free with no wait list and no event releases its block when
// the queue's newest command completes (no marker after the first such free), and an
// alloc with no wait list shares that command's event: neither completes earlier.
TEST_F(AsyncAlloc, InOrderFreeReleasesWithTheNewestCommand) {
  ur_usm_pool_handle_t pool = make_pool(0, 0);
  ASSERT_NE(nullptr, pool);
  void *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  OCL_ASSERT_OK(alloc(queue, 4096, &a, 0, nullptr, nullptr, pool));
  OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    Gate gate = make_gate();
    ASSERT_NE(nullptr, gate.event);
    ur_event_handle_t allocated = nullptr;
    OCL_ASSERT_OK(alloc(queue, 4096, &a, 0, nullptr, nullptr, pool));
    OCL_ASSERT_OK(fill_with(queue, a, 1024, 7, 1, &gate.event));
    OCL_ASSERT_OK(alloc(queue, 4096, &b, 0, nullptr, &allocated, pool));
    OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, nullptr));
    OCL_ASSERT_OK(alloc(ooo_queue, 4096, &c, 0, nullptr, nullptr, pool));
    EXPECT_NE(a, c); // the free is pending
    EXPECT_FALSE(complete(allocated));
    ur_command_t cmd{};
    OCL_ASSERT_OK(t().Event.pfnGetInfo(allocated, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr));
    EXPECT_EQ(UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP, cmd);
    gate.open();
    OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
    EXPECT_TRUE(complete(allocated));
    OCL_ASSERT_OK(alloc(ooo_queue, 4096, &d, 0, nullptr, nullptr, pool));
    EXPECT_EQ(a, d); // the free completed
    for (void *p : {b, c, d}) OCL_ASSERT_OK(t().EnqueueExp.pfnUSMFreeExp(ooo_queue, pool, p, 0, nullptr, nullptr));
    OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
    for (ur_event_handle_t e : {allocated, gate.event}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
  }
  OCL_ASSERT_OK(t().USMExp.pfnPoolDestroyExp(context, device, pool));
}

} // namespace
} // namespace ocltest
