// SPDX-License-Identifier: Apache-2.0
// Waits against commands held back by a gate that another thread opens later: the
// OpenCL adapter's polled waits (adapters/opencl/polled_waits.cpp, docs/opencl.md) must
// answer as blocking waits do, for events of user events, of two contexts, of released
// queues, for blocking commands, queue finishes and frees while other threads enqueue.
// The gate is an OpenCL user event made into a UR event from its native handle, so the
// gated tests run on OpenCL only; the others run on every adapter.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace {

// OpenCL's user events, from the library the adapter loads (libOpenCL.so.1).
struct ClUserEvents {
  void *(*create)(void *context, int32_t *err) = nullptr;
  int32_t (*set_status)(void *event, int32_t status) = nullptr;
  // clEnqueueMarkerWithWaitList: work the adapter never sees, through a native queue.
  int32_t (*marker)(void *queue, uint32_t n, void *const *waits, void **event) = nullptr;
  int32_t (*release)(void *event) = nullptr;
  bool ok() const { return create && set_status && marker && release; }
  static const ClUserEvents &get() {
    static const ClUserEvents fns = [] {
      ClUserEvents f;
      void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!lib) return f;
      f.create = reinterpret_cast<void *(*)(void *, int32_t *)>(dlsym(lib, "clCreateUserEvent"));
      f.set_status = reinterpret_cast<int32_t (*)(void *, int32_t)>(dlsym(lib, "clSetUserEventStatus"));
      f.marker = reinterpret_cast<int32_t (*)(void *, uint32_t, void *const *, void **)>(
          dlsym(lib, "clEnqueueMarkerWithWaitList"));
      f.release = reinterpret_cast<int32_t (*)(void *)>(dlsym(lib, "clReleaseEvent"));
      return f;
    }();
    return fns;
  }
};

constexpr int32_t kClComplete = 0;
constexpr int32_t kClFailed = -5; // any negative status ends a user event in error (CL_OUT_OF_RESOURCES)

// A UR event that completes when open() (or fail()) is called: commands waiting for it
// stay pending until then.
struct Gate {
  ur_event_handle_t event = nullptr; // owns the user event
  void *native = nullptr;
  std::atomic<bool> opened{false};
  void set(int32_t status) {
    if (!opened.exchange(true)) ClUserEvents::get().set_status(native, status);
  }
  void open() { set(kClComplete); }
  void fail() { set(kClFailed); }
  ~Gate() {
    if (event) {
      open(); // nothing waits forever on a failed test's gate
      urEventRelease(event);
    }
  }
};

// Starts a thread that runs `f` and counts itself in `started` first.
template <class F> std::thread start(std::atomic<int> &started, F f) {
  return std::thread([&started, f] {
    started.fetch_add(1);
    f();
  });
}

