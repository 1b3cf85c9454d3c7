// SPDX-License-Identifier: Apache-2.0
// Buffers (urMem*, urEnqueueMemBuffer*) and 2-D USM copies and fills on the real device.
#include <cstring>
#include <numeric>
#include <vector>

#include "adapter_fixture.hpp"

namespace ocltest {
namespace {

using Buffers = OpenCLTest;

TEST_F(Buffers, WriteCopyFillRead) {
  const size_t n = 1024;
  std::vector<uint32_t> in(n);
  std::iota(in.begin(), in.end(), 1u);
  ur_mem_handle_t a = nullptr, b = nullptr;
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, n * 4, nullptr, &a));
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, n * 4, nullptr, &b));
  ur_event_handle_t wrote = nullptr, copied = nullptr, filled = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferWrite(ooo_queue, a, false, 0, n * 4, in.data(), 0, nullptr, &wrote));
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferCopy(ooo_queue, a, b, 0, 0, n * 4, 1, &wrote, &copied));
  uint32_t pattern = 0xABCD;
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferFill(ooo_queue, b, &pattern, 4, 16, 32, 1, &copied, &filled));
  std::vector<uint32_t> out(n);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(ooo_queue, b, true, 0, n * 4, out.data(), 1, &filled, nullptr));
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(i >= 4 && i < 12 ? 0xABCDu : in[i], out[i]) << i;
  size_t size = 0;
  OCL_ASSERT_OK(t().Mem.pfnGetInfo(a, UR_MEM_INFO_SIZE, sizeof size, &size, nullptr));
  EXPECT_EQ(n * 4, size);
  ur_context_handle_t c = nullptr;
  OCL_ASSERT_OK(t().Mem.pfnGetInfo(a, UR_MEM_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  // Out of bounds, bad pattern sizes.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnMemBufferRead(queue, b, true, 8, n * 4, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnMemBufferFill(queue, b, &pattern, 3, 0, 12, 0, nullptr, nullptr));
  for (ur_event_handle_t e : {wrote, copied, filled}) OCL_ASSERT_OK(t().Event.pfnRelease(e));
  OCL_ASSERT_OK(t().Mem.pfnRelease(a));
  OCL_ASSERT_OK(t().Mem.pfnRelease(b));
}

// A 3-D box: write a sub-box from a larger host array, copy it to another buffer at
// another origin, read it back into host memory with its own pitches.
TEST_F(Buffers, RectangularWriteCopyRead) {
  const size_t W = 16, H = 8, D = 3; // buffer layout: 16 bytes a row, 8 rows a slice, 3 slices
  const size_t bytes = W * H * D;
  std::vector<uint8_t> host(bytes);
  std::iota(host.begin(), host.end(), uint8_t{0});
  ur_mem_handle_t a = nullptr, b = nullptr;
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, bytes, nullptr, &a));
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, bytes, nullptr, &b));
  std::vector<uint8_t> zeros(bytes, 0);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferWrite(queue, a, true, 0, bytes, zeros.data(), 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferWrite(queue, b, true, 0, bytes, zeros.data(), 0, nullptr, nullptr));
  const ur_rect_region_t box{4, 3, 2};
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferWriteRect(queue, a, true, ur_rect_offset_t{2, 1, 0}, ur_rect_offset_t{1, 2, 1},
                                                  box, W, W * H, W, W * H, host.data(), 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferCopyRect(queue, a, b, ur_rect_offset_t{2, 1, 0}, ur_rect_offset_t{8, 4, 1}, box,
                                                 W, W * H, W, W * H, 0, nullptr, nullptr));
  std::vector<uint8_t> out(4 * 3 * 2, 0xFF);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferReadRect(queue, b, true, ur_rect_offset_t{8, 4, 1}, ur_rect_offset_t{0, 0, 0},
                                                 box, W, W * H, 0, 0, out.data(), 0, nullptr, nullptr));
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 4; ++x)
        EXPECT_EQ(out[z * 12 + y * 4 + x], host[(z + 1) * W * H + (y + 2) * W + (x + 1)]) << x << "," << y << "," << z;
  // An empty region, a row pitch below the width, a box past the end.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnMemBufferReadRect(queue, b, true, ur_rect_offset_t{}, ur_rect_offset_t{},
                                             ur_rect_region_t{0, 1, 1}, 0, 0, 0, 0, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnMemBufferReadRect(queue, b, true, ur_rect_offset_t{}, ur_rect_offset_t{}, box, 2, 0, 0, 0,
                                             out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnMemBufferReadRect(queue, b, true, ur_rect_offset_t{14, 0, 2}, ur_rect_offset_t{}, box, W,
                                             W * H, 0, 0, out.data(), 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Mem.pfnRelease(a));
  OCL_ASSERT_OK(t().Mem.pfnRelease(b));
}

