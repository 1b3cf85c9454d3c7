// SPDX-License-Identifier: Apache-2.0
// Handle-first dispatch: passthrough with one adapter, two adapters at once, the
// loader's own refusals, and the loader's table getters.
#include <atomic>

#include "helpers.hpp"
#include "ur_ddi.h"

using namespace loader_test;

namespace {

// One forced mock adapter for the scope of a test.
class OneMock : public testing::Test {
protected:
  void SetUp() override {
    path = copy_to(mock_library(), temp_dir("one"), "libur_adapter_mock_one.so.0");
    force = std::make_unique<EnvVar>("UR_ADAPTERS_FORCE_LOAD", path.c_str());
    scope = std::make_unique<LoaderScope>();
    auto list = adapters();
    ASSERT_EQ(list.size(), 1u);
    objects.create(list[0]);
  }
  void TearDown() override {
    if (objects.adapter) ordo_mock::api_of(objects.adapter).restore_all();
    objects.release();
    if (objects.adapter) {
      EXPECT_EQ(urAdapterRelease(objects.adapter), UR_RESULT_SUCCESS);
    }
    scope.reset();
    force.reset();
  }
  std::string path;
  std::unique_ptr<EnvVar> force;
  std::unique_ptr<LoaderScope> scope;
  MockObjects objects;
};

ur_queue_handle_t g_flushed = nullptr;
ur_result_t UR_APICALL flush_lost(ur_queue_handle_t q) {
  g_flushed = q;
  return UR_RESULT_ERROR_DEVICE_LOST;
}

std::atomic<int> g_info_calls{0};
ur_result_t UR_APICALL counting_context_info(ur_context_handle_t, ur_context_info_t, size_t, void *, size_t *) {
  ++g_info_calls;
  return UR_RESULT_ERROR_INVALID_OPERATION;
}

} // namespace

TEST_F(OneMock, PassthroughReturnsExactlyWhatTheAdapterReturns) {
  EXPECT_EQ(urQueueFlush(objects.queue), UR_RESULT_SUCCESS);
  auto previous = ordo_mock::replace(objects.queue, "urQueueFlush", flush_lost);
  ASSERT_NE(previous, nullptr);
  EXPECT_EQ(urQueueFlush(objects.queue), UR_RESULT_ERROR_DEVICE_LOST);
  EXPECT_EQ(g_flushed, objects.queue);
  ordo_mock::replace(objects.queue, "urQueueFlush", previous);
  EXPECT_EQ(urQueueFlush(objects.queue), UR_RESULT_SUCCESS);
}

