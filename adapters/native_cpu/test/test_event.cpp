// SPDX-License-Identifier: Apache-2.0
// Events: status, waiting, callbacks, profiling, failure, markers and barriers.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuEvent : public NativeCpu {
protected:
  ur_event_status_t status(ur_event_handle_t ev) {
    ur_event_status_t s{};
    EXPECT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr),
              UR_RESULT_SUCCESS);
    return s;
  }
  ur_event_handle_t gated_task(ur_queue_handle_t q, Gate &gate, uint32_t n = 0,
                               const ur_event_handle_t *waits = nullptr) {
    ur_event_handle_t ev = nullptr;
    EXPECT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, n, waits, &ev), UR_RESULT_SUCCESS);
    return ev;
  }
  // A failed command: the fail_at kernel returns an error from work-item 0.
  ur_event_handle_t failing_launch(ur_queue_handle_t q, uint32_t n = 0, const ur_event_handle_t *waits = nullptr) {
    if (!fail_kernel) fail_kernel = kernel(build_program(extra_kernels_path()), "fail_at");
    auto *out = static_cast<uint32_t *>(shared_alloc(64 * sizeof(uint32_t)));
    uint32_t bad = 0;
    size_t global = 64;
    ur_event_handle_t ev = nullptr;
    EXPECT_EQ(launch(q, fail_kernel, 1, &global, nullptr, {pointer_arg(0, out), value_arg(1, sizeof bad, &bad)}, n,
                     waits, &ev),
              UR_RESULT_SUCCESS);
    return ev;
  }
  ur_kernel_handle_t fail_kernel = nullptr;
};

TEST_F(NativeCpuEvent, InfoOfACompletedMarker) {
  ur_queue_handle_t q = make_queue();
  ur_event_handle_t ev = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, nullptr, &ev), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(ev), UR_EVENT_STATUS_COMPLETE);
  ur_queue_handle_t eq = nullptr;
  ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_QUEUE, sizeof eq, &eq, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(eq, q);
  ur_context_handle_t ec = nullptr;
  ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_CONTEXT, sizeof ec, &ec, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(ec, context);
  ur_command_t type{};
  ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(type, UR_COMMAND_EVENTS_WAIT);
  ASSERT_EQ(T(ev).Event.pfnRetain(ev), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u);
  EXPECT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_FORCE_UINT32, sizeof refs, &refs, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  ASSERT_EQ(T(ev).Event.pfnRelease(ev), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ev).Event.pfnRelease(ev), UR_RESULT_SUCCESS);
  EXPECT_EQ(ddi().Event.pfnRelease(ev), UR_RESULT_ERROR_INVALID_EVENT);
  EXPECT_EQ(ddi().Event.pfnWait(1, &ev), UR_RESULT_ERROR_INVALID_EVENT);
}

