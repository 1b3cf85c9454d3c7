// SPDX-License-Identifier: Apache-2.0
// Attacks on the quarantine of freed plain allocations (docs/async-alloc.md, "Freed
// memory") where it meets allocations that fail for memory: such an allocation empties
// the quarantine and tries once more (urUSM*Alloc, plain or from a pool, and
// urEnqueueUSM*AllocExp, whose retry runs outside the queue's lock). A retry that fails
// again leaves the pool, the caller's pointers and the wait list's events as they were;
// a retry that succeeds hands out one valid event; threads that fail for memory, free
// into the quarantine and probe freed memory at once see only the documented results;
// a context released with a full quarantine, live pools or owning buffers gives
// everything back once its last holder goes (LeakSanitizer checks that in the ASan
// build, ThreadSanitizer the races in the TSan build).
//
// A pool at its maximum size fails for memory on every adapter, so the retry is seen
// everywhere; a retry that can succeed needs device memory used up, which only Level
// Zero's test driver allows (urQuarantineOomTest, as freed_memory.cpp's
// urFreedMemoryOomTest). Memory the quarantine may have given back is only probed with
// commands that touch none of it (a host-ward prefetch, an advice) and queries.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "async_alloc_support.hpp"
#include "conformance.hpp"
#include "device_memory_used_up.hpp"

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * KiB;
constexpr size_t kQuarantineCount = 64;       // docs/async-alloc.md, "Freed memory"
constexpr size_t kQuarantineBytes = 16 * MiB; // the same
constexpr size_t kPoolMax = 1 * MiB;          // the limited pools' maximum size

bool out_of_memory(ur_result_t r) {
  return r == UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || r == UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

// Placeholders an entry point must leave alone when it fails.
void *const kUntouchedPtr = reinterpret_cast<void *>(uintptr_t(0x1000));
const ur_event_handle_t kUntouchedEvent = reinterpret_cast<ur_event_handle_t>(uintptr_t(0x2000));

class urQuarantineAttackTest : public conf::QueueTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    for (ur_usm_type_t k : {UR_USM_TYPE_HOST, UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED})
      if (conf::usm_supported(device(), k)) kinds.push_back(k);
    if (kinds.empty()) GTEST_SKIP() << found().label() << " offers no USM";
    kind = conf::usm_supported(device(), UR_USM_TYPE_DEVICE) ? UR_USM_TYPE_DEVICE : kinds.front();
    async = conf::async::async_supported(device());
    ooq_supported = conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  }

  // A context of the test's own, its extended deleter's calls counted (the deleter says
  // whether anything the test made still holds the context at the end), and an in-order
  // queue on it.
  // `set`: the deleter's answer (UNSUPPORTED_FEATURE: nothing is counted).
  void own_context_and_queue(ur_context_handle_t &own, std::atomic<int> *&deleted, ur_result_t &set,
                             ur_queue_handle_t &q) {
    ur_device_handle_t dev = device();
    ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &own));
    deleted = &conf::async::new_deleter_counter();
    set = urContextSetExtendedDeleter(own, conf::async::count_deletion, deleted);
    ASSERT_TRUE(set == UR_RESULT_SUCCESS || set == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) << urinfo::result_name(set);
    ASSERT_SUCCESS(urQueueCreate(own, dev, nullptr, &q));
  }

  // A plain allocation (no pool) of `k` in `ctx`.
  void *plain(ur_context_handle_t ctx, size_t bytes, ur_usm_type_t k) {
    void *p = nullptr;
    EXPECT_SUCCESS(conf::usm_alloc(ctx, device(), k, bytes, &p)) << conf::usm_kind_name(k) << " " << bytes;
    return p;
  }

  // Frees `n` plain allocations of `bytes` into the quarantine of `ctx`, kinds in turn;
  // each is refused at once.
  std::vector<void *> quarantine(ur_context_handle_t ctx, ur_queue_handle_t q, size_t n, size_t bytes) {
    std::vector<void *> freed;
    for (size_t i = 0; i < n; ++i) {
      void *p = plain(ctx, bytes, kinds[i % kinds.size()]);
      if (!p) break;
      EXPECT_SUCCESS(urUSMFree(ctx, p));
      EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, probe(q, p)) << "a quarantined allocation";
      freed.push_back(p);
    }
    return freed;
  }

  // A host-ward prefetch: checked as every USM command, and touches nothing.
  static ur_result_t probe(ur_queue_handle_t q, const void *p, size_t bytes = 64) {
    return urEnqueueUSMPrefetch(q, p, bytes, UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST, 0, nullptr, nullptr);
  }

  static ur_usm_type_t type_of(ur_context_handle_t ctx, const void *p) {
    ur_usm_type_t t = UR_USM_TYPE_FORCE_UINT32;
    EXPECT_SUCCESS(urUSMGetMemAllocInfo(ctx, p, UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr));
    return t;
  }

  // A pool (urUSMPoolCreate: every kind) that may reserve at most kPoolMax bytes.
  ur_usm_pool_handle_t limited_pool(ur_context_handle_t ctx) {
    ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, kPoolMax, 0};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
    ur_usm_pool_handle_t pool = nullptr;
    EXPECT_SUCCESS(urUSMPoolCreate(ctx, &desc, &pool));
    return pool;
  }

  // urUSM{Host,Device,Shared}Alloc of `kind` from `pool`.
  ur_result_t pool_alloc_now(ur_context_handle_t ctx, ur_usm_pool_handle_t pool, size_t bytes, void **out) {
    switch (kind) {
    case UR_USM_TYPE_HOST: return urUSMHostAlloc(ctx, nullptr, pool, bytes, out);
    case UR_USM_TYPE_SHARED: return urUSMSharedAlloc(ctx, device(), nullptr, pool, bytes, out);
    default: return urUSMDeviceAlloc(ctx, device(), nullptr, pool, bytes, out);
    }
  }

  // Every pointer of `freed` was given back: system memory again (accepted), no allocation.
  void expect_given_back(ur_context_handle_t ctx, ur_queue_handle_t q, const std::vector<void *> &freed,
                         const char *what) {
    SCOPED_TRACE(what);
    for (void *p : freed) {
      EXPECT_SUCCESS(probe(q, p)) << "still held: the allocation that failed for memory kept the quarantine";
      EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type_of(ctx, p));
    }
  }

  // Fills [p, p + bytes) with `mark` and reads it back.
  void expect_usable(ur_queue_handle_t q, void *p, size_t bytes, uint8_t mark, const char *what) {
    SCOPED_TRACE(what);
    ASSERT_SUCCESS(urEnqueueUSMFill(q, p, 1, &mark, bytes, 0, nullptr, nullptr));
    std::vector<uint8_t> back(bytes, 0);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, true, back.data(), p, bytes, 0, nullptr, nullptr));
    EXPECT_EQ(size_t(std::count(back.begin(), back.end(), mark)), bytes) << "the bytes written did not arrive";
  }

  std::vector<ur_usm_type_t> kinds; // the USM kinds the device offers
  ur_usm_type_t kind = UR_USM_TYPE_DEVICE;
  bool async = false, ooq_supported = false;
};

