// SPDX-License-Identifier: Apache-2.0
// Launches that join a batch (docs/native-cpu.md, "The scheduler"): plain
// launches on an in-order queue share one command while it is open. They must
// keep every semantic of a launch of its own: queue order, their own arguments,
// failure poisoning what follows, events of later commands, kernels released
// right after the enqueue, and any thread enqueueing or waiting at any time.
#include <atomic>
#include <thread>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuLaunchBatch : public NativeCpu {
protected:
  void SetUp() override {
    NativeCpu::SetUp();
    common = build_program(test_kernels_path());
    extra = build_program(extra_kernels_path());
    q = make_queue();
  }
  // Holds the queue behind a host task, so that the launches after it all join
  // one open batch (or several: a batch has room for 64).
  void hold_queue(Gate &gate) {
    ASSERT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, nullptr),
              UR_RESULT_SUCCESS);
  }
  ur_program_handle_t common = nullptr, extra = nullptr;
  ur_queue_handle_t q = nullptr;
};

// Each launch runs with the arguments and ND-range it was given (the caller's
// variables change right after each enqueue; consecutive launches of one kernel
// change sizes), in queue order: every fill before every increment.
TEST_F(NativeCpuLaunchBatch, LaunchesKeepTheirArgumentsRangesAndOrder) {
  ur_kernel_handle_t fill = kernel(common, "fill"), inc = kernel(common, "increment");
  const size_t slots = 300; // several batches
  auto global_of = [](uint32_t i) -> size_t {
    return i % 3 == 0 ? 4 : 1; // runs of equal ranges, and changes
  };
  auto *out = static_cast<uint32_t *>(shared_alloc(slots * 4 * sizeof(uint32_t)));
  std::fill(out, out + slots * 4, 0u);
  Gate gate;
  hold_queue(gate);
  for (uint32_t i = 0; i < slots; ++i) {
    uint32_t value = i;
    size_t global = global_of(i);
    ASSERT_EQ(launch(q, fill, 1, &global, nullptr, {pointer_arg(0, out + 4 * i), value_arg(1, 4, &value)}),
              UR_RESULT_SUCCESS);
    value = 0xdead; // after the enqueue: must reach no launch
    global = 3;
  }
  for (uint32_t i = 0; i < slots; ++i) {
    const size_t global = global_of(i);
    ASSERT_EQ(launch(q, inc, 1, &global, nullptr, {pointer_arg(0, out + 4 * i)}), UR_RESULT_SUCCESS);
  }
  EXPECT_EQ(out[0], 0u); // nothing ran behind the host task
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (uint32_t i = 0; i < slots; ++i)
    for (size_t j = 0; j < 4; ++j)
      ASSERT_EQ(out[4 * i + j], j < global_of(i) ? i + 1 : 0u) << "slot " << i << " item " << j;
}

// A launch that fails ends its batch in error: the launches after it do not
// run, and a later command's event reports the failure, as if each launch had
// been its own command.
TEST_F(NativeCpuLaunchBatch, AFailedLaunchPoisonsTheLaunchesAfterIt) {
  ur_kernel_handle_t inc = kernel(common, "increment"), fail_at = kernel(extra, "fail_at");
  const size_t n = 16;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  auto *marks = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(data, data + n, 0u);
  std::fill(marks, marks + n, 0u);
  Gate gate;
  hold_queue(gate);
  ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  uint32_t bad = 3;
  ASSERT_EQ(launch(q, fail_at, 1, &n, nullptr, {pointer_arg(0, marks), value_arg(1, 4, &bad)}), UR_RESULT_SUCCESS);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ur_event_handle_t ev = nullptr;
  ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}, 0, nullptr, &ev), UR_RESULT_SUCCESS);
  gate.open();
  EXPECT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  ur_event_status_t s{};
  ASSERT_EQ(T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(s, UR_EVENT_STATUS_ERROR);
  T(ev).Event.pfnRelease(ev);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(data[i], 1u) << i; // only the launch before the failure
}

