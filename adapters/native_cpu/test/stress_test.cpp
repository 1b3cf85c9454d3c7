// SPDX-License-Identifier: Apache-2.0
// Several threads create queues, enqueue onto shared queues, wait and release at
// once. Meant for the thread- and address-sanitizer builds as much as the plain one.
#include <atomic>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuStress : public NativeCpu {};

TEST_F(NativeCpuStress, ThreadsShareQueuesEventsAndKernels) {
  ur_program_handle_t program = build_program(test_kernels_path());
  ur_kernel_handle_t inc = kernel(program, "increment");
  ur_queue_handle_t shared_in_order = make_queue();
  ur_queue_handle_t shared_ooo = make_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  const int threads = 8, rounds = 200;
  const size_t n = 256;
  std::vector<uint32_t *> buffers;
  for (int t = 0; t < threads; ++t) {
    auto *b = static_cast<uint32_t *>(shared_alloc(n * 4));
    std::fill(b, b + n, 0u);
    buffers.push_back(b);
  }
  static std::atomic<int> callbacks{0};
  callbacks = 0;
  std::atomic<int> failures{0};
  auto check = [&](ur_result_t r) {
    if (r != UR_RESULT_SUCCESS) failures++;
  };

  auto worker = [&](int id) {
    std::mt19937 rng(id);
    uint32_t *buf = buffers[id];
    for (int round = 0; round < rounds; ++round) {
      // A private queue for this round, of either kind.
      ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                  (rng() & 1) ? ur_queue_flags_t{UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE} : 0};
      ur_queue_handle_t own = nullptr;
      check(T(context).Queue.pfnCreate(context, device, &props, &own));
      if (!own) continue;
      // Three increments of this thread's buffer, chained across three queues by
      // events: own -> shared out-of-order -> shared in-order.
      ur_event_handle_t e1 = nullptr, e2 = nullptr, e3 = nullptr;
      std::vector<ur_exp_kernel_arg_properties_t> args = {pointer_arg(0, buf)};
      check(launch(own, inc, 1, &n, nullptr, args, 0, nullptr, &e1));
      check(launch(shared_ooo, inc, 1, &n, nullptr, args, 1, &e1, &e2));
      check(launch(shared_in_order, inc, 1, &n, nullptr, args, 1, &e2, &e3));
      check(T(e3).Event.pfnSetCallback(
          e3, UR_EXECUTION_INFO_COMPLETE, [](ur_event_handle_t, ur_execution_info_t, void *) { callbacks++; },
          nullptr));
      // Extra traffic that touches no buffer: markers and barriers on the shared queues.
      check(T(shared_ooo).Enqueue.pfnEventsWait(shared_ooo, 0, nullptr, nullptr));
      if (rng() % 8 == 0) check(T(shared_ooo).Enqueue.pfnEventsWaitWithBarrier(shared_ooo, 0, nullptr, nullptr));
      check(T(shared_in_order).Queue.pfnRetain(shared_in_order));
      // Release in a random order, some before the work is done.
      switch (rng() % 3) {
      case 0: check(T(e3).Event.pfnWait(1, &e3)); break;
      case 1:
        check(T(own).Queue.pfnFinish(own));
        check(T(e3).Event.pfnWait(1, &e3));
        break;
      default:
        check(T(e1).Event.pfnRelease(e1));
        e1 = nullptr;
        check(T(e3).Event.pfnWait(1, &e3));
      }
      check(T(own).Queue.pfnRelease(own));
      for (auto e : {e1, e2, e3})
        if (e) check(T(e).Event.pfnRelease(e));
      check(T(shared_in_order).Queue.pfnRelease(shared_in_order));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (auto &t : pool) t.join();
  ASSERT_EQ(T(shared_ooo).Queue.pfnFinish(shared_ooo), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(shared_in_order).Queue.pfnFinish(shared_in_order), UR_RESULT_SUCCESS);
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < threads; ++t)
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(buffers[t][i], uint32_t(3 * rounds)) << "thread " << t;
  // Callbacks run on workers; all of them have by the time the queues are finished
  // only if they ran before completion was published, so wait a little for stragglers.
  for (int i = 0; i < 2000 && callbacks.load() < threads * rounds; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(callbacks.load(), threads * rounds);
}

// Many threads create and destroy contexts, programs, kernels and allocations.
TEST_F(NativeCpuStress, ThreadsCreateAndDestroyObjects) {
  std::vector<uint8_t> bin = read_file(test_kernels_path());
  std::atomic<int> failures{0}, shared_modules{0};
  // Entry points of the programs alive right now: each program must be its own copy.
  std::mutex live_mu;
  std::set<void *> live_entry_points;
  auto worker = [&](int id) {
    for (int round = 0; round < 30; ++round) {
      ur_context_handle_t c = nullptr;
      if (ddi().Context.pfnCreate(1, &device, nullptr, &c) != UR_RESULT_SUCCESS) {
        failures++;
        continue;
      }
      size_t len = bin.size();
      const uint8_t *data = bin.data();
      ur_program_handle_t p = nullptr;
      ur_kernel_handle_t k = nullptr;
      ur_queue_handle_t q = nullptr;
      void *mem = nullptr;
      bool ok = T(c).Program.pfnCreateWithBinary(c, 1, &device, &len, &data, nullptr, &p) == UR_RESULT_SUCCESS &&
                T(p).Program.pfnBuild(c, p, nullptr) == UR_RESULT_SUCCESS &&
                T(p).Kernel.pfnCreate(p, "fill", &k) == UR_RESULT_SUCCESS &&
                T(c).Queue.pfnCreate(c, device, nullptr, &q) == UR_RESULT_SUCCESS &&
                T(c).USM.pfnDeviceAlloc(c, device, nullptr, nullptr, 1024 * 4, &mem) == UR_RESULT_SUCCESS;
      void *entry = nullptr;
      if (ok && T(p).Program.pfnGetFunctionPointer(device, p, "fill", &entry) == UR_RESULT_SUCCESS) {
        std::lock_guard<std::mutex> lock(live_mu);
        if (!live_entry_points.insert(entry).second) shared_modules++;
      }
      if (ok) {
        uint32_t value = static_cast<uint32_t>(id);
        size_t n = 1024;
        ok = launch(q, k, 1, &n, nullptr, {pointer_arg(0, mem), value_arg(1, 4, &value)}) == UR_RESULT_SUCCESS;
        // Release the kernel and program while the launch may still run.
        {
          std::lock_guard<std::mutex> lock(live_mu);
          live_entry_points.erase(entry);
        }
        T(k).Kernel.pfnRelease(k);
        T(p).Program.pfnRelease(p);
        k = nullptr;
        p = nullptr;
        ok = ok && T(q).Queue.pfnFinish(q) == UR_RESULT_SUCCESS && static_cast<uint32_t *>(mem)[1023] == value;
      }
      if (!ok) failures++;
      if (k) T(k).Kernel.pfnRelease(k);
      if (p) T(p).Program.pfnRelease(p);
      if (q) T(q).Queue.pfnRelease(q);
      if (mem) T(c).USM.pfnFree(c, mem);
      T(c).Context.pfnRelease(c);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < 6; ++t) pool.emplace_back(worker, t);
  for (auto &t : pool) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(shared_modules.load(), 0);
}

} // namespace
