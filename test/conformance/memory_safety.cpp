// SPDX-License-Identifier: Apache-2.0
// Memory safety at the C boundary (issues 22 and 23): sizes that overflow are refused
// before any byte is written, urUSMFree waits for the commands that may still use the
// memory, a callback may query its event after the program released it, a USM pointer
// of another context is refused, and the sequences of UR's own conformance suite that
// crashed the native CPU adapter run to the end. A backend whose fix lies outside the
// CPU adapters skips the overflow tests, saying so.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace {

bool host_tasks(ur_device_handle_t d) {
  ur_bool_t yes = false;
  return conf::info(d, UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP, yes) == UR_RESULT_SUCCESS && yes;
}

// A host task that holds its in-order queue for a while, then says it ran.
struct SlowTask {
  std::atomic<bool> done{false};
  static void run(void *p) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    static_cast<SlowTask *>(p)->done.store(true);
  }
};

#define SKIP_UNLESS_HOST_TASKS()                                                                                       \
  do {                                                                                                                 \
    if (!host_tasks(device()))                                                                                         \
      GTEST_SKIP() << found().label()                                                                                  \
                   << " has no host tasks (UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP) to hold the queue with";      \
  } while (0)

// urUSMFree waits for pending commands on the CPU adapters and Level Zero (issue 22,
// item 2). The GPU adapters are not checked here: their tests skip, saying so.
#define SKIP_UNLESS_FREE_WAITS()                                                                                       \
  do {                                                                                                                 \
    const std::string &b_ = found().backend_name;                                                                      \
    if (b_ != "native_cpu" && b_ != "opencl" && b_ != "level_zero")                                                    \
      GTEST_SKIP() << "urUSMFree waiting for pending commands is checked on the CPU adapters and Level "               \
                   << "Zero only; the " << b_ << " adapter's is not (issue 22, item 2)";                               \
  } while (0)

// ---- 2-D USM regions whose span overflows size_t (issue 22, item 1) -------------------

class urMemorySafety2DTest : public conf::QueueTest {
protected:
  static constexpr size_t kBlock = 8192;
  static constexpr uint8_t kOld = 0x5A;
  void *block = nullptr;
  void *other = nullptr;

  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kBlock, &block));
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kBlock, &other));
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, block, 1, &kOld, kBlock, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, other, 1, &kOld, kBlock, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(queue));
  }
  void TearDown() override {
    if (queue) urQueueFinish(queue);
    if (block) {
      EXPECT_SUCCESS(urUSMFree(context, block));
    }
    if (other) {
      EXPECT_SUCCESS(urUSMFree(context, other));
    }
    conf::QueueTest::TearDown();
  }
  // Every byte of both blocks still holds kOld.
  void expect_untouched() {
    ASSERT_SUCCESS(urQueueFinish(queue));
    for (void *p : {block, other}) {
      std::vector<uint8_t> host(kBlock, 0);
      ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, host.data(), p, kBlock, 0, nullptr, nullptr));
      for (size_t i = 0; i < kBlock; ++i)
        if (host[i] != kOld) {
          ADD_FAILURE() << "byte " << i << " of a block was written by a refused call";
          return;
        }
    }
  }
  // The middle of `block`: a row that wrapped 16 bytes back would land inside it.
  char *middle() { return static_cast<char *>(block) + kBlock / 2; }
};

// pitch = SIZE_MAX - 15, width = 16, height = 2: (height - 1) * pitch + width wraps to 0,
// and row 1 starts 16 bytes before row 0.
constexpr size_t kWrapPitch = SIZE_MAX - 15;
// pitch = width = 2^63 + 8, height = 2: the span wraps to 16, width * height to 16.
constexpr size_t kHuge = (size_t{1} << 63) + 8;

TEST_P(urMemorySafety2DTest, Fill2DWithWrappingPitchIsRefused) {
  const uint8_t v = 0xFF;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMFill2D(queue, middle(), kWrapPitch, 1, &v, 16, 2, 0, nullptr, nullptr));
  const uint32_t v4 = 0xFFFFFFFF;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMFill2D(queue, middle(), kWrapPitch, 4, &v4, 16, 2, 0, nullptr, nullptr));
  expect_untouched();
}

