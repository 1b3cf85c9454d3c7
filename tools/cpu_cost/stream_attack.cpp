// SPDX-License-Identifier: Apache-2.0
// Adversarial, seeded interleavings of the CUDA adapter's stream-ordered allocation and
// event code over the null driver (null_cuda.c), through the public UR entry points only
// (docs/cuda.md, "Stream-ordered allocation", "Deferred events", "Events recorded late").
// Where stream_stress.cpp mixes ordinary use, this goes for the edges: bad frees among
// good ones (each answer checked against docs/async-alloc.md, the pool's statistics
// unchanged), queues released while other threads still free into them and ask about
// their events, pools destroyed while frees are in flight, late and deferred events
// asked about, exported and retained/released from several threads at once while their
// owner keeps submitting, urQueueGetNativeHandle within runs of shared-release frees, and
// teardown with live blocks and unrecorded events. Run in the sanitizer builds it checks
// the adapter's locking and lifetimes; it says nothing about GPU ordering (the null
// driver completes everything at once).
// Usage: ordo-stream-attack <adapter library> [threads] [rounds] [seed] [phase]
// (seed 0: from the clock; phase: run only that one, by number).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
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
uint64_t seed = 0;

std::atomic<long> checked{0}; // answers compared with what they must be
bool expect_in(ur_result_t r, std::initializer_list<ur_result_t> ok, const char *what, int line) {
  checked.fetch_add(1, std::memory_order_relaxed);
  for (ur_result_t o : ok)
    if (r == o) return true;
  std::fprintf(stderr, "stream_attack.cpp:%d (seed %llu) %s: %d\n", line, (unsigned long long)seed, what, int(r));
  failures++;
  return false;
}
#define EXPECT(x, ...) expect_in((x), {__VA_ARGS__}, #x, __LINE__)
#define CHECK(x) EXPECT(x, UR_RESULT_SUCCESS)
#define CLAIM(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      std::fprintf(stderr, "stream_attack.cpp:%d (seed %llu) %s: ", __LINE__, (unsigned long long)seed, #cond);        \
      std::fprintf(stderr, __VA_ARGS__);                                                                               \
      std::fputc('\n', stderr);                                                                                        \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

// Threads that start a step together.
class Gate {
public:
  explicit Gate(int n) : n_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> l(m_);
    const int gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(l, [&] { return gen_ != gen; });
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0, gen_ = 0;
};

std::mt19937_64 rng_for(int phase, int thread, int round = 0) {
  std::seed_seq s{uint32_t(seed), uint32_t(seed >> 32), uint32_t(phase), uint32_t(thread), uint32_t(round)};
  return std::mt19937_64(s);
}

ur_queue_handle_t make_queue(ur_context_handle_t c, bool ooo) {
  const ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                    ooo ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0u};
  ur_queue_handle_t q = nullptr;
  CHECK(t.Queue.pfnCreate(c, dev, &props, &q));
  return q;
}

ur_usm_pool_handle_t make_pool() {
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t p = nullptr;
  CHECK(t.USMExp.pfnPoolCreateExp(ctx, dev, &desc, &p));
  return p;
}

size_t pool_stat(ur_usm_pool_handle_t p, ur_usm_pool_info_t what) {
  size_t v = ~size_t(0);
  CHECK(t.USMExp.pfnPoolGetInfoExp(p, what, &v, nullptr));
  return v;
}

ur_usm_pool_handle_t default_pool() {
  ur_usm_pool_handle_t p = nullptr;
  CHECK(t.USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &p));
  return p;
}

// ---- the kinds of USM memory ----
const ur_usm_type_t kKinds[3] = {UR_USM_TYPE_DEVICE, UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED};
const char *kind_name(ur_usm_type_t k) {
  return k == UR_USM_TYPE_HOST ? "host" : k == UR_USM_TYPE_SHARED ? "shared" : k == UR_USM_TYPE_DEVICE ? "device" : "?";
}
ur_usm_type_t any_kind(std::mt19937_64 &rng) { return kKinds[rng() % 3]; }

ur_result_t enqueue_alloc(ur_queue_handle_t q, ur_usm_type_t kind, ur_usm_pool_handle_t pool, size_t size, uint32_t n,
                          const ur_event_handle_t *waits, void **p, ur_event_handle_t *ev) {
  if (kind == UR_USM_TYPE_HOST) return t.EnqueueExp.pfnUSMHostAllocExp(q, pool, size, nullptr, n, waits, p, ev);
  if (kind == UR_USM_TYPE_SHARED) return t.EnqueueExp.pfnUSMSharedAllocExp(q, pool, size, nullptr, n, waits, p, ev);
  return t.EnqueueExp.pfnUSMDeviceAllocExp(q, pool, size, nullptr, n, waits, p, ev);
}

ur_result_t plain_alloc(ur_context_handle_t c, ur_usm_type_t kind, ur_usm_pool_handle_t pool, size_t size, void **p) {
  if (kind == UR_USM_TYPE_HOST) return t.USM.pfnHostAlloc(c, nullptr, pool, size, p);
  if (kind == UR_USM_TYPE_SHARED) return t.USM.pfnSharedAlloc(c, dev, nullptr, pool, size, p);
  return t.USM.pfnDeviceAlloc(c, dev, nullptr, pool, size, p);
}

// A pool that serves `kind`: urUSMPoolCreateExp's device pool serves device and shared
// memory, host memory needs a urUSMPoolCreate pool (every kind). Ended by end_pool.
ur_usm_pool_handle_t make_pool_for(ur_context_handle_t c, ur_usm_type_t kind) {
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t p = nullptr;
  if (kind == UR_USM_TYPE_HOST)
    CHECK(t.USM.pfnPoolCreate(c, &desc, &p));
  else
    CHECK(t.USMExp.pfnPoolCreateExp(c, dev, &desc, &p));
  return p;
}
void end_pool(ur_context_handle_t c, ur_usm_type_t kind, ur_usm_pool_handle_t p) {
  if (kind == UR_USM_TYPE_HOST)
    CHECK(t.USM.pfnPoolRelease(p));
  else
    CHECK(t.USMExp.pfnPoolDestroyExp(c, dev, p));
}

ur_usm_type_t type_of(ur_context_handle_t c, const void *p) {
  ur_usm_type_t k = UR_USM_TYPE_FORCE_UINT32;
  CHECK(t.USM.pfnGetMemAllocInfo(c, p, UR_USM_ALLOC_INFO_TYPE, sizeof k, &k, nullptr));
  return k;
}

// Fills `n` bytes of a block (after `after`, if any) with a random pattern, copies them
// back to the host and compares (host and shared memory read directly too); its TYPE,
// at the start and at the last byte filled, must be `kind`. Complete on return.
std::atomic<long> bytes_checked{0};
void fill_and_check(ur_queue_handle_t q, void *p, size_t n, ur_usm_type_t kind, ur_event_handle_t after,
                    std::mt19937_64 &rng) {
  const size_t ps = size_t(1) << (rng() % 5);
  n = n / ps * ps;
  if (!n) return;
  uint8_t pattern[16];
  for (uint8_t &b : pattern) b = uint8_t(rng());
  ur_event_handle_t f = nullptr;
  CHECK(t.Enqueue.pfnUSMFill(q, p, ps, pattern, n, after ? 1 : 0, after ? &after : nullptr, &f));
  std::vector<uint8_t> back(n, 0);
  CHECK(t.Enqueue.pfnUSMMemcpy(q, true, back.data(), p, n, f ? 1 : 0, f ? &f : nullptr, nullptr));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += back[i] != pattern[i % ps];
  if (kind != UR_USM_TYPE_DEVICE)
    for (size_t i = 0; i < n; ++i) bad += static_cast<const uint8_t *>(p)[i] != pattern[i % ps];
  CLAIM(bad == 0, "%zu of %zu bytes wrong after a fill of %s memory", bad, n, kind_name(kind));
  bytes_checked += long(n);
  CLAIM(type_of(ctx, p) == kind, "TYPE of a %s block is %d", kind_name(kind), int(type_of(ctx, p)));
  const void *last = static_cast<const uint8_t *>(p) + n - 1;
  CLAIM(type_of(ctx, last) == kind, "TYPE inside a %s block is %d", kind_name(kind), int(type_of(ctx, last)));
  if (f) CHECK(t.Event.pfnRelease(f));
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

ur_result_t launch(ur_queue_handle_t q, void *p, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *ev,
                   ur_kernel_handle_t k = nullptr) {
  return ordo_tools::launch_fill(t, k ? k : kernel, q, p, 1 << 10, n, waits, ev);
}

ur_event_status_t status_of(ur_event_handle_t e) {
  ur_event_status_t st = UR_EVENT_STATUS_ERROR;
  CHECK(t.Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr));
  return st;
}