// Lets threads that announced themselves reach their wait before a gate opens (the
// result does not depend on it; only which path the test takes).
void let_waiters_block(std::atomic<int> &started, int n) {
  while (started.load() < n) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

class urOpenclWaitsTest : public conf::ContextTest {
protected:
  std::vector<ur_queue_handle_t> queues;
  std::vector<void *> allocations;
  std::vector<ur_event_handle_t> events;

  void TearDown() override {
    for (ur_queue_handle_t q : queues) {
      EXPECT_SUCCESS(urQueueFinish(q));
      EXPECT_SUCCESS(urQueueRelease(q));
    }
    for (ur_event_handle_t e : events) EXPECT_SUCCESS(urEventRelease(e));
    for (void *p : allocations) EXPECT_SUCCESS(urUSMFree(context, p));
    conf::ContextTest::TearDown();
  }
  bool has_out_of_order() const {
    return conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  }
  // A queue released in TearDown; out of order only where the device has it.
  ur_queue_handle_t queue(bool out_of_order, ur_context_handle_t c = nullptr) {
    ur_queue_handle_t q = nullptr;
    ur_queue_flags_t flags = out_of_order && has_out_of_order() ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0;
    EXPECT_SUCCESS(conf::make_queue(c ? c : context, device(), flags, &q));
    if (q) queues.push_back(q);
    return q;
  }
  // Device memory (else shared) freed in TearDown; null where USM is missing.
  void *memory(size_t bytes) {
    ur_usm_type_t kind = conf::usm_supported(device(), UR_USM_TYPE_DEVICE) ? UR_USM_TYPE_DEVICE : UR_USM_TYPE_SHARED;
    void *p = nullptr;
    if (conf::usm_alloc(context, device(), kind, bytes, &p) != UR_RESULT_SUCCESS) return nullptr;
    allocations.push_back(p);
    return p;
  }
  ur_event_handle_t keep(ur_event_handle_t e) {
    if (e) events.push_back(e);
    return e;
  }
  // A gate of context `c` (the fixture's by default); skips off OpenCL.
  void make_gate(Gate &g, ur_context_handle_t c = nullptr) {
    ASSERT_TRUE(ClUserEvents::get().ok()) << "no clCreateUserEvent in libOpenCL.so.1";
    ur_native_handle_t native_context = 0;
    ASSERT_SUCCESS(urContextGetNativeHandle(c ? c : context, &native_context));
    int32_t err = 0;
    g.native = ClUserEvents::get().create(reinterpret_cast<void *>(native_context), &err);
    ASSERT_NE(nullptr, g.native) << "clCreateUserEvent: " << err;
    ur_event_native_properties_t owned{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, true};
    ASSERT_SUCCESS(urEventCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(g.native), c ? c : context,
                                                 &owned, &g.event));
  }
  bool opencl() const { return backend() == UR_BACKEND_OPENCL; }
  std::vector<uint32_t> read(ur_queue_handle_t q, const void *p, size_t n) {
    std::vector<uint32_t> out(n);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(q, true, out.data(), p, n * 4, 0, nullptr, nullptr));
    return out;
  }
  static ur_result_t fill(ur_queue_handle_t q, void *p, size_t n, uint32_t value, uint32_t waits,
                          const ur_event_handle_t *list, ur_event_handle_t *out) {
    return urEnqueueUSMFill(q, p, sizeof value, &value, n * 4, waits, list, out);
  }
};

#define SKIP_UNLESS_OPENCL()                                                                                           \
  do {                                                                                                                 \
    if (!opencl()) GTEST_SKIP() << "the gate is an OpenCL user event; " << found().label() << " is not OpenCL";        \
    if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE) && !conf::usm_supported(device(), UR_USM_TYPE_SHARED))      \
      GTEST_SKIP() << found().label() << " has no device or shared USM";                                               \
  } while (0)

// Every kind of wait on gated work returns once another thread opens the gate: the
// user event itself, two queues' commands, both queues' finishes, a blocking copy.
TEST_P(urOpenclWaitsTest, WaitsReturnWhenAnotherThreadOpensTheGate) {
  SKIP_UNLESS_OPENCL();
  Gate gate;
  ASSERT_NO_FATAL_FAILURE(make_gate(gate));
  const size_t n = 1024;
  ur_queue_handle_t in = queue(false), ooo = queue(true);
  void *a = memory(n * 4), *b = memory(n * 4);
  ASSERT_TRUE(in && ooo && a && b);
  ur_event_handle_t fa = nullptr, fb = nullptr;
  ASSERT_SUCCESS(fill(in, a, n, 5, 1, &gate.event, &fa));
  keep(fa);
  ASSERT_SUCCESS(fill(ooo, b, n, 6, 1, &gate.event, &fb));
  keep(fb);
  EXPECT_NE(UR_EVENT_STATUS_COMPLETE, conf::event_status(fa)) << "a fill completed before its gate opened";
  EXPECT_NE(UR_EVENT_STATUS_COMPLETE, conf::event_status(fb)) << "a fill completed before its gate opened";

  std::atomic<int> started{0};
  ur_result_t r_gate = UR_RESULT_ERROR_UNKNOWN, r_both = r_gate, r_fin_in = r_gate, r_fin_ooo = r_gate, r_copy = r_gate;
  std::vector<uint32_t> copied(n, 0);
  std::vector<std::thread> ts;
  ts.push_back(start(started, [&] { r_gate = urEventWait(1, &gate.event); }));
  ts.push_back(start(started, [&] {
    ur_event_handle_t both[] = {fa, fb};
    r_both = urEventWait(2, both);
  }));
  ts.push_back(start(started, [&] { r_fin_in = urQueueFinish(in); }));
  ts.push_back(start(started, [&] { r_fin_ooo = urQueueFinish(ooo); }));
  // Blocking, on the out-of-order queue, after the in-order queue's fill.
  ts.push_back(
      start(started, [&] { r_copy = urEnqueueUSMMemcpy(ooo, true, copied.data(), a, n * 4, 1, &fa, nullptr); }));
  let_waiters_block(started, int(ts.size()));
  gate.open();
  for (std::thread &t : ts) t.join();
  EXPECT_SUCCESS(r_gate);
  EXPECT_SUCCESS(r_both);
  EXPECT_SUCCESS(r_fin_in);
  EXPECT_SUCCESS(r_fin_ooo);
  EXPECT_SUCCESS(r_copy);
  EXPECT_EQ(std::vector<uint32_t>(n, 5), copied);
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(fa));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(fb));
  EXPECT_EQ(std::vector<uint32_t>(n, 6), read(in, b, n));
}

