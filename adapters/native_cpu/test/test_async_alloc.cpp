// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation on the native CPU adapter: what the scheduler adds to the
// ordered pool core (commands, release events, internal dependencies, exact rule-1
// ordering through the graph), pools of every kind, and their lifetimes. The
// device-independent rules are in test/conformance/async_alloc.cpp.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuAsync : public NativeCpu {
protected:
  void SetUp() override {
    NativeCpu::SetUp();
    if (HasFatalFailure()) return;
    ur_program_handle_t p = build_program(test_kernels_path());
    fill = kernel(p, "fill");
    increment = kernel(p, "increment");
  }

  ur_result_t alloc(ur_queue_handle_t q, size_t bytes, void **out, ur_usm_pool_handle_t pool = nullptr, uint32_t n = 0,
                    const ur_event_handle_t *waits = nullptr, ur_event_handle_t *ev = nullptr,
                    ur_usm_type_t kind = UR_USM_TYPE_DEVICE) {
    const ur_dditable_t &t = T(q);
    switch (kind) {
    case UR_USM_TYPE_HOST: return t.EnqueueExp.pfnUSMHostAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
    case UR_USM_TYPE_SHARED: return t.EnqueueExp.pfnUSMSharedAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
    default: return t.EnqueueExp.pfnUSMDeviceAllocExp(q, pool, bytes, nullptr, n, waits, out, ev);
    }
  }
  ur_result_t free_async(ur_queue_handle_t q, void *p, uint32_t n = 0, const ur_event_handle_t *waits = nullptr,
                         ur_event_handle_t *ev = nullptr, ur_usm_pool_handle_t pool = nullptr) {
    return T(q).EnqueueExp.pfnUSMFreeExp(q, pool, p, n, waits, ev);
  }
  ur_result_t fill_with(ur_queue_handle_t q, void *p, size_t n, uint32_t value, uint32_t nwait = 0,
                        const ur_event_handle_t *waits = nullptr, ur_event_handle_t *ev = nullptr) {
    return launch(q, fill, 1, &n, nullptr, {pointer_arg(0, p), value_arg(1, 4, &value)}, nwait, waits, ev);
  }
  ur_event_handle_t gated_task(ur_queue_handle_t q, Gate &gate) {
    ur_event_handle_t ev = nullptr;
    EXPECT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, &ev), UR_RESULT_SUCCESS);
    return ev;
  }
  ur_usm_pool_handle_t make_pool(size_t max_size, size_t threshold, ur_usm_pool_flags_t flags = 0,
                                 const void *chain = nullptr) {
    ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, chain, max_size, threshold};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, flags};
    ur_usm_pool_handle_t pool = nullptr;
    EXPECT_EQ(T(context).USMExp.pfnPoolCreateExp(context, device, &desc, &pool), UR_RESULT_SUCCESS);
    return pool;
  }
  size_t stat(ur_usm_pool_handle_t pool, ur_usm_pool_info_t what) {
    size_t v = 0;
    EXPECT_EQ(T(pool).USMExp.pfnPoolGetInfoExp(pool, what, &v, nullptr), UR_RESULT_SUCCESS);
    return v;
  }
  ur_usm_pool_handle_t default_pool() {
    ur_usm_pool_handle_t p = nullptr;
    EXPECT_EQ(T(context).USMExp.pfnPoolGetDefaultDevicePoolExp(context, device, &p), UR_RESULT_SUCCESS);
    return p;
  }
  ur_event_status_t status(ur_event_handle_t ev) {
    ur_event_status_t s{};
    EXPECT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr),
              UR_RESULT_SUCCESS);
    return s;
  }
  template <class V> V alloc_info(const void *p, ur_usm_alloc_info_t info) {
    V v{};
    EXPECT_EQ(T(context).USM.pfnGetMemAllocInfo(context, p, info, sizeof v, &v, nullptr), UR_RESULT_SUCCESS) << info;
    return v;
  }
  void release(std::initializer_list<ur_event_handle_t> events) {
    for (ur_event_handle_t e : events)
      if (e) {
        EXPECT_EQ(T(e).Event.pfnRelease(e), UR_RESULT_SUCCESS);
      }
  }

  ur_kernel_handle_t fill = nullptr, increment = nullptr;
};