uint32_t refcount_of(ur_event_handle_t e) {
  uint32_t c = 0;
  CHECK(t.Event.pfnGetInfo(e, UR_EVENT_INFO_REFERENCE_COUNT, sizeof c, &c, nullptr));
  return c;
}

// Completion callbacks asked for and run (main waits for them all before teardown).
std::atomic<long> callbacks_asked{0}, callbacks_run{0};
void UR_APICALL on_complete(ur_event_handle_t, ur_execution_info_t status, void *) {
  if (status != UR_EXECUTION_INFO_COMPLETE) failures++;
  callbacks_run++;
}

// Flags of a queue a phase may take at random: in-order or not, profiling (events
// recorded at once, never late), the default stream or one synchronised with it (no
// late records, no shared release events), priorities.
ur_queue_flags_t random_flags(std::mt19937_64 &rng, bool allow_ooo) {
  ur_queue_flags_t f = 0;
  if (allow_ooo && rng() % 3 == 0) f |= UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  if (rng() % 5 == 0) f |= UR_QUEUE_FLAG_PROFILING_ENABLE;
  switch (rng() % 8) {
  case 0: f = (f & ~UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE) | UR_QUEUE_FLAG_USE_DEFAULT_STREAM; break;
  case 1: f |= UR_QUEUE_FLAG_SYNC_WITH_DEFAULT_STREAM; break;
  case 2: f |= UR_QUEUE_FLAG_PRIORITY_HIGH; break;
  default: break;
  }
  return f;
}
ur_queue_handle_t make_queue_flags(ur_context_handle_t c, ur_queue_flags_t flags) {
  const ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
  ur_queue_handle_t q = nullptr;
  CHECK(t.Queue.pfnCreate(c, dev, &props, &q));
  return q;
}

