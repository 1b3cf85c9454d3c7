// SPDX-License-Identifier: Apache-2.0
// Launch batches at their edges: runs of launches around a batch's room, bursts with
// pauses longer than the worker's watch, finishes from several threads, a failing
// launch at a batch's first and last slots, batches that never run, releases right after
// bursts, and host tasks and callbacks that wait for other commands on a worker
// (docs/native-cpu.md, "The scheduler"). Same model-checked programs as
// launch_batch_attack.cpp, same results required on every device.
#include "launch_batch_attack.hpp"

namespace {

// The same fixture under its own name: a test suite lives in one translation unit.
class LaunchBatchEdges : public LaunchBatchAttack {
protected:
  // Empty on native CPU with host tasks and at least two workers; else why a test of
  // `what` is skipped.
  std::string two_native_workers(const char *what) {
    if (!options.native || !host_tasks)
      return std::string(what) + " is up to the device; native CPU promises it with 2 workers";
    uint32_t units = 0;
    if (conf::info(device(), UR_DEVICE_INFO_MAX_COMPUTE_UNITS, units) != UR_RESULT_SUCCESS) return "no compute units";
    if (units < 2) return "one worker (" + std::to_string(units) + " compute units): set ORDO_NATIVE_CPU_WORKERS=2";
    return "";
  }
};

// Launch j of a slot program touches word base + j and nothing else: a fill of a value of
// its own, an increment (1 to 3 dimensions, the local size given or not), a local_sum of
// the first L counting words into it (local memory, three arguments: a record that takes
// more of a batch's argument room), and now and then two launches with identical ranges,
// an empty kernel before it or a refused launch. So a launch lost, run twice, run with
// another launch's arguments or range, or run when it must not, shows in its own word.
enum class Mix {
  any,
  single,    // one launch per slot: a fill or an increment (at most 48 bytes of a batch's room)
  local_sums // one local_sum per slot (80 bytes: 51 fill a batch's room)
};
class SlotProgram {
public:
  // `counting`: words holding 1, 2, 3... (at least 16), for local_sum; null: none.
  SlotProgram(const Kernels &k, uint32_t *mem, size_t base, size_t count, uint64_t seed,
              const uint32_t *counting = nullptr, size_t max_local = 16)
      : k_(k), mem_(mem), counting_(counting), base_(base), max_local_(max_local), rng_(seed), model_(count, 0) {}

