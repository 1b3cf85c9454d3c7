// SPDX-License-Identifier: Apache-2.0
// Devices: every info query, the values the rest of the API relies on, timestamps,
// binary selection, reference counting, the parameter rules.
#include <cstring>
#include <string>
#include <utility>

#include "conformance.hpp"

namespace {

using conf::DeviceTest;
using conf::DeviceTestWith;
using Query = const urinfo::InfoQuery *;

// ---- every device info query -----------------------------------------------------------

using urDeviceGetInfoTest = DeviceTestWith<Query>;

TEST_P(urDeviceGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_device_handle_t d = device();
  conf::InfoCheckOptions options;
  // A root device has no parent and need not be part of a composite device.
  options.null_handle_ok = q.id == UR_DEVICE_INFO_PARENT_DEVICE || q.id == UR_DEVICE_INFO_COMPOSITE_DEVICE;
  conf::check_info_query(
      q,
      [d](uint32_t id, size_t size, void *value, size_t *ret) {
        return urDeviceGetInfo(d, static_cast<ur_device_info_t>(id), size, value, ret);
      },
      options);
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urDeviceGetInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_device_info_t")), conf::QueryNamer);

// ---- queries every device must answer -----------------------------------------------------

// What the suite, urinfo and any UR user rely on; UNSUPPORTED_ENUMERATION is not an
// answer for these.
const ur_device_info_t kRequired[] = {
    UR_DEVICE_INFO_TYPE,
    UR_DEVICE_INFO_VENDOR_ID,
    UR_DEVICE_INFO_MAX_COMPUTE_UNITS,
    UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS,
    UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES,
    UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE,
    UR_DEVICE_INFO_QUEUE_PROPERTIES,
    UR_DEVICE_INFO_ADDRESS_BITS,
    UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE,
    UR_DEVICE_INFO_GLOBAL_MEM_SIZE,
    UR_DEVICE_INFO_LOCAL_MEM_SIZE,
    UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN,
    UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION,
    UR_DEVICE_INFO_ENDIAN_LITTLE,
    UR_DEVICE_INFO_AVAILABLE,
    UR_DEVICE_INFO_PLATFORM,
    UR_DEVICE_INFO_REFERENCE_COUNT,
    UR_DEVICE_INFO_NAME,
    UR_DEVICE_INFO_VENDOR,
    UR_DEVICE_INFO_DRIVER_VERSION,
    UR_DEVICE_INFO_VERSION,
    UR_DEVICE_INFO_EXTENSIONS,
    UR_DEVICE_INFO_USM_HOST_SUPPORT,
    UR_DEVICE_INFO_USM_DEVICE_SUPPORT,
    UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT,
    UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP,
    UR_DEVICE_INFO_IMAGE_SUPPORT,
    UR_DEVICE_INFO_HOST_UNIFIED_MEMORY,
    UR_DEVICE_INFO_PARENT_DEVICE,
};

using urDeviceTest = DeviceTest;

TEST_P(urDeviceTest, RequiredQueriesAnswered) {
  for (ur_device_info_t q : kRequired) {
    size_t size = 0;
    EXPECT_SUCCESS(urDeviceGetInfo(device(), q, 0, nullptr, &size)) << urinfo::enumerator_name("ur_device_info_t", q);
  }
}

TEST_P(urDeviceTest, TypeMatchesDiscovery) {
  ur_device_type_t type{};
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_TYPE, type));
  EXPECT_NE(UR_DEVICE_TYPE_ALL, type) << "a device has one concrete type";
  EXPECT_NE(UR_DEVICE_TYPE_DEFAULT, type) << "a device has one concrete type";
  EXPECT_EQ(found().type_name, urinfo::device_type_name(type));
  if (backend() == UR_BACKEND_NATIVE_CPU) {
    EXPECT_EQ(UR_DEVICE_TYPE_CPU, type);
  }
}

TEST_P(urDeviceTest, PlatformIsItsPlatform) {
  ur_platform_handle_t p = nullptr;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_PLATFORM, p));
  EXPECT_EQ(platform(), p);
}

TEST_P(urDeviceTest, RootDeviceHasNoParent) {
  ur_device_handle_t parent = reinterpret_cast<ur_device_handle_t>(1);
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_PARENT_DEVICE, parent));
  EXPECT_EQ(nullptr, parent);
}

