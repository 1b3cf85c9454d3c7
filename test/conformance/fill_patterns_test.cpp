// SPDX-License-Identifier: Apache-2.0
// Fill patterns every backend must take, as UR's own suite asks them
// (urEnqueueMemBufferFillTest.Success, urEnqueueUSMFill2DTestWithParam.Success):
// urEnqueueMemBufferFill with patterns of 256 bytes and more (OpenCL's own fill takes at
// most 128), and urEnqueueUSMFill2D, whose pattern runs on across rows as over
// width * height contiguous bytes, also where a row does not hold whole patterns. Each
// case on an in-order and an out-of-order queue; with no event, with an event, and
// after a wait list; the caller's pattern changed as soon as the call returned; read
// back and checked byte by byte, the bytes around the range included.
#include <cstring>
#include <sstream>
#include <vector>

#include "conformance.hpp"

namespace {

// Bytes that differ from their neighbours, also 256 bytes apart (the 64 KiB pattern).
std::vector<uint8_t> make_pattern(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 7 + (i >> 8) + 1);
  return p;
}

constexpr uint8_t kBackground = 0xEE; // what the fill must leave alone

// How the fill is ordered after the background fill before it.
enum class Order { finish, event, wait_list };
const char *order_name(Order o) {
  return o == Order::finish ? "no event, queue finished" : o == Order::event ? "event waited for" : "wait list";
}
constexpr Order kOrders[] = {Order::finish, Order::event, Order::wait_list};

// A fixture whose queue is in order or not, as the parameter says; it releases the
// memory a test made, also after a failed assertion.
template <class Case> class FillFixture : public conf::QueueTestWith<Case> {
protected:
  ur_mem_handle_t buffer = nullptr;
  void *mem = nullptr;

  const Case &param() const { return std::get<1>(this->GetParam()); }
  ur_queue_flags_t queue_flags() const override {
    return param().out_of_order ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0;
  }
  void TearDown() override {
    if (this->queue) urQueueFinish(this->queue);
    if (buffer) {
      EXPECT_SUCCESS(urMemRelease(buffer));
    }
    if (mem) {
      EXPECT_SUCCESS(urUSMFree(this->context, mem));
    }
    conf::QueueTestWith<Case>::TearDown();
  }
};

// ---- urEnqueueMemBufferFill --------------------------------------------------------

struct BufferCase {
  size_t pattern, offset, size, total; // the fill's range [offset, offset + size) of `total` bytes
  bool out_of_order;
};
struct BufferCaseName {
  std::string operator()(const BufferCase &c) const {
    std::ostringstream s;
    s << "pattern" << c.pattern << "_offset" << c.offset << "_size" << c.size << "_of" << c.total
      << (c.out_of_order ? "_out_of_order" : "_in_order");
    return s.str();
  }
};

std::vector<BufferCase> buffer_cases() {
  std::vector<BufferCase> out;
  for (bool ooo : {false, true}) {
    out.push_back({256, 0, 256, 256, ooo});                            // pattern == size
    out.push_back({256, 0, 1024, 1024, ooo});                          // pattern < size
    out.push_back({256, 256, 1024, 1536, ooo});                        // inside a larger buffer
    out.push_back({512, 512, (1 << 20) + 512, (1 << 20) + 1536, ooo}); // over 1 MiB
  }
  return out;
}

using urFillPatternsBufferTest = FillFixture<BufferCase>;

TEST_P(urFillPatternsBufferTest, FillsEveryByte) {
  const BufferCase &c = param();
  const ur_result_t made = urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, c.total, nullptr, &buffer);
  if (made == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << "memory objects unsupported on " << found().label()
                 << ": urMemBufferCreate answers UR_RESULT_ERROR_UNSUPPORTED_FEATURE";
  ASSERT_SUCCESS(made);
  const std::vector<uint8_t> expected = make_pattern(c.pattern);
  for (Order o : kOrders) {
    SCOPED_TRACE(order_name(o));
    ur_event_handle_t cleared = nullptr, filled = nullptr;
    ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, buffer, &kBackground, 1, 0, c.total, 0, nullptr, &cleared));
    if (o != Order::wait_list) {
      ASSERT_SUCCESS(urEventWait(1, &cleared));
    }
    std::vector<uint8_t> pattern = expected;
    const bool waits = o == Order::wait_list;
    ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, buffer, pattern.data(), c.pattern, c.offset, c.size, waits ? 1 : 0,
                                          waits ? &cleared : nullptr, o == Order::finish ? nullptr : &filled));
    std::memset(pattern.data(), 0, pattern.size()); // the call kept its own copy
    if (o == Order::finish) {
      ASSERT_SUCCESS(urQueueFinish(queue));
    }
    std::vector<uint8_t> out(c.total, 0);
    ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, buffer, true, 0, c.total, out.data(), filled ? 1 : 0,
                                          filled ? &filled : nullptr, nullptr));
    for (size_t i = 0; i < c.total; ++i) {
      const bool inside = i >= c.offset && i - c.offset < c.size;
      ASSERT_EQ(inside ? expected[(i - c.offset) % c.pattern] : kBackground, out[i]) << "byte " << i;
    }
    EXPECT_SUCCESS(urEventRelease(cleared));
    if (filled) {
      EXPECT_SUCCESS(urEventRelease(filled));
    }
  }
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urFillPatternsBufferTest, BufferCase, ::testing::ValuesIn(buffer_cases()),
                                   BufferCaseName);

