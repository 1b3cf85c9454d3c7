// SPDX-License-Identifier: Apache-2.0
// Command buffers (urCommandBuffer*Exp, urEnqueueCommandBufferExp): creation and
// lifetime, every kind of appended command with its data checked after each replay,
// sync points on in-order and out-of-order queues, wait lists and events of an enqueue,
// kernel-launch updates, and what each function must refuse (leaving the command buffer
// as it was). A device that reports no UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP skips
// them, saying so.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;
using SyncPoint = ur_exp_command_buffer_sync_point_t;

ur_device_command_buffer_update_capability_flags_t update_caps(ur_device_handle_t d) {
  ur_device_command_buffer_update_capability_flags_t caps = 0;
  conf::info(d, UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP, caps);
  return caps;
}

bool command_events_supported(ur_device_handle_t d) {
  ur_bool_t yes = false;
  return conf::info(d, UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP, yes) == UR_RESULT_SUCCESS && yes;
}

#define CONF_REQUIRE_UPDATE_CAPS(caps)                                                                                 \
  do {                                                                                                                 \
    if ((update_caps(this->device()) & (caps)) != (caps))                                                              \
      GTEST_SKIP() << this->found().label() << " lacks update capabilities " << (caps)                                 \
                   << " (UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP)";                                      \
  } while (0)

bool command_buffers_supported(ur_device_handle_t d) {
  ur_bool_t yes = false;
  return conf::info(d, UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP, yes) == UR_RESULT_SUCCESS && yes;
}

#define CONF_SKIP_WITHOUT_COMMAND_BUFFERS()                                                                            \
  do {                                                                                                                 \
    if (!command_buffers_supported(this->device()))                                                                    \
      GTEST_SKIP() << this->found().label() << " reports no UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP";                \
  } while (0)

// Helpers shared by the fixtures: USM arrays, buffers and command buffers released at the end.
template <class Base> class CommandBufferFixture : public Base {
protected:
  std::vector<void *> allocations;
  std::vector<ur_mem_handle_t> buffers;
  std::vector<ur_exp_command_buffer_handle_t> cbs;

  void SetUp() override {
    CONF_BASE_SETUP(Base);
    CONF_SKIP_WITHOUT_COMMAND_BUFFERS();
  }
  void TearDown() override {
    if (this->queue) urQueueFinish(this->queue);
    for (auto cb : cbs) EXPECT_SUCCESS(urCommandBufferReleaseExp(cb));
    for (ur_mem_handle_t m : buffers) EXPECT_SUCCESS(urMemRelease(m));
    for (void *p : allocations) EXPECT_SUCCESS(urUSMFree(this->context, p));
    Base::TearDown();
  }
  ur_exp_command_buffer_handle_t make_cb(bool updatable = false, bool in_order = false) {
    ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, updatable, in_order, false};
    ur_exp_command_buffer_handle_t cb = nullptr;
    EXPECT_SUCCESS(urCommandBufferCreateExp(this->context, this->device(), &desc, &cb));
    if (cb) cbs.push_back(cb);
    return cb;
  }
  template <class T> T *usm(size_t n) {
    void *p = nullptr;
    EXPECT_SUCCESS(conf::usm_alloc(this->context, this->device(), UR_USM_TYPE_DEVICE, n * sizeof(T), &p));
    if (p) allocations.push_back(p);
    return static_cast<T *>(p);
  }
  template <class T> std::vector<T> download(const T *src, size_t n) {
    std::vector<T> out(n);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(this->queue, true, out.data(), src, n * sizeof(T), 0, nullptr, nullptr));
    return out;
  }
  template <class T> void set_all(T *dst, size_t n, T value) {
    ASSERT_SUCCESS(urEnqueueUSMFill(this->queue, dst, sizeof(T), &value, n * sizeof(T), 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(this->queue));
  }
  ur_mem_handle_t buffer(size_t size) {
    ur_mem_handle_t m = nullptr;
    ur_result_t r = urMemBufferCreate(this->context, UR_MEM_FLAG_READ_WRITE, size, nullptr, &m);
    EXPECT_SUCCESS(r);
    if (m) buffers.push_back(m);
    return m;
  }
  // Enqueues and waits; the result of the enqueue.
  ur_result_t run(ur_exp_command_buffer_handle_t cb, ur_queue_handle_t q = nullptr) {
    ur_event_handle_t e = nullptr;
    ur_result_t r = urEnqueueCommandBufferExp(q ? q : this->queue, cb, 0, nullptr, &e);
    if (r != UR_RESULT_SUCCESS) return r;
    EXPECT_SUCCESS(urEventWait(1, &e));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e));
    EXPECT_SUCCESS(urEventRelease(e));
    return r;
  }
};