  // Launch j's commands on q; false after a failure (recorded in f).
  bool launch(ur_queue_handle_t q, size_t j, Failures &f, Mix mix = Mix::any) {
    const size_t s = base_ + j;
    unsigned kind = static_cast<unsigned>(rng_() % (mix == Mix::any ? 10 : 4));
    if (mix == Mix::local_sums) kind = 8;
    if (kind >= 8 && !counting_) kind = 2;
    const uint32_t value = static_cast<uint32_t>(rng_()) | 1u;
    const uint32_t dims = 1 + static_cast<uint32_t>(rng_() % 3);
    const size_t off[3] = {s, size_t(rng_() % 3), size_t(rng_() % 5)}, one[3] = {1, 1, 1};
    const size_t *local = rng_() % 2 ? one : nullptr;
    const std::vector<ur_exp_kernel_arg_properties_t> fa{arg_pointer(0, mem_), arg_value(1, 4, &value)},
        fa_swapped{arg_value(1, 4, &value), arg_pointer(0, mem_)}, ia{arg_pointer(0, mem_)},
        bad{arg_pointer(0, mem_), arg_pointer(1, mem_)};
    auto go = [&](ur_kernel_handle_t k, uint32_t d, const size_t *o, const size_t *g, const size_t *l,
                  const std::vector<ur_exp_kernel_arg_properties_t> &a, const char *what) {
      const ur_result_t r =
          urEnqueueKernelLaunchWithArgsExp(q, k, d, o, g, l, static_cast<uint32_t>(a.size()),
                                           a.empty() ? nullptr : a.data(), nullptr, 0, nullptr, nullptr);
      if (r == UR_RESULT_SUCCESS) {
        ++launches_;
        return true;
      }
      f.add(std::string(what) + " of slot " + std::to_string(s) + " gave " + urinfo::result_name(r));
      return false;
    };
    uint32_t &m = model_[j];
    switch (kind) {
    case 0:
    case 1:
      if (!go(k_.fill, dims, off, one, local, kind ? fa_swapped : fa, "fill")) return false;
      m = value;
      return true;
    case 2:
    case 3:
      if (!go(k_.inc, dims, off, one, local, ia, "increment")) return false;
      ++m;
      return true;
    case 4: // the second runs with the range of the record before it
      for (int i = 0; i < 2; ++i) {
        if (!go(k_.inc, dims, off, one, local, ia, "increment (a pair)")) return false;
        ++m;
      }
      return true;
    case 5: {
      const size_t g = 1 + rng_() % 16;
      if (!go(k_.empty, 1, nullptr, &g, nullptr, {}, "empty")) return false;
      if (!go(k_.fill, dims, off, one, local, fa, "fill after empty")) return false;
      m = value;
      return true;
    }
    case 6:
      if (!go(k_.fill, dims, off, one, local, fa, "fill (then increment)")) return false;
      m = value;
      if (!go(k_.inc, dims, off, one, local, ia, "increment (after fill)")) return false;
      ++m;
      return true;
    case 8:
    case 9: {
      size_t l = size_t(1) << (rng_() % 5);
      while (l > max_local_) l /= 2;
      const std::vector<ur_exp_kernel_arg_properties_t> sa{arg_pointer(0, counting_), arg_pointer(1, mem_ + s),
                                                           arg_local(2, l * 4 + 64 * (rng_() % 3))};
      if (!go(k_.sum, 1, nullptr, &l, &l, sa, "local_sum")) return false;
      m = static_cast<uint32_t>(l * (l + 1) / 2);
      return true;
    }
    default: {
      const ur_result_t r = urEnqueueKernelLaunchWithArgsExp(q, k_.inc, 1, off, one, nullptr, 2, bad.data(), nullptr, 0,
                                                             nullptr, nullptr);
      if (r != UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX) {
        f.add("increment with an index past its last, slot " + std::to_string(s) + ": " + urinfo::result_name(r));
        return false;
      }
      if (!go(k_.inc, dims, off, one, local, ia, "increment (after a refusal)")) return false;
      ++m;
      return true;
    }
    }
  }
  // Words [base, base + n) as read: those of launches 0..made-1 as the model says, the
  // rest untouched.
  bool check(const std::vector<uint32_t> &words, size_t made, Failures &f, const std::string &when) const {
    for (size_t j = 0; j < words.size(); ++j) {
      const uint32_t want = j < made ? model_[j] : 0;
      if (words[j] != want) {
        f.add(when + ": slot " + std::to_string(base_ + j) + " holds " + std::to_string(words[j]) + ", want " +
              std::to_string(want) + (j < made ? "" : " (its launch not made)"));
        return false;
      }
    }
    return true;
  }
  uint32_t model(size_t j) const { return model_[j]; }
  size_t launches() const { return launches_; }

private:
  Kernels k_;
  uint32_t *mem_;
  const uint32_t *counting_;
  size_t base_, max_local_;
  std::mt19937_64 rng_;
  std::vector<uint32_t> model_;
  size_t launches_ = 0;
};

// Busy for `us` microseconds: longer than a batch's 2 µs watch, without a sleep.
void busy_pause(unsigned us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// n words of c holding 1, 2, 3..., written through q (blocking) and kept in `keep` if
// given (the fixture's allocations, freed at its end); null on failure.
uint32_t *counting_words(ur_context_handle_t c, ur_device_handle_t dev, ur_queue_handle_t q, size_t n,
                         std::vector<void *> *keep = nullptr) {
  void *p = nullptr;
  if (conf::usm_alloc(c, dev, UR_USM_TYPE_DEVICE, n * 4, &p) != UR_RESULT_SUCCESS) return nullptr;
  if (keep) keep->push_back(p);
  std::vector<uint32_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = uint32_t(i + 1);
  if (urEnqueueUSMMemcpy(q, true, p, h.data(), n * 4, 0, nullptr, nullptr) != UR_RESULT_SUCCESS) return nullptr;
  return static_cast<uint32_t *>(p);
}

// One slot program per thread, thread t's over words [t * per, (t + 1) * per) of mem.
std::vector<std::unique_ptr<SlotProgram>> slot_programs(const Kernels &k, uint32_t *mem, int threads, size_t per,
                                                        uint64_t seed, const uint32_t *counting, size_t max_local) {
  std::vector<std::unique_ptr<SlotProgram>> programs;
  for (int t = 0; t < threads; ++t)
    programs.emplace_back(new SlotProgram(k, mem, t * per, per, seed + t, counting, max_local));
  return programs;
}

// A native CPU program whose kernel fails; empty `why` when loaded.
struct FailingKernel {
  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t kernel = nullptr;
  std::string why;
};
FailingKernel load_failing_kernel(ur_context_handle_t c, ur_device_handle_t dev) {
  FailingKernel out;
  const char *env = std::getenv("ORDO_CONFORMANCE_FAILING_KERNEL");
  const std::string path = env && *env ? env : ORDO_CONFORMANCE_FAILING_KERNEL;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    out.why = "failing-kernel program not built: " + path;
    return out;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t length = bytes.size();
  const uint8_t *data = bytes.data();
  ur_result_t r = urProgramCreateWithBinary(c, 1, &dev, &length, &data, nullptr, &out.program);
  if (r == UR_RESULT_SUCCESS) r = urProgramBuild(c, out.program, nullptr);
  if (r == UR_RESULT_SUCCESS) r = urKernelCreate(out.program, "fail", &out.kernel);
  if (r != UR_RESULT_SUCCESS) out.why = "the failing-kernel program: " + urinfo::result_name(r);
  return out;
}

// One launch count after another around a batch's room (64 on native CPU): with the queue
// held, n launches that form batches of exactly 63, 64, 65... launches; then n more made
// while the worker runs and closes those, joining its newest batch or following a full
// one. Also without the hold. Each launch's own word must be exactly what it wrote.
TEST_P(LaunchBatchEdges, LaunchCountsAroundABatchsRoom) {
  // Launch counts around 64 records, and around the 51 local_sum records that fill a
  // batch's argument room first.
  const std::pair<size_t, Mix> counts[] = {{1, Mix::single},      {2, Mix::single},       {63, Mix::single},
                                           {64, Mix::single},     {65, Mix::single},      {127, Mix::single},
                                           {128, Mix::single},    {129, Mix::single},     {192, Mix::single},
                                           {193, Mix::single},    {50, Mix::local_sums},  {51, Mix::local_sums},
                                           {52, Mix::local_sums}, {102, Mix::local_sums}, {103, Mix::local_sums}};
  constexpr int kPasses = 3;
  size_t total = 0;
  for (const auto &c : counts) total += 4 * c.first * kPasses;
  uint32_t *mem = words(total);
  ASSERT_NE(nullptr, mem);
  const uint32_t *counting = counting_words(context, device(), queue, 16, &allocations);
  ASSERT_NE(nullptr, counting);
  Failures failures;
  size_t base = 0;
  for (int pass = 0; pass < kPasses; ++pass)
    for (const auto &c : counts)
      for (bool held : {true, false}) {
        const size_t n = c.first;
        SCOPED_TRACE(std::to_string(n) + (c.second == Mix::local_sums ? " local sums" : " launches") +
                     (held ? ", held" : "") + ", pass " + std::to_string(pass));
        SlotProgram p(kernels, mem, base, 2 * n, 0xb47c4 + base + pass * 7919, counting, options.max_local);
        Gate *gate = held ? hold(queue) : nullptr;
        for (size_t j = 0; j < n && failures.count() == 0; ++j) p.launch(queue, j, failures, c.second);
        if (gate) gate->open();
        // More while the worker runs and closes those.
        for (size_t j = n; j < 2 * n && failures.count() == 0; ++j)
          p.launch(queue, j, failures, pass == 1 ? c.second : Mix::any);
        ASSERT_SUCCESS(urQueueFinish(queue));
        p.check(read(mem + base, 2 * n), 2 * n, failures, "after the finish");
        ASSERT_EQ(0, failures.count()) << failures.text();
        base += 2 * n;
      }
}

// Threads launching into one in-order queue in bursts (1 to 100 launches, the counts
// around a batch's room among them) with pauses longer than the worker's 2 µs watch, so
// that the worker closes batches between and during bursts, while this thread finishes,
// flushes and asks UR_QUEUE_INFO_EMPTY. Each launch writes its own word; each thread
// reads its words back on the queue now and then: those of its launches so far as its
// model says, the others untouched.
TEST_P(LaunchBatchEdges, BurstsWithPausesWhileTheWorkerClosesBatches) {
  constexpr int kThreads = 3;
  const size_t per = backend() == UR_BACKEND_OPENCL ? 300 : 3000;
  uint32_t *mem = words(kThreads * per);
  ASSERT_NE(nullptr, mem);
  const uint32_t *counting = counting_words(context, device(), queue, 16, &allocations);
  ASSERT_NE(nullptr, counting);
  Failures failures;
  const std::vector<std::unique_ptr<SlotProgram>> programs =
      slot_programs(kernels, mem, kThreads, per, 0x5eed0, counting, options.max_local);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(0xb0 + t);
      const size_t edges[] = {1, 2, 3, 62, 63, 64, 65, 66};
      size_t j = 0;
      for (int burst = 0; j < per && failures.count() == 0; ++burst) {
        const size_t len = rng() % 3 ? edges[rng() % 8] : 1 + rng() % 100;
        for (size_t b = 0; b < len && j < per; ++b, ++j)
          if (!programs[t]->launch(queue, j, failures)) break;
        switch (rng() % 4) {
        case 0: busy_pause(3 + unsigned(rng() % 40)); break;
        case 1: std::this_thread::yield(); break;
        case 2: std::this_thread::sleep_for(std::chrono::microseconds(20)); break;
        default: break;
        }
        if (burst % 8 == 7) {
          std::vector<uint32_t> h(per, 0xffffffffu);
          const ur_result_t r = urEnqueueUSMMemcpy(queue, true, h.data(), mem + t * per, per * 4, 0, nullptr, nullptr);
          if (r != UR_RESULT_SUCCESS)
            failures.add("blocking read gave " + urinfo::result_name(r));
          else
            programs[t]->check(h, j, failures, "thread " + std::to_string(t) + " mid-run");
        }
      }
      running.fetch_sub(1);
    });
  std::mt19937_64 rng(0x1f);
  int finishes = 0, flushes = 0, queries = 0;
  while (running.load() > 0) {
    switch (rng() % 4) {
    case 0:
      if (urQueueFinish(queue) != UR_RESULT_SUCCESS) failures.add("urQueueFinish failed");
      ++finishes;
      break;
    case 1:
      if (urQueueFlush(queue) != UR_RESULT_SUCCESS) failures.add("urQueueFlush failed");
      ++flushes;
      break;
    case 2: {
      ur_bool_t e = false;
      const ur_result_t r = urQueueGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof e, &e, nullptr);
      if (!conf::result_in(r, {UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION}))
        failures.add("UR_QUEUE_INFO_EMPTY gave " + urinfo::result_name(r));
      ++queries;
      break;
    }
    default: std::this_thread::sleep_for(std::chrono::microseconds(30)); break;
    }
  }
  for (auto &th : threads) th.join();
  ASSERT_SUCCESS(urQueueFinish(queue));
  const std::vector<uint32_t> h = read(mem, kThreads * per);
  for (int t = 0; t < kThreads; ++t)
    programs[t]->check(std::vector<uint32_t>(h.begin() + t * per, h.begin() + (t + 1) * per), per, failures,
                       "at the end");
  EXPECT_EQ(0, failures.count()) << failures.text();
  size_t launches = 0;
  for (auto &p : programs) launches += p->launches();
  std::printf("  %zu launches; %d finishes, %d flushes, %d emptiness queries\n", launches, finishes, flushes, queries);
}

