// SPDX-License-Identifier: Apache-2.0
// Adversarial programs against plain kernel launches on one in-order queue, the launches
// the native CPU adapter gathers into batches (docs/native-cpu.md, "The scheduler"):
// many threads launching at once while others finish, flush, wait, put barriers, host
// tasks and stream-ordered allocations in between; kernels, ranges and arguments that
// change at every launch; handles released while launches are pending; refused launches
// among accepted ones; graph capture begun and ended while another thread launches.
// Every program is random with a fixed seed, and every check is exact: a host model of
// each thread's memory says what its launches, run once each and in its order, leave.
// Nothing here depends on batches: on every device the results must be the same.
#include "launch_batch_attack.hpp"

namespace {

// Several threads run random launch programs on ONE in-order queue while another
// finishes, flushes, waits for, fences and interleaves host tasks and stream-ordered
// allocations (written by kernels, read back and freed) on it. Each launcher's words must
// end, and read back mid-run, exactly as its model says: no launch lost, run twice, run
// with a neighbour's arguments or range, or run before an earlier one of its thread.
TEST_P(LaunchBatchAttack, ManyThreadsRandomProgramsOneQueue) {
  constexpr int kLaunchers = 3;
  const int steps = backend() == UR_BACKEND_OPENCL ? 500 : 2000; // a launch costs far more there
  for (ur_queue_flags_t flags : {ur_queue_flags_t(0), ur_queue_flags_t(UR_QUEUE_FLAG_PROFILING_ENABLE)}) {
    if (flags && !conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_PROFILING_ENABLE)) continue;
    SCOPED_TRACE(flags ? "profiling queue" : "plain in-order queue");
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(conf::make_queue(context, device(), flags, &q));
    std::vector<uint32_t *> regions, outs;
    for (int t = 0; t < kLaunchers; ++t) {
      regions.push_back(words(Launcher::kWords));
      outs.push_back(words(Launcher::kWords));
      ASSERT_NE(nullptr, regions.back());
      ASSERT_NE(nullptr, outs.back());
    }
    uint32_t *mine = words(64);
    ASSERT_NE(nullptr, mine);
    std::vector<std::unique_ptr<Launcher>> launchers;
    for (int t = 0; t < kLaunchers; ++t)
      launchers.emplace_back(new Launcher(q, kernels, regions[t], outs[t], 0x1a2b3c00u + t + flags, options));
    Failures failures;
    std::atomic<int> running{kLaunchers};
    std::atomic<int> &host_tasks_ran = new_counter();
    int host_tasks_enqueued = 0;
    Interference did;
    std::vector<std::thread> threads;
    for (int t = 0; t < kLaunchers; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < steps && launchers[t]->step(failures); ++i) {
        }
        running.fetch_sub(1);
      });
    // The interfering thread (this one): its own commands are in order too.
    std::mt19937_64 rng(0xfeed + flags);
    uint32_t mine_model = 0;
    auto check_mine = [&](const char *when) {
      std::vector<uint32_t> h = read(mine, 64, q);
      for (size_t i = 0; i < 64; ++i)
        if (h[i] != mine_model) {
          failures.add(std::string("interfering thread's words (") + when + "): " + std::to_string(h[i]) +
                       " != " + std::to_string(mine_model));
          return;
        }
    };
    while (running.load() > 0 && failures.count() == 0) {
      switch (rng() % 9) {
      case 0:
        if (urQueueFinish(q) != UR_RESULT_SUCCESS) failures.add("urQueueFinish failed");
        ++did.finishes;
        break;
      case 1:
        if (urQueueFlush(q) != UR_RESULT_SUCCESS) failures.add("urQueueFlush failed");
        ++did.flushes;
        break;
      case 2:
      case 3: {
        const bool barrier = rng() % 2;
        ur_event_handle_t ev = nullptr;
        const bool want_event = rng() % 2;
        ur_result_t r = barrier ? urEnqueueEventsWaitWithBarrier(q, 0, nullptr, want_event ? &ev : nullptr)
                                : urEnqueueEventsWait(q, 0, nullptr, want_event ? &ev : nullptr);
        if (r == UR_RESULT_SUCCESS && ev && rng() % 2) r = urEventWait(1, &ev);
        if (ev) urEventRelease(ev);
        if (r != UR_RESULT_SUCCESS) failures.add("a wait or barrier gave " + urinfo::result_name(r));
        ++(barrier ? did.barriers : did.waits);
        break;
      }
      case 4:
        if (host_tasks) {
          ur_event_handle_t ev = nullptr;
          const bool want_event = rng() % 2;
          ur_result_t r = urEnqueueHostTaskExp(q, count_host_task, &host_tasks_ran, nullptr, 0, nullptr,
                                               want_event ? &ev : nullptr);
          if (r == UR_RESULT_SUCCESS) ++host_tasks_enqueued;
          if (ev) urEventRelease(ev);
          if (r != UR_RESULT_SUCCESS) failures.add("urEnqueueHostTaskExp gave " + urinfo::result_name(r));
          ++did.host_tasks;
        }
        break;
      case 5:
        if (async_alloc) {
          // A block the stream-ordered allocator gives, filled and incremented by kernels
          // (launches that may join the others'), sometimes read back, then freed on the queue.
          void *p = nullptr;
          const size_t n = 1 + rng() % 48;
          ur_result_t r = urEnqueueUSMDeviceAllocExp(q, nullptr, n * 4, nullptr, 0, nullptr, &p, nullptr);
          const uint32_t v = static_cast<uint32_t>(rng());
          if (r == UR_RESULT_SUCCESS) {
            std::vector<ur_exp_kernel_arg_properties_t> fa{arg_pointer(0, p), arg_value(1, 4, &v)},
                ia{arg_pointer(0, p)};
            r = urEnqueueKernelLaunchWithArgsExp(q, kernels.fill, 1, nullptr, &n, nullptr, 2, fa.data(), nullptr, 0,
                                                 nullptr, nullptr);
            if (r == UR_RESULT_SUCCESS)
              r = urEnqueueKernelLaunchWithArgsExp(q, kernels.inc, 1, nullptr, &n, nullptr, 1, ia.data(), nullptr, 0,
                                                   nullptr, nullptr);
            if (r == UR_RESULT_SUCCESS && rng() % 2) {
              std::vector<uint32_t> h(n, 0);
              r = urEnqueueUSMMemcpy(q, true, h.data(), p, n * 4, 0, nullptr, nullptr);
              for (uint32_t x : h)
                if (r == UR_RESULT_SUCCESS && x != v + 1) {
                  failures.add("a stream-ordered block reads " + std::to_string(x) + ", not " + std::to_string(v + 1));
                  break;
                }
            }
            const ur_result_t fr = urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr);
            if (r == UR_RESULT_SUCCESS) r = fr;
          }
          if (r != UR_RESULT_SUCCESS) failures.add("stream-ordered block: " + urinfo::result_name(r));
          ++did.allocs;
        }
        break;
      case 6: {
        ur_bool_t is_empty = false;
        if (urQueueGetInfo(q, UR_QUEUE_INFO_EMPTY, sizeof is_empty, &is_empty, nullptr) == UR_RESULT_SUCCESS)
          ++did.empty_queries;
        break;
      }
      case 7: {
        const size_t n = 64;
        std::vector<ur_exp_kernel_arg_properties_t> ia{arg_pointer(0, mine)};
        if (urEnqueueKernelLaunchWithArgsExp(q, kernels.inc, 1, nullptr, &n, nullptr, 1, ia.data(), nullptr, 0, nullptr,
                                             nullptr) == UR_RESULT_SUCCESS)
          ++mine_model;
        else
          failures.add("the interfering thread's increment failed");
        ++did.launches;
        break;
      }
      default: check_mine("mid-run"); break;
      }
    }
    for (auto &th : threads) th.join();
    ASSERT_SUCCESS(urQueueFinish(q));
    check_mine("at the end");
    for (int t = 0; t < kLaunchers; ++t) launchers[t]->check(q, failures, "at the end");
    EXPECT_EQ(host_tasks_enqueued, host_tasks_ran.load()) << "host tasks enqueued and run";
    EXPECT_EQ(0, failures.count()) << failures.text();
    size_t launches = 0, refusals = 0;
    for (auto &l : launchers) {
      launches += l->launches();
      refusals += l->refusals();
    }
    std::printf("  %zu launches, %zu refused as they should be; interference: %s\n", launches, refusals,
                did.text().c_str());
    launchers.clear(); // their events go before the queue
    EXPECT_SUCCESS(urQueueRelease(q));
  }
}