using urCommandBufferTest = CommandBufferFixture<conf::QueueTest>;
using urCommandBufferOutOfOrderTest = CommandBufferFixture<conf::OutOfOrderQueueTest>;
using urCommandBufferKernelTest = CommandBufferFixture<conf::ProgramTest>;

template <class T> bool all_equal(const std::vector<T> &v, T value) {
  return std::all_of(v.begin(), v.end(), [&](T x) { return x == value; });
}

// ---- device answers, creation, lifetime ---------------------------------------------------------

TEST_P(urCommandBufferTest, DeviceAnswers) {
  ur_device_command_buffer_update_capability_flags_t caps = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP, caps));
  EXPECT_EQ(0u, caps & UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAGS_MASK);
  ur_bool_t events = 2, subgraphs = 2;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP, events));
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP, subgraphs));
  EXPECT_LE(events, 1u);
  EXPECT_LE(subgraphs, 1u);
}

TEST_P(urCommandBufferTest, CreateRetainReleaseGetInfo) {
  ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, true, true, false};
  ur_exp_command_buffer_handle_t cb = nullptr;
  ASSERT_SUCCESS(urCommandBufferCreateExp(context, device(), &desc, &cb));
  uint32_t refs = 0;
  ASSERT_SUCCESS(
      urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(1u, refs);
  ASSERT_SUCCESS(urCommandBufferRetainExp(cb));
  ASSERT_SUCCESS(
      urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs);
  ur_exp_command_buffer_desc_t got{};
  size_t size = 0;
  ASSERT_SUCCESS(urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_DESCRIPTOR, 0, nullptr, &size));
  EXPECT_EQ(sizeof got, size);
  ASSERT_SUCCESS(urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_DESCRIPTOR, sizeof got, &got, nullptr));
  EXPECT_EQ(UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, got.stype);
  EXPECT_TRUE(got.isUpdatable);
  EXPECT_TRUE(got.isInOrder);
  EXPECT_FALSE(got.enableProfiling);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_DESCRIPTOR, sizeof got - 1, &got, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_FORCE_UINT32, sizeof refs, &refs, nullptr));
  ASSERT_SUCCESS(urCommandBufferReleaseExp(cb));
  ASSERT_SUCCESS(
      urCommandBufferGetInfoExp(cb, UR_EXP_COMMAND_BUFFER_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(1u, refs);
  ASSERT_SUCCESS(urCommandBufferReleaseExp(cb));
}

TEST_P(urCommandBufferTest, CreateRefusesBadArguments) {
  ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
  ur_exp_command_buffer_handle_t cb = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferCreateExp(nullptr, device(), &desc, &cb));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferCreateExp(context, nullptr, &desc, &cb));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urCommandBufferCreateExp(context, device(), nullptr, &cb));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urCommandBufferCreateExp(context, device(), &desc, nullptr));
  EXPECT_EQ(nullptr, cb);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferRetainExp(nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferReleaseExp(nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferFinalizeExp(nullptr));
}

// ---- USM commands ---------------------------------------------------------------------------------

TEST_P(urCommandBufferTest, USMFillThenCopyReplayedTwice) {
  const size_t n = 1024;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  ASSERT_TRUE(a && b);
  auto cb = make_cb();
  ASSERT_NE(nullptr, cb);
  const uint32_t pattern = 0xC0FFEE01;
  SyncPoint filled = 99, copied = 99;
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, a, &pattern, sizeof pattern, n * 4, 0, nullptr, 0, nullptr,
                                                 &filled, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 1, &filled, 0, nullptr, &copied, nullptr, nullptr));
  EXPECT_NE(filled, copied);
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  for (int round = 0; round < 2; ++round) {
    set_all<uint32_t>(a, n, 0);
    set_all<uint32_t>(b, n, 0);
    ASSERT_SUCCESS(run(cb));
    EXPECT_TRUE(all_equal(download(b, n), pattern)) << "round " << round;
  }
}

TEST_P(urCommandBufferTest, PatternCopiedAtAppend) {
  const size_t n = 64;
  uint16_t *a = usm<uint16_t>(n);
  auto cb = make_cb();
  uint16_t pattern = 0x1234;
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, a, &pattern, sizeof pattern, n * 2, 0, nullptr, 0, nullptr,
                                                 nullptr, nullptr, nullptr));
  pattern = 0x9999; // the command keeps its own copy
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(a, n), uint16_t(0x1234)));
}