// A gate that ends in error: waiting for it reports the error (as clWaitForEvents
// does), and the queues behind it can still be finished.
TEST_P(urOpenclWaitsTest, FailedGateEndsItsWaitInError) {
  SKIP_UNLESS_OPENCL();
  Gate gate;
  ASSERT_NO_FATAL_FAILURE(make_gate(gate));
  ur_queue_handle_t in = queue(false), ooo = queue(true);
  void *a = memory(4096);
  ASSERT_TRUE(in && ooo && a);
  ur_event_handle_t fa = nullptr, fb = nullptr;
  ASSERT_SUCCESS(fill(in, a, 1024, 1, 1, &gate.event, &fa));
  keep(fa);
  ASSERT_SUCCESS(fill(ooo, a, 1024, 2, 1, &gate.event, &fb));
  keep(fb);
  std::atomic<int> started{0};
  ur_result_t r_gate = UR_RESULT_ERROR_UNKNOWN, r_dependents = UR_RESULT_ERROR_UNKNOWN;
  std::thread waiter = start(started, [&] { r_gate = urEventWait(1, &gate.event); });
  std::thread dependents = start(started, [&] {
    ur_event_handle_t both[] = {fa, fb};
    r_dependents = urEventWait(2, both);
  });
  let_waiters_block(started, 2);
  gate.fail();
  waiter.join();
  dependents.join();
  EXPECT_EQ(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS, r_gate);
  EXPECT_EQ(UR_EVENT_STATUS_ERROR, conf::event_status(gate.event));
  // Commands after a failed dependency are final once the wait returns, whatever they
  // ended in; the wait reports whether one failed.
  for (ur_event_handle_t e : {fa, fb}) {
    ur_event_status_t s = conf::event_status(e);
    EXPECT_TRUE(s == UR_EVENT_STATUS_COMPLETE || s == UR_EVENT_STATUS_ERROR) << "status " << s;
    if (s == UR_EVENT_STATUS_ERROR) {
      EXPECT_EQ(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS, r_dependents);
    }
  }
  EXPECT_SUCCESS(urQueueFinish(in));
  EXPECT_SUCCESS(urQueueFinish(ooo));
}

