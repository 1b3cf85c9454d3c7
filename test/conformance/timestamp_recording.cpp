// SPDX-License-Identifier: Apache-2.0
// urEnqueueTimestampRecordingExp (docs/command-buffers.md, "Derived entry points"): the
// event's profiling times are the device's clock when the command ran, after what it
// follows, on a queue created without profiling; blocking and non-blocking; refusals.
// Also that the device's answers for the experimental features match what the entry
// points do. An adapter without the entry point skips, saying so.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace {

class urTimestampRecordingTest : public conf::QueueTest {
protected:
  bool supported() {
    ur_bool_t yes = false;
    return urDeviceGetInfo(device(), UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP, sizeof yes, &yes, nullptr) ==
               UR_RESULT_SUCCESS &&
           yes;
  }
  // The ordering tests hold the queue with a host task, so they need one.
  bool host_tasks() {
    ur_bool_t yes = false;
    return urDeviceGetInfo(device(), UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP, sizeof yes, &yes, nullptr) ==
               UR_RESULT_SUCCESS &&
           yes;
  }
  uint64_t profiling(ur_event_handle_t e, ur_profiling_info_t what) {
    uint64_t t = 0;
    EXPECT_SUCCESS(urEventGetProfilingInfo(e, what, sizeof t, &t, nullptr)) << "profiling info " << what;
    return t;
  }
};

struct Stamped {
  ur_device_handle_t device = nullptr;
  uint64_t at_end = 0;
};
void sleep_then_stamp(void *p) {
  auto *s = static_cast<Stamped *>(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  urDeviceGetGlobalTimestamps(s->device, &s->at_end, nullptr);
}

TEST_P(urTimestampRecordingTest, RecordsWhenItRunsAfterEarlierCommands) {
  if (!supported())
    GTEST_SKIP() << found().label() << " does not report UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP";
  if (!host_tasks())
    GTEST_SKIP() << found().label()
                 << " has no host tasks (UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP) to hold the queue with";
  Stamped before;
  before.device = device();
  ur_event_handle_t task = nullptr, stamp = nullptr;
  ASSERT_SUCCESS(urEnqueueHostTaskExp(queue, sleep_then_stamp, &before, nullptr, 0, nullptr, &task));
  ASSERT_SUCCESS(urEnqueueTimestampRecordingExp(queue, false, 1, &task, &stamp));
  ASSERT_NE(nullptr, stamp);
  ASSERT_SUCCESS(urEventWait(1, &stamp));
  ASSERT_NE(0u, before.at_end);
  const uint64_t queued = profiling(stamp, UR_PROFILING_INFO_COMMAND_QUEUED);
  const uint64_t submit = profiling(stamp, UR_PROFILING_INFO_COMMAND_SUBMIT);
  const uint64_t start = profiling(stamp, UR_PROFILING_INFO_COMMAND_START);
  const uint64_t end = profiling(stamp, UR_PROFILING_INFO_COMMAND_END);
  EXPECT_LE(queued, submit);
  EXPECT_LE(submit, start);
  EXPECT_LE(start, end);
  EXPECT_GE(start, before.at_end) << "the timestamp was taken before the command it follows had finished";
  EXPECT_LT(queued, before.at_end) << "QUEUED is the enqueue, before the 20 ms host task ended";
  uint32_t refs = 0;
  ASSERT_SUCCESS(urEventGetInfo(stamp, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(1u, refs);
  // A retained event stays answerable until its last release.
  ASSERT_SUCCESS(urEventRetain(stamp));
  EXPECT_SUCCESS(urEventRelease(stamp));
  EXPECT_EQ(end, profiling(stamp, UR_PROFILING_INFO_COMMAND_END));
  EXPECT_SUCCESS(urEventRelease(stamp));
  EXPECT_SUCCESS(urEventRelease(task));
}

TEST_P(urTimestampRecordingTest, BlockingReturnsWithTheTimes) {
  if (!supported())
    GTEST_SKIP() << found().label() << " does not report UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP";
  if (!host_tasks())
    GTEST_SKIP() << found().label()
                 << " has no host tasks (UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP) to hold the queue with";
  Stamped before;
  before.device = device();
  ASSERT_SUCCESS(urEnqueueHostTaskExp(queue, sleep_then_stamp, &before, nullptr, 0, nullptr, nullptr));
  ur_event_handle_t first = nullptr, second = nullptr;
  ASSERT_SUCCESS(urEnqueueTimestampRecordingExp(queue, true, 0, nullptr, &first));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(first));
  EXPECT_NE(0u, before.at_end) << "a blocking timestamp on the in-order queue returned before the host task ran";
  const uint64_t t1 = profiling(first, UR_PROFILING_INFO_COMMAND_START);
  EXPECT_GE(t1, before.at_end);
  ASSERT_SUCCESS(urEnqueueTimestampRecordingExp(queue, true, 0, nullptr, &second));
  EXPECT_LE(t1, profiling(second, UR_PROFILING_INFO_COMMAND_END)) << "successive timestamps go forward";
  EXPECT_SUCCESS(urEventRelease(first));
  EXPECT_SUCCESS(urEventRelease(second));
}

TEST_P(urTimestampRecordingTest, Refusals) {
  if (!supported())
    GTEST_SKIP() << found().label() << " does not report UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP";
  ur_event_handle_t e = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urEnqueueTimestampRecordingExp(queue, false, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEnqueueTimestampRecordingExp(nullptr, false, 0, nullptr, &e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEnqueueTimestampRecordingExp(queue, false, 1, nullptr, &e));
  EXPECT_EQ(nullptr, e);
  ASSERT_SUCCESS(urEnqueueTimestampRecordingExp(queue, false, 0, nullptr, &e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urEventGetProfilingInfo(e, UR_PROFILING_INFO_FORCE_UINT32, sizeof(uint64_t), nullptr, nullptr));
  uint64_t t = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, 0, &t, nullptr));
  EXPECT_SUCCESS(urEventWait(1, &e));
  EXPECT_SUCCESS(urEventRelease(e));
}

// Free-threaded: threads record timestamps on one queue while others release theirs;
// every event answers its own times and none is lost or answered twice.
TEST_P(urTimestampRecordingTest, ThreadsRecordAndReleaseAtOnce) {
  if (!supported())
    GTEST_SKIP() << found().label() << " does not report UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP";
  constexpr int kThreads = 4, kEach = 40;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        ur_event_handle_t e = nullptr;
        if (urEnqueueTimestampRecordingExp(queue, i % 4 == 0, 0, nullptr, &e) != UR_RESULT_SUCCESS) {
          ++bad;
          continue;
        }
        uint64_t start = 0, end = 0;
        if (urEventWait(1, &e) != UR_RESULT_SUCCESS ||
            urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_START, sizeof start, &start, nullptr) !=
                UR_RESULT_SUCCESS ||
            urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, sizeof end, &end, nullptr) != UR_RESULT_SUCCESS ||
            start == 0 || end < start)
          ++bad;
        if (urEventRelease(e) != UR_RESULT_SUCCESS) ++bad;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(0, bad.load());
  ASSERT_SUCCESS(urQueueFinish(queue));
}