TEST_P(urCommandBufferTest, PrefetchAndAdviseKeepOrder) {
  const size_t n = 256;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  auto cb = make_cb();
  const uint32_t v = 77;
  SyncPoint s0, s1, s2;
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, a, &v, 4, n * 4, 0, nullptr, 0, nullptr, &s0, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMPrefetchExp(cb, a, n * 4, 0, 1, &s0, 0, nullptr, &s1, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMAdviseExp(cb, a, n * 4, UR_USM_ADVICE_FLAG_DEFAULT, 1, &s1, 0, nullptr, &s2,
                                                   nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 1, &s2, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(b, n, 0);
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(b, n), v));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urCommandBufferAppendUSMPrefetchExp(make_cb(), a, 4, UR_USM_MIGRATION_FLAGS_MASK, 0, nullptr, 0, nullptr,
                                                nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            urCommandBufferAppendUSMAdviseExp(make_cb(), a, 4, UR_USM_ADVICE_FLAGS_MASK, 0, nullptr, 0, nullptr,
                                              nullptr, nullptr, nullptr));
}

// A chain of copies on an out-of-order queue: only the sync points order them.
TEST_P(urCommandBufferOutOfOrderTest, SyncPointsOrderAChain) {
  const size_t n = 4096;
  const int links = 6;
  std::vector<uint32_t *> arrays;
  for (int i = 0; i <= links; ++i) arrays.push_back(usm<uint32_t>(n));
  auto cb = make_cb();
  const uint32_t v = 0xABCD0123;
  SyncPoint prev;
  ASSERT_SUCCESS(
      urCommandBufferAppendUSMFillExp(cb, arrays[0], &v, 4, n * 4, 0, nullptr, 0, nullptr, &prev, nullptr, nullptr));
  for (int i = 1; i <= links; ++i)
    ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, arrays[i], arrays[i - 1], n * 4, 1, &prev, 0, nullptr, &prev,
                                                     nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  for (int round = 0; round < 3; ++round) {
    for (auto *p : arrays) set_all<uint32_t>(p, n, 0);
    ASSERT_SUCCESS(run(cb));
    EXPECT_TRUE(all_equal(download(arrays[links], n), v)) << "round " << round;
  }
}

// An in-order command buffer orders its commands without sync points.
TEST_P(urCommandBufferOutOfOrderTest, InOrderCommandBuffer) {
  const size_t n = 4096;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n), *c = usm<uint32_t>(n);
  auto cb = make_cb(false, true);
  const uint32_t v = 5;
  ASSERT_SUCCESS(
      urCommandBufferAppendUSMFillExp(cb, a, &v, 4, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, c, b, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  for (auto *p : {a, b, c}) set_all<uint32_t>(p, n, 0);
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(c, n), v));
}

// The enqueue's wait list holds back every command; its event follows all of them.
TEST_P(urCommandBufferOutOfOrderTest, WaitListAndEvent) {
  const size_t n = 1 << 16;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  auto cb = make_cb();
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(b, n, 0);
  const uint32_t v = 31337;
  ur_event_handle_t filled = nullptr, done = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, a, 4, &v, n * 4, 0, nullptr, &filled));
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 1, &filled, &done));
  ASSERT_SUCCESS(urEventWait(1, &done));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(filled)) << "the run's event completed before its wait list";
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urEventGetInfo(done, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
  EXPECT_EQ(queue, q);
  EXPECT_TRUE(all_equal(download(b, n), v));
  EXPECT_SUCCESS(urEventRelease(filled));
  EXPECT_SUCCESS(urEventRelease(done));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEnqueueCommandBufferExp(queue, cb, 1, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEnqueueCommandBufferExp(queue, cb, 0, &filled, nullptr));
}

// Runs of one command buffer enqueued back to back do not overlap: each copies what
// the previous one wrote.
TEST_P(urCommandBufferOutOfOrderTest, RunsDoNotOverlap) {
  const size_t n = 1 << 15;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  auto cb = make_cb(false, true);
  // b = a; a = pattern ^ ... : the second run copies what the first wrote.
  const uint32_t v = 0x5A5A5A5A;
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(
      urCommandBufferAppendUSMFillExp(cb, a, &v, 4, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(a, n, 1);
  set_all<uint32_t>(b, n, 0);
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
  ur_event_handle_t second = nullptr;
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, &second));
  ASSERT_SUCCESS(urEventWait(1, &second));
  EXPECT_SUCCESS(urEventRelease(second));
  EXPECT_TRUE(all_equal(download(b, n), v)) << "the second run's copy saw the first run's fill";
}