// One wait over events of two contexts, each held by its own gate, opened in turn by
// another thread.
TEST_P(urOpenclWaitsTest, OneWaitOverTwoContexts) {
  SKIP_UNLESS_OPENCL();
  ur_context_handle_t other = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other));
  {
    Gate g1, g2;
    ASSERT_NO_FATAL_FAILURE(make_gate(g1));
    ASSERT_NO_FATAL_FAILURE(make_gate(g2, other));
    ur_queue_handle_t q1 = queue(true), q2 = queue(false, other);
    ASSERT_TRUE(q1 && q2);
    ur_event_handle_t e1 = nullptr, e2 = nullptr;
    ASSERT_SUCCESS(urEnqueueEventsWait(q1, 1, &g1.event, &e1));
    keep(e1);
    ASSERT_SUCCESS(urEnqueueEventsWait(q2, 1, &g2.event, &e2));
    keep(e2);
    std::atomic<int> started{0};
    ur_result_t r = UR_RESULT_ERROR_UNKNOWN;
    std::thread waiter = start(started, [&] {
      ur_event_handle_t both[] = {e2, e1};
      r = urEventWait(2, both);
    });
    let_waiters_block(started, 1);
    g2.open();
    std::this_thread::yield();
    g1.open();
    waiter.join();
    EXPECT_SUCCESS(r);
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e1));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e2));
    // Release the other context's queue and event before the context.
    for (ur_queue_handle_t q : {q2}) {
      EXPECT_SUCCESS(urQueueRelease(q));
      queues.erase(std::find(queues.begin(), queues.end(), q));
    }
    EXPECT_SUCCESS(urEventRelease(e2));
    events.erase(std::find(events.begin(), events.end(), e2));
  }
  EXPECT_SUCCESS(urContextRelease(other));
}

// The user releases a busy queue on one thread (its last release may wait for it)
// while another waits for its gated command; the events outlive the queue's handle.
TEST_P(urOpenclWaitsTest, WaitOnTheEventOfAQueueReleasedMeanwhile) {
  SKIP_UNLESS_OPENCL();
  for (bool ooo : {false, true}) {
    Gate gate;
    ASSERT_NO_FATAL_FAILURE(make_gate(gate));
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(conf::make_queue(context, device(),
                                    ooo && has_out_of_order() ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &q));
    void *a = memory(4096);
    ASSERT_TRUE(a);
    ur_event_handle_t e = nullptr, after = nullptr;
    ASSERT_SUCCESS(fill(q, a, 1024, 9, 1, &gate.event, &e));
    keep(e);
    ASSERT_SUCCESS(urEnqueueEventsWait(q, 1, &e, &after));
    keep(after);
    std::atomic<int> started{0};
    ur_result_t r_release = UR_RESULT_ERROR_UNKNOWN, r_wait = UR_RESULT_ERROR_UNKNOWN;
    std::thread releaser = start(started, [&] { r_release = urQueueRelease(q); });
    std::thread waiter = start(started, [&] { r_wait = urEventWait(1, &after); });
    let_waiters_block(started, 2);
    gate.open();
    releaser.join();
    waiter.join();
    EXPECT_SUCCESS(r_release);
    EXPECT_SUCCESS(r_wait);
    EXPECT_SUCCESS(urEventWait(1, &e));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e));
    ur_queue_handle_t of = nullptr;
    EXPECT_SUCCESS(urEventGetInfo(e, UR_EVENT_INFO_COMMAND_QUEUE, sizeof of, &of, nullptr));
  }
}

// urQueueFinish on one thread while others keep enqueueing to the same queues: every
// command enqueued before the finish began is complete when it returns. Each round
// fills memory of its own: the rounds of one thread are not ordered with each other.
TEST_P(urOpenclWaitsTest, FinishCoversWhatWasEnqueuedBeforeItWhileOthersEnqueue) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE) && !conf::usm_supported(device(), UR_USM_TYPE_SHARED))
    GTEST_SKIP() << found().label() << " has no device or shared USM";
  ur_queue_handle_t shared[] = {queue(false), queue(true)};
  ASSERT_TRUE(shared[0] && shared[1]);
  constexpr int kEnqueuers = 3, kRounds = 150;
  std::vector<void *> mem;
  for (int t = 0; t < kEnqueuers; ++t) mem.push_back(memory(kRounds * 64 * 4));
  for (void *p : mem) ASSERT_TRUE(p);
  std::mutex mu;
  std::vector<ur_event_handle_t> published[2]; // per queue, retained for the finisher
  std::atomic<int> running{kEnqueuers};
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kEnqueuers; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < kRounds && !failures; ++r) {
        int which = (t + r) % 2;
        ur_event_handle_t e = nullptr;
        if (fill(shared[which], static_cast<uint32_t *>(mem[t]) + r * 64, 64, uint32_t(r), 0, nullptr, &e) !=
            UR_RESULT_SUCCESS) {
          ++failures;
          break;
        }
        std::lock_guard<std::mutex> lock(mu);
        published[which].push_back(e);
      }
      running.fetch_sub(1);
    });
  int finishes = 0;
  while (running.load() > 0 || finishes < 4) {
    for (int which = 0; which < 2; ++which) {
      std::vector<ur_event_handle_t> before;
      {
        std::lock_guard<std::mutex> lock(mu);
        before.swap(published[which]);
      }
      ASSERT_SUCCESS(urQueueFinish(shared[which]));
      ++finishes;
      for (ur_event_handle_t e : before) {
        EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e)) << "enqueued before urQueueFinish began";
        urEventRelease(e);
      }
    }
  }
  for (std::thread &t : ts) t.join();
  EXPECT_EQ(0, failures.load());
  for (auto &list : published)
    for (ur_event_handle_t e : list) urEventRelease(e);
}