#define SKIP_UNLESS_ASYNC()                                                                                            \
  do {                                                                                                                 \
    if (!async) GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP";     \
  } while (0)

// A stream-ordered alloc past a pool's maximum fails for memory, empties the quarantine,
// tries again and fails again: OUT_OF_*_MEMORY, the pointer and event left alone, the
// pool's statistics and the wait list's reference counts unchanged, the quarantine given
// back; on an in-order and an out-of-order queue, with and without a wait list and an
// event asked for (native CPU takes a path with no queue lock for the last case).
TEST_P(urQuarantineAttackTest, StreamOrderedRetryThatFailsAgainChangesNothing) {
  SKIP_UNLESS_ASYNC();
  // A context of its own, whose deleter says whether anything the failed allocs made
  // (an event, a command) still holds it at the end.
  ur_context_handle_t own = nullptr;
  ur_queue_handle_t ioq = nullptr, ooq = nullptr;
  std::atomic<int> *counter = nullptr;
  ur_result_t set = UR_RESULT_SUCCESS;
  ASSERT_NO_FATAL_FAILURE(own_context_and_queue(own, counter, set, ioq));
  std::atomic<int> &deleted = *counter;
  ur_device_handle_t dev = device();
  if (ooq_supported) {
    ASSERT_SUCCESS(conf::make_queue(own, dev, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooq));
  }
  ur_usm_pool_handle_t pool = limited_pool(own);
  ASSERT_NE(nullptr, pool);
  void *live = nullptr;
  ASSERT_SUCCESS(conf::async::enqueue_alloc(kind, ioq, pool, 256 * KiB, 0, nullptr, &live, nullptr));
  ASSERT_SUCCESS(urQueueFinish(ioq));
  int variants = 0;
  for (ur_queue_handle_t q : {ioq, ooq}) {
    if (!q) continue;
    for (uint32_t n : {0u, 2u})
      for (bool want_event : {false, true})
        for (size_t bytes : {kPoolMax + 1, 900 * KiB}) { // past the maximum; past what is left
          SCOPED_TRACE(testing::Message() << (q == ioq ? "in-order" : "out-of-order") << " queue, " << n
                                          << " waits, event " << want_event << ", " << bytes << " bytes");
          const std::vector<void *> freed = quarantine(own, q, 8, 1 * KiB);
          ASSERT_EQ(8u, freed.size());
          ur_event_handle_t waits[2] = {nullptr, nullptr};
          for (uint32_t i = 0; i < n; ++i)
            ASSERT_SUCCESS(conf::async::fill32(q, static_cast<char *>(live) + i * 4 * KiB, 4 * KiB, i + 1, 0, nullptr,
                                               &waits[i])); // apart: the two are unordered on an out-of-order queue
          uint32_t counts[2] = {0, 0};
          for (uint32_t i = 0; i < n; ++i) counts[i] = conf::reference_count(waits[i]);
          const conf::async::PoolStats before = conf::async::stats_of(pool);
          void *out = kUntouchedPtr;
          ur_event_handle_t ev = kUntouchedEvent;
          EXPECT_EQ(conf::async::out_of_memory_for(kind),
                    conf::async::enqueue_alloc(kind, q, pool, bytes, n, n ? waits : nullptr, &out,
                                               want_event ? &ev : nullptr));
          EXPECT_EQ(kUntouchedPtr, out) << "a failed alloc wrote its pointer";
          EXPECT_TRUE(ev == kUntouchedEvent || ev == nullptr) << "a failed alloc handed out an event";
          if (ev != kUntouchedEvent && ev != nullptr) {
            EXPECT_SUCCESS(urEventRelease(ev));
          }
          EXPECT_EQ(before, conf::async::stats_of(pool)) << "a failed alloc changed the pool";
          for (uint32_t i = 0; i < n; ++i)
            EXPECT_EQ(counts[i], conf::reference_count(waits[i])) << "a failed alloc kept a wait-list event";
          expect_given_back(own, q, freed, "the quarantine after an alloc that failed for memory");
          ASSERT_SUCCESS(urQueueFinish(q));
          for (uint32_t i = 0; i < n; ++i) EXPECT_SUCCESS(urEventRelease(waits[i]));
          ++variants;
        }
  }
  // The queues still work, and the pool's block is live.
  expect_usable(ioq, live, 4 * KiB, 0x5D, "the pool's live block after the failed allocs");
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(ioq, pool, live, 0, nullptr, nullptr));
  for (ur_queue_handle_t q : {ioq, ooq})
    if (q) {
      EXPECT_SUCCESS(urQueueFinish(q));
      EXPECT_SUCCESS(urQueueRelease(q));
    }
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
  EXPECT_SUCCESS(urContextRelease(own));
  if (set == UR_RESULT_SUCCESS) {
    EXPECT_EQ(1, conf::async::deletions_after_last_release(deleted))
        << "something the failed allocs made still holds the context";
  }
  RecordProperty("variants", variants);
}

// The same for urUSM*Alloc from a pool at its maximum, and for a plain allocation that
// the device cannot make (a size past UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE is a size error,
// not a failure for memory: it leaves the quarantine alone).
TEST_P(urQuarantineAttackTest, PooledRetryThatFailsAgainChangesNothing) {
  ur_usm_pool_handle_t pool = limited_pool(context);
  ASSERT_NE(nullptr, pool);
  void *live = nullptr;
  ASSERT_SUCCESS(pool_alloc_now(context, pool, 256 * KiB, &live));
  for (size_t bytes : {kPoolMax + 1, 900 * KiB}) {
    SCOPED_TRACE(bytes);
    const std::vector<void *> freed = quarantine(context, queue, 8, 2 * KiB);
    ASSERT_EQ(8u, freed.size());
    const conf::async::PoolStats before = conf::async::stats_of(pool);
    void *out = kUntouchedPtr;
    EXPECT_EQ(conf::async::out_of_memory_for(kind), pool_alloc_now(context, pool, bytes, &out));
    EXPECT_EQ(kUntouchedPtr, out) << "a failed alloc wrote its pointer";
    EXPECT_EQ(before, conf::async::stats_of(pool)) << "a failed alloc changed the pool";
    expect_given_back(context, queue, freed, "the quarantine after an alloc that failed for memory");
  }
  // A size error is no failure for memory: the quarantine stays.
  uint64_t max_alloc = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, max_alloc));
  if (max_alloc < std::numeric_limits<size_t>::max()) {
    const std::vector<void *> freed = quarantine(context, queue, 4, 1 * KiB);
    void *out = kUntouchedPtr;
    const ur_result_t r = conf::usm_alloc(context, device(), kind, size_t(max_alloc) + 1, &out);
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, r);
    EXPECT_EQ(kUntouchedPtr, out);
    for (void *p : freed) EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, probe(queue, p)) << "a size error emptied it";
  }
  expect_usable(queue, live, 4 * KiB, 0x4E, "the pool's live block after the failed allocs");
  ASSERT_SUCCESS(urQueueFinish(queue));
  ASSERT_SUCCESS(urUSMFree(context, live));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
}