TEST_P(urDeviceTest, WorkItemLimitsConsistent) {
  uint32_t dims = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS, dims));
  ASSERT_GE(dims, 1u);
  ASSERT_LE(dims, 3u) << "UR launches have at most 3 dimensions";
  size_t size = 0;
  ASSERT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, 0, nullptr, &size));
  EXPECT_EQ(dims * sizeof(size_t), size) << "one maximum per dimension";
  std::vector<size_t> sizes(size / sizeof(size_t));
  ASSERT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, size, sizes.data(), nullptr));
  size_t group = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, group));
  EXPECT_GE(group, 1u);
  for (size_t s : sizes) {
    EXPECT_GE(s, 1u);
    EXPECT_LE(s, group) << "a dimension's maximum exceeds the whole work-group's";
  }
}

TEST_P(urDeviceTest, MemoryLimitsConsistent) {
  uint64_t global = 0, max_alloc = 0, local = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_GLOBAL_MEM_SIZE, global));
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, max_alloc));
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_LOCAL_MEM_SIZE, local));
  EXPECT_GT(global, 0u);
  EXPECT_GT(max_alloc, 0u);
  EXPECT_LE(max_alloc, global);
  EXPECT_GT(local, 0u) << "the local_sum test kernel needs local memory";
  uint64_t free_mem = 0;
  if (conf::info(device(), UR_DEVICE_INFO_GLOBAL_MEM_FREE, free_mem) == UR_RESULT_SUCCESS) {
    EXPECT_LE(free_mem, global);
  }
}

TEST_P(urDeviceTest, ComputeUnitsAndAddressBits) {
  uint32_t units = 0, bits = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_COMPUTE_UNITS, units));
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_ADDRESS_BITS, bits));
  EXPECT_GE(units, 1u);
  EXPECT_TRUE(bits == 32 || bits == 64) << bits;
}

TEST_P(urDeviceTest, NamesAreNotEmpty) {
  for (ur_device_info_t q :
       {UR_DEVICE_INFO_NAME, UR_DEVICE_INFO_VENDOR, UR_DEVICE_INFO_VERSION, UR_DEVICE_INFO_DRIVER_VERSION})
    EXPECT_FALSE(urinfo::device_string(device(), q).empty()) << urinfo::enumerator_name("ur_device_info_t", q);
}

TEST_P(urDeviceTest, AvailableAndInOrderQueues) {
  ur_bool_t available = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_AVAILABLE, available));
  EXPECT_EQ(1, available);
  ur_queue_flags_t flags = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_QUEUE_PROPERTIES, flags));
  EXPECT_EQ(0u, flags & UR_QUEUE_FLAGS_MASK) << "unknown queue flag bits";
}

TEST_P(urDeviceTest, UsmCapabilitiesCoherent) {
  // Device memory is the one kind every USM device has; atomic access needs access.
  for (ur_device_info_t q :
       {UR_DEVICE_INFO_USM_HOST_SUPPORT, UR_DEVICE_INFO_USM_DEVICE_SUPPORT, UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT,
        UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT, UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT}) {
    ur_device_usm_access_capability_flags_t caps = 0;
    if (conf::info(device(), q, caps) != UR_RESULT_SUCCESS) continue;
    if (caps &
        (UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS)) {
      EXPECT_TRUE(caps & UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS)
          << urinfo::enumerator_name("ur_device_info_t", q) << ": atomic or concurrent access without access";
    }
  }
  EXPECT_TRUE(conf::usm_supported(device(), UR_USM_TYPE_DEVICE)) << "no device USM";
}

