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
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
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
  // The fixture's kind of memory: device, else shared.
  ur_usm_type_t usm_kind() const {
    return conf::usm_supported(device(), UR_USM_TYPE_DEVICE) ? UR_USM_TYPE_DEVICE : UR_USM_TYPE_SHARED;
  }
  // Memory of usm_kind() freed in TearDown; null where USM is missing.
  void *memory(size_t bytes) {
    void *p = nullptr;
    if (conf::usm_alloc(context, device(), usm_kind(), bytes, &p) != UR_RESULT_SUCCESS) return nullptr;
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

// ---- A finish or blocking free skips a queue with nothing enqueued since its last
// finish (docs/opencl.md, "skipped there"): whatever entered the queue before the call,
// however it got there, still holds the call back.

// A call on a thread of its own; `done` once it returned. Declare it before the gates it
// waits behind: they open as they go, then this joins.
struct Pending {
  std::atomic<bool> done{false};
  ur_result_t result = UR_RESULT_ERROR_UNKNOWN;
  std::thread thread;
  template <class F> void start(std::atomic<int> &started, F f) {
    thread = std::thread([this, &started, f] {
      started.fetch_add(1);
      result = f();
      done = true;
    });
  }
  ur_result_t join() {
    if (thread.joinable()) thread.join();
    return result;
  }
  ~Pending() { join(); }
};

bool ended(ur_event_handle_t e) {
  const ur_event_status_t s = conf::event_status(e);
  return s == UR_EVENT_STATUS_COMPLETE || s == UR_EVENT_STATUS_ERROR;
}

class urOpenclFinishSkipTest : public urOpenclWaitsTest {
protected:
  // Memory of the fixture's kind that the caller frees.
  void *loose_memory() {
    void *p = nullptr;
    EXPECT_SUCCESS(conf::usm_alloc(context, device(), usm_kind(), 4096, &p));
    return p;
  }
  // A queue whose every command so far is finished: the one a finish may skip.
  ur_queue_handle_t finished_queue(bool out_of_order, void *scratch) {
    ur_queue_handle_t q = queue(out_of_order);
    if (!q) return nullptr;
    EXPECT_SUCCESS(fill(q, scratch, 16, 1, 0, nullptr, nullptr));
    EXPECT_SUCCESS(urQueueFinish(q));
    EXPECT_SUCCESS(urQueueFinish(q)); // the second one may cost nothing
    return q;
  }
  // Once `what` left work behind `gate` on `q`, a finish of `q` and (OpenCL, whose
  // blocking free finishes every queue of the context) a blocking free of other memory,
  // each on a thread of its own, have not returned while the gate is closed (a correct
  // adapter never fails this, however slow the machine); both succeed once `release`
  // (by default: opening the gate) lets the work go.
  template <class Release> void expect_held_back(ur_queue_handle_t q, const std::string &what, Release release) {
    void *loose = opencl() ? loose_memory() : nullptr;
    std::atomic<int> started{0};
    Pending finish, freed;
    finish.start(started, [q] { return urQueueFinish(q); });
    if (loose) freed.start(started, [this, loose] { return urUSMFree(context, loose); });
    let_waiters_block(started, loose ? 2 : 1);
    EXPECT_FALSE(finish.done.load()) << "urQueueFinish returned while " << what << " was held back";
    EXPECT_FALSE(freed.done.load()) << "urUSMFree returned while " << what << " was held back";
    release();
    EXPECT_SUCCESS(finish.join()) << what;
    if (loose) {
      EXPECT_SUCCESS(freed.join()) << what;
    }
  }
  void expect_held_back(ur_queue_handle_t q, Gate &gate, const std::string &what) {
    expect_held_back(q, what, [&] { gate.open(); });
  }
  bool async_alloc() const {
    ur_bool_t yes = 0;
    return conf::usm_supported(device(), UR_USM_TYPE_DEVICE) &&
           conf::info(device(), UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, yes) == UR_RESULT_SUCCESS && yes;
  }
};

// Each kind of command the adapter can enqueue, held back by a gate on a queue whose
// earlier work a finish already covered, enqueued by this thread or by one it joined.
TEST_P(urOpenclFinishSkipTest, EveryKindOfGatedCommandHoldsBackFinishAndFree) {
  SKIP_UNLESS_OPENCL();
  const size_t n = 1024;
  void *a = memory(n * 4), *b = memory(n * 4);
  ASSERT_TRUE(a && b);
  // Enqueues work behind `g` on `q`; `after` runs once the gate is open. UNSUPPORTED_FEATURE:
  // the device lacks it.
  using Kind = std::function<ur_result_t(ur_queue_handle_t q, Gate & g, std::function<void()> & after)>;
  const uint32_t v = 7;
  std::vector<std::pair<const char *, Kind>> kinds = {
      {"a USM fill with an event",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         ur_event_handle_t e = nullptr;
         ur_result_t r = fill(q, a, n, 1, 1, &g.event, &e);
         keep(e);
         return r;
       }},
      {"a USM fill",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) { return fill(q, a, n, 1, 1, &g.event, nullptr); }},
      {"a USM copy",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         return urEnqueueUSMMemcpy(q, false, b, a, n * 4, 1, &g.event, nullptr);
       }},
      {"urEnqueueEventsWait", [&](ur_queue_handle_t q, Gate &g,
                                  std::function<void()> &) { return urEnqueueEventsWait(q, 1, &g.event, nullptr); }},
      {"a barrier", [&](ur_queue_handle_t q, Gate &g,
                        std::function<void()> &) { return urEnqueueEventsWaitWithBarrier(q, 1, &g.event, nullptr); }},
      {"a buffer fill",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &after) {
         ur_mem_handle_t buf = nullptr;
         ur_result_t r = urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 4096, nullptr, &buf);
         if (r != UR_RESULT_SUCCESS) return r;
         after = [buf] { EXPECT_SUCCESS(urMemRelease(buf)); };
         return urEnqueueMemBufferFill(q, buf, &v, 4, 0, 4096, 1, &g.event, nullptr);
       }},
      {"a stream-ordered alloc",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &after) {
         if (!async_alloc()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
         void *p = nullptr;
         ur_result_t r = urEnqueueUSMDeviceAllocExp(q, nullptr, 4096, nullptr, 1, &g.event, &p, nullptr);
         if (p) after = [q, p] { EXPECT_SUCCESS(urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr)); };
         return r;
       }},
      {"a stream-ordered free",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         if (!async_alloc()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
         void *p = nullptr;
         ur_result_t r = urEnqueueUSMDeviceAllocExp(q, nullptr, 4096, nullptr, 0, nullptr, &p, nullptr);
         if (r != UR_RESULT_SUCCESS) return r;
         return urEnqueueUSMFreeExp(q, nullptr, p, 1, &g.event, nullptr);
       }},
      {"a stream-ordered free sharing a gated fill's event",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         if (!async_alloc()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
         void *p = nullptr;
         ur_result_t r = urEnqueueUSMDeviceAllocExp(q, nullptr, 4096, nullptr, 0, nullptr, &p, nullptr);
         if (r == UR_RESULT_SUCCESS) r = urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr); // starts tracking
         if (r == UR_RESULT_SUCCESS) r = urEnqueueUSMDeviceAllocExp(q, nullptr, 4096, nullptr, 0, nullptr, &p, nullptr);
         if (r == UR_RESULT_SUCCESS) r = fill(q, p, 1024, 3, 1, &g.event, nullptr);
         if (r == UR_RESULT_SUCCESS) r = urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr);
         return r;
       }},
      {"a host task",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         return urEnqueueHostTaskExp(
             q, [](void *) {}, nullptr, nullptr, 1, &g.event, nullptr);
       }},
      {"a command buffer",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &after) {
         ur_bool_t yes = 0;
         if (conf::info(device(), UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP, yes) != UR_RESULT_SUCCESS || !yes)
           return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
         ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
         ur_exp_command_buffer_handle_t cb = nullptr;
         ur_result_t r = urCommandBufferCreateExp(context, device(), &desc, &cb);
         if (r != UR_RESULT_SUCCESS) return r;
         after = [cb] { EXPECT_SUCCESS(urCommandBufferReleaseExp(cb)); };
         r = urCommandBufferAppendUSMFillExp(cb, a, &v, 4, n * 4, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr);
         if (r == UR_RESULT_SUCCESS) r = urCommandBufferFinalizeExp(cb);
         if (r == UR_RESULT_SUCCESS) r = urEnqueueCommandBufferExp(q, cb, 1, &g.event, nullptr);
         return r;
       }},
      {"a captured graph",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &after) {
         ur_bool_t yes = 0;
         if (conf::info(device(), UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP, yes) != UR_RESULT_SUCCESS || !yes)
           return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
         ur_result_t r = urQueueBeginGraphCaptureExp(q);
         if (r != UR_RESULT_SUCCESS) return r;
         r = fill(q, a, n, 4, 0, nullptr, nullptr);
         ur_exp_graph_handle_t graph = nullptr;
         ur_result_t ended_capture = urQueueEndGraphCaptureExp(q, &graph);
         if (r == UR_RESULT_SUCCESS) r = ended_capture;
         ur_exp_executable_graph_handle_t exec = nullptr;
         if (r == UR_RESULT_SUCCESS) r = urGraphInstantiateGraphExp(graph, &exec);
         after = [graph, exec] {
           if (exec) {
             EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
           }
           if (graph) {
             EXPECT_SUCCESS(urGraphDestroyExp(graph));
           }
         };
         if (r == UR_RESULT_SUCCESS) r = urEnqueueGraphExp(q, exec, 1, &g.event, nullptr);
         return r;
       }},
      {"a native command's own work",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         // The function enqueues a gated marker on the native queue and keeps nothing.
         return urEnqueueNativeCommandExp(
             q,
             [](ur_queue_handle_t hQueue, void *gate) {
               ur_native_handle_t native = 0;
               void *marker = nullptr;
               if (urQueueGetNativeHandle(hQueue, nullptr, &native) == UR_RESULT_SUCCESS &&
                   ClUserEvents::get().marker(reinterpret_cast<void *>(native), 1, &gate, &marker) == 0)
                 ClUserEvents::get().release(marker);
             },
             g.native, 0, nullptr, nullptr, 0, nullptr, nullptr);
       }},
      {"a wait for another queue's gated fill",
       [&](ur_queue_handle_t q, Gate &g, std::function<void()> &) {
         ur_queue_handle_t other = queue(false);
         if (!other) return UR_RESULT_ERROR_UNKNOWN;
         ur_event_handle_t e = nullptr;
         ur_result_t r = fill(other, b, n, 5, 1, &g.event, &e);
         keep(e);
         if (r == UR_RESULT_SUCCESS) r = urEnqueueEventsWait(q, 1, &e, nullptr);
         return r;
       }},
  };
  int ran = 0;
  std::string lacked; // the kinds the device lacks, for the test's XML record
  for (auto &[name, enqueue] : kinds)
    for (bool ooo : {false, true})
      for (bool elsewhere : {false, true}) {
        ur_queue_handle_t q = finished_queue(ooo, a);
        ASSERT_TRUE(q);
        Gate g;
        ASSERT_NO_FATAL_FAILURE(make_gate(g));
        std::function<void()> after;
        ur_result_t r = UR_RESULT_ERROR_UNKNOWN;
        if (elsewhere)
          std::thread([&] { r = enqueue(q, g, after); }).join();
        else
          r = enqueue(q, g, after);
        const std::string what = std::string(name) + (ooo ? " (out-of-order queue" : " (in-order queue") +
                                 (elsewhere ? ", another thread)" : ")");
        if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE || r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) {
          g.open();
          if (after) after();
          if (!ooo && !elsewhere) lacked += std::string(lacked.empty() ? "" : "; ") + name;
          continue;
        }
        EXPECT_SUCCESS(r) << what;
        if (r == UR_RESULT_SUCCESS) expect_held_back(q, g, what);
        g.open();
        EXPECT_SUCCESS(urQueueFinish(q)) << what;
        if (after) after();
        EXPECT_SUCCESS(urQueueFinish(q)) << what;
        ++ran;
      }
  RecordProperty("kinds_lacked", lacked);
  EXPECT_GE(ran, 20) << "fewer kinds than the plain commands ran";
}

