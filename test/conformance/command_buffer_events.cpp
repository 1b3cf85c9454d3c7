// SPDX-License-Identifier: Apache-2.0
// Events that are signalled again (docs/command-buffers.md, "Events that are signalled
// again"): the signal events and wait lists of command-buffer commands, their updates
// (urCommandBufferUpdateSignalEventExp, urCommandBufferUpdateWaitEventsExp), and reusable
// events (urEventCreateExp, signalled by urEnqueueEventsWaitWithBarrierExt). A device
// without COMMAND_BUFFER_EVENT_SUPPORT_EXP or REUSABLE_EVENTS_SUPPORT_EXP skips, saying so.
#include <algorithm>

#include "conformance.hpp"

namespace {

using SyncPoint = ur_exp_command_buffer_sync_point_t;

bool device_says(ur_device_handle_t d, ur_device_info_t q) {
  ur_bool_t yes = false;
  return conf::info(d, q, yes) == UR_RESULT_SUCCESS && yes;
}

class urCommandEventsTest : public conf::QueueTest {
protected:
  static constexpr size_t kWords = 4096;
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    if (!device_says(device(), UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP))
      GTEST_SKIP() << found().label() << " reports no COMMAND_BUFFER_EVENT_SUPPORT_EXP";
    ur_device_handle_t dev = device();
    ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &other));
    for (void *&p : mem) ASSERT_SUCCESS(conf::usm_alloc(context, dev, UR_USM_TYPE_DEVICE, kWords * 4, &p));
  }
  void TearDown() override {
    if (other) {
      EXPECT_SUCCESS(urQueueFinish(other));
      EXPECT_SUCCESS(urQueueRelease(other));
    }
    if (queue) {
      EXPECT_SUCCESS(urQueueFinish(queue));
    }
    if (cb) {
      EXPECT_SUCCESS(urCommandBufferReleaseExp(cb));
    }
    for (void *p : mem) {
      if (p) {
        EXPECT_SUCCESS(urUSMFree(context, p));
      }
    }
    conf::QueueTest::TearDown();
  }
  void make(bool updatable) {
    ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, updatable, false, false};
    ASSERT_SUCCESS(urCommandBufferCreateExp(context, device(), &desc, &cb));
  }
  ur_result_t fill(int i, uint32_t v, uint32_t ne, const ur_event_handle_t *ev, ur_event_handle_t *out,
                   ur_exp_command_buffer_command_handle_t *cmd = nullptr) {
    return urCommandBufferAppendUSMFillExp(cb, mem[i], &v, 4, kWords * 4, 0, nullptr, ne, ev, nullptr, out, cmd);
  }
  void set(int i, uint32_t v) {
    ASSERT_SUCCESS(urEnqueueUSMFill(other, mem[i], 4, &v, kWords * 4, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(other));
  }
  bool all(int i, uint32_t v) {
    std::vector<uint32_t> back(kWords, 0);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(other, true, back.data(), mem[i], kWords * 4, 0, nullptr, nullptr));
    return std::all_of(back.begin(), back.end(), [&](uint32_t x) { return x == v; });
  }
  ur_queue_handle_t other = nullptr;
  ur_exp_command_buffer_handle_t cb = nullptr;
  void *mem[2] = {nullptr, nullptr};
};

TEST_P(urCommandEventsTest, SignalEventStandsForTheNewestRun) {
  make(false);
  ur_event_handle_t filled = nullptr;
  ASSERT_SUCCESS(fill(0, 7, 0, nullptr, &filled));
  ASSERT_NE(nullptr, filled);
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  EXPECT_EQ(UR_EVENT_STATUS_QUEUED, conf::event_status(filled)) << "before any run";
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
  ASSERT_SUCCESS(urEventGetInfo(filled, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_COMMAND_USM_FILL, type);
  for (uint32_t run = 0; run < 3; ++run) {
    set(0, 0);
    ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
    // Another queue follows the command through its signal event.
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(other, false, mem[1], mem[0], kWords * 4, 1, &filled, nullptr));
    ASSERT_SUCCESS(urEventWait(1, &filled));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(filled)) << "run " << run;
    ASSERT_SUCCESS(urQueueFinish(other));
    EXPECT_TRUE(all(1, 7)) << "run " << run << ": the copy did not wait for the command";
  }
  uint32_t refs = 0;
  ASSERT_SUCCESS(urEventGetInfo(filled, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs) << "the caller's and the command's";
  EXPECT_SUCCESS(urEventRelease(filled));
}

