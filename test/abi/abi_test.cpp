// SPDX-License-Identifier: Apache-2.0
// Checks our public headers against the ABI measured from UR's headers at the pinned
// commit: one failure line per fact that differs. Function signatures are checked at
// compile time in abi_facts.gen.cpp.
#include "abi_facts.h"

#include <gtest/gtest.h>

using namespace ordo_abi;

TEST(Abi, StructSizesAndAlignments) {
  for (size_t i = 0; i < kLayoutCount; ++i) {
    EXPECT_EQ(kLayouts[i].size, kLayouts[i].want_size) << "sizeof " << kLayouts[i].name;
    EXPECT_EQ(kLayouts[i].align, kLayouts[i].want_align) << "alignof " << kLayouts[i].name;
  }
  RecordProperty("structs", static_cast<int>(kLayoutCount));
}

TEST(Abi, MemberOffsetsAndTableSlots) {
  for (size_t i = 0; i < kMemberCount; ++i)
    EXPECT_EQ(kMembers[i].offset, kMembers[i].want_offset)
        << kMembers[i].name << " (member #" << kMembers[i].index << ")";
}

TEST(Abi, EnumeratorValues) {
  for (size_t i = 0; i < kEnumeratorCount; ++i)
    EXPECT_EQ(kEnumerators[i].value, kEnumerators[i].want) << kEnumerators[i].name;
}

TEST(Abi, Coverage) {
  // The spec holds 251 API functions and 26 table getters.
  EXPECT_EQ(kFunctionCount, 251u + 26u);
  std::printf("checked %zu layouts, %zu members/slots, %zu enumerator facts, %zu signatures\n", kLayoutCount,
              kMemberCount, kEnumeratorCount, kFunctionCount);
}