TEST_F(Buffers, HostPointerRulesAndErrors) {
  ur_mem_handle_t m = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_BUFFER_SIZE,
            t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 0, nullptr, &m));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_HOST_PTR,
            t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER, 64, nullptr, &m));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, t().Mem.pfnBufferCreate(context, 1u << 20, 64, nullptr, &m));
  std::vector<uint8_t> host(64, 7);
  ur_buffer_properties_t props{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data()};
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER, 64, &props, &m));
  std::vector<uint8_t> out(64);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(queue, m, true, 0, 64, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(host, out);
  uint32_t refs = 0;
  OCL_ASSERT_OK(t().Mem.pfnRetain(m));
  OCL_ASSERT_OK(t().Mem.pfnGetInfo(m, UR_MEM_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs);
  OCL_ASSERT_OK(t().Mem.pfnRelease(m));
  OCL_ASSERT_OK(t().Mem.pfnRelease(m));
}

TEST_F(Buffers, SubBufferSeesItsParentsBytes) {
  ur_mem_handle_t parent = nullptr, sub = nullptr;
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 4096, nullptr, &parent));
  uint8_t v = 9;
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferFill(queue, parent, &v, 1, 0, 4096, 0, nullptr, nullptr));
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 1024, 1024};
  OCL_ASSERT_OK(
      t().Mem.pfnBufferPartition(parent, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  ur_buffer_region_t too_far{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 4000, 100};
  ur_mem_handle_t bad = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_BUFFER_SIZE,
            t().Mem.pfnBufferPartition(parent, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &too_far, &bad));
  OCL_ASSERT_OK(t().Mem.pfnRelease(parent)); // the sub-buffer keeps it
  uint8_t w = 4;
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferFill(queue, sub, &w, 1, 0, 16, 0, nullptr, nullptr));
  std::vector<uint8_t> out(1024);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(queue, sub, true, 0, 1024, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(4, out[0]);
  EXPECT_EQ(9, out[16]);
  ur_buffer_region_t inner{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, 16};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, // no sub-buffers of sub-buffers
            t().Mem.pfnBufferPartition(sub, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &inner, &bad));
  OCL_ASSERT_OK(t().Mem.pfnRelease(sub));
}

TEST_F(Buffers, MapAndUnmap) {
  ur_mem_handle_t m = nullptr;
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 256, nullptr, &m));
  void *p = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferMap(queue, m, true, UR_MAP_FLAG_WRITE, 0, 256, 0, nullptr, nullptr, &p));
  std::memset(p, 0x5A, 256);
  OCL_ASSERT_OK(t().Enqueue.pfnMemUnmap(queue, m, p, 0, nullptr, nullptr));
  std::vector<uint8_t> out(256);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(queue, m, true, 0, 256, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(std::vector<uint8_t>(256, 0x5A), out);
  OCL_ASSERT_OK(t().Mem.pfnRelease(m));
}

// A buffer as a kernel's memory-object argument.
TEST_F(Buffers, KernelWritesABuffer) {
  if (!device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT)) GTEST_SKIP() << "test program needs no USM, but setup does";
  ur_program_handle_t program = build_test_program();
  ASSERT_NE(nullptr, program);
  ur_kernel_handle_t fill = nullptr;
  OCL_ASSERT_OK(t().Kernel.pfnCreate(program, "fill", &fill));
  ur_mem_handle_t m = nullptr;
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 64 * 4, nullptr, &m));
  ur_exp_kernel_arg_properties_t mem{};
  mem.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  mem.type = UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ;
  mem.index = 0;
  mem.size = sizeof(ur_mem_handle_t);
  mem.value.memObjTuple = {m, UR_MEM_FLAG_READ_WRITE};
  uint32_t value = 31;
  size_t global[1] = {64};
  OCL_ASSERT_OK(launch(queue, fill, 1, global, nullptr, {mem, value_arg(1, 4, &value)}));
  std::vector<uint32_t> out(64);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(queue, m, true, 0, 64 * 4, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(std::vector<uint32_t>(64, 31), out);
  OCL_ASSERT_OK(t().Mem.pfnRelease(m));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(fill));
  OCL_ASSERT_OK(t().Program.pfnRelease(program));
}

using Usm2D = OpenCLTest;

TEST_F(Usm2D, CopyAndFillRowsWithPitches) {
  if (!device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT)) GTEST_SKIP() << "no USM";
  const size_t pitch = 96, width = 40, height = 25;
  void *d = nullptr;
  OCL_ASSERT_OK(t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, pitch * height, &d));
  uint8_t zero = 0;
  OCL_ASSERT_OK(t().Enqueue.pfnUSMFill(queue, d, 1, &zero, pitch * height, 0, nullptr, nullptr));
  // The zero fill runs on the other queue: done before the 2-D commands read around it.
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  uint16_t pattern = 0x1234;
  ur_event_handle_t filled = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnUSMFill2D(ooo_queue, d, pitch, 2, &pattern, width, height, 0, nullptr, &filled));
  std::vector<uint8_t> out(pitch * height);
  OCL_ASSERT_OK(
      t().Enqueue.pfnUSMMemcpy2D(ooo_queue, true, out.data(), pitch, d, pitch, pitch, height, 1, &filled, nullptr));
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < pitch; ++x)
      ASSERT_EQ(x < width ? (x % 2 ? 0x12 : 0x34) : 0, out[y * pitch + x]) << y << "," << x;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Enqueue.pfnUSMMemcpy2D(queue, true, out.data(), 10, d, pitch, width, height, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Event.pfnRelease(filled));
  OCL_ASSERT_OK(t().USM.pfnFree(context, d));
}

} // namespace
} // namespace ocltest
