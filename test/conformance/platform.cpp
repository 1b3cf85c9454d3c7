// SPDX-License-Identifier: Apache-2.0
// Platforms: info queries, API version, stable handles, the parameter rules.
#include <cstring>

#include "conformance.hpp"

namespace {

using conf::DeviceTest;
using conf::DeviceTestWith;
using Query = const urinfo::InfoQuery *;

using urPlatformGetInfoTest = DeviceTestWith<Query>;

TEST_P(urPlatformGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_platform_handle_t p = platform();
  conf::check_info_query(q,
                         [p](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urPlatformGetInfo(p, static_cast<ur_platform_info_t>(id), size, value, ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urPlatformGetInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_platform_info_t")), conf::QueryNamer);

using urPlatformTest = DeviceTest;

// Queries every platform must answer, with values that say something.
TEST_P(urPlatformTest, RequiredStrings) {
  for (ur_platform_info_t q :
       {UR_PLATFORM_INFO_NAME, UR_PLATFORM_INFO_VENDOR_NAME, UR_PLATFORM_INFO_VERSION, UR_PLATFORM_INFO_PROFILE}) {
    size_t size = 0;
    ASSERT_SUCCESS(urPlatformGetInfo(platform(), q, 0, nullptr, &size))
        << urinfo::enumerator_name("ur_platform_info_t", q);
    EXPECT_GT(size, 1u) << urinfo::enumerator_name("ur_platform_info_t", q) << " is empty";
  }
}

TEST_P(urPlatformTest, ApiVersion) {
  ur_api_version_t v{};
  ASSERT_SUCCESS(urPlatformGetApiVersion(platform(), &v));
  EXPECT_EQ(UR_MAJOR_VERSION(UR_API_VERSION_CURRENT), UR_MAJOR_VERSION(v));
  EXPECT_GE(UR_MINOR_VERSION(v), 1) << "an adapter of this API reports at least 0.1";
}

TEST_P(urPlatformTest, GetReturnsTheSameHandles) {
  uint32_t count = 0;
  ASSERT_SUCCESS(urPlatformGet(adapter(), 0, nullptr, &count));
  ASSERT_GE(count, 1u);
  std::vector<ur_platform_handle_t> platforms(count);
  uint32_t count2 = 0;
  ASSERT_SUCCESS(urPlatformGet(adapter(), count, platforms.data(), &count2));
  EXPECT_EQ(count, count2);
  bool found = false;
  for (ur_platform_handle_t p : platforms) found |= p == platform();
  EXPECT_TRUE(found) << "urPlatformGet must hand out the same platform handle each time";
}

TEST_P(urPlatformTest, GetFewerEntriesThanPlatforms) {
  ur_platform_handle_t first = nullptr;
  ASSERT_SUCCESS(urPlatformGet(adapter(), 1, &first, nullptr));
  EXPECT_NE(nullptr, first);
}

TEST_P(urPlatformTest, NativeHandle) {
  ur_native_handle_t native = 0;
  ur_result_t r = urPlatformGetNativeHandle(platform(), &native);
  ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST_P(urPlatformTest, BackendOption) {
  // -O0 is a frontend option every backend maps to something (possibly "").
  const char *option = nullptr;
  ur_result_t r = urPlatformGetBackendOption(platform(), "-O0", &option);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urPlatformGetBackendOption unsupported";
  ASSERT_SUCCESS(r);
  ASSERT_NE(nullptr, option);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urPlatformGetBackendOption(platform(), "-no-such-frontend-option", &option));
}

TEST_P(urPlatformTest, DevicesOfPlatform) {
  uint32_t count = 0;
  ASSERT_SUCCESS(urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, 0, nullptr, &count));
  ASSERT_GE(count, 1u);
  std::vector<ur_device_handle_t> devices(count);
  ASSERT_SUCCESS(urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, count, devices.data(), nullptr));
  bool found = false;
  for (ur_device_handle_t d : devices) {
    found |= d == device();
    ur_platform_handle_t p = nullptr;
    EXPECT_SUCCESS(urDeviceGetInfo(d, UR_DEVICE_INFO_PLATFORM, sizeof p, &p, nullptr));
    EXPECT_EQ(platform(), p);
  }
  EXPECT_TRUE(found) << "the selected device is one of its platform's devices";
  for (ur_device_handle_t d : devices) EXPECT_SUCCESS(urDeviceRelease(d));
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urPlatformTest, InvalidEnumeration) {
  CONF_REQUIRE_VALIDATION();
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urPlatformGetInfo(platform(), UR_PLATFORM_INFO_FORCE_UINT32, 0, nullptr, &size));
}

TEST_P(urPlatformTest, InvalidNullHandle) {
  CONF_REQUIRE_VALIDATION();
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urPlatformGetInfo(nullptr, UR_PLATFORM_INFO_NAME, 0, nullptr, &size));
  uint32_t count = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urPlatformGet(nullptr, 0, nullptr, &count));
}

TEST_P(urPlatformTest, InvalidSizes) {
  CONF_REQUIRE_VALIDATION();
  ur_platform_handle_t p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urPlatformGet(adapter(), 0, &p, nullptr));
  char name[8];
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urPlatformGetInfo(platform(), UR_PLATFORM_INFO_NAME, 0, name, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, urPlatformGet(adapter(), 1, nullptr, nullptr));
}

TEST_P(urPlatformTest, InvalidNullPointers) {
  CONF_REQUIRE_VALIDATION();
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urPlatformGetInfo(platform(), UR_PLATFORM_INFO_NAME, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urPlatformGetInfo(platform(), UR_PLATFORM_INFO_NAME, 8, nullptr, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urPlatformTest);

} // namespace