// A host task still running holds back its queue's finish and a blocking free, on every
// adapter with host tasks (the function itself is the gate).
TEST_P(urOpenclFinishSkipTest, RunningHostTaskHoldsBackFinishAndFree) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE) && !conf::usm_supported(device(), UR_USM_TYPE_SHARED))
    GTEST_SKIP() << found().label() << " has no device or shared USM";
  void *a = memory(4096);
  ASSERT_TRUE(a);
  for (bool ooo : {false, true}) {
    ur_queue_handle_t q = finished_queue(ooo, a);
    ASSERT_TRUE(q);
    std::atomic<bool> go{false}, entered{false};
    struct Flags {
      std::atomic<bool> *go, *entered;
    } flags{&go, &entered};
    ur_result_t r = urEnqueueHostTaskExp(
        q,
        [](void *p) {
          auto *f = static_cast<Flags *>(p);
          f->entered->store(true);
          while (!f->go->load()) std::this_thread::yield();
        },
        &flags, nullptr, 0, nullptr, nullptr);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "no urEnqueueHostTaskExp on " << found().label();
    ASSERT_SUCCESS(r);
    while (!entered.load()) std::this_thread::yield(); // it runs: only `go` ends it
    expect_held_back(q, ooo ? "a running host task (out-of-order queue)" : "a running host task (in-order queue)",
                     [&] { go = true; });
    go = true;
  }
}