// Until the quarantine is given back, every command naming a freed pointer is refused
// and touches nothing; once an alloc that failed for memory has given it back, the
// pointers are no allocation of the context (a second free is refused, queries say
// UNKNOWN), and new allocations are usable.
TEST_P(urQuarantineAttackTest, RefusedUntilGivenBackThenForgotten) {
  SKIP_UNLESS_ASYNC();
  ur_usm_pool_handle_t pool = limited_pool(context);
  ASSERT_NE(nullptr, pool);
  const std::vector<void *> freed = quarantine(context, queue, kQuarantineCount, 512);
  ASSERT_EQ(kQuarantineCount, freed.size());
  std::vector<uint8_t> host(512, 0);
  const uint8_t mark = 0x7E;
  for (void *p : freed) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urEnqueueUSMFill(queue, p, 1, &mark, 64, 0, nullptr, nullptr));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
              urEnqueueUSMMemcpy(queue, true, p, host.data(), 64, 0, nullptr, nullptr));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
              urEnqueueUSMAdvise(queue, p, 64, UR_USM_ADVICE_FLAG_DEFAULT, nullptr));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, p));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urEnqueueUSMFreeExp(queue, nullptr, p, 0, nullptr, nullptr));
  }
  void *out = kUntouchedPtr;
  ASSERT_EQ(conf::async::out_of_memory_for(kind),
            conf::async::enqueue_alloc(kind, queue, pool, kPoolMax + 1, 0, nullptr, &out, nullptr));
  expect_given_back(context, queue, freed, "a full quarantine after an alloc that failed for memory");
  for (void *p : freed) EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, p)) << "a second free";
  // The quarantine works as before: new frees are held again.
  const std::vector<void *> again = quarantine(context, queue, 4, 512);
  EXPECT_EQ(4u, again.size());
  void *fresh = plain(context, 4 * KiB, kind);
  ASSERT_NE(nullptr, fresh);
  expect_usable(queue, fresh, 4 * KiB, 0x6F, "a new allocation after the quarantine was given back");
  ASSERT_SUCCESS(urUSMFree(context, fresh));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
}

