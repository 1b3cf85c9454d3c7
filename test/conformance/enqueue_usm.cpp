// SPDX-License-Identifier: Apache-2.0
// USM commands: fill, memcpy, 2-D fill and copy, prefetch and advise, with wait lists,
// blocking and not, on in-order and out-of-order queues.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "conformance.hpp"

namespace {

using conf::OutOfOrderQueueTest;
using conf::QueueTest;
using conf::QueueTestWith;

class urEnqueueUSMTest : public QueueTest {
protected:
  static constexpr size_t kSize = 1 << 16;
  void *dev = nullptr; // device USM, kSize bytes

  void SetUp() override {
    CONF_BASE_SETUP(QueueTest);
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kSize, &dev));
  }
  void TearDown() override {
    if (queue) urQueueFinish(queue);
    if (dev) {
      EXPECT_SUCCESS(urUSMFree(context, dev));
    }
    QueueTest::TearDown();
  }
  std::vector<uint8_t> read_back(const void *src, size_t size) {
    std::vector<uint8_t> host(size, 0xEE);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(queue, true, host.data(), src, size, 0, nullptr, nullptr));
    return host;
  }
};

// ---- fill ----------------------------------------------------------------------------------

TEST_P(urEnqueueUSMTest, FillEveryPatternSize) {
  for (size_t pattern_size = 1; pattern_size <= 128; pattern_size *= 2) {
    std::vector<uint8_t> pattern(pattern_size);
    std::iota(pattern.begin(), pattern.end(), static_cast<uint8_t>(pattern_size));
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, pattern_size, pattern.data(), kSize, 0, nullptr, nullptr))
        << "pattern of " << pattern_size;
    std::vector<uint8_t> host = read_back(dev, kSize);
    for (size_t i = 0; i < kSize; ++i)
      if (host[i] != pattern[i % pattern_size]) {
        ADD_FAILURE() << "pattern of " << pattern_size << ": byte " << i;
        break;
      }
  }
}

TEST_P(urEnqueueUSMTest, FillPartOnly) {
  const uint8_t zero = 0, one = 1;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, 1, &zero, kSize, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, static_cast<char *>(dev) + 100, 1, &one, 50, 0, nullptr, nullptr));
  std::vector<uint8_t> host = read_back(dev, kSize);
  for (size_t i = 0; i < kSize; ++i) ASSERT_EQ((i >= 100 && i < 150) ? 1 : 0, host[i]) << i;
}

TEST_P(urEnqueueUSMTest, FillPatternCopiedAtEnqueue) {
  uint32_t pattern = 0x11223344;
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, sizeof pattern, &pattern, kSize, 0, nullptr, &e));
  pattern = 0; // the caller's buffer may change as soon as the call returns
  ASSERT_SUCCESS(urEventWait(1, &e));
  std::vector<uint8_t> host = read_back(dev, 8);
  uint32_t first = 0;
  std::memcpy(&first, host.data(), 4);
  EXPECT_EQ(0x11223344u, first);
  EXPECT_SUCCESS(urEventRelease(e));
}

// ---- memcpy --------------------------------------------------------------------------------

TEST_P(urEnqueueUSMTest, MemcpyHostDeviceHost) {
  std::vector<uint8_t> in(kSize), out(kSize, 0);
  std::iota(in.begin(), in.end(), 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, dev, in.data(), kSize, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), dev, kSize, 0, nullptr, nullptr));
  EXPECT_EQ(in, out);
}

TEST_P(urEnqueueUSMTest, MemcpyDeviceToDevice) {
  void *dev2 = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kSize, &dev2));
  const uint16_t pattern = 0xBEEF;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, sizeof pattern, &pattern, kSize, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, dev2, dev, kSize, 0, nullptr, nullptr));
  std::vector<uint8_t> host = read_back(dev2, kSize);
  for (size_t i = 0; i < kSize; i += 2) {
    uint16_t v;
    std::memcpy(&v, &host[i], 2);
    ASSERT_EQ(pattern, v) << i;
  }
  EXPECT_SUCCESS(urUSMFree(context, dev2));
}