TEST_F(NativeCpuAsync, DeviceReportsStreamOrderedAllocationAndPools) {
  ur_bool_t async = 0, pools = 0;
  ASSERT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof async, &async,
                                        nullptr),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_USM_POOL_SUPPORT, sizeof pools, &pools, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(async, 1);
  EXPECT_EQ(pools, 1);
}

// The host never waits: with the queue held by a task, allocs and frees return at
// once, the freed block goes to the next alloc of the same in-order queue, and the
// pool does not grow.
TEST_F(NativeCpuAsync, InOrderAllocAndFreeNeverBlockAndReuse) {
  ur_queue_handle_t q = make_queue();
  ur_usm_pool_handle_t pool = default_pool();
  Gate gate;
  ur_event_handle_t held = gated_task(q, gate);
  void *first = nullptr;
  ASSERT_EQ(alloc(q, 4096, &first), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, first), UR_RESULT_SUCCESS);
  size_t reserved = stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP);
  for (int i = 0; i < 1000; ++i) {
    void *p = nullptr;
    ASSERT_EQ(alloc(q, 4096, &p), UR_RESULT_SUCCESS);
    ASSERT_EQ(p, first) << i;
    ASSERT_EQ(free_async(q, p), UR_RESULT_SUCCESS);
  }
  EXPECT_NE(status(held), UR_EVENT_STATUS_COMPLETE); // the gate is shut: nothing above waited for it
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), reserved);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_USED_HIGH_EXP), 4096u);
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  release({held});
}

// Commands report what they are; a free's event is its release event.
TEST_F(NativeCpuAsync, CommandsAndEvents) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  const ur_usm_type_t kinds[] = {UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED, UR_USM_TYPE_HOST};
  const ur_command_t commands[] = {UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP,
                                   UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP};
  for (int i = 0; i < 3; ++i) {
    void *p = nullptr;
    ur_event_handle_t allocated = nullptr, freed = nullptr;
    ASSERT_EQ(alloc(q, 256, &p, nullptr, 0, nullptr, &allocated, kinds[i]), UR_RESULT_SUCCESS);
    ASSERT_EQ(free_async(q, p, 1, &allocated, &freed), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(freed).Event.pfnWait(1, &freed), UR_RESULT_SUCCESS);
    ur_command_t cmd{};
    ASSERT_EQ(T(allocated).Event.pfnGetInfo(allocated, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr),
              UR_RESULT_SUCCESS);
    EXPECT_EQ(cmd, commands[i]);
    ASSERT_EQ(T(freed).Event.pfnGetInfo(freed, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr),
              UR_RESULT_SUCCESS);
    EXPECT_EQ(cmd, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
    release({allocated, freed});
  }
}

// A free reached from the alloc through other commands (here: a kernel of another
// queue that waits for the free) orders the alloc after it: the block is reused
// at once, without growing and without a dependency of its own.
TEST_F(NativeCpuAsync, OrderThroughTheGraphCountsAsRuleOne) {
  ur_queue_handle_t a = make_queue(), b = make_queue();
  ur_usm_pool_handle_t pool = default_pool();
  Gate gate;
  ur_event_handle_t held = gated_task(a, gate);
  void *p = nullptr, *again = nullptr;
  ASSERT_EQ(alloc(a, 1 << 16, &p), UR_RESULT_SUCCESS);
  ur_event_handle_t freed = nullptr, after = nullptr;
  ASSERT_EQ(free_async(a, p, 0, nullptr, &freed), UR_RESULT_SUCCESS);
  auto *other = static_cast<uint32_t *>(shared_alloc(64 * 4));
  ASSERT_EQ(fill_with(b, other, 64, 5, 1, &freed, &after), UR_RESULT_SUCCESS);
  size_t reserved = stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP);
  ASSERT_EQ(alloc(b, 1 << 16, &again), UR_RESULT_SUCCESS); // in order after `after`, so after the free
  EXPECT_EQ(again, p);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), reserved);
  ASSERT_EQ(fill_with(b, again, (1 << 16) / 4, 9), UR_RESULT_SUCCESS);
  gate.open();
  ASSERT_EQ(T(b).Queue.pfnFinish(b), UR_RESULT_SUCCESS);
  EXPECT_EQ(static_cast<uint32_t *>(again)[100], 9u);
  ASSERT_EQ(free_async(b, again), UR_RESULT_SUCCESS);
  release({held, freed, after});
}