TEST_P(urMemorySafety2DTest, Fill2DWithHugePitchAndWidthIsRefused) {
  const uint8_t v = 0xFF;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMFill2D(queue, block, kHuge, 1, &v, kHuge, 2, 0, nullptr, nullptr));
  expect_untouched();
}

TEST_P(urMemorySafety2DTest, Memcpy2DWithWrappingPitchIsRefused) {
  // The destination's span wraps, then the source's.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, middle(), kWrapPitch, other, 16, 16, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, other, 16, middle(), kWrapPitch, 16, 2, 0, nullptr, nullptr));
  expect_untouched();
}

TEST_P(urMemorySafety2DTest, Memcpy2DWithHugePitchAndWidthIsRefused) {
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, block, kHuge, other, kHuge, kHuge, 2, 0, nullptr, nullptr));
  expect_untouched();
}

// A region that fits still works after the refusals (the checks are not too strict).
TEST_P(urMemorySafety2DTest, RegionsThatFitStillRun) {
  const uint8_t v = 0x11;
  ASSERT_SUCCESS(urEnqueueUSMFill2D(queue, block, kBlock / 2, 1, &v, 16, 2, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy2D(queue, true, other, kBlock / 2, block, kBlock / 2, 16, 2, 0, nullptr, nullptr));
  std::vector<uint8_t> host(kBlock, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, host.data(), other, kBlock, 0, nullptr, nullptr));
  for (size_t i = 0; i < kBlock; ++i) {
    const bool in_row = i < 16 || (i >= kBlock / 2 && i < kBlock / 2 + 16);
    ASSERT_EQ(in_row ? 0x11 : kOld, host[i]) << "byte " << i;
  }
  // The spec bounds a region by pitch * height bytes from its start: exactly the block
  // (above) is allowed; past it, the region is refused on every adapter even where its
  // last row would end inside the block (UR's urEnqueueUSMFill2DNegativeTest.OutOfBounds
  // and urEnqueueUSMMemcpy2DNegativeTest.InvalidSize), for a fill, a copy's destination
  // and a copy's source.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMFill2D(queue, block, kBlock / 2 + 1, 1, &v, 16, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMFill2D(queue, block, kBlock - 16, 1, &v, 16, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, other, kBlock / 2 + 1, block, 16, 16, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMMemcpy2D(queue, true, other, 16, block, kBlock / 2 + 1, 16, 2, 0, nullptr, nullptr));
  // Prefetch and advice: a range past the allocation is the spec's INVALID_SIZE too.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueUSMPrefetch(queue, block, kBlock + 1, 0, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMAdvise(queue, block, kBlock + 1, 0, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

CONF_INSTANTIATE_DEVICE_SUITE(urMemorySafety2DTest);

// ---- urUSMFree waits for the commands that may use the memory (item 2) -----------------

class urUSMFreeWaitsTest : public conf::QueueTest {};

// A fill held behind a slow host task, then urUSMFree: the fill has finished when it
// returns, and memory malloc hands out next is not written.
TEST_P(urUSMFreeWaitsTest, FreeWaitsForAPendingFill) {
  SKIP_UNLESS_FREE_WAITS();
  SKIP_UNLESS_HOST_TASKS();
  constexpr size_t kSize = 4096;
  void *p = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kSize, &p));
  SlowTask task;
  ASSERT_SUCCESS(urEnqueueHostTaskExp(queue, SlowTask::run, &task, nullptr, 0, nullptr, nullptr));
  const uint8_t v = 0xAB;
  ur_event_handle_t fill = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, p, 1, &v, kSize, 0, nullptr, &fill));
  ASSERT_SUCCESS(urUSMFree(context, p));
  EXPECT_TRUE(task.done.load()) << "urUSMFree returned before the host task the fill waits for had run";
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(fill)) << "urUSMFree returned before the fill finished";
  std::vector<uint8_t *> blocks;
  for (int i = 0; i < 4; ++i) {
    auto *m = static_cast<uint8_t *>(std::malloc(kSize));
    ASSERT_NE(nullptr, m);
    std::memset(m, 0, kSize);
    blocks.push_back(m);
  }
  ASSERT_SUCCESS(urEventWait(1, &fill));
  for (uint8_t *m : blocks) {
    for (size_t i = 0; i < kSize; ++i)
      if (m[i] != 0) {
        ADD_FAILURE() << "memory malloc gave out after urUSMFree was written at byte " << i;
        break;
      }
    std::free(m);
  }
  EXPECT_SUCCESS(urEventRelease(fill));
}