TEST_P(urEnqueueUSMTest, MemcpyBetweenEveryKind) {
  const ur_usm_type_t kinds[] = {UR_USM_TYPE_HOST, UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED};
  std::vector<uint8_t> in(4096);
  std::iota(in.begin(), in.end(), 3);
  for (ur_usm_type_t from : kinds)
    for (ur_usm_type_t to : kinds) {
      if (!conf::usm_supported(device(), from) || !conf::usm_supported(device(), to)) continue;
      SCOPED_TRACE(std::string(conf::usm_kind_name(from)) + " -> " + conf::usm_kind_name(to));
      void *src = nullptr, *dst = nullptr;
      ASSERT_SUCCESS(conf::usm_alloc(context, device(), from, in.size(), &src));
      ASSERT_SUCCESS(conf::usm_alloc(context, device(), to, in.size(), &dst));
      ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, src, in.data(), in.size(), 0, nullptr, nullptr));
      ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, dst, src, in.size(), 0, nullptr, nullptr));
      EXPECT_EQ(in, read_back(dst, in.size()));
      EXPECT_SUCCESS(urUSMFree(context, src));
      EXPECT_SUCCESS(urUSMFree(context, dst));
    }
}

TEST_P(urEnqueueUSMTest, MemcpyNonBlockingWithEvent) {
  std::vector<uint8_t> in(kSize, 0x42), out(kSize, 0);
  ur_event_handle_t to_dev = nullptr, to_host = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, dev, in.data(), kSize, 0, nullptr, &to_dev));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, out.data(), dev, kSize, 1, &to_dev, &to_host));
  ASSERT_SUCCESS(urEventWait(1, &to_host));
  EXPECT_EQ(in, out);
  EXPECT_SUCCESS(urEventRelease(to_dev));
  EXPECT_SUCCESS(urEventRelease(to_host));
}

TEST_P(urEnqueueUSMTest, BlockingMemcpyCompletesItsEvent) {
  std::vector<uint8_t> out(64);
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), dev, out.size(), 0, nullptr, &e));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e)) << "a blocking copy has finished when it returns";
  EXPECT_SUCCESS(urEventRelease(e));
}

// ---- 2-D -------------------------------------------------------------------------------------

bool context_says(ur_context_handle_t c, ur_context_info_t q) {
  ur_bool_t b = 0;
  return urContextGetInfo(c, q, sizeof b, &b, nullptr) == UR_RESULT_SUCCESS && b;
}

TEST_P(urEnqueueUSMTest, Fill2D) {
  if (!context_says(context, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT))
    GTEST_SKIP() << "UR_CONTEXT_INFO_USM_FILL2D_SUPPORT is false";
  const size_t pitch = 256, width = 64, height = 32;
  const uint8_t zero = 0;
  ur_event_handle_t zeroed = nullptr, filled = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, 1, &zero, pitch * height, 0, nullptr, &zeroed));
  const uint32_t pattern = 0xA1B2C3D4;
  ASSERT_SUCCESS(urEnqueueUSMFill2D(queue, dev, pitch, sizeof pattern, &pattern, width, height, 1, &zeroed, &filled));
  ASSERT_SUCCESS(urEventWait(1, &filled));
  EXPECT_SUCCESS(urEventRelease(zeroed));
  EXPECT_SUCCESS(urEventRelease(filled));
  std::vector<uint8_t> host = read_back(dev, pitch * height);
  const uint8_t *pb = reinterpret_cast<const uint8_t *>(&pattern);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < pitch; ++x) {
      uint8_t expected = x < width ? pb[x % 4] : 0;
      ASSERT_EQ(expected, host[y * pitch + x]) << "row " << y << " byte " << x;
    }
}