// The same kernel handles launched on two in-order queues at once, two threads on each,
// while another thread waits for one queue or the other: each queue's launches keep their
// order and arguments whatever the other queue does with the same kernels.
TEST_P(LaunchBatchAttack, TwoQueuesShareKernels) {
  constexpr int kLaunchers = 4;
  const int steps = backend() == UR_BACKEND_OPENCL ? 300 : 1500;
  ur_queue_handle_t qs[2] = {nullptr, nullptr};
  for (auto &q : qs) ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  std::vector<std::unique_ptr<Launcher>> launchers;
  for (int t = 0; t < kLaunchers; ++t) {
    uint32_t *region = words(Launcher::kWords), *out = words(Launcher::kWords);
    ASSERT_NE(nullptr, region);
    ASSERT_NE(nullptr, out);
    launchers.emplace_back(new Launcher(qs[t % 2], kernels, region, out, 0x7e0 + t, options));
  }
  Failures failures;
  std::atomic<int> running{kLaunchers};
  std::vector<std::thread> threads;
  for (int t = 0; t < kLaunchers; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < steps && launchers[t]->step(failures); ++i) {
      }
      running.fetch_sub(1);
    });
  for (unsigned i = 0; running.load() > 0; ++i)
    if (urQueueFinish(qs[i % 2]) != UR_RESULT_SUCCESS) failures.add("urQueueFinish failed");
  for (auto &th : threads) th.join();
  for (auto &q : qs) ASSERT_SUCCESS(urQueueFinish(q));
  for (int t = 0; t < kLaunchers; ++t) launchers[t]->check(queue, failures, "at the end");
  EXPECT_EQ(0, failures.count()) << failures.text();
  launchers.clear();
  for (auto &q : qs) EXPECT_SUCCESS(urQueueRelease(q));
}

