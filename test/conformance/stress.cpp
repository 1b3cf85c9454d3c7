// SPDX-License-Identifier: Apache-2.0
// Concurrency: several threads at once create objects, enqueue onto shared queues,
// wait and release. Run under ThreadSanitizer in CI (scripts/test).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;
using conf::ContextTest;

constexpr int kThreads = 8;

// Runs `body(thread index)` on kThreads threads started together.
template <class F> void run_threads(F body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      body(t);
    });
  for (std::thread &th : threads) th.join();
}

class urStressTest : public ContextTest {
protected:
  ur_queue_handle_t in_order = nullptr, out_of_order = nullptr;
  ur_program_handle_t program = nullptr;
  std::string program_problem;

  void SetUp() override {
    CONF_BASE_SETUP(ContextTest);
    ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &in_order));
    ur_queue_flags_t ooo = conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE)
                               ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE
                               : 0;
    ASSERT_SUCCESS(conf::make_queue(context, device(), ooo, &out_of_order));
    urinfo::TestProgram p = urinfo::load_test_program(conf::kernel_dir(), context, found());
    program = p.program;
    program_problem = p.problem();
  }
  void TearDown() override {
    for (ur_queue_handle_t q : {in_order, out_of_order})
      if (q) {
        EXPECT_SUCCESS(urQueueFinish(q));
        EXPECT_SUCCESS(urQueueRelease(q));
      }
    if (program) {
      EXPECT_SUCCESS(urProgramRelease(program));
    }
    ContextTest::TearDown();
  }
};

// Each thread: allocate, fill (or launch `fill`), increment, copy back, check, free,
// alternating between the two shared queues; events are waited on and released by the
// thread that made them.
TEST_P(urStressTest, SharedQueuesManyThreads) {
  const int iterations = 40;
  const size_t n = 4096;
  std::atomic<int> failures{0};
  run_threads([&](int t) {
    ur_kernel_handle_t fill = nullptr, inc = nullptr;
    if (program) {
      if (urKernelCreate(program, "fill", &fill) != UR_RESULT_SUCCESS) failures++;
      if (urKernelCreate(program, "increment", &inc) != UR_RESULT_SUCCESS) failures++;
    }
    std::vector<uint32_t> host(n);
    for (int i = 0; i < iterations && failures == 0; ++i) {
      ur_queue_handle_t q = (i + t) % 2 ? in_order : out_of_order;
      void *mem = nullptr;
      if (conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, n * 4, &mem) != UR_RESULT_SUCCESS) {
        failures++;
        break;
      }
      const uint32_t value = static_cast<uint32_t>(t * 1000 + i);
      ur_event_handle_t e1 = nullptr, e2 = nullptr, e3 = nullptr;
      ur_result_t r;
      if (fill && inc) {
        ur_exp_kernel_arg_properties_t fa[2] = {arg_pointer(0, mem), arg_value(1, 4, &value)};
        r = urEnqueueKernelLaunchWithArgsExp(q, fill, 1, nullptr, &n, nullptr, 2, fa, nullptr, 0, nullptr, &e1);
        ur_exp_kernel_arg_properties_t ia[1] = {arg_pointer(0, mem)};
        if (r == UR_RESULT_SUCCESS)
          r = urEnqueueKernelLaunchWithArgsExp(q, inc, 1, nullptr, &n, nullptr, 1, ia, nullptr, 1, &e1, &e2);
      } else {
        const uint32_t plus_one = value + 1;
        r = urEnqueueUSMFill(q, mem, 4, &value, n * 4, 0, nullptr, &e1);
        if (r == UR_RESULT_SUCCESS) r = urEnqueueUSMFill(q, mem, 4, &plus_one, n * 4, 1, &e1, &e2);
      }
      if (r == UR_RESULT_SUCCESS) r = urEnqueueUSMMemcpy(q, false, host.data(), mem, n * 4, 1, &e2, &e3);
      if (r == UR_RESULT_SUCCESS) r = urEventWait(1, &e3);
      if (r != UR_RESULT_SUCCESS || !std::all_of(host.begin(), host.end(), [&](uint32_t v) { return v == value + 1; }))
        failures++;
      for (ur_event_handle_t e : {e1, e2, e3})
        if (e) urEventRelease(e);
      if (urUSMFree(context, mem) != UR_RESULT_SUCCESS) failures++;
    }
    if (fill) urKernelRelease(fill);
    if (inc) urKernelRelease(inc);
  });
  EXPECT_EQ(0, failures.load());
  if (!program) std::printf("(kernels not used: %s)\n", program_problem.c_str());
}

// Each thread makes and drops its own contexts and queues while the others work.
TEST_P(urStressTest, CreateAndReleaseConcurrently) {
  std::atomic<int> failures{0};
  run_threads([&](int) {
    ur_device_handle_t d = device();
    for (int i = 0; i < 20; ++i) {
      ur_context_handle_t c = nullptr;
      ur_queue_handle_t q = nullptr;
      if (urContextCreate(1, &d, nullptr, &c) != UR_RESULT_SUCCESS) {
        failures++;
        continue;
      }
      if (urQueueCreate(c, d, nullptr, &q) != UR_RESULT_SUCCESS) failures++;
      ur_event_handle_t e = nullptr;
      if (q && urEnqueueEventsWait(q, 0, nullptr, &e) == UR_RESULT_SUCCESS) {
        if (urEventWait(1, &e) != UR_RESULT_SUCCESS) failures++;
        urEventRelease(e);
      }
      if (q && urQueueRelease(q) != UR_RESULT_SUCCESS) failures++;
      if (urContextRelease(c) != UR_RESULT_SUCCESS) failures++;
    }
  });
  EXPECT_EQ(0, failures.load());
}

