// SPDX-License-Identifier: Apache-2.0
// The exception boundary every adapter's table gets from its tail (ordo::fill_unsupported,
// docs/adapter-guide.md, "The exception boundary"), seen through the public API: a
// function in the mock's table that throws answers UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
// for std::bad_alloc and UR_RESULT_ERROR_UNKNOWN for anything else, with and without the
// loader's validation layer, in a slot the mock implements and in one it leaves to the
// unsupported stub. The mock's ordoMockReplace puts a test's function behind the slot's
// thunk, where the table tail puts every adapter's own.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "ordo_mock.h"
#include "ur_api.h"

namespace {

struct Mock {
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
};

// The loader with only the mock (mocking on), optionally with the validation layer, and
// one of each of the mock's objects.
class BoundaryTest : public testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    ur_loader_config_handle_t config = nullptr;
    ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderConfigSetMockingEnabled(config, true), UR_RESULT_SUCCESS);
    if (GetParam()) {
      ASSERT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_PARAMETER_VALIDATION"), UR_RESULT_SUCCESS);
    }
    ASSERT_EQ(urLoaderInit(0, config), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
    initialised_ = true;
    uint32_t n = 0;
    ASSERT_EQ(urAdapterGet(1, &m.adapter, &n), UR_RESULT_SUCCESS);
    ASSERT_EQ(n, 1u);
    ASSERT_EQ(urPlatformGet(m.adapter, 1, &m.platform, nullptr), UR_RESULT_SUCCESS);
    ASSERT_EQ(urDeviceGet(m.platform, UR_DEVICE_TYPE_ALL, 1, &m.device, nullptr), UR_RESULT_SUCCESS);
    ASSERT_EQ(urContextCreate(1, &m.device, nullptr, &m.context), UR_RESULT_SUCCESS);
    ASSERT_EQ(urQueueCreate(m.context, m.device, nullptr, &m.queue), UR_RESULT_SUCCESS);
    api = ordo_mock::api_of(m.queue);
    ASSERT_TRUE(api) << "the queue is not the mock's";
  }
  void TearDown() override {
    if (api) api.restore_all();
    if (m.queue) {
      EXPECT_EQ(urQueueRelease(m.queue), UR_RESULT_SUCCESS);
    }
    if (m.context) {
      EXPECT_EQ(urContextRelease(m.context), UR_RESULT_SUCCESS);
    }
    if (m.adapter) {
      EXPECT_EQ(urAdapterRelease(m.adapter), UR_RESULT_SUCCESS);
    }
    if (initialised_) {
      EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
    }
  }
  template <class F> void replace(const char *function, F fn) {
    ASSERT_EQ(api.replace(function, reinterpret_cast<void *>(fn), nullptr), UR_RESULT_SUCCESS) << function;
  }

  Mock m;
  ordo_mock::Api api;

private:
  bool initialised_ = false;
};

ur_result_t UR_APICALL flush_out_of_memory(ur_queue_handle_t) { throw std::bad_alloc(); }
ur_result_t UR_APICALL flush_throws_other(ur_queue_handle_t) { throw std::runtime_error("not a UR result"); }
ur_result_t UR_APICALL flush_throws_int(ur_queue_handle_t) { throw 42; }
ur_result_t UR_APICALL context_info_out_of_range(ur_context_handle_t, ur_context_info_t, size_t, void *, size_t *) {
  const std::string empty;
  return ur_result_t(empty.at(1)); // std::out_of_range, thrown by the standard library
}
ur_result_t UR_APICALL build_throws(ur_context_handle_t, ur_program_handle_t, const char *) {
  throw std::logic_error("thrown from a slot the mock leaves unsupported");
}

} // namespace

TEST_P(BoundaryTest, BadAllocBecomesOutOfHostMemory) {
  replace("urQueueFlush", flush_out_of_memory);
  EXPECT_EQ(urQueueFlush(m.queue), UR_RESULT_ERROR_OUT_OF_HOST_MEMORY);
}

TEST_P(BoundaryTest, AnyOtherExceptionBecomesUnknown) {
  replace("urQueueFlush", flush_throws_other);
  EXPECT_EQ(urQueueFlush(m.queue), UR_RESULT_ERROR_UNKNOWN);
  replace("urQueueFlush", flush_throws_int);
  EXPECT_EQ(urQueueFlush(m.queue), UR_RESULT_ERROR_UNKNOWN);
}

TEST_P(BoundaryTest, AnExceptionFromTheStandardLibraryIsCaught) {
  replace("urContextGetInfo", context_info_out_of_range);
  uint32_t refs = 0;
  EXPECT_EQ(urContextGetInfo(m.context, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_ERROR_UNKNOWN);
}

TEST_P(BoundaryTest, ASlotLeftToTheStubIsBehindTheBoundaryOnceFilled) {
  // The context stands in for the program: neither the stub nor the replacement reads it.
  EXPECT_EQ(urProgramBuild(m.context, reinterpret_cast<ur_program_handle_t>(m.context), nullptr),
            UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  replace("urProgramBuild", build_throws);
  EXPECT_EQ(urProgramBuild(m.context, reinterpret_cast<ur_program_handle_t>(m.context), nullptr),
            UR_RESULT_ERROR_UNKNOWN);
}

TEST_P(BoundaryTest, RestoringGivesTheMocksOwnFunctionBehindTheBoundary) {
  replace("urQueueFlush", flush_out_of_memory);
  void *previous = nullptr;
  ASSERT_EQ(api.replace("urQueueFlush", nullptr, &previous), UR_RESULT_SUCCESS);
  EXPECT_EQ(previous, reinterpret_cast<void *>(flush_out_of_memory)); // the function, not the thunk
  EXPECT_EQ(urQueueFlush(m.queue), UR_RESULT_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Layers, BoundaryTest, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "WithValidation" : "NoLayer");
                         });