// UR_QUEUE_INFO_EMPTY while other threads launch: a thread whose own launch is not done
// must never hear that the queue is empty. In each round every thread makes one launch
// on the drained queue (on native CPU one of them starts a batch the others join at
// once), adding one to its own word of host-visible memory, then asks; told the queue is
// empty, it reads its word, which must hold all its launches.
TEST_P(LaunchBatchAttack, QueueNeverEmptyWhileOwnLaunchesPend) {
  ur_usm_type_t kind = UR_USM_TYPE_HOST;
  if (!conf::usm_supported(device(), kind)) kind = UR_USM_TYPE_SHARED;
  if (!conf::usm_supported(device(), kind)) GTEST_SKIP() << "no host-visible USM";
  ur_bool_t probe = false;
  const ur_result_t r = urQueueGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof probe, &probe, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION || r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << "UR_QUEUE_INFO_EMPTY is not answered on " << found().label();
  ASSERT_SUCCESS(r);
  constexpr int kThreads = 6; // more than the cores: a thread may stop anywhere
  const int rounds = backend() == UR_BACKEND_OPENCL ? 200 : 3000;
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), kind, kThreads * 64, &mem));
  allocations.push_back(mem);
  auto *word = static_cast<uint32_t *>(mem);
  const uint32_t zero = 0;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, 4, &zero, kThreads * 64, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  Failures failures;
  std::atomic<int> empties{0}, arrived{0};
  std::atomic<bool> stop{false};
  // All threads meet here between rounds (round r ends when kThreads * r have arrived).
  auto meet = [&](int round) {
    arrived.fetch_add(1);
    while (arrived.load() < kThreads * round && !stop.load()) std::this_thread::yield();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const size_t one = 1, off = size_t(t) * 16; // a cache line each
      for (int i = 1; i <= rounds; ++i) {
        std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, word)};
        const ur_result_t lr = urEnqueueKernelLaunchWithArgsExp(queue, kernels.inc, 1, &off, &one, nullptr, 1, a.data(),
                                                                nullptr, 0, nullptr, nullptr);
        ur_bool_t is_empty = false;
        const ur_result_t qr = urQueueGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof is_empty, &is_empty, nullptr);
        if (lr != UR_RESULT_SUCCESS || qr != UR_RESULT_SUCCESS) {
          failures.add("launch or UR_QUEUE_INFO_EMPTY failed");
          stop.store(true);
        } else if (is_empty) {
          empties.fetch_add(1);
          const uint32_t seen = __atomic_load_n(&word[off], __ATOMIC_ACQUIRE);
          if (seen != uint32_t(i)) {
            failures.add("thread " + std::to_string(t) + " was told the queue is empty after " + std::to_string(i) +
                         " launches of its own, " + std::to_string(seen) + " of which ran");
            stop.store(true);
          }
        }
        if (t == 0 && urQueueFinish(queue) != UR_RESULT_SUCCESS) failures.add("urQueueFinish failed");
        meet(2 * i - 1); // the queue drained
        meet(2 * i);     // everyone saw it drained: launch again
        if (stop.load()) break;
      }
    });
  for (auto &th : threads) th.join();
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(0, failures.count()) << failures.text();
  for (int t = 0; t < kThreads && failures.count() == 0; ++t) {
    EXPECT_EQ(uint32_t(rounds), word[t * 16]) << "thread " << t;
  }
  std::printf("  the queue was empty %d times\n", empties.load());
}

// One thread, the queue held (where the device runs host tasks) so that every launch
// is pending while later ones are made: kernels of 0 to 3 arguments, local memory of
// changing sizes, ranges and argument values that change between launches or repeat,
// more argument entries than a kernel has, refused launches in between. Each launch
// must run with its own arguments and range, in order.
TEST_P(LaunchBatchAttack, HeldQueueEveryLaunchKeepsItsOwnArgumentsAndRange) {
  uint32_t *region = words(Launcher::kWords), *out = words(Launcher::kWords);
  ASSERT_NE(nullptr, region);
  ASSERT_NE(nullptr, out);
  Options o = options;
  o.may_block = false;
  Failures failures;
  Launcher l(queue, kernels, region, out, 0x600dcafe, o);
  for (int round = 0; round < 12 && failures.count() == 0; ++round) {
    Gate *gate = hold(queue);
    const int steps = 40 + 30 * round; // below, at and past a batch's room
    for (int i = 0; i < steps && l.step(failures); ++i) {
    }
    if (gate) gate->open();
    ASSERT_SUCCESS(urQueueFinish(queue));
    l.check(queue, failures, ("after round " + std::to_string(round)).c_str());
  }
  EXPECT_EQ(0, failures.count()) << failures.text();
}

