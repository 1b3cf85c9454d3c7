// SPDX-License-Identifier: Apache-2.0
// Events made from native handles (urEventCreateWithNativeHandle): they answer the
// queue their command ran on, as UR's own conformance suite expects: a UR queue
// whose native handle is the original queue's.
#include "conformance.hpp"

namespace {

using conf::QueueTest;

class urEventNativeTest : public QueueTest {
protected:
  ur_event_handle_t event = nullptr; // of a fill on the fixture's queue
  void *mem = nullptr;

  void SetUp() override {
    CONF_BASE_SETUP(QueueTest);
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &mem));
    const uint32_t pattern = 7;
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, sizeof pattern, &pattern, 4096, 0, nullptr, &event));
  }
  void TearDown() override {
    if (event) {
      EXPECT_SUCCESS(urEventRelease(event));
    }
    if (queue) urQueueFinish(queue);
    if (mem) {
      EXPECT_SUCCESS(urUSMFree(context, mem));
    }
    QueueTest::TearDown();
  }
  // The event again, through its native handle; skips where the adapter has none.
  ur_event_handle_t from_native(ur_event_handle_t e) {
    ur_native_handle_t native = 0;
    ur_result_t r = urEventGetNativeHandle(e, &native);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) return nullptr;
    EXPECT_SUCCESS(r);
    ur_event_handle_t out = nullptr;
    ur_event_native_properties_t props{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, false};
    r = urEventCreateWithNativeHandle(native, context, &props, &out);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) return nullptr;
    EXPECT_SUCCESS(r);
    return out;
  }
  static ur_native_handle_t native_of(ur_queue_handle_t q) {
    ur_native_handle_t n = 0;
    EXPECT_SUCCESS(urQueueGetNativeHandle(q, nullptr, &n));
    return n;
  }
};

TEST_P(urEventNativeTest, AnswersTheQueueItRanOn) {
  ur_event_handle_t copy = from_native(event);
  if (!copy) GTEST_SKIP() << "no native event handles on " << found().label();
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urEventGetInfo(copy, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
  ASSERT_NE(nullptr, q) << "an event from a native handle answered no queue";
  EXPECT_EQ(native_of(queue), native_of(q));
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urEventGetInfo(copy, UR_EVENT_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  ASSERT_SUCCESS(urEventWait(1, &copy));
  ur_event_status_t status{};
  ASSERT_SUCCESS(urEventGetInfo(copy, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, status);
  EXPECT_SUCCESS(urEventRelease(copy));
}

CONF_INSTANTIATE_DEVICE_SUITE(urEventNativeTest);

} // namespace