// A host task waits for gated work of another queue while another thread frees plain
// memory (a blocking urUSMFree waits for the context's queues) and a third opens the gate.
TEST_P(urOpenclWaitsTest, HostTaskAndBlockingFreeWaitForTheSameGate) {
  SKIP_UNLESS_OPENCL();
  Gate gate;
  ASSERT_NO_FATAL_FAILURE(make_gate(gate));
  ur_queue_handle_t q1 = queue(true), q2 = queue(false);
  void *a = memory(4096);
  ASSERT_TRUE(q1 && q2 && a);
  void *loose = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &loose));
  ur_event_handle_t gated = nullptr;
  ASSERT_SUCCESS(fill(q2, a, 1024, 3, 1, &gate.event, &gated));
  keep(gated);
  std::atomic<int> ran{0};
  ur_event_handle_t task = nullptr;
  ur_result_t r = urEnqueueHostTaskExp(
      q1, [](void *p) { static_cast<std::atomic<int> *>(p)->fetch_add(1); }, &ran, nullptr, 1, &gated, &task);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "no urEnqueueHostTaskExp on " << found().label();
  ASSERT_SUCCESS(r);
  keep(task);
  std::atomic<int> started{0};
  ur_result_t r_free = UR_RESULT_ERROR_UNKNOWN, r_task = UR_RESULT_ERROR_UNKNOWN;
  std::thread freer = start(started, [&] { r_free = urUSMFree(context, loose); });
  std::thread waiter = start(started, [&] { r_task = urEventWait(1, &task); });
  let_waiters_block(started, 2);
  gate.open();
  freer.join();
  waiter.join();
  EXPECT_SUCCESS(r_free);
  EXPECT_SUCCESS(r_task);
  EXPECT_EQ(1, ran.load());
  EXPECT_EQ(std::vector<uint32_t>(1024, 3), read(q1, a, 1024));
}