// One question about an event from any thread (the caller holds a reference).
void ask(ur_event_handle_t e, std::mt19937_64 &rng, ur_queue_handle_t other) {
  switch (rng() % 8) {
  case 6: {
    callbacks_asked++;
    CHECK(t.Event.pfnSetCallback(e, UR_EXECUTION_INFO_COMPLETE, on_complete, nullptr));
    break;
  }
  case 7: { // profiling: only a profiling queue's events have it
    uint64_t ns = 0;
    EXPECT(t.Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, sizeof ns, &ns, nullptr), UR_RESULT_SUCCESS,
           UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
    break;
  }
  case 0: {
    ur_event_status_t st = status_of(e);
    CLAIM(st == UR_EVENT_STATUS_COMPLETE || st == UR_EVENT_STATUS_SUBMITTED || st == UR_EVENT_STATUS_RUNNING,
          "status %d", int(st));
    break;
  }
  case 1: CHECK(t.Event.pfnWait(1, &e)); break;
  case 2: {
    ur_native_handle_t h = 0;
    CHECK(t.Event.pfnGetNativeHandle(e, &h));
    CLAIM(h != 0, "an event's native handle is null");
    break;
  }
  case 3: {
    ur_event_handle_t m = nullptr;
    CHECK(t.Enqueue.pfnEventsWait(other, 1, &e, rng() % 2 ? &m : nullptr));
    if (m) CHECK(t.Event.pfnRelease(m));
    break;
  }
  case 4: {
    CHECK(t.Event.pfnRetain(e));
    CLAIM(refcount_of(e) >= 2, "a retained event counts fewer than 2");
    CHECK(t.Event.pfnRelease(e));
    break;
  }
  default: {
    ur_queue_handle_t q = nullptr;
    CHECK(t.Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
    break;
  }
  }
}

// ---- phase 1: bad frees among good ones ---------------------------------------------
// Each thread has pools of its own, so their statistics change only by its own calls:
// a refused free must leave USED and RESERVED as they were and hand out no event. One
// kind of memory a run: device and shared blocks from urUSMPoolCreateExp pools, host
// blocks from urUSMPoolCreate pools (the device pools serve no host memory). Good blocks
// are filled and read back now and then; freed ones must be refused by fills and copies
// and answer TYPE UNKNOWN.
void bad_frees(int id, int rounds, ur_usm_type_t kind) {
  auto rng = rng_for(kind == UR_USM_TYPE_DEVICE ? 1 : 10 + int(kind), id);
  ur_queue_handle_t in_order = make_queue(ctx, false), ooo = make_queue(ctx, true);
  ur_usm_pool_handle_t mine = make_pool_for(ctx, kind), other = make_pool_for(ctx, kind);
  // Host blocks: a device pool of this thread, which must refuse host memory.
  ur_usm_pool_handle_t device_pool = kind == UR_USM_TYPE_HOST ? make_pool() : mine;
  // Chunks kept across synchronisation points: a freed pointer then stays in its pool's
  // memory, never in a chunk another thread's pool got from the driver at its address.
  size_t keep = size_t(1) << 30;
  CHECK(t.USMExp.pfnPoolSetInfoExp(mine, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &keep, sizeof keep));
  CHECK(t.USMExp.pfnPoolSetInfoExp(other, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &keep, sizeof keep));
  struct block {
    void *p;
    size_t size;
  };
  std::vector<block> live;
  std::vector<void *> freed; // never live again unless the pool hands them out again
  // Freed memory the context still holds: no live block of this thread's pool covers it.
  auto held_freed = [&](const void *p) {
    for (const block &b : live)
      if (p >= b.p && p < static_cast<const char *>(b.p) + b.size) return false;
    return true;
  };
  void *other_block = nullptr;
  CHECK(enqueue_alloc(in_order, kind, other, 4096, 0, nullptr, &other_block, nullptr));
  // Another context with a pool and a block of its own.
  ur_context_handle_t ctx2 = nullptr;
  CHECK(t.Context.pfnCreate(1, &dev, nullptr, &ctx2));
  ur_queue_handle_t q2 = make_queue(ctx2, false);
  ur_usm_pool_handle_t pool2 = make_pool_for(ctx2, kind);
  void *block2 = nullptr;
  CHECK(enqueue_alloc(q2, kind, pool2, 4096, 0, nullptr, &block2, nullptr));
  int host_word = 0;
  std::vector<char> heap(256);
  for (int r = 0; r < rounds; ++r) {
    // A few good allocs, on either queue, naming the pool.
    for (int i = 0, n = 1 + int(rng() % 4); i < n; ++i) {
      void *p = nullptr;
      const size_t size = size_t(64) << (rng() % 10);
      ur_queue_handle_t q = rng() % 2 ? in_order : ooo;
      ur_event_handle_t a = nullptr;
      if (rng() % 5 == 0) // a synchronous alloc of the same pool, freed like the others
        CHECK(plain_alloc(ctx, kind, mine, size, &p));
      else
        CHECK(enqueue_alloc(q, kind, mine, size, 0, nullptr, &p, rng() % 2 || q == ooo ? &a : nullptr));
      if (!p) continue;
      if (rng() % 4 == 0) fill_and_check(q, p, std::min(size, size_t(512)), kind, a, rng);
      if (a) CHECK(t.Event.pfnRelease(a));
      live.push_back({p, size});
      freed.erase(std::remove(freed.begin(), freed.end(), p), freed.end());
    }
    // A bad free, on the fast path (in-order, no wait, no event) or a command's.
    const size_t used = pool_stat(mine, UR_USM_POOL_INFO_USED_CURRENT_EXP);
    const size_t reserved = pool_stat(mine, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP);
    const size_t other_used = pool_stat(other, UR_USM_POOL_INFO_USED_CURRENT_EXP);
    ur_queue_handle_t q = rng() % 3 ? in_order : ooo;
    const bool want_event = rng() % 3 == 0;
    ur_event_handle_t ev = nullptr;
    ur_event_handle_t *pev = want_event ? &ev : nullptr;
    ur_usm_pool_handle_t named = rng() % 2 ? mine : nullptr;
    const int bad = int(rng() % 10);
    switch (bad) {
    case 0: // interior pointer of a live block
      if (!live.empty()) {
        const block &b = live[rng() % live.size()];
        char *inner = static_cast<char *>(b.p) + 1 + rng() % (b.size - 1);
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, inner, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      }
      break;
    case 1: // double free, stream-ordered or synchronous; the freed block is no one's
      if (!freed.empty()) {
        void *again = freed[rng() % freed.size()];
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, again, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        EXPECT(t.USM.pfnFree(ctx, again), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        if (held_freed(again)) {
          const uint32_t v = 7;
          EXPECT(t.Enqueue.pfnUSMFill(q, again, 4, &v, 64, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
          EXPECT(t.Enqueue.pfnUSMMemcpy(q, true, heap.data(), again, 64, 0, nullptr, pev),
                 UR_RESULT_ERROR_INVALID_MEM_OBJECT);
          const ur_usm_type_t k = type_of(ctx, again);
          CLAIM(k == UR_USM_TYPE_UNKNOWN, "TYPE of a freed %s block is %d", kind_name(kind), int(k));
        }
      }
      break;
    case 2: // never allocated: the stack, the heap
      EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, rng() % 2 ? static_cast<void *>(&host_word) : heap.data(), 0, nullptr,
                                        pev),
             UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      break;
    case 3: // another pool's block, naming this pool
      EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, mine, other_block, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      if (!live.empty())
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, other, live[rng() % live.size()].p, 0, nullptr, pev),
               UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      break;
    case 4: // null pointer
      EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, nullptr, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_NULL_POINTER);
      break;
    case 5: // wait list whose count and pointer disagree, or that names a null event
      if (!live.empty()) {
        ur_event_handle_t none = nullptr;
        void *p = live[rng() % live.size()].p;
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, p, 1, nullptr, pev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, p, 0, &none, pev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, named, p, 1, &none, pev), UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
      }
      break;
    case 7: // another context's pool or block
      if (!live.empty())
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, pool2, live[rng() % live.size()].p, 0, nullptr, pev),
               UR_RESULT_ERROR_INVALID_CONTEXT);
      EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, rng() % 2 ? nullptr : mine, block2, 0, nullptr, pev),
             UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      break;
    case 8: // handles of the wrong kind: a queue as the pool, an event as the queue, no queue
      if (!live.empty()) {
        void *p = live[rng() % live.size()].p;
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, reinterpret_cast<ur_usm_pool_handle_t>(q), p, 0, nullptr, pev),
               UR_RESULT_ERROR_INVALID_VALUE);
        ur_event_handle_t b = nullptr;
        CHECK(t.Enqueue.pfnEventsWait(q, 0, nullptr, &b));
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(reinterpret_cast<ur_queue_handle_t>(b), named, p, 0, nullptr, pev),
               UR_RESULT_ERROR_INVALID_QUEUE);
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(nullptr, named, p, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
        CHECK(t.Event.pfnRelease(b));
      }
      break;
    case 9: { // memory of the wrong kind: host memory from a device pool, and freed naming one
      void *p = nullptr;
      EXPECT(t.EnqueueExp.pfnUSMHostAllocExp(q, device_pool, 256, nullptr, 0, nullptr, &p, pev),
             UR_RESULT_ERROR_INVALID_VALUE);
      EXPECT(t.USM.pfnHostAlloc(ctx, nullptr, device_pool, 256, &p), UR_RESULT_ERROR_INVALID_VALUE);
      CLAIM(!p, "a refused host alloc gave %p", p);
      if (kind == UR_USM_TYPE_HOST && !live.empty())
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, device_pool, live[rng() % live.size()].p, 0, nullptr, pev),
               UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      if (kind == UR_USM_TYPE_HOST)
        CLAIM(pool_stat(device_pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP) == 0,
              "a device pool that refused every alloc reserved memory");
      break;
    }
    default: { // a destroyed pool named (its object kept alive by a live block of it)
      ur_usm_pool_handle_t dead = make_pool_for(ctx, kind);
      void *d = nullptr;
      CHECK(enqueue_alloc(in_order, kind, dead, 256, 0, nullptr, &d, nullptr));
      end_pool(ctx, kind, dead);
      EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, dead, d, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_VALUE);
      if (!live.empty())
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, dead, live[0].p, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_VALUE);
      CLAIM(!ev, "a refused free handed out an event");
      CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, d, 0, nullptr, nullptr)); // its last block: the pool goes
      break;
    }
    }
    CLAIM(!ev, "a refused call (%s, case %d) handed out an event", kind_name(kind), bad);
    CLAIM(pool_stat(mine, UR_USM_POOL_INFO_USED_CURRENT_EXP) == used, "USED changed by a refused free (%s, case %d)",
          kind_name(kind), bad);
    CLAIM(pool_stat(mine, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP) == reserved,
          "RESERVED changed by a refused free (%s, case %d)", kind_name(kind), bad);
    CLAIM(pool_stat(other, UR_USM_POOL_INFO_USED_CURRENT_EXP) == other_used,
          "the other pool's USED changed by a refused free (%s, case %d)", kind_name(kind), bad);
    // Good frees: some on the fast path, some with an event or a wait list.
    for (int i = 0, n = int(rng() % 4); i < n && !live.empty(); ++i) {
      const size_t at = rng() % live.size();
      const block b = live[at];
      live[at] = live.back();
      live.pop_back();
      ur_queue_handle_t fq = rng() % 3 ? in_order : ooo;
      ur_event_handle_t w = nullptr, f = nullptr;
      if (rng() % 4 == 0) CHECK(launch(fq, b.p, 0, nullptr, &w));
      if (rng() % 6 == 0) CHECK(t.Queue.pfnFinish(fq));
      if (!w && rng() % 6 == 0)
        CHECK(t.USM.pfnFree(ctx, b.p)); // no command of ours uses it
      else
        CHECK(t.EnqueueExp.pfnUSMFreeExp(fq, rng() % 2 ? mine : nullptr, b.p, w ? 1 : 0, w ? &w : nullptr,
                                         rng() % 3 == 0 ? &f : nullptr));
      if (w) CHECK(t.Event.pfnRelease(w));
      if (f) CHECK(t.Event.pfnRelease(f));
      freed.push_back(b.p);
      // The used count drops at the free itself (a pending block is freed memory).
    }
    if (rng() % 8 == 0) CHECK(t.Queue.pfnFinish(rng() % 2 ? in_order : ooo));
  }
  for (const block &b : live) CHECK(t.EnqueueExp.pfnUSMFreeExp(in_order, nullptr, b.p, 0, nullptr, nullptr));
  CHECK(t.EnqueueExp.pfnUSMFreeExp(in_order, other, other_block, 0, nullptr, nullptr));
  CHECK(t.Queue.pfnFinish(in_order));
  CHECK(t.Queue.pfnFinish(ooo));
  CLAIM(pool_stat(mine, UR_USM_POOL_INFO_USED_CURRENT_EXP) == 0, "USED %zu after every free (%s)",
        pool_stat(mine, UR_USM_POOL_INFO_USED_CURRENT_EXP), kind_name(kind));
  CLAIM(pool_stat(other, UR_USM_POOL_INFO_USED_CURRENT_EXP) == 0, "other pool USED not 0 after every free (%s)",
        kind_name(kind));
  end_pool(ctx, kind, mine);
  end_pool(ctx, kind, other);
  if (device_pool != mine) CHECK(t.USMExp.pfnPoolDestroyExp(ctx, dev, device_pool));
  CHECK(t.EnqueueExp.pfnUSMFreeExp(q2, nullptr, block2, 0, nullptr, nullptr));
  CHECK(t.Queue.pfnFinish(q2));
  CLAIM(pool_stat(pool2, UR_USM_POOL_INFO_USED_CURRENT_EXP) == 0, "the other context's pool USED not 0 (%s)",
        kind_name(kind));
  end_pool(ctx2, kind, pool2);
  CHECK(t.Queue.pfnRelease(q2));
  CHECK(t.Context.pfnRelease(ctx2));
  CHECK(t.Queue.pfnRelease(in_order));
  CHECK(t.Queue.pfnRelease(ooo));
}