// Threads at once, in one context: allocators whose stream-ordered allocs from a pool
// at its maximum fail for memory (each failure empties the quarantine and tries again),
// on an in-order and an out-of-order queue, with and without events; freers that put
// plain allocations into the quarantine; a prober naming freed pointers with commands
// that touch nothing; a user filling and reading back its own live allocation. Every
// result is one the contract allows, a successful alloc's event is valid with one
// reference, a failed one hands out nothing, and no live memory is ever refused.
TEST_P(urQuarantineAttackTest, ConcurrentRetriesFreesAndProbes) {
  SKIP_UNLESS_ASYNC();
  ur_usm_pool_handle_t pool = limited_pool(context);
  ASSERT_NE(nullptr, pool);
  constexpr int kAllocators = 2, kFreers = 2, kRounds = 200;
  std::vector<ur_queue_handle_t> queues(kAllocators + 2); // allocators', prober's, user's
  std::vector<bool> ooo_queue(queues.size(), false);
  for (size_t i = 0; i < queues.size(); ++i) {
    ooo_queue[i] = ooq_supported && i == 1;
    ASSERT_SUCCESS(conf::make_queue(context, device(), ooo_queue[i] ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0,
                                    &queues[i]));
  }
  void *live = plain(context, 4 * KiB, kind);
  ASSERT_NE(nullptr, live);

  std::atomic<int> bad_results{0}, failed_touched{0}, bad_events{0}, user_failures{0}, probe_failures{0};
  std::atomic<int> succeeded{0}, failed{0}, frees{0};
  std::atomic<bool> stop{false};
  constexpr size_t kRing = 64;
  std::atomic<void *> ring[kRing];
  for (auto &slot : ring) slot.store(nullptr);
  std::atomic<size_t> ring_next{0};

  std::vector<std::thread> threads;
  for (int a = 0; a < kAllocators; ++a)
    threads.emplace_back([&, a] {
      ur_queue_handle_t q = queues[size_t(a)];
      const size_t sizes[] = {64 * KiB, 600 * KiB, kPoolMax + 1, 4 * KiB, 700 * KiB};
      for (int round = 0; round < kRounds; ++round) {
        const size_t bytes = sizes[size_t(round + a) % 5];
        const bool want_event = round % 2 == 0;
        void *out = kUntouchedPtr;
        ur_event_handle_t ev = kUntouchedEvent;
        const ur_result_t r =
            conf::async::enqueue_alloc(kind, q, pool, bytes, 0, nullptr, &out, want_event ? &ev : nullptr);
        if (r == UR_RESULT_SUCCESS) {
          ++succeeded;
          if (out == kUntouchedPtr || out == nullptr) ++bad_results;
          if (want_event && (ev == kUntouchedEvent || ev == nullptr || conf::reference_count(ev) != 1)) ++bad_events;
          if (!want_event && ev != kUntouchedEvent) ++bad_events;
          ur_event_handle_t filled = nullptr;
          const bool has_ev = want_event && ev != kUntouchedEvent && ev != nullptr;
          // Without the alloc's event, an out-of-order queue orders the block's use and
          // free after the alloc only through a barrier ("Free after its alloc").
          if (!has_ev && ooo_queue[size_t(a)] &&
              urEnqueueEventsWaitWithBarrier(q, 0, nullptr, nullptr) != UR_RESULT_SUCCESS)
            ++bad_results;
          if (conf::async::fill32(q, out, 4 * KiB, uint32_t(round), has_ev ? 1 : 0, has_ev ? &ev : nullptr, &filled) !=
              UR_RESULT_SUCCESS)
            ++bad_results;
          if (urEnqueueUSMFreeExp(q, pool, out, filled ? 1 : 0, filled ? &filled : nullptr, nullptr) !=
              UR_RESULT_SUCCESS)
            ++bad_results;
          if (filled) urEventRelease(filled);
          if (has_ev && urEventRelease(ev) != UR_RESULT_SUCCESS) ++bad_events;
        } else if (out_of_memory(r)) {
          ++failed;
          if (out != kUntouchedPtr || (ev != kUntouchedEvent && ev != nullptr)) ++failed_touched;
        } else {
          ++bad_results;
        }
        if (round % 16 == 15 && urQueueFinish(q) != UR_RESULT_SUCCESS) ++bad_results;
      }
      if (urQueueFinish(q) != UR_RESULT_SUCCESS) ++bad_results;
    });
  for (int f = 0; f < kFreers; ++f)
    threads.emplace_back([&, f] {
      for (int round = 0; round < kRounds; ++round) {
        void *p = nullptr;
        const size_t bytes = 64 * size_t(1 + (round + f) % 16);
        if (conf::usm_alloc(context, device(), kinds[size_t(round) % kinds.size()], bytes, &p) != UR_RESULT_SUCCESS) {
          ++bad_results;
          continue;
        }
        if (urUSMFree(context, p) != UR_RESULT_SUCCESS) {
          ++bad_results;
          continue;
        }
        ++frees;
        ring[ring_next.fetch_add(1) % kRing].store(p);
      }
    });
  // Freed pointers: refused while held, accepted once given back (system memory, or a
  // new allocation at the same address); queries answer.
  const bool stream_backend = backend() == UR_BACKEND_CUDA || backend() == UR_BACKEND_HIP;
  threads.emplace_back([&] {
    ur_queue_handle_t q = queues[kAllocators];
    for (size_t i = 0; !stop.load(); ++i) {
      void *p = ring[i % kRing].load();
      if (!p) {
        std::this_thread::yield();
        continue;
      }
      // On CUDA and HIP a freer may give p back to the driver between the adapter's
      // check and the driver's prefetch or advice: the driver then refuses memory it no
      // longer has (INVALID_VALUE). Anywhere else the hint has nothing to refuse.
      auto allowed = [&](ur_result_t r) {
        return r == UR_RESULT_SUCCESS || r == UR_RESULT_ERROR_INVALID_MEM_OBJECT ||
               (stream_backend && r == UR_RESULT_ERROR_INVALID_VALUE);
      };
      const ur_result_t r = probe(q, p);
      const ur_result_t adv = urEnqueueUSMAdvise(q, p, 64, UR_USM_ADVICE_FLAG_DEFAULT, nullptr);
      if (!allowed(r) || !allowed(adv)) ++probe_failures;
      ur_usm_type_t t = UR_USM_TYPE_FORCE_UINT32;
      if (urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof t, &t, nullptr) != UR_RESULT_SUCCESS ||
          t == UR_USM_TYPE_FORCE_UINT32)
        ++probe_failures;
      if (i % 256 == 255 && urQueueFinish(q) != UR_RESULT_SUCCESS) ++probe_failures;
    }
  });
  threads.emplace_back([&] {
    ur_queue_handle_t q = queues[kAllocators + 1];
    std::vector<uint8_t> back(4 * KiB);
    for (int round = 0; !stop.load() || round < 10; ++round) {
      const uint8_t mark = uint8_t(round * 3 + 1);
      if (urEnqueueUSMFill(q, live, 1, &mark, back.size(), 0, nullptr, nullptr) != UR_RESULT_SUCCESS ||
          urEnqueueUSMMemcpy(q, true, back.data(), live, back.size(), 0, nullptr, nullptr) != UR_RESULT_SUCCESS ||
          size_t(std::count(back.begin(), back.end(), mark)) != back.size())
        ++user_failures;
      if (round > 2000) break;
    }
  });
  for (int i = 0; i < kAllocators + kFreers; ++i) threads[size_t(i)].join();
  stop.store(true);
  for (size_t i = kAllocators + kFreers; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(0, bad_results.load()) << "a result the contract does not allow";
  EXPECT_EQ(0, failed_touched.load()) << "a failed alloc wrote its pointer or event";
  EXPECT_EQ(0, bad_events.load()) << "a successful alloc's event was missing or not held once";
  EXPECT_EQ(0, user_failures.load()) << "live memory was refused or lost its bytes";
  EXPECT_EQ(0, probe_failures.load());
  EXPECT_GT(failed.load(), 0) << "no alloc failed for memory: the retry was not attacked";
  EXPECT_GT(succeeded.load(), 0);
  EXPECT_EQ(kFreers * kRounds, frees.load());
  // Nothing is left in use.
  EXPECT_EQ(0u, conf::async::stats_of(pool).used);
  for (auto q : queues) {
    EXPECT_SUCCESS(urQueueFinish(q));
    EXPECT_SUCCESS(urQueueRelease(q));
  }
  EXPECT_SUCCESS(urUSMFree(context, live));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
  RecordProperty("failed_for_memory", failed.load());
  RecordProperty("succeeded", succeeded.load());
}

// A freer puts plain allocations into the quarantine one after another (from the 65th
// on, each free gives the oldest back, outside the registry's lock) while another thread
// names recent frees with commands that would write and read them: each of those is still
// held (the freer stays fewer than 32 frees ahead of it), so every command is refused and
// nothing is written, whatever the give-backs of older ones do meanwhile.
TEST_P(urQuarantineAttackTest, WritesToHeldFreesRefusedWhileOldestGoBack) {
  constexpr size_t kFrees = 600, kAhead = 32, kBytes = 256;
  std::vector<void *> mem(kFrees, nullptr);
  std::atomic<size_t> freed_upto{0}, checked_upto{0};
  std::atomic<int> bad_frees{0}, accepted{0}, odd{0};
  std::thread freer([&] {
    for (size_t i = 0; i < kFrees; ++i) {
      while (i >= checked_upto.load() + kAhead) std::this_thread::yield();
      void *p = nullptr;
      if (conf::usm_alloc(context, device(), kinds[i % kinds.size()], kBytes, &p) != UR_RESULT_SUCCESS ||
          urUSMFree(context, p) != UR_RESULT_SUCCESS)
        ++bad_frees;
      mem[i] = p;
      freed_upto.store(i + 1);
    }
  });
  std::vector<uint8_t> host(kBytes, 0xEE);
  const uint32_t pattern = 0xBADF00D;
  for (size_t j = 0; j < kFrees; ++j) {
    while (freed_upto.load() <= j) std::this_thread::yield();
    void *p = mem[j];
    if (p) {
      const ur_result_t results[] = {urEnqueueUSMFill(queue, p, sizeof pattern, &pattern, kBytes, 0, nullptr, nullptr),
                                     urEnqueueUSMMemcpy(queue, true, p, host.data(), kBytes, 0, nullptr, nullptr),
                                     urEnqueueUSMMemcpy(queue, true, host.data(), p, kBytes, 0, nullptr, nullptr),
                                     urEnqueueUSMAdvise(queue, p, kBytes, UR_USM_ADVICE_FLAG_DEFAULT, nullptr),
                                     probe(queue, p)};
      for (ur_result_t r : results) {
        if (r == UR_RESULT_SUCCESS)
          ++accepted;
        else if (r != UR_RESULT_ERROR_INVALID_MEM_OBJECT)
          ++odd;
      }
    }
    checked_upto.store(j + 1);
  }
  freer.join();
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(0, bad_frees.load());
  EXPECT_EQ(0, accepted.load()) << "a command on memory the quarantine held was accepted";
  EXPECT_EQ(0, odd.load());
  EXPECT_EQ(size_t(std::count(host.begin(), host.end(), 0xEE)), host.size()) << "a refused copy wrote host memory";
}