TEST_P(urEnqueueUSMTest, Memcpy2D) {
  if (!context_says(context, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT))
    GTEST_SKIP() << "UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT is false";
  const size_t src_pitch = 100, dst_pitch = 160, width = 80, height = 40;
  std::vector<uint8_t> src(src_pitch * height);
  std::iota(src.begin(), src.end(), 0);
  const uint8_t fill = 0xFF;
  ur_event_handle_t filled = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, 1, &fill, dst_pitch * height, 0, nullptr, &filled));
  ASSERT_SUCCESS(
      urEnqueueUSMMemcpy2D(queue, true, dev, dst_pitch, src.data(), src_pitch, width, height, 1, &filled, nullptr));
  EXPECT_SUCCESS(urEventRelease(filled));
  std::vector<uint8_t> host = read_back(dev, dst_pitch * height);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < dst_pitch; ++x) {
      uint8_t expected = x < width ? src[y * src_pitch + x] : 0xFF;
      ASSERT_EQ(expected, host[y * dst_pitch + x]) << "row " << y << " byte " << x;
    }
}

// ---- prefetch and advise ----------------------------------------------------------------------

TEST_P(urEnqueueUSMTest, PrefetchShared) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_SHARED)) GTEST_SKIP() << "no shared USM";
  void *shared = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_SHARED, 4096, &shared));
  std::memset(shared, 1, 4096);
  ur_event_handle_t to_dev = nullptr, to_host = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMPrefetch(queue, shared, 4096, UR_USM_MIGRATION_FLAG_HOST_TO_DEVICE, 0, nullptr, &to_dev));
  ASSERT_SUCCESS(urEnqueueUSMPrefetch(queue, shared, 4096, UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST, 1, &to_dev, &to_host));
  ASSERT_SUCCESS(urEventWait(1, &to_host));
  EXPECT_EQ(1, static_cast<uint8_t *>(shared)[4095]) << "a prefetch must not change the data";
  EXPECT_SUCCESS(urEventRelease(to_dev));
  EXPECT_SUCCESS(urEventRelease(to_host));
  EXPECT_SUCCESS(urUSMFree(context, shared));
}

