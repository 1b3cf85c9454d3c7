// SPDX-License-Identifier: Apache-2.0
// Runs stream-ordered alloc + free pairs (or the alloc -> kernel -> free rounds of the
// benchmark's rows (b) and (c)) through one adapter's own table, for callgrind:
// `valgrind --tool=callgrind --toggle-collect='run_*' pair_cost <adapter> N` counts only
// the rounds (100 warm-up rounds and N measured ones: the difference of two N gives the
// cost of one; docs/performance-history.md, "The stream-ordered
// pair's CPU cost").
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "adapter_client.hpp"
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
  return ordo_tools::launch_fill(t, kernel, q, p, 1 << 18, n, waits, ev);
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

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <adapter library> [pairs] [bytes] [pairs|events|in_order|out_of_order]\n", argv[0]);
    return 2;
  }
  const int pairs = argc > 2 ? std::atoi(argv[2]) : 1000;
  const size_t size = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : (1u << 20);
  const std::string mode = argc > 4 ? argv[4] : "pairs";
  if (!ordo_tools::load_tables(argv[1], t)) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  ur_device_handle_t dev = nullptr;
  ur_context_handle_t ctx = nullptr;
  CHECK(ordo_tools::first_device(t, dev, ctx));
  CHECK(t.Queue.pfnCreate(ctx, dev, nullptr, &queue));
  const ur_queue_properties_t ooo_props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                        UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  CHECK(t.Queue.pfnCreate(ctx, dev, &ooo_props, &ooq));
  void (*run)(int, size_t) = run_pairs;
  if (mode == "events") run = run_pairs_with_events;
  if (mode == "in_order" || mode == "out_of_order") {
    ur_program_handle_t program = nullptr;
    CHECK(ordo_tools::make_fill_kernel(t, ctx, dev, program, kernel));
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
