// SPDX-License-Identifier: Apache-2.0
// Contexts and queues.
#include <unistd.h>

#include <atomic>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuContext : public NativeCpu {};

TEST_F(NativeCpuContext, CreateQueryRetainRelease) {
  ur_context_handle_t c = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &c), UR_RESULT_SUCCESS);
  uint32_t n = 0;
  ASSERT_EQ(T(c).Context.pfnGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 1u);
  ur_device_handle_t d = nullptr;
  ASSERT_EQ(T(c).Context.pfnGetInfo(c, UR_CONTEXT_INFO_DEVICES, sizeof d, &d, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(d, device);
  ur_bool_t yes = 0;
  ASSERT_EQ(T(c).Context.pfnGetInfo(c, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, sizeof yes, &yes, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_TRUE(yes);
  ASSERT_EQ(T(c).Context.pfnRetain(c), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ASSERT_EQ(T(c).Context.pfnGetInfo(c, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u);
  EXPECT_EQ(T(c).Context.pfnGetInfo(c, UR_CONTEXT_INFO_FORCE_UINT32, sizeof refs, &refs, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(c).Context.pfnRelease(c), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(c).Context.pfnRelease(c), UR_RESULT_SUCCESS);
  // The handle is gone: refused, never dereferenced.
  EXPECT_EQ(ddi().Context.pfnRelease(c), UR_RESULT_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(ddi().Context.pfnGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr),
            UR_RESULT_ERROR_INVALID_CONTEXT);
}

TEST_F(NativeCpuContext, CreateErrors) {
  ur_context_handle_t c = nullptr;
  EXPECT_EQ(ddi().Context.pfnCreate(0, &device, nullptr, &c), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(ddi().Context.pfnCreate(1, nullptr, nullptr, &c), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  int bogus;
  ur_device_handle_t bad = reinterpret_cast<ur_device_handle_t>(&bogus);
  EXPECT_EQ(ddi().Context.pfnCreate(1, &bad, nullptr, &c), UR_RESULT_ERROR_INVALID_DEVICE);
  ur_context_properties_t props{UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES, nullptr, 0x80};
  EXPECT_EQ(ddi().Context.pfnCreate(1, &device, &props, &c), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(c, nullptr);
  // A queue handle is not a context.
  ur_queue_handle_t q = make_queue();
  EXPECT_EQ(ddi().Context.pfnRetain(reinterpret_cast<ur_context_handle_t>(q)), UR_RESULT_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(ddi().Context.pfnRetain(nullptr), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(NativeCpuContext, ExtendedDeleterRunsWhenTheContextGoes) {
  ur_context_handle_t c = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &c), UR_RESULT_SUCCESS);
  static std::atomic<int> deleted{0};
  auto deleter = [](void *p) { deleted += *static_cast<int *>(p); };
  int amount = 5;
  ASSERT_EQ(T(c).Context.pfnSetExtendedDeleter(c, deleter, &amount), UR_RESULT_SUCCESS);
  EXPECT_EQ(deleted.load(), 0);
  ASSERT_EQ(T(c).Context.pfnRelease(c), UR_RESULT_SUCCESS);
  EXPECT_EQ(deleted.load(), 5);
}

TEST_F(NativeCpuContext, ContextOutlivesUserReleaseWhileAQueueUsesIt) {
  ur_context_handle_t c = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &c), UR_RESULT_SUCCESS);
  ur_queue_handle_t q = nullptr;
  ASSERT_EQ(T(c).Queue.pfnCreate(c, device, nullptr, &q), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(c).Context.pfnRelease(c), UR_RESULT_SUCCESS);
  ur_context_handle_t qc = nullptr;
  ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof qc, &qc, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(qc, c);
  EXPECT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
}

class NativeCpuQueue : public NativeCpu {};

TEST_F(NativeCpuQueue, CreateWithEachKindAndQuery) {
  for (ur_queue_flags_t flags : {ur_queue_flags_t{0}, ur_queue_flags_t{UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE},
                                 ur_queue_flags_t{UR_QUEUE_FLAG_PROFILING_ENABLE},
                                 ur_queue_flags_t{UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                                  UR_QUEUE_FLAG_PROFILING_ENABLE | UR_QUEUE_FLAG_DISCARD_EVENTS}}) {
    ur_queue_handle_t q = make_queue(flags);
    ASSERT_NE(q, nullptr);
    ur_queue_flags_t got = 0;
    ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_FLAGS, sizeof got, &got, nullptr), UR_RESULT_SUCCESS);
    EXPECT_EQ(got, flags);
    ur_context_handle_t c = nullptr;
    ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof c, &c, nullptr), UR_RESULT_SUCCESS);
    EXPECT_EQ(c, context);
    ur_device_handle_t d = nullptr;
    ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_DEVICE, sizeof d, &d, nullptr), UR_RESULT_SUCCESS);
    EXPECT_EQ(d, device);
    ur_bool_t empty = 0;
    ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_EMPTY, sizeof empty, &empty, nullptr), UR_RESULT_SUCCESS);
    EXPECT_TRUE(empty);
    ur_queue_handle_t def = nullptr;
    EXPECT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_DEVICE_DEFAULT, sizeof def, &def, nullptr),
              UR_RESULT_ERROR_INVALID_QUEUE);
    EXPECT_EQ(T(q).Queue.pfnFlush(q), UR_RESULT_SUCCESS);
    EXPECT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  }
}

