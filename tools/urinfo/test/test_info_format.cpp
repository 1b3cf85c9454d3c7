// SPDX-License-Identifier: Apache-2.0
// How urinfo (and the demo and conformance suite, which share it) prints queried values,
// in particular answers that are empty.
#include <gtest/gtest.h>

#include <cstring>

#include "info_tables.hpp"

namespace {

const urinfo::InfoQuery &device_query(uint32_t id) {
  const urinfo::InfoQuery *q = urinfo::info_table("ur_device_info_t").find(id);
  EXPECT_NE(q, nullptr) << "no generated entry for device query " << id;
  return *q;
}

TEST(UrinfoFormat, EmptyOpenArraysPrintAsEmptyBraces) {
  // The answers PoCL gives for these: a size of 0, and nothing to read.
  for (uint32_t id : {UR_DEVICE_INFO_SUPPORTED_PARTITIONS, UR_DEVICE_INFO_PARTITION_TYPE,
                      UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL, UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, UR_DEVICE_INFO_UUID}) {
    const urinfo::InfoQuery &q = device_query(id);
    EXPECT_EQ(q.count, 0u) << q.name << " is an open array in the spec";
    EXPECT_EQ(urinfo::format_value(q, nullptr, 0), "{}") << q.name;
  }
}

TEST(UrinfoFormat, EmptyStringAndScalar) {
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_NAME), nullptr, 0), "\"\"");
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_TYPE), nullptr, 0), "<empty>");
}

TEST(UrinfoFormat, NonEmptyValues) {
  const size_t sizes[] = {64, 32, 1};
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES), sizes, sizeof sizes), "{64, 32, 1}");

  const ur_device_partition_t parts[] = {UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS};
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_SUPPORTED_PARTITIONS), parts, sizeof parts),
            "{UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS}");

  const char name[] = "cpu\0junk";
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_NAME), name, sizeof name), "\"cpu\"");

  const ur_device_type_t type = UR_DEVICE_TYPE_CPU;
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_TYPE), &type, sizeof type), "UR_DEVICE_TYPE_CPU");

  const ur_queue_flags_t flags = UR_QUEUE_FLAG_PROFILING_ENABLE | (1u << 30);
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_QUEUE_PROPERTIES), &flags, sizeof flags),
            "UR_QUEUE_FLAG_PROFILING_ENABLE | 0x40000000");

  const uint8_t uuid[] = {0xde, 0xad, 0x01};
  EXPECT_EQ(urinfo::format_value(device_query(UR_DEVICE_INFO_UUID), uuid, sizeof uuid), "dead01");
}

TEST(UrinfoFormat, ResultNames) {
  EXPECT_EQ(urinfo::result_name(UR_RESULT_ERROR_INVALID_NULL_POINTER), "UR_RESULT_ERROR_INVALID_NULL_POINTER");
  EXPECT_EQ(urinfo::result_name(static_cast<ur_result_t>(0x7ffffff0)), std::to_string(0x7ffffff0));
}

} // namespace
