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

// Patterns clEnqueueFillBuffer cannot take (over 128 bytes): spelled out on the host,
// written, and copied on in doubling steps past 64 KiB; the caller's pattern may change
// as soon as the call returns. Bytes around the range keep their value.
TEST_F(Buffers, FillWithPatternsOverOpenCLsLimit) {
  struct Case {
    size_t pattern, offset, size, total;
  };
  const Case cases[] = {{256, 0, 256, 256},
                        {256, 0, 1024, 1024},
                        {256, 512, 1024, 2048},
                        {512, 1024, (1 << 20) + 512, (1 << 20) + 4096}, // write, then copies
                        {128 << 10, 128 << 10, 512 << 10, 1 << 20}};    // a pattern over 64 KiB
  for (const Case &c : cases)
    for (ur_queue_handle_t q : {queue, ooo_queue}) {
      SCOPED_TRACE(::testing::Message() << "pattern " << c.pattern << " offset " << c.offset << " size " << c.size
                                        << (q == queue ? " in order" : " out of order"));
      ur_mem_handle_t m = nullptr;
      OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, c.total, nullptr, &m));
      const uint8_t background = 0xEE;
      ur_event_handle_t cleared = nullptr, filled = nullptr;
      OCL_ASSERT_OK(t().Enqueue.pfnMemBufferFill(q, m, &background, 1, 0, c.total, 0, nullptr, &cleared));
      std::vector<uint8_t> pattern(c.pattern);
      for (size_t i = 0; i < c.pattern; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + (i >> 8) + 1);
      const std::vector<uint8_t> expected = pattern;
      OCL_ASSERT_OK(
          t().Enqueue.pfnMemBufferFill(q, m, pattern.data(), c.pattern, c.offset, c.size, 1, &cleared, &filled));
      pattern.assign(c.pattern, 0);
      std::vector<uint8_t> out(c.total);
      OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(q, m, true, 0, c.total, out.data(), 1, &filled, nullptr));
      for (size_t i = 0; i < c.total; ++i) {
        const bool inside = i >= c.offset && i < c.offset + c.size;
        ASSERT_EQ(inside ? expected[(i - c.offset) % c.pattern] : background, out[i]) << "byte " << i;
      }
      OCL_ASSERT_OK(t().Event.pfnRelease(cleared));
      OCL_ASSERT_OK(t().Event.pfnRelease(filled));
      OCL_ASSERT_OK(t().Mem.pfnRelease(m));
    }
}