// A launch without an event gets no ordering node when enqueued; a plain free that makes
// it the block's release event records it then (docs/native-cpu.md, "The scheduler"). A
// command after it on its queue carries the order to another queue; one before it not.
TEST_F(NativeCpuAsync, LaunchWithoutEventIsOrderedWhenAFreeNeedsIt) {
  ur_queue_handle_t a = make_queue(), b = make_queue();
  Gate gate;
  ur_event_handle_t held = gated_task(a, gate);
  void *p = nullptr, *unordered = nullptr, *again = nullptr;
  ASSERT_EQ(alloc(a, 1 << 16, &p), UR_RESULT_SUCCESS);
  ASSERT_EQ(fill_with(a, p, (1 << 16) / 4, 7), UR_RESULT_SUCCESS); // no event
  ASSERT_EQ(free_async(a, p), UR_RESULT_SUCCESS);                  // released when that launch completes
  ur_event_handle_t after = nullptr;
  ASSERT_EQ(T(a).Enqueue.pfnEventsWait(a, 0, nullptr, &after), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(b, 1 << 16, &unordered, nullptr, 1, &held), UR_RESULT_SUCCESS); // before the launch only
  EXPECT_NE(unordered, p);
  ASSERT_EQ(alloc(b, 1 << 16, &again, nullptr, 1, &after), UR_RESULT_SUCCESS); // after it
  EXPECT_EQ(again, p);
  ASSERT_EQ(fill_with(b, again, (1 << 16) / 4, 9), UR_RESULT_SUCCESS);
  gate.open();
  ASSERT_EQ(T(a).Queue.pfnFinish(a), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(b).Queue.pfnFinish(b), UR_RESULT_SUCCESS);
  EXPECT_EQ(static_cast<uint32_t *>(again)[100], 9u);
  ASSERT_EQ(free_async(b, again), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(b, unordered), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(b).Queue.pfnFinish(b), UR_RESULT_SUCCESS);
  release({held, after});
}

// Rule 3: at its maximum size the pool hands an unordered alloc the block of a
// pending free and makes the alloc wait for it; the data written after the alloc
// is never overwritten by the block's previous user.
TEST_F(NativeCpuAsync, InternalDependencyOrdersTheData) {
  const size_t bytes = 1 << 20, n = bytes / 4;
  ur_usm_pool_handle_t pool = make_pool(bytes, 0);
  ur_queue_handle_t a = make_queue(), b = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Gate gate;
  ur_event_handle_t held = gated_task(a, gate);
  void *p = nullptr, *q = nullptr;
  ASSERT_EQ(alloc(a, bytes, &p, pool), UR_RESULT_SUCCESS);
  ASSERT_EQ(fill_with(a, p, n, 1), UR_RESULT_SUCCESS); // runs after the gate
  ur_event_handle_t freed = nullptr, allocated = nullptr, filled = nullptr;
  ASSERT_EQ(free_async(a, p, 0, nullptr, &freed), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(b, bytes, &q, pool, 0, nullptr, &allocated), UR_RESULT_SUCCESS);
  EXPECT_EQ(q, p);
  EXPECT_EQ(status(allocated), UR_EVENT_STATUS_QUEUED); // waits for the free
  ASSERT_EQ(fill_with(b, q, n, 2, 1, &allocated, &filled), UR_RESULT_SUCCESS);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP), bytes);
  gate.open();
  ASSERT_EQ(T(filled).Event.pfnWait(1, &filled), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(freed), UR_EVENT_STATUS_COMPLETE);
  auto *data = static_cast<uint32_t *>(q);
  for (size_t i = 0; i < n; i += 997) ASSERT_EQ(data[i], 2u) << i;
  ASSERT_EQ(free_async(b, q, 0, nullptr, nullptr, pool), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(b).Queue.pfnFinish(b), UR_RESULT_SUCCESS);
  release({held, freed, allocated, filled});
  ASSERT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_SUCCESS);
}

