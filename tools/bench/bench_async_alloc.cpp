// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation on the native CPU device (docs/async-alloc.md), through
// libur_loader as a user calls it, each workload beside its baseline in the same run:
//
//   AsyncAlloc_AllocFreePair_Ordo_QueueIdle   urEnqueueUSMDeviceAllocExp + urEnqueueUSMFreeExp,
//                                             4 KiB, in-order queue with nothing pending
//   AsyncAlloc_AllocFreePair_Ordo_QueueBusy   the same while a host task holds the queue: every
//                                             free is pending and the next alloc reuses the
//                                             block by queue order (a blocking call would hang)
//   AsyncAlloc_AllocFreePair_Malloc           malloc + free of 4 KiB
//   AsyncAlloc_Pipeline_{InOrder,OutOfOrder}_Ordo         64 x (alloc 64 KiB -> increment -> free),
//                                                         then urQueueFinish; out of order with
//                                                         explicit wait lists
//   AsyncAlloc_Pipeline_{InOrder,OutOfOrder}_Synchronous  64 x (urUSMDeviceAlloc -> increment ->
//                                                         urQueueFinish -> urUSMFree)
//   AsyncAlloc_Random_Ordo/N      N allocations on two in-order queues, 73 % alloc / 27 % free of a
//                                 random live block, sizes 1 KiB..64 MiB log-uniform; counters:
//                                 reserved_high, used_high (MiB) and their ratio
//   AsyncAlloc_Random_Malloc/N    the same sequence with malloc / free
//
// Everything is dlopen'ed (the loader, the kernels), so the binary links everywhere.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_loader.hpp"
#include "random_sequence.hpp"
#include "ur_api.h"

namespace {
namespace bench_async_alloc {

constexpr size_t kPairBytes = 4096;
constexpr int kPipelineDepth = 64;
constexpr size_t kPipelineBytes = 64 << 10;
constexpr size_t kPipelineItems = kPipelineBytes / sizeof(uint32_t);

// A list of X(...) entries, laid out by hand.
// clang-format off
#define UR_FUNCTIONS(X)                                                                                                \
  X(urLoaderInit)                                                                                                      \
  X(urAdapterGet)                                                                                                      \
  X(urPlatformGet)                                                                                                     \
  X(urPlatformGetInfo)                                                                                                 \
  X(urDeviceGet) X(urDeviceGetInfo) X(urContextCreate) X(urQueueCreate) X(urQueueFinish) X(urProgramCreateWithBinary)  \
      X(urProgramBuild) X(urKernelCreate) X(urEnqueueKernelLaunchWithArgsExp) X(urEnqueueHostTaskExp)                  \
          X(urEnqueueUSMDeviceAllocExp) X(urEnqueueUSMFreeExp) X(urUSMDeviceAlloc) X(urUSMFree) X(urEventRelease)      \
              X(urUSMPoolGetDefaultDevicePoolExp) X(urUSMPoolGetInfoExp) X(urUSMPoolSetInfoExp) X(urUSMPoolTrimToExp)
// clang-format on

// The native CPU device through the Ordo loader: one context, an in-order and an
// out-of-order queue, the increment kernel.
struct Ordo {
  ORDO_BENCH_UR_ENTRY_POINTS(UR_FUNCTIONS)
  std::string error;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t in_order = nullptr, out_of_order = nullptr, second = nullptr;
  ur_kernel_handle_t increment = nullptr;
  ur_usm_pool_handle_t pool = nullptr; // the device's default pool

  static Ordo &get() { return ordo_bench::once<Ordo>(); }

