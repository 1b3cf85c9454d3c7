// SPDX-License-Identifier: Apache-2.0
// Graph capture with reusable events, and event callbacks (issue 22, items 8-10;
// docs/command-buffers.md "Graph capture" and "Events that are signalled again"):
//   - a captured wait on a reusable event (urEventCreateExp) is resolved at every
//     replay: the replay waits for the signal current then, even one made after capture;
//   - a callback on a reusable event or a command-buffer signal event receives the
//     user's handle, which it may still query after the user released it, even when the
//     event was signalled again meanwhile;
//   - the callbacks of one event run SUBMITTED, RUNNING, COMPLETE, whatever order they
//     were registered in.
// Commands are held back deterministically by a host task that waits for the test to
// open its gate; a device without host tasks (urEnqueueHostTaskExp) skips, saying so.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace {

bool device_says(ur_device_handle_t d, ur_device_info_t q) {
  ur_bool_t yes = false;
  return conf::info(d, q, yes) == UR_RESULT_SUCCESS && yes;
}

// A host task that returns only once the test opens the gate (or after a minute, so a
// broken test cannot hang the suite).
struct Gate {
  std::atomic<bool> open{false};
};
void gated_task(void *p) {
  auto *g = static_cast<Gate *>(p);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!g->open.load() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Whether `e` completes within `ms` milliseconds (polled).
bool completes_within(ur_event_handle_t e, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  do {
    if (conf::event_status(e) == UR_EVENT_STATUS_COMPLETE) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

// What each callback saw, in the order they ran.
struct Seen {
  ur_event_handle_t event;
  ur_execution_info_t status;
  ur_result_t info;            // urEventGetInfo(event, CONTEXT) inside the callback
  ur_context_handle_t context; // what it answered
};
struct CallbackLog {
  std::mutex m;
  std::condition_variable cv;
  std::vector<Seen> seen;
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return seen.size() >= n; });
  }
  std::vector<Seen> copy() {
    std::lock_guard<std::mutex> lock(m);
    return seen;
  }
};
void log_callback(ur_event_handle_t e, ur_execution_info_t status, void *user) {
  auto *log = static_cast<CallbackLog *>(user);
  Seen s{e, status, UR_RESULT_ERROR_UNKNOWN, nullptr};
  s.info = urEventGetInfo(e, UR_EVENT_INFO_CONTEXT, sizeof s.context, &s.context, nullptr);
  std::lock_guard<std::mutex> lock(log->m);
  log->seen.push_back(s);
  log->cv.notify_all();
}

class urCaptureAndCallbacksTest : public conf::QueueTest {
protected:
  static constexpr size_t kWords = 1024;
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    ur_device_handle_t dev = device();
    ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &producer));
    ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &reader));
    for (void *&p : mem) ASSERT_SUCCESS(conf::usm_alloc(context, dev, UR_USM_TYPE_DEVICE, kWords * 4, &p));
    set(0, 0);
    set(1, 0);
  }
  void TearDown() override {
    gate.open = true; // whatever failed, nothing stays held back
    for (ur_queue_handle_t q : {queue, producer, reader}) {
      if (q) {
        EXPECT_SUCCESS(urQueueFinish(q));
      }
    }
    for (ur_queue_handle_t q : {producer, reader}) {
      if (q) {
        EXPECT_SUCCESS(urQueueRelease(q));
      }
    }
    for (void *p : mem) {
      if (p) {
        EXPECT_SUCCESS(urUSMFree(context, p));
      }
    }
    conf::QueueTest::TearDown();
  }
  // Holds `q` back until open_gate(); false (and the test skips) without host tasks.
  bool hold(ur_queue_handle_t q) {
    ur_result_t r = urEnqueueHostTaskExp(q, gated_task, &gate, nullptr, 0, nullptr, nullptr);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) return false;
    EXPECT_SUCCESS(r);
    return r == UR_RESULT_SUCCESS;
  }
  void open_gate() { gate.open = true; }
  void close_gate() { gate.open = false; }
  void set(int i, uint32_t v) {
    ASSERT_SUCCESS(urEnqueueUSMFill(reader, mem[i], 4, &v, kWords * 4, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(reader));
  }
  bool all(int i, uint32_t v) {
    std::vector<uint32_t> back(kWords, 0);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(reader, true, back.data(), mem[i], kWords * 4, 0, nullptr, nullptr));
    return std::all_of(back.begin(), back.end(), [&](uint32_t x) { return x == v; });
  }
  ur_event_handle_t reusable() {
    ur_exp_event_desc_t desc{UR_STRUCTURE_TYPE_EXP_EVENT_DESC, nullptr, 0};
    ur_event_handle_t e = nullptr;
    EXPECT_SUCCESS(urEventCreateExp(context, device(), &desc, &e));
    return e;
  }
  // Behind the gate on the producer queue: mem[0] = v, then `e` is signalled.
  void produce(uint32_t v, ur_event_handle_t e) {
    ASSERT_SUCCESS(urEnqueueUSMFill(producer, mem[0], 4, &v, kWords * 4, 0, nullptr, nullptr));
    ur_event_handle_t same = e;
    ASSERT_SUCCESS(urEnqueueEventsWaitWithBarrierExt(producer, nullptr, 0, nullptr, &same));
    ASSERT_EQ(e, same);
  }
  Gate gate;
  ur_queue_handle_t producer = nullptr, reader = nullptr;
  void *mem[2] = {nullptr, nullptr};
};