// ---- phase 2: a queue released while another thread frees into it -------------------
// Two threads hold a reference each to a fresh in-order queue and free its blocks with
// no command (one shared release event per run); whichever releases last finishes and
// tears the streams down while the other asks about the queue's deferred and late
// events it still holds, and a third thread reuses the blocks from another queue.
void queue_release_race(int id, int rounds, ur_queue_handle_t reuse_q) {
  for (int r = 0; r < rounds; ++r) {
    auto rng = rng_for(2, id, r);
    ur_queue_handle_t q = make_queue_flags(ctx, r % 2 ? random_flags(rng, false) : 0);
    const int n = 4 + int(rng() % 12);
    std::vector<void *> blocks(n);
    std::vector<ur_event_handle_t> events; // each one reference, for the two threads
    for (int i = 0; i < n; ++i) {
      ur_event_handle_t a = nullptr;
      const ur_usm_type_t kind = any_kind(rng);
      CHECK(enqueue_alloc(q, kind, nullptr, 256u << (rng() % 6), 0, nullptr, &blocks[i], rng() % 2 ? &a : nullptr));
      if (a) events.push_back(a);
      if (rng() % 3 == 0) {
        ur_event_handle_t k = nullptr;
        CHECK(launch(q, blocks[i], 0, nullptr, &k)); // a late record pending on the stream
        events.push_back(k);
      }
    }
    const size_t half_events = events.size() / 2;
    CHECK(t.Queue.pfnRetain(q));
    Gate go(3);
    auto side = [&](int which) {
      auto srng = rng_for(2, id * 16 + which, r);
      go.arrive_and_wait();
      for (int i = which; i < n; i += 2) {
        CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, blocks[i], 0, nullptr, nullptr));
        if (srng() % 4 == 0) std::this_thread::yield();
      }
      if (srng() % 2) CHECK(t.Queue.pfnFinish(q));
      CHECK(t.Queue.pfnRelease(q)); // maybe the last: the streams go while the other asks
      const size_t from = which ? half_events : 0, to = which ? events.size() : half_events;
      for (size_t i = from; i < to; ++i) {
        for (int j = 0, k = 1 + int(srng() % 3); j < k; ++j) ask(events[i], srng, reuse_q);
        CHECK(t.Event.pfnRelease(events[i]));
      }
    };
    std::thread a(side, 0), b(side, 1);
    go.arrive_and_wait();
    // The third: allocs of the same sizes on another queue, which reuse the frees by
    // rule 2 (complete) or 3 (a stream wait on the released queue's events).
    std::vector<void *> mine;
    for (int i = 0; i < n; ++i) {
      void *p = nullptr;
      const ur_usm_type_t kind = any_kind(rng);
      CHECK(enqueue_alloc(reuse_q, kind, nullptr, 256u << (rng() % 6), 0, nullptr, &p, nullptr));
      if (p) mine.push_back(p);
    }
    a.join();
    b.join();
    for (void *p : mine) CHECK(t.EnqueueExp.pfnUSMFreeExp(reuse_q, nullptr, p, 0, nullptr, nullptr));
  }
}

// ---- phase 3: late and deferred events asked about while their owner submits ---------
// An owner keeps submitting to its in-order queue (launches whose records are put off,
// allocs and frees whose events are deferred, command-less frees); helpers each hold a
// reference to the same events and ask about them all at once (status, wait, native
// handle, another queue's wait list, retain/release); one of them takes the queue's
// native handle now and then, which ends late records for that queue mid-run.
struct shared_events {
  std::mutex mu;
  std::vector<ur_event_handle_t> refs; // one entry per reference handed over
  bool done = false;
  void put(ur_event_handle_t e, int copies) {
    for (int i = 1; i < copies; ++i) CHECK(t.Event.pfnRetain(e));
    std::lock_guard<std::mutex> l(mu);
    for (int i = 0; i < copies; ++i) refs.push_back(e);
  }
  ur_event_handle_t take(std::mt19937_64 &rng, bool &finished) {
    std::lock_guard<std::mutex> l(mu);
    finished = done && refs.empty();
    if (refs.empty()) return nullptr;
    size_t i = rng() % refs.size();
    ur_event_handle_t e = refs[i];
    refs[i] = refs.back();
    refs.pop_back();
    return e;
  }
};

void late_events(int id, int rounds, int helpers) {
  auto rng = rng_for(3, id);
  ur_queue_handle_t q = make_queue_flags(ctx, id == 0 ? 0 : random_flags(rng, true));
  shared_events box;
  std::vector<std::thread> hs;
  for (int h = 0; h < helpers; ++h)
    hs.emplace_back([&, h] {
      auto hrng = rng_for(3, id * 64 + h + 1);
      ur_queue_handle_t other = make_queue(ctx, hrng() % 2);
      for (bool finished = false; !finished;) {
        ur_event_handle_t e = box.take(hrng, finished);
        if (!e) {
          std::this_thread::yield();
          continue;
        }
        for (int j = 0, k = 1 + int(hrng() % 3); j < k; ++j) ask(e, hrng, other);
        if (h == 0 && hrng() % 16 == 0) {
          ur_native_handle_t s = 0;
          CHECK(t.Queue.pfnGetNativeHandle(q, nullptr, &s)); // ends late records for q
        }
        CHECK(t.Event.pfnRelease(e));
      }
      CHECK(t.Queue.pfnFinish(other));
      CHECK(t.Queue.pfnRelease(other));
    });
  std::vector<void *> live;
  for (int r = 0; r < rounds; ++r) {
    switch (rng() % 6) {
    case 0: { // a launch whose event goes at once: its put-off record must be forgotten
      ur_event_handle_t k = nullptr;
      CHECK(launch(q, live.empty() ? nullptr : live.back(), 0, nullptr, &k));
      if (rng() % 2)
        CHECK(t.Event.pfnRelease(k));
      else
        box.put(k, 1 + int(rng() % 3)); // released by helpers while the next work comes
      break;
    }
    case 1: { // an alloc whose deferred event is released at once, then more work
      void *p = nullptr;
      ur_event_handle_t a = nullptr;
      const ur_usm_type_t kind = any_kind(rng);
      CHECK(enqueue_alloc(q, kind, nullptr, 512u << (rng() % 4), 0, nullptr, &p, &a));
      if (p) live.push_back(p);
      if (rng() % 2)
        CHECK(t.Event.pfnRelease(a));
      else
        box.put(a, 1 + int(rng() % 3));
      break;
    }
    case 2: // command-less frees, a run of them sharing one release event
      for (int i = 0, n = int(rng() % 4); i < n && !live.empty(); ++i) {
        CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, live.back(), 0, nullptr, nullptr));
        live.pop_back();
      }
      break;
    case 3: // a free whose event goes to the helpers
      if (!live.empty()) {
        ur_event_handle_t f = nullptr;
        CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, live.back(), 0, nullptr, &f));
        live.pop_back();
        box.put(f, 1 + int(rng() % 3));
      }
      break;
    case 4: { // a wait or barrier with an event: recorded late as well
      ur_event_handle_t b = nullptr;
      if (rng() % 2)
        CHECK(t.Enqueue.pfnEventsWaitWithBarrier(q, 0, nullptr, &b));
      else
        CHECK(t.Enqueue.pfnEventsWait(q, 0, nullptr, &b));
      box.put(b, 1 + int(rng() % 2));
      break;
    }
    default:
      if (rng() % 4 == 0) {
        CHECK(t.Queue.pfnFinish(q));
      } else if (rng() % 2) { // a timed command: recorded at once, after the put-off record
        ur_event_handle_t ts = nullptr;
        CHECK(t.EnqueueExp.pfnTimestampRecordingExp(q, rng() % 2, 0, nullptr, &ts));
        box.put(ts, 1 + int(rng() % 2));
      }
      break;
    }
  }
  for (void *p : live) CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  {
    std::lock_guard<std::mutex> l(box.mu);
    box.done = true;
  }
  for (auto &h : hs) h.join();
  CHECK(t.Queue.pfnFinish(q));
  CHECK(t.Queue.pfnRelease(q));
}

