// SPDX-License-Identifier: Apache-2.0
// Handles used after their last release (issue 22, item 3; docs/adapter-guide.md,
// "Released handles"): the loader reads the dispatch table from the handle's first word,
// so an adapter that frees the object hands the loader freed memory to call through.
// Adapters on ordo::retire leave a table there that refuses every call, and keep the
// memory out of reuse for the next ordo::kRetiredHandlesKept retirements. Every call
// below must give the INVALID_<OBJECT> code, not crash.
//
// The parameter-validation layer the suite turns on does not screen released handles
// (only UR_LAYER_FULL_VALIDATION does), so these calls reach the adapter's handle either
// way; the ctest entries conformance_released_handles_<backend> run them once more with
// no layer at all (ORDO_CONFORMANCE_NO_VALIDATION=1, UR_ENABLE_LAYERS empty).
#include <vector>

#include "conformance.hpp"

namespace {

class urReleasedHandlesTest : public conf::ContextTest {
protected:
  void SetUp() override { CONF_BASE_SETUP(conf::ContextTest); }

  ur_queue_handle_t new_queue() {
    ur_queue_handle_t q = nullptr;
    EXPECT_SUCCESS(conf::make_queue(context, device(), 0, &q));
    return q;
  }
};

TEST_P(urReleasedHandlesTest, QueueCallsAfterTheLastReleaseAreRefused) {
  ur_queue_handle_t q = new_queue();
  ASSERT_NE(nullptr, q);
  ASSERT_SUCCESS(urQueueRelease(q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueFlush(q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueFinish(q));
  uint32_t count = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE,
            urQueueGetInfo(q, UR_QUEUE_INFO_REFERENCE_COUNT, sizeof(count), &count, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urEnqueueEventsWait(q, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueRetain(q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueRelease(q));
}

TEST_P(urReleasedHandlesTest, ContextCallsAfterTheLastReleaseAreRefused) {
  ur_device_handle_t dev = device();
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &c));
  ASSERT_SUCCESS(urContextRelease(c));
  uint32_t devices = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT,
            urContextGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, sizeof(devices), &devices, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urContextRelease(c));
}

// The queue goes first, so that nothing but the user holds the event: its first release
// destroys it (and then the queue), its second reaches the retired handle.
TEST_P(urReleasedHandlesTest, SecondEventReleaseIsRefused) {
  ur_queue_handle_t q = new_queue();
  ASSERT_NE(nullptr, q);
  ur_event_handle_t ev = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, &ev));
  ASSERT_SUCCESS(urQueueFinish(q));
  ASSERT_SUCCESS(urQueueRelease(q));
  ASSERT_SUCCESS(urEventRelease(ev));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventRelease(ev));
  ur_event_status_t status{};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT,
            urEventGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEventWait(1, &ev));
}

// The queue stays: an adapter may take the event back for its next command (native CPU
// recycles it; docs/adapter-guide.md, "Released handles"), and until a command takes it
// the stale handle is refused like any released one, not read as a live event.
// On Level Zero the queue's list still holds the event after urQueueFinish (its newest
// command's), so the event lives on with a user count of 0: every entry point that takes
// an event refuses it all the same (docs/level-zero.md, "Event references").
TEST_P(urReleasedHandlesTest, EventReleasedWhileItsQueueLivesIsRefused) {
  ur_queue_handle_t q = new_queue();
  ASSERT_NE(nullptr, q);
  ur_event_handle_t ev = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, &ev));
  ASSERT_SUCCESS(urQueueFinish(q));
  ASSERT_SUCCESS(urEventRelease(ev));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventRelease(ev));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventRetain(ev));
  ur_event_status_t status{};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT,
            urEventGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
  // The loader's retired table answers for the wait list; an adapter's own check for the event.
  ASSERT_RESULT_IN(urEventWait(1, &ev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, UR_RESULT_ERROR_INVALID_EVENT);
  ur_native_handle_t native = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventGetNativeHandle(ev, &native));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT,
            urEventSetCallback(
                ev, UR_EXECUTION_INFO_COMPLETE, [](ur_event_handle_t, ur_execution_info_t, void *) {}, nullptr));
  // In a command's wait list: refused, and nothing is enqueued (the queue still works).
  ur_event_handle_t after = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEnqueueEventsWait(q, 1, &ev, &after));
  EXPECT_EQ(nullptr, after);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEnqueueEventsWaitWithBarrier(q, 1, &ev, nullptr));
  ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(q));
  ASSERT_SUCCESS(urQueueRelease(q));
}

// The memory of a released handle is not handed to the next objects made: well within
// the bound (ordo::kRetiredHandlesKept, 1024), a released queue stays refused while
// queues and events of the same size come and go.
// An object the user released may live on while the adapter holds it (a queue holds its
// context, a list or callback its event): a retain then must not bring it back, or the
// matching release takes an internal holder's reference (Level Zero freed such an event
// twice). Retain and release both refuse; the holder's own release still works after.
TEST_P(urReleasedHandlesTest, RetainAfterTheLastReleaseIsRefusedWhileHeld) {
  ur_device_handle_t dev = device();
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &c));
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(conf::make_queue(c, dev, 0, &q));
  ur_event_handle_t ev = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, &ev));
  ASSERT_SUCCESS(urContextRelease(c)); // the queue still holds it
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urContextRetain(c));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urContextRelease(c));
  ASSERT_SUCCESS(urEventRelease(ev)); // the queue's list may still hold it
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventRetain(ev));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventRelease(ev));
  ASSERT_SUCCESS(urQueueFinish(q));
  ASSERT_SUCCESS(urQueueRelease(q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueRetain(q));
}

TEST_P(urReleasedHandlesTest, StaysRefusedWhileOtherObjectsComeAndGo) {
  ur_queue_handle_t released = new_queue();
  ASSERT_NE(nullptr, released);
  ASSERT_SUCCESS(urQueueRelease(released));
  for (int i = 0; i < 100; ++i) {
    ur_queue_handle_t q = new_queue();
    ASSERT_NE(nullptr, q);
    EXPECT_NE(released, q) << "a new queue took the released queue's memory";
    ur_event_handle_t ev = nullptr;
    ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, &ev));
    ASSERT_SUCCESS(urQueueFinish(q));
    ASSERT_SUCCESS(urQueueRelease(q));
    ASSERT_SUCCESS(urEventRelease(ev));
  }
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueFlush(released));
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urReleasedHandlesTest);
