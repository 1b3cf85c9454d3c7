// SPDX-License-Identifier: Apache-2.0
// Threads on shared and own queues of the CUDA adapter (the stream backend) over the null
// driver (null_cuda.c): stream-ordered allocs and frees of device, host and shared
// (managed) memory with and without wait lists and events, plain allocs of each kind,
// blocks freed by another thread than the one that allocated them, fills and copies
// between the kinds checked byte by byte, each block's USM type asked, launches,
// barriers, finishes, queue native handles and releases, and events asked about, waited
// for, waited on by another queue and released from any thread. Run in the sanitizer
// builds, it checks Ordo's own locking and lifetimes in the stream backend (command-less
// frees, late event records, shared release events, event storage reuse; docs/cuda.md),
// and at the end that every host and managed allocation went back to the driver. It says
// nothing about GPU ordering: the null driver completes everything at once.
// Usage: ordo-stream-stress <adapter library> [threads] [rounds] [seed] (seed 0: the
// fixed one).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
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
ur_usm_pool_handle_t all_kinds = nullptr; // a urUSMPoolCreate pool: every kind
uint64_t seed = 0;
std::atomic<long> failures{0}, checked_bytes{0};

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

const ur_usm_type_t kKinds[3] = {UR_USM_TYPE_DEVICE, UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED};

// Half the blocks device memory, a quarter each host and shared.
ur_usm_type_t pick_kind(std::mt19937 &rng) {
  const unsigned r = rng() % 4;
  return r < 2 ? UR_USM_TYPE_DEVICE : r == 2 ? UR_USM_TYPE_HOST : UR_USM_TYPE_SHARED;
}

ur_result_t enqueue_alloc(ur_queue_handle_t q, ur_usm_type_t kind, ur_usm_pool_handle_t pool, size_t size, uint32_t n,
                          const ur_event_handle_t *waits, void **p, ur_event_handle_t *ev) {
  if (kind == UR_USM_TYPE_HOST) return t.EnqueueExp.pfnUSMHostAllocExp(q, pool, size, nullptr, n, waits, p, ev);
  if (kind == UR_USM_TYPE_SHARED) return t.EnqueueExp.pfnUSMSharedAllocExp(q, pool, size, nullptr, n, waits, p, ev);
  return t.EnqueueExp.pfnUSMDeviceAllocExp(q, pool, size, nullptr, n, waits, p, ev);
}

ur_result_t plain_alloc(ur_usm_type_t kind, ur_usm_pool_handle_t pool, size_t size, void **p) {
  if (kind == UR_USM_TYPE_HOST) return t.USM.pfnHostAlloc(ctx, nullptr, pool, size, p);
  if (kind == UR_USM_TYPE_SHARED) return t.USM.pfnSharedAlloc(ctx, dev, nullptr, pool, size, p);
  return t.USM.pfnDeviceAlloc(ctx, dev, nullptr, pool, size, p);
}

// urUSMGetMemAllocInfo's TYPE of p must be `kind`.
void check_type(const void *p, ur_usm_type_t kind) {
  ur_usm_type_t got = UR_USM_TYPE_FORCE_UINT32;
  CHECK(t.USM.pfnGetMemAllocInfo(ctx, p, UR_USM_ALLOC_INFO_TYPE, sizeof got, &got, nullptr));
  if (got != kind) {
    std::fprintf(stderr, "%s:%d TYPE of %p is %d, not %d\n", __FILE__, __LINE__, p, int(got), int(kind));
    failures++;
  }
}