// ---- phase 4: queue native handle within runs of shared-release frees ---------------
// One thread frees blocks with no command in long runs (a shared release event); another
// takes the queue's native handle, finishes it and launches on it at random moments;
// a third allocates the same sizes from another queue, reusing those frees.
void native_handle_in_free_runs(int id, int rounds, ur_queue_handle_t reuse_q) {
  auto frng = rng_for(4, id * 16 + 3);
  ur_queue_handle_t q = make_queue_flags(ctx, id == 0 ? 0 : random_flags(frng, false));
  std::atomic<bool> stop{false};
  std::thread meddler([&] {
    auto mrng = rng_for(4, id * 16 + 1);
    void *scratch = nullptr;
    CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 4096, nullptr, 0, nullptr, &scratch, nullptr));
    while (!stop.load()) {
      switch (mrng() % 4) {
      case 0: {
        ur_native_handle_t s = 0;
        CHECK(t.Queue.pfnGetNativeHandle(q, nullptr, &s));
        break;
      }
      case 1:
        if (mrng() % 2)
          CHECK(t.Queue.pfnFinish(q));
        else
          CHECK(t.Enqueue.pfnEventsWaitWithBarrier(q, 0, nullptr, nullptr));
        break;
      case 2: {
        ur_event_handle_t k = nullptr;
        CHECK(launch(q, scratch, 0, nullptr, mrng() % 2 ? &k : nullptr));
        if (k) CHECK(t.Event.pfnRelease(k));
        break;
      }
      default: std::this_thread::yield();
      }
    }
    CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, scratch, 0, nullptr, nullptr));
  });
  std::thread reuser([&] {
    auto rrng = rng_for(4, id * 16 + 2);
    while (!stop.load()) {
      void *p = nullptr;
      ur_event_handle_t a = nullptr;
      const ur_usm_type_t kind = any_kind(rrng);
      CHECK(enqueue_alloc(reuse_q, kind, nullptr, 1024u << (rrng() % 3), 0, nullptr, &p, rrng() % 2 ? &a : nullptr));
      if (p) CHECK(t.EnqueueExp.pfnUSMFreeExp(reuse_q, nullptr, p, a ? 1 : 0, a ? &a : nullptr, nullptr));
      if (a) CHECK(t.Event.pfnRelease(a));
    }
  });
  auto rng = rng_for(4, id * 16);
  for (int r = 0; r < rounds; ++r) {
    std::vector<void *> run(2 + rng() % 10);
    for (void *&p : run) {
      const ur_usm_type_t kind = any_kind(rng);
      CHECK(enqueue_alloc(q, kind, nullptr, 1024u << (rng() % 3), 0, nullptr, &p, nullptr));
    }
    for (void *p : run)
      if (p) CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  }
  stop = true;
  meddler.join();
  reuser.join();
  CHECK(t.Queue.pfnFinish(q));
  CHECK(t.Queue.pfnRelease(q));
}

// ---- phase 5: pools destroyed while frees and allocs naming them are in flight -------
// A fresh pool per round (urUSMPoolCreateExp: device and shared memory, or
// urUSMPoolCreate, every kind, ended by its last urUSMPoolRelease); every thread
// allocates from it and fills some blocks, then one destroys it while the others free
// naming it (success before, INVALID_VALUE after: then again naming no pool) and
// allocate naming it (success or INVALID_VALUE).
void pool_destroy_race(int threads, int rounds) {
  const size_t base_used = pool_stat(default_pool(), UR_USM_POOL_INFO_USED_CURRENT_EXP);
  for (int r = 0; r < rounds; ++r) {
    auto rng = rng_for(5, 0, r);
    const bool exp_pool = rng() % 2;
    ur_usm_pool_handle_t pool = nullptr;
    if (exp_pool) {
      pool = make_pool();
    } else {
      ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
      CHECK(t.USM.pfnPoolCreate(ctx, &desc, &pool));
    }
    Gate go(threads);
    std::vector<std::thread> ts;
    for (int id = 0; id < threads; ++id)
      ts.emplace_back([&, id] {
        auto trng = rng_for(5, id + 1, r);
        ur_queue_handle_t q = make_queue_flags(ctx, random_flags(trng, true));
        // Blocks of every kind the pool serves, some filled: a fill in flight when the
        // pool goes, which the block's free then waits for.
        struct block {
          void *p;
          ur_event_handle_t last;
        };
        std::vector<block> blocks;
        for (int i = 0, n = 2 + int(trng() % 8); i < n; ++i) {
          void *p = nullptr;
          const ur_usm_type_t kind = exp_pool ? (trng() % 2 ? UR_USM_TYPE_DEVICE : UR_USM_TYPE_SHARED) : any_kind(trng);
          const bool fill = trng() % 3 == 0;
          ur_event_handle_t a = nullptr, f = nullptr;
          CHECK(enqueue_alloc(q, kind, pool, 128u << (trng() % 8), 0, nullptr, &p, fill ? &a : nullptr));
          if (p && fill) {
            const uint32_t v = uint32_t(trng());
            CHECK(t.Enqueue.pfnUSMFill(q, p, 4, &v, 128, 1, &a, &f));
          }
          if (a) CHECK(t.Event.pfnRelease(a));
          if (p) blocks.push_back({p, f});
        }
        go.arrive_and_wait();
        if (id == 0) {
          if (trng() % 2) std::this_thread::yield();
          if (exp_pool)
            CHECK(t.USMExp.pfnPoolDestroyExp(ctx, dev, pool));
          else
            CHECK(t.USM.pfnPoolRelease(pool));
        }
        for (const block &b : blocks) {
          ur_event_handle_t f = nullptr;
          const uint32_t nw = b.last ? 1 : 0;
          const ur_event_handle_t *w = b.last ? &b.last : nullptr;
          ur_result_t fr =
              t.EnqueueExp.pfnUSMFreeExp(q, trng() % 2 ? pool : nullptr, b.p, nw, w, trng() % 4 == 0 ? &f : nullptr);
          EXPECT(fr, UR_RESULT_SUCCESS, UR_RESULT_ERROR_INVALID_VALUE);
          if (fr == UR_RESULT_ERROR_INVALID_VALUE) {
            CLAIM(!f, "a refused free handed out an event");
            CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, b.p, nw, w, nullptr));
          }
          if (f) CHECK(t.Event.pfnRelease(f));
          if (b.last) CHECK(t.Event.pfnRelease(b.last));
          if (id != 0 && trng() % 3 == 0) {
            void *again = nullptr;
            const ur_usm_type_t kind = exp_pool ? UR_USM_TYPE_SHARED : any_kind(trng);
            ur_result_t ar = enqueue_alloc(q, kind, pool, 256, 0, nullptr, &again, nullptr);
            EXPECT(ar, UR_RESULT_SUCCESS, UR_RESULT_ERROR_INVALID_VALUE);
            if (again) CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, again, 0, nullptr, nullptr));
          }
        }
        CHECK(t.Queue.pfnFinish(q));
        CHECK(t.Queue.pfnRelease(q));
      });
    for (auto &th : ts) th.join();
    void *p = nullptr;
    EXPECT(t.EnqueueExp.pfnUSMDeviceAllocExp(nullptr, pool, 64, nullptr, 0, nullptr, &p, nullptr),
           UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  }
  CLAIM(pool_stat(default_pool(), UR_USM_POOL_INFO_USED_CURRENT_EXP) == base_used,
        "the default pool's USED moved by the pool phase");
}

