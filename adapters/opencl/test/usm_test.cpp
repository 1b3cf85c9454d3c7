// SPDX-License-Identifier: Apache-2.0
// USM allocation, the allocation registry, memcpy and fill on the real device.
#include <cstring>
#include <numeric>
#include <vector>

#include "adapter_fixture.hpp"

namespace ocltest {
namespace {

class Usm : public OpenCLTest {
protected:
  void SetUp() override {
    OpenCLTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT))
      GTEST_SKIP() << "the device has no USM (neither SVM nor Intel USM)";
  }
  void *alloc(ur_usm_type_t kind, size_t size) {
    void *p = nullptr;
    ur_result_t r = kind == UR_USM_TYPE_HOST     ? t().USM.pfnHostAlloc(context, nullptr, nullptr, size, &p)
                    : kind == UR_USM_TYPE_DEVICE ? t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, size, &p)
                                                 : t().USM.pfnSharedAlloc(context, device, nullptr, nullptr, size, &p);
    EXPECT_EQ(UR_RESULT_SUCCESS, r);
    return p;
  }
};

TEST_F(Usm, EveryKindAllocatesAndReportsItself) {
  for (ur_usm_type_t kind : {UR_USM_TYPE_HOST, UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED}) {
    ur_device_info_t q = kind == UR_USM_TYPE_HOST     ? UR_DEVICE_INFO_USM_HOST_SUPPORT
                         : kind == UR_USM_TYPE_DEVICE ? UR_DEVICE_INFO_USM_DEVICE_SUPPORT
                                                      : UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT;
    if (!device_caps(q)) continue;
    void *p = alloc(kind, 4096);
    ASSERT_NE(nullptr, p);
    ur_usm_type_t type{};
    void *base = nullptr;
    size_t size = 0;
    ur_device_handle_t d = nullptr;
    // An interior pointer finds its allocation.
    void *inside = static_cast<char *>(p) + 100;
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, inside, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
    EXPECT_EQ(kind, type);
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, inside, UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr));
    EXPECT_EQ(p, base);
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_SIZE, sizeof size, &size, nullptr));
    EXPECT_EQ(4096u, size);
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_DEVICE, sizeof d, &d, nullptr));
    EXPECT_EQ(kind == UR_USM_TYPE_HOST ? nullptr : device, d);
    // Freeing by an interior pointer is refused, and so is a second free.
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, t().USM.pfnFree(context, inside));
    OCL_ASSERT_OK(t().USM.pfnFree(context, p));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, t().USM.pfnFree(context, p));
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
    EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type);
  }
}

TEST_F(Usm, BadRequestsAreRefused) {
  void *p = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, 0, &p));
  ur_usm_desc_t odd{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, 3};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, t().USM.pfnDeviceAlloc(context, device, &odd, nullptr, 64, &p));
  uint64_t max_alloc = 0;
  OCL_ASSERT_OK(
      t().Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE,
            t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, max_alloc + 1, &p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, 64, nullptr));
  int on_stack = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, t().USM.pfnFree(context, &on_stack));
  ur_usm_type_t type{};
  OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, &on_stack, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type);
  // Aligned allocations honour the alignment, also beyond what OpenCL itself offers.
  for (uint32_t align : {64u, 4096u, 65536u}) {
    ur_usm_desc_t aligned{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, align};
    OCL_ASSERT_OK(t().USM.pfnDeviceAlloc(context, device, &aligned, nullptr, 100, &p));
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % align);
    void *base = nullptr;
    OCL_ASSERT_OK(t().USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr));
    EXPECT_EQ(p, base);
    OCL_ASSERT_OK(t().USM.pfnFree(context, p));
  }
}

// Flags the spec does not define, in host or device descriptors chained to the
// allocation's descriptor, are refused (ur_common::check_chained_flags).
TEST_F(Usm, UndefinedFlagsInChainedDescriptorsAreRefused) {
  ur_usm_device_desc_t device_desc{UR_STRUCTURE_TYPE_USM_DEVICE_DESC, nullptr, 0x80000000u};
  ur_usm_host_desc_t host_desc{UR_STRUCTURE_TYPE_USM_HOST_DESC, nullptr, 0};
  ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, &host_desc, 0, 0};
  void *p = nullptr;
  OCL_ASSERT_OK(t().USM.pfnHostAlloc(context, &desc, nullptr, 64, &p));
  OCL_ASSERT_OK(t().USM.pfnFree(context, p));
  host_desc.pNext = &device_desc; // the bad flags second in the chain
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, t().USM.pfnHostAlloc(context, &desc, nullptr, 64, &p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, t().USM.pfnDeviceAlloc(context, device, &desc, nullptr, 64, &p));
  host_desc.pNext = nullptr;
  host_desc.flags = 0x80000000u;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, t().USM.pfnSharedAlloc(context, device, &desc, nullptr, 64, &p));
  // A zero size as well: the spec's size check (the table tail) comes first.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, t().USM.pfnHostAlloc(context, &desc, nullptr, 0, &p));
}