TEST_P(urCommandEventsTest, WaitListIsWaitedForAtEveryRun) {
  make(true);
  // A fill on the other queue gates the command buffer's copy at every run.
  ur_event_handle_t gate = nullptr;
  const uint32_t three = 3;
  ASSERT_SUCCESS(urEnqueueUSMFill(other, mem[0], 4, &three, kWords * 4, 0, nullptr, &gate));
  ur_exp_command_buffer_command_handle_t copy = nullptr;
  ASSERT_SUCCESS(
      urCommandBufferAppendUSMMemcpyExp(cb, mem[1], mem[0], kWords * 4, 0, nullptr, 1, &gate, nullptr, nullptr, &copy));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urCommandBufferUpdateWaitEventsExp(copy, 1, &gate)) << "not finalized";
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(1, 3));

  // A new gate: the next run waits for it instead.
  ur_event_handle_t gate2 = nullptr;
  const uint32_t five = 5;
  ASSERT_SUCCESS(urEnqueueUSMFill(other, mem[0], 4, &five, kWords * 4, 0, nullptr, &gate2));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urCommandBufferUpdateWaitEventsExp(copy, 0, nullptr))
      << "the command was appended with one event";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urCommandBufferUpdateWaitEventsExp(copy, 1, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferUpdateWaitEventsExp(nullptr, 1, &gate2));
  ASSERT_SUCCESS(urCommandBufferUpdateWaitEventsExp(copy, 1, &gate2));
  EXPECT_SUCCESS(urEventRelease(gate));
  EXPECT_SUCCESS(urEventRelease(gate2)); // the command holds it
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(1, 5));
}

TEST_P(urCommandEventsTest, UpdateSignalEventGivesANewEvent) {
  make(true);
  ur_event_handle_t first = nullptr, second = nullptr;
  ur_exp_command_buffer_command_handle_t cmd = nullptr, plain = nullptr;
  ASSERT_SUCCESS(fill(0, 9, 0, nullptr, &first, &cmd));
  ASSERT_SUCCESS(fill(1, 9, 0, nullptr, nullptr, &plain));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urCommandBufferUpdateSignalEventExp(cmd, &second)) << "not finalized";
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(first));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urCommandBufferUpdateSignalEventExp(plain, &second))
      << "appended without an event";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urCommandBufferUpdateSignalEventExp(cmd, nullptr));
  ASSERT_SUCCESS(urCommandBufferUpdateSignalEventExp(cmd, &second));
  ASSERT_NE(nullptr, second);
  EXPECT_NE(first, second);
  EXPECT_EQ(UR_EVENT_STATUS_QUEUED, conf::event_status(second)) << "not run yet";
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEventWait(1, &second));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(second));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(first)) << "the old event keeps its last run";
  EXPECT_SUCCESS(urEventRelease(first));
  EXPECT_SUCCESS(urEventRelease(second));
}