// A failed command before a free does not fail an alloc that only had to wait for
// that free (the internal dependency orders, it does not inherit failure).
TEST_F(NativeCpuAsync, InternalDependencyDoesNotInheritFailure) {
  ur_kernel_handle_t fail_at = kernel(build_program(extra_kernels_path()), "fail_at");
  const size_t bytes = 1 << 16;
  ur_usm_pool_handle_t pool = make_pool(bytes, 0);
  ur_queue_handle_t a = make_queue(), b = make_queue();
  Gate gate;
  ur_event_handle_t held = gated_task(a, gate);
  void *p = nullptr, *q = nullptr;
  ASSERT_EQ(alloc(a, bytes, &p, pool), UR_RESULT_SUCCESS);
  uint32_t bad = 0;
  size_t global = 16;
  ASSERT_EQ(launch(a, fail_at, 1, &global, nullptr, {pointer_arg(0, p), value_arg(1, 4, &bad)}), UR_RESULT_SUCCESS);
  ur_event_handle_t freed = nullptr, allocated = nullptr;
  ASSERT_EQ(free_async(a, p, 0, nullptr, &freed), UR_RESULT_SUCCESS); // fails with the kernel
  ASSERT_EQ(alloc(b, bytes, &q, pool, 0, nullptr, &allocated), UR_RESULT_SUCCESS);
  EXPECT_EQ(q, p);
  gate.open();
  EXPECT_EQ(T(freed).Event.pfnWait(1, &freed), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(T(allocated).Event.pfnWait(1, &allocated), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(allocated), UR_EVENT_STATUS_COMPLETE);
  ASSERT_EQ(free_async(b, q), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(b).Queue.pfnFinish(b), UR_RESULT_SUCCESS);
  release({held, freed, allocated});
  ASSERT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_SUCCESS);
}

// The alloc command zeroes the block, after the free it reuses.
TEST_F(NativeCpuAsync, ZeroInitialisedBlocksAreZeroedByTheAllocCommand) {
  ur_usm_pool_handle_t pool = make_pool(0, 1 << 20, UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK);
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t held = gated_task(q, gate);
  const size_t n = 4096;
  void *p = nullptr, *again = nullptr;
  ASSERT_EQ(alloc(q, n * 4, &p, pool), UR_RESULT_SUCCESS);
  ASSERT_EQ(fill_with(q, p, n, 0xdeadbeef), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, p), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(q, n * 4, &again, pool), UR_RESULT_SUCCESS);
  EXPECT_EQ(again, p);
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  auto *data = static_cast<uint32_t *>(again);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], 0u) << i;
  ASSERT_EQ(free_async(q, again), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  release({held});
  ASSERT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_SUCCESS);
}

// Releasing a queue waits for its pending frees: afterwards nothing is pending, so
// trimming gives every chunk back.
TEST_F(NativeCpuAsync, QueueReleaseCompletesPendingFrees) {
  ur_usm_pool_handle_t pool = make_pool(0, 64 << 20);
  ur_queue_handle_t q = nullptr;
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, 0};
  ASSERT_EQ(T(context).Queue.pfnCreate(context, device, &props, &q), UR_RESULT_SUCCESS);
  auto gate = std::make_unique<Gate>();
  ur_event_handle_t held = gated_task(q, *gate);
  void *p = nullptr;
  ASSERT_EQ(alloc(q, 1 << 20, &p, pool), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, p), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(context).USMExp.pfnPoolTrimToExp(context, device, pool, 0), UR_RESULT_SUCCESS);
  EXPECT_GT(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), 0u); // pending: kept
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate->open();
  });
  ASSERT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(held), UR_EVENT_STATUS_COMPLETE);
  opener.join();
  ASSERT_EQ(T(context).USMExp.pfnPoolTrimToExp(context, device, pool, 0), UR_RESULT_SUCCESS);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), 0u);
  release({held});
  ASSERT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_SUCCESS);
}

