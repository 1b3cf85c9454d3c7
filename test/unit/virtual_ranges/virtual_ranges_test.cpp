// SPDX-License-Identifier: Apache-2.0
// ordo::virtual_ranges: the rules of urVirtualMem* on reservations and mappings, and that
// a refused or failed step leaves the table (and every physical reference) as it was.
#include <gtest/gtest.h>

#include <memory>

#include "ordo/virtual_ranges.hpp"

namespace {

struct Ctx {};
using Phys = std::shared_ptr<int>; // a counted reference, as the adapters' are
using Ranges = ordo::virtual_ranges<Ctx, Phys>;

constexpr uintptr_t kBase = 0x100000;
constexpr size_t kPage = 0x1000;
constexpr ur_virtual_mem_access_flags_t kRW = UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE;
constexpr ur_virtual_mem_access_flags_t kRO = UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY;

ur_result_t ok() { return UR_RESULT_SUCCESS; }

ur_virtual_mem_access_flags_t access(Ranges &r, Ctx *c, uintptr_t p) {
  ur_virtual_mem_access_flags_t a = 0;
  EXPECT_EQ(UR_RESULT_SUCCESS, r.access_at(c, p, 1, &a));
  return a;
}

TEST(VirtualRanges, MapsOnlyInsideOneReservationOfItsContext) {
  Ranges r;
  Ctx a, b;
  Phys phys = std::make_shared<int>(0);
  r.add(&a, kBase, 4 * kPage);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.map(&b, kBase, kPage, phys, 0, kRW, ok)) << "another context";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.map(&a, kBase + 3 * kPage, 2 * kPage, phys, 0, kRW, ok))
      << "past the reservation's end";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.map(&a, kBase - kPage, kPage, phys, 0, kRW, ok)) << "before it";
  EXPECT_EQ(1, phys.use_count()) << "refusals keep no reference";
  ASSERT_EQ(UR_RESULT_SUCCESS, r.map(&a, kBase + kPage, 2 * kPage, phys, 0, kRW, ok));
  EXPECT_EQ(2, phys.use_count());
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.map(&a, kBase, 2 * kPage, phys, 0, kRW, ok)) << "overlaps the start";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.map(&a, kBase + 2 * kPage, 2 * kPage, phys, 0, kRW, ok))
      << "overlaps the end";
  EXPECT_EQ(UR_RESULT_SUCCESS, r.map(&a, kBase, kPage, phys, 0, kRO, ok)) << "the page before is free";
  EXPECT_EQ(kRO, access(r, &a, kBase));
  EXPECT_EQ(kRW, access(r, &a, kBase + 2 * kPage));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_NONE, access(r, &a, kBase + 3 * kPage)) << "reserved, not mapped";
}

TEST(VirtualRanges, AFailedBackendStepChangesNothing) {
  Ranges r;
  Ctx c;
  Phys phys = std::make_shared<int>(0);
  r.add(&c, kBase, 4 * kPage);
  auto fail = [] { return UR_RESULT_ERROR_OUT_OF_RESOURCES; };
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_RESOURCES, r.map(&c, kBase, kPage, phys, 0, kRW, fail));
  EXPECT_EQ(1, phys.use_count());
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_NONE, access(r, &c, kBase));
  ASSERT_EQ(UR_RESULT_SUCCESS, r.map(&c, kBase, 2 * kPage, phys, 0, kRW, ok));
  Phys released;
  EXPECT_EQ(
      UR_RESULT_ERROR_OUT_OF_RESOURCES,
      r.unmap(
          &c, kBase, 2 * kPage, [](const Ranges::mapping &) { return UR_RESULT_ERROR_OUT_OF_RESOURCES; }, released));
  EXPECT_FALSE(released);
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_RESOURCES, r.set_access(&c, kBase, kPage, kRO, [](const Ranges::mapping &) {
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }));
  EXPECT_EQ(kRW, access(r, &c, kBase)) << "the mapping was not split";
  Ranges::mapping_map dropped;
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_RESOURCES,
            r.remove(
                &c, kBase, 4 * kPage, [](Ranges::mapping_map &) { return UR_RESULT_ERROR_OUT_OF_RESOURCES; }, dropped));
  EXPECT_EQ(kRW, access(r, &c, kBase)) << "still reserved and mapped";
}

TEST(VirtualRanges, SetAccessSplitsAndUnmapTakesExactlyOnePiece) {
  Ranges r;
  Ctx c;
  Phys phys = std::make_shared<int>(0);
  r.add(&c, kBase, 3 * kPage);
  ASSERT_EQ(UR_RESULT_SUCCESS, r.map(&c, kBase, 3 * kPage, phys, 0, kRW, ok));
  size_t protected_offset = ~size_t(0);
  ASSERT_EQ(UR_RESULT_SUCCESS, r.set_access(&c, kBase + kPage, kPage, kRO, [&](const Ranges::mapping &m) {
    protected_offset = m.offset;
    return UR_RESULT_SUCCESS;
  }));
  EXPECT_EQ(0u, protected_offset) << "the callable sees the mapping before the split";
  EXPECT_EQ(kRW, access(r, &c, kBase));
  EXPECT_EQ(kRO, access(r, &c, kBase + kPage));
  EXPECT_EQ(kRW, access(r, &c, kBase + 2 * kPage));
  EXPECT_EQ(4, phys.use_count()) << "each of the three pieces holds the memory";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.set_access(&c, kBase, 2 * kPage, kRW, [](const Ranges::mapping &) {
    return UR_RESULT_SUCCESS;
  })) << "spans two pieces";
  Phys released;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            r.unmap(
                &c, kBase, 3 * kPage, [](const Ranges::mapping &) { return UR_RESULT_SUCCESS; }, released))
      << "no longer one mapping";
  size_t unmapped_offset = ~size_t(0);
  ASSERT_EQ(UR_RESULT_SUCCESS, r.unmap(
                                   &c, kBase + 2 * kPage, kPage,
                                   [&](const Ranges::mapping &m) {
                                     unmapped_offset = m.offset;
                                     return UR_RESULT_SUCCESS;
                                   },
                                   released));
  EXPECT_EQ(2 * kPage, unmapped_offset) << "the piece keeps its offset into the memory";
  EXPECT_TRUE(released);
  released.reset();
  EXPECT_EQ(3, phys.use_count());
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_NONE, access(r, &c, kBase + 2 * kPage));
}

TEST(VirtualRanges, OnlyAWholeReservationGoesAndItsMappingsWithIt) {
  Ranges r;
  Ctx c, other;
  Phys phys = std::make_shared<int>(0);
  r.add(&c, kBase, 2 * kPage);
  ASSERT_EQ(UR_RESULT_SUCCESS, r.map(&c, kBase, kPage, phys, 0, kRW, ok));
  Ranges::mapping_map dropped;
  auto release = [](Ranges::mapping_map &) { return UR_RESULT_SUCCESS; };
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.remove(&c, kBase, kPage, release, dropped)) << "part of it";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.remove(&other, kBase, 2 * kPage, release, dropped)) << "not its context";
  ASSERT_EQ(UR_RESULT_SUCCESS, r.remove(&c, kBase, 2 * kPage, release, dropped));
  EXPECT_EQ(1u, dropped.size());
  dropped.clear();
  EXPECT_EQ(1, phys.use_count());
  ur_virtual_mem_access_flags_t a = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.access_at(&c, kBase, 1, &a)) << "gone";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, r.remove(&c, kBase, 2 * kPage, release, dropped)) << "already freed";
}

} // namespace