// One thread's allocs fail for memory (and empty the quarantine) on a queue of a context
// whose other holder frees plain allocations into that quarantine and then lets go of
// the context with the user's last urContextRelease, while the allocs go on; the context
// goes, its deleter once, when the queue and the pool are released.
TEST_P(urQuarantineAttackTest, RetriesRaceTheLastUserRelease) {
  SKIP_UNLESS_ASYNC();
  constexpr int kRounds = 150;
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    ur_context_handle_t own = nullptr;
    ur_queue_handle_t q = nullptr;
    std::atomic<int> *counter = nullptr;
    ur_result_t set = UR_RESULT_SUCCESS;
    ASSERT_NO_FATAL_FAILURE(own_context_and_queue(own, counter, set, q));
    std::atomic<int> &deleted = *counter;
    ur_usm_pool_handle_t pool = limited_pool(own);
    ASSERT_NE(nullptr, pool);
    ASSERT_SUCCESS(urContextRetain(own)); // the freer's reference
    std::atomic<int> bad{0}, failed{0};
    std::atomic<bool> freer_done{false};
    std::thread allocator([&] {
      for (int round = 0; round < kRounds || !freer_done.load(); ++round) {
        void *out = kUntouchedPtr;
        const size_t bytes = round % 3 == 0 ? kPoolMax + 1 : 128 * KiB;
        const ur_result_t r = conf::async::enqueue_alloc(kind, q, pool, bytes, 0, nullptr, &out, nullptr);
        if (r == UR_RESULT_SUCCESS) {
          if (urEnqueueUSMFreeExp(q, nullptr, out, 0, nullptr, nullptr) != UR_RESULT_SUCCESS) ++bad;
        } else if (out_of_memory(r) && out == kUntouchedPtr) {
          ++failed;
        } else {
          ++bad;
        }
        if (round > 20 * kRounds) break;
      }
    });
    std::thread freer([&] {
      for (int round = 0; round < kRounds; ++round) {
        void *p = nullptr;
        if (conf::usm_alloc(own, device(), kinds[size_t(round) % kinds.size()], 256, &p) != UR_RESULT_SUCCESS ||
            urUSMFree(own, p) != UR_RESULT_SUCCESS)
          ++bad;
      }
      if (urContextRelease(own) != UR_RESULT_SUCCESS) ++bad; // the user's last
      freer_done.store(true);
    });
    EXPECT_SUCCESS(urContextRelease(own)); // not the last: the freer holds one
    freer.join();
    allocator.join();
    EXPECT_EQ(0, bad.load());
    EXPECT_GT(failed.load(), 0);
    EXPECT_EQ(0, deleted.load()) << "the context went while its queue and pool held it";
    EXPECT_SUCCESS(urQueueFinish(q));
    EXPECT_SUCCESS(urQueueRelease(q));
    EXPECT_SUCCESS(urUSMPoolRelease(pool));
    if (set == UR_RESULT_SUCCESS) {
      EXPECT_EQ(1, conf::async::deletions_after_last_release(deleted))
          << "the context did not go once every handle was released";
    }
  }
}

// A context whose user lets go of it with a full quarantine, live plain allocations,
// live blocks of its default pool and of a pool the user made, and a queue: allocs that
// fail for memory still empty the quarantine after that release, the user pool's blocks
// are freed on the queue, and the context goes (deleter once) with the last handle,
// giving back everything never freed (LeakSanitizer, in the ASan build).
TEST_P(urQuarantineAttackTest, ContextReleasedWithFullQuarantineAndLivePools) {
  SKIP_UNLESS_ASYNC();
  ur_context_handle_t own = nullptr;
  ur_queue_handle_t q = nullptr;
  std::atomic<int> *counter = nullptr;
  ur_result_t set = UR_RESULT_SUCCESS;
  ASSERT_NO_FATAL_FAILURE(own_context_and_queue(own, counter, set, q));
  std::atomic<int> &deleted = *counter;
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t user_pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(own, &desc, &user_pool));
  ur_usm_pool_handle_t limited = limited_pool(own);
  ASSERT_NE(nullptr, limited);
  std::vector<void *> user_blocks(4), default_blocks(4), live_plain;
  for (size_t i = 0; i < user_blocks.size(); ++i)
    ASSERT_SUCCESS(i % 2
                       ? pool_alloc_now(own, user_pool, 8 * KiB, &user_blocks[i])
                       : conf::async::enqueue_alloc(kind, q, user_pool, 8 * KiB, 0, nullptr, &user_blocks[i], nullptr));
  for (auto &p : default_blocks)
    ASSERT_SUCCESS(conf::async::enqueue_alloc(kind, q, nullptr, 16 * KiB, 0, nullptr, &p, nullptr));
  for (size_t i = 0; i < 8; ++i) live_plain.push_back(plain(own, 1 * KiB + i, kinds[i % kinds.size()]));
  const std::vector<void *> freed = quarantine(own, q, kQuarantineCount, 1 * KiB);
  ASSERT_EQ(kQuarantineCount, freed.size());
  // An enqueued free left pending on the queue.
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, nullptr, default_blocks.back(), 0, nullptr, nullptr));
  default_blocks.pop_back();
  ASSERT_SUCCESS(urContextRelease(own)); // the user's last: the queue and the pools hold it

  for (void *p : freed) EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, probe(q, p));
  void *out = kUntouchedPtr;
  EXPECT_EQ(conf::async::out_of_memory_for(kind),
            conf::async::enqueue_alloc(kind, q, limited, kPoolMax + 1, 0, nullptr, &out, nullptr));
  EXPECT_EQ(kUntouchedPtr, out);
  for (void *p : freed) EXPECT_SUCCESS(probe(q, p)) << "the quarantine was not given back after the user's release";
  for (void *p : live_plain) expect_usable(q, p, 1 * KiB, 0x21, "a live plain allocation after the user's release");
  for (void *p : user_blocks) ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urUSMPoolRelease(user_pool));
  EXPECT_SUCCESS(urUSMPoolRelease(limited));
  EXPECT_EQ(0, deleted.load()) << "the context went while its queue held it";
  EXPECT_SUCCESS(urQueueRelease(q));
  if (set == UR_RESULT_SUCCESS) {
    EXPECT_EQ(1, conf::async::deletions_after_last_release(deleted))
        << "the context did not go once every handle was released";
  }
}