// Kernels and the program they come from released right after their launches, while
// those launches are still pending (held, or just enqueued), with launches of another
// program's kernels between them: the launches still run, with their own arguments.
TEST_P(LaunchBatchAttack, KernelsAndProgramReleasedWhileTheirLaunchesPend) {
  const size_t n = 96;
  uint32_t *data = words(n);
  ASSERT_NE(nullptr, data);
  std::vector<uint32_t> model(n, 0);
  std::mt19937_64 rng(0xdecade);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    urinfo::TestProgram p = urinfo::load_test_program(conf::kernel_dir(), context, found());
    ASSERT_TRUE(p.ok()) << p.problem();
    Kernels k = make_kernels(p.program, false);
    ASSERT_FALSE(HasFailure());
    Gate *gate = round % 2 ? hold(queue) : nullptr;
    for (int i = 0; i < 70; ++i) {
      const size_t off = rng() % n, len = 1 + rng() % (n - off);
      const uint32_t value = static_cast<uint32_t>(rng());
      const bool theirs = rng() % 2; // the released program's kernel, or the fixture's
      if (rng() % 3 == 0) {
        std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, data), arg_value(1, 4, &value)};
        ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, theirs ? k.fill : kernels.fill, 1, &off, &len, nullptr,
                                                        2, a.data(), nullptr, 0, nullptr, nullptr));
        std::fill(model.begin() + off, model.begin() + off + len, value);
      } else {
        std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, data)};
        ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, theirs ? k.inc : kernels.inc, 1, &off, &len, nullptr, 1,
                                                        a.data(), nullptr, 0, nullptr, nullptr));
        for (size_t j = off; j < off + len; ++j) ++model[j];
      }
      if (i == 35) { // half of them pending, half still to come: drop the kernels not launched again
        EXPECT_SUCCESS(urKernelRelease(k.sum));
        EXPECT_SUCCESS(urKernelRelease(k.empty));
        k.sum = k.empty = nullptr;
      }
    }
    EXPECT_SUCCESS(urKernelRelease(k.fill));
    EXPECT_SUCCESS(urKernelRelease(k.inc));
    EXPECT_SUCCESS(urProgramRelease(p.program));
    if (gate) gate->open();
    ASSERT_SUCCESS(urQueueFinish(queue));
    std::vector<uint32_t> h = read(data, n);
    for (size_t j = 0; j < n; ++j) ASSERT_EQ(model[j], h[j]) << "word " << j;
  }
}

// Everything released while its launches pend: kernels, program, the queue (its newest
// launches open to more) and the context. Nothing may crash or leak, and once every
// launch has run everything goes: the context's extended deleter runs exactly once.
TEST_P(LaunchBatchAttack, QueueProgramAndContextReleasedWithLaunchesPending) {
  std::mt19937_64 rng(0x0dd5eed);
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ur_context_handle_t c = nullptr;
    ur_device_handle_t dev = device();
    ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &c));
    std::atomic<int> &deleted = new_counter();
    const ur_result_t deleter = urContextSetExtendedDeleter(c, count_deletion, &deleted);
    ASSERT_RESULT_IN(deleter, UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    urinfo::TestProgram p = urinfo::load_test_program(conf::kernel_dir(), c, found());
    ASSERT_TRUE(p.ok()) << p.problem();
    Kernels k = make_kernels(p.program, false);
    ASSERT_FALSE(HasFailure());
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(urQueueCreate(c, dev, nullptr, &q));
    // Memory the launches use: left to the context, which frees it when it goes.
    void *mem = nullptr;
    const size_t n = 64;
    ASSERT_SUCCESS(conf::usm_alloc(c, dev, UR_USM_TYPE_DEVICE, n * 4, &mem));
    Gate *gate = nullptr;
    if (host_tasks && round % 2) {
      gate = &new_gate();
      ASSERT_SUCCESS(urEnqueueHostTaskExp(q, Gate::wait, gate, nullptr, 0, nullptr, nullptr));
    }
    for (int i = 0; i < 100; ++i) {
      const size_t len = 1 + rng() % n;
      const uint32_t value = static_cast<uint32_t>(i);
      std::vector<ur_exp_kernel_arg_properties_t> fa{arg_pointer(0, mem), arg_value(1, 4, &value)},
          ia{arg_pointer(0, mem)};
      const ur_result_t r = rng() % 3 == 0 ? urEnqueueKernelLaunchWithArgsExp(q, k.empty, 1, nullptr, &len, nullptr, 0,
                                                                              nullptr, nullptr, 0, nullptr, nullptr)
                            : rng() % 2    ? urEnqueueKernelLaunchWithArgsExp(q, k.fill, 1, nullptr, &len, nullptr, 2,
                                                                              fa.data(), nullptr, 0, nullptr, nullptr)
                                           : urEnqueueKernelLaunchWithArgsExp(q, k.inc, 1, nullptr, &len, nullptr, 1,
                                                                              ia.data(), nullptr, 0, nullptr, nullptr);
      ASSERT_SUCCESS(r) << "launch " << i;
    }
    for (ur_kernel_handle_t h : {k.fill, k.inc, k.sum, k.empty}) EXPECT_SUCCESS(urKernelRelease(h));
    EXPECT_SUCCESS(urProgramRelease(p.program));
    // Opened from another thread: a release may wait for the queue's commands (it does on
    // the OpenCL and Level Zero adapters), the host task among them.
    std::thread opener([&] {
      if (!gate) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 3));
      gate->open();
    });
    EXPECT_SUCCESS(urQueueRelease(q));
    opener.join();
    EXPECT_SUCCESS(urContextRelease(c));
    if (deleter == UR_RESULT_SUCCESS) {
      // The last launch's end lets everything go, on whichever thread that is: wait for it.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (deleted.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(1, deleted.load()) << "the context's extended deleter (a hang guard of 60 s, not a timing check)";
    }
  }
}