// A command with an event after a batch waits for every launch of it, and a
// launch with an event (its own command) closes the batch: launches after it
// wait for it in turn.
TEST_F(NativeCpuLaunchBatch, EventsOfLaterCommandsFollowTheBatch) {
  ur_kernel_handle_t inc = kernel(common, "increment");
  const size_t n = 8;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(data, data + n, 0u);
  Gate gate;
  hold_queue(gate);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ur_event_handle_t middle = nullptr;
  ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}, 0, nullptr, &middle), UR_RESULT_SUCCESS);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ur_event_handle_t marker = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnEventsWait(q, 0, nullptr, &marker), UR_RESULT_SUCCESS);
  gate.open();
  ASSERT_EQ(T(middle).Event.pfnWait(1, &middle),
            UR_RESULT_SUCCESS); // (the 50 after it may be running)
  ASSERT_EQ(T(marker).Event.pfnWait(1, &marker), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(data[i], 151u) << i;
  T(middle).Event.pfnRelease(middle);
  T(marker).Event.pfnRelease(marker);
}

// The batch holds the kernel (and its program): releasing the handle right
// after the enqueue leaves the pending launches intact.
TEST_F(NativeCpuLaunchBatch, KernelReleasedAfterEnqueueStillRuns) {
  ur_kernel_handle_t inc = nullptr;
  ASSERT_EQ(T(common).Kernel.pfnCreate(common, "increment", &inc), UR_RESULT_SUCCESS);
  const size_t n = 8;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(data, data + n, 0u);
  Gate gate;
  hold_queue(gate);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(inc).Kernel.pfnRelease(inc), UR_RESULT_SUCCESS);
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(data[i], 20u) << i;
}

// Several threads launch on one in-order queue while another waits for it
// over and over: every launch runs exactly once and alone (the increments
// would race otherwise), and each urQueueFinish returns although launches
// keep coming.
TEST_F(NativeCpuLaunchBatch, ManyThreadsLaunchWhileAnotherFinishes) {
  ur_kernel_handle_t inc = kernel(common, "increment");
  const size_t n = 64;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(data, data + n, 0u);
  constexpr int kThreads = 3, kLaunches = 400;
  std::atomic<int> failures{0}, running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kLaunches; ++i)
        if (launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}) != UR_RESULT_SUCCESS) ++failures;
      --running;
    });
  do // each returns although launches keep coming (a hang fails the test by
     // its timeout)
    if (T(q).Queue.pfnFinish(q) != UR_RESULT_SUCCESS) ++failures;
  while (running.load() > 0);
  for (auto &t : threads) t.join();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(failures.load(), 0);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], uint32_t(kThreads * kLaunches)) << i;
}

// Bad input on the joining path gets the same results as on the full one.
TEST_F(NativeCpuLaunchBatch, ErrorsWhileABatchIsOpen) {
  ur_kernel_handle_t fill = kernel(common, "fill");
  const size_t n = 4, bad_local = 3;
  auto *out = static_cast<uint32_t *>(shared_alloc(n * 4));
  uint32_t value = 1;
  Gate gate;
  hold_queue(gate);
  ASSERT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, out), value_arg(1, 4, &value)}), UR_RESULT_SUCCESS);
  EXPECT_EQ(launch(q, fill, 1, &n, &bad_local, {pointer_arg(0, out), value_arg(1, 4, &value)}),
            UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, out)}), UR_RESULT_ERROR_INVALID_KERNEL_ARGS);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, out), value_arg(1, 2, &value)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
  EXPECT_EQ(launch(q, fill, 0, &n, nullptr, {pointer_arg(0, out), value_arg(1, 4, &value)}),
            UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
  gate.open();
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], 1u);
}