// Buffers that own USM allocations of the context (urMemBufferCreateWithNativeHandle
// with isNativeHandleOwned): plain ones of every kind and a stream-ordered block of the
// default pool (a user pool's block: the next test). The quarantine given back by an alloc that failed for memory
// leaves them usable (they are live, not freed); the buffers are released after the
// queue, the pools and the user's context, the last of them taking the context with it
// (deleter once); each owned allocation is freed once (ASan, LeakSanitizer).
TEST_P(urQuarantineAttackTest, OwningBuffersReleasedAfterEverythingElse) {
  SKIP_UNLESS_ASYNC();
  if (backend() == UR_BACKEND_OPENCL) GTEST_SKIP() << "an OpenCL buffer's native handle is a cl_mem, not a pointer";
  ur_context_handle_t own = nullptr;
  ur_queue_handle_t q = nullptr;
  std::atomic<int> *counter = nullptr;
  ur_result_t set = UR_RESULT_SUCCESS;
  ASSERT_NO_FATAL_FAILURE(own_context_and_queue(own, counter, set, q));
  std::atomic<int> &deleted = *counter;
  ur_usm_pool_handle_t limited = limited_pool(own);
  ASSERT_NE(nullptr, limited);
  constexpr size_t kBytes = 4 * KiB;
  std::vector<void *> owned;
  for (ur_usm_type_t k : kinds) owned.push_back(plain(own, kBytes, k));
  owned.push_back(nullptr);
  ASSERT_SUCCESS(conf::async::enqueue_alloc(kind, q, nullptr, kBytes, 0, nullptr, &owned.back(), nullptr));
  ASSERT_SUCCESS(urQueueFinish(q));
  std::vector<ur_mem_handle_t> buffers;
  ur_mem_native_properties_t owning{UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, nullptr, true};
  for (void *p : owned) {
    ASSERT_NE(nullptr, p);
    ur_mem_handle_t b = nullptr;
    const ur_result_t made =
        urMemBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(p), own, &owning, &b);
    if (made == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
      GTEST_SKIP() << "urMemBufferCreateWithNativeHandle is not supported";
    ASSERT_SUCCESS(made);
    buffers.push_back(b);
  }
  const std::vector<void *> freed = quarantine(own, q, kQuarantineCount, 1 * KiB);
  ASSERT_EQ(kQuarantineCount, freed.size());
  void *out = kUntouchedPtr;
  EXPECT_EQ(conf::async::out_of_memory_for(kind),
            conf::async::enqueue_alloc(kind, q, limited, kPoolMax + 1, 0, nullptr, &out, nullptr));
  expect_given_back(own, q, freed, "the quarantine after an alloc that failed for memory");
  std::vector<uint8_t> bytes(kBytes), back(kBytes);
  for (size_t i = 0; i < buffers.size(); ++i) {
    SCOPED_TRACE(i);
    std::fill(bytes.begin(), bytes.end(), uint8_t(0x30 + i));
    ASSERT_SUCCESS(urEnqueueMemBufferWrite(q, buffers[i], true, 0, kBytes, bytes.data(), 0, nullptr, nullptr));
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, true, back.data(), owned[i], kBytes, 0, nullptr, nullptr));
    EXPECT_EQ(bytes, back) << "an owning buffer's allocation lost its bytes after the quarantine was given back";
  }
  ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urUSMPoolRelease(limited));
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urContextRelease(own));
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(0, deleted.load()) << "the context went while buffer " << i << " held it";
    EXPECT_SUCCESS(urMemRelease(buffers[i]));
  }
  if (set == UR_RESULT_SUCCESS) {
    EXPECT_EQ(1, conf::async::deletions_after_last_release(deleted)) << "the context did not go with its last buffer";
  }
}

// A buffer that owns a block of a pool the user made, released after that pool and the
// user's context: the pool lives on for the block (it holds the context), the buffer's
// release frees the block, the pool goes and the context with it (deleter once).
TEST_P(urQuarantineAttackTest, OwningBufferOverUserPoolBlockReleasedLast) {
  if (backend() == UR_BACKEND_OPENCL) GTEST_SKIP() << "an OpenCL buffer's native handle is a cl_mem, not a pointer";
  ur_context_handle_t own = nullptr;
  ur_queue_handle_t q = nullptr;
  std::atomic<int> *counter = nullptr;
  ur_result_t set = UR_RESULT_SUCCESS;
  ASSERT_NO_FATAL_FAILURE(own_context_and_queue(own, counter, set, q));
  std::atomic<int> &deleted = *counter;
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t user_pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(own, &desc, &user_pool));
  constexpr size_t kBytes = 4 * KiB;
  void *block = nullptr;
  ASSERT_SUCCESS(pool_alloc_now(own, user_pool, kBytes, &block));
  ur_mem_native_properties_t owning{UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, nullptr, true};
  ur_mem_handle_t buffer = nullptr;
  const ur_result_t made =
      urMemBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(block), own, &owning, &buffer);
  if (made == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urMemBufferCreateWithNativeHandle is not supported";
  ASSERT_SUCCESS(made);
  const std::vector<void *> freed = quarantine(own, q, 8, 1 * KiB);
  std::vector<uint8_t> bytes(kBytes, 0x4B), back(kBytes, 0);
  ASSERT_SUCCESS(urEnqueueMemBufferWrite(q, buffer, true, 0, kBytes, bytes.data(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(q, true, back.data(), block, kBytes, 0, nullptr, nullptr));
  EXPECT_EQ(bytes, back);
  ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urUSMPoolRelease(user_pool)); // its block lives on in the buffer
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urContextRelease(own));
  EXPECT_EQ(0, deleted.load()) << "the context went while the buffer held it";
  EXPECT_SUCCESS(urMemRelease(buffer));
  if (set == UR_RESULT_SUCCESS) {
    EXPECT_EQ(1, conf::async::deletions_after_last_release(deleted))
        << "the buffer's release did not free the block: its pool and context stay";
  }
}

// ---- where device memory runs out: Level Zero's test driver ----------------------

// Device memory used up (device_memory_used_up.hpp).
class urQuarantineOomTest : public urQuarantineAttackTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(urQuarantineAttackTest);
    const std::string why = conf::DeviceMemoryUsedUp::why_not(device(), backend(), kind, found().label());
    if (!why.empty()) GTEST_SKIP() << why;
    used_up.use_up(context, device(), 8);
  }
  void TearDown() override {
    used_up.give_back();
    urQuarantineAttackTest::TearDown();
  }
  void fill_the_rest() { used_up.fill_the_rest(); }
  // Frees a 16 MiB allocation into the quarantine: its memory stays held.
  void quarantine_a_piece() {
    ASSERT_FALSE(pieces.empty());
    ASSERT_SUCCESS(urUSMFree(context, pieces.back()));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, probe(queue, pieces.back()));
    pieces.pop_back();
  }
  conf::DeviceMemoryUsedUp used_up;
  std::vector<void *> &held = used_up.held, &pieces = used_up.pieces;
};