// A context whose queues are gone takes its default pools, their memory and every
// event they held with it (ASan's leak check sees the rest).
TEST_F(NativeCpuAsync, ContextGoesWithItsPools) {
  ur_context_handle_t ctx = nullptr;
  ASSERT_EQ(T(device).Context.pfnCreate(1, &device, nullptr, &ctx), UR_RESULT_SUCCESS);
  ur_queue_handle_t q = nullptr, ooo = nullptr;
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  ASSERT_EQ(T(ctx).Queue.pfnCreate(ctx, device, nullptr, &q), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ctx).Queue.pfnCreate(ctx, device, &props, &ooo), UR_RESULT_SUCCESS);
  void *d = nullptr, *h = nullptr, *s = nullptr, *kept = nullptr;
  ASSERT_EQ(alloc(q, 1000, &d), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(q, 1000, &h, nullptr, 0, nullptr, nullptr, UR_USM_TYPE_HOST), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(ooo, 1000, &s, nullptr, 0, nullptr, nullptr, UR_USM_TYPE_SHARED), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(ooo, 1000, &kept), UR_RESULT_SUCCESS); // never freed: goes with the context
  ur_event_handle_t ran = nullptr;
  const uint32_t pattern = 1;
  ASSERT_EQ(T(q).Enqueue.pfnUSMFill(q, d, sizeof pattern, &pattern, 1000, 0, nullptr, &ran), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, d), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, h), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(ooo, s, 1, &ran), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ctx).Context.pfnRelease(ctx), UR_RESULT_SUCCESS); // the queues still hold it
  ASSERT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ooo).Queue.pfnRelease(ooo), UR_RESULT_SUCCESS);
  release({ran});
}

