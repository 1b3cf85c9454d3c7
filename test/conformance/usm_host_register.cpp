// SPDX-License-Identifier: Apache-2.0
// Host memory the user registers as USM host memory (urUSMHostAllocRegisterExp /
// urUSMHostAllocUnregisterExp, docs/async-alloc.md "Registered host memory"): queries
// see it as host USM, kernels and copies use it, urUSMFree refuses it, and every
// malformed range is refused with nothing registered. A device that answers false to
// UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP must refuse the call and skips.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;

// Pages of anonymous memory, unmapped at the end of the test.
class Pages {
public:
  explicit Pages(size_t n) : size_(n * page()) {
    void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char *>(p);
  }
  ~Pages() {
    if (base_) munmap(base_, size_);
  }
  Pages(const Pages &) = delete;
  Pages &operator=(const Pages &) = delete;
  static size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
  char *at(size_t offset) const { return base_ + offset; }
  size_t size() const { return size_; }

private:
  char *base_ = nullptr;
  size_t size_ = 0;
};

class urUSMHostRegisterTest : public conf::ProgramTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::ProgramTest);
    ur_bool_t supported = false;
    ASSERT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP, sizeof supported,
                                   &supported, nullptr));
    if (!supported) {
      Pages pages(1);
      EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
                urUSMHostAllocRegisterExp(context, pages.at(0), pages.size(), nullptr))
          << "the device says it cannot register host memory";
      GTEST_SKIP() << found().label() << " does not register host memory (USM_HOST_ALLOC_REGISTER_SUPPORT_EXP)";
    }
  }
  ur_usm_type_t type_of(const void *p) {
    ur_usm_type_t t = UR_USM_TYPE_FORCE_UINT32;
    EXPECT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr));
    return t;
  }
};

TEST_P(urUSMHostRegisterTest, KernelsAndCopiesUseRegisteredMemory) {
  const size_t pages = 4;
  Pages mem(pages);
  ASSERT_NE(nullptr, mem.at(0));
  const size_t n = mem.size() / 4;
  ASSERT_SUCCESS(urUSMHostAllocRegisterExp(context, mem.at(0), mem.size(), nullptr));

  // Queries: host USM, the whole registration, interior pointers too, no device.
  EXPECT_EQ(UR_USM_TYPE_HOST, type_of(mem.at(0)));
  EXPECT_EQ(UR_USM_TYPE_HOST, type_of(mem.at(mem.size() - 1)));
  void *base = nullptr;
  size_t size = 0;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, mem.at(100), UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr));
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, mem.at(100), UR_USM_ALLOC_INFO_SIZE, sizeof size, &size, nullptr));
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, mem.at(0), UR_USM_ALLOC_INFO_DEVICE, sizeof dev, &dev, nullptr));
  EXPECT_EQ(static_cast<void *>(mem.at(0)), base);
  EXPECT_EQ(mem.size(), size);
  EXPECT_EQ(nullptr, dev) << "host memory belongs to no device";

  // A kernel writes into it; the host reads the result with no copy.
  ur_kernel_handle_t fill = make_kernel("fill");
  ASSERT_NE(nullptr, fill);
  const uint32_t v = 0xC0FFEE;
  std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, mem.at(0)), arg_value(1, sizeof v, &v)};
  ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, fill, 1, nullptr, &n, nullptr, 2, args.data(), nullptr, 0,
                                                  nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const uint32_t *words = reinterpret_cast<const uint32_t *>(mem.at(0));
  EXPECT_TRUE(std::all_of(words, words + n, [&](uint32_t x) { return x == v; }));
  EXPECT_SUCCESS(urKernelRelease(fill));

  // Copies between it and device memory, both ways.
  void *d = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, mem.size(), &d));
  std::iota(reinterpret_cast<uint32_t *>(mem.at(0)), reinterpret_cast<uint32_t *>(mem.at(0)) + n, 7u);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, d, mem.at(0), mem.size(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem.at(0), 4, &v, mem.size(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, mem.at(0), d, mem.size() / 2, 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) {
    const uint32_t want = i < n / 2 ? uint32_t(7 + i) : v;
    if (words[i] != want) {
      ADD_FAILURE() << "word " << i << " is " << words[i] << ", not " << want;
      break;
    }
  }
  EXPECT_SUCCESS(urUSMFree(context, d));

  // Registered memory is the caller's: urUSMFree refuses it and it stays registered.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, mem.at(0)));
  EXPECT_EQ(UR_USM_TYPE_HOST, type_of(mem.at(0)));

  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocUnregisterExp(context, mem.at(Pages::page())))
      << "not the first byte of a registration";
  ASSERT_SUCCESS(urUSMHostAllocUnregisterExp(context, mem.at(0)));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type_of(mem.at(0)));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocUnregisterExp(context, mem.at(0))) << "unregistered already";
}