// ---- phase 6: event reference counts racing with the late record --------------------
// A launch's event (record put off) handed to several threads with one reference each;
// they retain, release and ask about it while the owner keeps submitting (each next
// command makes the put-off record). Then, on one thread, one release too many of
// events in each state: INVALID_EVENT, nothing else changes.
void refcount_race(int threads, int rounds) {
  ur_queue_handle_t q = make_queue(ctx, false);
  ur_queue_handle_t other = make_queue(ctx, true);
  void *scratch = nullptr;
  CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 4096, nullptr, 0, nullptr, &scratch, nullptr));
  for (int r = 0; r < rounds; ++r) {
    auto rng = rng_for(6, 0, r);
    ur_event_handle_t e = nullptr;
    const int kind = int(rng() % 3);
    void *p = nullptr;
    if (kind == 0)
      CHECK(launch(q, scratch, 0, nullptr, &e));
    else if (kind == 1)
      CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 2048, nullptr, 0, nullptr, &p, &e));
    else
      CHECK(t.Enqueue.pfnEventsWait(q, 0, nullptr, &e));
    if (!e) continue;
    for (int i = 1; i < threads; ++i) CHECK(t.Event.pfnRetain(e));
    Gate go(threads + 1);
    std::vector<std::thread> ts;
    for (int id = 0; id < threads; ++id)
      ts.emplace_back([&, id] {
        auto trng = rng_for(6, id + 1, r);
        go.arrive_and_wait();
        const int extra = int(trng() % 4);
        for (int i = 0; i < extra; ++i) CHECK(t.Event.pfnRetain(e));
        for (int i = 0; i < extra; ++i) {
          if (trng() % 2) ask(e, trng, other);
          CHECK(t.Event.pfnRelease(e));
        }
        if (trng() % 2) ask(e, trng, other);
        CHECK(t.Event.pfnRelease(e)); // maybe the last: the put-off record goes with it
      });
    go.arrive_and_wait();
    for (int i = 0, n = 1 + int(rng() % 4); i < n; ++i) { // the owner's next work flushes
      if (rng() % 2)
        CHECK(launch(q, scratch, 0, nullptr, nullptr));
      else
        CHECK(t.Enqueue.pfnEventsWait(q, 0, nullptr, nullptr));
    }
    for (auto &th : ts) th.join();
    if (p) CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  }
  // One release too many, nothing else running: a launch's late event, a deferred
  // alloc event, a free's event the pool still holds.
  for (int kind = 0; kind < 3; ++kind) {
    ur_event_handle_t e = nullptr;
    void *p = nullptr;
    if (kind == 0) CHECK(launch(q, scratch, 0, nullptr, &e));
    if (kind == 1) CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 2048, nullptr, 0, nullptr, &p, &e));
    if (kind == 2) {
      CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 2048, nullptr, 0, nullptr, &p, nullptr));
      CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, &e));
      p = nullptr;
    }
    CHECK(t.Event.pfnRelease(e));
    EXPECT(t.Event.pfnRelease(e), UR_RESULT_ERROR_INVALID_EVENT);
    EXPECT(t.Event.pfnRetain(e), UR_RESULT_ERROR_INVALID_EVENT);
    CHECK(launch(q, scratch, 0, nullptr, nullptr)); // the next work after it
    if (p) CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  }
  CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, scratch, 0, nullptr, nullptr));
  CHECK(t.Queue.pfnFinish(q));
  CHECK(t.Queue.pfnRelease(q));
  CHECK(t.Queue.pfnFinish(other));
  CHECK(t.Queue.pfnRelease(other));
}

// ---- phase 7: exported events of a shared mark --------------------------------------
// Two deferred events of one stream that another queue waited for share one driver
// event (their stream's mark). Each one's native handle is that driver event; an event
// made from it must still answer its queue after the first of the two is released, as
// long as the second lives (docs/cuda.md, "Native handles").
void shared_mark_export() {
  ur_queue_handle_t q = make_queue(ctx, false), other = make_queue(ctx, false);
  void *p1 = nullptr, *p2 = nullptr;
  ur_event_handle_t a1 = nullptr, a2 = nullptr;
  CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 1024, nullptr, 0, nullptr, &p1, &a1));
  CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 1024, nullptr, 0, nullptr, &p2, &a2));
  const ur_event_handle_t both[2] = {a1, a2};
  CHECK(t.Enqueue.pfnEventsWait(other, 2, both, nullptr)); // one mark recorded, covering both
  ur_native_handle_t h1 = 0, h2 = 0;
  CHECK(t.Event.pfnGetNativeHandle(a1, &h1));
  CHECK(t.Event.pfnGetNativeHandle(a2, &h2));
  CHECK(t.Event.pfnRelease(a1));
  ur_event_handle_t made = nullptr;
  const ur_event_native_properties_t props{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, false};
  CHECK(t.Event.pfnCreateWithNativeHandle(h2, ctx, &props, &made));
  ur_queue_handle_t answered = nullptr;
  if (made) CHECK(t.Event.pfnGetInfo(made, UR_EVENT_INFO_COMMAND_QUEUE, sizeof answered, &answered, nullptr));
  CLAIM(answered == q, "an event made from a live event's native handle answers queue %p, not %p (shared mark: %s)",
        static_cast<void *>(answered), static_cast<void *>(q), h1 == h2 ? "yes" : "no");
  if (made) CHECK(t.Event.pfnRelease(made));
  CHECK(t.Event.pfnRelease(a2));
  CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p1, 0, nullptr, nullptr));
  CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p2, 0, nullptr, nullptr));
  CHECK(t.Queue.pfnRelease(q));
  CHECK(t.Queue.pfnRelease(other));
}

// The smallest reproducer of a race on an event's "exported" mark: two threads take the
// native handle of one fresh event (late launch event or deferred alloc event) at once.
void native_handle_twice(int rounds) {
  ur_queue_handle_t q = make_queue(ctx, false);
  for (int r = 0; r < rounds; ++r) {
    ur_event_handle_t e = nullptr;
    void *p = nullptr;
    if (r % 2)
      CHECK(launch(q, nullptr, 0, nullptr, &e));
    else
      CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, 256, nullptr, 0, nullptr, &p, &e));
    Gate go(2);
    ur_native_handle_t h[2] = {};
    auto take = [&](int i) {
      go.arrive_and_wait();
      CHECK(t.Event.pfnGetNativeHandle(e, &h[i]));
    };
    std::thread a(take, 0), b(take, 1);
    a.join();
    b.join();
    CLAIM(h[0] == h[1] && h[0], "one event gave native handles %p and %p", reinterpret_cast<void *>(h[0]),
          reinterpret_cast<void *>(h[1]));
    CHECK(t.Event.pfnRelease(e));
    if (p) CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  }
  CHECK(t.Queue.pfnRelease(q));
}

// ---- phase 8: teardown with live blocks and unrecorded events -----------------------
// A second context per round: blocks of every kind never freed (stream-ordered and
// plain), host memory left registered, launches whose records are still put off,
// deferred alloc events and a shared release event, and the user's handles let go in a
// random order (the context first, the queue before its events, ...), with the events
// asked about after their queue and context are gone.
void teardown(int id, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    auto rng = rng_for(8, id, r);
    ur_context_handle_t c = nullptr;
    CHECK(t.Context.pfnCreate(1, &dev, nullptr, &c));
    ur_program_handle_t prog = nullptr;
    ur_kernel_handle_t k = nullptr;
    CHECK(ordo_tools::make_fill_kernel(t, c, dev, prog, k));
    ur_queue_handle_t q = make_queue_flags(c, random_flags(rng, true));
    std::vector<ur_event_handle_t> events;
    std::vector<void *> blocks;
    for (int i = 0, n = 2 + int(rng() % 8); i < n; ++i) {
      void *p = nullptr;
      ur_event_handle_t a = nullptr;
      const ur_usm_type_t kind = any_kind(rng);
      CHECK(enqueue_alloc(q, kind, nullptr, 512u << (rng() % 4), 0, nullptr, &p, rng() % 2 ? &a : nullptr));
      if (a) events.push_back(a);
      if (!p) continue;
      if (rng() % 2) {
        ur_event_handle_t e = nullptr;
        CHECK(launch(q, p, 0, nullptr, &e, k));
        events.push_back(e);
      }
      if (rng() % 2)
        CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
      else
        blocks.push_back(p); // never freed
    }
    // Plain allocations of each kind never freed, and host memory left registered: the
    // context's end frees and unpins them.
    for (ur_usm_type_t kind : kKinds)
      if (rng() % 2) {
        void *p = nullptr;
        CHECK(plain_alloc(c, kind, nullptr, 256u << (rng() % 4), &p));
      }
    const size_t page = 4096, reg_size = page * (1 + rng() % 3);
    void *reg = rng() % 2 ? std::aligned_alloc(page, reg_size) : nullptr;
    if (reg) CHECK(t.USMExp.pfnHostAllocRegisterExp(c, reg, reg_size, nullptr));
    CHECK(t.Kernel.pfnRelease(k));
    CHECK(t.Program.pfnRelease(prog));
    std::shuffle(events.begin(), events.end(), rng);
    const int order = int(rng() % 3);
    if (order == 0) CHECK(t.Context.pfnRelease(c));
    CHECK(t.Queue.pfnRelease(q));
    if (order == 1) CHECK(t.Context.pfnRelease(c));
    for (ur_event_handle_t e : events) {
      ur_event_status_t st = status_of(e);
      CLAIM(st == UR_EVENT_STATUS_COMPLETE, "an event of a released queue reads %d", int(st));
      if (rng() % 2) CHECK(t.Event.pfnWait(1, &e));
      if (rng() % 4 == 0) {
        ur_native_handle_t h = 0;
        CHECK(t.Event.pfnGetNativeHandle(e, &h));
      }
      CHECK(t.Event.pfnRelease(e));
    }
    if (order == 2) CHECK(t.Context.pfnRelease(c));
    std::free(reg); // every handle of the context is gone, so is its registration
  }
}