// urQueueFinish from several threads at once while others launch in bursts: a finish
// that returns has waited for every launch made before it began (the launchers count
// their launches after each returns; the finishers read those counts first and then the
// words, in host-visible memory).
TEST_P(LaunchBatchEdges, FinishFromSeveralThreadsWaitsForEveryEarlierLaunch) {
  ur_usm_type_t kind = UR_USM_TYPE_HOST;
  if (!conf::usm_supported(device(), kind)) kind = UR_USM_TYPE_SHARED;
  if (!conf::usm_supported(device(), kind)) GTEST_SKIP() << "no host-visible USM";
  constexpr int kLaunchers = 2, kFinishers = 3;
  const size_t per = backend() == UR_BACKEND_OPENCL ? 300 : 4000;
  void *p = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), kind, kLaunchers * per * 4, &p));
  allocations.push_back(p);
  auto *mem = static_cast<uint32_t *>(p);
  const uint32_t zero = 0;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, p, 4, &zero, kLaunchers * per * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  const uint32_t *counting = counting_words(context, device(), queue, 16, &allocations);
  ASSERT_NE(nullptr, counting);
  Failures failures;
  const std::vector<std::unique_ptr<SlotProgram>> programs =
      slot_programs(kernels, mem, kLaunchers, per, 0xf1, counting, options.max_local);
  std::atomic<size_t> made[kLaunchers];
  for (auto &m : made) m.store(0);
  std::atomic<int> running{kLaunchers}, ready{0};
  auto start_together = [&] {
    ready.fetch_add(1);
    while (ready.load() < kLaunchers + kFinishers) std::this_thread::yield();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kLaunchers; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(0xa0 + t);
      start_together();
      for (size_t j = 0; j < per && failures.count() == 0;) {
        const size_t len = 1 + rng() % 70;
        for (size_t b = 0; b < len && j < per; ++b, ++j) {
          if (!programs[t]->launch(queue, j, failures)) break;
          made[t].store(j + 1, std::memory_order_release);
        }
        busy_pause(3 + unsigned(rng() % 20));
      }
      running.fetch_sub(1);
    });
  std::atomic<int> finishes{0};
  for (int f = 0; f < kFinishers; ++f)
    threads.emplace_back([&] {
      std::vector<size_t> checked(kLaunchers, 0);
      start_together();
      while (running.load() > 0 && failures.count() == 0) {
        size_t before[kLaunchers];
        for (int t = 0; t < kLaunchers; ++t) before[t] = made[t].load(std::memory_order_acquire);
        if (urQueueFinish(queue) != UR_RESULT_SUCCESS) failures.add("urQueueFinish failed");
        finishes.fetch_add(1);
        for (int t = 0; t < kLaunchers; ++t) {
          for (size_t j = checked[t]; j < before[t]; ++j) {
            const uint32_t seen = __atomic_load_n(&mem[t * per + j], __ATOMIC_RELAXED);
            if (seen != programs[t]->model(j)) {
              failures.add("after urQueueFinish, launch " + std::to_string(j) + " of thread " + std::to_string(t) +
                           " (made before the call) left " + std::to_string(seen) + ", want " +
                           std::to_string(programs[t]->model(j)));
              break;
            }
          }
          checked[t] = before[t];
        }
      }
    });
  for (auto &th : threads) th.join();
  // Three finishes at once with nothing left but the last batches.
  std::vector<std::thread> last;
  for (int f = 0; f < kFinishers; ++f)
    last.emplace_back([&] {
      if (urQueueFinish(queue) != UR_RESULT_SUCCESS) failures.add("a last urQueueFinish failed");
    });
  for (auto &th : last) th.join();
  for (int t = 0; t < kLaunchers; ++t)
    for (size_t j = 0; j < per; ++j)
      if (__atomic_load_n(&mem[t * per + j], __ATOMIC_RELAXED) != programs[t]->model(j)) {
        failures.add("at the end: launch " + std::to_string(j) + " of thread " + std::to_string(t));
        break;
      }
  EXPECT_EQ(0, failures.count()) << failures.text();
  std::printf("  %d finishes while launching\n", finishes.load());
}