// One thread: a short-lived queue's command is waited for (its event, the queue's
// finish, or the queue's release), then the queue and the event are released at once,
// many times. On Intel's CPU runtime, where the adapter polls the event's status, the
// runtime's worker can still be finishing the command when the adapter drops its
// references; had the worker then held the last one, it would destroy the out-of-order
// queue from inside that command and wait for the command itself, and every later
// command would hang (it did, in 6 of 6 runs, until the adapter's release_queue).
TEST_P(urOpenclWaitsTest, ReleaseAQueueRightAfterWaitingForItsWork) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE) && !conf::usm_supported(device(), UR_USM_TYPE_SHARED))
    GTEST_SKIP() << found().label() << " has no device or shared USM";
  const size_t n = 256;
  void *a = memory(n * 4);
  ASSERT_TRUE(a);
  const int rounds = 200;
  for (int r = 0; r < rounds; ++r) {
    const bool ooo = r % 4 != 3;
    ur_queue_handle_t q = nullptr;
    ASSERT_SUCCESS(conf::make_queue(context, device(),
                                    ooo && has_out_of_order() ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &q));
    ur_event_handle_t e = nullptr;
    ASSERT_SUCCESS(fill(q, a, n, uint32_t(r), 0, nullptr, &e));
    switch (r % 3) {
    case 0: ASSERT_SUCCESS(urEventWait(1, &e)); break;
    case 1: ASSERT_SUCCESS(urQueueFinish(q)); break;
    default: break; // OpenCL's release finishes the queue; UR does not promise that, so the event is waited for too
    }
    if (r % 2) {
      if (r % 3 == 2) {
        ASSERT_SUCCESS(urEventWait(1, &e));
      }
      ASSERT_SUCCESS(urEventRelease(e));
      ASSERT_SUCCESS(urQueueRelease(q));
    } else {
      ASSERT_SUCCESS(urQueueRelease(q));
      if (r % 3 == 2) { // the event keeps the queue
        ASSERT_SUCCESS(urEventWait(1, &e));
      }
      ASSERT_SUCCESS(urEventRelease(e));
    }
  }
  ur_queue_handle_t q = queue(false);
  ASSERT_TRUE(q);
  EXPECT_EQ(std::vector<uint32_t>(n, uint32_t(rounds - 1)), read(q, a, n));
}

// Device memory from a zero-initialising pool, many times on one thread: the OpenCL
// adapter zeroes each block through a queue of its own that it finishes and releases
// at once (the same release right after a wait as above).
TEST_P(urOpenclWaitsTest, ZeroInitialisingPoolAllocationsOneAfterAnother) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE)) GTEST_SKIP() << found().label() << " has no device USM";
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK};
  ur_usm_pool_handle_t pool = nullptr;
  ur_result_t made = urUSMPoolCreate(context, &desc, &pool);
  if (made == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "no USM pools on " << found().label();
  ASSERT_SUCCESS(made);
  ur_queue_handle_t q = queue(false);
  ASSERT_TRUE(q);
  const size_t n = 256;
  for (int r = 0; r < 200 && !HasFailure(); ++r) {
    void *p = nullptr;
    ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, pool, n * 4 * (1 + r % 4), &p));
    EXPECT_EQ(std::vector<uint32_t>(n, 0), read(q, p, n)) << "round " << r;
    ASSERT_SUCCESS(fill(q, p, n, 0xabcd0000u + uint32_t(r), 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(q)); // a pool block's free does not wait
    ASSERT_SUCCESS(urUSMFree(context, p));
  }
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
}

// While a blocking urUSMFree waits for the context's queues (gated work on one of
// them), the thread that will open the gate first touches the context's queue list:
// makes (and drops) a queue, or wraps a native event of a queue of the context. The
// free must not hold what those need while it waits. (Both hung, on PoCL and Intel's
// runtime, while the OpenCL adapter's free held the context's queue list locked as it
// waited.)
class urOpenclFreeWaitTest : public urOpenclWaitsTest {
protected:
  // Gated work on a queue, a blocking free on one thread, `touch` then the gate's
  // opening on another; `touch`'s result.
  template <class Touch> ur_result_t free_while(Touch touch) {
    ur_queue_handle_t q = queue(false);
    void *a = memory(4096);
    EXPECT_TRUE(q && a);
    if (!q || !a) return UR_RESULT_ERROR_UNKNOWN;
    Gate gate;
    make_gate(gate);
    if (!gate.event) return UR_RESULT_ERROR_UNKNOWN;
    ur_event_handle_t gated = nullptr;
    EXPECT_SUCCESS(fill(q, a, 1024, 2, 1, &gate.event, &gated));
    keep(gated);
    void *loose = nullptr;
    EXPECT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &loose));
    std::atomic<int> started{0};
    ur_result_t r_free = UR_RESULT_ERROR_UNKNOWN, r_touch = UR_RESULT_ERROR_UNKNOWN;
    std::thread freer = start(started, [&] { r_free = urUSMFree(context, loose); });
    std::thread opener([&] {
      let_waiters_block(started, 1);
      r_touch = touch();
      gate.open();
    });
    opener.join();
    freer.join();
    EXPECT_SUCCESS(r_free);
    return r_touch;
  }
};