TEST_P(urDeviceTest, BindlessImageLimitsZeroWithoutBindlessImages) {
  // A device without bindless images answers their limits with 0 of the limit's type, the
  // same on every adapter (review 26: native CPU answered UNSUPPORTED_ENUMERATION).
  ur_bool_t bindless = 0;
  ur_result_t support = conf::info(device(), UR_DEVICE_INFO_BINDLESS_IMAGES_SUPPORT_EXP, bindless);
  ASSERT_RESULT_IN(support, UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  if (support == UR_RESULT_SUCCESS && bindless)
    GTEST_SKIP() << "the device has bindless images: its limits are its own";
  const std::pair<ur_device_info_t, size_t> limits[] = {
      {UR_DEVICE_INFO_IMAGE_PITCH_ALIGN_EXP, sizeof(uint32_t)},
      {UR_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY_EXP, sizeof(uint32_t)},
      {UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP, sizeof(ur_exp_device_2d_block_array_capability_flags_t)},
      {UR_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH_EXP, sizeof(size_t)},
      {UR_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT_EXP, sizeof(size_t)},
      {UR_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH_EXP, sizeof(size_t)}};
  for (auto [q, expected_size] : limits) {
    const std::string name = urinfo::enumerator_name("ur_device_info_t", q);
    size_t size = 0;
    ASSERT_SUCCESS(urDeviceGetInfo(device(), q, 0, nullptr, &size)) << name;
    EXPECT_EQ(expected_size, size) << name;
    unsigned char value[8];
    std::memset(value, 0xAB, sizeof value);
    ASSERT_SUCCESS(urDeviceGetInfo(device(), q, expected_size, value, nullptr)) << name;
    for (size_t i = 0; i < expected_size; ++i) EXPECT_EQ(0, value[i]) << name << " byte " << i;
  }
}

TEST_P(urDeviceTest, StringSizeIsLengthPlusOne) {
  size_t size = 0;
  ASSERT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_NAME, 0, nullptr, &size));
  std::string name = urinfo::device_string(device(), UR_DEVICE_INFO_NAME);
  EXPECT_EQ(name.size() + 1, size);
  EXPECT_EQ(found().name, name);
}

TEST_P(urDeviceTest, RetainRelease) {
  // Root devices may keep a fixed count; retain and release must still succeed.
  ASSERT_SUCCESS(urDeviceRetain(device()));
  ASSERT_SUCCESS(urDeviceRelease(device()));
  EXPECT_GE(conf::reference_count(device()), 1u);
}

TEST_P(urDeviceTest, GlobalTimestamps) {
  uint64_t dev1 = 0, host1 = 0, dev2 = 0, host2 = 0;
  ur_result_t r = urDeviceGetGlobalTimestamps(device(), &dev1, &host1);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urDeviceGetGlobalTimestamps unsupported";
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urDeviceGetGlobalTimestamps(device(), &dev2, &host2));
  EXPECT_LE(dev1, dev2) << "device clock went backwards";
  EXPECT_LE(host1, host2) << "host clock went backwards";
  EXPECT_GT(host1, 0u);
  // Either output is optional.
  uint64_t only_host = 0;
  ASSERT_SUCCESS(urDeviceGetGlobalTimestamps(device(), nullptr, &only_host));
  EXPECT_GE(only_host, host2);
  uint64_t only_device = 0;
  ASSERT_SUCCESS(urDeviceGetGlobalTimestamps(device(), &only_device, nullptr));
  EXPECT_GE(only_device, dev2);
}

TEST_P(urDeviceTest, NativeHandle) {
  ur_native_handle_t native = 0;
  ASSERT_RESULT_IN(urDeviceGetNativeHandle(device(), &native), UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

// The binary target string a device of this backend takes.
const char *own_target(ur_backend_t backend) {
  switch (backend) {
  case UR_BACKEND_NATIVE_CPU: return UR_DEVICE_BINARY_TARGET_NATIVE_CPU;
  case UR_BACKEND_CUDA: return UR_DEVICE_BINARY_TARGET_NVPTX64;
  case UR_BACKEND_HIP: return UR_DEVICE_BINARY_TARGET_AMDGCN;
  default: return UR_DEVICE_BINARY_TARGET_SPIRV64;
  }
}

TEST_P(urDeviceTest, SelectBinaryPicksOwnTarget) {
  if ((backend() == UR_BACKEND_OPENCL || backend() == UR_BACKEND_LEVEL_ZERO) &&
      urinfo::device_string(device(), UR_DEVICE_INFO_IL_VERSION).empty())
    GTEST_SKIP() << "the device takes no SPIR-V, and which ahead-of-time target it takes is its own affair";
  const char *mine = own_target(backend());
  std::vector<ur_device_binary_t> binaries;
  for (const char *t : {UR_DEVICE_BINARY_TARGET_NVPTX64, UR_DEVICE_BINARY_TARGET_AMDGCN,
                        UR_DEVICE_BINARY_TARGET_NATIVE_CPU, UR_DEVICE_BINARY_TARGET_SPIRV64})
    if (std::strcmp(t, mine) != 0) binaries.push_back({UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, t});
  binaries.push_back({UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, mine});
  uint32_t selected = 1000;
  ur_result_t r = urDeviceSelectBinary(device(), binaries.data(), static_cast<uint32_t>(binaries.size()), &selected);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urDeviceSelectBinary unsupported";
  ASSERT_SUCCESS(r);
  ASSERT_LT(selected, binaries.size());
  EXPECT_STREQ(mine, binaries[selected].pDeviceTargetSpec);
}

TEST_P(urDeviceTest, SelectBinaryNoneSuitable) {
  if (backend() == UR_BACKEND_OPENCL || backend() == UR_BACKEND_LEVEL_ZERO)
    GTEST_SKIP() << "SPIR-V devices may take several of the targets offered";
  const char *foreign = backend() == UR_BACKEND_CUDA ? UR_DEVICE_BINARY_TARGET_AMDGCN : UR_DEVICE_BINARY_TARGET_NVPTX64;
  ur_device_binary_t binary{UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, foreign};
  uint32_t selected = 1000;
  ur_result_t r = urDeviceSelectBinary(device(), &binary, 1, &selected);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urDeviceSelectBinary unsupported";
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BINARY, r);
}

TEST_P(urDeviceTest, GetSelectedIsSubsetOfGet) {
  uint32_t all = 0, selected = 0;
  ASSERT_SUCCESS(urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, 0, nullptr, &all));
  ASSERT_SUCCESS(urDeviceGetSelected(platform(), UR_DEVICE_TYPE_ALL, 0, nullptr, &selected));
  EXPECT_LE(selected, all);
  EXPECT_GE(selected, 1u);
}

