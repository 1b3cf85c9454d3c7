// SPDX-License-Identifier: Apache-2.0
// Root-device reference counts, device partitioning (urDevicePartition, sub-devices and
// the UR_DEVICE_INFO_PARTITION_* / PARENT_DEVICE answers), and sub-devices at work:
// a context, a queue, USM commands and stream-ordered allocation on one.
#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance.hpp"

namespace {

using conf::DeviceTest;

std::vector<ur_device_partition_t> supported_partitions(ur_device_handle_t d) {
  size_t size = 0;
  if (urDeviceGetInfo(d, UR_DEVICE_INFO_SUPPORTED_PARTITIONS, 0, nullptr, &size) != UR_RESULT_SUCCESS) return {};
  std::vector<ur_device_partition_t> out(size / sizeof(ur_device_partition_t));
  if (!out.empty() &&
      urDeviceGetInfo(d, UR_DEVICE_INFO_SUPPORTED_PARTITIONS, size, out.data(), nullptr) != UR_RESULT_SUCCESS)
    return {};
  return out;
}

std::vector<ur_device_partition_property_t> partition_type(ur_device_handle_t d) {
  size_t size = 0;
  EXPECT_SUCCESS(urDeviceGetInfo(d, UR_DEVICE_INFO_PARTITION_TYPE, 0, nullptr, &size));
  std::vector<ur_device_partition_property_t> out(size / sizeof(ur_device_partition_property_t));
  if (!out.empty()) {
    EXPECT_SUCCESS(urDeviceGetInfo(d, UR_DEVICE_INFO_PARTITION_TYPE, size, out.data(), nullptr));
  }
  return out;
}

uint32_t compute_units(ur_device_handle_t d) {
  uint32_t n = 0;
  EXPECT_SUCCESS(conf::info(d, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, n));
  return n;
}

ur_device_partition_property_t equally(uint32_t units) {
  ur_device_partition_property_t p{};
  p.type = UR_DEVICE_PARTITION_EQUALLY;
  p.value.equally = units;
  return p;
}

ur_device_partition_property_t by_count(uint32_t units) {
  ur_device_partition_property_t p{};
  p.type = UR_DEVICE_PARTITION_BY_COUNTS;
  p.value.count = units;
  return p;
}

ur_device_partition_properties_t properties_of(const std::vector<ur_device_partition_property_t> &list) {
  return {UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES, nullptr, list.data(), list.size()};
}

// ---- root devices are not reference counted -------------------------------------------------

using urDeviceRootRefCountTest = DeviceTest;

TEST_P(urDeviceRootRefCountTest, RetainAndReleaseLeaveTheCountUnchanged) {
  const uint32_t before = conf::reference_count(device());
  ASSERT_SUCCESS(urDeviceRetain(device()));
  EXPECT_EQ(before, conf::reference_count(device())) << "urDeviceRetain changed a root device's count";
  ASSERT_SUCCESS(urDeviceRelease(device()));
  EXPECT_EQ(before, conf::reference_count(device()));
  // More releases than retains: still a root device, still usable.
  ASSERT_SUCCESS(urDeviceRelease(device()));
  ASSERT_SUCCESS(urDeviceRelease(device()));
  EXPECT_EQ(before, conf::reference_count(device()));
  ur_device_type_t type{};
  EXPECT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_TYPE, type));
}

TEST_P(urDeviceRootRefCountTest, GetLeavesTheCountUnchanged) {
  const uint32_t before = conf::reference_count(device());
  uint32_t n = 0;
  ASSERT_SUCCESS(urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, 0, nullptr, &n));
  std::vector<ur_device_handle_t> all(n);
  for (int round = 0; round < 3; ++round)
    ASSERT_SUCCESS(urDeviceGet(platform(), UR_DEVICE_TYPE_ALL, n, all.data(), nullptr));
  EXPECT_EQ(before, conf::reference_count(device()));
}

CONF_INSTANTIATE_DEVICE_SUITE(urDeviceRootRefCountTest);

// ---- partitioning --------------------------------------------------------------------------

class urDevicePartitionTest : public DeviceTest {
protected:
  std::vector<ur_device_partition_t> supported;
  uint32_t units = 0;

