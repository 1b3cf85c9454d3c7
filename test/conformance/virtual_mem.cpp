// SPDX-License-Identifier: Apache-2.0
// Virtual and physical memory (urVirtualMem*, urPhysicalMem*): granularity, physical
// allocations and their queries, reserving, mapping (the same pages at two addresses),
// access changes, unmapping and freeing, with data moved through mapped ranges by USM
// copies and a kernel, and what each function must refuse. A device that reports no
// UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT skips them, saying so.
#include <algorithm>
#include <numeric>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;

template <class Base> class VirtualMemFixture : public Base {
protected:
  size_t page = 0;

  void SetUp() override {
    CONF_BASE_SETUP(Base);
    ur_bool_t yes = false;
    if (conf::info(this->device(), UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT, yes) != UR_RESULT_SUCCESS || !yes)
      GTEST_SKIP() << this->found().label() << " reports no UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT";
    ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(
        this->context, this->device(), 1, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM, sizeof page, &page, nullptr));
  }
  ur_physical_mem_handle_t physical(size_t size) {
    ur_physical_mem_handle_t p = nullptr;
    EXPECT_SUCCESS(urPhysicalMemCreate(this->context, this->device(), size, nullptr, &p));
    return p;
  }
  void *reserve(size_t size) {
    void *p = nullptr;
    EXPECT_SUCCESS(urVirtualMemReserve(this->context, nullptr, size, &p));
    return p;
  }
  ur_virtual_mem_access_flags_t access(const void *p) {
    ur_virtual_mem_access_flags_t a = 0;
    EXPECT_SUCCESS(urVirtualMemGetInfo(this->context, p, page, UR_VIRTUAL_MEM_INFO_ACCESS_MODE, sizeof a, &a, nullptr));
    return a;
  }
  void write(void *dst, const std::vector<uint32_t> &v) {
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(this->queue, true, dst, v.data(), v.size() * 4, 0, nullptr, nullptr));
  }
  std::vector<uint32_t> read(const void *src, size_t n) {
    std::vector<uint32_t> v(n);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(this->queue, true, v.data(), src, n * 4, 0, nullptr, nullptr));
    return v;
  }
};

using urVirtualMemTest = VirtualMemFixture<conf::QueueTest>;
using urVirtualMemKernelTest = VirtualMemFixture<conf::ProgramTest>;

char *at(void *p, size_t bytes) { return static_cast<char *>(p) + bytes; }

TEST_P(urVirtualMemTest, Granularity) {
  size_t minimum = 0, recommended = 0, size = 0;
  ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(context, device(), 1 << 20, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM, 0,
                                                nullptr, &size));
  EXPECT_EQ(sizeof(size_t), size);
  ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(context, device(), 1 << 20, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM,
                                                sizeof minimum, &minimum, nullptr));
  ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(context, nullptr, 1 << 20, UR_VIRTUAL_MEM_GRANULARITY_INFO_RECOMMENDED,
                                                sizeof recommended, &recommended, nullptr));
  EXPECT_GT(minimum, 0u);
  EXPECT_EQ(0u, minimum & (minimum - 1)) << "a power of two";
  EXPECT_GE(recommended, minimum);
  EXPECT_EQ(0u, recommended % minimum);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
            urVirtualMemGranularityGetInfo(nullptr, device(), 1, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM,
                                           sizeof minimum, &minimum, nullptr));
}