TEST_P(urUSMHostRegisterTest, RefusesBadRangesAndRegistersNothing) {
  Pages mem(4);
  ASSERT_NE(nullptr, mem.at(0));
  const size_t page = Pages::page();
  ur_exp_usm_host_alloc_register_properties_t bad_flags{UR_STRUCTURE_TYPE_EXP_USM_HOST_ALLOC_REGISTER_PROPERTIES,
                                                        nullptr, UR_EXP_USM_HOST_ALLOC_REGISTER_FLAGS_MASK};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urUSMHostAllocRegisterExp(context, nullptr, page, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urUSMHostAllocRegisterExp(nullptr, mem.at(0), page, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, urUSMHostAllocRegisterExp(context, mem.at(0), page, &bad_flags));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocRegisterExp(context, mem.at(0), 0, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocRegisterExp(context, mem.at(64), page, nullptr))
      << "does not start on a page";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocRegisterExp(context, mem.at(0), page + 64, nullptr))
      << "does not end on a page";
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type_of(mem.at(0))) << "a refused registration left something behind";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urUSMHostAllocUnregisterExp(context, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urUSMHostAllocUnregisterExp(nullptr, mem.at(0)));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocUnregisterExp(context, mem.at(0))) << "never registered";

  // Overlaps: with a registration, and with USM memory of the context.
  ASSERT_SUCCESS(urUSMHostAllocRegisterExp(context, mem.at(page), 2 * page, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocRegisterExp(context, mem.at(0), 2 * page, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocRegisterExp(context, mem.at(2 * page), 2 * page, nullptr));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type_of(mem.at(0)));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type_of(mem.at(3 * page)));
  ASSERT_SUCCESS(urUSMHostAllocRegisterExp(context, mem.at(3 * page), page, nullptr)) << "the neighbouring page";
  EXPECT_SUCCESS(urUSMHostAllocUnregisterExp(context, mem.at(page)));
  EXPECT_SUCCESS(urUSMHostAllocUnregisterExp(context, mem.at(3 * page)));

  ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, static_cast<uint32_t>(page)};
  void *h = nullptr;
  ASSERT_SUCCESS(urUSMHostAlloc(context, &desc, nullptr, page, &h));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMHostAllocRegisterExp(context, h, page, nullptr))
      << "USM host memory of the context";
  EXPECT_SUCCESS(urUSMFree(context, h));
}

TEST_P(urUSMHostRegisterTest, ReadOnlyRegistrationFeedsCopies) {
  Pages mem(2);
  ASSERT_NE(nullptr, mem.at(0));
  std::iota(reinterpret_cast<uint32_t *>(mem.at(0)), reinterpret_cast<uint32_t *>(mem.at(0) + mem.size()), 11u);
  ur_exp_usm_host_alloc_register_properties_t ro{UR_STRUCTURE_TYPE_EXP_USM_HOST_ALLOC_REGISTER_PROPERTIES, nullptr,
                                                 UR_EXP_USM_HOST_ALLOC_REGISTER_FLAG_READ_ONLY};
  ASSERT_SUCCESS(urUSMHostAllocRegisterExp(context, mem.at(0), mem.size(), &ro));
  void *d = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, mem.size(), &d));
  std::vector<char> back(mem.size());
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, d, mem.at(0), mem.size(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, back.data(), d, mem.size(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), mem.at(0)));
  EXPECT_SUCCESS(urUSMFree(context, d));
  EXPECT_SUCCESS(urUSMHostAllocUnregisterExp(context, mem.at(0)));
}

// A registration the user never undoes ends with its context; the memory stays the
// caller's and can be registered again in another context.
TEST_P(urUSMHostRegisterTest, ContextReleaseEndsRegistrations) {
  Pages mem(2);
  ASSERT_NE(nullptr, mem.at(0));
  ur_device_handle_t dev = device();
  ur_context_handle_t other = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other));
  ASSERT_SUCCESS(urUSMHostAllocRegisterExp(other, mem.at(0), mem.size(), nullptr));
  ur_usm_type_t t = UR_USM_TYPE_FORCE_UINT32;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(other, mem.at(0), UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr));
  EXPECT_EQ(UR_USM_TYPE_HOST, t);
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type_of(mem.at(0))) << "registered in another context only";
  ASSERT_SUCCESS(urContextRelease(other));
  mem.at(0)[0] = 1; // still the caller's
  ASSERT_SUCCESS(urUSMHostAllocRegisterExp(context, mem.at(0), mem.size(), nullptr));
  EXPECT_SUCCESS(urUSMHostAllocUnregisterExp(context, mem.at(0)));
}

// Threads registering and unregistering their own pages of one region at once.
TEST_P(urUSMHostRegisterTest, ThreadsRegisterNeighbouringPages) {
  const size_t threads = 4, rounds = 50;
  Pages mem(threads);
  ASSERT_NE(nullptr, mem.at(0));
  std::vector<std::thread> pool;
  std::vector<int> failures(threads, 0);
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      char *mine = mem.at(t * Pages::page());
      for (size_t r = 0; r < rounds; ++r) {
        ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
        if (urUSMHostAllocRegisterExp(context, mine, Pages::page(), nullptr) != UR_RESULT_SUCCESS ||
            urUSMGetMemAllocInfo(context, mine + 8, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr) !=
                UR_RESULT_SUCCESS ||
            type != UR_USM_TYPE_HOST || urUSMHostAllocUnregisterExp(context, mine) != UR_RESULT_SUCCESS)
          ++failures[t];
      }
    });
  for (auto &th : pool) th.join();
  for (size_t t = 0; t < threads; ++t) EXPECT_EQ(0, failures[t]) << "thread " << t;
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urUSMHostRegisterTest);