  void SetUp() override {
    CONF_BASE_SETUP(DeviceTest);
    supported = supported_partitions(device());
    units = compute_units(device());
  }
  bool offers(ur_device_partition_t t) const {
    return std::find(supported.begin(), supported.end(), t) != supported.end();
  }
  // Partitions with `list`; the sub-devices (each one reference of the caller's).
  std::vector<ur_device_handle_t> partition(const std::vector<ur_device_partition_property_t> &list) {
    ur_device_partition_properties_t props = properties_of(list);
    uint32_t n = 0;
    EXPECT_SUCCESS(urDevicePartition(device(), &props, 0, nullptr, &n));
    std::vector<ur_device_handle_t> subs(n, nullptr);
    if (n) {
      EXPECT_SUCCESS(urDevicePartition(device(), &props, n, subs.data(), nullptr));
    }
    return subs;
  }
  static void release_all(const std::vector<ur_device_handle_t> &subs) {
    for (ur_device_handle_t s : subs)
      if (s) {
        EXPECT_SUCCESS(urDeviceRelease(s));
      }
  }
};

TEST_P(urDevicePartitionTest, RootDeviceAnswers) {
  uint32_t max_subs = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES, max_subs));
  if (supported.empty()) {
    EXPECT_EQ(0u, max_subs) << "no partition type, yet a maximum of sub-devices";
  } else {
    EXPECT_GE(max_subs, 1u);
    EXPECT_LE(max_subs, units);
  }
  for (ur_device_partition_t t : supported)
    EXPECT_TRUE(t == UR_DEVICE_PARTITION_EQUALLY || t == UR_DEVICE_PARTITION_BY_COUNTS ||
                t == UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN || t == UR_DEVICE_PARTITION_BY_CSLICE)
        << "unknown partition type " << t;
  EXPECT_TRUE(partition_type(device()).empty()) << "a root device was made by no partitioning";
  ur_device_handle_t parent = reinterpret_cast<ur_device_handle_t>(1);
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_PARENT_DEVICE, parent));
  EXPECT_EQ(nullptr, parent);
}

TEST_P(urDevicePartitionTest, UnsupportedDeviceRefusesAndWritesNothing) {
  if (!supported.empty()) GTEST_SKIP() << found().label() << " offers partitioning";
  std::vector<ur_device_partition_property_t> list{equally(1)};
  ur_device_partition_properties_t props = properties_of(list);
  ur_device_handle_t sub = nullptr;
  uint32_t n = 77;
  ASSERT_RESULT_IN(urDevicePartition(device(), &props, 1, &sub, &n), UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
                   UR_RESULT_ERROR_INVALID_VALUE, UR_RESULT_ERROR_DEVICE_PARTITION_FAILED);
  EXPECT_EQ(nullptr, sub);
  EXPECT_EQ(77u, n);
}

TEST_P(urDevicePartitionTest, EquallyGivesSubDevicesOfThatSize) {
  if (!offers(UR_DEVICE_PARTITION_EQUALLY)) GTEST_SKIP() << found().label() << " does not partition equally";
  // Fewer units than the device has: a sub-device as big as its parent may be refused
  // (Intel's CPU runtime answers CL_DEVICE_PARTITION_FAILED).
  for (uint32_t per = 1; per < units || per == 1; per = per * 2) {
    std::vector<ur_device_handle_t> subs = partition({equally(per)});
    EXPECT_EQ(units / per, subs.size()) << per << " compute units each";
    for (ur_device_handle_t s : subs) {
      ASSERT_NE(nullptr, s);
      EXPECT_NE(device(), s);
      EXPECT_EQ(per, compute_units(s));
      ur_device_handle_t parent = nullptr;
      ASSERT_SUCCESS(conf::info(s, UR_DEVICE_INFO_PARENT_DEVICE, parent));
      EXPECT_EQ(device(), parent);
      ur_platform_handle_t p = nullptr;
      ASSERT_SUCCESS(conf::info(s, UR_DEVICE_INFO_PLATFORM, p));
      EXPECT_EQ(platform(), p);
      std::vector<ur_device_partition_property_t> type = partition_type(s);
      ASSERT_EQ(1u, type.size());
      EXPECT_EQ(UR_DEVICE_PARTITION_EQUALLY, type[0].type);
      EXPECT_EQ(per, type[0].value.equally);
    }
    release_all(subs);
  }
}

