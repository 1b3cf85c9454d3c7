// SPDX-License-Identifier: Apache-2.0
// Threads on shared and own queues of the CUDA adapter (the stream backend) over the null
// driver (null_cuda.c): stream-ordered allocs and frees with and without wait lists and
// events, launches, barriers, finishes, queue native handles and releases, and events
// asked about, waited for, waited on by another queue and released from any thread. Run
// in the sanitizer builds, it checks Ordo's own locking and lifetimes in the stream
// backend (command-less frees, late event records, shared release events, event storage
// reuse; docs/cuda.md). It says nothing about GPU ordering: the null driver completes
// everything at once. Usage: ordo-stream-stress <adapter library> [threads] [rounds].
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "adapter_client.hpp"
#include "ur_ddi.h"

namespace {
ur_dditable_t t{};
ur_context_handle_t ctx = nullptr;
ur_device_handle_t dev = nullptr;
ur_program_handle_t program = nullptr;
ur_kernel_handle_t kernel = nullptr;
std::atomic<long> failures{0};

#define CHECK(x)                                                                                                       \
  do {                                                                                                                 \
    if (ur_result_t r_ = (x)) {                                                                                        \
      std::fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, int(r_));                                         \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

ur_result_t launch(ur_queue_handle_t q, void *p, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *ev) {
  return ordo_tools::launch_fill(t, kernel, q, p, 1 << 10, n, waits, ev);
}

// A shared box of events other threads query, wait for and release.
std::mutex box_mu;
std::vector<ur_event_handle_t> box;
void put(ur_event_handle_t e) {
  if (!e) return;
  std::lock_guard<std::mutex> l(box_mu);
  box.push_back(e);
}
ur_event_handle_t take(std::mt19937 &rng) {
  std::lock_guard<std::mutex> l(box_mu);
  if (box.empty()) return nullptr;
  size_t i = rng() % box.size();
  ur_event_handle_t e = box[i];
  box[i] = box.back();
  box.pop_back();
  return e;
}

void worker(int id, ur_queue_handle_t shared_in_order, ur_queue_handle_t shared_ooo, int rounds) {
  std::mt19937 rng(id * 7919 + 1);
  for (int r = 0; r < rounds; ++r) {
    ur_queue_handle_t q = (rng() % 2) ? shared_in_order : shared_ooo;
    const bool own = rng() % 16 == 0;
    if (own) {
      const ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                        (rng() % 2) ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0u};
      CHECK(t.Queue.pfnCreate(ctx, dev, &props, &q));
    }
    const int ops = 1 + rng() % 8;
    for (int i = 0; i < ops; ++i) {
      void *p = nullptr;
      ur_event_handle_t a = nullptr, k = nullptr, f = nullptr;
      const bool events = rng() % 2;
      CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 4096u << (rng() % 8), nullptr, 0, nullptr, &p,
                                              events ? &a : nullptr));
      if (!p) continue;
      if (rng() % 2) CHECK(launch(q, p, a ? 1 : 0, a ? &a : nullptr, events ? &k : nullptr));
      const ur_event_handle_t w = k ? k : a;
      const bool wait = w && rng() % 2;
      CHECK(
          t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, wait ? 1 : 0, wait ? &w : nullptr, rng() % 3 == 0 ? &f : nullptr));
      put(a);
      put(k);
      put(f);
    }
    switch (rng() % 8) {
    case 0: CHECK(t.Enqueue.pfnEventsWaitWithBarrier(q, 0, nullptr, nullptr)); break;
    case 1: CHECK(t.Queue.pfnFinish(q)); break;
    case 2: {
      ur_native_handle_t h = 0;
      if (rng() % 8 == 0) CHECK(t.Queue.pfnGetNativeHandle(q, nullptr, &h));
      break;
    }
    default: break;
    }
    // Ask about, wait for and release events from any thread.
    for (int j = 0; j < 3; ++j) {
      ur_event_handle_t e = take(rng);
      if (!e) break;
      ur_event_status_t st;
      switch (rng() % 4) {
      case 0: CHECK(t.Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr)); break;
      case 1: CHECK(t.Event.pfnWait(1, &e)); break;
      case 2: {
        ur_native_handle_t h = 0;
        CHECK(t.Event.pfnGetNativeHandle(e, &h));
        break;
      }
      default: {
        ur_event_handle_t m = nullptr; // another queue waits for it
        CHECK(t.Enqueue.pfnEventsWait(shared_in_order, 1, &e, &m));
        put(m);
      }
      }
      CHECK(t.Event.pfnRelease(e));
    }
    if (own) CHECK(t.Queue.pfnRelease(q)); // events of it may still be in the box
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s <adapter library> [threads] [rounds]\n", argv[0]), 2;
  if (!ordo_tools::load_tables(argv[1], t)) return std::fprintf(stderr, "%s\n", dlerror()), 1;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 6, rounds = argc > 3 ? std::atoi(argv[3]) : 200;
  CHECK(ordo_tools::first_device(t, dev, ctx));
  CHECK(ordo_tools::make_fill_kernel(t, ctx, dev, program, kernel));
  ur_queue_handle_t in_order = nullptr, ooo = nullptr;
  const ur_queue_properties_t ooo_props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                        UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  CHECK(t.Queue.pfnCreate(ctx, dev, nullptr, &in_order));
  CHECK(t.Queue.pfnCreate(ctx, dev, &ooo_props, &ooo));
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i) ts.emplace_back(worker, i, in_order, ooo, rounds);
  for (auto &th : ts) th.join();
  for (ur_event_handle_t e : box) CHECK(t.Event.pfnRelease(e));
  CHECK(t.Queue.pfnFinish(in_order));
  CHECK(t.Queue.pfnFinish(ooo));
  CHECK(t.Queue.pfnRelease(in_order));
  CHECK(t.Queue.pfnRelease(ooo));
  CHECK(t.Kernel.pfnRelease(kernel));
  CHECK(t.Program.pfnRelease(program));
  CHECK(t.Context.pfnRelease(ctx));
  std::printf("%d threads x %d rounds: %ld failures\n", threads, rounds, failures.load());
  return failures ? 1 : 0;
}
