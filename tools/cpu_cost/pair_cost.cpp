// SPDX-License-Identifier: Apache-2.0
// Runs stream-ordered alloc + free pairs (or the alloc -> kernel -> free rounds of the
// benchmark's rows (b) and (c)) through one adapter's own table, for callgrind:
// `valgrind --tool=callgrind --toggle-collect='run_*' pair_cost <adapter> N` counts only
// the rounds (100 warm-up rounds and N measured ones: the difference of two N gives the
// cost of one; docs/performance.md, "CPU cost of the stream backend").
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ur_ddi.h"

namespace {
ur_dditable_t t{};
ur_queue_handle_t queue = nullptr, ooq = nullptr;
ur_kernel_handle_t kernel = nullptr;

#define CHECK(x)                                                                                                       \
  do {                                                                                                                 \
    if (ur_result_t r_ = (x)) {                                                                                        \
      std::fprintf(stderr, "%s: %d\n", #x, int(r_));                                                                   \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

extern "C" __attribute__((noinline)) void run_pairs(int n, size_t size) {
  for (int i = 0; i < n; ++i) {
    void *p = nullptr;
    CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, size, nullptr, 0, nullptr, &p, nullptr));
    CHECK(t.EnqueueExp.pfnUSMFreeExp(queue, nullptr, p, 0, nullptr, nullptr));
  }
}

// The alloc and free of benchmark row (c): each gives an event, the free waits for the
// alloc's (docs/performance.md).
extern "C" __attribute__((noinline)) void run_pairs_with_events(int n, size_t size) {
  for (int i = 0; i < n; ++i) {
    void *p = nullptr;
    ur_event_handle_t allocated = nullptr, freed = nullptr;
    CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, size, nullptr, 0, nullptr, &p, &allocated));
    CHECK(t.EnqueueExp.pfnUSMFreeExp(queue, nullptr, p, 1, &allocated, &freed));
    CHECK(t.Event.pfnRelease(allocated));
    CHECK(t.Event.pfnRelease(freed));
  }
}

ur_result_t launch(ur_queue_handle_t q, void *p, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *ev) {
  static const uint32_t value = 1;
  ur_exp_kernel_arg_properties_t args[2] = {};
  args[0].stype = args[1].stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  args[0].type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  args[0].index = 0;
  args[0].size = sizeof(void *);
  args[0].value.pointer = p;
  args[1].type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  args[1].index = 1;
  args[1].size = sizeof(uint32_t);
  args[1].value.value = &value;
  const size_t global = 1 << 18, local = 256;
  return t.EnqueueExp.pfnKernelLaunchWithArgsExp(q, kernel, 1, nullptr, &global, &local, 2, args, nullptr, n, waits,
                                                 ev);
}

// Benchmark row (b): alloc -> kernel -> free on an in-order queue, no events.
extern "C" __attribute__((noinline)) void run_pipeline_in_order(int n, size_t size) {
  for (int i = 0; i < n; ++i) {
    void *p = nullptr;
    CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, size, nullptr, 0, nullptr, &p, nullptr));
    CHECK(launch(queue, p, 0, nullptr, nullptr));
    CHECK(t.EnqueueExp.pfnUSMFreeExp(queue, nullptr, p, 0, nullptr, nullptr));
  }
}

// Benchmark row (c): the same on an out-of-order queue, ordered by events.
extern "C" __attribute__((noinline)) void run_pipeline_out_of_order(int n, size_t size) {
  for (int i = 0; i < n; ++i) {
    void *p = nullptr;
    ur_event_handle_t allocated = nullptr, ran = nullptr, freed = nullptr;
    CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(ooq, nullptr, size, nullptr, 0, nullptr, &p, &allocated));
    CHECK(launch(ooq, p, 1, &allocated, &ran));
    CHECK(t.EnqueueExp.pfnUSMFreeExp(ooq, nullptr, p, 1, &ran, &freed));
    CHECK(t.Event.pfnRelease(allocated));
    CHECK(t.Event.pfnRelease(ran));
    CHECK(t.Event.pfnRelease(freed));
  }
}

// A program whose one kernel, `fill`, takes a pointer and a 4-byte value (the null
// driver gives every function that shape).
void make_kernel(ur_context_handle_t ctx, ur_device_handle_t dev) {
  static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry fill(.param .u64 p, .param .u32 v)\n{\nret;\n}\n";
  const uint8_t *image = reinterpret_cast<const uint8_t *>(ptx);
  size_t length = sizeof ptx;
  ur_program_handle_t program = nullptr;
  CHECK(t.Program.pfnCreateWithBinary(ctx, 1, &dev, &length, &image, nullptr, &program));
  CHECK(t.Program.pfnBuild(ctx, program, nullptr));
  CHECK(t.Kernel.pfnCreate(program, "fill", &kernel));
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <adapter library> [pairs] [bytes] [pairs|events|in_order|out_of_order]\n", argv[0]);
    return 2;
  }
  const int pairs = argc > 2 ? std::atoi(argv[2]) : 1000;
  const size_t size = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : (1u << 20);
  const std::string mode = argc > 4 ? argv[4] : "pairs";
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
#define GET_TABLE(name)                                                                                                \
  if (auto get = reinterpret_cast<ur_pfnGet##name##ProcAddrTable_t>(dlsym(lib, "urGet" #name "ProcAddrTable")))        \
    get(UR_API_VERSION_CURRENT, &t.name);
  GET_TABLE(Adapter)
  GET_TABLE(Platform)
  GET_TABLE(Device)
  GET_TABLE(Context)
  GET_TABLE(Queue)
  GET_TABLE(EnqueueExp)
  GET_TABLE(Event)
  GET_TABLE(Program)
  GET_TABLE(Kernel)
#undef GET_TABLE
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t dev = nullptr;
  ur_context_handle_t ctx = nullptr;
  uint32_t n = 0;
  CHECK(t.Adapter.pfnGet(1, &adapter, nullptr));
  CHECK(t.Platform.pfnGet(adapter, 1, &platform, &n));
  CHECK(t.Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  CHECK(t.Context.pfnCreate(1, &dev, nullptr, &ctx));
  CHECK(t.Queue.pfnCreate(ctx, dev, nullptr, &queue));
  const ur_queue_properties_t ooo_props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                        UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  CHECK(t.Queue.pfnCreate(ctx, dev, &ooo_props, &ooq));
  void (*run)(int, size_t) = run_pairs;
  if (mode == "events") run = run_pairs_with_events;
  if (mode == "in_order" || mode == "out_of_order") {
    make_kernel(ctx, dev);
    run = mode == "in_order" ? run_pipeline_in_order : run_pipeline_out_of_order;
  }
  run(100, size); // warm: the pool's first chunk, the caches
  CHECK(t.Queue.pfnFinish(queue));
  CHECK(t.Queue.pfnFinish(ooq));
  run(pairs, size);
  CHECK(t.Queue.pfnFinish(queue));
  CHECK(t.Queue.pfnFinish(ooq));
  std::printf("%d rounds of %zu bytes (%s)\n", pairs, size, mode.c_str());
  return 0;
}
