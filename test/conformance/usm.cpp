// SPDX-License-Identifier: Apache-2.0
// USM: host, device and shared allocations: sizes, alignment, queries, frees, and
// what an adapter must refuse by itself (unknown pointers, double frees, another
// context's memory) without losing anything.
#include <algorithm>
#include <cstring>

#include "conformance.hpp"

namespace {

using conf::ContextTestWith;

struct KindNamer {
  std::string operator()(ur_usm_type_t k) const { return conf::usm_kind_name(k); }
};

class urUSMTest : public ContextTestWith<ur_usm_type_t> {
protected:
  ur_usm_type_t kind() const { return std::get<1>(GetParam()); }
  bool host_accessible() const { return kind() != UR_USM_TYPE_DEVICE; }
  void SetUp() override {
    CONF_BASE_SETUP(ContextTestWith<ur_usm_type_t>);
    if (!conf::usm_supported(device(), kind()))
      GTEST_SKIP() << found().label() << " reports no " << conf::usm_kind_name(kind()) << " USM support";
  }
  ur_result_t alloc(size_t size, void **p, uint32_t align = 0) {
    return conf::usm_alloc(context, device(), kind(), size, p, align);
  }
};

TEST_P(urUSMTest, AllocAndFree) {
  for (size_t size : {size_t(1), size_t(64), size_t(4096), size_t(1) << 20}) {
    void *p = nullptr;
    ASSERT_SUCCESS(alloc(size, &p)) << size << " bytes";
    ASSERT_NE(nullptr, p);
    EXPECT_SUCCESS(urUSMFree(context, p));
  }
}

TEST_P(urUSMTest, HostCanReadAndWrite) {
  if (!host_accessible()) GTEST_SKIP() << "device memory is not host-accessible";
  void *p = nullptr;
  const size_t size = 1 << 16;
  ASSERT_SUCCESS(alloc(size, &p));
  std::memset(p, 0x3C, size);
  const unsigned char *b = static_cast<const unsigned char *>(p);
  EXPECT_TRUE(std::all_of(b, b + size, [](unsigned char c) { return c == 0x3C; }));
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urUSMTest, Alignment) {
  // Up to 128 bytes (the largest vector type, long16) every device must honour; past
  // that it may say INVALID_VALUE (the spec's "greater than the largest data type") or
  // UNSUPPORTED_ALIGNMENT, but what it hands out must be aligned.
  for (uint32_t align : {8u, 64u, 128u, 256u, 4096u}) {
    void *p = nullptr;
    ur_result_t r = alloc(100, &p, align);
    if (align > 128 && (r == UR_RESULT_ERROR_INVALID_VALUE || r == UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)) continue;
    ASSERT_SUCCESS(r) << "align " << align;
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % align) << "align " << align;
    EXPECT_SUCCESS(urUSMFree(context, p));
  }
}

TEST_P(urUSMTest, DistinctAllocationsDoNotOverlap) {
  const size_t n = 256, size = 96;
  std::vector<char *> ptrs(n, nullptr);
  for (auto &p : ptrs) ASSERT_SUCCESS(alloc(size, reinterpret_cast<void **>(&p)));
  std::vector<char *> sorted = ptrs;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < n; ++i) EXPECT_GE(sorted[i] - sorted[i - 1], static_cast<ptrdiff_t>(size)) << "overlap";
  for (char *p : ptrs) EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urUSMTest, AllocInfo) {
  void *p = nullptr;
  const size_t size = 1000;
  ASSERT_SUCCESS(alloc(size, &p));
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(kind(), type);
  void *base = nullptr;
  char *inner = static_cast<char *>(p) + 100;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, inner, UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr));
  EXPECT_EQ(p, base) << "the base of an interior pointer";
  size_t reported = 0;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_SIZE, sizeof reported, &reported, nullptr));
  EXPECT_GE(reported, size);
  ur_device_handle_t d = nullptr;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_DEVICE, sizeof d, &d, nullptr));
  if (kind() != UR_USM_TYPE_HOST) {
    EXPECT_EQ(device(), d);
  }
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urUSMTest, EveryAllocInfoQuery) {
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(512, &p));
  ur_context_handle_t c = context;
  for (const urinfo::InfoQuery &q : urinfo::info_table("ur_usm_alloc_info_t")) {
    SCOPED_TRACE(q.name);
    conf::InfoCheckOptions options;
    // A host allocation belongs to no device; an allocation need not come from a pool.
    options.null_handle_ok = q.id == UR_USM_ALLOC_INFO_DEVICE || q.id == UR_USM_ALLOC_INFO_POOL;
    conf::check_info_query(
        q,
        [c, p](uint32_t id, size_t size, void *value, size_t *ret) {
          return urUSMGetMemAllocInfo(c, p, static_cast<ur_usm_alloc_info_t>(id), size, value, ret);
        },
        options);
  }
  EXPECT_SUCCESS(urUSMFree(context, p));
}