// Work behind a gate that fails and work behind one still closed, on one queue: the
// failure ends neither the finish already waiting nor a later finish or free early.
// Intel's CPU runtime ends clFinish and every marker of an out-of-order queue once one
// of its commands failed, with other commands still pending, and can crash (SIGSEGV in
// OclEvent::AddDependentOnMulti) on a later command of that queue: its out-of-order
// case runs there only with ORDO_CONFORMANCE_RUN_KNOWN_FAILURES=1.
TEST_P(urOpenclFinishSkipTest, FailedGateDoesNotEndAFinishEarly) {
  SKIP_UNLESS_OPENCL();
  char name[256] = {};
  urPlatformGetInfo(platform(), UR_PLATFORM_INFO_NAME, sizeof name - 1, name, nullptr);
  const bool intel = std::string(name) == "Intel(R) OpenCL";
  for (bool ooo : {true, false}) {
    if (ooo && intel && !conf::run_known_failures()) { // see above
      std::printf("[ note ] out-of-order case left out on %s: the runtime ends a finish early after a failed "
                  "command and can crash on the queue's next command (docs/opencl.md)\n",
                  found().label().c_str());
      continue;
    }
    std::atomic<int> started{0};
    Pending first, second, freed;
    Gate bad, good;
    ASSERT_NO_FATAL_FAILURE(make_gate(bad));
    ASSERT_NO_FATAL_FAILURE(make_gate(good));
    void *a = memory(4096), *b = memory(4096), *loose = loose_memory();
    ur_queue_handle_t q = finished_queue(ooo, a);
    ASSERT_TRUE(q && a && b && loose);
    ur_event_handle_t fa = nullptr, fb = nullptr;
    ASSERT_SUCCESS(fill(q, a, 1024, 1, 1, &bad.event, &fa));
    keep(fa);
    ASSERT_SUCCESS(fill(q, b, 1024, 2, 1, &good.event, &fb));
    keep(fb);
    first.start(started, [q] { return urQueueFinish(q); });
    let_waiters_block(started, 1);
    bad.fail();
    urEventWait(1, &fa); // ends in error; the result says so
    let_waiters_block(started, 1);
    // `fb` may end with `fa` (in order); if it has not, nothing waiting for it may return.
    const char *queue_kind = ooo ? " (out-of-order queue)" : " (in-order queue)";
    bool first_done = first.done.load();
    EXPECT_FALSE(first_done && !ended(fb)) << "urQueueFinish returned while a gated fill was pending" << queue_kind;
    second.start(started, [q] { return urQueueFinish(q); });
    freed.start(started, [this, loose] { return urUSMFree(context, loose); });
    let_waiters_block(started, 3);
    bool second_done = second.done.load(), freed_done = freed.done.load();
    EXPECT_FALSE(second_done && !ended(fb))
        << "a later urQueueFinish returned while a gated fill was pending" << queue_kind;
    EXPECT_FALSE(freed_done && !ended(fb)) << "urUSMFree returned while a gated fill was pending" << queue_kind;
    good.open();
    first.join();
    second.join();
    if (freed.join() != UR_RESULT_SUCCESS) allocations.push_back(loose); // still the caller's
  }
}