// UR's urEventGetProfilingInfoTest.ReleaseEventAfterQueueRelease: the queue and the
// fill's event are released while the fill waits, then the memory is freed.
TEST_P(urUSMFreeWaitsTest, FreeWaitsForAFillOfAReleasedQueue) {
  SKIP_UNLESS_FREE_WAITS();
  SKIP_UNLESS_HOST_TASKS();
  constexpr size_t kSize = 1 << 20;
  void *p = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kSize, &p));
  SlowTask task;
  ASSERT_SUCCESS(urEnqueueHostTaskExp(queue, SlowTask::run, &task, nullptr, 0, nullptr, nullptr));
  const uint8_t v = 0xFF;
  ur_event_handle_t fill = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, p, 1, &v, kSize, 0, nullptr, &fill));
  ASSERT_SUCCESS(urQueueRelease(queue));
  queue = nullptr;
  ASSERT_SUCCESS(urEventRelease(fill));
  ASSERT_SUCCESS(urUSMFree(context, p));
  EXPECT_TRUE(task.done.load()) << "urUSMFree returned before the commands of the released queue had run";
}

CONF_INSTANTIATE_DEVICE_SUITE(urUSMFreeWaitsTest);

// ---- a callback queries its event after the program released it (item 11) ---------------

class urCallbackOnReleasedEventTest : public conf::QueueTest {};

struct CallbackSeen {
  std::atomic<int> calls{0};
  std::atomic<int> info_result{-1};
  std::atomic<int> status{-1};
};

void query_in_callback(ur_event_handle_t e, ur_execution_info_t, void *p) {
  auto *seen = static_cast<CallbackSeen *>(p);
  ur_event_status_t s = UR_EVENT_STATUS_FORCE_UINT32;
  seen->info_result.store(urEventGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr));
  seen->status.store(s);
  seen->calls.fetch_add(1);
}

TEST_P(urCallbackOnReleasedEventTest, CallbackMayQueryItsReleasedEvent) {
  SKIP_UNLESS_HOST_TASKS();
  SlowTask task;
  ASSERT_SUCCESS(urEnqueueHostTaskExp(queue, SlowTask::run, &task, nullptr, 0, nullptr, nullptr));
  ur_event_handle_t marker = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 0, nullptr, &marker));
  CallbackSeen seen;
  ur_result_t r = urEventSetCallback(marker, UR_EXECUTION_INFO_COMPLETE, query_in_callback, &seen);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urEventRelease(marker));
    GTEST_SKIP() << found().label() << " has no event callbacks";
  }
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urEventRelease(marker)); // the common pattern: the callback outlives the handle
  ASSERT_SUCCESS(urQueueFinish(queue));
  for (int i = 0; i < 2000 && seen.calls.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(1, seen.calls.load()) << "the COMPLETE callback did not run within 2 s";
  EXPECT_EQ(UR_RESULT_SUCCESS, static_cast<ur_result_t>(seen.info_result.load()))
      << "urEventGetInfo on the callback's own event, released by the program";
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, seen.status.load());
}

CONF_INSTANTIATE_DEVICE_SUITE(urCallbackOnReleasedEventTest);

// ---- a USM pointer of another context (issue 22, "also seen") --------------------------

class urForeignUSMTest : public conf::QueueTest {};