// UR_QUEUE_INFO_EMPTY right after urQueueFinish, over and over: bursts of launches (a
// batch whose worker may still be closing it or ending its command), sometimes behind a
// host task. urQueueFinish has waited for every command: the queue is empty.
TEST_P(LaunchBatchEdges, EmptyRightAfterFinish) {
  ur_bool_t probe = false;
  const ur_result_t pr = urQueueGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof probe, &probe, nullptr);
  if (pr == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION || pr == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << "UR_QUEUE_INFO_EMPTY is not answered on " << found().label();
  ASSERT_SUCCESS(pr);
  const size_t n = 64;
  uint32_t *mem = words(n);
  ASSERT_NE(nullptr, mem);
  std::mt19937_64 rng(0xe3);
  std::vector<uint32_t> model(n, 0);
  const int rounds = backend() == UR_BACKEND_OPENCL ? 200 : 3000;
  int not_empty = 0, first_bad = -1;
  for (int round = 0; round < rounds; ++round) {
    Gate *gate = round % 8 == 7 ? hold(queue) : nullptr;
    const size_t len = 1 + rng() % 70;
    for (size_t b = 0; b < len; ++b) {
      const size_t off = rng() % n, one = 1;
      std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, mem)};
      ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, kernels.inc, 1, &off, &one, nullptr, 1, a.data(), nullptr,
                                                      0, nullptr, nullptr));
      ++model[off];
    }
    if (gate) gate->open();
    ASSERT_SUCCESS(urQueueFinish(queue));
    ur_bool_t is_empty = false;
    ASSERT_SUCCESS(urQueueGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof is_empty, &is_empty, nullptr));
    if (!is_empty && not_empty++ == 0) first_bad = round;
  }
  EXPECT_EQ(0, not_empty) << "urQueueFinish returned and the queue said it was not empty, " << not_empty << " of "
                          << rounds << " times (first in round " << first_bad << ")";
  const std::vector<uint32_t> h = read(mem, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(model[i], h[i]) << "word " << i;
}