TEST_F(Usm, MemcpyRoundTripThroughDeviceMemory) {
  const size_t n = 1 << 16;
  std::vector<uint32_t> in(n), out(n, 0);
  std::iota(in.begin(), in.end(), 7u);
  void *d = alloc(UR_USM_TYPE_DEVICE, n * 4);
  ASSERT_NE(nullptr, d);
  ur_event_handle_t copied = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnUSMMemcpy(ooo_queue, false, d, in.data(), n * 4, 0, nullptr, &copied));
  OCL_ASSERT_OK(t().Enqueue.pfnUSMMemcpy(ooo_queue, true, out.data(), d, n * 4, 1, &copied, nullptr));
  EXPECT_EQ(in, out);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, t().Enqueue.pfnUSMMemcpy(queue, true, out.data(), d, 0, 0, nullptr, nullptr));
  // Past the end of the allocation.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnUSMMemcpy(queue, true, d, in.data(), n * 4 + 4, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Event.pfnRelease(copied));
  OCL_ASSERT_OK(t().USM.pfnFree(context, d));
}

// Patterns OpenCL fills directly (powers of two up to 128) and ones it cannot.
TEST_F(Usm, FillWithAnyPatternSize) {
  for (size_t pattern_size : {1u, 2u, 4u, 16u, 128u, 3u, 48u, 256u}) {
    const size_t size = pattern_size * 37;
    void *d = alloc(UR_USM_TYPE_DEVICE, size);
    ASSERT_NE(nullptr, d);
    std::vector<uint8_t> pattern(pattern_size);
    for (size_t i = 0; i < pattern_size; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 1);
    ur_event_handle_t filled = nullptr;
    OCL_ASSERT_OK(t().Enqueue.pfnUSMFill(ooo_queue, d, pattern_size, pattern.data(), size, 0, nullptr, &filled));
    pattern.assign(pattern_size, 0); // the adapter kept its own copy
    std::vector<uint8_t> out(size);
    OCL_ASSERT_OK(t().Enqueue.pfnUSMMemcpy(ooo_queue, true, out.data(), d, size, 1, &filled, nullptr));
    for (size_t i = 0; i < size; ++i)
      ASSERT_EQ(static_cast<uint8_t>((i % pattern_size) * 7 + 1), out[i])
          << "pattern " << pattern_size << " byte " << i;
    OCL_ASSERT_OK(t().Event.pfnRelease(filled));
    OCL_ASSERT_OK(t().USM.pfnFree(context, d));
  }
  uint32_t v = 0;
  void *d = alloc(UR_USM_TYPE_DEVICE, 64);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, t().Enqueue.pfnUSMFill(queue, d, 4, &v, 6, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, t().Enqueue.pfnUSMFill(queue, d, 8, &v, 4, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().USM.pfnFree(context, d));
}

TEST_F(Usm, SharedMemoryIsHostAccessible) {
  if (!device_caps(UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT)) GTEST_SKIP() << "no shared USM on this device";
  auto *p = static_cast<uint32_t *>(alloc(UR_USM_TYPE_SHARED, 1024 * 4));
  ASSERT_NE(nullptr, p);
  for (uint32_t i = 0; i < 1024; ++i) p[i] = i;
  uint32_t v = 5;
  OCL_ASSERT_OK(t().Enqueue.pfnUSMFill(queue, p + 512, 4, &v, 512 * 4, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  EXPECT_EQ(511u, p[511]);
  EXPECT_EQ(5u, p[512]);
  EXPECT_EQ(5u, p[1023]);
  OCL_ASSERT_OK(t().USM.pfnFree(context, p));
}

// Freeing waits for commands still using the memory.
TEST_F(Usm, FreeAfterPendingCopyIsSafe) {
  const size_t size = 8 << 20;
  void *a = alloc(UR_USM_TYPE_DEVICE, size);
  void *b = alloc(UR_USM_TYPE_DEVICE, size);
  uint8_t zero = 0;
  OCL_ASSERT_OK(t().Enqueue.pfnUSMFill(queue, a, 1, &zero, size, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Enqueue.pfnUSMMemcpy(queue, false, b, a, size, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().USM.pfnFree(context, a));
  OCL_ASSERT_OK(t().USM.pfnFree(context, b));
}

} // namespace
} // namespace ocltest