TEST_P(urDeviceTest, GetByOwnType) {
  ur_device_type_t type{};
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_TYPE, type));
  uint32_t count = 0;
  ASSERT_SUCCESS(urDeviceGet(platform(), type, 0, nullptr, &count));
  EXPECT_GE(count, 1u);
  // A type the device is not yields no error, only fewer devices.
  ur_device_type_t other = type == UR_DEVICE_TYPE_FPGA ? UR_DEVICE_TYPE_VPU : UR_DEVICE_TYPE_FPGA;
  uint32_t none = 99;
  ur_result_t r = urDeviceGet(platform(), other, 0, nullptr, &none);
  ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_DEVICE_NOT_FOUND);
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urDeviceTest, InvalidEnumeration) {
  CONF_REQUIRE_VALIDATION();
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urDeviceGetInfo(device(), UR_DEVICE_INFO_FORCE_UINT32, 0, nullptr, &size));
  uint32_t count = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urDeviceGet(platform(), UR_DEVICE_TYPE_FORCE_UINT32, 0, nullptr, &count));
}

TEST_P(urDeviceTest, InvalidNullHandle) {
  CONF_REQUIRE_VALIDATION();
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urDeviceGetInfo(nullptr, UR_DEVICE_INFO_TYPE, 0, nullptr, &size));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urDeviceRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urDeviceRelease(nullptr));
  uint32_t count = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urDeviceGet(nullptr, UR_DEVICE_TYPE_ALL, 0, nullptr, &count));
}

TEST_P(urDeviceTest, InvalidSizes) {
  CONF_REQUIRE_VALIDATION();
  ur_device_type_t type;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urDeviceGetInfo(device(), UR_DEVICE_INFO_TYPE, 0, &type, nullptr));
  ur_device_handle_t d = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, 0, &d, nullptr));
  uint32_t selected = 0;
  ur_device_binary_t binary{UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, UR_DEVICE_BINARY_TARGET_SPIRV64};
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urDeviceSelectBinary(device(), &binary, 0, &selected));
}

TEST_P(urDeviceTest, InvalidNullPointers) {
  CONF_REQUIRE_VALIDATION();
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urDeviceGetInfo(device(), UR_DEVICE_INFO_TYPE, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urDeviceGetInfo(device(), UR_DEVICE_INFO_TYPE, sizeof(ur_device_type_t), nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, 1, nullptr, nullptr));
}

// Inside the enumeration's range but unknown to the adapter: the adapter itself must say so.
TEST_P(urDeviceTest, UnsupportedEnumerationIsRefused) {
  // Gaps in ur_device_info_t's values are no query at all; an adapter must not answer them.
  const urinfo::InfoTable &table = urinfo::info_table("ur_device_info_t");
  uint32_t gap = 0;
  for (uint32_t v = 1; v < 0x2000 && !gap; ++v)
    if (!table.find(v)) gap = v;
  ASSERT_NE(0u, gap);
  size_t size = 0;
  ur_result_t r = urDeviceGetInfo(device(), static_cast<ur_device_info_t>(gap), 0, nullptr, &size);
  ASSERT_RESULT_IN(r, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, UR_RESULT_ERROR_INVALID_ENUMERATION);
}

CONF_INSTANTIATE_DEVICE_SUITE(urDeviceTest);

} // namespace
