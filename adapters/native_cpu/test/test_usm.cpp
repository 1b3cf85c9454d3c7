// SPDX-License-Identifier: Apache-2.0
// USM: allocation, the allocation registry, free, and the USM commands.
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuUsm : public NativeCpu {
protected:
  template <class V> V alloc_info(const void *p, ur_usm_alloc_info_t info, ur_result_t expect = UR_RESULT_SUCCESS) {
    V v{};
    EXPECT_EQ(T(context).USM.pfnGetMemAllocInfo(context, p, info, sizeof v, &v, nullptr), expect) << info;
    return v;
  }
};

TEST_F(NativeCpuUsm, EachKindHonoursAlignment) {
  for (uint32_t align : {0u, 1u, 8u, 64u, 256u, 4096u, 1u << 16, 1u << 21}) {
    ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, align};
    void *h = nullptr, *d = nullptr, *s = nullptr;
    ASSERT_EQ(T(context).USM.pfnHostAlloc(context, &desc, nullptr, 100, &h), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(context).USM.pfnDeviceAlloc(context, device, &desc, nullptr, 100, &d), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(context).USM.pfnSharedAlloc(context, device, &desc, nullptr, 100, &s), UR_RESULT_SUCCESS);
    for (void *p : {h, d, s}) {
      if (align) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << align;
      }
      std::memset(p, 0xab, 100); // every kind is host-accessible here
      EXPECT_EQ(T(context).USM.pfnFree(context, p), UR_RESULT_SUCCESS);
    }
  }
}