// A launch that fails at run time at or around a batch's edges (first, second, last of a
// full batch, first of the next...), with the queue held so the batches are exactly as
// counted, or not held; one work-group or several. Every launch before it runs once;
// none after it runs: not those behind it in its batch, nor those that join batches made
// after it (which never run) or commands of their own (their events end in error).
// urQueueFlush works; urQueueFinish from several threads at once returns; the queue and
// failing program are released with nothing left to run.
TEST_P(LaunchBatchEdges, FailingLaunchAtABatchsEdgesStopsWhatFollows) {
  if (!options.native) GTEST_SKIP() << "no way to make a launch fail at run time on " << found().backend_name;
  ur_device_handle_t dev = device();
  const size_t positions[] = {0, 1, 2, 62, 63, 64, 65, 128};
  const size_t total = 200;
  uint32_t *mem = words(total);
  ASSERT_NE(nullptr, mem);
  const uint32_t *counting = counting_words(context, dev, queue, 16, &allocations);
  ASSERT_NE(nullptr, counting);
  Failures failures;
  int round = 0;
  for (size_t at : positions)
    for (bool held : {true, false}) {
      SCOPED_TRACE("failing launch " + std::to_string(at) + (held ? ", held" : ""));
      FailingKernel fk = load_failing_kernel(context, dev);
      if (!fk.why.empty()) GTEST_SKIP() << fk.why;
      ur_queue_handle_t q = nullptr;
      ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &q));
      const uint32_t zero = 0;
      ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, 4, &zero, total * 4, 0, nullptr, nullptr));
      ASSERT_SUCCESS(urQueueFinish(queue));
      SlotProgram p(kernels, mem, 0, total, 0xfa11 + round, counting, options.max_local);
      Gate *gate = held ? hold(q) : nullptr;
      for (size_t j = 0; j < at; ++j) p.launch(q, j, failures, held ? Mix::single : Mix::any);
      const size_t groups = round++ % 2 ? 3 : 1, one = 1;
      ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(q, fk.kernel, 1, nullptr, &groups, &one, 0, nullptr, nullptr, 0,
                                                      nullptr, nullptr));
      std::vector<ur_event_handle_t> events;
      for (size_t j = at; j < total; ++j) {
        if (j % 50 == 49) { // a command of its own, with an event
          ur_event_handle_t ev = nullptr;
          const size_t off = j;
          std::vector<ur_exp_kernel_arg_properties_t> a{arg_pointer(0, mem)};
          ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(q, kernels.inc, 1, &off, &one, nullptr, 1, a.data(), nullptr,
                                                          0, nullptr, &ev));
          events.push_back(ev);
          continue;
        }
        p.launch(q, j, failures, held ? Mix::single : Mix::any);
        if (!held && j % 7 == 0) busy_pause(5);
      }
      if (gate) gate->open();
      EXPECT_SUCCESS(urQueueFlush(q));
      std::vector<std::thread> finishers;
      for (int f = 0; f < 3; ++f)
        finishers.emplace_back([&] {
          if (urQueueFinish(q) != UR_RESULT_SUCCESS) failures.add("urQueueFinish of the failed queue failed");
        });
      for (auto &th : finishers) th.join();
      for (ur_event_handle_t ev : events) {
        EXPECT_EQ_RESULT(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS, urEventWait(1, &ev));
        EXPECT_EQ(UR_EVENT_STATUS_ERROR, conf::event_status(ev));
        EXPECT_SUCCESS(urEventRelease(ev));
      }
      const std::vector<uint32_t> h = read(mem, total);
      p.check(h, at, failures, "after the failing launch");
      EXPECT_EQ(0, failures.count()) << failures.text();
      EXPECT_SUCCESS(urQueueRelease(q));
      EXPECT_SUCCESS(urKernelRelease(fk.kernel));
      EXPECT_SUCCESS(urProgramRelease(fk.program));
      if (HasFailure()) return;
    }
}