// ---- urEnqueueUSMFill2D --------------------------------------------------------------

struct Fill2DCase {
  size_t pitch, width, height, pattern;
  bool out_of_order;
};
struct Fill2DCaseName {
  std::string operator()(const Fill2DCase &c) const {
    std::ostringstream s;
    s << "pitch" << c.pitch << "_width" << c.width << "_height" << c.height << "_pattern" << c.pattern
      << (c.out_of_order ? "_out_of_order" : "_in_order");
    return s.str();
  }
};

std::vector<Fill2DCase> fill_2d_cases() {
  std::vector<Fill2DCase> out;
  for (bool ooo : {false, true}) {
    out.push_back({1024, 256, 256, 256 * 256, ooo}); // one pattern over the whole region
    out.push_back({234, 233, 35, 1, ooo});           // odd widths and pitches
    out.push_back({1024, 256, 35, 128, ooo});        // whole patterns a row
    out.push_back({128, 96, 4, 64, ooo});            // a pattern and a half a row
    out.push_back({100, 24, 16, 128, ooo});          // rows shorter than the pattern
    out.push_back({1024, 512, 5, 256, ooo});         // whole patterns of 256 bytes a row
  }
  return out;
}

using urFillPatterns2DTest = FillFixture<Fill2DCase>;

TEST_P(urFillPatterns2DTest, PatternRunsOnAcrossRows) {
  const Fill2DCase &c = param();
  ur_bool_t fill_2d = 0;
  ASSERT_SUCCESS(urContextGetInfo(context, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, sizeof fill_2d, &fill_2d, nullptr));
  if (!fill_2d) GTEST_SKIP() << "UR_CONTEXT_INFO_USM_FILL2D_SUPPORT is false on " << found().label();
  if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE)) GTEST_SKIP() << "no device USM on " << found().label();
  const size_t total = c.pitch * c.height;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, total, &mem));
  const std::vector<uint8_t> expected = make_pattern(c.pattern);
  for (Order o : kOrders) {
    SCOPED_TRACE(order_name(o));
    ur_event_handle_t cleared = nullptr, filled = nullptr;
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, 1, &kBackground, total, 0, nullptr, &cleared));
    if (o != Order::wait_list) {
      ASSERT_SUCCESS(urEventWait(1, &cleared));
    }
    std::vector<uint8_t> pattern = expected;
    const bool waits = o == Order::wait_list;
    ASSERT_SUCCESS(urEnqueueUSMFill2D(queue, mem, c.pitch, c.pattern, pattern.data(), c.width, c.height, waits ? 1 : 0,
                                      waits ? &cleared : nullptr, o == Order::finish ? nullptr : &filled));
    std::memset(pattern.data(), 0, pattern.size()); // the call kept its own copy
    if (o == Order::finish) {
      ASSERT_SUCCESS(urQueueFinish(queue));
    }
    std::vector<uint8_t> out(total, 0);
    ASSERT_SUCCESS(
        urEnqueueUSMMemcpy(queue, true, out.data(), mem, total, filled ? 1 : 0, filled ? &filled : nullptr, nullptr));
    for (size_t y = 0; y < c.height; ++y)
      for (size_t x = 0; x < c.pitch; ++x)
        ASSERT_EQ(x < c.width ? expected[(y * c.width + x) % c.pattern] : kBackground, out[y * c.pitch + x])
            << "row " << y << " byte " << x;
    EXPECT_SUCCESS(urEventRelease(cleared));
    if (filled) {
      EXPECT_SUCCESS(urEventRelease(filled));
    }
  }
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urFillPatterns2DTest, Fill2DCase, ::testing::ValuesIn(fill_2d_cases()),
                                   Fill2DCaseName);

} // namespace
