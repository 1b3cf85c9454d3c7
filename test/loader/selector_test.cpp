// SPDX-License-Identifier: Apache-2.0
// urDeviceGetSelected and ONEAPI_DEVICE_SELECTOR, over a mock platform whose backend
// and devices a test chooses (by replacing the mock's platform and device slots).
#include "helpers.hpp"

using namespace loader_test;

namespace {

// A stand-in device: the mock's dispatch table first, so calls on it reach the mock's
// (replaced) device slots.
struct FakeDevice {
  const void *table;
  ur_device_type_t type;
};

ur_backend_t g_backend = UR_BACKEND_OPENCL;
ur_adapter_handle_t g_adapter = nullptr;
std::vector<FakeDevice> g_devices;

ur_result_t UR_APICALL platform_info(ur_platform_handle_t, ur_platform_info_t prop, size_t size, void *value,
                                     size_t *size_ret) {
  if (prop == UR_PLATFORM_INFO_ADAPTER) {
    if (value) *static_cast<ur_adapter_handle_t *>(value) = g_adapter;
    return UR_RESULT_SUCCESS;
  }
  if (prop != UR_PLATFORM_INFO_BACKEND) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  if (size_ret) *size_ret = sizeof g_backend;
  if (value) {
    if (size < sizeof g_backend) return UR_RESULT_ERROR_INVALID_SIZE;
    *static_cast<ur_backend_t *>(value) = g_backend;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL device_get(ur_platform_handle_t, ur_device_type_t type, uint32_t n, ur_device_handle_t *out,
                                  uint32_t *count) {
  std::vector<ur_device_handle_t> match;
  for (auto &d : g_devices)
    if (type == UR_DEVICE_TYPE_ALL || type == d.type) match.push_back(reinterpret_cast<ur_device_handle_t>(&d));
  if (count) *count = static_cast<uint32_t>(match.size());
  for (uint32_t i = 0; out && i < n && i < match.size(); ++i) out[i] = match[i];
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL device_info(ur_device_handle_t h, ur_device_info_t prop, size_t size, void *value,
                                   size_t *size_ret) {
  if (prop != UR_DEVICE_INFO_TYPE) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  auto *d = reinterpret_cast<FakeDevice *>(h);
  if (size_ret) *size_ret = sizeof d->type;
  if (value) *static_cast<ur_device_type_t *>(value) = d->type;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL device_release(ur_device_handle_t) { return UR_RESULT_SUCCESS; }

class Selector : public testing::Test {
protected:
  void SetUp() override {
    scope = std::make_unique<LoaderScope>(/*mocking=*/true);
    ASSERT_EQ(urAdapterGet(1, &adapter, nullptr), UR_RESULT_SUCCESS);
    g_adapter = adapter;
    ASSERT_EQ(urPlatformGet(adapter, 1, &platform, nullptr), UR_RESULT_SUCCESS);
    const void *table = *reinterpret_cast<const void *const *>(platform);
    g_backend = UR_BACKEND_OPENCL;
    // Devices 0..3: cpu, gpu, gpu, fpga.
    g_devices = {{table, UR_DEVICE_TYPE_CPU},
                 {table, UR_DEVICE_TYPE_GPU},
                 {table, UR_DEVICE_TYPE_GPU},
                 {table, UR_DEVICE_TYPE_FPGA}};
    ordo_mock::replace(platform, "urPlatformGetInfo", platform_info);
    ordo_mock::replace(platform, "urDeviceGet", device_get);
    ordo_mock::replace(platform, "urDeviceGetInfo", device_info);
    ordo_mock::replace(platform, "urDeviceRelease", device_release);
  }
  void TearDown() override {
    ordo_mock::api_of(platform).restore_all();
    urAdapterRelease(adapter);
    scope.reset();
  }

  // Indices (into g_devices) of what urDeviceGetSelected returns under `selector`.
  std::vector<int> select(const char *selector, ur_device_type_t type = UR_DEVICE_TYPE_ALL,
                          ur_result_t expected = UR_RESULT_SUCCESS) {
    EnvVar env("ONEAPI_DEVICE_SELECTOR", selector);
    uint32_t n = 0;
    ur_result_t r = urDeviceGetSelected(platform, type, 0, nullptr, &n);
    EXPECT_EQ(r, expected) << (selector ? selector : "(unset)");
    if (r != UR_RESULT_SUCCESS) return {-1};
    std::vector<ur_device_handle_t> out(n);
    if (n) {
      EXPECT_EQ(urDeviceGetSelected(platform, type, n, out.data(), nullptr), UR_RESULT_SUCCESS);
    }
    std::vector<int> idx;
    for (auto h : out) idx.push_back(static_cast<int>(reinterpret_cast<FakeDevice *>(h) - g_devices.data()));
    return idx;
  }

  std::unique_ptr<LoaderScope> scope;
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
};

using V = std::vector<int>;

} // namespace

TEST_F(Selector, UnsetSelectsEveryDeviceOfTheType) {
  EXPECT_EQ(select(nullptr), (V{0, 1, 2, 3}));
  EXPECT_EQ(select(nullptr, UR_DEVICE_TYPE_GPU), (V{1, 2}));
  EXPECT_EQ(select(nullptr, UR_DEVICE_TYPE_DEFAULT), (V{0, 1, 2, 3}));
}

TEST_F(Selector, BackendAndType) {
  EXPECT_EQ(select("opencl:cpu"), (V{0}));
  EXPECT_EQ(select("opencl:gpu"), (V{1, 2}));
  EXPECT_EQ(select("*:gpu"), (V{1, 2}));
  EXPECT_EQ(select("OpenCL:FPGA"), (V{3}));
  EXPECT_EQ(select("opencl:*"), (V{0, 1, 2, 3}));
  EXPECT_EQ(select("*", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE), (V{-1})) << "no backend:devices";
}

TEST_F(Selector, BackendAndIndices) {
  EXPECT_EQ(select("opencl:0"), (V{0}));
  EXPECT_EQ(select("opencl:0,2"), (V{0, 2}));
  EXPECT_EQ(select("opencl:3,cpu"), (V{0, 3}));
  EXPECT_EQ(select("opencl:7"), (V{}));
}

TEST_F(Selector, OtherBackendsTermsAreIgnored) {
  EXPECT_EQ(select("cuda:*"), (V{}));
  EXPECT_EQ(select("cuda:*;opencl:1"), (V{1}));
  g_backend = UR_BACKEND_NATIVE_CPU;
  EXPECT_EQ(select("native_cpu:0"), (V{0}));
  EXPECT_EQ(select("opencl:0"), (V{}));
}

TEST_F(Selector, SeveralTermsAndExclusions) {
  EXPECT_EQ(select("opencl:cpu;opencl:fpga"), (V{0, 3}));
  EXPECT_EQ(select("opencl:*;!opencl:1"), (V{0, 2, 3}));
  EXPECT_EQ(select("!opencl:gpu"), (V{0, 3})) << "only exclusions: the rest is accepted";
  EXPECT_EQ(select("*:*;!*:cpu,fpga"), (V{1, 2}));
  EXPECT_EQ(select("!cuda:*"), (V{0, 1, 2, 3}));
}

TEST_F(Selector, DeviceTypeAndSelectorBothApply) {
  EXPECT_EQ(select("opencl:0,1,3", UR_DEVICE_TYPE_GPU), (V{1}));
  EXPECT_EQ(select("opencl:cpu", UR_DEVICE_TYPE_GPU), (V{}));
}

// Sub-device filters name partitions: valid, and they select no root device.
TEST_F(Selector, SubDeviceFiltersSelectNoRootDevice) {
  EXPECT_EQ(select("*:0.4321"), (V{}));
  EXPECT_EQ(select("opencl:0.1"), (V{}));
  EXPECT_EQ(select("opencl:*.*"), (V{}));
  EXPECT_EQ(select("opencl:0.1.2"), (V{}));
  EXPECT_EQ(select("opencl:0.1,2"), (V{2}));
}

TEST_F(Selector, UnsupportedOrMalformedTermsFailClearly) {
  testing::internal::CaptureStderr();
  select("opencl:.1", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE);
  select("opencl:*.0", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE);
  select("vulkan:0", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE);
  select("opencl", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE);
  select("opencl:", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE);
  select("opencl:banana", UR_DEVICE_TYPE_ALL, UR_RESULT_ERROR_INVALID_VALUE);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines_with(log, "\".1\" is not a sub-device filter"), 1u) << log;
  EXPECT_EQ(count_lines_with(log, "unknown backend \"vulkan\""), 1u) << log;
  EXPECT_EQ(count_lines_with(log, "ONEAPI_DEVICE_SELECTOR=\""), 6u) << log;
}

TEST_F(Selector, FewerEntriesThanDevices) {
  EnvVar env("ONEAPI_DEVICE_SELECTOR", "opencl:gpu,fpga");
  ur_device_handle_t one = nullptr;
  uint32_t n = 0;
  ASSERT_EQ(urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, 1, &one, &n), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(reinterpret_cast<FakeDevice *>(one), &g_devices[1]);
}

TEST_F(Selector, ArgumentChecks) {
  ur_device_handle_t d;
  EXPECT_EQ(urDeviceGetSelected(nullptr, UR_DEVICE_TYPE_ALL, 1, &d, nullptr), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(urDeviceGetSelected(platform, static_cast<ur_device_type_t>(42), 1, &d, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, 1, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_SIZE);
}

// The real mock device, with no replaced slot: backend "unknown" matches only '*'.
TEST(SelectorOnMock, UnknownBackendMatchesOnlyTheWildcard) {
  LoaderScope scope(true);
  ur_adapter_handle_t adapter;
  ur_platform_handle_t platform;
  ASSERT_EQ(urAdapterGet(1, &adapter, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urPlatformGet(adapter, 1, &platform, nullptr), UR_RESULT_SUCCESS);
  uint32_t n = 0;
  {
    EnvVar env("ONEAPI_DEVICE_SELECTOR", "*:cpu");
    ASSERT_EQ(urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, &n), UR_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
  }
  {
    EnvVar env("ONEAPI_DEVICE_SELECTOR", "opencl:*");
    ASSERT_EQ(urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, &n), UR_RESULT_SUCCESS);
    EXPECT_EQ(n, 0u);
  }
  urAdapterRelease(adapter);
}