// A failing launch, then threads launching as fast as they can into the poisoned queue:
// their launches join batches that will never run, which the scheduler ends (and closes)
// while they join. None of them runs. Then everything is released without a finish:
// kernels, both programs, the queue and its context, whose extended deleter runs once.
TEST_P(LaunchBatchEdges, LaunchesJoinBatchesThatNeverRunThenEverythingIsReleased) {
  if (!options.native) GTEST_SKIP() << "no way to make a launch fail at run time on " << found().backend_name;
  ur_usm_type_t kind = UR_USM_TYPE_HOST;
  if (!conf::usm_supported(device(), kind)) GTEST_SKIP() << "no host USM";
  ur_device_handle_t dev = device();
  constexpr int kThreads = 2;
  constexpr size_t kBefore = 40, kAfter = 400;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ur_context_handle_t c = nullptr;
    ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &c));
    std::atomic<int> &deleted = new_counter();
    ASSERT_RESULT_IN(urContextSetExtendedDeleter(c, count_deletion, &deleted), UR_RESULT_SUCCESS);
    urinfo::TestProgram tp = urinfo::load_test_program(conf::kernel_dir(), c, found());
    ASSERT_TRUE(tp.ok()) << tp.problem();
    Kernels k = make_kernels(tp.program, false);
    ASSERT_FALSE(HasFailure());
    FailingKernel fk = load_failing_kernel(c, dev);
    if (!fk.why.empty()) GTEST_SKIP() << fk.why;
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(urQueueCreate(c, dev, nullptr, &q));
    // Words of the fixture's context, which outlives c, read after c has gone (native CPU:
    // USM is host memory, which kernels of any context may use).
    void *p = nullptr;
    ASSERT_SUCCESS(conf::usm_alloc(context, dev, kind, (kBefore + kThreads * kAfter) * 4, &p));
    allocations.push_back(p);
    auto *mem = static_cast<uint32_t *>(p);
    std::memset(mem, 0, (kBefore + kThreads * kAfter) * 4);
    const uint32_t *counting = counting_words(c, dev, q, 16); // c's: freed with it
    ASSERT_NE(nullptr, counting);
    Failures failures;
    SlotProgram before(k, mem, 0, kBefore, 0xbef0 + round, counting, options.max_local);
    for (size_t j = 0; j < kBefore; ++j) before.launch(q, j, failures);
    const size_t one = 1;
    ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(q, fk.kernel, 1, nullptr, &one, nullptr, 0, nullptr, nullptr, 0,
                                                    nullptr, nullptr));
    if (round % 2) {
      EXPECT_SUCCESS(urKernelRelease(fk.kernel)); // the failing launch still pending, most likely
      fk.kernel = nullptr;
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        SlotProgram after(k, mem, kBefore + t * kAfter, kAfter, 0xaf70 + t + round, counting, options.max_local);
        std::mt19937_64 rng(round * 16 + t);
        for (size_t j = 0; j < kAfter; ++j) {
          after.launch(q, j, failures);
          if (rng() % 32 == 0) busy_pause(3 + unsigned(rng() % 10));
          if (rng() % 64 == 0 && urQueueFlush(q) != UR_RESULT_SUCCESS) failures.add("urQueueFlush failed");
        }
      });
    for (auto &th : threads) th.join();
    EXPECT_EQ(0, failures.count()) << failures.text();
    // Released at once, the last launches' batch maybe still open.
    for (ur_kernel_handle_t h : {k.fill, k.inc, k.sum, k.empty}) EXPECT_SUCCESS(urKernelRelease(h));
    if (fk.kernel) {
      EXPECT_SUCCESS(urKernelRelease(fk.kernel));
    }
    EXPECT_SUCCESS(urProgramRelease(fk.program));
    EXPECT_SUCCESS(urProgramRelease(tp.program));
    EXPECT_SUCCESS(urQueueRelease(q));
    EXPECT_SUCCESS(urContextRelease(c));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (deleted.load() == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(1, deleted.load()) << "the context's extended deleter (a hang guard of 60 s, not a timing check)";
    // Everything of c has gone, so every command has ended: read the words.
    std::vector<uint32_t> h(mem, mem + kBefore + kThreads * kAfter);
    before.check(std::vector<uint32_t>(h.begin(), h.begin() + kBefore), kBefore, failures, "before the failure");
    for (size_t i = kBefore; i < h.size(); ++i)
      if (h[i] != 0) {
        failures.add("launch at slot " + std::to_string(i) + ", made after the failing one, ran");
        break;
      }
    EXPECT_EQ(0, failures.count()) << failures.text();
  }
}

// Kernels, program, queue and context released right after bursts from two threads, the
// worker maybe watching for more or closing the last batch: one thread releases its own
// kernel handles while the other still launches. A host task queued last (where the
// device runs them) copies the words out; once the context's deleter has run, the copy
// must show every launch exactly.
TEST_P(LaunchBatchEdges, ReleasedRightAfterBurstsWhileTheWorkerClosesBatches) {
  ur_device_handle_t dev = device();
  constexpr int kThreads = 2;
  const size_t per = backend() == UR_BACKEND_OPENCL ? 100 : 300;
  struct Copy {
    const uint32_t *from = nullptr;
    std::vector<uint32_t> to;
    static void run(void *self) {
      auto *c = static_cast<Copy *>(self);
      std::copy(c->from, c->from + c->to.size(), c->to.begin());
    }
  };
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ur_context_handle_t c = nullptr;
    ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &c));
    std::atomic<int> &deleted = new_counter();
    const ur_result_t deleter = urContextSetExtendedDeleter(c, count_deletion, &deleted);
    ASSERT_RESULT_IN(deleter, UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    urinfo::TestProgram tp = urinfo::load_test_program(conf::kernel_dir(), c, found());
    ASSERT_TRUE(tp.ok()) << tp.problem();
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(urQueueCreate(c, dev, nullptr, &q));
    // Host memory where the device has it, for the host task to copy from.
    const ur_usm_type_t kind = conf::usm_supported(dev, UR_USM_TYPE_HOST) ? UR_USM_TYPE_HOST : UR_USM_TYPE_DEVICE;
    void *p = nullptr;
    ASSERT_SUCCESS(conf::usm_alloc(c, dev, kind, kThreads * per * 4, &p));
    const uint32_t zero = 0;
    ASSERT_SUCCESS(urEnqueueUSMFill(q, p, 4, &zero, kThreads * per * 4, 0, nullptr, nullptr));
    auto *mem = static_cast<uint32_t *>(p);
    const uint32_t *counting = counting_words(c, dev, q, 16); // c's: freed with it
    ASSERT_NE(nullptr, counting);
    Failures failures;
    std::vector<std::unique_ptr<SlotProgram>> programs(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        Kernels k = make_kernels(tp.program, false); // this thread's handles
        programs[t].reset(new SlotProgram(k, mem, t * per, per, 0x7e1 + round * 4 + t, counting, options.max_local));
        std::mt19937_64 rng(round * 4 + t);
        for (size_t j = 0; j < per && failures.count() == 0; ++j) {
          programs[t]->launch(q, j, failures);
          if (rng() % 40 == 0) busy_pause(3 + unsigned(rng() % 20));
        }
        for (ur_kernel_handle_t h : {k.fill, k.inc, k.sum, k.empty})
          if (h && urKernelRelease(h) != UR_RESULT_SUCCESS) failures.add("urKernelRelease failed");
      });
    for (auto &th : threads) th.join();
    ASSERT_EQ(0, failures.count()) << failures.text();
    Copy *copy = nullptr;
    if (host_tasks && kind == UR_USM_TYPE_HOST) {
      static std::mutex mu;
      static std::deque<Copy> copies; // a host task may outlive a failed test
      std::lock_guard<std::mutex> lock(mu);
      copies.emplace_back();
      copy = &copies.back();
      copy->from = mem;
      copy->to.assign(kThreads * per, 0xffffffffu);
      ASSERT_SUCCESS(urEnqueueHostTaskExp(q, Copy::run, copy, nullptr, 0, nullptr, nullptr));
    }
    EXPECT_SUCCESS(urProgramRelease(tp.program));
    EXPECT_SUCCESS(urQueueRelease(q));
    EXPECT_SUCCESS(urContextRelease(c));
    if (deleter != UR_RESULT_SUCCESS) continue;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (deleted.load() == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(1, deleted.load()) << "the context's extended deleter (a hang guard of 60 s, not a timing check)";
    if (!copy) continue;
    for (int t = 0; t < kThreads; ++t)
      programs[t]->check(std::vector<uint32_t>(copy->to.begin() + t * per, copy->to.begin() + (t + 1) * per), per,
                         failures, "copied by the last host task");
    EXPECT_EQ(0, failures.count()) << failures.text();
  }
}

