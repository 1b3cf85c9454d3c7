// SPDX-License-Identifier: Apache-2.0
// Queues: in-order, out-of-order and profiling queues, info queries, finish and flush,
// reference counting, the parameter rules.
#include "conformance.hpp"

namespace {

using conf::ContextTestWith;
using conf::QueueTest;
using conf::QueueTestWith;
using Query = const urinfo::InfoQuery *;

using urQueueGetInfoTest = QueueTestWith<Query>;

TEST_P(urQueueGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_queue_handle_t h = queue;
  conf::InfoCheckOptions options;
  // The default and size queries are for on-device queues only.
  if (q.id == UR_QUEUE_INFO_DEVICE_DEFAULT || q.id == UR_QUEUE_INFO_SIZE)
    options.also_allowed.push_back(UR_RESULT_ERROR_INVALID_QUEUE);
  conf::check_info_query(
      q,
      [h](uint32_t id, size_t size, void *value, size_t *ret) {
        return urQueueGetInfo(h, static_cast<ur_queue_info_t>(id), size, value, ret);
      },
      options);
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urQueueGetInfoTest, Query, ::testing::ValuesIn(conf::queries_of("ur_queue_info_t")),
                                   conf::QueryNamer);

// ---- creation with each combination of the flags that matter ----------------------------

struct FlagsNamer {
  std::string operator()(ur_queue_flags_t f) const {
    return f ? urinfo::flags_text("ur_queue_flags_t", f) : "in_order";
  }
};

using urQueueCreateTest = ContextTestWith<ur_queue_flags_t>;

TEST_P(urQueueCreateTest, FlagsReported) {
  const ur_queue_flags_t flags = std::get<1>(GetParam());
  ur_queue_flags_t supported = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_QUEUE_PROPERTIES, supported));
  if ((flags & supported) != flags)
    GTEST_SKIP() << found().label() << " does not offer " << urinfo::flags_text("ur_queue_flags_t", flags & ~supported);
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), flags, &q));
  ur_queue_flags_t reported = 0;
  EXPECT_SUCCESS(urQueueGetInfo(q, UR_QUEUE_INFO_FLAGS, sizeof reported, &reported, nullptr));
  EXPECT_EQ(flags, reported & flags) << "asked for " << urinfo::flags_text("ur_queue_flags_t", flags) << ", got "
                                     << urinfo::flags_text("ur_queue_flags_t", reported);
  ur_context_handle_t c = nullptr;
  ur_device_handle_t d = nullptr;
  EXPECT_SUCCESS(urQueueGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_SUCCESS(urQueueGetInfo(q, UR_QUEUE_INFO_DEVICE, sizeof d, &d, nullptr));
  EXPECT_EQ(context, c);
  EXPECT_EQ(device(), d);
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urQueueFlush(q));
  EXPECT_SUCCESS(urQueueRelease(q));
}

TEST_P(urQueueCreateTest, WorksWithCommands) {
  const ur_queue_flags_t flags = std::get<1>(GetParam());
  ur_queue_flags_t supported = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_QUEUE_PROPERTIES, supported));
  if ((flags & supported) != flags) GTEST_SKIP() << found().label() << " does not offer these flags";
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), flags, &q));
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &mem));
  const uint32_t pattern = 0x600DF00D;
  ur_event_handle_t fill = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(q, mem, sizeof pattern, &pattern, 4096, 0, nullptr, &fill));
  std::vector<uint32_t> host(1024, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, true, host.data(), mem, 4096, 1, &fill, nullptr));
  for (uint32_t v : host) ASSERT_EQ(pattern, v);
  EXPECT_SUCCESS(urEventRelease(fill));
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urUSMFree(context, mem));
  EXPECT_SUCCESS(urQueueRelease(q));
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(
    urQueueCreateTest, ur_queue_flags_t,
    ::testing::Values(ur_queue_flags_t(0), ur_queue_flags_t(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE),
                      ur_queue_flags_t(UR_QUEUE_FLAG_PROFILING_ENABLE),
                      ur_queue_flags_t(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE)),
    FlagsNamer);

// ---- one queue -------------------------------------------------------------------------

using urQueueTest = QueueTest;