TEST_P(urEnqueueUSMTest, AdviseShared) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_SHARED)) GTEST_SKIP() << "no shared USM";
  void *shared = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_SHARED, 4096, &shared));
  for (ur_usm_advice_flags_t advice :
       {ur_usm_advice_flags_t(UR_USM_ADVICE_FLAG_DEFAULT), ur_usm_advice_flags_t(UR_USM_ADVICE_FLAG_SET_READ_MOSTLY),
        ur_usm_advice_flags_t(UR_USM_ADVICE_FLAG_CLEAR_READ_MOSTLY)}) {
    ur_event_handle_t e = nullptr;
    ASSERT_SUCCESS(urEnqueueUSMAdvise(queue, shared, 4096, advice, &e))
        << urinfo::flags_text("ur_usm_advice_flags_t", advice);
    ASSERT_SUCCESS(urEventWait(1, &e));
    EXPECT_SUCCESS(urEventRelease(e));
  }
  EXPECT_SUCCESS(urUSMFree(context, shared));
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urEnqueueUSMTest, FillRules) {
  CONF_REQUIRE_VALIDATION();
  const uint32_t p = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill(queue, dev, 4, &p, 0, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill(queue, dev, 0, &p, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill(queue, dev, 4, &p, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill(queue, dev, 4, &p, 10, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueUSMFill(queue, nullptr, 4, &p, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueUSMFill(queue, dev, 4, nullptr, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEnqueueUSMFill(nullptr, dev, 4, &p, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
                   urEnqueueUSMFill(queue, dev, 4, &p, 64, 1, nullptr, nullptr));
}

TEST_P(urEnqueueUSMTest, MemcpyRules) {
  CONF_REQUIRE_VALIDATION();
  char host[8];
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMMemcpy(queue, true, host, dev, 0, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueUSMMemcpy(queue, true, nullptr, dev, 8, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueUSMMemcpy(queue, true, host, nullptr, 8, 0, nullptr, nullptr));
  ur_event_handle_t list[1] = {nullptr};
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
                   urEnqueueUSMMemcpy(queue, true, host, dev, 8, 0, list, nullptr));
}

TEST_P(urEnqueueUSMTest, TwoDimensionalRules) {
  CONF_REQUIRE_VALIDATION();
  const uint32_t p = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill2D(queue, dev, 0, 4, &p, 16, 4, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill2D(queue, dev, 8, 4, &p, 16, 4, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill2D(queue, dev, 64, 3, &p, 16, 4, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMFill2D(queue, dev, 64, 4, &p, 16, 0, 0, nullptr, nullptr));
  char host[64];
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, dev, 8, host, 16, 16, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, dev, 16, host, 16, 16, 0, 0, nullptr, nullptr));
}

TEST_P(urEnqueueUSMTest, PrefetchAdviseRules) {
  CONF_REQUIRE_VALIDATION();
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMPrefetch(queue, dev, 0, UR_USM_MIGRATION_FLAG_HOST_TO_DEVICE, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urEnqueueUSMPrefetch(queue, dev, 64, UR_USM_MIGRATION_FLAGS_MASK, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMAdvise(queue, dev, 0, UR_USM_ADVICE_FLAG_DEFAULT, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urEnqueueUSMAdvise(queue, dev, 64, UR_USM_ADVICE_FLAGS_MASK, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueUSMAdvise(queue, nullptr, 64, UR_USM_ADVICE_FLAG_DEFAULT, nullptr));
}

// ---- freed memory (docs/async-alloc.md, "Freed memory") --------------------------------------

// Every USM command refuses memory the context freed and still holds, before anything is
// enqueued; `live` (device USM of the fixture) is untouched by the refusals.
void expect_commands_refuse(ur_queue_handle_t queue, void *freed, void *live, const char *how) {
  SCOPED_TRACE(how);
  const uint32_t pattern = 7;
  char host[64] = {};
  char *inside = static_cast<char *>(freed) + 128;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMFill(queue, freed, 4, &pattern, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMFill(queue, inside, 4, &pattern, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMMemcpy(queue, true, freed, host, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMMemcpy(queue, true, host, inside, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMMemcpy(queue, false, live, freed, 64, 0, nullptr, nullptr));
  const ur_result_t fill_2d = urEnqueueUSMFill2D(queue, freed, 64, 4, &pattern, 64, 2, 0, nullptr, nullptr);
  if (fill_2d != UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, fill_2d);
  }
  const ur_result_t copy_2d = urEnqueueUSMMemcpy2D(queue, true, host, 32, inside, 64, 32, 2, 0, nullptr, nullptr);
  if (copy_2d != UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, copy_2d);
  }
}

TEST_P(urEnqueueUSMTest, CommandsRefuseFreedMemory) {
  const uint8_t mark = 0x5A;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, dev, 1, &mark, kSize, 0, nullptr, nullptr));
  // A plain allocation, in the context's quarantine after urUSMFree.
  void *plain = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &plain));
  ASSERT_SUCCESS(urUSMFree(context, plain));
  expect_commands_refuse(queue, plain, dev, "plain allocation, urUSMFree");
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, plain));
  ur_usm_type_t type = UR_USM_TYPE_DEVICE;
  EXPECT_SUCCESS(urUSMGetMemAllocInfo(context, plain, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(type, UR_USM_TYPE_UNKNOWN);
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urUSMGetMemAllocInfo(context, plain, UR_USM_ALLOC_INFO_SIZE, sizeof size, &size, nullptr));

  // A block of a pool, freed to it synchronously: the pool keeps its chunk.
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(context, &desc, &pool));
  void *pooled = nullptr;
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, pool, 4096, &pooled));
  ASSERT_SUCCESS(urUSMFree(context, pooled));
  expect_commands_refuse(queue, pooled, dev, "pool block, urUSMFree");

  // A block freed by a free command: refused from the moment the free is enqueued.
  void *ordered = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue, nullptr, 4096, nullptr, 0, nullptr, &ordered, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue, nullptr, ordered, 0, nullptr, nullptr));
  expect_commands_refuse(queue, ordered, dev, "stream-ordered block, urEnqueueUSMFreeExp");

  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
  std::vector<uint8_t> back = read_back(dev, kSize);
  EXPECT_EQ(std::count(back.begin(), back.end(), mark), static_cast<long>(kSize)) << "a refused command wrote";
}