// Refused launches between accepted ones, with the queue held so the accepted ones
// pend together: each refusal gives its own result and leaves the others untouched.
TEST_P(LaunchBatchAttack, RefusedLaunchesBetweenPendingOnes) {
  const size_t n = 32;
  uint32_t *data = words(n);
  ASSERT_NE(nullptr, data);
  Gate *gate = hold(queue);
  uint32_t expected = 0;
  const uint64_t wide = 1;
  const size_t zero = 0, four[4] = {n, 1, 1, 1};
  for (int i = 0; i < 150; ++i) {
    const uint32_t value = static_cast<uint32_t>(i * 3);
    const std::vector<ur_exp_kernel_arg_properties_t> fa{arg_pointer(0, data), arg_value(1, 4, &value)},
        ia{arg_pointer(0, data)};
    auto launch = [&](ur_kernel_handle_t k, uint32_t dims, const size_t *global, const size_t *local,
                      const std::vector<ur_exp_kernel_arg_properties_t> &a) {
      return urEnqueueKernelLaunchWithArgsExp(queue, k, dims, nullptr, global, local, static_cast<uint32_t>(a.size()),
                                              a.empty() ? nullptr : a.data(), nullptr, 0, nullptr, nullptr);
    };
    switch (i % 6) {
    case 0:
      ASSERT_SUCCESS(launch(kernels.fill, 1, &n, nullptr, fa));
      expected = value;
      break;
    case 1:
      if (options.missing_refused) {
        EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGS, launch(kernels.fill, 1, &n, nullptr, ia)) << i;
      }
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, launch(kernels.empty, 1, &n, nullptr, ia)) << i;
      break;
    case 2:
      ASSERT_SUCCESS(launch(kernels.inc, 1, &n, nullptr, ia));
      ++expected;
      break;
    case 3:
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
                       launch(kernels.fill, 1, &n, nullptr, {arg_pointer(0, data), arg_value(1, 8, &wide)}))
          << i;
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
                       launch(kernels.inc, 1, &n, nullptr, {arg_pointer(0, data), arg_pointer(3, data)}))
          << i;
      break;
    case 4:
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(kernels.inc, 4, four, nullptr, ia)) << i;
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(kernels.inc, 0, four, nullptr, ia)) << i;
      if (options.validation || options.native) {
        EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, launch(kernels.inc, 1, nullptr, nullptr, ia)) << i;
        EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(kernels.inc, 1, &zero, nullptr, ia)) << i;
        EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, launch(kernels.inc, 1, &n, &zero, ia)) << i;
      }
      break;
    default:
      ASSERT_SUCCESS(launch(kernels.inc, 1, &n, nullptr, ia));
      ++expected;
      break;
    }
  }
  if (gate) gate->open();
  ASSERT_SUCCESS(urQueueFinish(queue));
  std::vector<uint32_t> h = read(data, n);
  for (size_t j = 0; j < n; ++j) ASSERT_EQ(expected, h[j]) << "word " << j;
}