TEST_P(urOpenclFreeWaitTest, GateOpenerCreatesAQueueWhileAFreeWaits) {
  SKIP_UNLESS_OPENCL();
  EXPECT_SUCCESS(free_while([&] {
    ur_queue_handle_t extra = nullptr;
    ur_result_t r = conf::make_queue(context, device(), 0, &extra);
    if (extra) urQueueRelease(extra);
    return r;
  }));
}

TEST_P(urOpenclFreeWaitTest, GateOpenerWrapsANativeEventWhileAFreeWaits) {
  SKIP_UNLESS_OPENCL();
  ur_queue_handle_t q = queue(true);
  void *b = memory(4096);
  ASSERT_TRUE(q && b);
  ur_event_handle_t done = nullptr; // a finished command's event, for its native handle
  ASSERT_SUCCESS(fill(q, b, 1024, 1, 0, nullptr, &done));
  keep(done);
  ASSERT_SUCCESS(urEventWait(1, &done));
  ur_native_handle_t native = 0;
  ASSERT_SUCCESS(urEventGetNativeHandle(done, &native));
  EXPECT_SUCCESS(free_while([&] {
    ur_event_handle_t wrapped = nullptr;
    ur_event_native_properties_t props{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, false};
    ur_result_t r = urEventCreateWithNativeHandle(native, context, &props, &wrapped);
    if (wrapped) urEventRelease(wrapped);
    return r;
  }));
}

// A blocking free and a queue's finish skip a queue with nothing enqueued since its last
// finish, but only while the adapter sees every command: once the user has the native
// queue, work enqueued there directly is waited for too.
TEST_P(urOpenclWaitsTest, BlockingFreeAndFinishWaitForWorkOnTheNativeQueue) {
  SKIP_UNLESS_OPENCL();
  Gate gate;
  ASSERT_NO_FATAL_FAILURE(make_gate(gate));
  ur_queue_handle_t q = queue(false);
  void *a = memory(4096);
  ASSERT_TRUE(q && a);
  ASSERT_SUCCESS(fill(q, a, 1024, 1, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(q)); // nothing the adapter enqueued is left
  ur_native_handle_t native = 0;
  ASSERT_SUCCESS(urQueueGetNativeHandle(q, nullptr, &native));
  void *gated = nullptr;
  ASSERT_EQ(0, ClUserEvents::get().marker(reinterpret_cast<void *>(native), 1, &gate.native, &gated));
  void *loose = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, 4096, &loose));
  std::atomic<int> started{0};
  std::atomic<bool> freed{false}, finished{false};
  ur_result_t r_free = UR_RESULT_ERROR_UNKNOWN, r_finish = UR_RESULT_ERROR_UNKNOWN;
  std::thread freer = start(started, [&] {
    r_free = urUSMFree(context, loose);
    freed = true;
  });
  std::thread finisher = start(started, [&] {
    r_finish = urQueueFinish(q);
    finished = true;
  });
  let_waiters_block(started, 2);
  // Neither can have returned: the marker waits for the gate (a correct adapter never
  // fails this, however slow the machine).
  EXPECT_FALSE(freed.load()) << "urUSMFree returned while the native queue's marker was pending";
  EXPECT_FALSE(finished.load()) << "urQueueFinish returned while the native queue's marker was pending";
  gate.open();
  freer.join();
  finisher.join();
  EXPECT_SUCCESS(r_free);
  EXPECT_SUCCESS(r_finish);
  ClUserEvents::get().release(gated);
}