// The same through a sub-buffer (its copies stay inside it), with no event asked for,
// and a 256-byte pattern made of one 4-byte period, which OpenCL fills directly.
TEST_F(Buffers, FillWithLargePatternsThroughSubBuffers) {
  ur_mem_handle_t parent = nullptr, sub = nullptr;
  const size_t total = 256 << 10;
  OCL_ASSERT_OK(t().Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_WRITE, total, nullptr, &parent));
  const uint8_t zero = 0;
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferFill(queue, parent, &zero, 1, 0, total, 0, nullptr, nullptr));
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 64 << 10, 128 << 10};
  OCL_ASSERT_OK(
      t().Mem.pfnBufferPartition(parent, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  std::vector<uint8_t> pattern(1024);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 13 + (i >> 8));
  // 1 KiB patterns over 96 KiB of the sub-buffer's 128, from its 1 KiB on.
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferFill(queue, sub, pattern.data(), 1024, 1024, 96 << 10, 0, nullptr, nullptr));
  std::vector<uint8_t> periodic(256);
  for (size_t i = 0; i < periodic.size(); ++i) periodic[i] = static_cast<uint8_t>(0xA0 + i % 4);
  OCL_ASSERT_OK(
      t().Enqueue.pfnMemBufferFill(queue, sub, periodic.data(), 256, 112 << 10, 16 << 10, 0, nullptr, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  std::vector<uint8_t> out(total);
  OCL_ASSERT_OK(t().Enqueue.pfnMemBufferRead(queue, parent, true, 0, total, out.data(), 0, nullptr, nullptr));
  for (size_t i = 0; i < total; ++i) {
    uint8_t want = 0;
    const size_t at = i - (64 << 10); // in the sub-buffer
    if (i >= (64 << 10) + 1024 && i < (64 << 10) + 1024 + (96 << 10))
      want = pattern[(at - 1024) % 1024];
    else if (i >= (64 << 10) + (112 << 10) && i < (64 << 10) + (128 << 10))
      want = periodic[at % 256];
    ASSERT_EQ(want, out[i]) << "byte " << i;
  }
  OCL_ASSERT_OK(t().Mem.pfnRelease(sub));
  OCL_ASSERT_OK(t().Mem.pfnRelease(parent));
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

// The pattern runs on across rows, as over width * height contiguous bytes: where rows
// do not hold whole patterns (or OpenCL cannot fill them), the rows are copied from
// the pattern spelled out on the host. Padding between rows keeps its value.
TEST_F(Usm2D, FillRunsThePatternOnAcrossRows) {
  if (!device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT)) GTEST_SKIP() << "no USM";
  struct Case {
    size_t pitch, width, height, pattern, skew; // skew: bytes past an aligned start
  };
  const Case cases[] = {
      {1024, 256, 256, 256 * 256, 0}, // one pattern over the whole region
      {234, 233, 35, 1, 0},           // rows of odd widths and pitches
      {1024, 256, 35, 128, 0},        // whole patterns: one OpenCL fill a row
      {128, 96, 4, 64, 0},            // a pattern and a half a row
      {100, 24, 16, 128, 0},          // rows shorter than the pattern, pitch no multiple of it
      {1024, 512, 5, 256, 0},         // whole patterns OpenCL cannot fill
      {64, 32, 8, 4, 1},              // whole patterns at addresses OpenCL cannot fill at
      {96, 96, 4, 128, 0},            // contiguous rows: one fill
  };
  for (const Case &c : cases)
    for (ur_queue_handle_t q : {queue, ooo_queue})
      for (bool wait_list : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "pitch " << c.pitch << " width " << c.width << " height " << c.height << " pattern "
                     << c.pattern << " skew " << c.skew << (q == queue ? " in order" : " out of order")
                     << (wait_list ? " with a wait list" : ""));
        const size_t total = c.pitch * c.height + c.skew;
        void *d = nullptr;
        OCL_ASSERT_OK(t().USM.pfnDeviceAlloc(context, device, nullptr, nullptr, total, &d));
        uint8_t *dst = static_cast<uint8_t *>(d) + c.skew;
        const uint8_t background = 0xEE;
        ur_event_handle_t cleared = nullptr, filled = nullptr;
        OCL_ASSERT_OK(t().Enqueue.pfnUSMFill(q, d, 1, &background, total, 0, nullptr, &cleared));
        if (!wait_list) {
          OCL_ASSERT_OK(t().Event.pfnWait(1, &cleared));
        }
        std::vector<uint8_t> pattern(c.pattern);
        for (size_t i = 0; i < c.pattern; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + (i >> 8) + 1);
        const std::vector<uint8_t> expected = pattern;
        OCL_ASSERT_OK(t().Enqueue.pfnUSMFill2D(q, dst, c.pitch, c.pattern, pattern.data(), c.width, c.height,
                                               wait_list ? 1 : 0, wait_list ? &cleared : nullptr, &filled));
        pattern.assign(c.pattern, 0);
        std::vector<uint8_t> out(total);
        OCL_ASSERT_OK(t().Enqueue.pfnUSMMemcpy(q, true, out.data(), d, total, 1, &filled, nullptr));
        for (size_t i = 0; i < total; ++i) {
          const size_t y = (i - c.skew) / c.pitch, x = (i - c.skew) % c.pitch;
          const bool inside = i >= c.skew && x < c.width;
          ASSERT_EQ(inside ? expected[(y * c.width + x) % c.pattern] : background, out[i])
              << "row " << y << " byte " << x;
        }
        OCL_ASSERT_OK(t().Event.pfnRelease(cleared));
        OCL_ASSERT_OK(t().Event.pfnRelease(filled));
        OCL_ASSERT_OK(t().USM.pfnFree(context, d));
      }
}

} // namespace
} // namespace ocltest