// Local memory no device has: sizes near SIZE_MAX (whose rounding up would wrap), and a
// work-group memory property that, added to a local argument, would wrap. Each launch
// is refused, whether a launch could join pending ones or not, and the queue then works.
TEST_P(LaunchBatchAttack, LocalMemoryThatWouldWrapIsRefused) {
  // Work-group memory is a launch property only devices that report it take.
  ur_kernel_launch_properties_flags_t caps = 0;
  ASSERT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES, sizeof caps, &caps, nullptr));
  const bool wg_memory = caps & UR_KERNEL_LAUNCH_PROPERTIES_FLAG_WORK_GROUP_MEMORY;
  const size_t local = 16, n = 64;
  uint32_t *in = words(n), *out = words(n);
  ASSERT_NE(nullptr, in);
  ASSERT_NE(nullptr, out);
  const size_t huge[] = {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max() - 10,
                         std::numeric_limits<size_t>::max() - 63, size_t(1) << 63};
  const uint32_t one = 1;
  const std::vector<ur_exp_kernel_arg_properties_t> fill_one{arg_pointer(0, in), arg_value(1, 4, &one)};
  for (bool with_event : {false, true}) {
    SCOPED_TRACE(with_event ? "a launch with an event" : "a plain launch");
    for (size_t size : huge) {
      // A plain launch just before: the refused one could join it.
      ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, kernels.fill, 1, nullptr, &n, nullptr, 2, fill_one.data(),
                                                      nullptr, 0, nullptr, nullptr));
      const std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, in), arg_pointer(1, out), arg_local(2, size)};
      ur_event_handle_t ev = nullptr;
      const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(queue, kernels.sum, 1, nullptr, &n, &local, 3, a.data(),
                                                             nullptr, 0, nullptr, with_event ? &ev : nullptr);
      if (ev) urEventRelease(ev);
      EXPECT_NE(UR_RESULT_SUCCESS, r) << "a local argument of " << size << " bytes";
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_OUT_OF_RESOURCES, r) << size << " bytes";
    }
    // Work-group memory: the local argument fits, the sum would wrap.
    if (!wg_memory) continue;
    for (size_t wg : {std::numeric_limits<size_t>::max() - 100, std::numeric_limits<size_t>::max() - 63,
                      std::numeric_limits<size_t>::max() - 32}) {
      ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, kernels.fill, 1, nullptr, &n, nullptr, 2, fill_one.data(),
                                                      nullptr, 0, nullptr, nullptr));
      ur_kernel_launch_workgroup_property_t wgp{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY, nullptr, wg};
      ur_kernel_launch_ext_properties_t props{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES, &wgp, 0};
      const std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, in), arg_pointer(1, out),
                                                          arg_local(2, local * 4)};
      ur_event_handle_t ev = nullptr;
      const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(queue, kernels.sum, 1, nullptr, &n, &local, 3, a.data(),
                                                             &props, 0, nullptr, with_event ? &ev : nullptr);
      if (ev) urEventRelease(ev);
      EXPECT_NE(UR_RESULT_SUCCESS, r) << "work-group memory of " << wg << " bytes";
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_OUT_OF_RESOURCES, r) << wg << " bytes";
    }
  }
  // The queue still runs launches, local memory included.
  const std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, in), arg_pointer(1, out), arg_local(2, local * 4)};
  ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, kernels.sum, 1, nullptr, &n, &local, 3, a.data(), nullptr, 0,
                                                  nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  std::vector<uint32_t> sums = read(out, n / local);
  for (uint32_t s : sums) EXPECT_EQ(uint32_t(local), s);
}

// Graph capture begun and ended over and over on the queue while another thread
// launches into it: passes over a run of words, each launch adding one to its own word.
// A launch is captured (runs only on replay) or runs now, never both or neither: after
// the capture cycles a word holds the launches that ran now; after two replays of every
// graph each captured launch has run twice, so every word holds 2 * passes - that.
TEST_P(LaunchBatchAttack, GraphCaptureBegunAndEndedWhileAnotherThreadLaunches) {
  if (!graphs)
    GTEST_SKIP() << found().label() << " has no graph record and replay (GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP)";
  const size_t n = 256;
  const uint32_t passes = 24;
  uint32_t *data = words(n);
  ASSERT_NE(nullptr, data);
  Failures failures;
  // The launcher makes launches up to `allowed`: this thread hands out windows of them
  // and begins or ends a capture while a window's launches are being made.
  std::atomic<bool> done{false};
  std::atomic<size_t> progress{0}, allowed{0};
  std::thread launcher([&] {
    const size_t one = 1;
    for (uint32_t pass = 0; pass < passes; ++pass)
      for (size_t i = 0; i < n; ++i) {
        while (progress.load() >= allowed.load()) std::this_thread::yield();
        std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, data)};
        const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(queue, kernels.inc, 1, &i, &one, nullptr, 1, a.data(),
                                                               nullptr, 0, nullptr, nullptr);
        if (r != UR_RESULT_SUCCESS) failures.add("launch " + std::to_string(i) + " gave " + urinfo::result_name(r));
        progress.fetch_add(1);
      }
    done.store(true);
  });
  std::mt19937_64 rng(0xc0ffee);
  // A new window, and a wait until all but a few of its launches are made.
  auto window = [&] {
    const size_t end = allowed.fetch_add(1 + rng() % 40) + 1, short_of = rng() % 4;
    while (!done.load() && progress.load() + short_of < end) std::this_thread::yield();
  };
  std::vector<ur_exp_graph_handle_t> made;
  std::vector<ur_exp_executable_graph_handle_t> execs;
  int cycles = 0;
  while (!done.load() && failures.count() == 0) {
    ur_exp_graph_handle_t g = nullptr;
    allowed.fetch_add(rng() % 4); // launches racing the beginning
    ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
    window();
    ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &g));
    made.push_back(g);
    ++cycles;
    bool empty = true;
    ASSERT_SUCCESS(urGraphIsEmptyExp(g, &empty));
    if (!empty) {
      ur_exp_executable_graph_handle_t e = nullptr;
      ASSERT_SUCCESS(urGraphInstantiateGraphExp(g, &e));
      execs.push_back(e);
    }
    if (rng() % 4 == 0) {
      ASSERT_SUCCESS(urQueueFinish(queue));
    }
    window();
  }
  allowed.store(SIZE_MAX); // a failure above: let the launcher end
  launcher.join();
  EXPECT_EQ(0, failures.count()) << failures.text();
  ASSERT_SUCCESS(urQueueFinish(queue));
  const std::vector<uint32_t> before = read(data, n);
  size_t ran_now = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_LE(before[i], passes) << "word " << i << " before any replay";
    ran_now += before[i];
  }
  for (int run = 0; run < 2; ++run)
    for (ur_exp_executable_graph_handle_t e : execs) ASSERT_SUCCESS(urEnqueueGraphExp(queue, e, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const std::vector<uint32_t> after = read(data, n);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(2 * passes - before[i], after[i]) << "word " << i << ": " << before[i] << " launches ran at once";
  for (ur_exp_executable_graph_handle_t e : execs) EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(e));
  for (ur_exp_graph_handle_t g : made) EXPECT_SUCCESS(urGraphDestroyExp(g));
  std::printf("  %d capture cycles, %zu graphs replayed, %zu of %zu launches ran at once\n", cycles, execs.size(),
              ran_now, size_t(n) * passes);
}