TEST_P(urVirtualMemTest, PhysicalMemQueriesAndLifetime) {
  ur_physical_mem_properties_t props{UR_STRUCTURE_TYPE_PHYSICAL_MEM_PROPERTIES, nullptr, 0};
  ur_physical_mem_handle_t p = nullptr;
  ASSERT_SUCCESS(urPhysicalMemCreate(context, device(), 3 * page, &props, &p));
  size_t size = 0;
  ASSERT_SUCCESS(urPhysicalMemGetInfo(p, UR_PHYSICAL_MEM_INFO_SIZE, sizeof size, &size, nullptr));
  EXPECT_EQ(3 * page, size);
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urPhysicalMemGetInfo(p, UR_PHYSICAL_MEM_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  ur_device_handle_t d = nullptr;
  ASSERT_SUCCESS(urPhysicalMemGetInfo(p, UR_PHYSICAL_MEM_INFO_DEVICE, sizeof d, &d, nullptr));
  EXPECT_EQ(device(), d);
  ur_physical_mem_properties_t got{};
  ASSERT_SUCCESS(urPhysicalMemGetInfo(p, UR_PHYSICAL_MEM_INFO_PROPERTIES, sizeof got, &got, nullptr));
  EXPECT_EQ(UR_STRUCTURE_TYPE_PHYSICAL_MEM_PROPERTIES, got.stype);
  EXPECT_EQ(0u, got.flags);
  uint32_t refs = 0;
  ASSERT_SUCCESS(urPhysicalMemRetain(p));
  ASSERT_SUCCESS(urPhysicalMemGetInfo(p, UR_PHYSICAL_MEM_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urPhysicalMemGetInfo(p, UR_PHYSICAL_MEM_INFO_FORCE_UINT32, sizeof refs, &refs, nullptr));
  EXPECT_SUCCESS(urPhysicalMemRelease(p));
  EXPECT_SUCCESS(urPhysicalMemRelease(p));

  ur_physical_mem_handle_t bad = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urPhysicalMemCreate(context, device(), page + 1, nullptr, &bad));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urPhysicalMemCreate(context, device(), 0, nullptr, &bad));
  props.flags = UR_PHYSICAL_MEM_FLAGS_MASK;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, urPhysicalMemCreate(context, device(), page, &props, &bad));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urPhysicalMemCreate(context, nullptr, page, nullptr, &bad));
  EXPECT_EQ(nullptr, bad);
}

TEST_P(urVirtualMemTest, MapWriteReadUnmapFree) {
  const size_t n = 2 * page / 4;
  void *base = reserve(4 * page);
  ASSERT_NE(nullptr, base);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(base) % page);
  ur_physical_mem_handle_t p = physical(2 * page);
  ASSERT_NE(nullptr, p);
  void *mapped = at(base, page);
  ASSERT_SUCCESS(urVirtualMemMap(context, mapped, 2 * page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE, access(mapped));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_NONE, access(base)) << "reserved, not mapped";
  std::vector<uint32_t> data(n);
  std::iota(data.begin(), data.end(), 1000u);
  write(mapped, data);
  EXPECT_EQ(data, read(mapped, n));
  // The physical memory outlives the user's handle while it is mapped.
  ASSERT_SUCCESS(urPhysicalMemRelease(p));
  EXPECT_EQ(data, read(mapped, n));
  ASSERT_SUCCESS(urVirtualMemUnmap(context, mapped, 2 * page));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_NONE, access(mapped));
  ASSERT_SUCCESS(urVirtualMemFree(context, base, 4 * page));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urVirtualMemFree(context, base, 4 * page)) << "already freed";
}