#define CONF_REQUIRE(what, query)                                                                                      \
  if (!device_says(device(), query)) GTEST_SKIP() << found().label() << " reports no " what

// Item 8: the consumer captured waiting for E runs after the producer that signals E
// after the capture, and each replay waits for E's newest signal.
TEST_P(urCaptureAndCallbacksTest, ReplayWaitsForTheReusableEventsSignalAtReplay) {
  CONF_REQUIRE("graph record and replay", UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP);
  CONF_REQUIRE("reusable events", UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP);
  ur_event_handle_t e = reusable();
  ASSERT_NE(nullptr, e);
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 1, &e, nullptr));
  ur_exp_graph_handle_t graph = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
  ur_exp_executable_graph_handle_t exec = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));

  for (uint32_t v : {7u, 9u}) {
    close_gate();
    if (!hold(producer)) {
      EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
      EXPECT_SUCCESS(urGraphDestroyExp(graph));
      EXPECT_SUCCESS(urEventRelease(e));
      GTEST_SKIP() << found().label() << " has no host tasks (urEnqueueHostTaskExp)";
    }
    produce(v, e);
    ur_event_handle_t run = nullptr;
    ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, &run));
    EXPECT_FALSE(completes_within(run, 300)) << "replay " << v << " ran before the signal it waits for";
    open_gate();
    ASSERT_SUCCESS(urEventWait(1, &run));
    EXPECT_SUCCESS(urEventRelease(run));
    EXPECT_TRUE(all(1, v)) << "the consumer copied before the producer wrote " << v;
    ASSERT_SUCCESS(urQueueFinish(producer));
  }
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
  EXPECT_SUCCESS(urEventRelease(e));
}

// Item 8, documented case: a reusable event never signalled when the graph is replayed
// stands for nothing then, as in urEnqueueEventsWait; the replay does not hang. The
// graph keeps the event: released by the user after capture, it is still waited for.
TEST_P(urCaptureAndCallbacksTest, ReplayBeforeAnySignalDoesNotWaitAndTheGraphKeepsTheEvent) {
  CONF_REQUIRE("graph record and replay", UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP);
  CONF_REQUIRE("reusable events", UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP);
  ur_event_handle_t e = reusable();
  ASSERT_NE(nullptr, e);
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 1, &e, nullptr));
  ur_exp_graph_handle_t graph = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
  ur_exp_executable_graph_handle_t exec = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));
  set(0, 3);
  ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(1, 3));
  // Released by the user, the event lives on in the graph and is waited for at replay.
  ASSERT_SUCCESS(urEventRetain(e)); // the signalling barrier below needs a live handle
  EXPECT_SUCCESS(urEventRelease(e));
  if (!hold(producer)) {
    EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
    EXPECT_SUCCESS(urGraphDestroyExp(graph));
    EXPECT_SUCCESS(urEventRelease(e));
    GTEST_SKIP() << found().label() << " has no host tasks (urEnqueueHostTaskExp)";
  }
  produce(4, e);
  EXPECT_SUCCESS(urEventRelease(e)); // the user's last reference: the graph still holds it
  ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, nullptr));
  open_gate();
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(1, 4));
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
}

// Checks that every callback saw `user`, answered urEventGetInfo from inside and ran
// with the status it was set for.
void expect_users_handle(const std::vector<Seen> &seen, ur_event_handle_t user, ur_context_handle_t ctx) {
  for (const Seen &s : seen) {
    EXPECT_EQ(user, s.event) << "the callback got a handle the user never had";
    EXPECT_EQ(UR_RESULT_SUCCESS, s.info) << "urEventGetInfo on the callback's event";
    EXPECT_EQ(ctx, s.context);
    EXPECT_EQ(UR_EXECUTION_INFO_COMPLETE, s.status);
  }
}