// Two host tasks that each wait until the other has started (a hang guard of 10 s, then
// the task gives up and the test fails): with two or more workers they must run at once,
// whether they come after bursts of launches on two in-order queues, sit on one
// out-of-order queue, are both made ready by one command finishing on a worker, or the
// second comes while the first already occupies a worker.
struct Rendezvous {
  std::atomic<int> arrived{0}, gave_up{0};
  static void meet(void *self) {
    auto *r = static_cast<Rendezvous *>(self);
    r->arrived.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (r->arrived.load() < 2)
      if (std::chrono::steady_clock::now() >= until) {
        r->gave_up.fetch_add(1);
        return;
      }
  }
};
Rendezvous &new_rendezvous() { return kept<Rendezvous>(); }

// A host task that launches increments into another queue and waits for them, on its
// worker (a hang guard of 5 s, polling the last launch's event).
struct LaunchAndWait {
  ur_queue_handle_t q = nullptr;
  ur_kernel_handle_t inc = nullptr;
  uint32_t *mem = nullptr;
  std::vector<size_t> offsets;
  std::atomic<int> result{-1};
  std::atomic<bool> gave_up{false};
  static void run(void *self) {
    auto *w = static_cast<LaunchAndWait *>(self);
    const size_t one = 1;
    ur_event_handle_t ev = nullptr;
    ur_result_t r = UR_RESULT_SUCCESS;
    for (size_t i = 0; i < w->offsets.size() && r == UR_RESULT_SUCCESS; ++i) {
      const ur_exp_kernel_arg_properties_t a = arg_pointer(0, w->mem);
      r = urEnqueueKernelLaunchWithArgsExp(w->q, w->inc, 1, &w->offsets[i], &one, nullptr, 1, &a, nullptr, 0, nullptr,
                                           i + 1 == w->offsets.size() ? &ev : nullptr);
    }
    if (r == UR_RESULT_SUCCESS && ev) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (conf::event_status(ev) != UR_EVENT_STATUS_COMPLETE)
        if (std::chrono::steady_clock::now() >= until) {
          w->gave_up.store(true);
          break;
        }
    }
    if (ev) urEventRelease(ev);
    w->result.store(r);
  }
};
LaunchAndWait &new_launch_and_wait() { return kept<LaunchAndWait>(); }