TEST_F(NativeCpuUsm, AllocationErrorsChangeNothing) {
  void *p = nullptr;
  ur_usm_desc_t bad_align{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, 48};
  EXPECT_EQ(T(context).USM.pfnHostAlloc(context, &bad_align, nullptr, 64, &p), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(T(context).USM.pfnHostAlloc(context, nullptr, nullptr, 0, &p), UR_RESULT_ERROR_INVALID_USM_SIZE);
  uint64_t max_alloc = 0;
  T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr);
  EXPECT_EQ(T(context).USM.pfnDeviceAlloc(context, device, nullptr, nullptr, max_alloc + 1, &p),
            UR_RESULT_ERROR_INVALID_USM_SIZE);
  EXPECT_EQ(T(context).USM.pfnSharedAlloc(context, device, nullptr, nullptr, 64, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  int bogus;
  EXPECT_EQ(
      T(context).USM.pfnDeviceAlloc(context, reinterpret_cast<ur_device_handle_t>(&bogus), nullptr, nullptr, 64, &p),
      UR_RESULT_ERROR_INVALID_DEVICE);
  EXPECT_EQ(T(context).USM.pfnHostAlloc(context, nullptr, reinterpret_cast<ur_usm_pool_handle_t>(&bogus), 64, &p),
            UR_RESULT_ERROR_INVALID_VALUE); // not a pool
  ur_usm_host_desc_t host_desc{UR_STRUCTURE_TYPE_USM_HOST_DESC, nullptr, 0x100};
  ur_usm_desc_t chained{UR_STRUCTURE_TYPE_USM_DESC, &host_desc, 0, 0};
  EXPECT_EQ(T(context).USM.pfnHostAlloc(context, &chained, nullptr, 64, &p), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(p, nullptr);
}

TEST_F(NativeCpuUsm, AllocInfoAnswersInteriorPointers) {
  void *h = nullptr, *d = nullptr;
  ASSERT_EQ(T(context).USM.pfnHostAlloc(context, nullptr, nullptr, 1000, &h), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(context).USM.pfnDeviceAlloc(context, device, nullptr, nullptr, 4096, &d), UR_RESULT_SUCCESS);
  char *inside = static_cast<char *>(d) + 4095;
  EXPECT_EQ(alloc_info<ur_usm_type_t>(inside, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_DEVICE);
  EXPECT_EQ(alloc_info<void *>(inside, UR_USM_ALLOC_INFO_BASE_PTR), d);
  EXPECT_EQ(alloc_info<size_t>(inside, UR_USM_ALLOC_INFO_SIZE), 4096u);
  EXPECT_EQ(alloc_info<ur_device_handle_t>(inside, UR_USM_ALLOC_INFO_DEVICE), device);
  EXPECT_EQ(alloc_info<ur_usm_pool_handle_t>(inside, UR_USM_ALLOC_INFO_POOL), nullptr);
  EXPECT_EQ(alloc_info<ur_usm_type_t>(h, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_HOST);
  EXPECT_EQ(alloc_info<ur_device_handle_t>(h, UR_USM_ALLOC_INFO_DEVICE), nullptr);
  // One past the end, and memory that is not ours.
  EXPECT_EQ(alloc_info<ur_usm_type_t>(static_cast<char *>(d) + 4096, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_UNKNOWN);
  int stack_value;
  EXPECT_EQ(alloc_info<ur_usm_type_t>(&stack_value, UR_USM_ALLOC_INFO_TYPE), UR_USM_TYPE_UNKNOWN);
  alloc_info<void *>(&stack_value, UR_USM_ALLOC_INFO_BASE_PTR, UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  alloc_info<size_t>(&stack_value, UR_USM_ALLOC_INFO_SIZE, UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  ur_usm_type_t t;
  EXPECT_EQ(T(context).USM.pfnGetMemAllocInfo(context, d, UR_USM_ALLOC_INFO_FORCE_UINT32, sizeof t, &t, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(context).USM.pfnGetMemAllocInfo(context, nullptr, UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  // Another context does not see this context's allocations.
  ur_context_handle_t other = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &other), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(other).USM.pfnGetMemAllocInfo(other, d, UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(t, UR_USM_TYPE_UNKNOWN);
  EXPECT_EQ(T(other).USM.pfnFree(other, d), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  T(other).Context.pfnRelease(other);
  EXPECT_EQ(T(context).USM.pfnFree(context, h), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(context).USM.pfnFree(context, d), UR_RESULT_SUCCESS);
}

TEST_F(NativeCpuUsm, FreeRefusesWhatItDidNotAllocate) {
  void *p = nullptr;
  ASSERT_EQ(T(context).USM.pfnSharedAlloc(context, device, nullptr, nullptr, 256, &p), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(context).USM.pfnFree(context, static_cast<char *>(p) + 8), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(alloc_info<size_t>(p, UR_USM_ALLOC_INFO_SIZE), 256u); // still there
  EXPECT_EQ(T(context).USM.pfnFree(context, p), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(context).USM.pfnFree(context, p), UR_RESULT_ERROR_INVALID_MEM_OBJECT); // double free
  EXPECT_EQ(T(context).USM.pfnFree(context, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(NativeCpuUsm, ManyAllocationsEachFoundByAnyByte) {
  std::vector<std::pair<char *, size_t>> allocs;
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    size_t size = 1 + rng() % 3000;
    void *p = nullptr;
    ASSERT_EQ(T(context).USM.pfnHostAlloc(context, nullptr, nullptr, size, &p), UR_RESULT_SUCCESS);
    allocs.emplace_back(static_cast<char *>(p), size);
  }
  for (auto &[base, size] : allocs) {
    char *probe = base + rng() % size;
    ASSERT_EQ(alloc_info<void *>(probe, UR_USM_ALLOC_INFO_BASE_PTR), base);
    ASSERT_EQ(alloc_info<size_t>(probe, UR_USM_ALLOC_INFO_SIZE), size);
  }
  for (auto &a : allocs) ASSERT_EQ(T(context).USM.pfnFree(context, a.first), UR_RESULT_SUCCESS);
}

TEST_F(NativeCpuUsm, ContextReleaseFreesWhatIsLeft) {
  // Leak-checked in the address-sanitizer build: the context frees its allocations.
  ur_context_handle_t c = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &c), UR_RESULT_SUCCESS);
  void *p = nullptr;
  ASSERT_EQ(T(c).USM.pfnHostAlloc(c, nullptr, nullptr, 1 << 20, &p), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(c).Context.pfnRelease(c), UR_RESULT_SUCCESS);
  ur_usm_type_t t;
  ASSERT_EQ(T(context).USM.pfnGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(t, UR_USM_TYPE_UNKNOWN);
}

TEST_F(NativeCpuUsm, MemcpyAndFillWithWaitLists) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  const size_t n = 1 << 16;
  auto *a = static_cast<uint32_t *>(shared_alloc(n * 4));
  auto *b = static_cast<uint32_t *>(shared_alloc(n * 4));
  uint32_t pattern = 0xdeadbeef;
  ur_event_handle_t filled = nullptr, copied = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnUSMFill(q, a, 4, &pattern, n * 4, 0, nullptr, &filled), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Enqueue.pfnUSMMemcpy(q, false, b, a, n * 4, 1, &filled, &copied), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Event.pfnWait(1, &copied), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(b[i], pattern) << i;
  // Blocking copy: done when the call returns.
  std::vector<uint32_t> host(n);
  ASSERT_EQ(T(q).Enqueue.pfnUSMMemcpy(q, true, host.data(), b, n * 4, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(host[n - 1], pattern);
  // Patterns of every power-of-two size up to 128 bytes, and an odd one.
  for (size_t psize : {1u, 2u, 8u, 16u, 64u, 128u, 3u}) {
    std::vector<uint8_t> pat(psize);
    std::iota(pat.begin(), pat.end(), uint8_t(1));
    size_t bytes = psize * 1000;
    ASSERT_EQ(T(q).Enqueue.pfnUSMFill(q, a, psize, pat.data(), bytes, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    auto *bytes_a = reinterpret_cast<uint8_t *>(a);
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(bytes_a[i], pat[i % psize]) << psize << " " << i;
  }
  T(q).Event.pfnRelease(filled);
  T(q).Event.pfnRelease(copied);
}

TEST_F(NativeCpuUsm, CommandSizeErrors) {
  ur_queue_handle_t q = make_queue();
  auto *a = static_cast<char *>(shared_alloc(1024));
  auto *b = static_cast<char *>(shared_alloc(1024));
  uint32_t pat = 1;
  ur_event_handle_t ev = nullptr;
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill(q, a, 4, &pat, 1026, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill(q, a, 4, &pat, 1028, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE); // past end
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill(q, a, 0, &pat, 16, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill(q, a, 8, &pat, 4, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill(q, nullptr, 4, &pat, 4, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(T(q).Enqueue.pfnUSMMemcpy(q, false, a + 512, b, 513, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMMemcpy(q, false, a, b, 0, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMPrefetch(q, a, 2048, 0, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMPrefetch(q, a, 16, 4, 0, nullptr, &ev), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(q).Enqueue.pfnUSMAdvise(q, a, 16, 1u << 20, &ev), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(q).Enqueue.pfnUSMAdvise(q, a, 0, 0, &ev), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(ev, nullptr);
  // System memory is not in the registry, and is usable as is.
  std::vector<char> host(64, 'x');
  EXPECT_EQ(T(q).Enqueue.pfnUSMMemcpy(q, true, a, host.data(), 64, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(a[63], 'x');
}

TEST_F(NativeCpuUsm, TwoDimensionalFillAndCopy) {
  ur_queue_handle_t q = make_queue();
  const size_t pitch = 64, width = 40, height = 10;
  auto *a = static_cast<uint8_t *>(shared_alloc(pitch * height));
  auto *b = static_cast<uint8_t *>(shared_alloc(pitch * height));
  std::memset(a, 0, pitch * height);
  std::memset(b, 0, pitch * height);
  uint32_t pattern = 0x04030201;
  ASSERT_EQ(T(q).Enqueue.pfnUSMFill2D(q, a, pitch, 4, &pattern, width, height, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Enqueue.pfnUSMMemcpy2D(q, true, b, pitch, a, pitch, width, height, 0, nullptr, nullptr),
            UR_RESULT_SUCCESS);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < pitch; ++x) ASSERT_EQ(b[y * pitch + x], x < width ? (x % 4) + 1 : 0) << x << "," << y;
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill2D(q, a, 16, 4, &pattern, 32, 2, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMFill2D(q, a, pitch, 3, &pattern, 36, 2, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMMemcpy2D(q, true, b, pitch, a, pitch, width, height + 1, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(q).Enqueue.pfnUSMMemcpy2D(q, true, b, 8, a, pitch, width, 1, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
}

TEST_F(NativeCpuUsm, PrefetchAndAdviseOrderTheQueue) {
  ur_queue_handle_t q = make_queue();
  auto *a = static_cast<char *>(shared_alloc(4096));
  ur_event_handle_t pre = nullptr, adv = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnUSMPrefetch(q, a, 4096, UR_USM_MIGRATION_FLAG_HOST_TO_DEVICE, 0, nullptr, &pre),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Enqueue.pfnUSMAdvise(q, a, 4096, UR_USM_ADVICE_FLAG_SET_READ_MOSTLY, &adv), UR_RESULT_SUCCESS);
  ur_event_handle_t both[2] = {pre, adv};
  ASSERT_EQ(T(q).Event.pfnWait(2, both), UR_RESULT_SUCCESS);
  ur_command_t type{};
  T(adv).Event.pfnGetInfo(adv, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr);
  EXPECT_EQ(type, UR_COMMAND_USM_ADVISE);
  T(pre).Event.pfnRelease(pre);
  T(adv).Event.pfnRelease(adv);
}

TEST_F(NativeCpuUsm, ContextMemcpy) {
  auto *a = static_cast<char *>(shared_alloc(100));
  std::memset(a, 'q', 100);
  char out[100];
  ASSERT_EQ(T(context).USMExp.pfnContextMemcpyExp(context, out, a, 100), UR_RESULT_SUCCESS);
  EXPECT_EQ(out[99], 'q');
  EXPECT_EQ(T(context).USMExp.pfnContextMemcpyExp(context, out, a, 0), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(context).USMExp.pfnContextMemcpyExp(context, out, a, 101), UR_RESULT_ERROR_INVALID_SIZE);
}

} // namespace