// Another context's allocation is not memory of this queue's context: refused with
// INVALID_MEM_OBJECT (docs/native-cpu.md, docs/opencl.md), nothing written.
TEST_P(urForeignUSMTest, AnotherContextsAllocationIsRefused) {
  const std::string &b = found().backend_name;
  if (b != "native_cpu" && b != "opencl")
    GTEST_SKIP() << "the rule for another context's USM is checked on the CPU adapters only (issue 22)";
  ur_context_handle_t other_ctx = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other_ctx));
  constexpr size_t kSize = 4096;
  void *foreign = nullptr, *mine = nullptr;
  if (!conf::usm_supported(device(), UR_USM_TYPE_HOST)) {
    EXPECT_SUCCESS(urContextRelease(other_ctx));
    GTEST_SKIP() << found().label() << " has no host USM to look at from the host";
  }
  ASSERT_SUCCESS(conf::usm_alloc(other_ctx, device(), UR_USM_TYPE_HOST, kSize, &foreign));
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_HOST, kSize, &mine));
  std::memset(foreign, 0x33, kSize);
  const uint8_t v = 0xEE;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMFill(queue, foreign, 1, &v, kSize, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMFill(queue, static_cast<char *>(foreign) + 64, 1, &v, 64, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMMemcpy(queue, true, foreign, mine, kSize, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMMemcpy(queue, true, mine, foreign, kSize, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMFill2D(queue, foreign, 64, 1, &v, 16, 2, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueUSMMemcpy2D(queue, true, foreign, 64, mine, 64, 16, 2, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const auto *bytes = static_cast<const uint8_t *>(foreign);
  for (size_t i = 0; i < kSize; ++i) ASSERT_EQ(0x33, bytes[i]) << "byte " << i << " of the other context's block";
  // Its own context still uses it.
  ur_queue_handle_t other_queue = nullptr;
  ASSERT_SUCCESS(urQueueCreate(other_ctx, dev, nullptr, &other_queue));
  EXPECT_SUCCESS(urEnqueueUSMFill(other_queue, foreign, 1, &v, kSize, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urQueueFinish(other_queue));
  EXPECT_EQ(0xEE, bytes[kSize - 1]);
  EXPECT_SUCCESS(urQueueRelease(other_queue));
  EXPECT_SUCCESS(urUSMFree(context, mine));
  EXPECT_SUCCESS(urUSMFree(other_ctx, foreign));
  EXPECT_SUCCESS(urContextRelease(other_ctx));
}

CONF_INSTANTIATE_DEVICE_SUITE(urForeignUSMTest);

// ---- UR's event-group sequences that crashed native CPU (issue 23) ----------------------

// urEventGetProfilingInfoTest's fixture and tests, in UR's order, on a profiling queue:
// a non-blocking buffer write waited for, the queue released under a pending 1 MiB fill
// whose memory is then freed, then the refusals. UR's binary died after
// ReleaseEventAfterQueueRelease (the fill wrote freed memory).
class urURProfilingSequenceTest : public conf::QueueTest {
protected:
  ur_queue_flags_t queue_flags() const override { return UR_QUEUE_FLAG_PROFILING_ENABLE; }
};

TEST_P(urURProfilingSequenceTest, ReleaseEventAfterQueueReleaseThenRefusals) {
  SKIP_UNLESS_FREE_WAITS(); // it frees memory a pending fill writes
  for (int round = 0; round < 3; ++round) {
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_PROFILING_ENABLE, &q));
    constexpr size_t kCount = 1024, kBytes = kCount * sizeof(uint32_t);
    std::vector<uint32_t> input(kCount, 42);
    ur_mem_handle_t buffer = nullptr;
    ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_WRITE_ONLY, kBytes, nullptr, &buffer));
    ur_event_handle_t event = nullptr;
    ASSERT_SUCCESS(urEnqueueMemBufferWrite(q, buffer, false, 0, kBytes, input.data(), 0, nullptr, &event));
    ASSERT_SUCCESS(urEventWait(1, &event));

    void *ptr = nullptr;
    ASSERT_SUCCESS(urUSMSharedAlloc(context, device(), nullptr, nullptr, 1 << 20, &ptr));
    const uint8_t pattern = 0xFF;
    ur_event_handle_t fill = nullptr;
    ASSERT_SUCCESS(urEnqueueUSMFill(q, ptr, 1, &pattern, 1 << 20, 0, nullptr, &fill));
    ASSERT_SUCCESS(urQueueRelease(q));
    uint64_t queued = 0;
    ASSERT_RESULT_IN(urEventGetProfilingInfo(fill, UR_PROFILING_INFO_COMMAND_QUEUED, sizeof queued, &queued, nullptr),
                     UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
    ASSERT_SUCCESS(urEventRelease(fill));
    ASSERT_SUCCESS(urUSMFree(context, ptr));

    size_t size = 0;
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                     urEventGetProfilingInfo(nullptr, UR_PROFILING_INFO_COMMAND_QUEUED, 0, nullptr, &size));
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                     urEventGetProfilingInfo(event, UR_PROFILING_INFO_FORCE_UINT32, 0, nullptr, &size));
    uint64_t value = 0;
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                     urEventGetProfilingInfo(event, UR_PROFILING_INFO_COMMAND_QUEUED, 0, &value, nullptr));
    EXPECT_SUCCESS(urMemRelease(buffer));
    EXPECT_SUCCESS(urEventRelease(event));
  }
}