TEST_P(urDevicePartitionTest, ByCountsInTheOrderAsked) {
  if (!offers(UR_DEVICE_PARTITION_BY_COUNTS)) GTEST_SKIP() << found().label() << " does not partition by counts";
  std::vector<std::vector<uint32_t>> requests{{1}};
  if (units >= 2) requests.push_back({1, 1});
  if (units >= 3) requests.push_back({2, 1});
  if (units >= 3) requests.push_back({1, 2});
  for (const std::vector<uint32_t> &counts : requests) {
    std::vector<ur_device_partition_property_t> list;
    for (uint32_t c : counts) list.push_back(by_count(c));
    std::vector<ur_device_handle_t> subs = partition(list);
    ASSERT_EQ(counts.size(), subs.size());
    for (size_t i = 0; i < subs.size(); ++i) {
      EXPECT_EQ(counts[i], compute_units(subs[i])) << "sub-device " << i;
      std::vector<ur_device_partition_property_t> type = partition_type(subs[i]);
      ASSERT_EQ(counts.size(), type.size());
      for (size_t j = 0; j < type.size(); ++j) {
        EXPECT_EQ(UR_DEVICE_PARTITION_BY_COUNTS, type[j].type);
        EXPECT_EQ(counts[j], type[j].value.count);
      }
    }
    release_all(subs);
  }
}

TEST_P(urDevicePartitionTest, SameRequestSameSubDevicesInOrder) {
  if (!offers(UR_DEVICE_PARTITION_EQUALLY)) GTEST_SKIP() << found().label() << " does not partition equally";
  std::vector<ur_device_handle_t> first = partition({equally(1)});
  std::vector<ur_device_handle_t> second = partition({equally(1)});
  EXPECT_EQ(first, second);
  release_all(first);
  release_all(second);
}

TEST_P(urDevicePartitionTest, SubsetAndCount) {
  if (!offers(UR_DEVICE_PARTITION_EQUALLY)) GTEST_SKIP() << found().label() << " does not partition equally";
  std::vector<ur_device_partition_property_t> list{equally(1)};
  ur_device_partition_properties_t props = properties_of(list);
  uint32_t n = 0;
  ASSERT_SUCCESS(urDevicePartition(device(), &props, 0, nullptr, &n));
  ASSERT_GE(n, 1u);
  // Fewer slots than sub-devices: only that many are written; the count is all of them.
  std::vector<ur_device_handle_t> one(2, nullptr);
  uint32_t all = 0;
  ASSERT_SUCCESS(urDevicePartition(device(), &props, 1, one.data(), &all));
  EXPECT_EQ(n, all);
  EXPECT_NE(nullptr, one[0]);
  EXPECT_EQ(nullptr, one[1]);
  release_all({one[0]});
}

TEST_P(urDevicePartitionTest, SubDevicesAreCounted) {
  if (!offers(UR_DEVICE_PARTITION_EQUALLY)) GTEST_SKIP() << found().label() << " does not partition equally";
  std::vector<ur_device_handle_t> subs = partition({equally(1)});
  ASSERT_FALSE(subs.empty());
  ur_device_handle_t s = subs[0];
  const uint32_t before = conf::reference_count(s);
  EXPECT_GE(before, 1u);
  ASSERT_SUCCESS(urDeviceRetain(s));
  EXPECT_EQ(before + 1, conf::reference_count(s));
  ASSERT_SUCCESS(urDeviceRelease(s));
  EXPECT_EQ(before, conf::reference_count(s));
  release_all(subs);
}

TEST_P(urDevicePartitionTest, SubDeviceOfASubDevice) {
  if (!offers(UR_DEVICE_PARTITION_BY_COUNTS) || units < 2)
    GTEST_SKIP() << found().label() << " cannot give a sub-device of 2 compute units by counts";
  std::vector<ur_device_handle_t> subs = partition({by_count(2)});
  ASSERT_EQ(1u, subs.size());
  std::vector<ur_device_partition_t> inner = supported_partitions(subs[0]);
  if (std::find(inner.begin(), inner.end(), UR_DEVICE_PARTITION_EQUALLY) == inner.end()) {
    release_all(subs);
    GTEST_SKIP() << "the sub-device does not partition equally";
  }
  std::vector<ur_device_partition_property_t> list{equally(1)};
  ur_device_partition_properties_t props = properties_of(list);
  uint32_t n = 0;
  ASSERT_SUCCESS(urDevicePartition(subs[0], &props, 0, nullptr, &n));
  ASSERT_EQ(2u, n);
  std::vector<ur_device_handle_t> grand(n);
  ASSERT_SUCCESS(urDevicePartition(subs[0], &props, n, grand.data(), nullptr));
  for (ur_device_handle_t g : grand) {
    ur_device_handle_t parent = nullptr;
    ASSERT_SUCCESS(conf::info(g, UR_DEVICE_INFO_PARENT_DEVICE, parent));
    EXPECT_EQ(subs[0], parent);
    EXPECT_EQ(1u, compute_units(g));
  }
  release_all(grand);
  release_all(subs);
}