// On an in-order queue the queue orders the replayed commands; the enqueue's wait list
// (here an event of another queue) still holds back the first.
TEST_P(urCommandBufferTest, WaitListFromAnotherQueue) {
  const size_t n = 1 << 20;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  auto cb = make_cb();
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(a, n, 0);
  set_all<uint32_t>(b, n, 0);
  ur_queue_handle_t other = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &other));
  const uint32_t v = 0x13572468;
  ur_event_handle_t filled = nullptr, done = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(other, a, 4, &v, n * 4, 0, nullptr, &filled));
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 1, &filled, &done));
  ASSERT_SUCCESS(urEventWait(1, &done));
  EXPECT_TRUE(all_equal(download(b, n), v));
  EXPECT_SUCCESS(urEventRelease(filled));
  EXPECT_SUCCESS(urEventRelease(done));
  EXPECT_SUCCESS(urQueueFinish(other));
  EXPECT_SUCCESS(urQueueRelease(other));
}

// ---- finalize, sync points, events: what is refused, and nothing changes ---------------------

TEST_P(urCommandBufferTest, FinalizeRules) {
  uint32_t *a = usm<uint32_t>(16);
  const uint32_t v = 3;
  auto cb = make_cb();
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr))
      << "not finalized";
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, a, &v, 4, 64, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urCommandBufferFinalizeExp(cb));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION,
            urCommandBufferAppendUSMFillExp(cb, a, &v, 4, 64, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(a, 16), v));
}

TEST_P(urCommandBufferTest, EmptyCommandBufferRuns) {
  auto cb = make_cb();
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(run(cb));
  ASSERT_SUCCESS(run(cb));
}

TEST_P(urCommandBufferTest, AppendRefusals) {
  const size_t n = 64;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  auto cb = make_cb();
  const uint32_t v = 11, w = 12;
  SyncPoint s = 0;
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, a, &v, 4, n * 4, 0, nullptr, 0, nullptr, &s, nullptr, nullptr));
  SyncPoint unknown = s + 1;
  auto fill = [&](uint32_t ns, const SyncPoint *sp, uint32_t ne, const ur_event_handle_t *ev, ur_event_handle_t *out,
                  ur_exp_command_buffer_command_handle_t *cmd, size_t size = 0, const void *pattern = nullptr) {
    if (!size) size = n * 4;
    if (!pattern) pattern = &w;
    return urCommandBufferAppendUSMFillExp(cb, a, pattern, 4, size, ns, sp, ne, ev, nullptr, out, cmd);
  };
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_EXP, fill(1, &unknown, 0, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_WAIT_LIST_EXP,
            fill(1, nullptr, 0, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_WAIT_LIST_EXP, fill(0, &s, 0, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, fill(0, nullptr, 1, nullptr, nullptr, nullptr));
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 0, nullptr, &e));
  if (!command_events_supported(device())) { // UR: UNSUPPORTED_FEATURE without COMMAND_BUFFER_EVENT_SUPPORT_EXP
    EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_FEATURE, fill(0, nullptr, 1, &e, nullptr, nullptr)) << "no command events";
    ur_event_handle_t out = nullptr;
    EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_FEATURE, fill(0, nullptr, 0, nullptr, &out, nullptr));
    EXPECT_EQ(nullptr, out);
  }
  ur_exp_command_buffer_command_handle_t cmd = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, fill(0, nullptr, 0, nullptr, nullptr, &cmd)) << "not updatable";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urCommandBufferAppendUSMFillExp(cb, a, &w, 4, 0, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, fill(0, nullptr, 0, nullptr, nullptr, nullptr, 6));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, fill(0, nullptr, 0, nullptr, nullptr, nullptr, n * 4 + 4))
      << "past the allocation";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urCommandBufferAppendUSMFillExp(cb, a, nullptr, 4, 64, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urCommandBufferAppendUSMMemcpyExp(cb, nullptr, a, 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urCommandBufferAppendUSMMemcpyExp(cb, b, a, 0, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
            urCommandBufferAppendUSMMemcpyExp(nullptr, b, a, 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_SUCCESS(urEventRelease(e));
  // Nothing refused joined the buffer: one run fills with v only.
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(a, n, 0);
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(a, n), v));
}

TEST_P(urCommandBufferTest, EnqueueOnAnotherContextsQueue) {
  auto cb = make_cb();
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ur_context_handle_t other = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other));
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(other, dev, nullptr, &q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urEnqueueCommandBufferExp(q, cb, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEnqueueCommandBufferExp(queue, nullptr, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urContextRelease(other));
}

// The command buffer may go while a run is pending; the run completes with its data.
TEST_P(urCommandBufferTest, ReleaseWhileRunning) {
  const size_t n = 1 << 16;
  uint32_t *a = usm<uint32_t>(n), *b = usm<uint32_t>(n);
  ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
  ur_exp_command_buffer_handle_t cb = nullptr;
  ASSERT_SUCCESS(urCommandBufferCreateExp(context, device(), &desc, &cb));
  const uint32_t v = 8;
  SyncPoint s;
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, a, &v, 4, n * 4, 0, nullptr, 0, nullptr, &s, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(cb, b, a, n * 4, 1, &s, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, &e));
  ASSERT_SUCCESS(urCommandBufferReleaseExp(cb));
  ASSERT_SUCCESS(urEventWait(1, &e));
  EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_TRUE(all_equal(download(b, n), v));
}

