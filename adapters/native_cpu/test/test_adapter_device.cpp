// SPDX-License-Identifier: Apache-2.0
// Adapter, platform and device: getters, reference counts, info queries.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

// Every slot of every table is filled (unsupported ones by the generated stub).
TEST(NativeCpuGetters, EveryTableHasNoNullSlot) {
  ur_dditable_t t{};
  ASSERT_EQ(get_all_tables(adapter_library(), UR_API_VERSION_CURRENT, &t), UR_RESULT_SUCCESS);
  auto *slots = reinterpret_cast<void *const *>(&t);
  for (size_t i = 0; i < sizeof t / sizeof(void *); ++i) EXPECT_NE(slots[i], nullptr) << "slot " << i;
}

TEST(NativeCpuGetters, RefuseOtherMajorVersionAndNullTable) {
  ur_dditable_t t{};
  EXPECT_EQ(get_all_tables(adapter_library(), static_cast<ur_api_version_t>(UR_MAKE_VERSION(1, 0)), &t),
            UR_RESULT_ERROR_UNSUPPORTED_VERSION);
  auto fn = reinterpret_cast<ur_result_t(UR_APICALL *)(ur_api_version_t, ur_queue_dditable_t *)>(
      dlsym(adapter_library(), "urGetQueueProcAddrTable"));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(UR_API_VERSION_CURRENT, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(NativeCpuAdapter, GetRetainReleaseCountReferences) {
  const ur_dditable_t &t = adapter_table();
  uint32_t n = 0;
  ASSERT_EQ(t.Adapter.pfnGet(0, nullptr, &n), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 1u);
  ur_adapter_handle_t a = nullptr, b = nullptr;
  EXPECT_EQ(t.Adapter.pfnGet(0, &a, nullptr), UR_RESULT_ERROR_INVALID_SIZE);
  ASSERT_EQ(t.Adapter.pfnGet(1, &a, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(t.Adapter.pfnGet(1, &b, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(a, b);
  uint32_t count = 0;
  ASSERT_EQ(T(a).Adapter.pfnGetInfo(a, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof count, &count, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_GE(count, 2u);
  EXPECT_EQ(T(a).Adapter.pfnRetain(a), UR_RESULT_SUCCESS);
  uint32_t after = 0;
  T(a).Adapter.pfnGetInfo(a, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof after, &after, nullptr);
  EXPECT_EQ(after, count + 1);
  EXPECT_EQ(T(a).Adapter.pfnRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(a).Adapter.pfnRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(b).Adapter.pfnRelease(b), UR_RESULT_SUCCESS);
  EXPECT_EQ(t.Adapter.pfnRelease(nullptr), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  int bogus;
  EXPECT_EQ(t.Adapter.pfnRetain(reinterpret_cast<ur_adapter_handle_t>(&bogus)), UR_RESULT_ERROR_INVALID_ARGUMENT);
}

class NativeCpuInfo : public NativeCpu {};

TEST_F(NativeCpuInfo, AdapterInfo) {
  ur_backend_t backend{};
  size_t size = 0;
  ASSERT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, 0, nullptr, &size), UR_RESULT_SUCCESS);
  EXPECT_EQ(size, sizeof(ur_backend_t));
  ASSERT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, sizeof backend, &backend, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(backend, UR_BACKEND_NATIVE_CPU);
  uint32_t version = 0;
  ASSERT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_VERSION, sizeof version, &version, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_FORCE_UINT32, sizeof version, &version, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, 1, &backend, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, 0, &backend, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(adapter).Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, sizeof backend, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  const char *message = nullptr;
  int32_t code = -1;
  EXPECT_EQ(T(adapter).Adapter.pfnGetLastError(adapter, &message, &code), UR_RESULT_SUCCESS);
  EXPECT_NE(message, nullptr);
  EXPECT_EQ(T(adapter).Adapter.pfnGetLastError(adapter, nullptr, &code), UR_RESULT_ERROR_INVALID_NULL_POINTER);
}

struct LogCapture {
  std::atomic<int> calls{0};
  std::string last;
  std::mutex mu;
  static void callback(ur_logger_level_t, const char *msg, void *self) {
    auto *c = static_cast<LogCapture *>(self);
    std::lock_guard<std::mutex> lock(c->mu);
    c->last = msg;
    c->calls++;
  }
};

// UR's urDeviceGetInfoComponentDevicesTest (issue 23): the device is not composite, so
// its component list is empty; sized by that answer, the second call passes no buffer
// and no size pointer, and there is nothing to refuse.
TEST_F(NativeCpuInfo, EmptyComponentDeviceListWithNoSizePointer) {
  size_t size = 999;
  ASSERT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_COMPONENT_DEVICES, 0, nullptr, &size),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_COMPONENT_DEVICES, 0, nullptr, nullptr),
            UR_RESULT_SUCCESS);
  // Other queries keep the spec's rule.
  EXPECT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_TYPE, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(NativeCpuInfo, LoggerCallbackReceivesMessagesUntilQuiet) {
  LogCapture cap;
  ASSERT_EQ(T(adapter).Adapter.pfnSetLoggerCallback(adapter, LogCapture::callback, &cap, UR_LOGGER_LEVEL_INFO),
            UR_RESULT_SUCCESS);
  int not_usm = 0;
  // Freeing a pointer that is not a USM allocation says why at level info.
  EXPECT_EQ(T(context).USM.pfnFree(context, &not_usm), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(cap.calls.load(), 1);
  {
    std::lock_guard<std::mutex> lock(cap.mu);
    EXPECT_NE(cap.last.find("urUSMFree"), std::string::npos) << cap.last;
  }
  ASSERT_EQ(T(adapter).Adapter.pfnSetLoggerCallbackLevel(adapter, UR_LOGGER_LEVEL_QUIET), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(context).USM.pfnFree(context, &not_usm), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(cap.calls.load(), 1);
  EXPECT_EQ(T(adapter).Adapter.pfnSetLoggerCallbackLevel(adapter, static_cast<ur_logger_level_t>(9)),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  ASSERT_EQ(T(adapter).Adapter.pfnSetLoggerCallback(adapter, nullptr, nullptr, UR_LOGGER_LEVEL_QUIET),
            UR_RESULT_SUCCESS);
}

TEST_F(NativeCpuInfo, PlatformGetAndInfo) {
  uint32_t n = 0;
  ASSERT_EQ(T(adapter).Platform.pfnGet(adapter, 0, nullptr, &n), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 1u);
  ur_platform_handle_t p = nullptr;
  EXPECT_EQ(T(adapter).Platform.pfnGet(adapter, 0, &p, nullptr), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(adapter).Platform.pfnGet(adapter, 1, nullptr, nullptr), UR_RESULT_ERROR_INVALID_VALUE);

  size_t size = 0;
  ASSERT_EQ(T(platform).Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_NAME, 0, nullptr, &size), UR_RESULT_SUCCESS);
  std::string name(size, '\0');
  ASSERT_EQ(T(platform).Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_NAME, size, name.data(), nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_STREQ(name.c_str(), "Ordo native CPU");
  EXPECT_EQ(T(platform).Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_NAME, 3, name.data(), nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  ur_backend_t backend{};
  ASSERT_EQ(T(platform).Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_BACKEND, sizeof backend, &backend, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(backend, UR_BACKEND_NATIVE_CPU);
  ur_adapter_handle_t a = nullptr;
  ASSERT_EQ(T(platform).Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_ADAPTER, sizeof a, &a, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(a, adapter);
  for (auto info :
       {UR_PLATFORM_INFO_VENDOR_NAME, UR_PLATFORM_INFO_VERSION, UR_PLATFORM_INFO_EXTENSIONS, UR_PLATFORM_INFO_PROFILE})
    EXPECT_EQ(T(platform).Platform.pfnGetInfo(platform, info, 0, nullptr, &size), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(platform).Platform.pfnGetInfo(platform, static_cast<ur_platform_info_t>(0), 0, nullptr, &size),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  ur_api_version_t v{};
  ASSERT_EQ(T(platform).Platform.pfnGetApiVersion(platform, &v), UR_RESULT_SUCCESS);
  EXPECT_EQ(v, UR_API_VERSION_CURRENT);
  const char *opt = nullptr;
  EXPECT_EQ(T(platform).Platform.pfnGetBackendOption(platform, "-O2", &opt), UR_RESULT_SUCCESS);
  EXPECT_STREQ(opt, "");
  EXPECT_EQ(T(platform).Platform.pfnGetBackendOption(platform, "-bogus", &opt), UR_RESULT_ERROR_INVALID_VALUE);
  int bogus;
  EXPECT_EQ(T(platform).Platform.pfnGetInfo(reinterpret_cast<ur_platform_handle_t>(&bogus), UR_PLATFORM_INFO_NAME, 0,
                                            nullptr, &size),
            UR_RESULT_ERROR_INVALID_PLATFORM);
}

TEST_F(NativeCpuInfo, DeviceGetByType) {
  for (auto type : {UR_DEVICE_TYPE_DEFAULT, UR_DEVICE_TYPE_ALL, UR_DEVICE_TYPE_CPU}) {
    uint32_t n = 0;
    ASSERT_EQ(T(platform).Device.pfnGet(platform, type, 0, nullptr, &n), UR_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
  }
  uint32_t n = 7;
  ASSERT_EQ(T(platform).Device.pfnGet(platform, UR_DEVICE_TYPE_GPU, 0, nullptr, &n), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(T(platform).Device.pfnGet(platform, UR_DEVICE_TYPE_FORCE_UINT32, 0, nullptr, &n),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(platform).Device.pfnGet(platform, UR_DEVICE_TYPE_CPU, 1, nullptr, &n),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(T(device).Device.pfnRetain(device), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(device).Device.pfnRelease(device), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ASSERT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 1u); // a root device
}

template <class V> V query(ur_device_handle_t d, ur_device_info_t info) {
  V v{};
  EXPECT_EQ(T(d).Device.pfnGetInfo(d, info, sizeof v, &v, nullptr), UR_RESULT_SUCCESS) << info;
  return v;
}

std::string query_string(ur_device_handle_t d, ur_device_info_t info) {
  size_t size = 0;
  EXPECT_EQ(T(d).Device.pfnGetInfo(d, info, 0, nullptr, &size), UR_RESULT_SUCCESS);
  std::string s(size, '\0');
  EXPECT_EQ(T(d).Device.pfnGetInfo(d, info, size, s.data(), nullptr), UR_RESULT_SUCCESS);
  return std::string(s.c_str());
}

std::string cpuinfo_field(const char *key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "";
}

TEST_F(NativeCpuInfo, DeviceValuesComeFromTheHost) {
  EXPECT_EQ(query<ur_device_type_t>(device, UR_DEVICE_INFO_TYPE), UR_DEVICE_TYPE_CPU);
  std::string model = cpuinfo_field("model name");
  if (!model.empty()) {
    EXPECT_EQ(query_string(device, UR_DEVICE_INFO_NAME), model);
  }
  EXPECT_FALSE(query_string(device, UR_DEVICE_INFO_VENDOR).empty());
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  uint32_t threads = static_cast<uint32_t>(CPU_COUNT(&set));
  if (!std::getenv("ORDO_NATIVE_CPU_WORKERS")) {
    EXPECT_EQ(query<uint32_t>(device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS), threads);
    EXPECT_EQ(query<uint32_t>(device, UR_DEVICE_INFO_NUM_COMPUTE_UNITS), threads);
  }
  uint64_t mem = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(query<uint64_t>(device, UR_DEVICE_INFO_GLOBAL_MEM_SIZE), mem);
  uint64_t free_mem = query<uint64_t>(device, UR_DEVICE_INFO_GLOBAL_MEM_FREE);
  EXPECT_GT(free_mem, 0u);
  EXPECT_LE(free_mem, mem);
  EXPECT_EQ(query<uint32_t>(device, UR_DEVICE_INFO_ADDRESS_BITS), 64u);
  EXPECT_EQ(query<uint32_t>(device, UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS), 3u);
  size_t wg = query<size_t>(device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE);
  EXPECT_GE(wg, 1024u);
  size_t sizes_bytes = 0;
  ASSERT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, 0, nullptr, &sizes_bytes),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(sizes_bytes, 3 * sizeof(size_t));
  EXPECT_EQ(query<uint32_t>(device, UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE),
            static_cast<uint32_t>(sysconf(_SC_LEVEL1_DCACHE_LINESIZE) > 0 ? sysconf(_SC_LEVEL1_DCACHE_LINESIZE) : 64));
  EXPECT_GT(query<uint64_t>(device, UR_DEVICE_INFO_LOCAL_MEM_SIZE), 0u);
  EXPECT_GT(query<uint32_t>(device, UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY), 0u);
  const ur_device_usm_access_capability_flags_t all = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS |
                                                      UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
  for (auto info :
       {UR_DEVICE_INFO_USM_HOST_SUPPORT, UR_DEVICE_INFO_USM_DEVICE_SUPPORT, UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT,
        UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT, UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT})
    EXPECT_EQ(query<ur_device_usm_access_capability_flags_t>(device, info), all);
  auto qflags = query<ur_queue_flags_t>(device, UR_DEVICE_INFO_QUEUE_PROPERTIES);
  EXPECT_TRUE(qflags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  EXPECT_TRUE(qflags & UR_QUEUE_FLAG_PROFILING_ENABLE);
  EXPECT_EQ(query<ur_bool_t>(device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP), 1);
  EXPECT_EQ(query<ur_bool_t>(device, UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP), 1);
  EXPECT_EQ(query<ur_platform_handle_t>(device, UR_DEVICE_INFO_PLATFORM), platform);
  EXPECT_EQ(query<ur_device_handle_t>(device, UR_DEVICE_INFO_PARENT_DEVICE), nullptr);
  EXPECT_GE(query<size_t>(device, UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION), 1u);
  size_t partitions = 99;
  ASSERT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_SUPPORTED_PARTITIONS, 0, nullptr, &partitions),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(partitions, 0u);
}

// The queries UR marks [optional-query]; every other one must answer.
const std::set<uint32_t> kOptional = {
    UR_DEVICE_INFO_DEVICE_ID, UR_DEVICE_INFO_MEMORY_CLOCK_RATE, UR_DEVICE_INFO_MAX_READ_WRITE_IMAGE_ARGS,
    UR_DEVICE_INFO_GLOBAL_MEM_FREE, UR_DEVICE_INFO_IL_VERSION, UR_DEVICE_INFO_UUID, UR_DEVICE_INFO_PCI_ADDRESS,
    UR_DEVICE_INFO_GPU_EU_COUNT, UR_DEVICE_INFO_GPU_EU_SIMD_WIDTH, UR_DEVICE_INFO_GPU_EU_SLICES,
    UR_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE, UR_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE,
    UR_DEVICE_INFO_GPU_HW_THREADS_PER_EU, UR_DEVICE_INFO_MAX_MEMORY_BANDWIDTH, UR_DEVICE_INFO_MEMORY_BUS_WIDTH,
    UR_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP, UR_DEVICE_INFO_IP_VERSION, UR_DEVICE_INFO_COMPONENT_DEVICES,
    UR_DEVICE_INFO_COMPOSITE_DEVICE, UR_DEVICE_INFO_CURRENT_CLOCK_THROTTLE_REASONS, UR_DEVICE_INFO_FAN_SPEED,
    UR_DEVICE_INFO_MIN_POWER_LIMIT, UR_DEVICE_INFO_MAX_POWER_LIMIT, UR_DEVICE_INFO_LUID, UR_DEVICE_INFO_NODE_MASK,
    UR_DEVICE_INFO_XE_STACK_COUNT, UR_DEVICE_INFO_XE_REGIONS_PER_STACK, UR_DEVICE_INFO_XE_CLUSTERS_PER_REGION,
    UR_DEVICE_INFO_XE_CORES_PER_CLUSTER, UR_DEVICE_INFO_EUS_PER_XE_CORE, UR_DEVICE_INFO_MAX_LANES_PER_HW_THREAD,
    // Experimental queries that only mean something when bindless images exist.
    UR_DEVICE_INFO_IMAGE_PITCH_ALIGN_EXP, UR_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH_EXP,
    UR_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT_EXP, UR_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH_EXP,
    UR_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY_EXP};

// Every defined query: 0..139 and the experimental ranges.
std::vector<uint32_t> all_device_queries() {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i <= UR_DEVICE_INFO_MAX_LANES_PER_HW_THREAD; ++i) v.push_back(i);
  for (uint32_t e : {0x2022u, 0x2050u, 0x2000u, 0x2001u, 0x2002u, 0x2003u, 0x2004u, 0x2005u, 0x2006u, 0x2007u, 0x2008u,
                     0x2009u, 0x200au, 0x200bu, 0x200cu, 0x200eu, 0x2010u, 0x2011u, 0x2012u, 0x2013u, 0x2014u, 0x2015u,
                     0x2017u, 0x2019u, 0x201au, 0x201bu, 0x201cu, 0x201du, 0x6002u, 0x6003u, 0x2018u, 0x2023u, 0x2024u,
                     0x2026u, 0x8000u, 0x6000u, 0x7000u, 0x2090u, 0x4000u, 0x1000u, 0x1001u, 0x1002u, 0x1003u, 0x9000u,
                     0x2021u, 0x2020u, 0x2025u, 0x2080u, 0x2060u, 0x2061u, 0x2062u, 0x2070u, 0x20a0u})
    v.push_back(e);
  return v;
}

TEST_F(NativeCpuInfo, EveryDeviceQueryAnswersOrIsOptional) {
  int answered = 0;
  for (uint32_t info : all_device_queries()) {
    size_t size = 0;
    ur_result_t r = T(device).Device.pfnGetInfo(device, static_cast<ur_device_info_t>(info), 0, nullptr, &size);
    if (kOptional.count(info)) {
      EXPECT_TRUE(r == UR_RESULT_SUCCESS || r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) << "query " << info;
    } else {
      EXPECT_EQ(r, UR_RESULT_SUCCESS) << "query " << info;
    }
    if (r != UR_RESULT_SUCCESS) continue;
    ++answered;
    if (size == 0) continue; // an empty array: nothing to fetch
    std::vector<char> buf(size + 1);
    EXPECT_EQ(T(device).Device.pfnGetInfo(device, static_cast<ur_device_info_t>(info), size, buf.data(), nullptr),
              UR_RESULT_SUCCESS)
        << "query " << info;
  }
  EXPECT_GT(answered, 150);
}

TEST_F(NativeCpuInfo, DeviceQueryErrors) {
  size_t size = 0;
  for (uint32_t bad : {140u, 0x1fffu, 0x9001u, 0x7fffffffu})
    EXPECT_EQ(T(device).Device.pfnGetInfo(device, static_cast<ur_device_info_t>(bad), 0, nullptr, &size),
              UR_RESULT_ERROR_INVALID_ENUMERATION)
        << bad;
  uint32_t v;
  EXPECT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, 2, &v, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(T(device).Device.pfnGetInfo(nullptr, UR_DEVICE_INFO_TYPE, 0, nullptr, &size),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(
      T(device).Device.pfnGetInfo(reinterpret_cast<ur_device_handle_t>(&v), UR_DEVICE_INFO_TYPE, 0, nullptr, &size),
      UR_RESULT_ERROR_INVALID_DEVICE);
}

TEST_F(NativeCpuInfo, GlobalTimestampsAdvance) {
  uint64_t d1 = 0, h1 = 0, d2 = 0, h2 = 0;
  ASSERT_EQ(T(device).Device.pfnGetGlobalTimestamps(device, &d1, &h1), UR_RESULT_SUCCESS);
  usleep(1000);
  ASSERT_EQ(T(device).Device.pfnGetGlobalTimestamps(device, &d2, &h2), UR_RESULT_SUCCESS);
  EXPECT_GT(d1, 0u);
  EXPECT_GE(d2 - d1, 1000000u); // at least the millisecond slept, in nanoseconds
  EXPECT_GE(h2, h1);
  EXPECT_EQ(T(device).Device.pfnGetGlobalTimestamps(device, nullptr, nullptr), UR_RESULT_SUCCESS);
}

TEST_F(NativeCpuInfo, SelectBinaryPicksNativeCpu) {
  ur_device_binary_t bins[3] = {{UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, UR_DEVICE_BINARY_TARGET_SPIRV64},
                                {UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, UR_DEVICE_BINARY_TARGET_NATIVE_CPU},
                                {UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, UR_DEVICE_BINARY_TARGET_NVPTX64}};
  uint32_t chosen = 9;
  ASSERT_EQ(T(device).Device.pfnSelectBinary(device, bins, 3, &chosen), UR_RESULT_SUCCESS);
  EXPECT_EQ(chosen, 1u);
  EXPECT_EQ(T(device).Device.pfnSelectBinary(device, bins, 1, &chosen), UR_RESULT_ERROR_INVALID_BINARY);
  EXPECT_EQ(T(device).Device.pfnSelectBinary(device, bins, 0, &chosen), UR_RESULT_ERROR_INVALID_SIZE);
}

TEST_F(NativeCpuInfo, HandlesPointAtACompleteTable) {
  // Handle-first dispatch: the first word of every handle is the adapter's table.
  const ur_dditable_t *t = &T(adapter);
  EXPECT_EQ(&T(platform), t);
  EXPECT_EQ(&T(device), t);
  EXPECT_EQ(&T(context), t);
  ur_queue_handle_t q = make_queue();
  EXPECT_EQ(&T(q), t);
  EXPECT_EQ(std::memcmp(&t->Queue, &ddi().Queue, sizeof t->Queue), 0);
}

} // namespace