// Fills the first bytes of block p (`after`: the event the fill must follow, or null),
// copies them through `stage` (a plain block of any kind) back to the host and
// compares; host and shared memory are read directly as well. Every command is complete
// on return.
void fill_and_check(ur_queue_handle_t q, void *p, size_t size, ur_usm_type_t kind, ur_event_handle_t after, void *stage,
                    size_t stage_size, std::mt19937 &rng) {
  const size_t ps = size_t(1) << (rng() % 5); // 1 to 16 bytes
  uint8_t pattern[16];
  for (uint8_t &b : pattern) b = uint8_t(rng());
  const size_t n = std::min({size, stage_size, size_t(64) << (rng() % 4)}) / ps * ps;
  if (!n) return;
  ur_event_handle_t f = nullptr, c = nullptr;
  CHECK(t.Enqueue.pfnUSMFill(q, p, ps, pattern, n, after ? 1 : 0, after ? &after : nullptr, &f));
  CHECK(t.Enqueue.pfnUSMMemcpy(q, false, stage, p, n, f ? 1 : 0, f ? &f : nullptr, &c));
  std::vector<uint8_t> back(n, 0);
  CHECK(t.Enqueue.pfnUSMMemcpy(q, true, back.data(), stage, n, c ? 1 : 0, c ? &c : nullptr, nullptr));
  long bad = 0;
  for (size_t i = 0; i < n; ++i) bad += back[i] != pattern[i % ps];
  if (kind != UR_USM_TYPE_DEVICE) // the fill is complete: the host reads the memory itself
    for (size_t i = 0; i < n; ++i) bad += static_cast<const uint8_t *>(p)[i] != pattern[i % ps];
  if (bad) {
    std::fprintf(stderr, "%s:%d %ld bytes wrong after a fill of kind %d\n", __FILE__, __LINE__, bad, int(kind));
    failures++;
  }
  checked_bytes += long(n);
  check_type(p, kind);
  check_type(static_cast<const uint8_t *>(p) + n - 1, kind);
  if (f) CHECK(t.Event.pfnRelease(f));
  if (c) CHECK(t.Event.pfnRelease(c));
}

// Blocks handed from one thread to another, which frees them: a stream-ordered block
// with the event of its last command in the free's wait list, a plain one with
// urUSMFree once that event is complete.
struct handed {
  void *p;
  ur_usm_type_t kind;
  ur_usm_pool_handle_t pool; // named at the alloc (null: the default or host pool)
  bool plain;
  ur_event_handle_t last; // may be null: no command uses it
};
std::mutex hand_mu;
std::vector<handed> hand;
void give(const handed &h) {
  std::lock_guard<std::mutex> l(hand_mu);
  hand.push_back(h);
}
bool take_handed(std::mt19937 &rng, handed &out) {
  std::lock_guard<std::mutex> l(hand_mu);
  if (hand.empty()) return false;
  const size_t i = rng() % hand.size();
  out = hand[i];
  hand[i] = hand.back();
  hand.pop_back();
  return true;
}
void free_handed(ur_queue_handle_t q, const handed &h, std::mt19937 &rng) {
  if (h.plain) {
    if (h.last) CHECK(t.Event.pfnWait(1, &h.last));
    CHECK(t.USM.pfnFree(ctx, h.p));
  } else {
    ur_event_handle_t f = nullptr;
    CHECK(t.EnqueueExp.pfnUSMFreeExp(q, rng() % 2 ? h.pool : nullptr, h.p, h.last ? 1 : 0, h.last ? &h.last : nullptr,
                                     rng() % 3 == 0 ? &f : nullptr));
    put(f);
  }
  if (h.last) CHECK(t.Event.pfnRelease(h.last));
}