// Item 9: a reusable event's callback gets the user's handle, signalled again and
// released by the user before the callback runs.
TEST_P(urCaptureAndCallbacksTest, CallbackOnAReusableEventGetsTheUsersHandle) {
  CONF_REQUIRE("reusable events", UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP);
  ur_event_handle_t e = reusable();
  ASSERT_NE(nullptr, e);
  if (!hold(producer)) {
    EXPECT_SUCCESS(urEventRelease(e));
    GTEST_SKIP() << found().label() << " has no host tasks (urEnqueueHostTaskExp)";
  }
  produce(1, e);
  CallbackLog log;
  ur_result_t r = urEventSetCallback(e, UR_EXECUTION_INFO_COMPLETE, log_callback, &log);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    open_gate();
    EXPECT_SUCCESS(urEventRelease(e));
    GTEST_SKIP() << found().label() << ": urEventSetCallback unsupported";
  }
  ASSERT_SUCCESS(r);
  produce(2, e);                     // signalled again: the first signal's event is let go
  EXPECT_SUCCESS(urEventRelease(e)); // the user's only reference, before the callback ran
  open_gate();
  ASSERT_TRUE(log.wait_for(1)) << "the callback never ran";
  ASSERT_SUCCESS(urQueueFinish(producer));
  std::vector<Seen> seen = log.copy();
  EXPECT_EQ(1u, seen.size());
  expect_users_handle(seen, e, context);
}

// Item 9: a command-buffer command's signal event: the callback gets that handle, after
// a second run rebinds it and the user released it.
TEST_P(urCaptureAndCallbacksTest, CallbackOnACommandBufferSignalEventGetsTheUsersHandle) {
  CONF_REQUIRE("command-buffer events", UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP);
  ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
  ur_exp_command_buffer_handle_t cb = nullptr;
  ASSERT_SUCCESS(urCommandBufferCreateExp(context, device(), &desc, &cb));
  const uint32_t v = 5;
  ur_event_handle_t signal = nullptr;
  ASSERT_SUCCESS(urCommandBufferAppendUSMFillExp(cb, mem[1], &v, 4, kWords * 4, 0, nullptr, 0, nullptr, nullptr,
                                                 &signal, nullptr));
  ASSERT_SUCCESS(urCommandBufferFinalizeExp(cb));
  if (!hold(queue)) {
    EXPECT_SUCCESS(urEventRelease(signal));
    EXPECT_SUCCESS(urCommandBufferReleaseExp(cb));
    GTEST_SKIP() << found().label() << " has no host tasks (urEnqueueHostTaskExp)";
  }
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr));
  CallbackLog log;
  ur_result_t r = urEventSetCallback(signal, UR_EXECUTION_INFO_COMPLETE, log_callback, &log);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    open_gate();
    EXPECT_SUCCESS(urEventRelease(signal));
    EXPECT_SUCCESS(urCommandBufferReleaseExp(cb));
    GTEST_SKIP() << found().label() << ": urEventSetCallback unsupported";
  }
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urEnqueueCommandBufferExp(queue, cb, 0, nullptr, nullptr)); // rebinds the signal event
  EXPECT_SUCCESS(urEventRelease(signal));
  EXPECT_SUCCESS(urCommandBufferReleaseExp(cb)); // its command's reference goes too
  open_gate();
  ASSERT_TRUE(log.wait_for(1)) << "the callback never ran";
  ASSERT_SUCCESS(urQueueFinish(queue));
  std::vector<Seen> seen = log.copy();
  EXPECT_EQ(1u, seen.size());
  expect_users_handle(seen, signal, context);
  EXPECT_TRUE(all(1, v));
}

// Item 10: registered COMPLETE, then RUNNING, then SUBMITTED, the callbacks of one
// event still run SUBMITTED, RUNNING, COMPLETE.
TEST_P(urCaptureAndCallbacksTest, CallbacksRunInStatusOrder) {
  if (!hold(queue)) GTEST_SKIP() << found().label() << " has no host tasks (urEnqueueHostTaskExp)";
  const uint32_t v = 6;
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[1], 4, &v, kWords * 4, 0, nullptr, &e));
  CallbackLog log;
  size_t registered = 0;
  for (ur_execution_info_t s : {UR_EXECUTION_INFO_COMPLETE, UR_EXECUTION_INFO_RUNNING, UR_EXECUTION_INFO_SUBMITTED}) {
    ur_result_t r = urEventSetCallback(e, s, log_callback, &log);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE || r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) continue;
    ASSERT_SUCCESS(r);
    ++registered;
  }
  open_gate();
  if (registered < 2) {
    EXPECT_SUCCESS(urEventWait(1, &e));
    EXPECT_SUCCESS(urEventRelease(e));
    GTEST_SKIP() << found().label() << " takes fewer than two kinds of callback";
  }
  ASSERT_TRUE(log.wait_for(registered)) << "not every callback ran";
  EXPECT_SUCCESS(urEventWait(1, &e));
  EXPECT_SUCCESS(urEventRelease(e));
  std::vector<Seen> seen = log.copy();
  ASSERT_EQ(registered, seen.size());
  for (size_t i = 1; i < seen.size(); ++i)
    EXPECT_GT(int(seen[i - 1].status), int(seen[i].status))
        << "callback " << i - 1 << " (status " << seen[i - 1].status << ") ran before callback " << i << " (status "
        << seen[i].status << ")";
  for (const Seen &s : seen) EXPECT_EQ(e, s.event);
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urCaptureAndCallbacksTest);