// All threads retain and release the same objects; the counts end where they began.
TEST_P(urStressTest, RetainReleaseRace) {
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(in_order, 0, nullptr, &e));
  const uint32_t ctx_before = conf::reference_count(context);
  const uint32_t q_before = conf::reference_count(in_order);
  const uint32_t e_before = conf::reference_count(e);
  run_threads([&](int) {
    for (int i = 0; i < 500; ++i) {
      urContextRetain(context);
      urQueueRetain(in_order);
      urEventRetain(e);
      urEventRelease(e);
      urQueueRelease(in_order);
      urContextRelease(context);
    }
  });
  EXPECT_EQ(ctx_before, conf::reference_count(context));
  EXPECT_EQ(q_before, conf::reference_count(in_order));
  EXPECT_EQ(e_before, conf::reference_count(e));
  EXPECT_SUCCESS(urEventWait(1, &e));
  EXPECT_SUCCESS(urEventRelease(e));
}

// Many threads wait on the same events while one more thread keeps enqueueing.
TEST_P(urStressTest, ConcurrentWaitsOnSharedEvents) {
  const size_t size = 1 << 20;
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, size, &mem));
  std::vector<ur_event_handle_t> events(16, nullptr);
  // Independent commands of an out-of-order queue may run at once: each fills its own part.
  const size_t part = size / events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    const uint32_t v = static_cast<uint32_t>(i);
    ASSERT_SUCCESS(
        urEnqueueUSMFill(out_of_order, static_cast<char *>(mem) + i * part, 4, &v, part, 0, nullptr, &events[i]));
  }
  std::atomic<int> failures{0};
  run_threads([&](int t) {
    for (size_t i = t % 2; i < events.size(); i += 2)
      if (urEventWait(1, &events[i]) != UR_RESULT_SUCCESS) failures++;
    if (urEventWait(static_cast<uint32_t>(events.size()), events.data()) != UR_RESULT_SUCCESS) failures++;
    for (ur_event_handle_t e : events)
      if (conf::event_status(e) != UR_EVENT_STATUS_COMPLETE) failures++;
  });
  EXPECT_EQ(0, failures.load());
  for (ur_event_handle_t e : events) EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urQueueFinish(out_of_order));
  EXPECT_SUCCESS(urUSMFree(context, mem));
}

// Allocation and free from every thread at once, with refused frees mixed in.
TEST_P(urStressTest, ConcurrentUsm) {
  std::atomic<int> failures{0};
  run_threads([&](int t) {
    std::vector<void *> mine;
    for (int i = 0; i < 200; ++i) {
      void *p = nullptr;
      ur_usm_type_t kind =
          conf::usm_supported(device(), UR_USM_TYPE_HOST) && i % 2 ? UR_USM_TYPE_HOST : UR_USM_TYPE_DEVICE;
      if (conf::usm_alloc(context, device(), kind, 64 + 16 * ((i + t) % 32), &p) != UR_RESULT_SUCCESS) {
        failures++;
        continue;
      }
      mine.push_back(p);
      if (i % 3 == 0) {
        if (urUSMFree(context, mine.back()) != UR_RESULT_SUCCESS) failures++;
        // No second free here: another thread may already have been given this
        // address, and freeing it again would (rightly) free that thread's block.
        mine.pop_back();
      }
    }
    for (void *p : mine)
      if (urUSMFree(context, p) != UR_RESULT_SUCCESS) failures++;
  });
  EXPECT_EQ(0, failures.load());
  // With no other thread allocating, a second free of a freed pointer is refused.
  void *p = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 256, &p));
  ASSERT_SUCCESS(urUSMFree(context, p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, p));
}

// Programs and kernels made and dropped from every thread.
TEST_P(urStressTest, ConcurrentProgramsAndKernels) {
  if (!program) GTEST_SKIP() << program_problem;
  std::atomic<int> failures{0};
  run_threads([&](int) {
    for (int i = 0; i < 4; ++i) {
      urinfo::TestProgram p = urinfo::load_test_program(conf::kernel_dir(), context, found());
      if (!p.ok()) {
        failures++;
        continue;
      }
      for (const char *name : {"fill", "saxpy", "local_sum"}) {
        ur_kernel_handle_t k = nullptr;
        if (urKernelCreate(p.program, name, &k) != UR_RESULT_SUCCESS)
          failures++;
        else
          urKernelRelease(k);
      }
      ur_kernel_handle_t shared = nullptr;
      if (urKernelCreate(program, "increment", &shared) != UR_RESULT_SUCCESS)
        failures++;
      else
        urKernelRelease(shared);
      urProgramRelease(p.program);
    }
  });
  EXPECT_EQ(0, failures.load());
}

CONF_INSTANTIATE_DEVICE_SUITE(urStressTest);

} // namespace