// A retried stream-ordered alloc that succeeds, on an out-of-order queue with a wait
// list and an event asked for: the event is valid and held once, the block usable after
// it, and the wait list's events and the alloc's own end with the references an alloc
// of the same pool that never failed leaves them (the first attempt's command was undone,
// not leaked).
TEST_P(urQuarantineOomTest, RetriedAllocOnOutOfOrderQueueHandsOutOneEvent) {
  SKIP_UNLESS_ASYNC();
  if (!ooq_supported) GTEST_SKIP() << found().label() << " runs no out-of-order queues";
  ur_queue_handle_t ooq = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooq));
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &pool));
  void *scratch = held.back(); // device memory the waits write (4 KiB at least)
  std::vector<uint32_t> counts[2];
  // 0: a retried alloc (the pool needs its first chunk, the backend has none until the
  // quarantine goes back); 1: the same alloc once that memory is there (no failure).
  for (int attempt = 0; attempt < 2; ++attempt) {
    SCOPED_TRACE(attempt ? "first-time success" : "retried");
    const void *freed = attempt == 0 ? pieces.back() : nullptr;
    if (attempt == 0) quarantine_a_piece();
    ur_event_handle_t waits[2] = {nullptr, nullptr};
    for (uint32_t i = 0; i < 2; ++i)
      ASSERT_SUCCESS(conf::async::fill32(ooq, static_cast<char *>(scratch) + i * 2 * KiB, 2 * KiB, i, 0, nullptr,
                                         &waits[i])); // apart: the two are unordered
    void *p = kUntouchedPtr;
    ur_event_handle_t ev = kUntouchedEvent;
    ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(ooq, pool, 4 * KiB, nullptr, 2, waits, &p, &ev));
    ASSERT_NE(kUntouchedPtr, p);
    ASSERT_NE(kUntouchedEvent, ev);
    ASSERT_NE(nullptr, ev);
    if (freed) {
      EXPECT_SUCCESS(probe(ooq, freed)) << "the alloc did not need the quarantine's memory";
    }
    EXPECT_EQ(1u, conf::reference_count(ev)) << "the alloc's event is held more than once";
    ur_event_handle_t filled = nullptr;
    const uint32_t mark = 0xA110C + uint32_t(attempt);
    ASSERT_SUCCESS(conf::async::fill32(ooq, p, 4 * KiB, mark, 1, &ev, &filled));
    std::vector<uint32_t> back(KiB, 0);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(ooq, true, back.data(), p, 4 * KiB, 1, &filled, nullptr));
    EXPECT_EQ(back.size(), conf::async::first_mismatch(back, mark));
    ASSERT_SUCCESS(urEnqueueUSMFreeExp(ooq, pool, p, 1, &filled, nullptr));
    ASSERT_SUCCESS(urQueueFinish(ooq));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(ev));
    counts[attempt] = {conf::reference_count(waits[0]), conf::reference_count(waits[1]), conf::reference_count(ev)};
    EXPECT_SUCCESS(urEventRelease(ev));
    EXPECT_SUCCESS(urEventRelease(filled));
    for (auto w : waits) EXPECT_SUCCESS(urEventRelease(w));
  }
  EXPECT_EQ(counts[1], counts[0]) << "the retried alloc left other references than a first-time success";
  EXPECT_SUCCESS(urQueueRelease(ooq));
  EXPECT_SUCCESS(urUSMPoolDestroyExp(context, device(), pool));
  fill_the_rest();
}

// A retry that fails again: the quarantine held 64 KiB, the alloc asks 16 MiB;
// OUT_OF_DEVICE_MEMORY, pointer and event untouched, the new pool's statistics
// unchanged, the quarantine given back all the same, and the memory it gave back is the
// next allocation's.
TEST_P(urQuarantineOomTest, RetryWithTooSmallAQuarantineFailsAgain) {
  SKIP_UNLESS_ASYNC();
  // 64 KiB of memory in a live allocation, none left beside it.
  quarantine_a_piece();
  void *most = nullptr;
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, nullptr, kQuarantineBytes - 64 * KiB, &most));
  held.push_back(most);
  void *small = nullptr;
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, nullptr, 64 * KiB, &small));
  fill_the_rest();
  ASSERT_SUCCESS(urUSMFree(context, small));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, probe(queue, small));
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &pool));
  const conf::async::PoolStats before = conf::async::stats_of(pool);
  void *out = kUntouchedPtr;
  ur_event_handle_t ev = kUntouchedEvent;
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
            urEnqueueUSMDeviceAllocExp(queue, pool, kQuarantineBytes, nullptr, 0, nullptr, &out, &ev));
  EXPECT_EQ(kUntouchedPtr, out);
  EXPECT_TRUE(ev == kUntouchedEvent || ev == nullptr) << "a failed alloc handed out an event";
  EXPECT_EQ(before, conf::async::stats_of(pool));
  EXPECT_SUCCESS(probe(queue, small)) << "the quarantine was not given back";
  void *p = nullptr;
  EXPECT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, nullptr, 32 * KiB, &p))
      << "the memory the quarantine gave back is not the next allocation's";
  if (p) held.push_back(p);
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urUSMPoolDestroyExp(context, device(), pool));
}