TEST_F(NativeCpuQueue, CreateErrors) {
  ur_queue_handle_t q = nullptr;
  auto create = [&](ur_queue_flags_t flags) {
    ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
    return T(context).Queue.pfnCreate(context, device, &props, &q);
  };
  EXPECT_EQ(create(UR_QUEUE_FLAG_PRIORITY_HIGH | UR_QUEUE_FLAG_PRIORITY_LOW), UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
  EXPECT_EQ(create(UR_QUEUE_FLAG_SUBMISSION_BATCHED | UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE),
            UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
  EXPECT_EQ(create(UR_QUEUE_FLAG_ON_DEVICE), UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
  EXPECT_EQ(create(0x10000), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(q, nullptr);
  ur_queue_index_properties_t index{UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES, nullptr, 3};
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, &index, 0};
  EXPECT_EQ(T(context).Queue.pfnCreate(context, device, &props, &q), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(T(context).Queue.pfnCreate(context, device, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(T(context).Queue.pfnCreate(nullptr, device, nullptr, &q), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(T(context).Queue.pfnCreate(context, nullptr, nullptr, &q), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(NativeCpuQueue, RetainReleaseAndDeadHandle) {
  ur_queue_handle_t q = nullptr;
  ASSERT_EQ(T(context).Queue.pfnCreate(context, device, nullptr, &q), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnRetain(q), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u);
  ASSERT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(ddi().Queue.pfnRelease(q), UR_RESULT_ERROR_INVALID_QUEUE);
  EXPECT_EQ(ddi().Queue.pfnFinish(q), UR_RESULT_ERROR_INVALID_QUEUE);
  EXPECT_EQ(ddi().Enqueue.pfnEventsWait(q, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_QUEUE);
}

TEST_F(NativeCpuQueue, EmptyReflectsPendingWork) {
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t ev = nullptr;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, &ev), UR_RESULT_SUCCESS);
  ur_bool_t empty = 1;
  ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_EMPTY, sizeof empty, &empty, nullptr), UR_RESULT_SUCCESS);
  EXPECT_FALSE(empty);
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  ur_event_status_t status{};
  ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(status, UR_EVENT_STATUS_COMPLETE);
  ASSERT_EQ(T(ev).Event.pfnRelease(ev), UR_RESULT_SUCCESS);
}

// urQueueRelease does not cancel: the queue's commands still run afterwards.
TEST_F(NativeCpuQueue, ReleasedQueueFinishesItsCommands) {
  ur_queue_handle_t q = nullptr;
  ASSERT_EQ(T(context).Queue.pfnCreate(context, device, nullptr, &q), UR_RESULT_SUCCESS);
  Gate gate;
  static std::atomic<int> ran{0};
  ran = 0;
  auto bump = [](void *) { ran++; };
  ur_event_handle_t last = nullptr;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, bump, nullptr, nullptr, 0, nullptr, i == 9 ? &last : nullptr),
              UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(ran.load(), 0);
  gate.open();
  ASSERT_EQ(T(last).Event.pfnWait(1, &last), UR_RESULT_SUCCESS);
  EXPECT_EQ(ran.load(), 10);
  // The event still names its (released) queue.
  ur_queue_handle_t named = nullptr;
  ASSERT_EQ(T(last).Event.pfnGetInfo(last, UR_EVENT_INFO_COMMAND_QUEUE, sizeof named, &named, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(named, q);
  ASSERT_EQ(T(last).Event.pfnRelease(last), UR_RESULT_SUCCESS);
}

} // namespace