TEST_F(NativeCpuEvent, WaitArgumentErrors) {
  ur_event_handle_t ev = nullptr;
  EXPECT_EQ(ddi().Event.pfnWait(1, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(ddi().Event.pfnWait(0, &ev), UR_RESULT_ERROR_INVALID_VALUE);
  ur_queue_handle_t q = make_queue();
  int bogus;
  ur_event_handle_t bad = reinterpret_cast<ur_event_handle_t>(&bogus);
  EXPECT_EQ(T(q).Enqueue.pfnEventsWait(q, 1, &bad, &ev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(T(q).Enqueue.pfnEventsWait(q, 1, nullptr, &ev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, &bad, &ev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(ev, nullptr);
  ur_bool_t empty = 0;
  ASSERT_EQ(T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_EMPTY, sizeof empty, &empty, nullptr), UR_RESULT_SUCCESS);
  EXPECT_TRUE(empty); // nothing was enqueued by the refused calls
}

TEST_F(NativeCpuEvent, StatusMovesFromRunningToComplete) {
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t first = gated_task(q, gate);
  ur_event_handle_t second = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, nullptr, &second), UR_RESULT_SUCCESS);
  // The gated task may not have been picked up yet; it is never complete.
  ur_event_status_t s = status(first);
  EXPECT_TRUE(s == UR_EVENT_STATUS_RUNNING || s == UR_EVENT_STATUS_SUBMITTED) << s;
  EXPECT_EQ(status(second), UR_EVENT_STATUS_QUEUED); // waits for the first (in-order)
  gate.open();
  ASSERT_EQ(T(second).Event.pfnWait(1, &second), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(first), UR_EVENT_STATUS_COMPLETE);
  EXPECT_EQ(status(second), UR_EVENT_STATUS_COMPLETE);
  ur_event_handle_t both[2] = {first, second};
  EXPECT_EQ(T(first).Event.pfnWait(2, both), UR_RESULT_SUCCESS);
  T(first).Event.pfnRelease(first);
  T(second).Event.pfnRelease(second);
}

struct CallbackLog {
  std::mutex mu;
  std::vector<ur_execution_info_t> seen;
  std::atomic<int> count{0};
  std::atomic<bool> on_caller_thread{false};
  pthread_t caller = pthread_self();
  static void callback(ur_event_handle_t, ur_execution_info_t status, void *self) {
    auto *log = static_cast<CallbackLog *>(self);
    {
      std::lock_guard<std::mutex> lock(log->mu);
      log->seen.push_back(status);
    }
    if (pthread_equal(pthread_self(), log->caller)) log->on_caller_thread = true;
    log->count++;
  }
};

TEST_F(NativeCpuEvent, CallbacksFireOnceFromAWorkerOrAtOnce) {
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t ev = gated_task(q, gate);
  CallbackLog log;
  ASSERT_EQ(T(ev).Event.pfnSetCallback(ev, UR_EXECUTION_INFO_COMPLETE, CallbackLog::callback, &log), UR_RESULT_SUCCESS);
  EXPECT_EQ(log.count.load(), 0);
  gate.open();
  ASSERT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  // The callback runs on the worker before the event's resources go; give it the
  // moment between the wake-up of urEventWait and its call.
  for (int i = 0; i < 1000 && log.count.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(log.count.load(), 1);
  EXPECT_FALSE(log.on_caller_thread.load());
  // Registered after completion: called at once, on the registering thread.
  CallbackLog late;
  ASSERT_EQ(T(ev).Event.pfnSetCallback(ev, UR_EXECUTION_INFO_RUNNING, CallbackLog::callback, &late), UR_RESULT_SUCCESS);
  EXPECT_EQ(late.count.load(), 1);
  EXPECT_TRUE(late.on_caller_thread.load());
  EXPECT_EQ(T(ev).Event.pfnSetCallback(ev, UR_EXECUTION_INFO_QUEUED, CallbackLog::callback, &late),
            UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  EXPECT_EQ(T(ev).Event.pfnSetCallback(ev, UR_EXECUTION_INFO_FORCE_UINT32, CallbackLog::callback, &late),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(ev).Event.pfnSetCallback(ev, UR_EXECUTION_INFO_COMPLETE, nullptr, &late),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  T(ev).Event.pfnRelease(ev);
}

// Events go back to their queue once nothing holds them and are reused by later
// commands (docs/native-cpu.md, "The scheduler"): a reused event starts as a new one,
// and nothing of its previous command (its callbacks) comes with it.
TEST_F(NativeCpuEvent, RecycledEventsStartFresh) {
  ur_queue_handle_t q = make_queue();
  ur_kernel_handle_t empty = kernel(build_program(test_kernels_path()), "empty");
  const size_t one = 1;
  constexpr int kRounds = 4, kPerRound = 64;
  CallbackLog log;
  for (int round = 0; round < kRounds; ++round) {
    Gate gate;
    ur_event_handle_t held = gated_task(q, gate);
    std::vector<ur_event_handle_t> events(kPerRound, nullptr);
    for (auto &ev : events) {
      ASSERT_EQ(launch(q, empty, 1, &one, nullptr, {}), UR_RESULT_SUCCESS); // one without an event
      ASSERT_EQ(launch(q, empty, 1, &one, nullptr, {}, 0, nullptr, &ev), UR_RESULT_SUCCESS);
      EXPECT_EQ(status(ev), UR_EVENT_STATUS_QUEUED);
      uint32_t refs = 0;
      ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
                UR_RESULT_SUCCESS);
      EXPECT_EQ(refs, 1u);
      ur_command_t type{};
      ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr), UR_RESULT_SUCCESS);
      EXPECT_EQ(type, UR_COMMAND_KERNEL_LAUNCH);
      if (round == 0) {
        ASSERT_EQ(T(ev).Event.pfnSetCallback(ev, UR_EXECUTION_INFO_COMPLETE, CallbackLog::callback, &log),
                  UR_RESULT_SUCCESS);
      }
    }
    gate.open();
    ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    for (auto ev : events) {
      EXPECT_EQ(status(ev), UR_EVENT_STATUS_COMPLETE);
      T(ev).Event.pfnRelease(ev);
    }
    T(held).Event.pfnRelease(held);
  }
  // Callbacks run on the worker just before their event's resources go.
  for (int i = 0; i < 1000 && log.count.load() < kPerRound; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(log.count.load(), kPerRound);
}

TEST_F(NativeCpuEvent, CallbacksForEachStageFireInOrder) {
  ur_queue_handle_t q = make_queue();
  Gate before, task;
  ur_event_handle_t blocker = gated_task(q, before);
  ur_event_handle_t ev = gated_task(q, task); // queued behind the blocker
  CallbackLog log;
  for (auto when : {UR_EXECUTION_INFO_COMPLETE, UR_EXECUTION_INFO_RUNNING, UR_EXECUTION_INFO_SUBMITTED})
    ASSERT_EQ(T(ev).Event.pfnSetCallback(ev, when, CallbackLog::callback, &log), UR_RESULT_SUCCESS);
  EXPECT_EQ(log.count.load(), 0);
  before.open();
  task.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (int i = 0; i < 1000 && log.count.load() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::lock_guard<std::mutex> lock(log.mu);
  ASSERT_EQ(log.seen.size(), 3u);
  EXPECT_EQ(log.seen[0], UR_EXECUTION_INFO_SUBMITTED);
  EXPECT_EQ(log.seen[1], UR_EXECUTION_INFO_RUNNING);
  EXPECT_EQ(log.seen[2], UR_EXECUTION_INFO_COMPLETE);
  T(ev).Event.pfnRelease(ev);
  T(blocker).Event.pfnRelease(blocker);
}

TEST_F(NativeCpuEvent, ProfilingTimestampsAreOrderedNanoseconds) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_PROFILING_ENABLE);
  ur_kernel_handle_t k = kernel(build_program(test_kernels_path()), "fill");
  auto *out = static_cast<uint32_t *>(shared_alloc(4096 * sizeof(uint32_t)));
  uint32_t value = 3;
  size_t global = 4096;
  uint64_t host_before = 0, host_after = 0, dev = 0;
  ASSERT_EQ(T(device).Device.pfnGetGlobalTimestamps(device, &dev, &host_before), UR_RESULT_SUCCESS);
  ur_event_handle_t ev = nullptr;
  ASSERT_EQ(launch(q, k, 1, &global, nullptr, {pointer_arg(0, out), value_arg(1, 4, &value)}, 0, nullptr, &ev),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(device).Device.pfnGetGlobalTimestamps(device, &dev, &host_after), UR_RESULT_SUCCESS);
  uint64_t t[5];
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, static_cast<ur_profiling_info_t>(i), sizeof t[i], &t[i], nullptr),
              UR_RESULT_SUCCESS)
        << i;
  EXPECT_LE(host_before, t[0]);
  for (int i = 1; i < 5; ++i) EXPECT_LE(t[i - 1], t[i]) << i;
  EXPECT_LE(t[4], host_after);
  size_t size = 0;
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_END, 0, nullptr, &size), UR_RESULT_SUCCESS);
  EXPECT_EQ(size, sizeof(uint64_t));
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_END, 0, &t[0], nullptr),
            UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_FORCE_UINT32, 8, &t[0], nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  T(ev).Event.pfnRelease(ev);

  ur_queue_handle_t plain = make_queue();
  ASSERT_EQ(T(plain).Enqueue.pfnEventsWait(plain, 0, nullptr, &ev), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_START, 8, &t[0], nullptr),
            UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
  T(ev).Event.pfnRelease(ev);
}