CONF_INSTANTIATE_DEVICE_SUITE(urURProfilingSequenceTest);

// urEventWaitTest: five contexts of one device, a queue and two buffers in each; copies
// and non-blocking reads waited for together, and a chain of copies across contexts.
class urURWaitSequenceTest : public conf::DeviceTest {
protected:
  static constexpr size_t kContexts = 5, kCount = 1024, kBytes = kCount * sizeof(uint32_t);
  std::vector<ur_context_handle_t> contexts;
  std::vector<ur_queue_handle_t> queues;
  std::vector<ur_mem_handle_t> src, dst;
  std::vector<std::vector<uint32_t>> input;

  void SetUp() override {
    CONF_BASE_SETUP(conf::DeviceTest);
    ur_device_handle_t dev = device();
    for (size_t i = 0; i < kContexts; ++i) {
      contexts.emplace_back();
      ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &contexts.back()));
      queues.emplace_back();
      ASSERT_SUCCESS(urQueueCreate(contexts[i], dev, nullptr, &queues.back()));
      src.emplace_back();
      const ur_result_t made = urMemBufferCreate(contexts[i], UR_MEM_FLAG_READ_WRITE, kBytes, nullptr, &src.back());
      if (made == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << found().label() << " has no buffers";
      ASSERT_SUCCESS(made);
      dst.emplace_back();
      ASSERT_SUCCESS(urMemBufferCreate(contexts[i], UR_MEM_FLAG_READ_WRITE, kBytes, nullptr, &dst.back()));
      input.emplace_back(kCount, uint32_t(99 + i));
      ASSERT_SUCCESS(urEnqueueMemBufferWrite(queues[i], src[i], true, 0, kBytes, input[i].data(), 0, nullptr, nullptr));
    }
  }
  void TearDown() override {
    for (auto q : queues)
      if (q) urQueueFinish(q);
    for (auto m : src)
      if (m) {
        EXPECT_SUCCESS(urMemRelease(m));
      }
    for (auto m : dst)
      if (m) {
        EXPECT_SUCCESS(urMemRelease(m));
      }
    for (auto q : queues)
      if (q) {
        EXPECT_SUCCESS(urQueueRelease(q));
      }
    for (auto c : contexts)
      if (c) {
        EXPECT_SUCCESS(urContextRelease(c));
      }
    conf::DeviceTest::TearDown();
  }
};

TEST_P(urURWaitSequenceTest, CopyThenReadWaitedTogether) {
  ur_event_handle_t copy = nullptr, read = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queues[0], src[0], dst[0], 0, 0, kBytes, 0, nullptr, &copy));
  std::vector<uint32_t> output(kCount, 1);
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queues[0], dst[0], false, 0, kBytes, output.data(), 0, nullptr, &read));
  ASSERT_SUCCESS(urQueueFlush(queues[0]));
  ur_event_handle_t both[] = {copy, read};
  ASSERT_SUCCESS(urEventWait(2, both));
  EXPECT_EQ(input[0], output);
  EXPECT_SUCCESS(urEventRelease(copy));
  EXPECT_SUCCESS(urEventRelease(read));
}

TEST_P(urURWaitSequenceTest, WaitForEventsOfFiveContexts) {
  for (size_t i = 0; i < kContexts; ++i)
    ASSERT_SUCCESS(urEnqueueMemBufferCopy(queues[i], src[i], dst[i], 0, 0, kBytes, 0, nullptr, nullptr));
  std::vector<std::vector<uint32_t>> output(kContexts, std::vector<uint32_t>(kCount, 1));
  std::vector<ur_event_handle_t> events(kContexts, nullptr);
  for (size_t i = 0; i < kContexts; ++i)
    ASSERT_SUCCESS(
        urEnqueueMemBufferRead(queues[i], dst[i], false, 0, kBytes, output[i].data(), 0, nullptr, &events[i]));
  ASSERT_SUCCESS(urEventWait(static_cast<uint32_t>(kContexts), events.data()));
  for (size_t i = 0; i < kContexts; ++i) EXPECT_EQ(input[i], output[i]) << "context " << i;
  for (auto e : events) EXPECT_SUCCESS(urEventRelease(e));
}