// Stream-ordered allocs and frees on short-lived queues (released busy), blocking frees
// of plain memory, and native events wrapped again, all at once on one context.
TEST_P(urOpenclWaitsTest, StreamOrderedWorkRacesBlockingFreesAndQueueReleases) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE)) GTEST_SKIP() << found().label() << " has no device USM";
  ur_bool_t async = 0;
  if (conf::info(device(), UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, async) != UR_RESULT_SUCCESS || !async)
    GTEST_SKIP() << found().label() << " has no stream-ordered allocations";
  ur_queue_handle_t shared = queue(true);
  ASSERT_TRUE(shared);
  constexpr int kRounds = 60;
  constexpr size_t n = 256;
  std::atomic<int> failures{0};
  auto check = [&](ur_result_t r, const char *what, int t, int round) {
    if (r == UR_RESULT_SUCCESS) return true;
    ADD_FAILURE() << what << " gave " << urinfo::result_name(r) << " (thread " << t << ", round " << round << ")";
    ++failures;
    return false;
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t) // stream-ordered work on a fresh queue per round, released busy
    ts.emplace_back([&, t] {
      for (int r = 0; r < kRounds && !failures; ++r) {
        ur_queue_handle_t q = nullptr;
        if (!check(conf::make_queue(context, device(),
                                    (t + r) % 2 && has_out_of_order() ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0,
                                    &q),
                   "urQueueCreate", t, r))
          return;
        void *p = nullptr;
        ur_event_handle_t got = nullptr, filled = nullptr, copied = nullptr;
        bool ok = check(urEnqueueUSMDeviceAllocExp(q, nullptr, n * 4, nullptr, 0, nullptr, &p, &got),
                        "urEnqueueUSMDeviceAllocExp", t, r) &&
                  check(fill(q, p, n, uint32_t(r), 1, &got, &filled), "urEnqueueUSMFill", t, r);
        std::vector<uint32_t> out(n, ~0u);
        ok = ok && check(urEnqueueUSMMemcpy(q, r % 3 == 0, out.data(), p, n * 4, 1, &filled, &copied),
                         "urEnqueueUSMMemcpy", t, r);
        // After the copy (an out-of-order queue orders only by events).
        ur_event_handle_t last = copied ? copied : filled ? filled : got;
        if (p) check(urEnqueueUSMFreeExp(q, nullptr, p, last ? 1 : 0, &last, nullptr), "urEnqueueUSMFreeExp", t, r);
        if (r % 3 != 0 && ok) check(urQueueFinish(q), "urQueueFinish", t, r);
        check(urQueueRelease(q), "urQueueRelease", t, r);
        if (ok && out != std::vector<uint32_t>(n, uint32_t(r))) {
          ADD_FAILURE() << "thread " << t << " round " << r << " read back " << out[0];
          ++failures;
        }
        for (ur_event_handle_t e : {got, filled, copied})
          if (e) urEventRelease(e);
      }
    });
  ts.emplace_back([&] { // plain memory, used on the shared queue, freed (blocking) at once
    for (int r = 0; r < kRounds && !failures; ++r) {
      void *p = nullptr;
      if (!check(urUSMDeviceAlloc(context, device(), nullptr, nullptr, n * 4, &p), "urUSMDeviceAlloc", 2, r)) return;
      check(fill(shared, p, n, 7, 0, nullptr, nullptr), "urEnqueueUSMFill", 2, r);
      check(urUSMFree(context, p), "urUSMFree", 2, r);
    }
  });
  if (opencl())
    ts.emplace_back([&] { // native events of the shared queue wrapped again and waited on
      for (int r = 0; r < kRounds && !failures; ++r) {
        ur_event_handle_t e = nullptr, wrapped = nullptr;
        if (!check(urEnqueueEventsWait(shared, 0, nullptr, &e), "urEnqueueEventsWait", 3, r)) return;
        ur_native_handle_t native = 0;
        ur_event_native_properties_t props{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, false};
        if (check(urEventGetNativeHandle(e, &native), "urEventGetNativeHandle", 3, r) &&
            check(urEventCreateWithNativeHandle(native, context, &props, &wrapped), "urEventCreateWithNativeHandle", 3,
                  r)) {
          check(urEventWait(1, &wrapped), "urEventWait", 3, r);
          urEventRelease(wrapped);
        }
        urEventRelease(e);
      }
    });
  for (std::thread &t : ts) t.join();
  EXPECT_EQ(0, failures.load());
}

CONF_INSTANTIATE_DEVICE_SUITE(urOpenclWaitsTest);
CONF_INSTANTIATE_DEVICE_SUITE(urOpenclFreeWaitTest);

} // namespace