// The device says what the entry points do.
TEST_P(urTimestampRecordingTest, DeviceAnswersMatchTheEntryPoints) {
  auto answer = [&](ur_device_info_t what) {
    ur_bool_t yes = false;
    EXPECT_SUCCESS(urDeviceGetInfo(device(), what, sizeof yes, &yes, nullptr)) << what;
    return bool(yes);
  };
  ur_event_handle_t e = nullptr;
  ur_result_t r = urEnqueueTimestampRecordingExp(queue, true, 0, nullptr, &e);
  EXPECT_EQ(answer(UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP), r == UR_RESULT_SUCCESS) << r;
  if (e) {
    EXPECT_SUCCESS(urEventRelease(e));
  }
  Stamped s;
  s.device = device();
  r = urEnqueueHostTaskExp(queue, sleep_then_stamp, &s, nullptr, 0, nullptr, nullptr);
  EXPECT_EQ(answer(UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP), r == UR_RESULT_SUCCESS) << r;
  ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
  ur_exp_command_buffer_handle_t cb = nullptr;
  r = urCommandBufferCreateExp(context, device(), &desc, &cb);
  EXPECT_EQ(answer(UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP), r == UR_RESULT_SUCCESS) << r;
  if (cb) {
    ur_device_command_buffer_update_capability_flags_t caps = 0;
    EXPECT_SUCCESS(
        urDeviceGetInfo(device(), UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP, sizeof caps, &caps, nullptr));
    EXPECT_SUCCESS(urCommandBufferReleaseExp(cb));
  }
  ASSERT_SUCCESS(urQueueFinish(queue));
}

CONF_INSTANTIATE_DEVICE_SUITE(urTimestampRecordingTest);

} // namespace