// ---- buffers ----------------------------------------------------------------------------------------

TEST_P(urCommandBufferTest, BufferWriteFillCopyRead) {
  const size_t n = 4096;
  ur_mem_handle_t src = buffer(n), dst = buffer(n);
  ASSERT_TRUE(src && dst);
  std::vector<uint8_t> host(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 13 + 1);
  const uint32_t pattern = 0xDEADBEEF;
  auto cb = make_cb();
  SyncPoint wrote, filled, copied;
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferWriteExp(cb, src, 0, n, host.data(), 0, nullptr, 0, nullptr, &wrote,
                                                        nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferFillExp(cb, src, &pattern, 4, 1024, 512, 1, &wrote, 0, nullptr, &filled,
                                                       nullptr, nullptr));
  ASSERT_SUCCESS(
      urCommandBufferAppendMemBufferCopyExp(cb, src, dst, 0, 0, n, 1, &filled, 0, nullptr, &copied, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferReadExp(cb, dst, 0, n, back.data(), 1, &copied, 0, nullptr, nullptr,
                                                       nullptr, nullptr));
  // Refused: out of range, misaligned fill, null host pointer.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urCommandBufferAppendMemBufferReadExp(cb, dst, n - 4, 8, back.data(), 0, nullptr, 0, nullptr, nullptr,
                                                  nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urCommandBufferAppendMemBufferFillExp(cb, src, &pattern, 4, 2, 8, 0, nullptr,
                                                                                0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urCommandBufferAppendMemBufferWriteExp(cb, src, 0, 4, nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr,
                                                   nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
            urCommandBufferAppendMemBufferCopyExp(cb, nullptr, dst, 0, 0, 4, 0, nullptr, 0, nullptr, nullptr, nullptr,
                                                  nullptr));
  // Overlapping ranges of one buffer: refused at the append, as urEnqueueMemBufferCopy refuses them.
  EXPECT_EQ(UR_RESULT_ERROR_OVERLAPPING_REGIONS,
            urCommandBufferAppendMemBufferCopyExp(cb, src, src, 0, 64, 128, 0, nullptr, 0, nullptr, nullptr, nullptr,
                                                  nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(run(cb));
  for (size_t i = 0; i < n; ++i) {
    uint8_t want = host[i];
    if (i >= 1024 && i < 1536) want = static_cast<uint8_t>(pattern >> (8 * (i % 4)));
    ASSERT_EQ(want, back[i]) << "byte " << i;
  }
  // A second run reads the host memory again (the write is not a snapshot).
  std::fill(host.begin(), host.end(), uint8_t(0x42));
  std::fill(back.begin(), back.end(), uint8_t(0));
  ASSERT_SUCCESS(run(cb));
  EXPECT_EQ(0x42, back[0]);
  EXPECT_EQ(0x42, back[n - 1]);
  EXPECT_EQ(static_cast<uint8_t>(pattern), back[1024]);
}

TEST_P(urCommandBufferTest, BufferRectangles) {
  // A 16 x 8 x 2 byte box: write a 4 x 3 x 2 rectangle, copy it elsewhere, read it back.
  const size_t row = 16, slice = row * 8, n = slice * 2;
  ur_mem_handle_t a = buffer(n), b = buffer(n);
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> zero(n, 0), host(4 * 3 * 2), back(4 * 3 * 2, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(100 + i);
  ur_rect_region_t region{4, 3, 2};
  auto cb = make_cb(false, true);
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferWriteExp(cb, a, 0, n, zero.data(), 0, nullptr, 0, nullptr, nullptr,
                                                        nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferWriteExp(cb, b, 0, n, zero.data(), 0, nullptr, 0, nullptr, nullptr,
                                                        nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferWriteRectExp(cb, a, {2, 1, 0}, {0, 0, 0}, region, row, slice, 4, 12,
                                                            host.data(), 0, nullptr, 0, nullptr, nullptr, nullptr,
                                                            nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferCopyRectExp(cb, a, b, {2, 1, 0}, {8, 4, 0}, region, row, slice, row,
                                                           slice, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferAppendMemBufferReadRectExp(cb, b, {8, 4, 0}, {0, 0, 0}, region, row, slice, 4, 12,
                                                           back.data(), 0, nullptr, 0, nullptr, nullptr, nullptr,
                                                           nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urCommandBufferAppendMemBufferCopyRectExp(cb, a, b, {0, 6, 1}, {0, 0, 0}, region, row, slice, row, slice, 0,
                                                      nullptr, 0, nullptr, nullptr, nullptr, nullptr))
      << "the source rectangle ends past the buffer";
  EXPECT_EQ(UR_RESULT_ERROR_OVERLAPPING_REGIONS,
            urCommandBufferAppendMemBufferCopyRectExp(cb, a, a, {2, 1, 0}, {3, 2, 0}, region, row, slice, row, slice, 0,
                                                      nullptr, 0, nullptr, nullptr, nullptr, nullptr))
      << "two rectangles of one buffer that share bytes";
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(run(cb));
  EXPECT_EQ(host, back);
}

// ---- kernels ------------------------------------------------------------------------------------

TEST_P(urCommandBufferKernelTest, FillKernelThenCopy) {
  const size_t n = 1024;
  uint32_t *out = usm<uint32_t>(n), *copy = usm<uint32_t>(n);
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  const uint32_t value = 0xFACE;
  std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, out), arg_value(1, sizeof value, &value)};
  auto cb = make_cb();
  SyncPoint launched;
  ASSERT_SUCCESS(urCommandBufferAppendKernelLaunchWithArgsExp(
      cb, k, 1, nullptr, &n, nullptr, 2, args.data(), 0, nullptr, 0, nullptr, 0, nullptr, &launched, nullptr, nullptr));
  ASSERT_SUCCESS(
      urCommandBufferAppendUSMMemcpyExp(cb, copy, out, n * 4, 1, &launched, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urKernelRelease(k)); // the command holds the kernel
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(copy, n, 0);
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(copy, n), value));
}

TEST_P(urCommandBufferKernelTest, LaunchWithoutArgumentsAndRefusals) {
  ur_kernel_handle_t empty = make_kernel("empty"), fill = make_kernel("fill");
  ASSERT_TRUE(empty && fill);
  auto cb = make_cb();
  size_t n = 64, bad_local = 7;
  ASSERT_SUCCESS(urCommandBufferAppendKernelLaunchExp(cb, empty, 1, nullptr, &n, nullptr, 0, nullptr, 0, nullptr, 0,
                                                      nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
            urCommandBufferAppendKernelLaunchExp(cb, fill, 1, nullptr, &n, nullptr, 0, nullptr, 0, nullptr, 0, nullptr,
                                                 nullptr, nullptr, nullptr))
      << "fill has two parameters and none were given";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_DIMENSION,
            urCommandBufferAppendKernelLaunchExp(cb, empty, 0, nullptr, &n, nullptr, 0, nullptr, 0, nullptr, 0, nullptr,
                                                 nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE,
            urCommandBufferAppendKernelLaunchExp(cb, empty, 1, nullptr, &n, &bad_local, 0, nullptr, 0, nullptr, 0,
                                                 nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urCommandBufferAppendKernelLaunchExp(cb, empty, 1, nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr, 0,
                                                 nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urCommandBufferAppendKernelLaunchExp(cb, empty, 1, nullptr, &n, nullptr, 1, &empty, 0, nullptr, 0, nullptr,
                                                 nullptr, nullptr, nullptr))
      << "an alternative may not be the kernel itself";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urCommandBufferAppendKernelLaunchExp(cb, empty, 1, nullptr, &n, nullptr, 1, nullptr, 0, nullptr, 0, nullptr,
                                                 nullptr, nullptr, nullptr));
  uint32_t value = 1;
  auto bad_index = arg_value(5, sizeof value, &value);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
            urCommandBufferAppendKernelLaunchWithArgsExp(cb, empty, 1, nullptr, &n, nullptr, 1, &bad_index, 0, nullptr,
                                                         0, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(run(cb));
  EXPECT_SUCCESS(urKernelRelease(empty));
  EXPECT_SUCCESS(urKernelRelease(fill));
}

// Update: new value and pointer arguments and a larger global size, then a refused
// update that changes nothing.
TEST_P(urCommandBufferKernelTest, UpdateArgumentsAndSize) {
  CONF_REQUIRE_UPDATE_CAPS(UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_KERNEL_ARGUMENTS |
                           UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_GLOBAL_WORK_SIZE);
  const size_t n1 = 64, n2 = 256;
  uint32_t *first = usm<uint32_t>(n2), *second = usm<uint32_t>(n2);
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  uint32_t value = 1;
  std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, first), arg_value(1, sizeof value, &value)};
  auto cb = make_cb(true);
  ur_exp_command_buffer_command_handle_t cmd = nullptr;
  ASSERT_SUCCESS(urCommandBufferAppendKernelLaunchWithArgsExp(cb, k, 1, nullptr, &n1, nullptr, 2, args.data(), 0,
                                                              nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr, &cmd));
  ASSERT_NE(nullptr, cmd);
  ur_exp_command_buffer_update_kernel_launch_desc_t update{};
  update.stype = UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_UPDATE_KERNEL_LAUNCH_DESC;
  update.hCommand = cmd;
  update.newWorkDim = 1;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urCommandBufferUpdateKernelLaunchExp(cb, 1, &update)) << "not finalized";
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  set_all<uint32_t>(first, n2, 0);
  set_all<uint32_t>(second, n2, 0);
  ASSERT_SUCCESS(run(cb));
  std::vector<uint32_t> got = download(first, n2);
  for (size_t i = 0; i < n2; ++i) ASSERT_EQ(i < n1 ? 1u : 0u, got[i]) << i;

  const uint32_t seven = 7;
  void *new_ptr = second;
  ur_exp_command_buffer_update_value_arg_desc_t new_value{
      UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_UPDATE_VALUE_ARG_DESC, nullptr, 1, sizeof seven, nullptr, &seven};
  ur_exp_command_buffer_update_pointer_arg_desc_t new_pointer{
      UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_UPDATE_POINTER_ARG_DESC, nullptr, 0, nullptr, &new_ptr};
  size_t global = n2;
  update.numNewValueArgs = 1;
  update.pNewValueArgList = &new_value;
  update.numNewPointerArgs = 1;
  update.pNewPointerArgList = &new_pointer;
  update.pNewGlobalWorkSize = &global;
  ASSERT_SUCCESS(urCommandBufferUpdateKernelLaunchExp(cb, 1, &update));
  set_all<uint32_t>(first, n2, 0);
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(second, n2), seven));
  EXPECT_TRUE(all_equal(download(first, n2), 0u)) << "the old pointer is no longer written";

  // Refused updates leave the command as it is.
  ur_exp_command_buffer_update_kernel_launch_desc_t bad = update;
  bad.newWorkDim = 4;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, urCommandBufferUpdateKernelLaunchExp(cb, 1, &bad));
  bad = update;
  bad.newWorkDim = 2; // a new dimension count needs a new size and offset
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urCommandBufferUpdateKernelLaunchExp(cb, 1, &bad));
  bad = update;
  ur_exp_command_buffer_update_value_arg_desc_t bad_value = new_value;
  bad_value.argIndex = 9;
  bad.pNewValueArgList = &bad_value;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, urCommandBufferUpdateKernelLaunchExp(cb, 1, &bad));
  bad = update;
  ur_kernel_handle_t other = make_kernel("increment");
  bad.hNewKernel = other;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urCommandBufferUpdateKernelLaunchExp(cb, 1, &bad)) << "not an alternative";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urCommandBufferUpdateKernelLaunchExp(cb, 0, &update));
  bad = update;
  bad.hCommand = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urCommandBufferUpdateKernelLaunchExp(cb, 1, &bad));
  set_all<uint32_t>(second, n2, 0);
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(second, n2), seven));
  EXPECT_SUCCESS(urKernelRelease(other));
  EXPECT_SUCCESS(urKernelRelease(k));
}

