// SPDX-License-Identifier: Apache-2.0
// The layers, each on and off: tracing output, parameter validation before the
// adapter, the leak report at teardown, full validation as both.
#include <atomic>

#include "helpers.hpp"
#include "ur_ddi.h"

using namespace loader_test;

namespace {

const char kTracing[] = "UR_LAYER_TRACING";
const char kValidation[] = "UR_LAYER_PARAMETER_VALIDATION";
const char kLeaks[] = "UR_LAYER_LEAK_CHECKING";
const char kFull[] = "UR_LAYER_FULL_VALIDATION";

std::atomic<int> g_fill_calls{0};
ur_result_t UR_APICALL counting_fill(ur_queue_handle_t, void *, size_t, const void *, size_t, uint32_t,
                                     const ur_event_handle_t *, ur_event_handle_t *) {
  ++g_fill_calls;
  return UR_RESULT_ERROR_INVALID_OPERATION;
}

// The mocking loader with `layers`, one context and queue, released at the end.
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

// Stream-ordered allocation, pools and graph capture for the mock, which answers
// UNSUPPORTED_FEATURE for all of them. Events are real mock events, made by the mock's own
// urEnqueueEventsWait (taken from its table, so the layers do not see that call).
ur_pfnEnqueueEventsWait_t g_mock_events_wait = nullptr;
uint64_t g_async_memory[8];
ur_result_t UR_APICALL async_alloc(ur_queue_handle_t hQueue, ur_usm_pool_handle_t, const size_t,
                                   const ur_exp_async_usm_alloc_properties_t *, uint32_t numEvents,
                                   const ur_event_handle_t *waitList, void **ppMem, ur_event_handle_t *phEvent) {
  *ppMem = g_async_memory;
  return g_mock_events_wait(hQueue, numEvents, waitList, phEvent);
}
ur_result_t UR_APICALL async_free(ur_queue_handle_t hQueue, ur_usm_pool_handle_t, void *, uint32_t numEvents,
                                  const ur_event_handle_t *waitList, ur_event_handle_t *phEvent) {
  return g_mock_events_wait(hQueue, numEvents, waitList, phEvent);
}

// Pools and graphs: objects with the mock's table in the first word, like its handles.
struct FakeObject {
  const void *table;
};
FakeObject g_pool, g_default_pool, g_graph, g_new_graph;
ur_exp_graph_handle_t g_capturing = nullptr;
template <class H> H fake(FakeObject &o, const void *like) {
  o.table = *static_cast<const void *const *>(like);
  return reinterpret_cast<H>(&o);
}
ur_result_t UR_APICALL pool_create(ur_context_handle_t hContext, ur_device_handle_t, ur_usm_pool_desc_t *,
                                   ur_usm_pool_handle_t *pPool) {
  *pPool = fake<ur_usm_pool_handle_t>(g_pool, hContext);
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL default_pool(ur_context_handle_t hContext, ur_device_handle_t, ur_usm_pool_handle_t *pPool) {
  *pPool = fake<ur_usm_pool_handle_t>(g_default_pool, hContext);
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL pool_destroy(ur_context_handle_t, ur_device_handle_t, ur_usm_pool_handle_t) {
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL graph_create(ur_context_handle_t hContext, ur_exp_graph_handle_t *phGraph) {
  *phGraph = fake<ur_exp_graph_handle_t>(g_graph, hContext);
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL begin_capture(ur_queue_handle_t hQueue) {
  g_capturing = fake<ur_exp_graph_handle_t>(g_new_graph, hQueue);
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL begin_capture_into(ur_queue_handle_t, ur_exp_graph_handle_t hGraph) {
  g_capturing = hGraph;
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL end_capture(ur_queue_handle_t, ur_exp_graph_handle_t *phGraph) {
  *phGraph = g_capturing;
  g_capturing = nullptr;
  return UR_RESULT_SUCCESS;
}
ur_result_t UR_APICALL graph_destroy(ur_exp_graph_handle_t) { return UR_RESULT_SUCCESS; }

void fake_experimental_features(ur_queue_handle_t q) {
  // A null replacement restores the mock's own function and hands back the current one.
  g_mock_events_wait = ordo_mock::replace(q, "urEnqueueEventsWait", ur_pfnEnqueueEventsWait_t{});
  ASSERT_NE(g_mock_events_wait, nullptr);
  ordo_mock::replace(q, "urEnqueueUSMDeviceAllocExp", async_alloc);
  ordo_mock::replace(q, "urEnqueueUSMSharedAllocExp", async_alloc);
  ordo_mock::replace(q, "urEnqueueUSMHostAllocExp", async_alloc);
  ordo_mock::replace(q, "urEnqueueUSMFreeExp", async_free);
  ordo_mock::replace(q, "urUSMPoolCreateExp", pool_create);
  ordo_mock::replace(q, "urUSMPoolGetDefaultDevicePoolExp", default_pool);
  ordo_mock::replace(q, "urUSMPoolDestroyExp", pool_destroy);
  ordo_mock::replace(q, "urGraphCreateExp", graph_create);
  ordo_mock::replace(q, "urQueueBeginGraphCaptureExp", begin_capture);
  ordo_mock::replace(q, "urQueueBeginCaptureIntoGraphExp", begin_capture_into);
  ordo_mock::replace(q, "urQueueEndGraphCaptureExp", end_capture);
  ordo_mock::replace(q, "urGraphDestroyExp", graph_destroy);
}

} // namespace

TEST(Tracing, PrintsEachCallWithArgumentsResultAndDuration) {
  testing::internal::CaptureStdout();
  {
    Session s({kTracing});
    char name[32];
    urDeviceGetInfo(s.objects.device, UR_DEVICE_INFO_NAME, sizeof name, name, nullptr);
    urQueueFlush(s.objects.queue);
    urQueueFlush(nullptr);
  }
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(any_line_matches(out, "<tracing>[INFO]: urQueueFlush(.hQueue = 0x*) -> UR_RESULT_SUCCESS (* ns)")) << out;
  EXPECT_TRUE(any_line_matches(out, "*urDeviceGetInfo(.hDevice = 0x*, .propName = UR_DEVICE_INFO_NAME, .propSize = 32, "
                                    ".pPropValue = 0x*, .pPropSizeRet = nullptr) -> UR_RESULT_SUCCESS (* ns)"))
      << out;
  EXPECT_NE(out.find("urQueueFlush(.hQueue = nullptr) -> UR_RESULT_ERROR_INVALID_NULL_HANDLE"), std::string::npos)
      << out;
  // A created handle is shown after the arrow of its out-parameter.
  EXPECT_TRUE(any_line_matches(out, "*urContextCreate(*.phContext = 0x* (0x*)) -> UR_RESULT_SUCCESS*")) << out;
  EXPECT_EQ(count_lines_with(out, "urAdapterGet("), 2u) << out; // count, then the handle
}

TEST(Tracing, OffPrintsNothing) {
  testing::internal::CaptureStdout();
  {
    Session s({});
    urQueueFlush(s.objects.queue);
  }
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.find("urQueueFlush("), std::string::npos) << out;
}

TEST(Tracing, EnabledFromTheEnvironment) {
  EnvVar layers("UR_ENABLE_LAYERS", "UR_LAYER_TRACING");
  testing::internal::CaptureStdout();
  {
    Session s({});
    urQueueFinish(s.objects.queue);
  }
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("urQueueFinish(.hQueue = 0x"), std::string::npos) << out;
}

TEST(Tracing, ShowsTheCodeLocationFromTheCallback) {
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderConfigSetMockingEnabled(config, true), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderConfigEnableLayer(config, kTracing), UR_RESULT_SUCCESS);
  auto where = [](void *) { return ur_code_location_t{"caller_function", "caller.cpp", 42, 7}; };
  ASSERT_EQ(urLoaderConfigSetCodeLocationCallback(config, where, nullptr), UR_RESULT_SUCCESS);
  testing::internal::CaptureStdout();
  ASSERT_EQ(urLoaderInit(0, config), UR_RESULT_SUCCESS);
  uint32_t n = 0;
  urAdapterGet(0, nullptr, &n);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("at caller.cpp:42 in caller_function"), std::string::npos) << out;
  urLoaderConfigRelease(config);
}

TEST(ParameterValidation, OnRefusesBadArgumentsBeforeTheAdapter) {
  Session s({kValidation});
  g_fill_calls = 0;
  ordo_mock::replace(s.objects.queue, "urEnqueueUSMFill", counting_fill);
  uint32_t pattern = 1;
  EXPECT_EQ(urEnqueueUSMFill(s.objects.queue, nullptr, 4, &pattern, 16, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  uint32_t buffer[4];
  EXPECT_EQ(urEnqueueUSMFill(s.objects.queue, buffer, 4, &pattern, 10, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(g_fill_calls.load(), 0);
  // A valid call goes through to the adapter.
  EXPECT_EQ(urEnqueueUSMFill(s.objects.queue, buffer, 4, &pattern, 16, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_OPERATION);
  EXPECT_EQ(g_fill_calls.load(), 1);
}

TEST(ParameterValidation, OffLetsTheAdapterSeeTheCall) {
  Session s({});
  g_fill_calls = 0;
  ordo_mock::replace(s.objects.queue, "urEnqueueUSMFill", counting_fill);
  uint32_t pattern = 1;
  EXPECT_EQ(urEnqueueUSMFill(s.objects.queue, nullptr, 4, &pattern, 16, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_OPERATION);
  EXPECT_EQ(g_fill_calls.load(), 1);
}

TEST(ParameterValidation, ChecksEveryWaitListEntryAndLogsWhy) {
  testing::internal::CaptureStderr();
  {
    Session s({kValidation});
    ur_event_handle_t event = nullptr;
    ASSERT_EQ(urEnqueueEventsWait(s.objects.queue, 0, nullptr, &event), UR_RESULT_SUCCESS);
    ur_event_handle_t list[2] = {event, nullptr};
    EXPECT_EQ(urEnqueueEventsWait(s.objects.queue, 2, list, nullptr), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
    EXPECT_EQ(urEventWait(2, list), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
    EXPECT_EQ(urEventWait(1, list), UR_RESULT_SUCCESS);
    EXPECT_EQ(urEventRelease(event), UR_RESULT_SUCCESS);
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("<validation>[WARNING]: urEnqueueEventsWait: UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST because "
                     "`phEventWaitList[i] == NULL for some i < numEventsInWaitList`"),
            std::string::npos)
      << log;
}

// What UR's conformance suite found Ordo's layer letting through or answering differently
// (issue 10): the layer refuses these before the adapter, with UR's layer's codes.
TEST(ParameterValidation, AnswersAsUrsOwnLayer) {
  Session s({kValidation});
  ur_sampler_desc_t sampler_desc{};
  sampler_desc.stype = UR_STRUCTURE_TYPE_SAMPLER_DESC;
  sampler_desc.addressingMode =
      static_cast<ur_sampler_addressing_mode_t>(UR_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT + 1);
  ur_sampler_handle_t sampler = nullptr;
  EXPECT_EQ(urSamplerCreate(s.objects.context, &sampler_desc, &sampler), UR_RESULT_ERROR_INVALID_ENUMERATION);
  sampler_desc.addressingMode = UR_SAMPLER_ADDRESSING_MODE_CLAMP;
  sampler_desc.filterMode = static_cast<ur_sampler_filter_mode_t>(UR_SAMPLER_FILTER_MODE_LINEAR + 1);
  EXPECT_EQ(urSamplerCreate(s.objects.context, &sampler_desc, &sampler), UR_RESULT_ERROR_INVALID_ENUMERATION);

  ur_device_partition_properties_t partition{};
  partition.stype = UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES;
  partition.PropCount = 1; // but no array of properties
  uint32_t n = 0;
  EXPECT_EQ(urDevicePartition(s.objects.device, &partition, 0, nullptr, &n), UR_RESULT_ERROR_INVALID_NULL_POINTER);

  ur_context_properties_t context_props{};
  context_props.stype = UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES;
  context_props.flags = static_cast<ur_context_flags_t>(1u << 30);
  ur_context_handle_t context = nullptr;
  EXPECT_EQ(urContextCreate(1, &s.objects.device, &context_props, &context), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(urContextSetExtendedDeleter(s.objects.context, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);

  ur_queue_properties_t queue_props{};
  queue_props.stype = UR_STRUCTURE_TYPE_QUEUE_PROPERTIES;
  queue_props.flags = static_cast<ur_queue_flags_t>(1u << 30);
  ur_queue_handle_t queue = nullptr;
  EXPECT_EQ(urQueueCreate(s.objects.context, s.objects.device, &queue_props, &queue),
            UR_RESULT_ERROR_INVALID_ENUMERATION);

  ur_event_handle_t event = nullptr;
  ASSERT_EQ(urEnqueueEventsWait(s.objects.queue, 0, nullptr, &event), UR_RESULT_SUCCESS);
  EXPECT_EQ(urEventSetCallback(event, UR_EXECUTION_INFO_QUEUED, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  // Null pointers are checked before null handles.
  EXPECT_EQ(urEventSetCallback(nullptr, UR_EXECUTION_INFO_COMPLETE, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urEventRelease(event), UR_RESULT_SUCCESS);
}

TEST(LeakChecking, ReportsEveryLiveHandleWithTypeAndCountAtTeardown) {
  ur_context_handle_t leaked = nullptr;
  testing::internal::CaptureStderr();
  {
    Session s({kLeaks});
    ASSERT_EQ(urContextCreate(1, &s.objects.device, nullptr, &leaked), UR_RESULT_SUCCESS);
    ASSERT_EQ(urContextRetain(leaked), UR_RESULT_SUCCESS);
    ASSERT_EQ(urContextRetain(leaked), UR_RESULT_SUCCESS);
    ASSERT_EQ(urContextRelease(leaked), UR_RESULT_SUCCESS);
    void *p = nullptr; // not a handle: not the leak checker's business
    ASSERT_EQ(urUSMHostAlloc(s.objects.context, nullptr, nullptr, 64, &p), UR_RESULT_SUCCESS);
    ASSERT_EQ(urUSMFree(s.objects.context, p), UR_RESULT_SUCCESS);
  }
  std::string log = testing::internal::GetCapturedStderr();
  char expected[128];
  std::snprintf(expected, sizeof expected, "ur_context_handle_t %p still alive with reference count 2",
                static_cast<void *>(leaked));
  EXPECT_EQ(count_lines_with(log, expected), 1u) << log;
  EXPECT_EQ(count_lines_with(log, "still alive"), 1u) << log; // everything else was released
  EXPECT_EQ(count_lines_with(log, "1 handle leaked"), 1u) << log;
}

TEST(LeakChecking, QuietWhenEverythingIsReleased) {
  testing::internal::CaptureStderr();
  { Session s({kLeaks}); }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("<leak_checking>"), std::string::npos) << log;
}

TEST(LeakChecking, OffReportsNothing) {
  testing::internal::CaptureStderr();
  {
    Session s({});
    ur_context_handle_t leaked = nullptr;
    ASSERT_EQ(urContextCreate(1, &s.objects.device, nullptr, &leaked), UR_RESULT_SUCCESS);
    ASSERT_EQ(urContextRelease(leaked), UR_RESULT_SUCCESS);
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("still alive"), std::string::npos) << log;
}

TEST(LeakChecking, ReleaseOfADeadHandleIsReported) {
  testing::internal::CaptureStderr();
  {
    Session s({kLeaks});
    ur_context_handle_t c = nullptr;
    ASSERT_EQ(urContextCreate(1, &s.objects.device, nullptr, &c), UR_RESULT_SUCCESS);
    ASSERT_EQ(urContextRelease(c), UR_RESULT_SUCCESS);
    EXPECT_EQ(urContextRelease(c), UR_RESULT_ERROR_INVALID_CONTEXT); // the mock refuses it
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("still alive"), std::string::npos) << log;
}

// Events of stream-ordered allocation and free are new references, with leak checking
// alone and under full validation.
TEST(LeakChecking, StreamOrderedAllocAndFreeEventsReleasedOnceAreQuiet) {
  for (const char *layer : {kLeaks, kFull}) {
    testing::internal::CaptureStderr();
    {
      Session s({layer});
      fake_experimental_features(s.objects.queue);
      ur_queue_handle_t q = s.objects.queue;
      void *p = nullptr;
      ur_event_handle_t alloc = nullptr, shared = nullptr, freed = nullptr;
      EXPECT_EQ(urEnqueueUSMDeviceAllocExp(q, nullptr, 64, nullptr, 0, nullptr, &p, &alloc), UR_RESULT_SUCCESS);
      EXPECT_EQ(urEnqueueUSMSharedAllocExp(q, nullptr, 64, nullptr, 1, &alloc, &p, &shared), UR_RESULT_SUCCESS);
      EXPECT_EQ(urEnqueueUSMFreeExp(q, nullptr, p, 1, &shared, &freed), UR_RESULT_SUCCESS);
      ASSERT_NE(alloc, nullptr);
      ASSERT_NE(freed, nullptr);
      EXPECT_EQ(urEventRelease(alloc), UR_RESULT_SUCCESS);
      EXPECT_EQ(urEventRelease(shared), UR_RESULT_SUCCESS);
      EXPECT_EQ(urEventRelease(freed), UR_RESULT_SUCCESS);
      // No event asked for, none counted.
      EXPECT_EQ(urEnqueueUSMDeviceAllocExp(q, nullptr, 64, nullptr, 0, nullptr, &p, nullptr), UR_RESULT_SUCCESS);
    }
    std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(log.find("<leak_checking>"), std::string::npos) << layer << "\n" << log;
  }
}

TEST(LeakChecking, UnreleasedEventOfUSMHostAllocExpIsReported) {
  ur_event_handle_t leaked = nullptr;
  testing::internal::CaptureStderr();
  {
    Session s({kLeaks});
    fake_experimental_features(s.objects.queue);
    void *p = nullptr;
    ASSERT_EQ(urEnqueueUSMHostAllocExp(s.objects.queue, nullptr, 64, nullptr, 0, nullptr, &p, &leaked),
              UR_RESULT_SUCCESS);
  }
  std::string log = testing::internal::GetCapturedStderr();
  char expected[128];
  std::snprintf(expected, sizeof expected, "ur_event_handle_t %p still alive with reference count 1",
                static_cast<void *>(leaked));
  EXPECT_EQ(count_lines_with(log, expected), 1u) << log;
  EXPECT_EQ(count_lines_with(log, "1 handle leaked"), 1u) << log;
  EXPECT_EQ(log.find("not alive"), std::string::npos) << log;
}

// A pool from urUSMPoolCreateExp ends with urUSMPoolDestroyExp; the default pool is the
// context's, so it is never the caller's to end and never counted.
TEST(LeakChecking, CreatedPoolEndsWithDestroyAndTheDefaultPoolIsNotCounted) {
  testing::internal::CaptureStderr();
  {
    Session s({kLeaks});
    fake_experimental_features(s.objects.queue);
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
    ur_usm_pool_handle_t pool = nullptr, default_pool = nullptr;
    ASSERT_EQ(urUSMPoolCreateExp(s.objects.context, s.objects.device, &desc, &pool), UR_RESULT_SUCCESS);
    EXPECT_EQ(urUSMPoolDestroyExp(s.objects.context, s.objects.device, pool), UR_RESULT_SUCCESS);
    ASSERT_EQ(urUSMPoolGetDefaultDevicePoolExp(s.objects.context, s.objects.device, &default_pool), UR_RESULT_SUCCESS);
    ASSERT_NE(default_pool, nullptr);
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("<leak_checking>"), std::string::npos) << log;
}

// urQueueEndGraphCaptureExp hands back the caller's own graph after a capture into it (not
// a second reference), and a new graph after urQueueBeginGraphCaptureExp.
TEST(LeakChecking, EndGraphCaptureCountsOnlyANewGraph) {
  ur_exp_graph_handle_t captured = nullptr;
  testing::internal::CaptureStderr();
  {
    Session s({kLeaks});
    fake_experimental_features(s.objects.queue);
    ur_exp_graph_handle_t graph = nullptr, same = nullptr;
    ASSERT_EQ(urGraphCreateExp(s.objects.context, &graph), UR_RESULT_SUCCESS);
    ASSERT_EQ(urQueueBeginCaptureIntoGraphExp(s.objects.queue, graph), UR_RESULT_SUCCESS);
    ASSERT_EQ(urQueueEndGraphCaptureExp(s.objects.queue, &same), UR_RESULT_SUCCESS);
    EXPECT_EQ(same, graph);
    EXPECT_EQ(urGraphDestroyExp(graph), UR_RESULT_SUCCESS);
    ASSERT_EQ(urQueueBeginGraphCaptureExp(s.objects.queue), UR_RESULT_SUCCESS);
    ASSERT_EQ(urQueueEndGraphCaptureExp(s.objects.queue, &captured), UR_RESULT_SUCCESS);
  }
  std::string log = testing::internal::GetCapturedStderr();
  char expected[128];
  std::snprintf(expected, sizeof expected, "ur_exp_graph_handle_t %p still alive with reference count 1",
                static_cast<void *>(captured));
  EXPECT_EQ(count_lines_with(log, expected), 1u) << log;
  EXPECT_EQ(count_lines_with(log, "still alive"), 1u) << log;
  EXPECT_EQ(log.find("not alive"), std::string::npos) << log;
}

TEST(FullValidation, IsParameterValidationAndLeakChecking) {
  testing::internal::CaptureStderr();
  {
    Session s({kFull});
    EXPECT_EQ(urQueueCreate(s.objects.context, s.objects.device, nullptr, nullptr),
              UR_RESULT_ERROR_INVALID_NULL_POINTER);
    ur_queue_handle_t leaked = nullptr;
    ASSERT_EQ(urQueueCreate(s.objects.context, s.objects.device, nullptr, &leaked), UR_RESULT_SUCCESS);
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines_with(log, "urQueueCreate: UR_RESULT_ERROR_INVALID_NULL_POINTER because `NULL == phQueue`"), 1u)
      << log;
  EXPECT_EQ(count_lines_with(log, "ur_queue_handle_t"), 1u) << log;
}

TEST(Layers, UnknownNamesAreRefusedOrLogged) {
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_NO_SUCH_THING"), UR_RESULT_ERROR_LAYER_NOT_PRESENT);
  EXPECT_EQ(urLoaderConfigEnableLayer(config, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);

  EnvVar env("UR_ENABLE_LAYERS", "UR_LAYER_BOGUS, UR_LAYER_TRACING");
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  { Session s({}); }
  std::string out = testing::internal::GetCapturedStdout();
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines_with(log, "no layer named \"UR_LAYER_BOGUS\""), 1u) << log;
  EXPECT_NE(out.find("urAdapterGet("), std::string::npos) << out; // the known one is on
}