// A released handle is refused on the launch path (the registry's inline look-up) by
// every thread that used it, and once its storage is reused (after kRetiredHandlesKept
// later retirements, ordo/retired_handles.hpp) the new object at the same address is
// accepted, here and on another thread: the look-up keeps no stale answer per address.
TEST_F(NativeCpuLaunchBatch, ReleasedHandleRefusedAndReusedAddressAcceptedOnEveryThread) {
  const ur_dditable_t &t = ddi();
  ur_kernel_handle_t empty = kernel(common, "empty");
  const size_t one = 1;
  auto launch_on = [&](ur_queue_handle_t queue, ur_kernel_handle_t k) {
    return t.EnqueueExp.pfnKernelLaunchWithArgsExp(queue, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr, 0, nullptr,
                                                   nullptr);
  };
  auto from_other_thread = [&](ur_queue_handle_t queue, ur_kernel_handle_t k) {
    ur_result_t r = UR_RESULT_ERROR_UNKNOWN;
    std::thread([&] { r = launch_on(queue, k); }).join();
    return r;
  };
  auto new_queue = [&] {
    ur_queue_handle_t queue = nullptr;
    EXPECT_EQ(t.Queue.pfnCreate(context, device, nullptr, &queue), UR_RESULT_SUCCESS);
    return queue;
  };
  auto new_kernel = [&] {
    ur_kernel_handle_t k = nullptr;
    EXPECT_EQ(t.Kernel.pfnCreate(common, "empty", &k), UR_RESULT_SUCCESS);
    return k;
  };
  // Retires enough objects (contexts: storage of another size, which the released queue's
  // and kernel's do not serve) that the oldest kept storage, theirs, is freed.
  auto retire_many = [&] {
    for (size_t i = 0; i <= 1024; ++i) {
      ur_context_handle_t c = nullptr;
      ASSERT_EQ(t.Context.pfnCreate(1, &device, nullptr, &c), UR_RESULT_SUCCESS);
      ASSERT_EQ(t.Context.pfnRelease(c), UR_RESULT_SUCCESS);
    }
  };

  ur_queue_handle_t old_queue = new_queue();
  ur_kernel_handle_t old_kernel = new_kernel();
  for (int i = 0; i < 3; ++i) { // both threads use (and look up) both handles
    ASSERT_EQ(launch_on(old_queue, old_kernel), UR_RESULT_SUCCESS);
    ASSERT_EQ(from_other_thread(old_queue, old_kernel), UR_RESULT_SUCCESS);
  }
  ASSERT_EQ(t.Queue.pfnFinish(old_queue), UR_RESULT_SUCCESS);
  ASSERT_EQ(t.Kernel.pfnRelease(old_kernel), UR_RESULT_SUCCESS);
  EXPECT_EQ(launch_on(old_queue, old_kernel), UR_RESULT_ERROR_INVALID_KERNEL);
  EXPECT_EQ(from_other_thread(old_queue, old_kernel), UR_RESULT_ERROR_INVALID_KERNEL);
  ASSERT_EQ(t.Queue.pfnRelease(old_queue), UR_RESULT_SUCCESS);
  EXPECT_EQ(launch_on(old_queue, empty), UR_RESULT_ERROR_INVALID_QUEUE);
  EXPECT_EQ(from_other_thread(old_queue, empty), UR_RESULT_ERROR_INVALID_QUEUE);

  retire_many();
  std::vector<ur_queue_handle_t> made_queues;
  std::vector<ur_kernel_handle_t> made_kernels;
  ur_queue_handle_t reused_queue = nullptr;
  ur_kernel_handle_t reused_kernel = nullptr;
  for (int i = 0; i < 64 && !(reused_queue && reused_kernel); ++i) {
    if (!reused_queue) {
      made_queues.push_back(new_queue());
      if (made_queues.back() == old_queue) reused_queue = old_queue;
    }
    if (!reused_kernel) {
      made_kernels.push_back(new_kernel());
      if (made_kernels.back() == old_kernel) reused_kernel = old_kernel;
    }
  }
  if (reused_queue && reused_kernel) {
    EXPECT_EQ(launch_on(reused_queue, reused_kernel), UR_RESULT_SUCCESS);
    EXPECT_EQ(from_other_thread(reused_queue, reused_kernel), UR_RESULT_SUCCESS);
    EXPECT_EQ(t.Queue.pfnFinish(reused_queue), UR_RESULT_SUCCESS);
  }
  for (ur_queue_handle_t queue : made_queues) EXPECT_EQ(t.Queue.pfnRelease(queue), UR_RESULT_SUCCESS);
  for (ur_kernel_handle_t k : made_kernels) EXPECT_EQ(t.Kernel.pfnRelease(k), UR_RESULT_SUCCESS);
  if (!reused_queue || !reused_kernel)
    GTEST_SKIP() << "the allocator gave no new " << (reused_queue ? "kernel" : "queue")
                 << " the released one's address; the refusals above were checked";
}

} // namespace