// Threads fail for memory at once while the quarantine holds 16 MiB, far more than all of
// them ask: each failure empties the quarantine or finds it emptied by another, and every
// one of them must get memory on its try again (docs/async-alloc.md: an allocation that
// fails for memory empties the quarantine and tries again once). Plain allocations and
// stream-ordered ones (each thread with a pool of its own that needs its first chunk).
TEST_P(urQuarantineOomTest, ConcurrentFailuresAllGetTheQuarantinesMemory) {
  constexpr int kThreads = 4, kRounds = 6;
  for (bool stream_ordered : {false, true}) {
    if (stream_ordered && !async) continue;
    SCOPED_TRACE(stream_ordered ? "stream-ordered" : "plain");
    std::vector<ur_queue_handle_t> queues(kThreads);
    std::vector<ur_usm_pool_handle_t> pools(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &queues[size_t(t)]));
      ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
      ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &pools[size_t(t)]));
    }
    int spurious = 0;
    for (int round = 0; round < kRounds && !pieces.empty(); ++round) {
      quarantine_a_piece();
      std::atomic<int> ready{0};
      std::vector<ur_result_t> results(kThreads, UR_RESULT_SUCCESS);
      std::vector<void *> got(kThreads, nullptr);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          ready.fetch_add(1);
          while (ready.load() < kThreads) {
          }
          void *p = nullptr;
          results[size_t(t)] = stream_ordered ? urEnqueueUSMDeviceAllocExp(queues[size_t(t)], pools[size_t(t)], 1 * MiB,
                                                                           nullptr, 0, nullptr, &p, nullptr)
                                              : urUSMDeviceAlloc(context, device(), nullptr, nullptr, 1 * MiB, &p);
          got[size_t(t)] = p;
        });
      for (auto &th : threads) th.join();
      for (int t = 0; t < kThreads; ++t) {
        EXPECT_SUCCESS(results[size_t(t)])
            << "round " << round << ", thread " << t << ": failed for memory with 16 MiB in the quarantine";
        spurious += results[size_t(t)] != UR_RESULT_SUCCESS;
      }
      for (int t = 0; t < kThreads; ++t) {
        if (results[size_t(t)] != UR_RESULT_SUCCESS) continue;
        if (stream_ordered) {
          EXPECT_SUCCESS(urEnqueueUSMFreeExp(queues[size_t(t)], pools[size_t(t)], got[size_t(t)], 0, nullptr, nullptr));
        } else {
          held.push_back(got[size_t(t)]);
        }
      }
      for (auto q : queues) EXPECT_SUCCESS(urQueueFinish(q));
      fill_the_rest();
    }
    RecordProperty(stream_ordered ? "spurious_stream_ordered" : "spurious_plain", spurious);
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_SUCCESS(urQueueFinish(queues[size_t(t)]));
      EXPECT_SUCCESS(urQueueRelease(queues[size_t(t)]));
      EXPECT_SUCCESS(urUSMPoolDestroyExp(context, device(), pools[size_t(t)]));
    }
    fill_the_rest();
  }
}

// With device memory used up: allocators whose stream-ordered allocs fail for memory
// (emptying the quarantine, trying again), freers that free plain allocations (each a
// 16 MiB piece or a small one) into the quarantine, and a prober naming what they freed;
// results only as the contract allows, nothing handed out by a failure.
TEST_P(urQuarantineOomTest, RetriesRaceFreesAndProbesWithMemoryUsedUp) {
  SKIP_UNLESS_ASYNC();
  constexpr int kAllocators = 2, kRounds = 60;
  std::vector<ur_queue_handle_t> queues(kAllocators + 1);
  std::vector<bool> ooo_queue(queues.size(), false);
  for (size_t i = 0; i < queues.size(); ++i) {
    ooo_queue[i] = ooq_supported && i == 1;
    ASSERT_SUCCESS(conf::make_queue(context, device(), ooo_queue[i] ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0,
                                    &queues[i]));
  }
  std::vector<void *> to_free;
  for (size_t i = 0; i < 6 && !pieces.empty(); ++i) {
    to_free.push_back(pieces.back());
    pieces.pop_back();
  }
  std::atomic<int> bad{0}, failed{0}, succeeded{0};
  std::atomic<bool> stop{false};
  std::atomic<void *> last_freed{nullptr};
  std::vector<std::thread> threads;
  for (int a = 0; a < kAllocators; ++a)
    threads.emplace_back([&, a] {
      ur_queue_handle_t q = queues[size_t(a)];
      for (int round = 0; round < kRounds; ++round) {
        void *out = kUntouchedPtr;
        ur_event_handle_t ev = kUntouchedEvent;
        const bool want_event = round % 2 == 1;
        const ur_result_t r = urEnqueueUSMDeviceAllocExp(q, nullptr, size_t(1 + round % 4) * MiB, nullptr, 0, nullptr,
                                                         &out, want_event ? &ev : nullptr);
        if (r == UR_RESULT_SUCCESS) {
          ++succeeded;
          const bool has_ev = want_event && ev != kUntouchedEvent && ev != nullptr;
          if (want_event && (!has_ev || conf::reference_count(ev) != 1)) ++bad;
          // The free must be ordered after its alloc: by the event, or a barrier.
          if (!has_ev && ooo_queue[size_t(a)] &&
              urEnqueueEventsWaitWithBarrier(q, 0, nullptr, nullptr) != UR_RESULT_SUCCESS)
            ++bad;
          if (urEnqueueUSMFreeExp(q, nullptr, out, has_ev ? 1 : 0, has_ev ? &ev : nullptr, nullptr) !=
              UR_RESULT_SUCCESS)
            ++bad;
          if (has_ev) urEventRelease(ev);
        } else if (out_of_memory(r)) {
          ++failed;
          if (out != kUntouchedPtr || (ev != kUntouchedEvent && ev != nullptr)) ++bad;
        } else {
          ++bad;
        }
        if (round % 8 == 7 && urQueueFinish(q) != UR_RESULT_SUCCESS) ++bad;
      }
      if (urQueueFinish(q) != UR_RESULT_SUCCESS) ++bad;
    });
  threads.emplace_back([&] {
    for (int round = 0; round < kRounds; ++round) {
      void *p = nullptr;
      if (round % 10 == 0 && !to_free.empty()) {
        p = to_free.back();
        to_free.pop_back();
      } else {
        const ur_result_t r = urUSMDeviceAlloc(context, device(), nullptr, nullptr, 64 * KiB, &p);
        if (out_of_memory(r)) continue;
        if (r != UR_RESULT_SUCCESS) {
          ++bad;
          continue;
        }
      }
      if (urUSMFree(context, p) != UR_RESULT_SUCCESS) ++bad;
      last_freed.store(p);
    }
  });
  threads.emplace_back([&] {
    ur_queue_handle_t q = queues[kAllocators];
    while (!stop.load()) {
      void *p = last_freed.load();
      if (!p) {
        std::this_thread::yield();
        continue;
      }
      const ur_result_t r = probe(q, p);
      if (r != UR_RESULT_SUCCESS && r != UR_RESULT_ERROR_INVALID_MEM_OBJECT) ++bad;
    }
    if (urQueueFinish(q) != UR_RESULT_SUCCESS) ++bad;
  });
  for (int i = 0; i <= kAllocators; ++i) threads[size_t(i)].join();
  stop.store(true);
  threads.back().join();
  for (void *p : to_free) pieces.push_back(p);
  EXPECT_EQ(0, bad.load());
  RecordProperty("failed_for_memory", failed.load());
  RecordProperty("succeeded", succeeded.load());
  for (auto q : queues) {
    EXPECT_SUCCESS(urQueueFinish(q));
    EXPECT_SUCCESS(urQueueRelease(q));
  }
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urQuarantineAttackTest);
CONF_INSTANTIATE_DEVICE_SUITE(urQuarantineOomTest);