// A finish that began before a gated command entered the queue, and returns first, does
// not stand for that command: a finish and a free that began after it still wait.
TEST_P(urOpenclFinishSkipTest, EarlierFinishDoesNotCoverLaterWork) {
  SKIP_UNLESS_OPENCL();
  for (bool ooo : {true, false}) {
    std::atomic<int> started{0};
    Pending early, late, freed, latest;
    Gate g1, g2;
    ASSERT_NO_FATAL_FAILURE(make_gate(g1));
    ASSERT_NO_FATAL_FAILURE(make_gate(g2));
    void *a = memory(4096), *b = memory(4096), *loose = loose_memory();
    ur_queue_handle_t q = finished_queue(ooo, a);
    ASSERT_TRUE(q && a && b && loose);
    ur_event_handle_t fa = nullptr;
    ASSERT_SUCCESS(fill(q, a, 1024, 1, 1, &g1.event, &fa));
    keep(fa);
    early.start(started, [q] { return urQueueFinish(q); });
    let_waiters_block(started, 1);
    ASSERT_SUCCESS(fill(q, b, 1024, 2, 1, &g2.event, nullptr));
    late.start(started, [q] { return urQueueFinish(q); });
    freed.start(started, [this, loose] { return urUSMFree(context, loose); });
    let_waiters_block(started, 3);
    g1.open();
    ASSERT_SUCCESS(urEventWait(1, &fa));
    let_waiters_block(started, 3); // the early finish may return now (or wait for g2 too)
    const char *queue_kind = ooo ? " (out-of-order queue)" : " (in-order queue)";
    EXPECT_FALSE(late.done.load()) << "urQueueFinish returned while a gated fill was pending" << queue_kind;
    EXPECT_FALSE(freed.done.load()) << "urUSMFree returned while a gated fill was pending" << queue_kind;
    latest.start(started, [q] { return urQueueFinish(q); });
    let_waiters_block(started, 4);
    EXPECT_FALSE(latest.done.load()) << "a finish after the early one returned while a gated fill was pending"
                                     << queue_kind;
    g2.open();
    EXPECT_SUCCESS(early.join());
    EXPECT_SUCCESS(late.join());
    EXPECT_SUCCESS(freed.join());
    EXPECT_SUCCESS(latest.join());
  }
}

