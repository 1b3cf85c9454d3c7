// SPDX-License-Identifier: Apache-2.0
// IPC handles of physical memory (urIPC*PhysMemHandleExp): memory made with
// UR_PHYSICAL_MEM_FLAG_ENABLE_IPC gives handle data; opening it (here in the same
// process, through the same path another process would take) gives a second physical
// memory object over the same pages: bytes written through a mapping of one are read
// through a mapping of the other, also after the original is released. Refusals: memory
// without the flag, data that is not a handle. A device that reports no
// UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP skips, saying so.
#include <numeric>
#include <vector>

#include "conformance.hpp"

namespace {

class urIpcPhysicalMemTest : public conf::QueueTest {
protected:
  size_t page = 0;
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    ur_bool_t yes = false;
    if (conf::info(device(), UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP, yes) != UR_RESULT_SUCCESS || !yes)
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP";
    ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(context, device(), 1, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM,
                                                  sizeof page, &page, nullptr));
  }
  void *mapped(ur_physical_mem_handle_t p) {
    void *v = nullptr;
    EXPECT_SUCCESS(urVirtualMemReserve(context, nullptr, page, &v));
    EXPECT_SUCCESS(urVirtualMemMap(context, v, page, p, 0, UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE));
    return v;
  }
  void unmap(void *v) {
    EXPECT_SUCCESS(urVirtualMemUnmap(context, v, page));
    EXPECT_SUCCESS(urVirtualMemFree(context, v, page));
  }
};

TEST_P(urIpcPhysicalMemTest, OpenedHandleSharesThePages) {
  ur_physical_mem_properties_t props{UR_STRUCTURE_TYPE_PHYSICAL_MEM_PROPERTIES, nullptr,
                                     UR_PHYSICAL_MEM_FLAG_ENABLE_IPC};
  ur_physical_mem_handle_t original = nullptr, opened = nullptr;
  ASSERT_SUCCESS(urPhysicalMemCreate(context, device(), page, &props, &original));
  void *data = nullptr;
  size_t size = 0;
  ASSERT_SUCCESS(urIPCGetPhysMemHandleExp(context, original, &data, &size));
  ASSERT_NE(nullptr, data);
  ASSERT_GT(size, 0u);
  ASSERT_SUCCESS(urIPCOpenPhysMemHandleExp(context, device(), data, size, &opened));
  ASSERT_NE(nullptr, opened);
  EXPECT_NE(original, opened);
  size_t opened_size = 0;
  ASSERT_SUCCESS(urPhysicalMemGetInfo(opened, UR_PHYSICAL_MEM_INFO_SIZE, sizeof opened_size, &opened_size, nullptr));
  EXPECT_EQ(page, opened_size);

  void *a = mapped(original), *b = mapped(opened);
  const size_t n = page / 4;
  std::vector<uint32_t> in(n), out(n, 0);
  std::iota(in.begin(), in.end(), 7u);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, a, in.data(), page, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), b, page, 0, nullptr, nullptr));
  EXPECT_EQ(in, out) << "bytes written through the original were not seen through the opened handle";
  // The other way, after the original's handle is gone (its mapping keeps its pages).
  unmap(a);
  EXPECT_SUCCESS(urPhysicalMemRelease(original));
  const uint32_t v = 0xABCD1234;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, b, sizeof v, &v, page, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), b, page, 0, nullptr, nullptr));
  EXPECT_EQ(std::vector<uint32_t>(n, v), out);
  unmap(b);
  EXPECT_SUCCESS(urIPCClosePhysMemHandleExp(context, opened));
  EXPECT_SUCCESS(urIPCPutPhysMemHandleExp(context, data));
}

TEST_P(urIpcPhysicalMemTest, Refusals) {
  ur_physical_mem_handle_t plain = nullptr, p = nullptr;
  ASSERT_SUCCESS(urPhysicalMemCreate(context, device(), page, nullptr, &plain));
  void *data = nullptr;
  size_t size = 0;
  // The spec's code for memory the handle cannot be made for (and UR's own suite's).
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ARGUMENT, urIPCGetPhysMemHandleExp(context, plain, &data, &size))
      << "memory made without UR_PHYSICAL_MEM_FLAG_ENABLE_IPC";
  EXPECT_EQ(nullptr, data);
  EXPECT_SUCCESS(urPhysicalMemRelease(plain));
  unsigned char junk[40] = {1, 2, 3};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCOpenPhysMemHandleExp(context, device(), junk, sizeof junk, &p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCOpenPhysMemHandleExp(context, device(), junk, 3, &p));
  EXPECT_EQ(nullptr, p);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urIPCOpenPhysMemHandleExp(context, device(), junk, 3, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urIpcPhysicalMemTest);

} // namespace