// A kernel alternative given at append time can replace the kernel.
TEST_P(urCommandBufferKernelTest, UpdateToKernelAlternative) {
  CONF_REQUIRE_UPDATE_CAPS(UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_KERNEL_HANDLE);
  const size_t n = 128;
  uint32_t *data = usm<uint32_t>(n);
  ur_kernel_handle_t fill = make_kernel("fill"), increment = make_kernel("increment");
  ASSERT_TRUE(fill && increment);
  const uint32_t value = 40;
  std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, data), arg_value(1, sizeof value, &value)};
  auto cb = make_cb(true);
  ur_exp_command_buffer_command_handle_t cmd = nullptr;
  ASSERT_SUCCESS(urCommandBufferAppendKernelLaunchWithArgsExp(cb, fill, 1, nullptr, &n, nullptr, 2, args.data(), 1,
                                                              &increment, 0, nullptr, 0, nullptr, nullptr, nullptr,
                                                              &cmd));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(data, n), value));
  ur_exp_command_buffer_update_kernel_launch_desc_t update{};
  update.stype = UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_UPDATE_KERNEL_LAUNCH_DESC;
  update.hCommand = cmd;
  update.hNewKernel = increment;
  update.newWorkDim = 1;
  ASSERT_SUCCESS(urCommandBufferUpdateKernelLaunchExp(cb, 1, &update));
  ASSERT_SUCCESS(run(cb));
  ASSERT_SUCCESS(run(cb));
  EXPECT_TRUE(all_equal(download(data, n), value + 2));
  EXPECT_SUCCESS(urKernelRelease(fill));
  EXPECT_SUCCESS(urKernelRelease(increment));
}