// urKernelSetExecInfo on a kernel from one thread while two others launch it, each
// launch writing its own value to its own words: no launch sees another's arguments.
TEST_P(LaunchBatchAttack, ExecInfoSetWhileTheKernelIsLaunched) {
  constexpr int kThreads = 2;
  constexpr size_t kSlots = 300, kWidth = 3;
  uint32_t *data = words(kThreads * kSlots * kWidth);
  ASSERT_NE(nullptr, data);
  auto value_of = [](size_t slot) { return static_cast<uint32_t>(slot * 2654435761u + 17); };
  Failures failures;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (size_t s = 0; s < kSlots; ++s) {
        const size_t slot = t * kSlots + s, off = slot * kWidth, len = 1 + s % kWidth;
        uint32_t value = value_of(slot);
        std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, data), arg_value(1, 4, &value)};
        const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(queue, kernels.fill, 1, &off, &len, nullptr, 2, a.data(),
                                                               nullptr, 0, nullptr, nullptr);
        value = 0;
        if (r != UR_RESULT_SUCCESS) failures.add("fill gave " + urinfo::result_name(r));
      }
      running.fetch_sub(1);
    });
  int sets = 0;
  void *ptrs[1] = {data};
  while (running.load() > 0) {
    const ur_bool_t yes = true;
    const ur_kernel_cache_config_t cache = UR_KERNEL_CACHE_CONFIG_LARGE_DATA;
    for (ur_result_t r :
         {urKernelSetExecInfo(kernels.fill, UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS, sizeof yes, nullptr, &yes),
          urKernelSetExecInfo(kernels.fill, UR_KERNEL_EXEC_INFO_USM_PTRS, sizeof ptrs, nullptr, ptrs),
          urKernelSetExecInfo(kernels.fill, UR_KERNEL_EXEC_INFO_CACHE_CONFIG, sizeof cache, nullptr, &cache)})
      if (!conf::result_in(
              r, {UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION}))
        failures.add("urKernelSetExecInfo gave " + urinfo::result_name(r));
    ++sets;
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(0, failures.count()) << failures.text();
  ASSERT_SUCCESS(urQueueFinish(queue));
  std::vector<uint32_t> h = read(data, kThreads * kSlots * kWidth);
  for (size_t slot = 0; slot < kThreads * kSlots; ++slot)
    for (size_t j = 0; j < kWidth; ++j)
      ASSERT_EQ(j < 1 + (slot % kSlots) % kWidth ? value_of(slot) : 0u, h[slot * kWidth + j])
          << "slot " << slot << " word " << j << " (" << sets << " rounds of urKernelSetExecInfo)";
}

// Arguments are given with each launch: one an earlier launch of the kernel gave does
// not stand in for one this launch leaves out, whether the earlier launch is pending or
// has run. Refused, and nothing runs.
TEST_P(LaunchBatchAttack, ArgumentsOfAnEarlierLaunchDoNotCarryOver) {
  const size_t n = 16;
  uint32_t *data = words(n);
  ASSERT_NE(nullptr, data);
  const uint32_t five = 5;
  const std::vector<ur_exp_kernel_arg_properties_t> both{arg_pointer(0, data), arg_value(1, 4, &five)},
      pointer_only{arg_pointer(0, data)};
  for (bool pending : {true, false}) {
    SCOPED_TRACE(pending ? "the earlier launch pending" : "the earlier launch done");
    ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, kernels.fill, 1, nullptr, &n, nullptr, 2, both.data(),
                                                    nullptr, 0, nullptr, nullptr));
    if (!pending) {
      ASSERT_SUCCESS(urQueueFinish(queue));
    }
    const uint32_t zero = 0;
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, data, 4, &zero, n * 4, 0, nullptr, nullptr));
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
                     urEnqueueKernelLaunchWithArgsExp(queue, kernels.fill, 1, nullptr, &n, nullptr, 1,
                                                      pointer_only.data(), nullptr, 0, nullptr, nullptr));
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
                     urEnqueueKernelLaunchWithArgsExp(queue, kernels.inc, 1, nullptr, &n, nullptr, 0, nullptr, nullptr,
                                                      0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(queue));
    const std::vector<uint32_t> h = read(data, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(0u, h[i]) << "word " << i << ": a refused launch ran";
  }
}