  void init() {
    if (!ordo_bench::open_device(*this, UR_BACKEND_NATIVE_CPU, "native CPU")) return;
    ur_bool_t async = 0;
    urDeviceGetInfo(device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof async, &async, nullptr);
    if (!async) {
      error = "the native CPU device reports no stream-ordered allocation";
      return;
    }
    ur_queue_properties_t ooo{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
    if (urContextCreate(1, &device, nullptr, &context) || urQueueCreate(context, device, nullptr, &in_order) ||
        urQueueCreate(context, device, nullptr, &second) || urQueueCreate(context, device, &ooo, &out_of_order) ||
        urUSMPoolGetDefaultDevicePoolExp(context, device, &pool)) {
      error = "context, queue or pool creation failed";
      return;
    }
    ur_program_handle_t program = ordo_bench::native_cpu_test_program(*this);
    if (!program) return;
    if (urKernelCreate(program, "increment", &increment)) {
      error = "building the native CPU test kernels failed";
      return;
    }
  }

  size_t stat(ur_usm_pool_info_t what) {
    size_t v = 0;
    urUSMPoolGetInfoExp(pool, what, &v, nullptr);
    return v;
  }
  // A pipeline keeps its memory between urQueueFinish calls (steady state), as a
  // user raises the threshold of a pool they reuse.
  void set_threshold(size_t bytes) {
    urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &bytes, sizeof bytes);
  }
  ur_result_t launch_increment(ur_queue_handle_t q, void *p, uint32_t nwait, const ur_event_handle_t *waits,
                               ur_event_handle_t *ev) {
    ur_exp_kernel_arg_properties_t arg{};
    arg.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
    arg.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
    arg.index = 0;
    arg.size = sizeof(void *);
    arg.value.pointer = p;
    size_t n = kPipelineItems;
    return urEnqueueKernelLaunchWithArgsExp(q, increment, 1, nullptr, &n, nullptr, 1, &arg, nullptr, nwait, waits, ev);
  }
};

#define ORDO_OR_SKIP(o)                                                                                                \
  Ordo &o = Ordo::get();                                                                                               \
  if (!o.error.empty()) return state.SkipWithError(o.error.c_str())

// ---- (a) an alloc + free pair that hits the pool ----

void AsyncAlloc_AllocFreePair_Ordo_QueueIdle(benchmark::State &state) {
  ORDO_OR_SKIP(o);
  o.urQueueFinish(o.in_order);
  for (auto _ : state) {
    void *p = nullptr;
    if (o.urEnqueueUSMDeviceAllocExp(o.in_order, nullptr, kPairBytes, nullptr, 0, nullptr, &p, nullptr) ||
        o.urEnqueueUSMFreeExp(o.in_order, nullptr, p, 0, nullptr, nullptr))
      return state.SkipWithError("alloc/free failed");
    benchmark::DoNotOptimize(p);
  }
  o.urQueueFinish(o.in_order);
  state.SetItemsProcessed(state.iterations());
}

// A host task holds the queue for the whole timed loop: no free can complete, so a
// call that waited for one would never return.
void AsyncAlloc_AllocFreePair_Ordo_QueueBusy(benchmark::State &state) {
  ORDO_OR_SKIP(o);
  static std::atomic<bool> release{false};
  release = false;
  auto hold = [](void *) {
    while (!release.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  ur_event_handle_t held = nullptr;
  if (o.urEnqueueHostTaskExp(o.in_order, hold, nullptr, nullptr, 0, nullptr, &held))
    return state.SkipWithError("urEnqueueHostTaskExp failed");
  for (auto _ : state) {
    void *p = nullptr;
    if (o.urEnqueueUSMDeviceAllocExp(o.in_order, nullptr, kPairBytes, nullptr, 0, nullptr, &p, nullptr) ||
        o.urEnqueueUSMFreeExp(o.in_order, nullptr, p, 0, nullptr, nullptr))
      return state.SkipWithError("alloc/free failed");
    benchmark::DoNotOptimize(p);
  }
  release = true; // only now can the queue move: every pair above ran while it was held
  o.urQueueFinish(o.in_order);
  o.urEventRelease(held);
  state.SetItemsProcessed(state.iterations());
}

void AsyncAlloc_AllocFreePair_Malloc(benchmark::State &state) {
  for (auto _ : state) {
    void *p = std::malloc(kPairBytes);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
  state.SetItemsProcessed(state.iterations());
}

// ---- (b) alloc -> kernel -> free pipelines ----

void pipeline_ordo(benchmark::State &state, bool out_of_order) {
  ORDO_OR_SKIP(o);
  ur_queue_handle_t q = out_of_order ? o.out_of_order : o.in_order;
  o.set_threshold(64 << 20);
  for (auto _ : state) {
    for (int i = 0; i < kPipelineDepth; ++i) {
      void *p = nullptr;
      if (!out_of_order) {
        if (o.urEnqueueUSMDeviceAllocExp(q, nullptr, kPipelineBytes, nullptr, 0, nullptr, &p, nullptr) ||
            o.launch_increment(q, p, 0, nullptr, nullptr) || o.urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr))
          return state.SkipWithError("in-order pipeline failed");
        continue;
      }
      ur_event_handle_t allocated = nullptr, ran = nullptr;
      if (o.urEnqueueUSMDeviceAllocExp(q, nullptr, kPipelineBytes, nullptr, 0, nullptr, &p, &allocated) ||
          o.launch_increment(q, p, 1, &allocated, &ran) || o.urEnqueueUSMFreeExp(q, nullptr, p, 1, &ran, nullptr))
        return state.SkipWithError("out-of-order pipeline failed");
      o.urEventRelease(allocated);
      o.urEventRelease(ran);
    }
    o.urQueueFinish(q);
  }
  o.set_threshold(0);
  o.urQueueFinish(q);
  state.SetItemsProcessed(state.iterations() * kPipelineDepth);
}

void pipeline_synchronous(benchmark::State &state, bool out_of_order) {
  ORDO_OR_SKIP(o);
  ur_queue_handle_t q = out_of_order ? o.out_of_order : o.in_order;
  for (auto _ : state) {
    for (int i = 0; i < kPipelineDepth; ++i) {
      void *p = nullptr;
      if (o.urUSMDeviceAlloc(o.context, o.device, nullptr, nullptr, kPipelineBytes, &p) ||
          o.launch_increment(q, p, 0, nullptr, nullptr) || o.urQueueFinish(q) || o.urUSMFree(o.context, p))
        return state.SkipWithError("synchronous pipeline failed");
    }
  }
  state.SetItemsProcessed(state.iterations() * kPipelineDepth);
}

void AsyncAlloc_Pipeline_InOrder_Ordo(benchmark::State &state) { pipeline_ordo(state, false); }
void AsyncAlloc_Pipeline_InOrder_Synchronous(benchmark::State &state) { pipeline_synchronous(state, false); }
void AsyncAlloc_Pipeline_OutOfOrder_Ordo(benchmark::State &state) { pipeline_ordo(state, true); }
void AsyncAlloc_Pipeline_OutOfOrder_Synchronous(benchmark::State &state) { pipeline_synchronous(state, true); }

// ---- (c) a random allocation workload ----

using ordo_bench::Step;
const std::vector<Step> &sequence(int allocations) {
  static std::vector<std::vector<Step>> made(3);
  std::vector<Step> &s = made[allocations <= 1000 ? 0 : allocations <= 10000 ? 1 : 2];
  if (s.empty()) s = ordo_bench::random_sequence(allocations);
  return s;
}

void AsyncAlloc_Random_Ordo(benchmark::State &state) {
  ORDO_OR_SKIP(o);
  const std::vector<Step> &steps = sequence(static_cast<int>(state.range(0)));
  ur_queue_handle_t queues[2] = {o.in_order, o.second};
  double reserved_high = 0, used_high = 0;
  std::vector<void *> live;
  for (auto _ : state) {
    state.PauseTiming();
    o.urQueueFinish(o.in_order);
    o.urQueueFinish(o.second);
    o.urUSMPoolTrimToExp(o.context, o.device, o.pool, 0);
    size_t zero = 0;
    o.urUSMPoolSetInfoExp(o.pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP, &zero, sizeof zero);
    o.urUSMPoolSetInfoExp(o.pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &zero, sizeof zero);
    live.clear();
    live.reserve(steps.size());
    state.ResumeTiming();
    for (const Step &s : steps) {
      if (s.alloc) {
        void *p = nullptr;
        if (o.urEnqueueUSMDeviceAllocExp(queues[s.queue], nullptr, s.size_or_victim, nullptr, 0, nullptr, &p, nullptr))
          return state.SkipWithError("alloc failed");
        live.push_back(p);
      } else {
        void *p = live[s.size_or_victim];
        live[s.size_or_victim] = live.back();
        live.pop_back();
        if (o.urEnqueueUSMFreeExp(queues[s.queue], nullptr, p, 0, nullptr, nullptr))
          return state.SkipWithError("free failed");
      }
    }
    for (size_t i = 0; i < live.size(); ++i)
      o.urEnqueueUSMFreeExp(queues[i % 2], nullptr, live[i], 0, nullptr, nullptr);
    state.PauseTiming();
    reserved_high = double(o.stat(UR_USM_POOL_INFO_RESERVED_HIGH_EXP));
    used_high = double(o.stat(UR_USM_POOL_INFO_USED_HIGH_EXP));
    o.urQueueFinish(o.in_order);
    o.urQueueFinish(o.second);
    state.ResumeTiming();
  }
  state.counters["reserved_high_MiB"] = reserved_high / (1 << 20);
  state.counters["used_high_MiB"] = used_high / (1 << 20);
  state.counters["reserved_per_used"] = used_high > 0 ? reserved_high / used_high : 0;
  state.SetItemsProcessed(state.iterations() * int64_t(steps.size()));
}

void AsyncAlloc_Random_Malloc(benchmark::State &state) {
  const std::vector<Step> &steps = sequence(static_cast<int>(state.range(0)));
  std::vector<void *> live;
  for (auto _ : state) {
    live.clear();
    live.reserve(steps.size());
    for (const Step &s : steps) {
      if (s.alloc) {
        void *p = std::malloc(s.size_or_victim);
        benchmark::DoNotOptimize(p);
        live.push_back(p);
      } else {
        void *p = live[s.size_or_victim];
        live[s.size_or_victim] = live.back();
        live.pop_back();
        std::free(p);
      }
    }
    for (void *p : live) std::free(p);
  }
  state.SetItemsProcessed(state.iterations() * int64_t(steps.size()));
}

BENCHMARK(AsyncAlloc_AllocFreePair_Ordo_QueueIdle);
BENCHMARK(AsyncAlloc_AllocFreePair_Ordo_QueueBusy);
BENCHMARK(AsyncAlloc_AllocFreePair_Malloc);
BENCHMARK(AsyncAlloc_Pipeline_InOrder_Ordo)->UseRealTime();
BENCHMARK(AsyncAlloc_Pipeline_InOrder_Synchronous)->UseRealTime();
BENCHMARK(AsyncAlloc_Pipeline_OutOfOrder_Ordo)->UseRealTime();
BENCHMARK(AsyncAlloc_Pipeline_OutOfOrder_Synchronous)->UseRealTime();
BENCHMARK(AsyncAlloc_Random_Ordo)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(AsyncAlloc_Random_Malloc)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace bench_async_alloc
} // namespace
