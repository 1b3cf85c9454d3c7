// SPDX-License-Identifier: Apache-2.0
// Item 3 of issue 22, the loader's half: with UR_LAYER_FULL_VALIDATION a call naming a
// handle the program already released is refused, and logged, before the loader reads a
// dispatch table from the handle (docs/loader.md, "Released handles").
#include <atomic>
#include <cstdio>

#include "helpers.hpp"

using namespace loader_test;

namespace {

const char kFull[] = "UR_LAYER_FULL_VALIDATION";
const char kValidation[] = "UR_LAYER_PARAMETER_VALIDATION";
const char kLeaks[] = "UR_LAYER_LEAK_CHECKING";

// The mock keeps released objects readable and refuses them itself; these replacements
// count how often a call reached the adapter, so that the tests see who refused.
std::atomic<int> g_adapter_calls{0};
ur_result_t UR_APICALL counting_flush(ur_queue_handle_t) {
  ++g_adapter_calls;
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL counting_context_info(ur_context_handle_t, ur_context_info_t, size_t, void *, size_t *) {
  ++g_adapter_calls;
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL counting_event_info(ur_event_handle_t, ur_event_info_t, size_t, void *, size_t *) {
  ++g_adapter_calls;
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL counting_event_release(ur_event_handle_t) {
  ++g_adapter_calls;
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL counting_events_wait(ur_queue_handle_t, uint32_t, const ur_event_handle_t *,
                                            ur_event_handle_t *) {
  ++g_adapter_calls;
  return UR_RESULT_SUCCESS;
}

struct Session {
  explicit Session(const std::vector<std::string> &layers) : scope(true, layers) {
    auto list = adapters();
    EXPECT_EQ(list.size(), 1u);
    if (!list.empty()) objects.create(list[0]);
  }
  ~Session() {
    if (objects.adapter) {
      ordo_mock::api_of(objects.adapter).restore_all();
      objects.release();
      urAdapterRelease(objects.adapter);
    }
  }
  LoaderScope scope;
  MockObjects objects;
};

std::string refusal(const char *function, const char *result, const char *param, const void *handle) {
  char line[512];
  std::snprintf(line, sizeof line, "<validation>[WARNING]: %s: %s because %s (%p) was released", function, result,
                param, handle);
  return line;
}

} // namespace

TEST(ReleasedHandles, FullValidationRefusesAndLogsEachUse) {
  testing::internal::CaptureStderr();
  const void *queue_address = nullptr, *context_address = nullptr, *event_address = nullptr;
  int calls_after_release = -1;
  {
    Session s({kFull});
    ur_queue_handle_t queue = nullptr;
    ur_context_handle_t context = nullptr;
    ur_event_handle_t event = nullptr;
    ASSERT_EQ(urContextCreate(1, &s.objects.device, nullptr, &context), UR_RESULT_SUCCESS);
    ASSERT_EQ(urQueueCreate(context, s.objects.device, nullptr, &queue), UR_RESULT_SUCCESS);
    ASSERT_EQ(urEnqueueEventsWait(queue, 0, nullptr, &event), UR_RESULT_SUCCESS);
    queue_address = queue;
    context_address = context;
    event_address = event;
    EXPECT_EQ(urEventRelease(event), UR_RESULT_SUCCESS);
    EXPECT_EQ(urQueueRelease(queue), UR_RESULT_SUCCESS);
    EXPECT_EQ(urContextRelease(context), UR_RESULT_SUCCESS);
    // From here on the adapter accepts anything; only the layer can refuse.
    ordo_mock::replace(s.objects.queue, "urQueueFlush", counting_flush);
    ordo_mock::replace(s.objects.queue, "urContextGetInfo", counting_context_info);
    ordo_mock::replace(s.objects.queue, "urEventRelease", counting_event_release);
    ordo_mock::replace(s.objects.queue, "urEnqueueEventsWait", counting_events_wait);
    g_adapter_calls = 0;
    EXPECT_EQ(urQueueFlush(queue), UR_RESULT_ERROR_INVALID_QUEUE);
    uint32_t n = 0;
    EXPECT_EQ(urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr),
              UR_RESULT_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(urEventRelease(event), UR_RESULT_ERROR_INVALID_EVENT);
    EXPECT_EQ(urEnqueueEventsWait(s.objects.queue, 1, &event, nullptr), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
    calls_after_release = g_adapter_calls.load();
    // Handles still alive go through.
    EXPECT_EQ(urQueueFlush(s.objects.queue), UR_RESULT_SUCCESS);
    EXPECT_EQ(g_adapter_calls.load(), calls_after_release + 1);
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(calls_after_release, 0) << "a released handle reached the adapter\n" << log;
  EXPECT_EQ(count_lines_with(log, refusal("urQueueFlush", "UR_RESULT_ERROR_INVALID_QUEUE", "hQueue", queue_address)),
            1u)
      << log;
  EXPECT_EQ(count_lines_with(
                log, refusal("urContextGetInfo", "UR_RESULT_ERROR_INVALID_CONTEXT", "hContext", context_address)),
            1u)
      << log;
  EXPECT_EQ(count_lines_with(log, refusal("urEventRelease", "UR_RESULT_ERROR_INVALID_EVENT", "hEvent", event_address)),
            1u)
      << log;
  EXPECT_EQ(count_lines_with(log, refusal("urEnqueueEventsWait", "UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST",
                                          "phEventWaitList[i]", event_address)),
            1u)
      << log;
  EXPECT_EQ(log.find("still alive"), std::string::npos) << log;
}

// Both layers named one by one are full validation too; a handle that is handed out
// again (the adapter reused it, or a getter returned it) is usable again.
TEST(ReleasedHandles, BothLayersByNameAndReuseMakesAHandleLiveAgain) {
  Session s({kValidation, kLeaks});
  ur_context_handle_t context = nullptr;
  ASSERT_EQ(urContextCreate(1, &s.objects.device, nullptr, &context), UR_RESULT_SUCCESS);
  ASSERT_EQ(urContextRelease(context), UR_RESULT_SUCCESS);
  EXPECT_EQ(urContextRetain(context), UR_RESULT_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(urAdapterRelease(s.objects.adapter), UR_RESULT_SUCCESS);
  uint32_t n = 0;
  EXPECT_EQ(urAdapterGetInfo(s.objects.adapter, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE); // ur_result_t has no INVALID_ADAPTER
  ur_adapter_handle_t again = nullptr;
  ASSERT_EQ(urAdapterGet(1, &again, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(again, s.objects.adapter);
  EXPECT_EQ(urAdapterGetInfo(again, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
}

// An event's callback may still be handed the event after the program's last release.
TEST(ReleasedHandles, AnEventWithACallbackStaysNameable) {
  Session s({kFull});
  ur_event_handle_t event = nullptr;
  ASSERT_EQ(urEnqueueEventsWait(s.objects.queue, 0, nullptr, &event), UR_RESULT_SUCCESS);
  auto callback = [](ur_event_handle_t, ur_execution_info_t, void *) {};
  ur_result_t set = urEventSetCallback(event, UR_EXECUTION_INFO_COMPLETE, callback, nullptr);
  if (set != UR_RESULT_SUCCESS) GTEST_SKIP() << "the mock adapter has no event callbacks";
  ASSERT_EQ(urEventRelease(event), UR_RESULT_SUCCESS);
  // The mock forgets the event at its last release; what matters is that the layer lets
  // the call through to the adapter, which alone knows whether its callbacks still run.
  ordo_mock::replace(s.objects.queue, "urEventGetInfo", counting_event_info);
  g_adapter_calls = 0;
  ur_event_status_t status{};
  EXPECT_EQ(urEventGetInfo(event, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(g_adapter_calls.load(), 1);
}

// Parameter validation alone keeps no count of references, so it cannot tell.
TEST(ReleasedHandles, ParameterValidationAloneLetsTheAdapterAnswer) {
  Session s({kValidation});
  ur_context_handle_t context = nullptr;
  ASSERT_EQ(urContextCreate(1, &s.objects.device, nullptr, &context), UR_RESULT_SUCCESS);
  ASSERT_EQ(urContextRelease(context), UR_RESULT_SUCCESS);
  ordo_mock::replace(s.objects.queue, "urContextGetInfo", counting_context_info);
  g_adapter_calls = 0;
  uint32_t n = 0;
  EXPECT_EQ(urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(g_adapter_calls.load(), 1);
}
