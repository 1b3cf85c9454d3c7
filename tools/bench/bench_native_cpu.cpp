// SPDX-License-Identifier: Apache-2.0
// Native CPU workloads of ordo-bench: kernel launch cost through libur_loader and
// the native CPU adapter, beside the bare minimum the same hand-off can cost: giving
// the same work (a call of the empty kernel's work-group function) to a worker
// thread through a condition variable and waiting for it, in the same run.
//
//   NativeCpu_EmptyLaunchWait_Ordo      one empty-kernel launch, then urQueueFinish (latency)
//   NativeCpu_EmptyLaunchWait_Handoff   one call handed to a worker thread, then wait for it
//   NativeCpu_LaunchThroughput_Ordo     256 empty-kernel launches, then urQueueFinish
//   NativeCpu_LaunchThroughput_Handoff  256 calls queued to a worker thread, then wait for all
//
// Everything is dlopen'ed (the loader, the kernels), so the binary links everywhere.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_loader.hpp"
#include "ur_api.h"
#define ORDO_NC_TYPES_ONLY
#include "ur_native_cpu_kernel.h"

namespace {
namespace bench_native_cpu {

constexpr int kLaunchBatch = 256;

std::string kernel_file() { return ordo_bench::kernel_path("native_cpu/ordo_test_kernels.so"); }

// ---- Ordo: UR through libur_loader.so.0, the native CPU platform ----

// A list of X(...) entries, laid out by hand.
// clang-format off
#define UR_FUNCTIONS(X)                                                                                                \
  X(urLoaderInit)                                                                                                      \
  X(urAdapterGet)                                                                                                      \
  X(urPlatformGet)                                                                                                     \
  X(urPlatformGetInfo)                                                                                                 \
  X(urDeviceGet) X(urContextCreate) X(urQueueCreate) X(urQueueFinish) X(urProgramCreateWithBinary) X(urProgramBuild)   \
      X(urKernelCreate) X(urEnqueueKernelLaunchWithArgsExp)
// clang-format on

struct Ordo {
  ORDO_BENCH_UR_ENTRY_POINTS(UR_FUNCTIONS)
  std::string error;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
  ur_kernel_handle_t empty = nullptr;

  static Ordo &get() { return ordo_bench::once<Ordo>(); }

  void init() {
    if (!ordo_bench::open_device(*this, UR_BACKEND_NATIVE_CPU, "native CPU")) return;
    if (urContextCreate(1, &device, nullptr, &context) || urQueueCreate(context, device, nullptr, &queue)) {
      error = "context/queue creation failed";
      return;
    }
    ur_program_handle_t program = ordo_bench::native_cpu_test_program(*this);
    if (!program) return;
    if (urKernelCreate(program, "empty", &empty)) {
      error = "building the native CPU test kernels failed";
      return;
    }
    launch();
    urQueueFinish(queue);
  }

  ur_result_t launch() {
    size_t one = 1;
    return urEnqueueKernelLaunchWithArgsExp(queue, empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr, 0, nullptr,
                                            nullptr);
  }
};

// ---- Hand-off: the same call run by one worker thread, signalled by a condition variable ----

struct Handoff {
  std::string error;
  ordo_nc_group_fn empty = nullptr;
  ordo_nc_range range{};
  ordo_nc_group group{};

  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::deque<int> tasks;
  uint64_t submitted = 0, completed = 0;
  std::thread worker;

  static Handoff &get() { return ordo_bench::once<Handoff>(); }

  void init() {
    // The kernel binary loaded directly: the work is the very function the adapter calls.
    void *lib = dlopen(kernel_file().c_str(), RTLD_NOW | RTLD_LOCAL);
    empty = lib ? reinterpret_cast<ordo_nc_group_fn>(dlsym(lib, "ordo_nc_kernel_empty")) : nullptr;
    if (!empty) {
      error = "test kernels not built: " + kernel_file();
      return;
    }
    range.work_dim = 1;
    for (int d = 0; d < 3; ++d) range.global_size[d] = range.local_size[d] = range.num_groups[d] = 1;
    group.range = &range;
    worker = std::thread([this] { run(); });
    worker.detach(); // lives as long as the process, like the adapter's workers
  }

  void run() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      work_cv.wait(lock, [&] { return !tasks.empty(); });
      tasks.pop_front();
      lock.unlock();
      empty(&group, nullptr);
      lock.lock();
      ++completed;
      done_cv.notify_all();
    }
  }

  void submit() {
    {
      std::lock_guard<std::mutex> lock(mu);
      tasks.push_back(0);
      ++submitted;
    }
    work_cv.notify_one();
  }

  void wait_all() {
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, [&] { return completed == submitted; });
  }
};

// ---- workloads ----

void NativeCpu_EmptyLaunchWait_Ordo(benchmark::State &state) {
  Ordo &o = Ordo::get();
  if (!o.error.empty()) return state.SkipWithError(o.error.c_str());
  for (auto _ : state) {
    if (o.launch()) return state.SkipWithError("launch failed");
    o.urQueueFinish(o.queue);
  }
  state.SetItemsProcessed(state.iterations());
}

void NativeCpu_EmptyLaunchWait_Handoff(benchmark::State &state) {
  Handoff &h = Handoff::get();
  if (!h.error.empty()) return state.SkipWithError(h.error.c_str());
  for (auto _ : state) {
    h.submit();
    h.wait_all();
  }
  state.SetItemsProcessed(state.iterations());
}

void NativeCpu_LaunchThroughput_Ordo(benchmark::State &state) {
  Ordo &o = Ordo::get();
  if (!o.error.empty()) return state.SkipWithError(o.error.c_str());
  for (auto _ : state) {
    for (int i = 0; i < kLaunchBatch; ++i)
      if (o.launch()) return state.SkipWithError("launch failed");
    o.urQueueFinish(o.queue);
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

void NativeCpu_LaunchThroughput_Handoff(benchmark::State &state) {
  Handoff &h = Handoff::get();
  if (!h.error.empty()) return state.SkipWithError(h.error.c_str());
  for (auto _ : state) {
    for (int i = 0; i < kLaunchBatch; ++i) h.submit();
    h.wait_all();
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

BENCHMARK(NativeCpu_EmptyLaunchWait_Ordo)->UseRealTime();
BENCHMARK(NativeCpu_EmptyLaunchWait_Handoff)->UseRealTime();
BENCHMARK(NativeCpu_LaunchThroughput_Ordo)->UseRealTime();
BENCHMARK(NativeCpu_LaunchThroughput_Handoff)->UseRealTime();

} // namespace bench_native_cpu
} // namespace