void worker(int id, ur_queue_handle_t shared_in_order, ur_queue_handle_t shared_ooo, int rounds) {
  std::mt19937 rng = [&] {
    if (!seed) return std::mt19937(id * 7919 + 1);
    std::seed_seq s{uint32_t(seed), uint32_t(seed >> 32), uint32_t(id)};
    return std::mt19937(s);
  }();
  // A plain block of each kind that copies pass through.
  const size_t stage_size = 1024;
  void *stage[3] = {};
  for (int k = 0; k < 3; ++k) CHECK(plain_alloc(kKinds[k], rng() % 2 ? all_kinds : nullptr, stage_size, &stage[k]));
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
      const ur_usm_type_t kind = pick_kind(rng);
      const size_t size = (kind == UR_USM_TYPE_DEVICE ? 4096u : 256u) << (rng() % 8);
      ur_usm_pool_handle_t pool = rng() % 4 == 0 ? all_kinds : nullptr;
      const bool plain = rng() % 8 == 0, fill = rng() % 3 == 0, hand_over = rng() % 6 == 0;
      // A fill follows the alloc by its event; urUSMFree of a plain block waits for its launch.
      const bool events = rng() % 2 || hand_over || fill || plain;
      if (plain)
        CHECK(plain_alloc(kind, pool, size, &p));
      else
        CHECK(enqueue_alloc(q, kind, pool, size, 0, nullptr, &p, events ? &a : nullptr));
      if (!p) continue;
      if (fill) {
        const int via = int(rng() % 3);
        fill_and_check(q, p, size, kind, a, stage[via], stage_size, rng);
        if (rng() % 4 == 0) check_type(stage[via], kKinds[via]);
      }
      if (rng() % 2) CHECK(launch(q, p, a ? 1 : 0, a ? &a : nullptr, events ? &k : nullptr));
      const ur_event_handle_t w = k ? k : a;
      if (hand_over) { // another thread frees it, after the last command on it
        if (w) CHECK(t.Event.pfnRetain(w));
        give({p, kind, pool, plain, w});
      } else if (plain) {
        if (w) CHECK(t.Event.pfnWait(1, &w));
        CHECK(t.USM.pfnFree(ctx, p));
      } else {
        const bool wait = w && rng() % 2;
        CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, wait ? 1 : 0, wait ? &w : nullptr,
                                         rng() % 3 == 0 ? &f : nullptr));
      }
      put(a);
      put(k);
      put(f);
    }
    handed h;
    for (int j = 0; j < 2 && take_handed(rng, h); ++j) free_handed(q, h, rng);
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
  for (void *b : stage)
    if (b) CHECK(t.USM.pfnFree(ctx, b));
}

// The null driver's count of live allocations of a kind (null_cuda.c: 1 host, 2
// managed, 3 registered); -1 where the driver is another one.
long driver_live(int kind) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return -1;
  auto live = reinterpret_cast<size_t (*)(int)>(dlsym(lib, "ordo_null_cuda_live"));
  const long n = live ? long(live(kind)) : -1;
  dlclose(lib);
  return n;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s <adapter library> [threads] [rounds] [seed]\n", argv[0]), 2;
  if (!ordo_tools::load_tables(argv[1], t)) return std::fprintf(stderr, "%s\n", dlerror()), 1;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 6, rounds = argc > 3 ? std::atoi(argv[3]) : 200;
  seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0;
  CHECK(ordo_tools::first_device(t, dev, ctx));
  CHECK(ordo_tools::make_fill_kernel(t, ctx, dev, program, kernel));
  ur_usm_pool_desc_t pool_desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  CHECK(t.USM.pfnPoolCreate(ctx, &pool_desc, &all_kinds));
  ur_queue_handle_t in_order = nullptr, ooo = nullptr;
  const ur_queue_properties_t ooo_props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                        UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  CHECK(t.Queue.pfnCreate(ctx, dev, nullptr, &in_order));
  CHECK(t.Queue.pfnCreate(ctx, dev, &ooo_props, &ooo));
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i) ts.emplace_back(worker, i, in_order, ooo, rounds);
  for (auto &th : ts) th.join();
  std::mt19937 end_rng(1);
  for (const handed &h : hand) free_handed(in_order, h, end_rng);
  for (ur_event_handle_t e : box) CHECK(t.Event.pfnRelease(e));
  CHECK(t.Queue.pfnFinish(in_order));
  CHECK(t.Queue.pfnFinish(ooo));
  CHECK(t.Queue.pfnRelease(in_order));
  CHECK(t.Queue.pfnRelease(ooo));
  CHECK(t.Kernel.pfnRelease(kernel));
  CHECK(t.Program.pfnRelease(program));
  CHECK(t.USM.pfnPoolRelease(all_kinds));
  CHECK(t.Context.pfnRelease(ctx));
  // The context took its pools and plain allocations with it: nothing of the driver's
  // host or managed memory is left.
  const long host_left = driver_live(1), managed_left = driver_live(2);
  if (host_left > 0 || managed_left > 0) {
    std::fprintf(stderr, "after the context: %ld host and %ld managed driver allocations live\n", host_left,
                 managed_left);
    failures++;
  }
  std::printf("%d threads x %d rounds (seed %llu): %ld bytes checked, %ld failures\n", threads, rounds,
              (unsigned long long)seed, checked_bytes.load(), failures.load());
  return failures ? 1 : 0;
}