TEST_P(urCommandBufferKernelTest, UpdateRefusedWhenNotUpdatableOrNotAKernel) {
  const size_t n = 16;
  uint32_t *data = usm<uint32_t>(n);
  ur_kernel_handle_t k = make_kernel("increment");
  ASSERT_NE(nullptr, k);
  auto arg = arg_pointer(0, data);
  auto fixed = make_cb(false);
  ASSERT_SUCCESS(urCommandBufferAppendKernelLaunchWithArgsExp(fixed, k, 1, nullptr, &n, nullptr, 1, &arg, 0, nullptr, 0,
                                                              nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(fixed));
  auto updatable = make_cb(true);
  ur_exp_command_buffer_command_handle_t copy_cmd = nullptr;
  ASSERT_SUCCESS(urCommandBufferAppendUSMMemcpyExp(updatable, data, data + 8, 16, 0, nullptr, 0, nullptr, nullptr,
                                                   nullptr, &copy_cmd));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(updatable));
  ur_exp_command_buffer_update_kernel_launch_desc_t update{};
  update.stype = UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_UPDATE_KERNEL_LAUNCH_DESC;
  update.hCommand = copy_cmd;
  update.newWorkDim = 1;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urCommandBufferUpdateKernelLaunchExp(fixed, 1, &update));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_COMMAND_HANDLE_EXP,
            urCommandBufferUpdateKernelLaunchExp(updatable, 1, &update));
  EXPECT_SUCCESS(urKernelRelease(k));
}