// A destroyed pool stays usable for its live allocations; its memory goes after the
// last one is freed.
TEST_F(NativeCpuAsync, DestroyedPoolLivesForItsAllocations) {
  ur_queue_handle_t q = make_queue();
  ur_usm_pool_handle_t pool = make_pool(0, 64 << 20);
  ASSERT_EQ(T(context).USMExp.pfnPoolSetDevicePoolExp(context, device, pool), UR_RESULT_SUCCESS);
  void *p = nullptr, *other = nullptr;
  ASSERT_EQ(alloc(q, 4096, &p), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_ERROR_INVALID_VALUE);
  size_t v = 0;
  EXPECT_EQ(T(context).USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, &v, nullptr),
            UR_RESULT_ERROR_INVALID_VALUE);
  ur_usm_pool_handle_t current = nullptr;
  ASSERT_EQ(T(context).USMExp.pfnPoolGetDevicePoolExp(context, device, &current), UR_RESULT_SUCCESS);
  EXPECT_EQ(current, default_pool()); // no longer the current pool
  ASSERT_EQ(fill_with(q, p, 1024, 7), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(q, 4096, &other), UR_RESULT_SUCCESS); // from the default pool now
  EXPECT_NE(other, p);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(static_cast<uint32_t *>(p)[1023], 7u);
  EXPECT_EQ(alloc_info<ur_usm_type_t>(p, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_DEVICE);
  ASSERT_EQ(free_async(q, p), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS); // the pool goes here at the latest
  EXPECT_EQ(alloc_info<ur_usm_type_t>(p, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_UNKNOWN);
  ASSERT_EQ(free_async(q, other), UR_RESULT_SUCCESS);
}

// urUSMPoolCreate: one pool for every kind, used by urUSM*Alloc and freed by
// urUSMFree; its info and reference count.
TEST_F(NativeCpuAsync, ClassicPoolServesEveryKind) {
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, 8 << 20, 0};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_EQ(T(context).USM.pfnPoolCreate(context, &desc, &pool), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ur_context_handle_t owner = nullptr;
  ASSERT_EQ(T(pool).USM.pfnPoolGetInfo(pool, UR_USM_POOL_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 1u);
  ASSERT_EQ(T(pool).USM.pfnPoolGetInfo(pool, UR_USM_POOL_INFO_CONTEXT, sizeof owner, &owner, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(owner, context);
  ASSERT_EQ(T(pool).USM.pfnPoolRetain(pool), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(pool).USM.pfnPoolGetInfo(pool, UR_USM_POOL_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u);
  ASSERT_EQ(T(pool).USM.pfnPoolRelease(pool), UR_RESULT_SUCCESS);

  ur_usm_desc_t aligned{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, 4096};
  void *h = nullptr, *d = nullptr, *s = nullptr;
  ASSERT_EQ(T(context).USM.pfnHostAlloc(context, nullptr, pool, 100, &h), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(context).USM.pfnDeviceAlloc(context, device, &aligned, pool, 200, &d), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(context).USM.pfnSharedAlloc(context, device, nullptr, pool, 300, &s), UR_RESULT_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % 4096, 0u);
  EXPECT_EQ(alloc_info<ur_usm_type_t>(h, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_HOST);
  EXPECT_EQ(alloc_info<ur_usm_type_t>(static_cast<char *>(d) + 199, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_DEVICE);
  EXPECT_EQ(alloc_info<ur_usm_type_t>(s, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_SHARED);
  EXPECT_EQ(alloc_info<ur_usm_pool_handle_t>(s, UR_USM_ALLOC_INFO_POOL), pool);
  EXPECT_EQ(alloc_info<size_t>(s, UR_USM_ALLOC_INFO_SIZE), 300u);
  EXPECT_EQ(alloc_info<ur_device_handle_t>(h, UR_USM_ALLOC_INFO_DEVICE), nullptr);
  EXPECT_EQ(alloc_info<ur_device_handle_t>(d, UR_USM_ALLOC_INFO_DEVICE), device);
  std::memset(h, 1, 100);
  std::memset(d, 2, 200);
  std::memset(s, 3, 300);
  size_t used = 0;
  ASSERT_EQ(T(pool).USM.pfnPoolGetInfo(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, sizeof used, &used, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(used, 128u + 256u + 320u);
  void *big = nullptr;
  EXPECT_EQ(T(context).USM.pfnHostAlloc(context, nullptr, pool, 9 << 20, &big), UR_RESULT_ERROR_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(T(context).USM.pfnDeviceAlloc(context, device, nullptr, pool, 9 << 20, &big),
            UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
  EXPECT_EQ(T(context).USM.pfnFree(context, d), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(context).USM.pfnFree(context, d), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  // Released with allocations live: they stay usable, and the pool goes with the last.
  ASSERT_EQ(T(pool).USM.pfnPoolRelease(pool), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(pool).USM.pfnPoolRetain(pool), UR_RESULT_ERROR_INVALID_VALUE);
  std::memset(s, 4, 300);
  EXPECT_EQ(T(context).USM.pfnFree(context, h), UR_RESULT_SUCCESS);
  ur_queue_handle_t q = make_queue();
  EXPECT_EQ(free_async(q, s), UR_RESULT_SUCCESS); // an async free of a classic pool block
}

TEST_F(NativeCpuAsync, DefaultPoolsBelongToTheContext) {
  ur_usm_pool_handle_t pool = default_pool();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(T(pool).USM.pfnPoolRelease(pool), UR_RESULT_SUCCESS);
  EXPECT_EQ(default_pool(), pool);
  uint32_t refs = 0;
  ASSERT_EQ(T(pool).USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_REFERENCE_COUNT, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 1u);
  EXPECT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_ERROR_INVALID_VALUE);
  // The host pool is the context's too: reachable through an allocation's info.
  ur_queue_handle_t q = make_queue();
  void *h = nullptr;
  ASSERT_EQ(alloc(q, 64, &h, nullptr, 0, nullptr, nullptr, UR_USM_TYPE_HOST), UR_RESULT_SUCCESS);
  ur_usm_pool_handle_t host = alloc_info<ur_usm_pool_handle_t>(h, UR_USM_ALLOC_INFO_POOL);
  ASSERT_NE(host, nullptr);
  EXPECT_NE(host, pool);
  EXPECT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, host), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(T(context).USMExp.pfnPoolSetDevicePoolExp(context, device, host), UR_RESULT_ERROR_INVALID_VALUE);
  void *d = nullptr;
  EXPECT_EQ(alloc(q, 64, &d, host), UR_RESULT_ERROR_INVALID_VALUE); // host memory only
  ASSERT_EQ(free_async(q, h), UR_RESULT_SUCCESS);
}

// A fixed pool carved from a device allocation: its blocks lie inside it, it never
// grows, and allocations answer for the block, not for the memory underneath.
TEST_F(NativeCpuAsync, FixedPoolCarvedFromUserMemory) {
  const size_t bytes = 1 << 20;
  void *mem = nullptr;
  ASSERT_EQ(T(context).USM.pfnDeviceAlloc(context, device, nullptr, nullptr, bytes, &mem), UR_RESULT_SUCCESS);
  ur_usm_pool_buffer_desc_t buf{
      UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC, nullptr, mem, bytes, UR_USM_TYPE_DEVICE, device};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &buf, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_EQ(T(context).USMExp.pfnPoolCreateExp(context, device, &desc, &pool), UR_RESULT_SUCCESS);
  ur_usm_pool_handle_t overlapping = nullptr;
  EXPECT_EQ(T(context).USMExp.pfnPoolCreateExp(context, device, &desc, &overlapping), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), bytes);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP), bytes);
  ur_queue_handle_t q = make_queue();
  void *a = nullptr, *b = nullptr, *s = nullptr;
  ASSERT_EQ(alloc(q, bytes / 2, &a, pool), UR_RESULT_SUCCESS);
  ASSERT_EQ(alloc(q, 1000, &b, pool), UR_RESULT_SUCCESS);
  for (void *p : {a, b}) {
    EXPECT_GE(p, mem);
    EXPECT_LT(p, static_cast<void *>(static_cast<char *>(mem) + bytes));
  }
  EXPECT_EQ(alloc(q, bytes / 2, &s, pool), UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
  EXPECT_EQ(alloc(q, 64, &s, pool, 0, nullptr, nullptr, UR_USM_TYPE_SHARED), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(alloc_info<void *>(static_cast<char *>(b) + 999, UR_USM_ALLOC_INFO_BASE_PTR), b);
  EXPECT_EQ(alloc_info<size_t>(b, UR_USM_ALLOC_INFO_SIZE), 1000u);
  EXPECT_EQ(alloc_info<ur_usm_pool_handle_t>(b, UR_USM_ALLOC_INFO_POOL), pool);
  ASSERT_EQ(fill_with(q, a, bytes / 8, 3), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, a), UR_RESULT_SUCCESS);
  ASSERT_EQ(free_async(q, b), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), bytes); // user memory is never given away
  EXPECT_EQ(static_cast<uint32_t *>(mem)[0], 3u);
  ASSERT_EQ(T(context).USMExp.pfnPoolDestroyExp(context, device, pool), UR_RESULT_SUCCESS);
  // Host memory, a foreign range, or a range past the allocation are refused.
  ur_usm_pool_buffer_desc_t past = buf;
  past.size = bytes + 64;
  desc.pNext = &past;
  EXPECT_EQ(T(context).USMExp.pfnPoolCreateExp(context, device, &desc, &overlapping), UR_RESULT_ERROR_INVALID_VALUE);
  int on_stack[16];
  ur_usm_pool_buffer_desc_t foreign = buf;
  foreign.pMem = on_stack;
  foreign.size = sizeof on_stack;
  desc.pNext = &foreign;
  EXPECT_EQ(T(context).USMExp.pfnPoolCreateExp(context, device, &desc, &overlapping), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(T(context).USM.pfnFree(context, mem), UR_RESULT_SUCCESS);
}

// Bad input of every kind is refused before the pool is touched.
TEST_F(NativeCpuAsync, BadInputChangesNothing) {
  ur_queue_handle_t q = make_queue();
  ur_usm_pool_handle_t pool = default_pool();
  void *p = nullptr;
  ASSERT_EQ(alloc(q, 512, &p), UR_RESULT_SUCCESS);
  const size_t used = stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP);
  const size_t reserved = stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP);
  void *out = reinterpret_cast<void *>(0x1234);
  int bogus = 0;
  auto bogus_pool = reinterpret_cast<ur_usm_pool_handle_t>(&bogus);
  ur_exp_async_usm_alloc_properties_t bad_flags{UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES, nullptr, 0x10};
  EXPECT_EQ(alloc(q, 0, &out), UR_RESULT_ERROR_INVALID_USM_SIZE);
  EXPECT_EQ(alloc(q, 64, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(alloc(q, 64, &out, bogus_pool), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(alloc(q, 64, &out, nullptr, 1, nullptr), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  ur_event_handle_t null_event = nullptr;
  EXPECT_EQ(alloc(q, 64, &out, nullptr, 1, &null_event), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(T(q).EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 64, &bad_flags, 0, nullptr, &out, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(q).EnqueueExp.pfnUSMDeviceAllocExp(nullptr, nullptr, 64, nullptr, 0, nullptr, &out, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(out, reinterpret_cast<void *>(0x1234));
  EXPECT_EQ(free_async(q, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(free_async(q, &bogus), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(free_async(q, static_cast<char *>(p) + 64), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(free_async(q, static_cast<char *>(p) + 64, 0, nullptr, &null_event), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(free_async(q, p, 0, nullptr, nullptr, bogus_pool), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(free_async(q, p, 2, nullptr), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  void *plain = shared_alloc(64);
  EXPECT_EQ(free_async(q, plain), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(null_event, nullptr);
  // SetInfo: read-only properties, a wrong size, a threshold above the maximum.
  size_t value = 0;
  for (ur_usm_pool_info_t ro :
       {UR_USM_POOL_INFO_REFERENCE_COUNT, UR_USM_POOL_INFO_CONTEXT, UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP,
        UR_USM_POOL_INFO_RESERVED_CURRENT_EXP, UR_USM_POOL_INFO_USED_CURRENT_EXP})
    EXPECT_EQ(T(pool).USMExp.pfnPoolSetInfoExp(pool, ro, &value, sizeof value), UR_RESULT_ERROR_INVALID_ENUMERATION)
        << ro;
  EXPECT_EQ(T(pool).USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &value, 4),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(pool).USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_FORCE_UINT32, &value, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP), used);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), reserved);
  ASSERT_EQ(free_async(q, p), UR_RESULT_SUCCESS);
  EXPECT_EQ(free_async(q, p), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(T(context).USM.pfnFree(context, p), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP), used - 512);
}

// Threads, each with its own queue of either kind, run alloc -> fill -> increment ->
// free pipelines from one pool, while another thread reads statistics and trims.
TEST_F(NativeCpuAsync, ThreadsShareOnePool) {
  const int threads = 4, rounds = 60;
  const size_t n = 1024;
  ur_usm_pool_handle_t pool = default_pool();
  std::atomic<bool> done{false};
  std::thread observer([&] {
    while (!done.load()) {
      size_t used = 0, high = 0;
      EXPECT_EQ(T(pool).USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, &used, nullptr),
                UR_RESULT_SUCCESS);
      EXPECT_EQ(T(pool).USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &high, nullptr),
                UR_RESULT_SUCCESS);
      EXPECT_LE(used, high);
      EXPECT_EQ(T(context).USMExp.pfnPoolTrimToExp(context, device, pool, 0), UR_RESULT_SUCCESS);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> workers;
  for (int th = 0; th < threads; ++th)
    workers.emplace_back([&, th] {
      ur_queue_handle_t q = nullptr;
      ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                  th % 2 ? ur_queue_flags_t(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE) : 0u};
      ASSERT_EQ(T(context).Queue.pfnCreate(context, device, &props, &q), UR_RESULT_SUCCESS);
      for (int r = 0; r < rounds; ++r) {
        void *p = nullptr;
        ur_event_handle_t allocated = nullptr, filled = nullptr, bumped = nullptr;
        ur_usm_type_t kind = r % 3 == 0 ? UR_USM_TYPE_HOST : r % 3 == 1 ? UR_USM_TYPE_SHARED : UR_USM_TYPE_DEVICE;
        ASSERT_EQ(alloc(q, n * 4 * (1 + r % 5), &p, nullptr, 0, nullptr, &allocated, kind), UR_RESULT_SUCCESS);
        uint32_t value = uint32_t(th * 1000 + r);
        ASSERT_EQ(fill_with(q, p, n, value, 1, &allocated, &filled), UR_RESULT_SUCCESS);
        ASSERT_EQ(launch(q, increment, 1, &n, nullptr, {pointer_arg(0, p)}, 1, &filled, &bumped), UR_RESULT_SUCCESS);
        ASSERT_EQ(T(bumped).Event.pfnWait(1, &bumped), UR_RESULT_SUCCESS);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(static_cast<uint32_t *>(p)[i], value + 1) << th << " " << r;
        ASSERT_EQ(alloc_info<ur_usm_type_t>(p, UR_USM_ALLOC_INFO_TYPE), kind);
        ASSERT_EQ(free_async(q, p, 1, &bumped), UR_RESULT_SUCCESS);
        release({allocated, filled, bumped});
      }
      EXPECT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
    });
  for (auto &w : workers) w.join();
  done = true;
  observer.join();
  EXPECT_EQ(stat(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP), 0u);
}

} // namespace