// ---- what the adapter itself must refuse ------------------------------------------------

TEST_P(urUSMTest, FreeUnknownPointerIsRefused) {
  int on_stack = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, &on_stack));
  std::vector<char> heap(64);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, heap.data()));
}

TEST_P(urUSMTest, DoubleFreeIsRefused) {
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(128, &p));
  ASSERT_SUCCESS(urUSMFree(context, p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, p));
}

TEST_P(urUSMTest, InteriorPointerFreeIsRefused) {
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(256, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, static_cast<char *>(p) + 8));
  // Nothing was lost: the allocation is intact and frees normally.
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  EXPECT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(kind(), type);
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urUSMTest, FreeThroughAnotherContextIsRefused) {
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(256, &p));
  ur_device_handle_t d = device();
  ur_context_handle_t other = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &d, nullptr, &other));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(other, p));
  EXPECT_SUCCESS(urContextRelease(other));
  // Still owned by its own context.
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urUSMTest, UnknownPointerInfo) {
  int on_stack = 0;
  ur_usm_type_t type = UR_USM_TYPE_SHARED;
  ur_result_t r = urUSMGetMemAllocInfo(context, &on_stack, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr);
  if (r == UR_RESULT_SUCCESS) {
    EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type);
  } else {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, r);
  }
  size_t size = 0;
  r = urUSMGetMemAllocInfo(context, &on_stack, UR_USM_ALLOC_INFO_SIZE, sizeof size, &size, nullptr);
  EXPECT_TRUE(conf::result_in(r, {UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE}))
      << "size of a pointer no allocation owns: " << urinfo::result_name(r);
}

TEST_P(urUSMTest, HugeAllocationFailsCleanly) {
  void *p = reinterpret_cast<void *>(0x1);
  ur_result_t r = alloc(size_t(1) << 62, &p);
  ASSERT_RESULT_IN(r, UR_RESULT_ERROR_INVALID_USM_SIZE, UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
                   UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, UR_RESULT_ERROR_OUT_OF_RESOURCES);
  // The context still works.
  void *q = nullptr;
  ASSERT_SUCCESS(alloc(64, &q));
  EXPECT_SUCCESS(urUSMFree(context, q));
}

TEST_P(urUSMTest, LargerThanMaxAllocSize) {
  uint64_t max_alloc = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, max_alloc));
  void *p = nullptr;
  ur_result_t r = alloc(static_cast<size_t>(max_alloc) + 1, &p);
  if (r == UR_RESULT_SUCCESS) {
    urUSMFree(context, p);
    FAIL() << "an allocation past UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE succeeded";
  }
  ASSERT_RESULT_IN(r, UR_RESULT_ERROR_INVALID_USM_SIZE, UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                   UR_RESULT_ERROR_OUT_OF_HOST_MEMORY);
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urUSMTest, SizeZero) {
  CONF_REQUIRE_VALIDATION();
  void *p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_USM_SIZE, alloc(0, &p));
}

TEST_P(urUSMTest, AlignmentNotPowerOfTwo) {
  CONF_REQUIRE_VALIDATION();
  void *p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, alloc(64, &p, 3));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, alloc(64, &p, 96));
}

TEST_P(urUSMTest, NullArguments) {
  CONF_REQUIRE_VALIDATION();
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, conf::usm_alloc(context, device(), kind(), 64, nullptr));
  void *p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, conf::usm_alloc(nullptr, device(), kind(), 64, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urUSMFree(context, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urUSMFree(nullptr, &p));
}

TEST_P(urUSMTest, InfoParameterRules) {
  CONF_REQUIRE_VALIDATION();
  void *p = nullptr;
  ASSERT_SUCCESS(alloc(64, &p));
  ur_usm_type_t type;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_FORCE_UINT32, sizeof type, &type, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urUSMGetMemAllocInfo(context, nullptr, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_SUCCESS(urUSMFree(context, p));
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urUSMTest, ur_usm_type_t,
                                   ::testing::Values(UR_USM_TYPE_HOST, UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED),
                                   KindNamer);

} // namespace