// Rounds of: threads put gated work on their queues (shared ones, and one made and
// released busy each round), then other threads finish each queue and free memory; none
// of those returns before the round's gate opens.
TEST_P(urOpenclFinishSkipTest, ThreadsEnqueueGatedWorkWhileOthersFinishAndFree) {
  SKIP_UNLESS_OPENCL();
  constexpr int kShared = 3, kRounds = 12;
  std::vector<ur_queue_handle_t> qs;
  void *a = memory(kShared * 4096 + 4096);
  ASSERT_TRUE(a);
  for (int i = 0; i < kShared; ++i) qs.push_back(finished_queue(i % 2 == 1, a));
  for (ur_queue_handle_t q : qs) ASSERT_TRUE(q);
  for (int round = 0; round < kRounds && !HasFailure(); ++round) {
    std::atomic<int> started{0}, enqueued{0};
    std::vector<std::unique_ptr<Pending>> waits;
    std::vector<std::thread> enqueuers;
    Gate g;
    ASSERT_NO_FATAL_FAILURE(make_gate(g));
    for (int i = 0; i < kShared; ++i)
      enqueuers.emplace_back([&, i] {
        void *p = static_cast<char *>(a) + 4096 * i;
        EXPECT_SUCCESS(fill(qs[i], p, 1024, uint32_t(round), 1, &g.event, nullptr));
        enqueued.fetch_add(1);
      });
    ur_result_t r_release = UR_RESULT_ERROR_UNKNOWN;
    enqueuers.emplace_back([&] { // a queue of its own, released while its work waits
      ur_queue_handle_t q = nullptr;
      EXPECT_SUCCESS(conf::make_queue(context, device(), 0, &q));
      if (q) {
        EXPECT_SUCCESS(fill(q, static_cast<char *>(a) + 4096 * kShared, 1024, 9, 1, &g.event, nullptr));
      }
      enqueued.fetch_add(1);
      if (q) r_release = urQueueRelease(q);
    });
    while (enqueued.load() < kShared + 1) std::this_thread::yield();
    for (int i = 0; i < kShared; ++i) {
      waits.push_back(std::make_unique<Pending>());
      ur_queue_handle_t q = qs[i];
      waits.back()->start(started, [q] { return urQueueFinish(q); });
    }
    void *loose = loose_memory();
    if (loose) {
      waits.push_back(std::make_unique<Pending>());
      waits.back()->start(started, [this, loose] { return urUSMFree(context, loose); });
    }
    let_waiters_block(started, int(waits.size()));
    for (size_t i = 0; i < waits.size(); ++i)
      EXPECT_FALSE(waits[i]->done.load()) << (i < kShared ? "urQueueFinish of queue " : "urUSMFree ") << i
                                          << " returned before the gate opened (round " << round << ")";
    g.open();
    for (auto &w : waits) EXPECT_SUCCESS(w->join()) << "round " << round;
    for (std::thread &t : enqueuers) t.join();
    EXPECT_SUCCESS(r_release) << "round " << round;
  }
}