// A launch that fails at run time among launches several threads make on one queue
// (native CPU: the suite's failing-kernel program). Each thread's launch j adds one to
// its word j. Queue order says what may run: of each thread, a prefix of its launches;
// of the failing launch's thread, exactly those before it; of any thread, none it made
// after the failing launch had been enqueued.
TEST_P(LaunchBatchAttack, FailingLaunchAmongThreadsStopsEverythingAfterIt) {
  if (!options.native) GTEST_SKIP() << "no way to make a launch fail at run time on " << found().backend_name;
  const char *env = std::getenv("ORDO_CONFORMANCE_FAILING_KERNEL");
  const std::string path = env && *env ? env : ORDO_CONFORMANCE_FAILING_KERNEL;
  std::ifstream file(path, std::ios::binary);
  if (!file) GTEST_SKIP() << "failing-kernel program not built: " << path;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ur_device_handle_t dev = device();
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ur_program_handle_t failing = nullptr;
    ur_kernel_handle_t fail = nullptr;
    size_t length = bytes.size();
    const uint8_t *data = bytes.data();
    ASSERT_SUCCESS(urProgramCreateWithBinary(context, 1, &dev, &length, &data, nullptr, &failing));
    ASSERT_SUCCESS(urProgramBuild(context, failing, nullptr));
    ASSERT_SUCCESS(urKernelCreate(failing, "fail", &fail));
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &q));
    constexpr int kThreads = 3;
    constexpr size_t kLaunches = 300, kFailAt = 120;
    uint32_t *mem = words(kThreads * kLaunches);
    ASSERT_NE(nullptr, mem);
    std::atomic<bool> fail_enqueued{false};
    std::vector<size_t> first_after(kThreads, kLaunches);
    Failures failures;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        const size_t one = 1;
        for (size_t j = 0; j < kLaunches; ++j) {
          if (t == 0 && j == kFailAt + round * 40) {
            const size_t global = 1 + j % 3;
            const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(q, fail, 1, nullptr, &global, nullptr, 0, nullptr,
                                                                   nullptr, 0, nullptr, nullptr);
            if (r != UR_RESULT_SUCCESS) failures.add("the failing launch gave " + urinfo::result_name(r));
            fail_enqueued.store(true);
          }
          if (first_after[t] == kLaunches && fail_enqueued.load()) first_after[t] = j;
          const size_t off = t * kLaunches + j;
          std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, mem)};
          const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(q, kernels.inc, 1, &off, &one, nullptr, 1, a.data(),
                                                                 nullptr, 0, nullptr, nullptr);
          if (!conf::result_in(r, {UR_RESULT_SUCCESS, UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS}))
            failures.add("launch " + std::to_string(j) + " of thread " + std::to_string(t) + " gave " +
                         urinfo::result_name(r));
        }
      });
    for (auto &th : threads) th.join();
    EXPECT_EQ(0, failures.count()) << failures.text();
    ur_event_handle_t marker = nullptr;
    ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, &marker));
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS, urEventWait(1, &marker));
    EXPECT_EQ(UR_EVENT_STATUS_ERROR, conf::event_status(marker));
    EXPECT_SUCCESS(urEventRelease(marker));
    EXPECT_SUCCESS(urQueueFinish(q));
    const std::vector<uint32_t> h = read(mem, kThreads * kLaunches); // on the fixture's queue
    for (int t = 0; t < kThreads; ++t) {
      size_t ran = 0;
      while (ran < kLaunches && h[t * kLaunches + ran] == 1) ++ran;
      for (size_t j = ran; j < kLaunches; ++j)
        ASSERT_EQ(0u, h[t * kLaunches + j]) << "thread " << t << " launch " << j << " ran after one that did not";
      if (t == 0) {
        EXPECT_EQ(kFailAt + round * 40, ran) << "the failing thread's launches that ran";
      } else {
        EXPECT_LE(ran, first_after[t]) << "thread " << t << ": launches made after the failing one ran";
      }
    }
    EXPECT_SUCCESS(urQueueRelease(q));
    EXPECT_SUCCESS(urKernelRelease(fail));
    EXPECT_SUCCESS(urProgramRelease(failing));
  }
}

// ---- Batches at their edges, and the pool behind them ----------------------------------
// (native CPU: docs/native-cpu.md, "The scheduler" and "Batches of launches"; on every
// device the results must be the same.)

CONF_INSTANTIATE_DEVICE_SUITE(LaunchBatchAttack);

} // namespace
