// SPDX-License-Identifier: Apache-2.0
// Contexts: creation, info queries, reference counting, the extended deleter, the
// parameter rules.
#include <atomic>

#include "conformance.hpp"

namespace {

using conf::ContextTest;
using conf::ContextTestWith;
using conf::DeviceTest;
using Query = const urinfo::InfoQuery *;

using urContextGetInfoTest = ContextTestWith<Query>;

TEST_P(urContextGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_context_handle_t c = context;
  conf::check_info_query(q,
                         [c](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urContextGetInfo(c, static_cast<ur_context_info_t>(id), size, value, ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urContextGetInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_context_info_t")), conf::QueryNamer);

using urContextTest = ContextTest;

TEST_P(urContextTest, DevicesAreTheOnesGiven) {
  uint32_t n = 0;
  ASSERT_SUCCESS(urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr));
  ASSERT_EQ(1u, n);
  ur_device_handle_t d = nullptr;
  ASSERT_SUCCESS(urContextGetInfo(context, UR_CONTEXT_INFO_DEVICES, sizeof d, &d, nullptr));
  EXPECT_EQ(device(), d);
}

TEST_P(urContextTest, RetainRelease) {
  const uint32_t before = conf::reference_count(context);
  EXPECT_EQ(1u, before) << "a new context has one reference";
  ASSERT_SUCCESS(urContextRetain(context));
  EXPECT_EQ(before + 1, conf::reference_count(context));
  ASSERT_SUCCESS(urContextRelease(context));
  EXPECT_EQ(before, conf::reference_count(context));
}

TEST_P(urContextTest, NativeHandle) {
  ur_native_handle_t native = 0;
  ASSERT_RESULT_IN(urContextGetNativeHandle(context, &native), UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST_P(urContextTest, TwoContextsAreIndependent) {
  ur_device_handle_t d = device();
  ur_context_handle_t other = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &d, nullptr, &other));
  EXPECT_NE(context, other);
  // Memory of one context is unknown to the other.
  void *ptr = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 256, &ptr));
  ur_usm_type_t type = UR_USM_TYPE_DEVICE;
  ur_result_t r = urUSMGetMemAllocInfo(other, ptr, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr);
  if (r == UR_RESULT_SUCCESS) {
    EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type) << "another context's allocation";
  } else
    EXPECT_TRUE(conf::result_in(r, {UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE}))
        << "another context's allocation: " << urinfo::result_name(r);
  EXPECT_SUCCESS(urUSMFree(context, ptr));
  EXPECT_SUCCESS(urContextRelease(other));
}

struct DeleterState {
  std::atomic<int> calls{0};
};

void count_deleter(void *user) { static_cast<DeleterState *>(user)->calls++; }

using urContextLifetimeTest = DeviceTest;

TEST_P(urContextLifetimeTest, ExtendedDeleterRunsOnLastRelease) {
  ur_device_handle_t d = device();
  ur_context_handle_t ctx = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &d, nullptr, &ctx));
  DeleterState state;
  ur_result_t r = urContextSetExtendedDeleter(ctx, count_deleter, &state);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    urContextRelease(ctx);
    GTEST_SKIP() << "urContextSetExtendedDeleter unsupported";
  }
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urContextRetain(ctx));
  ASSERT_SUCCESS(urContextRelease(ctx));
  EXPECT_EQ(0, state.calls.load()) << "deleter ran while a reference remained";
  ASSERT_SUCCESS(urContextRelease(ctx));
  EXPECT_EQ(1, state.calls.load()) << "deleter must run once, when the context goes";
}

TEST_P(urContextLifetimeTest, ManyContexts) {
  ur_device_handle_t d = device();
  std::vector<ur_context_handle_t> contexts(16);
  for (auto &c : contexts) ASSERT_SUCCESS(urContextCreate(1, &d, nullptr, &c));
  for (size_t i = 1; i < contexts.size(); ++i) EXPECT_NE(contexts[i - 1], contexts[i]);
  for (auto c : contexts) EXPECT_SUCCESS(urContextRelease(c));
}

TEST_P(urContextLifetimeTest, ContextOutlivesItsCreatorsHandles) {
  // A queue keeps its context alive: release the context first, then use the queue.
  ur_device_handle_t d = device();
  ur_context_handle_t ctx = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &d, nullptr, &ctx));
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(ctx, d, nullptr, &q));
  ASSERT_SUCCESS(urContextRelease(ctx));
  ur_context_handle_t from_queue = nullptr;
  ASSERT_SUCCESS(urQueueGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof from_queue, &from_queue, nullptr));
  EXPECT_EQ(ctx, from_queue);
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urQueueRelease(q));
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urContextLifetimeTest, InvalidCreate) {
  CONF_REQUIRE_VALIDATION();
  ur_device_handle_t d = device();
  ur_context_handle_t ctx = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urContextCreate(0, &d, nullptr, &ctx));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urContextCreate(1, nullptr, nullptr, &ctx));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urContextCreate(1, &d, nullptr, nullptr));
}

TEST_P(urContextTest, InvalidGetInfo) {
  CONF_REQUIRE_VALIDATION();
  uint32_t n = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urContextGetInfo(context, UR_CONTEXT_INFO_FORCE_UINT32, sizeof n, &n, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urContextGetInfo(nullptr, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, 0, &n, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urContextRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urContextRelease(nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urContextTest);
CONF_INSTANTIATE_DEVICE_SUITE(urContextLifetimeTest);

} // namespace