TEST_P(urURWaitSequenceTest, ZeroEventsIsInvalidValue) {
  ur_event_handle_t none = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, urEventWait(0, &none));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urEventWait(1, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urURWaitSequenceTest);

// ---- codes UR's suite expects (issue 23) ------------------------------------------------

// urDeviceGetInfo(UR_DEVICE_INFO_COMPONENT_DEVICES, 0, NULL, NULL) is checked in the
// native CPU adapter's own tests (test_adapter_device.cpp): the validation layer this
// suite runs with refuses it, as the spec's parameter rules say.

class urURIpcPhysMemCodesTest : public conf::ContextTest {
protected:
  size_t page = 0;
  void SetUp() override {
    CONF_BASE_SETUP(conf::ContextTest);
    ur_bool_t yes = false;
    if (conf::info(device(), UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP, yes) != UR_RESULT_SUCCESS || !yes)
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP";
    if (found().backend_name != "native_cpu")
      GTEST_SKIP()
          << "checked on native CPU, whose fix this is (issue 23); the stream backend: see docs/conformance.md";
    ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(context, device(), 1, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM,
                                                  sizeof page, &page, nullptr));
  }
};

// The spec: INVALID_ARGUMENT for memory made without UR_PHYSICAL_MEM_FLAG_ENABLE_IPC.
TEST_P(urURIpcPhysMemCodesTest, NoIpcFlagIsInvalidArgument) {
  ur_physical_mem_handle_t plain = nullptr;
  ASSERT_SUCCESS(urPhysicalMemCreate(context, device(), page, nullptr, &plain));
  void *data = nullptr;
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ARGUMENT, urIPCGetPhysMemHandleExp(context, plain, &data, &size));
  EXPECT_EQ(nullptr, data);
  EXPECT_SUCCESS(urPhysicalMemRelease(plain));
}

// A copy of handle data kept past urIPCPutPhysMemHandleExp is stale: refused.
TEST_P(urURIpcPhysMemCodesTest, StaleHandleIsInvalidValue) {
  ur_physical_mem_properties_t props{UR_STRUCTURE_TYPE_PHYSICAL_MEM_PROPERTIES, nullptr,
                                     UR_PHYSICAL_MEM_FLAG_ENABLE_IPC};
  ur_physical_mem_handle_t mem = nullptr, opened = nullptr;
  ASSERT_SUCCESS(urPhysicalMemCreate(context, device(), page, &props, &mem));
  void *live = nullptr, *stale = nullptr;
  size_t live_size = 0, stale_size = 0;
  ASSERT_SUCCESS(urIPCGetPhysMemHandleExp(context, mem, &live, &live_size));
  ASSERT_SUCCESS(urIPCGetPhysMemHandleExp(context, mem, &stale, &stale_size));
  std::vector<uint8_t> copy(static_cast<uint8_t *>(stale), static_cast<uint8_t *>(stale) + stale_size);
  ASSERT_SUCCESS(urIPCPutPhysMemHandleExp(context, stale));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urIPCOpenPhysMemHandleExp(context, device(), copy.data(), copy.size(), &opened));
  EXPECT_EQ(nullptr, opened);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urIPCOpenPhysMemHandleExp(context, device(), live, live_size + 1, &opened));
  // The handle not yet put still opens.
  ASSERT_SUCCESS(urIPCOpenPhysMemHandleExp(context, device(), live, live_size, &opened));
  EXPECT_SUCCESS(urIPCClosePhysMemHandleExp(context, opened));
  EXPECT_SUCCESS(urIPCPutPhysMemHandleExp(context, live));
  EXPECT_SUCCESS(urPhysicalMemRelease(mem));
}

CONF_INSTANTIATE_DEVICE_SUITE(urURIpcPhysMemCodesTest);

} // namespace