TEST_P(urQueueTest, NewQueueIsInOrder) {
  ur_queue_flags_t flags = 0;
  ASSERT_SUCCESS(urQueueGetInfo(queue, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr));
  EXPECT_EQ(0u, flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE) << "no properties means in-order";
}

TEST_P(urQueueTest, FinishAndFlushWhenEmpty) {
  EXPECT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urQueueFlush(queue));
  EXPECT_SUCCESS(urQueueFinish(queue));
}

TEST_P(urQueueTest, EmptyAfterFinish) {
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 0, nullptr, &e));
  ASSERT_SUCCESS(urQueueFinish(queue));
  ur_bool_t empty = 0;
  ur_result_t r = urQueueGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof empty, &empty, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) {
    urEventRelease(e);
    GTEST_SKIP() << "UR_QUEUE_INFO_EMPTY is an optional query";
  }
  EXPECT_SUCCESS(r);
  EXPECT_EQ(1, empty) << "after urQueueFinish nothing is pending";
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e)) << "urQueueFinish waits for every command";
  EXPECT_SUCCESS(urEventRelease(e));
}

TEST_P(urQueueTest, FinishWaitsForEverything) {
  const size_t n = 64;
  std::vector<void *> mems(n, nullptr);
  std::vector<ur_event_handle_t> events(n, nullptr);
  const uint8_t pattern = 7;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 1 << 16, &mems[i]));
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, mems[i], 1, &pattern, 1 << 16, 0, nullptr, &events[i]));
  }
  ASSERT_SUCCESS(urQueueFinish(queue));
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(events[i])) << "command " << i;
    EXPECT_SUCCESS(urEventRelease(events[i]));
    EXPECT_SUCCESS(urUSMFree(context, mems[i]));
  }
}

TEST_P(urQueueTest, RetainRelease) {
  const uint32_t before = conf::reference_count(queue);
  EXPECT_EQ(1u, before) << "a new queue has one reference";
  ASSERT_SUCCESS(urQueueRetain(queue));
  EXPECT_EQ(before + 1, conf::reference_count(queue));
  ASSERT_SUCCESS(urQueueRelease(queue));
  EXPECT_EQ(before, conf::reference_count(queue));
}

TEST_P(urQueueTest, ReleaseWithPendingWork) {
  // Releasing a queue with commands in flight completes them; their events stay valid.
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 1 << 20, &mem));
  const uint32_t pattern = 42;
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(q, mem, sizeof pattern, &pattern, 1 << 20, 0, nullptr, &e));
  ASSERT_SUCCESS(urQueueRelease(q));
  ASSERT_SUCCESS(urEventWait(1, &e));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e));
  EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urUSMFree(context, mem));
}

TEST_P(urQueueTest, TwoQueuesOneDevice) {
  ur_queue_handle_t q2 = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q2));
  EXPECT_NE(queue, q2);
  EXPECT_SUCCESS(urQueueFinish(q2));
  EXPECT_SUCCESS(urQueueRelease(q2));
}

TEST_P(urQueueTest, NativeHandle) {
  ur_native_handle_t native = 0;
  ASSERT_RESULT_IN(urQueueGetNativeHandle(queue, nullptr, &native), UR_RESULT_SUCCESS,
                   UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urQueueTest, InvalidCreate) {
  CONF_REQUIRE_VALIDATION();
  ur_queue_handle_t q = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueCreate(nullptr, device(), nullptr, &q));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueCreate(context, nullptr, nullptr, &q));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urQueueCreate(context, device(), nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES,
                   conf::make_queue(context, device(), UR_QUEUE_FLAG_PRIORITY_HIGH | UR_QUEUE_FLAG_PRIORITY_LOW, &q));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES,
      conf::make_queue(context, device(), UR_QUEUE_FLAG_SUBMISSION_BATCHED | UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE, &q));
}

TEST_P(urQueueTest, InvalidGetInfo) {
  CONF_REQUIRE_VALIDATION();
  ur_queue_flags_t flags = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urQueueGetInfo(queue, UR_QUEUE_INFO_FORCE_UINT32, sizeof flags, &flags, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urQueueGetInfo(nullptr, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urQueueGetInfo(queue, UR_QUEUE_INFO_FLAGS, 0, &flags, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urQueueGetInfo(queue, UR_QUEUE_INFO_FLAGS, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueFinish(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueFlush(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueRelease(nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urQueueTest);

} // namespace