TEST_P(urVirtualMemTest, SamePagesAtTwoAddresses) {
  const size_t n = page / 4;
  void *a = reserve(page), *b = reserve(2 * page);
  ur_physical_mem_handle_t p = physical(2 * page);
  ASSERT_TRUE(a && b && p);
  // a shows the second page of p; b shows both.
  ASSERT_SUCCESS(urVirtualMemMap(context, a, page, p, page, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
  ASSERT_SUCCESS(urVirtualMemMap(context, b, 2 * page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
  std::vector<uint32_t> data(n);
  std::iota(data.begin(), data.end(), 7u);
  write(a, data);
  EXPECT_EQ(data, read(at(b, page), n)) << "the same physical page";
  ASSERT_SUCCESS(urVirtualMemUnmap(context, a, page));
  ASSERT_SUCCESS(urVirtualMemUnmap(context, b, 2 * page));
  ASSERT_SUCCESS(urVirtualMemFree(context, a, page));
  ASSERT_SUCCESS(urVirtualMemFree(context, b, 2 * page));
  EXPECT_SUCCESS(urPhysicalMemRelease(p));
}

TEST_P(urVirtualMemTest, SetAccessSplitsAMapping) {
  void *base = reserve(3 * page);
  ur_physical_mem_handle_t p = physical(3 * page);
  ASSERT_TRUE(base && p);
  ASSERT_SUCCESS(urVirtualMemMap(context, base, 3 * page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
  ASSERT_SUCCESS(urVirtualMemSetAccess(context, at(base, page), page, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE, access(base));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY, access(at(base, page)));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE, access(at(base, 2 * page)));
  // Still readable; the writable pages still take writes.
  std::vector<uint32_t> data(page / 4, 0x77u);
  write(at(base, 2 * page), data);
  EXPECT_EQ(data, read(at(base, 2 * page), page / 4));
  read(at(base, page), page / 4);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urVirtualMemSetAccess(context, base, page, UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urVirtualMemSetAccess(context, at(base, 2 * page), 2 * page, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE))
      << "past the mapping";
  // Unmapping takes the pieces of the split mapping one by one.
  ASSERT_SUCCESS(urVirtualMemUnmap(context, base, page));
  ASSERT_SUCCESS(urVirtualMemUnmap(context, at(base, page), page));
  ASSERT_SUCCESS(urVirtualMemUnmap(context, at(base, 2 * page), page));
  ASSERT_SUCCESS(urVirtualMemFree(context, base, 3 * page));
  EXPECT_SUCCESS(urPhysicalMemRelease(p));
}

TEST_P(urVirtualMemTest, Refusals) {
  void *base = reserve(2 * page);
  ur_physical_mem_handle_t p = physical(page);
  ASSERT_TRUE(base && p);
  void *out = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urVirtualMemReserve(context, nullptr, page + 3, &out));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urVirtualMemReserve(context, nullptr, page, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urVirtualMemMap(context, at(base, 2 * page), page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE))
      << "outside the reservation";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urVirtualMemMap(context, base, 2 * page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE))
      << "more than the physical memory";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urVirtualMemMap(context, at(base, 1), page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE))
      << "not page aligned";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urVirtualMemMap(context, base, page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK));
  ASSERT_SUCCESS(urVirtualMemMap(context, base, page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urVirtualMemMap(context, base, page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE))
      << "already mapped";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urVirtualMemUnmap(context, at(base, page), page)) << "not mapped";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urVirtualMemFree(context, base, page)) << "not the whole reservation";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urVirtualMemUnmap(context, nullptr, page));
  // The refused calls changed nothing: the mapping is there, the rest reserved.
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE, access(base));
  EXPECT_EQ(UR_VIRTUAL_MEM_ACCESS_FLAG_NONE, access(at(base, page)));
  ASSERT_SUCCESS(urVirtualMemUnmap(context, base, page));
  ASSERT_SUCCESS(urVirtualMemFree(context, base, 2 * page));
  EXPECT_SUCCESS(urPhysicalMemRelease(p));
}

TEST_P(urVirtualMemKernelTest, KernelFillsMappedMemory) {
  void *base = reserve(2 * page);
  ur_physical_mem_handle_t p = physical(2 * page);
  ASSERT_TRUE(base && p);
  ASSERT_SUCCESS(urVirtualMemMap(context, base, 2 * page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  const size_t n = 2 * page / 4;
  const uint32_t value = 0xBEE5;
  std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, base), arg_value(1, sizeof value, &value)};
  ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, &n, nullptr, 2, args.data(), nullptr, 0,
                                                  nullptr, nullptr));
  std::vector<uint32_t> got = read(base, n);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [&](uint32_t v) { return v == value; }));
  EXPECT_SUCCESS(urKernelRelease(k));
  ASSERT_SUCCESS(urVirtualMemUnmap(context, base, 2 * page));
  ASSERT_SUCCESS(urVirtualMemFree(context, base, 2 * page));
  EXPECT_SUCCESS(urPhysicalMemRelease(p));
}

CONF_INSTANTIATE_DEVICE_SUITE(urVirtualMemTest);
CONF_INSTANTIATE_DEVICE_SUITE(urVirtualMemKernelTest);

} // namespace