CONF_INSTANTIATE_DEVICE_SUITE(urEnqueueUSMTest);

// ---- chains of dependent commands on an out-of-order queue ---------------------------------------

class urEnqueueUSMChainTest : public OutOfOrderQueueTest {};

TEST_P(urEnqueueUSMChainTest, CopyChainFollowsWaitLists) {
  // fill buffer 0, then copy 0 -> 1 -> 2 -> ... each waiting only on the previous copy.
  const size_t n = 12, size = 1 << 18;
  std::vector<void *> bufs(n, nullptr);
  for (auto &b : bufs) ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, size, &b));
  const uint32_t zero = 0, value = 0x5EED;
  for (size_t i = 1; i < n; ++i) ASSERT_SUCCESS(urEnqueueUSMFill(queue, bufs[i], 4, &zero, size, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  std::vector<ur_event_handle_t> events(n, nullptr);
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, bufs[0], 4, &value, size, 0, nullptr, &events[0]));
  for (size_t i = 1; i < n; ++i)
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, bufs[i], bufs[i - 1], size, 1, &events[i - 1], &events[i]));
  std::vector<uint32_t> host(size / 4, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, host.data(), bufs[n - 1], size, 1, &events[n - 1], nullptr));
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(value, host[i]) << "element " << i;
  for (ur_event_handle_t e : events) EXPECT_SUCCESS(urEventRelease(e));
  for (void *b : bufs) EXPECT_SUCCESS(urUSMFree(context, b));
}

TEST_P(urEnqueueUSMChainTest, FanInFanOut) {
  // Four fills into quarters, one copy that waits on all four, then four reads of it.
  const size_t size = 1 << 20, quarter = size / 4;
  void *src = nullptr, *dst = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, size, &src));
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, size, &dst));
  ur_event_handle_t fills[4] = {}, copy = nullptr, reads[4] = {};
  for (uint32_t i = 0; i < 4; ++i)
    ASSERT_SUCCESS(
        urEnqueueUSMFill(queue, static_cast<char *>(src) + i * quarter, 4, &i, quarter, 0, nullptr, &fills[i]));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, dst, src, size, 4, fills, &copy));
  std::vector<std::vector<uint32_t>> host(4, std::vector<uint32_t>(quarter / 4, 99));
  for (uint32_t i = 0; i < 4; ++i)
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, host[i].data(), static_cast<char *>(dst) + i * quarter, quarter, 1,
                                      &copy, &reads[i]));
  ASSERT_SUCCESS(urEventWait(4, reads));
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_TRUE(std::all_of(host[i].begin(), host[i].end(), [i](uint32_t v) { return v == i; })) << "quarter " << i;
  for (ur_event_handle_t e : fills) EXPECT_SUCCESS(urEventRelease(e));
  for (ur_event_handle_t e : reads) EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urEventRelease(copy));
  EXPECT_SUCCESS(urUSMFree(context, src));
  EXPECT_SUCCESS(urUSMFree(context, dst));
}

TEST_P(urEnqueueUSMChainTest, BlockingCopyWithWaitList) {
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &mem));
  const uint32_t v = 31337;
  ur_event_handle_t filled = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, 4, &v, 4096, 0, nullptr, &filled));
  std::vector<uint32_t> host(1024, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, host.data(), mem, 4096, 1, &filled, nullptr));
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [v](uint32_t x) { return x == v; }));
  EXPECT_SUCCESS(urEventRelease(filled));
  EXPECT_SUCCESS(urUSMFree(context, mem));
}

CONF_INSTANTIATE_DEVICE_SUITE(urEnqueueUSMChainTest);

} // namespace