// ---- host functions ----------------------------------------------------------------------------------

std::atomic<int> g_native_calls{0};
void count_call(void *data) {
  g_native_calls.fetch_add(1);
  // Sees the fill that precedes it through a sync point.
  *static_cast<uint32_t *>(data) += 1;
}

TEST_P(urCommandBufferTest, NativeCommandRunsInOrder) {
  auto cb = make_cb();
  void *host = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_HOST, 64, &host));
  allocations.push_back(host);
  const uint32_t v = 41;
  SyncPoint filled;
  ASSERT_SUCCESS(
      urCommandBufferAppendUSMFillExp(cb, host, &v, 4, 64, 0, nullptr, 0, nullptr, &filled, nullptr, nullptr));
  ur_result_t r = urCommandBufferAppendNativeCommandExp(cb, count_call, host, nullptr, 1, &filled, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << found().label() << " has no host functions in command buffers (no urEnqueueHostTaskExp)";
  ASSERT_SUCCESS(r);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urCommandBufferAppendNativeCommandExp(cb, nullptr, host, nullptr, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  g_native_calls = 0;
  ASSERT_SUCCESS(run(cb));
  ASSERT_SUCCESS(run(cb));
  EXPECT_EQ(2, g_native_calls.load());
  EXPECT_EQ(v + 1, *static_cast<uint32_t *>(host)) << "each run fills, then the function adds one";
}

CONF_INSTANTIATE_DEVICE_SUITE(urCommandBufferTest);
CONF_INSTANTIATE_DEVICE_SUITE(urCommandBufferOutOfOrderTest);
CONF_INSTANTIATE_DEVICE_SUITE(urCommandBufferKernelTest);

} // namespace
