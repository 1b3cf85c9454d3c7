// SPDX-License-Identifier: Apache-2.0
// Adapters: discovery, info queries, reference counting, the parameter rules.
#include "conformance.hpp"

namespace {

using conf::DeviceTest;
using conf::DeviceTestWith;
using Query = const urinfo::InfoQuery *;

// ---- every adapter info query -------------------------------------------------------

using urAdapterGetInfoTest = DeviceTestWith<Query>;

TEST_P(urAdapterGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_adapter_handle_t a = adapter();
  conf::check_info_query(q,
                         [a](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urAdapterGetInfo(a, static_cast<ur_adapter_info_t>(id), size, value, ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urAdapterGetInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_adapter_info_t")), conf::QueryNamer);

// ---- behaviour ------------------------------------------------------------------------

using urAdapterTest = DeviceTest;

TEST_P(urAdapterTest, BackendMatchesPlatform) {
  ur_backend_t from_adapter = UR_BACKEND_UNKNOWN, from_platform = UR_BACKEND_UNKNOWN;
  ASSERT_SUCCESS(urAdapterGetInfo(adapter(), UR_ADAPTER_INFO_BACKEND, sizeof from_adapter, &from_adapter, nullptr));
  ASSERT_SUCCESS(
      urPlatformGetInfo(platform(), UR_PLATFORM_INFO_BACKEND, sizeof from_platform, &from_platform, nullptr));
  EXPECT_EQ(from_platform, from_adapter);
  EXPECT_NE(UR_BACKEND_UNKNOWN, from_adapter);
}

TEST_P(urAdapterTest, PlatformKnowsItsAdapter) {
  ur_adapter_handle_t a = nullptr;
  ASSERT_SUCCESS(urPlatformGetInfo(platform(), UR_PLATFORM_INFO_ADAPTER, sizeof a, &a, nullptr));
  EXPECT_EQ(adapter(), a);
}

TEST_P(urAdapterTest, GetReturnsTheSameHandles) {
  uint32_t count = 0;
  ASSERT_SUCCESS(urAdapterGet(0, nullptr, &count));
  ASSERT_GE(count, 1u);
  std::vector<ur_adapter_handle_t> adapters(count);
  ASSERT_SUCCESS(urAdapterGet(count, adapters.data(), nullptr));
  bool found_ours = false;
  for (ur_adapter_handle_t a : adapters) found_ours |= a == adapter();
  EXPECT_TRUE(found_ours) << "urAdapterGet must hand out the same adapter handle each time";
  for (ur_adapter_handle_t a : adapters) EXPECT_SUCCESS(urAdapterRelease(a));
}

TEST_P(urAdapterTest, GetFewerEntriesThanAdapters) {
  uint32_t count = 0;
  ASSERT_SUCCESS(urAdapterGet(0, nullptr, &count));
  ur_adapter_handle_t first = nullptr;
  ASSERT_SUCCESS(urAdapterGet(1, &first, nullptr));
  ASSERT_NE(nullptr, first);
  EXPECT_SUCCESS(urAdapterRelease(first));
}

TEST_P(urAdapterTest, RetainRelease) {
  const uint32_t before = conf::reference_count(adapter());
  ASSERT_SUCCESS(urAdapterRetain(adapter()));
  const uint32_t retained = conf::reference_count(adapter());
  ASSERT_SUCCESS(urAdapterRelease(adapter()));
  EXPECT_EQ(before + 1, retained);
  EXPECT_EQ(before, conf::reference_count(adapter()));
}

TEST_P(urAdapterTest, VersionIsPositive) {
  uint32_t version = 0;
  ASSERT_SUCCESS(urAdapterGetInfo(adapter(), UR_ADAPTER_INFO_VERSION, sizeof version, &version, nullptr));
  EXPECT_GE(version, 1u);
}

TEST_P(urAdapterTest, LastErrorAnswers) {
  const char *message = nullptr;
  int32_t error = 0;
  // Nothing has failed with ADAPTER_SPECIFIC, so any answer but a crash is right; the
  // message, if any, must be a valid string.
  ur_result_t r = urAdapterGetLastError(adapter(), &message, &error);
  ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_ADAPTER_SPECIFIC, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  if (r == UR_RESULT_SUCCESS && message) {
    EXPECT_LT(std::string(message).size(), 1u << 20);
  }
}

TEST_P(urAdapterTest, LoggerCallbackLevel) {
  ur_result_t r = urAdapterSetLoggerCallbackLevel(adapter(), UR_LOGGER_LEVEL_QUIET);
  ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urAdapterTest, InvalidEnumeration) {
  CONF_REQUIRE_VALIDATION();
  uint32_t v = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urAdapterGetInfo(adapter(), UR_ADAPTER_INFO_FORCE_UINT32, sizeof v, &v, nullptr));
}

TEST_P(urAdapterTest, InvalidNullHandle) {
  CONF_REQUIRE_VALIDATION();
  ur_backend_t b;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urAdapterGetInfo(nullptr, UR_ADAPTER_INFO_BACKEND, sizeof b, &b, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urAdapterRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urAdapterRelease(nullptr));
}

TEST_P(urAdapterTest, InvalidSizeZeroWithBuffer) {
  CONF_REQUIRE_VALIDATION();
  ur_backend_t b;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urAdapterGetInfo(adapter(), UR_ADAPTER_INFO_BACKEND, 0, &b, nullptr));
}

TEST_P(urAdapterTest, InvalidNullPointers) {
  CONF_REQUIRE_VALIDATION();
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urAdapterGetInfo(adapter(), UR_ADAPTER_INFO_BACKEND, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urAdapterGetInfo(adapter(), UR_ADAPTER_INFO_BACKEND, sizeof(ur_backend_t), nullptr, nullptr));
  int32_t error = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urAdapterGetLastError(adapter(), nullptr, &error));
}

TEST_P(urAdapterTest, GetZeroEntriesWithBuffer) {
  CONF_REQUIRE_VALIDATION();
  ur_adapter_handle_t a = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urAdapterGet(0, &a, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urAdapterTest);

} // namespace