TEST_P(LaunchBatchEdges, TasksThatWaitForEachOtherRunAtOnce) {
  if (const std::string why = two_native_workers("whether two host tasks run at once"); !why.empty())
    GTEST_SKIP() << why;
  const size_t n = 256;
  uint32_t *mem = words(n);
  ASSERT_NE(nullptr, mem);
  ur_queue_handle_t a = nullptr, b = nullptr, ooo = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &a));
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &b));
  const bool have_ooo = conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  if (have_ooo) {
    ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooo));
  }
  std::mt19937_64 rng(0x2e);
  std::vector<uint32_t> model(n, 0);
  // Each queue's launches increment words of its own half: the queues run at once.
  auto burst = [&](ur_queue_handle_t q, size_t len) {
    for (size_t i = 0; i < len; ++i) {
      const size_t off = (q == a ? 0 : n / 2) + rng() % (n / 2), one = 1;
      std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, mem)};
      ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(q, kernels.inc, 1, &off, &one, nullptr, 1, args.data(), nullptr,
                                                      0, nullptr, nullptr));
      ++model[off];
    }
  };
  const char *names[] = {"after bursts on two in-order queues", "on one out-of-order queue",
                         "made ready by one command's end", "the second while the first runs"};
  for (int round = 0; round < 24; ++round) {
    const int variant = round % 4;
    SCOPED_TRACE(std::string(names[variant]) + ", round " + std::to_string(round));
    Rendezvous &r = new_rendezvous();
    switch (variant) {
    case 0:
      burst(a, rng() % 130);
      ASSERT_SUCCESS(urEnqueueHostTaskExp(a, Rendezvous::meet, &r, nullptr, 0, nullptr, nullptr));
      burst(b, rng() % 130);
      ASSERT_SUCCESS(urEnqueueHostTaskExp(b, Rendezvous::meet, &r, nullptr, 0, nullptr, nullptr));
      break;
    case 1:
      if (!ooo) continue;
      for (int i = 0; i < 2; ++i)
        ASSERT_SUCCESS(urEnqueueHostTaskExp(ooo, Rendezvous::meet, &r, nullptr, 0, nullptr, nullptr));
      break;
    case 2: {
      Gate &g = new_gate();
      ur_event_handle_t opened = nullptr;
      ASSERT_SUCCESS(urEnqueueHostTaskExp(a, Gate::wait, &g, nullptr, 0, nullptr, &opened));
      ASSERT_SUCCESS(urEnqueueHostTaskExp(a, Rendezvous::meet, &r, nullptr, 0, nullptr, nullptr));
      ASSERT_SUCCESS(urEnqueueHostTaskExp(b, Rendezvous::meet, &r, nullptr, 1, &opened, nullptr));
      g.open();
      EXPECT_SUCCESS(urEventRelease(opened));
      break;
    }
    default: {
      burst(a, rng() % 70);
      ASSERT_SUCCESS(urEnqueueHostTaskExp(a, Rendezvous::meet, &r, nullptr, 0, nullptr, nullptr));
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (r.arrived.load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      ASSERT_EQ(1, r.arrived.load()) << "the first host task never started (a hang guard of 10 s)";
      // Long enough for the idle worker to stop watching and sleep (past the default 50 µs):
      // the push finds one worker busy and none watching.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      burst(b, rng() % 70);
      ASSERT_SUCCESS(urEnqueueHostTaskExp(b, Rendezvous::meet, &r, nullptr, 0, nullptr, nullptr));
      break;
    }
    }
    for (ur_queue_handle_t q : {a, b, ooo})
      if (q) {
        ASSERT_SUCCESS(urQueueFinish(q));
      }
    EXPECT_EQ(2, r.arrived.load());
    ASSERT_EQ(0, r.gave_up.load()) << "a host task waited 10 s for the other, which did not run beside it";
  }
  const std::vector<uint32_t> h = read(mem, n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(model[i], h[i]) << "word " << i;
  for (ur_queue_handle_t q : {a, b, ooo})
    if (q) {
      EXPECT_SUCCESS(urQueueRelease(q));
    }
}

// A host task, and an event callback, that launch into another queue and wait for those
// launches (a worker blocked in user code is a worker less, docs/native-cpu.md): with two
// or more workers, another worker must run them. A hang guard of 5 s each, then the
// test fails (once for each of the two; the rounds after go on, as the launches ran then).
TEST_P(LaunchBatchEdges, WorkerWaitsForLaunchesItMadeOnAnotherQueue) {
  if (const std::string why = two_native_workers("whether a host task may wait for other commands"); !why.empty())
    GTEST_SKIP() << why;
  const size_t n = 256;
  uint32_t *mem = words(n);
  ASSERT_NE(nullptr, mem);
  ur_queue_handle_t a = nullptr, b = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &a));
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &b));
  std::mt19937_64 rng(0x3f);
  std::vector<uint32_t> model(n, 0);
  bool stuck[2] = {false, false};
  for (int round = 0; round < 8; ++round) {
    const bool callback = round % 2;
    if (stuck[callback]) continue;
    SCOPED_TRACE(std::string(callback ? "an event callback" : "a host task") + ", round " + std::to_string(round));
    LaunchAndWait &w = new_launch_and_wait();
    w.q = b;
    w.inc = kernels.inc;
    w.mem = mem;
    for (size_t i = 1 + rng() % 100; i > 0; --i) {
      w.offsets.push_back(rng() % n);
      ++model[w.offsets.back()];
    }
    if (callback) {
      // The queue's last command: nothing made ready by its end occupies the worker after it.
      ur_event_handle_t ev = nullptr;
      Gate &g = new_gate();
      ASSERT_SUCCESS(urEnqueueHostTaskExp(a, Gate::wait, &g, nullptr, 0, nullptr, &ev));
      ASSERT_SUCCESS(urEventSetCallback(
          ev, UR_EXECUTION_INFO_COMPLETE,
          [](ur_event_handle_t, ur_execution_info_t, void *self) { LaunchAndWait::run(self); }, &w));
      g.open();
      EXPECT_SUCCESS(urEventRelease(ev));
    } else {
      ASSERT_SUCCESS(urEnqueueHostTaskExp(a, LaunchAndWait::run, &w, nullptr, 0, nullptr, nullptr));
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (w.result.load() == -1 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    ASSERT_NE(-1, w.result.load()) << "the host task or callback never returned (a hang guard of 30 s)";
    ASSERT_EQ_RESULT(UR_RESULT_SUCCESS, static_cast<ur_result_t>(w.result.load())) << "its launches";
    stuck[callback] = w.gave_up.load();
    EXPECT_FALSE(stuck[callback]) << "it waited 5 s for its launches on another queue, which did not run";
    ASSERT_SUCCESS(urQueueFinish(a));
    ASSERT_SUCCESS(urQueueFinish(b));
  }
  const std::vector<uint32_t> h = read(mem, n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(model[i], h[i]) << "word " << i;
  for (ur_queue_handle_t q : {a, b}) EXPECT_SUCCESS(urQueueRelease(q));
}

CONF_INSTANTIATE_DEVICE_SUITE(LaunchBatchEdges);

} // namespace