TEST_P(urDevicePartitionTest, BadRequestsGetTheirErrors) {
  if (supported.empty()) GTEST_SKIP() << found().label() << " offers no partitioning";
  const ur_device_partition_t type = supported[0];
  auto one = [&](uint32_t v) {
    ur_device_partition_property_t p{};
    p.type = type;
    p.value.count = v;
    return p;
  };
  auto refused = [&](const std::vector<ur_device_partition_property_t> &list) {
    ur_device_partition_properties_t props = properties_of(list);
    const ur_device_partition_property_t unused = one(1);
    if (list.empty()) props.pProperties = &unused; // a list, but PropCount 0
    ur_device_handle_t sub = nullptr;
    uint32_t n = 77;
    ur_result_t r = urDevicePartition(device(), &props, 1, &sub, &n);
    EXPECT_EQ(nullptr, sub) << "a refused partition wrote a handle";
    EXPECT_EQ(77u, n) << "a refused partition wrote a count";
    return r;
  };
  // No property at all.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, refused({}));
  // A type that is none.
  ur_device_partition_property_t bogus{};
  bogus.type = static_cast<ur_device_partition_t>(0x1234);
  bogus.value.count = 1;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION, refused({bogus}));
  if (type == UR_DEVICE_PARTITION_EQUALLY || type == UR_DEVICE_PARTITION_BY_COUNTS) {
    // Zero compute units.
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT, refused({one(0)}));
    // More compute units than the device has.
    ur_result_t r = refused({one(units + 1)});
    EXPECT_TRUE(conf::result_in(r, {UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT,
                                    UR_RESULT_ERROR_DEVICE_PARTITION_FAILED, UR_RESULT_ERROR_INVALID_VALUE}))
        << urinfo::result_name(r);
  }
  // Two types in one list.
  if (type == UR_DEVICE_PARTITION_BY_COUNTS) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, refused({one(1), equally(1)}));
  }
  // EQUALLY takes one value.
  if (type == UR_DEVICE_PARTITION_EQUALLY) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, refused({equally(1), equally(1)}));
  }
}

TEST_P(urDevicePartitionTest, InvalidNullPointers) {
  CONF_REQUIRE_VALIDATION();
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urDevicePartition(device(), nullptr, 0, nullptr, nullptr));
  ur_device_partition_properties_t props{UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES, nullptr, nullptr, 1};
  uint32_t n = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urDevicePartition(device(), &props, 0, nullptr, &n));
}

// A sub-device is a device: a context, a queue, USM and stream-ordered allocation on it.
TEST_P(urDevicePartitionTest, SubDeviceRunsCommands) {
  if (!offers(UR_DEVICE_PARTITION_EQUALLY)) GTEST_SKIP() << found().label() << " does not partition equally";
  std::vector<ur_device_handle_t> subs = partition({equally(1)});
  ASSERT_FALSE(subs.empty());
  ur_device_handle_t s = subs.back();
  ur_context_handle_t ctx = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &s, nullptr, &ctx));
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(ctx, s, nullptr, &q));
  constexpr size_t kSize = 4096;
  void *dev = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(ctx, s, UR_USM_TYPE_DEVICE, kSize, &dev));
  const uint32_t pattern = 0x5eed1234u;
  ASSERT_SUCCESS(urEnqueueUSMFill(q, dev, sizeof pattern, &pattern, kSize, 0, nullptr, nullptr));
  std::vector<uint32_t> host(kSize / 4, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, true, host.data(), dev, kSize, 0, nullptr, nullptr));
  EXPECT_EQ(std::vector<uint32_t>(kSize / 4, pattern), host);

  bool async = false;
  if (conf::info(s, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, async) == UR_RESULT_SUCCESS && async) {
    void *a = nullptr;
    ur_event_handle_t ev = nullptr;
    ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(q, nullptr, kSize, nullptr, 0, nullptr, &a, &ev));
    ASSERT_NE(nullptr, a);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, false, a, dev, kSize, 0, nullptr, nullptr));
    std::vector<uint32_t> back(kSize / 4, 0);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, true, back.data(), a, kSize, 0, nullptr, nullptr));
    EXPECT_EQ(host, back);
    ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, nullptr, a, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urEventRelease(ev));
  }
  ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urUSMFree(ctx, dev));
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urContextRelease(ctx));
  release_all(subs);
}

CONF_INSTANTIATE_DEVICE_SUITE(urDevicePartitionTest);

} // namespace