void run_threads(int n, const std::function<void(int)> &f) {
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i) ts.emplace_back(f, i);
  for (auto &th : ts) th.join();
}

// ---- phase 10: host and shared memory handed between threads ------------------------
// Every thread allocates blocks of each kind (stream-ordered from the default, host and a
// urUSMPoolCreate pool, plain with urUSM*Alloc), fills them and copies between them
// (urEnqueueUSMMemcpy, urUSMContextMemcpyExp; checked byte by byte), asks their TYPE,
// prefetches and advises them, and hands them to another thread, which frees them: a
// stream-ordered block on its own queue after the event of the last command on it, a
// plain one with urUSMFree once that is complete. Before that the taker's bad frees of
// the block are refused with their codes and no event (a plain allocation freed
// stream-ordered, a block freed naming a pool that does not own it, urUSMFree of an
// interior pointer). Host memory registered on each thread answers TYPE HOST while it
// is registered, is used by copies, and is refused by urUSMFree.
struct handed_block {
  void *p;
  size_t size;
  ur_usm_type_t kind;
  ur_usm_pool_handle_t pool; // the pool named at the alloc (null: the default or host pool)
  bool plain;                // urUSM*Alloc with no pool: no pool owns it
  ur_event_handle_t last;    // the last command on it, or null: none pending
};

// Copies n bytes src -> dst (after both blocks' last commands) and checks dst against src.
void copy_and_check(ur_queue_handle_t q, handed_block &dst, handed_block &src, size_t n, std::mt19937_64 &rng) {
  std::vector<ur_event_handle_t> waits;
  for (ur_event_handle_t e : {dst.last, src.last})
    if (e) waits.push_back(e);
  std::vector<uint8_t> want(n), got(n, 0);
  CHECK(t.Enqueue.pfnUSMMemcpy(q, true, want.data(), src.p, n, uint32_t(waits.size()), waits.data(), nullptr));
  if (rng() % 3 == 0) { // no queue: everything on both blocks is complete after the wait
    if (!waits.empty()) CHECK(t.Event.pfnWait(uint32_t(waits.size()), waits.data()));
    CHECK(t.USMExp.pfnContextMemcpyExp(ctx, dst.p, src.p, n));
    CHECK(t.Enqueue.pfnUSMMemcpy(q, true, got.data(), dst.p, n, 0, nullptr, nullptr));
  } else {
    ur_event_handle_t c = nullptr;
    CHECK(t.Enqueue.pfnUSMMemcpy(q, false, dst.p, src.p, n, uint32_t(waits.size()), waits.data(), &c));
    CHECK(t.Enqueue.pfnUSMMemcpy(q, true, got.data(), dst.p, n, c ? 1 : 0, c ? &c : nullptr, nullptr));
    if (c) CHECK(t.Event.pfnRelease(c));
  }
  CLAIM(want == got, "a copy of %zu bytes from %s to %s memory differs", n, kind_name(src.kind), kind_name(dst.kind));
  bytes_checked += long(n);
  for (handed_block *b : {&dst, &src}) // both complete now
    if (b->last) {
      CHECK(t.Event.pfnRelease(b->last));
      b->last = nullptr;
    }
}

