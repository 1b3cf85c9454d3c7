// SPDX-License-Identifier: Apache-2.0
// The scheduler: in-order chains, out-of-order dependencies, concurrency on an
// out-of-order queue, and no busy-waiting.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuScheduler : public NativeCpu {};

// A host task that appends its tag to a shared sequence.
struct Recorder {
  std::mutex mu;
  std::vector<int> order;
  struct Tag {
    Recorder *r;
    int id;
  };
  std::vector<Tag> tags;
  Recorder() { tags.reserve(256); }
  Tag *tag(int id) {
    tags.push_back({this, id});
    return &tags.back();
  }
  static void task(void *p) {
    auto *t = static_cast<Tag *>(p);
    std::lock_guard<std::mutex> lock(t->r->mu);
    t->r->order.push_back(t->id);
  }
};

TEST_F(NativeCpuScheduler, InOrderQueueRunsCommandsInOrder) {
  ur_queue_handle_t q = make_queue();
  Recorder rec;
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Recorder::task, rec.tag(i), nullptr, 0, nullptr, nullptr),
              UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  ASSERT_EQ(rec.order.size(), 200u);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(rec.order[i], i);
}

TEST_F(NativeCpuScheduler, InOrderKernelChainSeesEachPreviousResult) {
  ur_kernel_handle_t inc = kernel(build_program(test_kernels_path()), "increment");
  ur_queue_handle_t q = make_queue();
  const size_t n = 1 << 12;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(data, data + n, 0u);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], 100u);
}

// A diamond on an out-of-order queue: b and c after a, d after both.
TEST_F(NativeCpuScheduler, OutOfOrderQueueFollowsWaitLists) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  for (int round = 0; round < 50; ++round) {
    Recorder rec;
    ur_event_handle_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Recorder::task, rec.tag(0), nullptr, 0, nullptr, &a),
              UR_RESULT_SUCCESS);
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Recorder::task, rec.tag(1), nullptr, 1, &a, &b), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Recorder::task, rec.tag(1), nullptr, 1, &a, &c), UR_RESULT_SUCCESS);
    ur_event_handle_t bc[2] = {b, c};
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Recorder::task, rec.tag(2), nullptr, 2, bc, &d), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(d).Event.pfnWait(1, &d), UR_RESULT_SUCCESS);
    std::lock_guard<std::mutex> lock(rec.mu);
    ASSERT_EQ(rec.order, (std::vector<int>{0, 1, 1, 2}));
    for (auto e : {a, b, c, d}) T(e).Event.pfnRelease(e);
  }
}

// Two commands of an out-of-order queue without dependencies run at the same
// time: the first waits for a signal only the second gives.
TEST_F(NativeCpuScheduler, OutOfOrderCommandsRunConcurrently) {
  NCPU_REQUIRE_WORKERS(2);
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Gate gate;
  ur_event_handle_t waiting = nullptr, opener = nullptr;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, &waiting),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(
                q, [](void *g) { static_cast<Gate *>(g)->open(); }, &gate, nullptr, 0, nullptr, &opener),
            UR_RESULT_SUCCESS);
  ur_event_handle_t both[2] = {waiting, opener};
  ASSERT_EQ(T(q).Event.pfnWait(2, both), UR_RESULT_SUCCESS);
  T(q).Event.pfnRelease(waiting);
  T(q).Event.pfnRelease(opener);
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// While commands wait for a dependency, nothing spins: the process uses almost no
// CPU time. (A bound on CPU time, not on speed.)
TEST_F(NativeCpuScheduler, WaitingCommandsDoNotSpin) {
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t held = nullptr;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, &held), UR_RESULT_SUCCESS);
  ur_queue_handle_t other = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(T(other).Enqueue.pfnEventsWait(other, 1, &held, nullptr), UR_RESULT_SUCCESS);
  std::thread waiter([&] { T(held).Event.pfnWait(1, &held); });
  double before = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double used = cpu_seconds() - before;
  gate.open();
  waiter.join();
  EXPECT_LT(used, 0.1) << "CPU seconds used while everything was waiting";
  T(held).Event.pfnRelease(held);
}

TEST_F(NativeCpuScheduler, FinishWaitsForEveryCommandOfAnOutOfOrderQueue) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  static std::atomic<int> done{0};
  done = 0;
  auto slow = [](void *) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    done++;
  };
  for (int i = 0; i < 40; ++i)
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, slow, nullptr, nullptr, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(done.load(), 40);
}

// Commands queued from a callback of another command.
TEST_F(NativeCpuScheduler, EnqueueFromACallback) {
  ur_queue_handle_t q = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  struct State {
    ur_queue_handle_t q;
    std::atomic<ur_event_handle_t> follow_up{nullptr};
  } state{q, {}};
  ur_event_handle_t first = nullptr;
  Gate gate;
  ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, &first), UR_RESULT_SUCCESS);
  auto cb = [](ur_event_handle_t, ur_execution_info_t, void *p) {
    auto *s = static_cast<State *>(p);
    ur_event_handle_t e = nullptr;
    T(s->q).Enqueue.pfnEventsWait(s->q, 0, nullptr, &e);
    s->follow_up = e;
  };
  ASSERT_EQ(T(first).Event.pfnSetCallback(first, UR_EXECUTION_INFO_COMPLETE, cb, &state), UR_RESULT_SUCCESS);
  gate.open();
  for (int i = 0; i < 2000 && !state.follow_up.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ur_event_handle_t e = state.follow_up.load();
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(T(e).Event.pfnWait(1, &e), UR_RESULT_SUCCESS);
  T(e).Event.pfnRelease(e);
  T(first).Event.pfnRelease(first);
}

} // namespace