TEST_P(urCommandEventsTest, NotUpdatableRefusesEventUpdates) {
  make(false);
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(fill(0, 1, 0, nullptr, &e));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  EXPECT_SUCCESS(urEventRelease(e));
  // No command handle can be had from a buffer that is not updatable.
  ur_exp_command_buffer_command_handle_t cmd = nullptr;
  ur_exp_command_buffer_handle_t cb2 = nullptr;
  ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
  ASSERT_SUCCESS(urCommandBufferCreateExp(context, device(), &desc, &cb2));
  const uint32_t v = 1;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION,
            urCommandBufferAppendUSMFillExp(cb2, mem[0], &v, 4, 64, 0, nullptr, 0, nullptr, nullptr, nullptr, &cmd));
  EXPECT_SUCCESS(urCommandBufferReleaseExp(cb2));
}

// ---- reusable events ----

class urReusableEventTest : public conf::QueueTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    if (!device_says(device(), UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP))
      GTEST_SKIP() << found().label() << " reports no REUSABLE_EVENTS_SUPPORT_EXP";
  }
};

TEST_P(urReusableEventTest, BarrierSignalsItAgainAndAgain) {
  ur_exp_event_desc_t desc{UR_STRUCTURE_TYPE_EXP_EVENT_DESC, nullptr, 0};
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEventCreateExp(context, device(), &desc, &e));
  ASSERT_NE(nullptr, e);
  EXPECT_EQ(UR_EVENT_STATUS_QUEUED, conf::event_status(e)) << "never signalled";
  void *p = nullptr;
  const size_t bytes = 1 << 20;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, bytes, &p));
  ur_queue_handle_t other = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &other));
  for (uint32_t v = 1; v <= 3; ++v) {
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, p, 4, &v, bytes, 0, nullptr, nullptr));
    ur_event_handle_t same = e;
    ASSERT_SUCCESS(urEnqueueEventsWaitWithBarrierExt(queue, nullptr, 0, nullptr, &same));
    EXPECT_EQ(e, same) << "the reusable event is signalled in place";
    // The other queue reads after the signal.
    uint32_t first = 0;
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(other, true, &first, p, 4, 1, &e, nullptr));
    EXPECT_EQ(v, first);
    ASSERT_SUCCESS(urEventWait(1, &e));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e));
  }
  // A barrier whose event pointer holds null still gives a new event of its own.
  ur_event_handle_t fresh = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWaitWithBarrierExt(queue, nullptr, 0, nullptr, &fresh));
  ASSERT_NE(nullptr, fresh);
  EXPECT_NE(e, fresh);
  EXPECT_SUCCESS(urEventWait(1, &fresh));
  EXPECT_SUCCESS(urEventRelease(fresh));
  ASSERT_SUCCESS(urEventRetain(e));
  uint32_t refs = 0;
  ASSERT_SUCCESS(urEventGetInfo(e, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs);
  EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urQueueFinish(other));
  EXPECT_SUCCESS(urQueueRelease(other));
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urReusableEventTest, CreateRefusals) {
  ur_exp_event_desc_t desc{UR_STRUCTURE_TYPE_EXP_EVENT_DESC, nullptr, 0};
  ur_event_handle_t e = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEventCreateExp(nullptr, device(), &desc, &e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEventCreateExp(context, nullptr, &desc, &e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urEventCreateExp(context, device(), nullptr, &e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urEventCreateExp(context, device(), &desc, nullptr));
  desc.flags = UR_EXP_EVENT_FLAGS_MASK;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, urEventCreateExp(context, device(), &desc, &e));
  desc.flags = UR_EXP_EVENT_FLAG_IPC_EXP;
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_FEATURE, urEventCreateExp(context, device(), &desc, &e)) << "no IPC events";
  EXPECT_EQ(nullptr, e);
  // Waiting for one never signalled does not block.
  desc.flags = 0;
  ASSERT_SUCCESS(urEventCreateExp(context, device(), &desc, &e));
  EXPECT_SUCCESS(urEventWait(1, &e));
  EXPECT_SUCCESS(urEnqueueEventsWait(queue, 1, &e, nullptr));
  EXPECT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urEventRelease(e));
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urCommandEventsTest);
CONF_INSTANTIATE_DEVICE_SUITE(urReusableEventTest);