TEST_F(OneMock, InfoValuesComeFromTheAdapter) {
  char name[64] = {};
  size_t size = 0;
  ASSERT_EQ(urPlatformGetInfo(objects.platform, UR_PLATFORM_INFO_NAME, sizeof name, name, &size), UR_RESULT_SUCCESS);
  EXPECT_STREQ(name, "Mock platform");
  EXPECT_EQ(size, sizeof("Mock platform"));
  uint32_t refs = 0;
  ASSERT_EQ(urContextRetain(objects.context), UR_RESULT_SUCCESS);
  ASSERT_EQ(urContextGetInfo(objects.context, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 3u); // ours, our retain, and the queue's
  ASSERT_EQ(urContextRelease(objects.context), UR_RESULT_SUCCESS);
}

TEST_F(OneMock, LoaderRefusesNullHandlesItselfWithoutLayers) {
  EXPECT_EQ(urQueueFlush(nullptr), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(urContextGetInfo(nullptr, UR_CONTEXT_INFO_NUM_DEVICES, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  // Functions whose first handle is inside an array.
  ur_event_handle_t none[1] = {nullptr};
  EXPECT_EQ(urEventWait(1, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urEventWait(0, none), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(urEventWait(1, none), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  ur_context_handle_t context = nullptr;
  EXPECT_EQ(urContextCreate(0, &objects.device, nullptr, &context), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(urContextCreate(1, nullptr, nullptr, &context), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(context, nullptr);
}

TEST_F(OneMock, SlotTheAdapterLacksAnswersUnsupported) {
  ur_event_handle_t event = nullptr;
  EXPECT_EQ(urEnqueueTimestampRecordingExp(objects.queue, false, 0, nullptr, &event),
            UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  EXPECT_EQ(event, nullptr);
}

TEST_F(OneMock, ReleasedHandleIsRefusedNotUsed) {
  ur_context_handle_t extra = nullptr;
  ASSERT_EQ(urContextCreate(1, &objects.device, nullptr, &extra), UR_RESULT_SUCCESS);
  ASSERT_EQ(urContextRelease(extra), UR_RESULT_SUCCESS);
  EXPECT_EQ(urContextRelease(extra), UR_RESULT_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(urContextRetain(extra), UR_RESULT_ERROR_INVALID_CONTEXT);
  // A handle of the wrong type is refused too.
  EXPECT_EQ(urQueueFlush(reinterpret_cast<ur_queue_handle_t>(objects.context)), UR_RESULT_ERROR_INVALID_QUEUE);
}

TEST_F(OneMock, UsmAllocationsAreHostMemoryAndTracked) {
  void *p = nullptr;
  ASSERT_EQ(urUSMSharedAlloc(objects.context, objects.device, nullptr, nullptr, 256, &p), UR_RESULT_SUCCESS);
  uint32_t pattern = 0xabcd1234;
  ASSERT_EQ(urEnqueueUSMFill(objects.queue, p, 4, &pattern, 256, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(static_cast<uint32_t *>(p)[63], pattern);
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  ASSERT_EQ(urUSMGetMemAllocInfo(objects.context, static_cast<char *>(p) + 8, UR_USM_ALLOC_INFO_TYPE, sizeof type,
                                 &type, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(type, UR_USM_TYPE_SHARED);
  EXPECT_EQ(urUSMFree(objects.context, p), UR_RESULT_SUCCESS);
  EXPECT_EQ(urUSMFree(objects.context, p), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
}

TEST_F(OneMock, LoaderGettersHandOutTheLoadersOwnFunctions) {
  ur_queue_dditable_t table{};
  ASSERT_EQ(urGetQueueProcAddrTable(UR_API_VERSION_CURRENT, &table), UR_RESULT_SUCCESS);
  EXPECT_EQ(table.pfnFlush, &urQueueFlush);
  EXPECT_EQ(table.pfnFlush(objects.queue), UR_RESULT_SUCCESS);
  EXPECT_EQ(urGetQueueProcAddrTable(static_cast<ur_api_version_t>(UR_MAKE_VERSION(1, 0)), &table),
            UR_RESULT_ERROR_UNSUPPORTED_VERSION);
  EXPECT_EQ(urGetQueueProcAddrTable(UR_API_VERSION_CURRENT, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(TwoAdapters, EachCallReachesTheAdapterThatOwnsTheHandle) {
  std::string dir = temp_dir("two");
  std::string a = copy_to(mock_library(), dir, "libur_adapter_mock_a.so.0");
  std::string b = copy_to(mock_library(), dir, "libur_adapter_mock_b.so.0");
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", (a + "," + b).c_str());
  LoaderScope scope;
  auto list = adapters();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_NE(library_of(list[0]), library_of(list[1]));

  MockObjects first, second;
  first.create(list[0]);
  second.create(list[1]);
  EXPECT_EQ(library_of(first.context), library_of(list[0]));
  EXPECT_EQ(library_of(second.context), library_of(list[1]));

  // Replace a slot in the first adapter only.
  g_info_calls = 0;
  ASSERT_NE(ordo_mock::replace(first.context, "urContextGetInfo", counting_context_info), nullptr);
  uint32_t n = 0;
  EXPECT_EQ(urContextGetInfo(second.context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(g_info_calls.load(), 0);
  EXPECT_EQ(urContextGetInfo(first.context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr),
            UR_RESULT_ERROR_INVALID_OPERATION);
  EXPECT_EQ(g_info_calls.load(), 1);
  ordo_mock::api_of(first.context).restore_all();

  // urAdapterGet spans both; fewer entries than adapters gives the first ones.
  uint32_t count = 0;
  ur_adapter_handle_t one = nullptr;
  ASSERT_EQ(urAdapterGet(1, &one, &count), UR_RESULT_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(one, list[0]);
  EXPECT_EQ(urAdapterRelease(one), UR_RESULT_SUCCESS);
  EXPECT_EQ(urAdapterGet(0, &one, &count), UR_RESULT_ERROR_INVALID_SIZE);

  first.release();
  second.release();
  for (auto h : list) EXPECT_EQ(urAdapterRelease(h), UR_RESULT_SUCCESS);
}