TEST_F(NativeCpuEvent, EndTimeIsUnavailableUntilTheCommandEnds) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_PROFILING_ENABLE);
  Gate gate;
  ur_event_handle_t ev = gated_task(q, gate);
  uint64_t t = 0;
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_QUEUED, 8, &t, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_END, 8, &t, nullptr),
            UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
  gate.open();
  ASSERT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(ev).Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_END, 8, &t, nullptr), UR_RESULT_SUCCESS);
  T(ev).Event.pfnRelease(ev);
}

// The user may release an event whose command is still pending: the command runs.
TEST_F(NativeCpuEvent, ReleasedPendingEventStillRuns) {
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t blocker = gated_task(q, gate);
  static std::atomic<int> ran{0};
  ran = 0;
  ur_event_handle_t ev = nullptr;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(
                q, [](void *) { ran++; }, nullptr, nullptr, 0, nullptr, &ev),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ev).Event.pfnRelease(ev), UR_RESULT_SUCCESS);
  EXPECT_EQ(ddi().Event.pfnRetain(ev), UR_RESULT_ERROR_INVALID_EVENT); // gone for the user
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(ran.load(), 1);
  T(blocker).Event.pfnRelease(blocker);
}

TEST_F(NativeCpuEvent, FailedCommandFailsItsDependentsWithoutRunningThem) {
  ur_queue_handle_t ooo = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Gate gate;
  ur_event_handle_t hold = gated_task(ooo, gate);
  ur_event_handle_t failed = failing_launch(ooo, 1, &hold); // fails once it runs
  static std::atomic<int> ran{0};
  ran = 0;
  ur_event_handle_t dependent = nullptr;
  ASSERT_EQ(T(ooo).EnqueueExp.pfnHostTaskExp(
                ooo, [](void *) { ran++; }, nullptr, nullptr, 1, &failed, &dependent),
            UR_RESULT_SUCCESS);
  gate.open();
  EXPECT_EQ(T(failed).Event.pfnWait(1, &failed), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(T(dependent).Event.pfnWait(1, &dependent), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(status(failed), UR_EVENT_STATUS_ERROR);
  EXPECT_EQ(status(dependent), UR_EVENT_STATUS_ERROR);
  EXPECT_EQ(ran.load(), 0);
  ur_event_handle_t mixed[2] = {hold, failed};
  EXPECT_EQ(T(hold).Event.pfnWait(2, mixed), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(T(hold).Event.pfnWait(1, &hold), UR_RESULT_SUCCESS);

  // Enqueueing behind an event that has already failed is refused and changes nothing.
  ur_event_handle_t refused = nullptr;
  EXPECT_EQ(T(ooo).Enqueue.pfnEventsWait(ooo, 1, &failed, &refused), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(refused, nullptr);
  for (auto e : {hold, failed, dependent}) T(e).Event.pfnRelease(e);
}

// urEvent* are ur_common/event.hpp's with the hooks of a task-graph event: a wait list
// with a failed command is still waited for whole; urEventSetCallback refuses a null
// pfnNotify before the execution status (the spec's order); the native handle is the
// event handle, and only a live event of the given context is adopted from it (0 makes
// a complete event of its own).
TEST_F(NativeCpuEvent, TaskGraphEventHooks) {
  ur_queue_handle_t ooo = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ur_event_handle_t failed = failing_launch(ooo);
  ASSERT_EQ(T(failed).Event.pfnWait(1, &failed), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  Gate gate;
  ur_event_handle_t pending = gated_task(ooo, gate);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open();
  });
  ur_event_handle_t both[2] = {failed, pending};
  EXPECT_EQ(T(failed).Event.pfnWait(2, both), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(status(pending), UR_EVENT_STATUS_COMPLETE); // waited for after the failed one
  opener.join();

  auto bad_status = static_cast<ur_execution_info_t>(UR_EXECUTION_INFO_QUEUED + 1);
  EXPECT_EQ(T(pending).Event.pfnSetCallback(pending, bad_status, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  ur_event_callback_t noop = [](ur_event_handle_t, ur_execution_info_t, void *) {};
  EXPECT_EQ(T(pending).Event.pfnSetCallback(pending, bad_status, noop, nullptr), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(T(pending).Event.pfnSetCallback(pending, UR_EXECUTION_INFO_QUEUED, noop, nullptr),
            UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  uint64_t t = 0;
  EXPECT_EQ(T(pending).Event.pfnGetProfilingInfo(pending, UR_PROFILING_INFO_COMMAND_END, sizeof t, &t, nullptr),
            UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE); // not a profiling queue

  ur_native_handle_t native = 0;
  EXPECT_EQ(T(pending).Event.pfnGetNativeHandle(pending, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  ASSERT_EQ(T(pending).Event.pfnGetNativeHandle(pending, &native), UR_RESULT_SUCCESS);
  EXPECT_EQ(native, reinterpret_cast<ur_native_handle_t>(pending));
  ur_event_handle_t adopted = nullptr;
  EXPECT_EQ(ddi().Event.pfnCreateWithNativeHandle(native, nullptr, nullptr, &adopted),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(ddi().Event.pfnCreateWithNativeHandle(native, context, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  // 0: an event of the context with no command, complete (ur_common/event.hpp).
  ur_event_handle_t none = nullptr, after = nullptr;
  ASSERT_EQ(ddi().Event.pfnCreateWithNativeHandle(0, context, nullptr, &none), UR_RESULT_SUCCESS);
  EXPECT_NE(none, pending);
  EXPECT_EQ(status(none), UR_EVENT_STATUS_COMPLETE);
  ur_native_handle_t none_native = 1;
  EXPECT_EQ(T(none).Event.pfnGetNativeHandle(none, &none_native), UR_RESULT_SUCCESS);
  EXPECT_EQ(none_native, 0u);
  EXPECT_EQ(T(ooo).Enqueue.pfnEventsWait(ooo, 1, &none, &after), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(after).Event.pfnWait(1, &after), UR_RESULT_SUCCESS);
  for (auto e : {after, none}) EXPECT_EQ(T(e).Event.pfnRelease(e), UR_RESULT_SUCCESS);
  ur_context_handle_t other = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &other), UR_RESULT_SUCCESS);
  EXPECT_EQ(ddi().Event.pfnCreateWithNativeHandle(native, other, nullptr, &adopted), UR_RESULT_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(ddi().Context.pfnRelease(other), UR_RESULT_SUCCESS);
  ASSERT_EQ(ddi().Event.pfnCreateWithNativeHandle(native, context, nullptr, &adopted), UR_RESULT_SUCCESS);
  EXPECT_EQ(adopted, pending);
  uint32_t refs = 0;
  ASSERT_EQ(T(pending).Event.pfnGetInfo(pending, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u); // not owned: a reference of its own
  for (auto e : {adopted, pending, failed}) EXPECT_EQ(T(e).Event.pfnRelease(e), UR_RESULT_SUCCESS);
  EXPECT_EQ(ddi().Event.pfnRelease(pending), UR_RESULT_ERROR_INVALID_EVENT);
}

TEST_F(NativeCpuEvent, FailureFollowsTheInOrderChain) {
  ur_queue_handle_t q = make_queue();
  ur_event_handle_t failed = failing_launch(q);
  ur_event_handle_t next = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, nullptr, &next), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(next).Event.pfnWait(1, &next), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(status(failed), UR_EVENT_STATUS_ERROR);
  EXPECT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  T(failed).Event.pfnRelease(failed);
  T(next).Event.pfnRelease(next);
}

// On an out-of-order queue an empty-wait-list marker waits for everything before it,
// but does not hold back what comes after; a barrier does both.
TEST_F(NativeCpuEvent, MarkersAndBarriersOnAnOutOfOrderQueue) {
  NCPU_REQUIRE_WORKERS(2);
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Gate gate;
  ur_event_handle_t held = gated_task(q, gate);
  ur_event_handle_t marker = nullptr, after_marker = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, nullptr, &marker), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Enqueue.pfnEventsWait(q, 1, &held, nullptr), UR_RESULT_SUCCESS);
  // An independent command after a marker is free to run at once.
  static std::atomic<int> ran{0};
  ran = 0;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(
                q, [](void *) { ran++; }, nullptr, nullptr, 0, nullptr, &after_marker),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(after_marker).Event.pfnWait(1, &after_marker), UR_RESULT_SUCCESS);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(status(marker), UR_EVENT_STATUS_QUEUED);

  ur_event_handle_t barrier = nullptr, after_barrier = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWaitWithBarrier(q, 0, nullptr, &barrier), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(
                q, [](void *) { ran++; }, nullptr, nullptr, 0, nullptr, &after_barrier),
            UR_RESULT_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ran.load(), 1); // held back by the barrier
  EXPECT_EQ(status(after_barrier), UR_EVENT_STATUS_QUEUED);
  gate.open();
  ASSERT_EQ(T(after_barrier).Event.pfnWait(1, &after_barrier), UR_RESULT_SUCCESS);
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(status(marker), UR_EVENT_STATUS_COMPLETE);
  EXPECT_EQ(status(barrier), UR_EVENT_STATUS_COMPLETE);
  ur_command_t type{};
  T(barrier).Event.pfnGetInfo(barrier, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr);
  EXPECT_EQ(type, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER);
  for (auto e : {held, marker, after_marker, barrier, after_barrier}) T(e).Event.pfnRelease(e);
}

TEST_F(NativeCpuEvent, BarrierWithAWaitListWaitsOnlyForIt) {
  NCPU_REQUIRE_WORKERS(2);
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Gate forever, listed;
  ur_event_handle_t unrelated = gated_task(q, forever);
  ur_event_handle_t waited = gated_task(q, listed);
  ur_exp_enqueue_ext_properties_t props{UR_STRUCTURE_TYPE_EXP_ENQUEUE_EXT_PROPERTIES, nullptr,
                                        UR_EXP_ENQUEUE_EXT_FLAG_LOW_POWER_EVENTS_SUPPORT};
  ur_event_handle_t barrier = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWaitWithBarrierExt(q, &props, 1, &waited, &barrier), UR_RESULT_SUCCESS);
  listed.open();
  ASSERT_EQ(T(barrier).Event.pfnWait(1, &barrier), UR_RESULT_SUCCESS);
  // The barrier is complete while the unrelated task is still held: not complete. (A
  // loaded machine may not have started it on its worker yet: SUBMITTED or RUNNING.)
  const ur_event_status_t unrelated_status = status(unrelated);
  EXPECT_TRUE(unrelated_status == UR_EVENT_STATUS_RUNNING || unrelated_status == UR_EVENT_STATUS_SUBMITTED)
      << unrelated_status;
  props.flags = 1; // not a defined flag
  ur_event_handle_t refused = nullptr;
  EXPECT_EQ(T(q).Enqueue.pfnEventsWaitWithBarrierExt(q, &props, 0, nullptr, &refused),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  forever.open();
  // The gates are this function's: their tasks end before they go.
  EXPECT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (auto e : {unrelated, waited, barrier}) T(e).Event.pfnRelease(e);
}

TEST_F(NativeCpuEvent, WaitListsAcrossQueues) {
  ur_queue_handle_t a = make_queue(), b = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Gate gate;
  ur_event_handle_t on_a = gated_task(a, gate);
  ur_event_handle_t on_b = nullptr;
  ASSERT_EQ(T(b).Enqueue.pfnEventsWait(b, 1, &on_a, &on_b), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(on_b), UR_EVENT_STATUS_QUEUED);
  gate.open();
  ASSERT_EQ(T(on_b).Event.pfnWait(1, &on_b), UR_RESULT_SUCCESS);
  EXPECT_EQ(status(on_a), UR_EVENT_STATUS_COMPLETE);
  T(on_a).Event.pfnRelease(on_a);
  T(on_b).Event.pfnRelease(on_b);
}

} // namespace