// Two UR queues over one cl_command_queue (one made from the other's native handle):
// gated work through either holds back the other's finish.
TEST_P(urOpenclFinishSkipTest, TwoQueuesOverOneNativeQueue) {
  SKIP_UNLESS_OPENCL();
  void *a = memory(4096);
  ASSERT_TRUE(a);
  for (bool through_made : {false, true}) {
    ur_queue_handle_t first = finished_queue(false, a);
    ASSERT_TRUE(first);
    ur_native_handle_t native = 0;
    ASSERT_SUCCESS(urQueueGetNativeHandle(first, nullptr, &native));
    ur_queue_handle_t made = nullptr;
    ur_queue_native_properties_t props{UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, nullptr, false};
    ASSERT_SUCCESS(urQueueCreateWithNativeHandle(native, context, device(), &props, &made));
    queues.push_back(made);
    ASSERT_SUCCESS(urQueueFinish(made));
    ASSERT_SUCCESS(urQueueFinish(first));
    Gate g;
    ASSERT_NO_FATAL_FAILURE(make_gate(g));
    ASSERT_SUCCESS(fill(through_made ? made : first, a, 1024, 3, 1, &g.event, nullptr));
    expect_held_back(through_made ? first : made, g,
                     through_made ? "a fill through the queue made from the native handle"
                                  : "a fill through the queue whose native handle was taken");
  }
}

// The user reaches a queue's cl_command_queue through one of its events (OpenCL's
// CL_EVENT_COMMAND_QUEUE) and enqueues gated work there: the queue's finish and a
// blocking free still wait for it.
TEST_P(urOpenclFinishSkipTest, WorkOnTheNativeQueueOfAnEventHoldsBackFinishAndFree) {
  SKIP_UNLESS_OPENCL();
  using GetEventInfo = int32_t (*)(void *, uint32_t, size_t, void *, size_t *);
  static const auto get_event_info =
      reinterpret_cast<GetEventInfo>(dlsym(dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL), "clGetEventInfo"));
  ASSERT_NE(nullptr, get_event_info) << "no clGetEventInfo in libOpenCL.so.1";
  constexpr uint32_t kClEventCommandQueue = 0x11D0;
  Gate g;
  ASSERT_NO_FATAL_FAILURE(make_gate(g));
  void *a = memory(4096);
  ASSERT_TRUE(a);
  ur_queue_handle_t q = queue(false);
  ASSERT_TRUE(q);
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(fill(q, a, 1024, 1, 0, nullptr, &e));
  keep(e);
  ASSERT_SUCCESS(urQueueFinish(q));
  ur_native_handle_t native_event = 0;
  ASSERT_SUCCESS(urEventGetNativeHandle(e, &native_event));
  void *native_queue = nullptr;
  ASSERT_EQ(0, get_event_info(reinterpret_cast<void *>(native_event), kClEventCommandQueue, sizeof native_queue,
                              &native_queue, nullptr));
  ASSERT_NE(nullptr, native_queue);
  void *gated = nullptr;
  ASSERT_EQ(0, ClUserEvents::get().marker(native_queue, 1, &g.native, &gated));
  expect_held_back(q, g, "a marker on the native queue of the queue's event");
  ClUserEvents::get().release(gated);
}

CONF_INSTANTIATE_DEVICE_SUITE(urOpenclFinishSkipTest);
CONF_INSTANTIATE_DEVICE_SUITE(urOpenclWaitsTest);
CONF_INSTANTIATE_DEVICE_SUITE(urOpenclFreeWaitTest);

} // namespace