void kinds_exchange(int threads, int rounds) {
  ur_usm_pool_handle_t all_kinds = nullptr;
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  CHECK(t.USM.pfnPoolCreate(ctx, &desc, &all_kinds));
  std::mutex box_mu;
  std::vector<handed_block> box;
  run_threads(threads, [&](int id) {
    auto rng = rng_for(10, id);
    ur_queue_handle_t q = make_queue_flags(ctx, random_flags(rng, true));
    std::vector<handed_block> mine;
    auto take = [&](handed_block &out) {
      std::lock_guard<std::mutex> l(box_mu);
      if (box.empty()) return false;
      const size_t i = rng() % box.size();
      out = box[i];
      box[i] = box.back();
      box.pop_back();
      return true;
    };
    auto free_block = [&](handed_block &b) {
      ur_event_handle_t ev = nullptr;
      ur_event_handle_t *pev = rng() % 2 ? &ev : nullptr;
      char *inner = static_cast<char *>(b.p) + 1 + rng() % (b.size - 1);
      EXPECT(t.USM.pfnFree(ctx, inner), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
      if (b.plain) {
        EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, b.p, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        if (b.last) CHECK(t.Event.pfnWait(1, &b.last));
        CHECK(t.USM.pfnFree(ctx, b.p));
      } else {
        if (!b.pool)
          EXPECT(t.EnqueueExp.pfnUSMFreeExp(q, all_kinds, b.p, 0, nullptr, pev), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        ur_event_handle_t f = nullptr;
        CHECK(t.EnqueueExp.pfnUSMFreeExp(q, rng() % 2 ? b.pool : nullptr, b.p, b.last ? 1 : 0,
                                         b.last ? &b.last : nullptr, rng() % 3 == 0 ? &f : nullptr));
        if (f) CHECK(t.Event.pfnRelease(f));
      }
      CLAIM(!ev, "a refused free of %s memory handed out an event", kind_name(b.kind));
      if (b.last) CHECK(t.Event.pfnRelease(b.last));
    };
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0, n = 1 + int(rng() % 3); i < n; ++i) {
        handed_block b{nullptr, size_t(64) << (rng() % 8), any_kind(rng), nullptr, false, nullptr};
        b.pool = rng() % 3 == 0 ? all_kinds : nullptr;
        b.plain = rng() % 4 == 0;
        ur_event_handle_t a = nullptr;
        if (b.plain)
          CHECK(plain_alloc(ctx, b.kind, b.pool, b.size, &b.p));
        else
          CHECK(enqueue_alloc(q, b.kind, b.pool, b.size, 0, nullptr, &b.p, &a));
        b.plain = b.plain && !b.pool; // through a pool it is a block of that pool
        if (!b.p) {
          if (a) CHECK(t.Event.pfnRelease(a));
          continue;
        }
        const ur_usm_type_t k = type_of(ctx, b.p);
        CLAIM(k == b.kind, "TYPE of a new %s block is %d", kind_name(b.kind), int(k));
        b.last = a;
        switch (rng() % 4) {
        case 0:
          fill_and_check(q, b.p, std::min(b.size, size_t(256)), b.kind, b.last, rng);
          if (b.last) CHECK(t.Event.pfnRelease(b.last));
          b.last = nullptr;
          break;
        case 1: { // migration hints: managed memory reaches the driver, the others are no-ops
          ur_event_handle_t e = nullptr;
          CHECK(t.Enqueue.pfnUSMPrefetch(
              q, b.p, b.size, rng() % 2 ? UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST : UR_USM_MIGRATION_FLAG_HOST_TO_DEVICE,
              b.last ? 1 : 0, b.last ? &b.last : nullptr, &e));
          CHECK(t.Enqueue.pfnUSMAdvise(q, b.p, b.size, UR_USM_ADVICE_FLAG_SET_READ_MOSTLY, nullptr));
          if (b.last) CHECK(t.Event.pfnRelease(b.last));
          b.last = e;
          break;
        }
        case 2: { // a launch that uses it, in flight when the block changes hands
          ur_event_handle_t e = nullptr;
          CHECK(launch(q, b.p, b.last ? 1 : 0, b.last ? &b.last : nullptr, &e));
          if (b.last) CHECK(t.Event.pfnRelease(b.last));
          b.last = e;
          break;
        }
        default: break;
        }
        if (!mine.empty() && rng() % 2) {
          handed_block &o = mine[rng() % mine.size()];
          const size_t n = std::min({b.size, o.size, size_t(256)});
          if (rng() % 2)
            copy_and_check(q, o, b, n, rng);
          else
            copy_and_check(q, b, o, n, rng);
        }
        mine.push_back(b);
      }
      // Registered host memory, this thread's for a round.
      if (rng() % 4 == 0) {
        const size_t page = 4096, size = page * (1 + rng() % 4);
        void *reg = std::aligned_alloc(page, size);
        CHECK(t.USMExp.pfnHostAllocRegisterExp(ctx, reg, size, nullptr));
        EXPECT(t.USMExp.pfnHostAllocRegisterExp(ctx, reg, size, nullptr), UR_RESULT_ERROR_INVALID_VALUE);
        const void *end = static_cast<const char *>(reg) + size - 1;
        CLAIM(type_of(ctx, reg) == UR_USM_TYPE_HOST && type_of(ctx, end) == UR_USM_TYPE_HOST,
              "registered memory answers TYPE %d", int(type_of(ctx, reg)));
        handed_block rb{reg, size, UR_USM_TYPE_HOST, nullptr, false, nullptr};
        fill_and_check(q, reg, std::min(size, size_t(256)), UR_USM_TYPE_HOST, nullptr, rng);
        if (!mine.empty()) {
          handed_block &src = mine[rng() % mine.size()];
          copy_and_check(q, rb, src, std::min(src.size, size), rng);
        }
        EXPECT(t.USM.pfnFree(ctx, reg), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        CHECK(t.USMExp.pfnHostAllocUnregisterExp(ctx, reg));
        EXPECT(t.USMExp.pfnHostAllocUnregisterExp(ctx, reg), UR_RESULT_ERROR_INVALID_VALUE);
        CLAIM(type_of(ctx, reg) == UR_USM_TYPE_UNKNOWN, "unregistered memory answers TYPE %d", int(type_of(ctx, reg)));
        std::free(reg);
      }
      // Hand some blocks over; free some handed to this thread.
      while (mine.size() > 4 || (!mine.empty() && rng() % 2)) {
        const size_t i = rng() % mine.size();
        {
          std::lock_guard<std::mutex> l(box_mu);
          box.push_back(mine[i]);
        }
        mine[i] = mine.back();
        mine.pop_back();
      }
      handed_block h;
      for (int j = 0, n = 1 + int(rng() % 3); j < n && take(h); ++j) free_block(h);
      if (rng() % 8 == 0) CHECK(t.Queue.pfnFinish(q));
    }
    for (handed_block &b : mine) free_block(b);
    CHECK(t.Queue.pfnFinish(q));
    CHECK(t.Queue.pfnRelease(q));
  });
  ur_queue_handle_t q = make_queue(ctx, false);
  std::mt19937_64 rng = rng_for(10, threads);
  for (handed_block &b : box) { // left by threads that finished first
    ur_event_handle_t f = nullptr;
    if (b.plain) {
      if (b.last) CHECK(t.Event.pfnWait(1, &b.last));
      CHECK(t.USM.pfnFree(ctx, b.p));
    } else {
      CHECK(t.EnqueueExp.pfnUSMFreeExp(q, nullptr, b.p, b.last ? 1 : 0, b.last ? &b.last : nullptr,
                                       rng() % 2 ? &f : nullptr));
    }
    if (f) CHECK(t.Event.pfnRelease(f));
    if (b.last) CHECK(t.Event.pfnRelease(b.last));
  }
  CHECK(t.Queue.pfnFinish(q));
  CHECK(t.Queue.pfnRelease(q));
  CLAIM(pool_stat(all_kinds, UR_USM_POOL_INFO_USED_CURRENT_EXP) == 0, "the every-kind pool's USED is %zu at the end",
        pool_stat(all_kinds, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  CHECK(t.USM.pfnPoolRelease(all_kinds));
  const long registered = driver_live(3);
  CLAIM(registered <= 0, "%ld host registrations left in the driver", registered);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return std::fprintf(stderr, "usage: %s <adapter library> [threads] [rounds] [seed] [phase]\n", argv[0]), 2;
  if (!ordo_tools::load_tables(argv[1], t)) return std::fprintf(stderr, "%s\n", dlerror()), 1;
  if (!t.USM.pfnFree || !t.USMExp.pfnPoolCreateExp) return std::fprintf(stderr, "%s: no USM tables\n", argv[1]), 1;
  const int threads = argc > 2 ? std::max(2, std::atoi(argv[2])) : 4;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 100;
  seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0;
  if (!seed) seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) | 1;
  const int only = argc > 5 ? std::atoi(argv[5]) : 0;
  std::printf("ordo-stream-attack: seed %llu, %d threads, %d rounds\n", (unsigned long long)seed, threads, rounds);
  std::fflush(stdout);
  ur_adapter_handle_t adapter = nullptr;
  CHECK(t.Adapter.pfnGet(1, &adapter, nullptr));
  CHECK(ordo_tools::first_device(t, dev, ctx));
  CHECK(ordo_tools::make_fill_kernel(t, ctx, dev, program, kernel));
  if (failures) return 1;
  const size_t base_used = pool_stat(default_pool(), UR_USM_POOL_INFO_USED_CURRENT_EXP);
  ur_queue_handle_t reuse_q = make_queue(ctx, false);
  auto phase = [&](int n, const char *name, const std::function<void()> &f) {
    if (only && only != n) return;
    const long before = failures.load();
    f();
    std::printf("phase %d %-28s %s\n", n, name, failures.load() == before ? "ok" : "FAILED");
    std::fflush(stdout);
  };
  phase(1, "bad frees", [&] { run_threads(threads, [&](int id) { bad_frees(id, rounds, UR_USM_TYPE_DEVICE); }); });
  phase(2, "queue release vs frees", [&] {
    run_threads(std::max(1, threads / 2), [&](int id) { queue_release_race(id, std::max(1, rounds / 4), reuse_q); });
  });
  phase(3, "late events asked",
        [&] { run_threads(std::max(1, threads / 2), [&](int id) { late_events(id, rounds * 4, 3); }); });
  phase(4, "native handle in free runs", [&] {
    run_threads(std::max(1, threads / 2), [&](int id) { native_handle_in_free_runs(id, rounds, reuse_q); });
  });
  phase(5, "pool destroy vs frees", [&] { pool_destroy_race(threads, std::max(1, rounds / 4)); });
  phase(6, "event refcounts", [&] { refcount_race(threads, std::max(1, rounds / 2)); });
  phase(7, "native handles exported", [&] {
    shared_mark_export();
    native_handle_twice(std::max(2, rounds / 2));
  });
  phase(8, "teardown", [&] { run_threads(threads, [&](int id) { teardown(id, std::max(1, rounds / 8)); }); });
  phase(9, "bad frees, host and shared", [&] {
    run_threads(threads, [&](int id) {
      bad_frees(id, std::max(1, rounds / 2), UR_USM_TYPE_HOST);
      bad_frees(id, std::max(1, rounds / 2), UR_USM_TYPE_SHARED);
    });
  });
  phase(10, "host and shared handed over", [&] { kinds_exchange(threads, rounds); });
  CHECK(t.Queue.pfnFinish(reuse_q));
  for (int i = 0; i < 10000 && callbacks_run.load() < callbacks_asked.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CLAIM(callbacks_run.load() == callbacks_asked.load(), "%ld of %ld completion callbacks ran", callbacks_run.load(),
        callbacks_asked.load());
  CLAIM(pool_stat(default_pool(), UR_USM_POOL_INFO_USED_CURRENT_EXP) == base_used,
        "the default pool's USED is %zu after every free, %zu before",
        pool_stat(default_pool(), UR_USM_POOL_INFO_USED_CURRENT_EXP), base_used);
  // Teardown of the main context with a block never freed and an event still put off.
  void *kept = nullptr;
  ur_event_handle_t late = nullptr;
  CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(reuse_q, nullptr, 4096, nullptr, 0, nullptr, &kept, nullptr));
  CHECK(launch(reuse_q, kept, 0, nullptr, &late));
  CHECK(t.Kernel.pfnRelease(kernel));
  CHECK(t.Program.pfnRelease(program));
  CHECK(t.Context.pfnRelease(ctx));
  CHECK(t.Queue.pfnRelease(reuse_q));
  CLAIM(status_of(late) == UR_EVENT_STATUS_COMPLETE, "the late event of a released queue is not complete");
  CHECK(t.Event.pfnRelease(late));
  // Every context is gone: so is every host, managed and registered allocation the
  // adapter made in the driver (null_cuda.c counts them; -1: another driver).
  for (int kind = 1; kind <= 3; ++kind) {
    const long left = driver_live(kind);
    CLAIM(left <= 0, "%ld driver allocations of kind %d (1 host, 2 managed, 3 registered) left after teardown", left,
          kind);
  }
  CHECK(t.Adapter.pfnRelease(adapter)); // ours
  CHECK(t.Adapter.pfnRelease(adapter)); // first_device's
  std::printf("seed %llu: %ld answers checked, %ld bytes compared, %ld failures\n", (unsigned long long)seed,
              checked.load(), bytes_checked.load(), failures.load());
  return failures ? 1 : 0;
}
