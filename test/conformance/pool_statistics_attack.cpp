// SPDX-License-Identifier: Apache-2.0
// Attacks on a pool's "used" statistics, USED_CURRENT_EXP and USED_HIGH_EXP
// (docs/async-alloc.md, "Statistics" and "The lane cache"; docs/ordered-pool.md,
// "pool_budget"): a pool has one core per kind it serves, each core's lane cache counts
// its allocs and frees on its own, and the pool reports the sum. Through the public API:
// one thread checked against a model after every step; threads on several cores of one
// pool (a peak reached together, a block passed between cores, a poller, frees across
// queues racing resets); pools destroyed and queues and contexts released with blocks
// live and cached. An alloc undone after its pool gave it a block (ordered-pool.md,
// "cancel()") needs the adapter to fail making the command, which no API call can ask
// for, so it is not attacked here.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "async_alloc_support.hpp"
#include "conformance.hpp"

namespace {

using namespace conf::async; // enqueue_alloc, stats_of, PoolStats, ...

constexpr size_t kGranule = 64; // docs/ordered-pool.md: blocks are multiples of 64 bytes

size_t used_of(ur_usm_pool_handle_t pool, ur_usm_pool_info_t what) {
  size_t v = ~size_t(0);
  EXPECT_SUCCESS(urUSMPoolGetInfoExp(pool, what, &v, nullptr));
  return v;
}
ur_result_t reset_used_high(ur_usm_pool_handle_t pool) {
  size_t any = 12345; // whatever is written, the mark becomes the current value
  return urUSMPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &any, sizeof any);
}

// Threads meet here; spins first, since the races attacked last nanoseconds.
class SpinBarrier {
public:
  explicit SpinBarrier(int n) : n_(n) {}
  void wait() {
    const int gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    for (unsigned spins = 0; gen_.load(std::memory_order_acquire) == gen; ++spins)
      if (spins > 2000) std::this_thread::yield();
  }

private:
  const int n_;
  std::atomic<int> count_{0}, gen_{0};
};

// Failures seen on other threads: counted, the first one described.
struct Violations {
  std::atomic<int> count{0};
  std::mutex mu;
  std::string first;
  void add(const std::string &what) {
    if (count.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(mu);
      first = what;
    }
  }
};

// Reads USED_CURRENT, then USED_HIGH, until `stop` (and once at least), with no reset
// meanwhile: never above `max_live`, never off the 64-byte grain (a wrapped count is
// both), USED_HIGH at least the USED_CURRENT just read and never falling.
void poll(ur_usm_pool_handle_t pool, const std::atomic<bool> &stop, size_t max_live, Violations &bad) {
  size_t prev_high = 0;
  for (size_t polls = 0; !stop.load() || polls == 0; ++polls) {
    const size_t now = used_of(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP);
    const size_t high = used_of(pool, UR_USM_POOL_INFO_USED_HIGH_EXP);
    if (now > max_live || now % kGranule || high > max_live || high < now || high < prev_high) {
      std::ostringstream os;
      os << "poll " << polls << ": USED_CURRENT " << now << ", USED_HIGH " << high << " (before: " << prev_high
         << "; at most " << max_live << " can be live)";
      bad.add(os.str());
    }
    prev_high = high;
  }
}

class urPoolStatisticsAttackTest : public conf::QueueTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    if (!async_supported(device()))
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP";
    for (ur_usm_type_t k : {UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED, UR_USM_TYPE_HOST})
      if (conf::usm_supported(device(), k)) all_kinds.push_back(k);
    for (ur_usm_type_t k : all_kinds)
      if (k != UR_USM_TYPE_HOST) device_kinds.push_back(k);
    ooq_supported = conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  }
  void TearDown() override {
    for (ur_queue_handle_t q : queues) {
      EXPECT_SUCCESS(urQueueFinish(q));
      EXPECT_SUCCESS(urQueueRelease(q));
    }
    for (auto &p : pools)
      EXPECT_SUCCESS(p.second ? urUSMPoolDestroyExp(context, device(), p.first) : urUSMPoolRelease(p.first));
    conf::QueueTest::TearDown();
  }

  // urUSMPoolCreate (`every`: every kind, one core each) or urUSMPoolCreateExp (device
  // and shared memory of the device); one budget either way.
  ur_usm_pool_handle_t make_pool(bool every, size_t max_size) {
    ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max_size, 0};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
    ur_usm_pool_handle_t p = nullptr;
    EXPECT_SUCCESS(every ? urUSMPoolCreate(context, &desc, &p) : urUSMPoolCreateExp(context, device(), &desc, &p));
    if (p) pools.push_back({p, !every});
    return p;
  }
  struct Target {
    ur_usm_pool_handle_t pool;
    std::vector<ur_usm_type_t> kinds; // what it serves here; threads take them in turn
    bool every;
  };
  // A device pool and a pool of every kind (host first where there is host USM, so
  // that pairs of kinds differ from the device pool's), each where it serves at least
  // `min_kinds` kinds.
  std::vector<Target> targets(size_t min_kinds = 1, size_t max_size = 0) {
    std::vector<Target> out;
    if (device_kinds.size() >= min_kinds) out.push_back({make_pool(false, max_size), device_kinds, false});
    if (all_kinds.size() >= min_kinds)
      out.push_back({make_pool(true, max_size), {all_kinds.rbegin(), all_kinds.rend()}, true});
    return out;
  }
  ur_queue_handle_t new_queue(bool out_of_order = false) {
    ur_queue_handle_t q = nullptr;
    EXPECT_SUCCESS(
        conf::make_queue(context, device(), out_of_order ? UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, &q));
    if (q) queues.push_back(q);
    return q;
  }
  ur_result_t alloc_now(ur_usm_pool_handle_t pool, ur_usm_type_t k, size_t bytes, void **out) {
    switch (k) {
    case UR_USM_TYPE_HOST: return urUSMHostAlloc(context, nullptr, pool, bytes, out);
    case UR_USM_TYPE_SHARED: return urUSMSharedAlloc(context, device(), nullptr, pool, bytes, out);
    default: return urUSMDeviceAlloc(context, device(), nullptr, pool, bytes, out);
    }
  }
  std::vector<ur_usm_type_t> all_kinds, device_kinds;
  bool ooq_supported = false;
  std::vector<ur_queue_handle_t> queues;
  std::vector<std::pair<ur_usm_pool_handle_t, bool>> pools; // (pool, made by urUSMPoolCreateExp)
};

// ---- one thread: a shadow model ------------------------------------------------------

void release(ur_event_handle_t e) {
  if (e) {
    EXPECT_SUCCESS(urEventRelease(e));
  }
}

struct Block {
  void *p = nullptr;
  size_t bytes = 0;              // charged: rounded up to 64
  ur_queue_handle_t q = nullptr; // null: urUSM*Alloc
  ur_event_handle_t ev = nullptr;
};

// Seeded sequences over a device pool and a pool of every kind; after every step
// USED_CURRENT is the model's live bytes and USED_HIGH its peak since the last reset.
TEST_P(urPoolStatisticsAttackTest, SequentialStatisticsAreExact) {
  constexpr size_t kMax = 8 << 20;
  const size_t sizes[] = {1, 64, 65, 100, 3000, 4096, 4096, 4096, 20000};
  for (const Target &tg : targets(1, kMax)) {
    ur_usm_pool_handle_t pool = tg.pool;
    ASSERT_NE(nullptr, pool);
    ur_queue_handle_t io[2] = {new_queue(), new_queue()};
    ur_queue_handle_t ooq = ooq_supported ? new_queue(true) : nullptr;
    std::vector<Block> live;
    std::vector<void *> freed;
    size_t used = 0, peak = 0;
    std::mt19937 rng(20261201u + unsigned(tg.every));
    auto pick = [&](size_t n) { return size_t(rng() % n); };
    std::string last = "the start";
    auto check = [&]() {
      const PoolStats s = stats_of(pool);
      const char *name = tg.every ? "every-kind pool" : "device pool";
      EXPECT_EQ(used, s.used) << name << ", USED_CURRENT after " << last << ": " << s;
      EXPECT_EQ(peak, s.used_high) << name << ", USED_HIGH after " << last << ": " << s;
      EXPECT_LE(s.used, s.reserved) << name << " after " << last;
      return !::testing::Test::HasFailure();
    };
    auto take = [&](size_t i) {
      Block b = live[i];
      live.erase(live.begin() + std::ptrdiff_t(i));
      used -= b.bytes;
      freed.push_back(b.p);
      return b;
    };
    for (int step = 0; step < 400; ++step) {
      const size_t bytes = sizes[pick(std::size(sizes))];
      const ur_usm_type_t k = tg.kinds[pick(tg.kinds.size())];
      std::ostringstream what;
      int op = int(pick(11));                                // 0-3 alloc, 4-6 free, 7 reset, 8 finish, 9-10 refused
      if (live.size() > 24 && op < 4) op = 4 + int(pick(3)); // keep it small: free instead
      if (live.empty() && op >= 4 && op <= 6) op = 0;
      if (op < 4) { // on an in-order queue (the caches' lanes), the out-of-order one, or urUSM*Alloc
        Block b;
        b.q = op < 2 ? io[op] : op == 2 ? ooq : nullptr;
        if (!b.q && !tg.every) b.q = io[0];
        const bool on_ooq = ooq && b.q == ooq;
        if (b.q) {
          ASSERT_SUCCESS(
              enqueue_alloc(k, b.q, pool, bytes, 0, nullptr, &b.p, on_ooq || pick(3) == 0 ? &b.ev : nullptr));
        } else {
          ASSERT_SUCCESS(alloc_now(pool, k, bytes, &b.p));
        }
        b.bytes = round_up(bytes, kGranule);
        used += b.bytes;
        peak = std::max(peak, used);
        live.push_back(b);
        what << conf::usm_kind_name(k) << " alloc of " << bytes
             << (on_ooq ? " on the out-of-order queue"
                 : b.q  ? " on an in-order queue"
                        : " by urUSM*Alloc");
      } else if (op < 7) { // a free: on the alloc's queue, on an in-order queue, or urUSMFree
        Block b = take(pick(live.size()));
        if (op == 6) { // once nothing can still be making the block
          if (b.q) {
            ASSERT_SUCCESS(urQueueFinish(b.q));
          }
          ASSERT_SUCCESS(urUSMFree(context, b.p));
        } else {
          ur_queue_handle_t fq = op == 4 && b.q ? b.q : b.q == io[0] ? io[1] : io[0];
          // Ordered after its alloc: the same in-order queue, the alloc's event, or a finished queue.
          const bool wait = b.ev && (fq != b.q || b.q == ooq || pick(2));
          if (b.q && fq != b.q && !b.ev) {
            ASSERT_SUCCESS(urQueueFinish(b.q));
          }
          ur_event_handle_t fe = nullptr;
          ASSERT_SUCCESS(urEnqueueUSMFreeExp(fq, pick(2) ? pool : nullptr, b.p, wait ? 1 : 0, wait ? &b.ev : nullptr,
                                             pick(2) ? &fe : nullptr));
          release(fe);
        }
        release(b.ev);
        what << (op == 6   ? "urUSMFree"
                 : op == 4 ? "free on its queue"
                           : "free on another queue")
             << " of " << b.bytes << " bytes";
      } else if (op == 7) {
        ASSERT_SUCCESS(reset_used_high(pool));
        peak = used;
        what << "a reset of USED_HIGH";
      } else if (op == 8) {
        ASSERT_SUCCESS(urQueueFinish(io[pick(2)])); // a synchronisation point: every cache drained
        what << "urQueueFinish";
      } else if (op == 9) { // past the maximum: each kind's error, nothing changed
        void *p = nullptr;
        EXPECT_EQ(out_of_memory_for(k), enqueue_alloc(k, io[0], pool, 2 * kMax, 0, nullptr, &p, nullptr));
        what << "a refused " << conf::usm_kind_name(k) << " alloc past the maximum";
      } else { // a second free of a freed block that no live block starts at
        void *p = freed.empty() ? nullptr : freed[pick(freed.size())];
        if (!p || std::any_of(live.begin(), live.end(), [&](const Block &b) { return b.p == p; })) continue;
        EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urEnqueueUSMFreeExp(io[0], nullptr, p, 0, nullptr, nullptr));
        what << "a refused second free";
      }
      last = "step " + std::to_string(step) + ", " + what.str();
      if (!check()) return;
    }
    for (ur_queue_handle_t q : {io[0], io[1], ooq})
      if (q) {
        ASSERT_SUCCESS(urQueueFinish(q));
      }
    while (!live.empty()) {
      Block b = take(live.size() - 1);
      ASSERT_SUCCESS(urUSMFree(context, b.p));
      release(b.ev);
    }
    last = "freeing the rest";
    if (!check()) return;
  }
}

// ---- threads -------------------------------------------------------------------------

// Two threads, each with its own in-order queue and kind (so its own core), allocate at
// once, meet, free, meet: the pool had both blocks live at one moment, so USED_HIGH must
// be both blocks. An alloc served by a lane cache raises the mark from its own sum of the
// cores' counts; two cores adding at the same instant must not each miss the other's
// block (nothing queries the pool while both are live, so nothing else raises it).
TEST_P(urPoolStatisticsAttackTest, PeakReachedByTwoCoresAtOnceIsCounted) {
  const std::vector<Target> configs = targets(2);
  if (configs.empty()) GTEST_SKIP() << found().label() << " offers fewer than two USM kinds to one pool";
  constexpr size_t kBytes = 4096;
#if defined(__SANITIZE_THREAD__)
  constexpr int kRounds = 5000; // ThreadSanitizer looks at the threads, not at this race
#else
  constexpr int kRounds = 30000; // a few microseconds each; the race is found in some of them
#endif
  for (const Target &cfg : configs) {
    ur_usm_pool_handle_t pool = cfg.pool;
    ASSERT_NE(nullptr, pool);
    const ur_usm_type_t kind[2] = {cfg.kinds[0], cfg.kinds[1]};
    ur_queue_handle_t q[2] = {new_queue(), new_queue()};
    ASSERT_TRUE(q[0] && q[1]);
    for (int t = 0; t < 2; ++t) { // a block in each lane's cache
      void *p = nullptr;
      ASSERT_SUCCESS(enqueue_alloc(kind[t], q[t], pool, kBytes, 0, nullptr, &p, nullptr));
      ASSERT_SUCCESS(urEnqueueUSMFreeExp(q[t], pool, p, 0, nullptr, nullptr));
    }
    ASSERT_SUCCESS(reset_used_high(pool));
    ASSERT_EQ(0u, used_of(pool, UR_USM_POOL_INFO_USED_HIGH_EXP));
    SpinBarrier barrier(2);
    Violations bad;
    std::atomic<int> missed{0};
    std::atomic<size_t> lowest{~size_t(0)};
    auto worker = [&](int t) {
      for (int round = 0; round < kRounds; ++round) {
        // The race lasts nanoseconds: the offset between the two allocs is swept over
        // the rounds, one thread held back a little more each round, then the other.
        if ((round / 128) % 2 == t)
          for (volatile int i = 0; i < round % 128; ++i) {
          }
        void *p = nullptr;
        if (enqueue_alloc(kind[t], q[t], pool, kBytes, 0, nullptr, &p, nullptr) != UR_RESULT_SUCCESS)
          bad.add("alloc failed");
        barrier.wait(); // both blocks live
        if (p && urEnqueueUSMFreeExp(q[t], pool, p, 0, nullptr, nullptr) != UR_RESULT_SUCCESS) bad.add("free failed");
        barrier.wait();
        if (t == 0) {
          const size_t high = used_of(pool, UR_USM_POOL_INFO_USED_HIGH_EXP);
          const size_t now = used_of(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP);
          if (high != 2 * kBytes) {
            missed.fetch_add(1);
            lowest.store(std::min(lowest.load(), high));
          }
          if (now != 0) bad.add("USED_CURRENT " + std::to_string(now) + " with nothing live");
          if (reset_used_high(pool) != UR_RESULT_SUCCESS) bad.add("reset failed");
        }
        barrier.wait();
      }
    };
    std::thread other(worker, 1);
    worker(0);
    other.join();
    EXPECT_EQ(0, bad.count.load()) << bad.first;
    EXPECT_EQ(0, missed.load()) << "in " << missed.load() << " of " << kRounds << " rounds ("
                                << conf::usm_kind_name(kind[0]) << " and " << conf::usm_kind_name(kind[1])
                                << " blocks of " << kBytes << " bytes, both live at once) USED_HIGH was below "
                                << 2 * kBytes << ", as low as " << lowest.load();
    for (ur_queue_handle_t qq : q) ASSERT_SUCCESS(urQueueFinish(qq));
  }
}

// Threads take turns (one block live at a time at most), each on its own core; a thread
// polls. A block freed on one core and then allocated on another is one block: the pool
// never reports more than one block in use, nor a peak above it (a sum of the cores'
// counts read at different moments could).
TEST_P(urPoolStatisticsAttackTest, BlockPassedBetweenCoresIsNeverCountedTwice) {
  const std::vector<Target> configs = targets(2);
  if (configs.empty()) GTEST_SKIP() << found().label() << " offers fewer than two USM kinds to one pool";
  constexpr size_t kBytes = 1000, kBlock = 1024;
  constexpr int kTurns = 1000;
  for (const Target &cfg : configs) {
    ur_usm_pool_handle_t pool = cfg.pool;
    const std::vector<ur_usm_type_t> &kinds = cfg.kinds;
    const int n = int(kinds.size());
    std::vector<ur_queue_handle_t> q;
    for (int t = 0; t < n; ++t) q.push_back(new_queue());
    std::atomic<int> turn{0};
    std::atomic<bool> done{false};
    Violations bad;
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
      threads.emplace_back([&, t] {
        for (int i = t; i < kTurns; i += n) {
          while (turn.load() != i) std::this_thread::yield();
          void *p = nullptr;
          if (enqueue_alloc(kinds[size_t(t)], q[size_t(t)], pool, kBytes, 0, nullptr, &p, nullptr) ||
              urEnqueueUSMFreeExp(q[size_t(t)], pool, p, 0, nullptr, nullptr))
            bad.add("alloc or free failed");
          turn.store(i + 1);
        }
      });
    std::thread poller([&] { poll(pool, done, kBlock, bad); });
    for (auto &th : threads) th.join();
    done.store(true);
    poller.join();
    EXPECT_EQ(0, bad.count.load()) << bad.count.load() << " violations; the first: " << bad.first;
    const PoolStats s = stats_of(pool);
    EXPECT_EQ(0u, s.used);
    EXPECT_EQ(kBlock, s.used_high) << "one block at a time, " << kTurns << " times";
  }
}

// Threads on one pool (kinds in turn, so several cores), each alloc/free pairs on its own
// in-order queue (the cache's path) with now and then a synchronisation point (every
// cache drained, lent blocks handed to their cores), while a thread polls (poll()):
// only values that can be; exact at the end.
TEST_P(urPoolStatisticsAttackTest, PollerSeesOnlyPossibleValues) {
  constexpr int kThreads = 4, kIters = 1500;
  constexpr size_t kSizes[] = {64, 1000, 4096};
  constexpr size_t kPerThread = 2 * 4096; // two blocks live at most per thread
  for (const Target &tg : targets()) {
    ur_usm_pool_handle_t pool = tg.pool;
    std::vector<ur_queue_handle_t> q;
    for (int t = 0; t < kThreads; ++t) q.push_back(new_queue());
    std::atomic<bool> done{false};
    Violations bad;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        const ur_usm_type_t k = tg.kinds[size_t(t) % tg.kinds.size()];
        ur_queue_handle_t qq = q[size_t(t)];
        for (int i = 0; i < kIters; ++i) {
          void *a = nullptr, *b = nullptr;
          const size_t bytes = kSizes[size_t(i + t) % std::size(kSizes)];
          if (enqueue_alloc(k, qq, pool, bytes, 0, nullptr, &a, nullptr)) bad.add("alloc failed");
          if (i % 5 == 0 && enqueue_alloc(k, qq, pool, 4096, 0, nullptr, &b, nullptr)) bad.add("alloc failed");
          if (a && urEnqueueUSMFreeExp(qq, pool, a, 0, nullptr, nullptr)) bad.add("free failed");
          if (b && urEnqueueUSMFreeExp(qq, nullptr, b, 0, nullptr, nullptr)) bad.add("free failed");
          if (i % 97 == 96 && urQueueFinish(qq)) bad.add("finish failed");
        }
      });
    std::thread poller([&] { poll(pool, done, kThreads * kPerThread, bad); });
    for (auto &th : threads) th.join();
    done.store(true);
    poller.join();
    EXPECT_EQ(0, bad.count.load()) << bad.count.load() << " violations; the first: " << bad.first;
    for (ur_queue_handle_t qq : q) ASSERT_SUCCESS(urQueueFinish(qq));
    const PoolStats s = stats_of(pool);
    EXPECT_EQ(0u, s.used) << s;
    EXPECT_LE(s.used_high, kThreads * kPerThread) << s;
    EXPECT_GE(s.used_high, 4096u) << s;
  }
}

// Blocks allocated on one thread's queue (with an event) and freed on the next thread's
// queue after that event, crossing cores and lanes, while another thread resets
// USED_HIGH again and again and reads both numbers. Afterwards every count is exact.
TEST_P(urPoolStatisticsAttackTest, CrossQueueFreesRacingResets) {
  constexpr int kThreads = 3, kIters = 800;
  constexpr size_t kMailbox = 4, kSizes[] = {256, 2048, 2048, 8192};
  constexpr size_t kMaxLive = kThreads * (kMailbox + 2) * 8192;
  using Item = std::pair<void *, ur_event_handle_t>;
  for (const Target &tg : targets()) {
    ur_usm_pool_handle_t pool = tg.pool;
    std::vector<ur_queue_handle_t> q;
    for (int t = 0; t < kThreads; ++t) q.push_back(new_queue());
    std::mutex mu;
    std::deque<Item> box[kThreads]; // blocks for thread t to free, under mu
    std::atomic<int> running{kThreads};
    Violations bad;
    auto free_after = [&](ur_queue_handle_t qq, Item item, bool named) {
      if (urEnqueueUSMFreeExp(qq, named ? pool : nullptr, item.first, 1, &item.second, nullptr))
        bad.add("cross-queue free failed");
      urEventRelease(item.second);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        const ur_usm_type_t k = tg.kinds[size_t(t) % tg.kinds.size()];
        ur_queue_handle_t qq = q[size_t(t)];
        for (int i = 0; i < kIters; ++i) {
          Item item{nullptr, nullptr}, got{nullptr, nullptr};
          if (enqueue_alloc(k, qq, pool, kSizes[size_t(i) % std::size(kSizes)], 0, nullptr, &item.first,
                            &item.second)) {
            bad.add("alloc failed");
            continue;
          }
          {
            std::lock_guard<std::mutex> lock(mu);
            std::deque<Item> &next = box[(t + 1) % kThreads];
            if (next.size() < kMailbox) {
              next.push_back(item);
              item.first = nullptr;
            }
            if (!box[t].empty()) {
              got = box[t].front();
              box[t].pop_front();
            }
          }
          if (item.first) free_after(qq, item, i % 2 == 0); // the neighbour's box is full: freed here
          if (got.first) free_after(qq, got, i % 3 == 0);
        }
        running.fetch_sub(1);
      });
    std::thread resetter([&] {
      for (size_t n = 0; running.load() > 0 || n == 0; ++n) {
        if (reset_used_high(pool)) bad.add("reset failed");
        const size_t now = used_of(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP);
        const size_t high = used_of(pool, UR_USM_POOL_INFO_USED_HIGH_EXP);
        if (now > kMaxLive || high > kMaxLive || now % kGranule || high % kGranule)
          bad.add("USED_CURRENT " + std::to_string(now) + ", USED_HIGH " + std::to_string(high) + ", at most " +
                  std::to_string(kMaxLive) + " can be live");
      }
    });
    for (auto &th : threads) th.join();
    resetter.join();
    for (int t = 0; t < kThreads; ++t)
      for (Item &item : box[t]) free_after(q[size_t(t)], item, true);
    EXPECT_EQ(0, bad.count.load()) << bad.count.load() << " violations; the first: " << bad.first;
    for (ur_queue_handle_t qq : q) ASSERT_SUCCESS(urQueueFinish(qq));
    PoolStats s = stats_of(pool);
    EXPECT_EQ(0u, s.used) << s;
    EXPECT_LE(s.used_high, kMaxLive) << s;
    ASSERT_SUCCESS(reset_used_high(pool));
    EXPECT_EQ(0u, stats_of(pool).used_high);
    void *p = nullptr; // one more block: exactly its size, current and peak
    ASSERT_SUCCESS(enqueue_alloc(tg.kinds[0], q[0], pool, 2048, 0, nullptr, &p, nullptr));
    s = stats_of(pool);
    EXPECT_EQ(2048u, s.used) << s;
    EXPECT_EQ(2048u, s.used_high) << s;
    ASSERT_SUCCESS(urEnqueueUSMFreeExp(q[0], pool, p, 0, nullptr, nullptr));
    EXPECT_EQ(0u, stats_of(pool).used);
  }
}

// ---- lifetimes ----------------------------------------------------------------------

// Blocks live and blocks waiting in the caches of several lanes when the pool is
// destroyed: its handle ends at once (INVALID_VALUE, a free naming it too), the live
// blocks stay usable and are freed naming no pool or with urUSMFree.
TEST_P(urPoolStatisticsAttackTest, PoolDestroyedWithLiveAndCachedBlocks) {
  if (device_kinds.empty()) GTEST_SKIP() << found().label() << " has neither device nor shared USM";
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &pool));
  constexpr int kQueues = 3;
  constexpr size_t kBytes = 4096;
  std::vector<ur_queue_handle_t> q;
  for (int i = 0; i < kQueues; ++i) q.push_back(new_queue());
  std::vector<std::pair<ur_queue_handle_t, void *>> kept;
  for (int i = 0; i < kQueues; ++i)
    for (ur_usm_type_t k : device_kinds) {
      void *a = nullptr, *b = nullptr;
      ASSERT_SUCCESS(enqueue_alloc(k, q[size_t(i)], pool, kBytes, 0, nullptr, &a, nullptr));
      ASSERT_SUCCESS(enqueue_alloc(k, q[size_t(i)], pool, kBytes, 0, nullptr, &b, nullptr));
      ASSERT_SUCCESS(urEnqueueUSMFreeExp(q[size_t(i)], pool, a, 0, nullptr, nullptr)); // to the lane's cache
      kept.push_back({q[size_t(i)], b});
    }
  PoolStats s = stats_of(pool);
  EXPECT_EQ(kept.size() * kBytes, s.used) << s;
  EXPECT_EQ((kept.size() + 1) * kBytes, s.used_high) << s; // the last pair's two blocks at once
  ASSERT_SUCCESS(urUSMPoolDestroyExp(context, device(), pool));
  size_t v = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, &v, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, reset_used_high(pool));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urEnqueueUSMFreeExp(kept[0].first, pool, kept[0].second, 0, nullptr, nullptr));
  for (size_t i = 0; i < kept.size(); ++i) {
    const uint32_t mark = 0x5747 + uint32_t(i);
    ASSERT_SUCCESS(fill32(kept[i].first, kept[i].second, kBytes, mark, 0, nullptr, nullptr));
    std::vector<uint32_t> back(kBytes / 4, 0);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(kept[i].first, true, back.data(), kept[i].second, kBytes, 0, nullptr, nullptr));
    EXPECT_EQ(back.size(), first_mismatch(back, mark)) << "a live block of the destroyed pool";
    if (i % 2) {
      ASSERT_SUCCESS(urEnqueueUSMFreeExp(kept[i].first, nullptr, kept[i].second, 0, nullptr, nullptr));
    } else {
      ASSERT_SUCCESS(urQueueFinish(kept[i].first));
      ASSERT_SUCCESS(urUSMFree(context, kept[i].second));
    }
  }
}

// Counts an extended deleter's calls. The counters live for the process: a context that
// goes late must not write into a finished test.
void count_deletion(void *counter) { static_cast<std::atomic<int> *>(counter)->fetch_add(1); }
std::atomic<int> &new_deleter_counter() {
  static std::mutex mu;
  static std::deque<std::atomic<int>> counters;
  std::lock_guard<std::mutex> lock(mu);
  return counters.emplace_back(0);
}

// A context of its own with a pool of every kind: blocks cached on two queues' lanes
// (with and without events), one queue released with blocks in its caches, the pool
// released with a block live, which is then freed with urUSMFree. The statistics stay
// exact while the pool can be asked, and the context goes with its last handle.
TEST_P(urPoolStatisticsAttackTest, QueueAndContextReleasedWithCachedBlocks) {
  if (all_kinds.empty()) GTEST_SKIP() << found().label() << " offers no USM";
  ur_context_handle_t own = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &own));
  std::atomic<int> &deleted = new_deleter_counter();
  const ur_result_t set = urContextSetExtendedDeleter(own, count_deletion, &deleted);
  ASSERT_TRUE(set == UR_RESULT_SUCCESS || set == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) << urinfo::result_name(set);
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(own, &desc, &pool));
  ur_queue_handle_t qa = nullptr, qb = nullptr;
  ASSERT_SUCCESS(urQueueCreate(own, dev, nullptr, &qa));
  ASSERT_SUCCESS(urQueueCreate(own, dev, nullptr, &qb));
  constexpr size_t kBytes = 512;
  std::vector<void *> live; // qb's second blocks
  for (ur_usm_type_t k : all_kinds)
    for (ur_queue_handle_t q : {qa, qb}) {
      void *a = nullptr, *b = nullptr;
      ur_event_handle_t freed = nullptr;
      ASSERT_SUCCESS(enqueue_alloc(k, q, pool, kBytes, 0, nullptr, &a, nullptr));
      ASSERT_SUCCESS(enqueue_alloc(k, q, pool, kBytes, 0, nullptr, &b, nullptr));
      ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, pool, a, 0, nullptr, &freed)); // cached with its event
      ASSERT_SUCCESS(urEventRelease(freed));
      if (q == qa) {
        ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, pool, b, 0, nullptr, nullptr)); // cached too
      } else {
        live.push_back(b);
      }
    }
  // The peak: qb's blocks so far and two more (every pair is allocated before its free).
  PoolStats s = stats_of(pool);
  EXPECT_EQ(live.size() * kBytes, s.used) << s;
  EXPECT_EQ((live.size() + 1) * kBytes, s.used_high) << s;
  ASSERT_SUCCESS(urQueueFinish(qa));
  ASSERT_SUCCESS(urQueueRelease(qa)); // its lanes' cached blocks go back to the cores
  s = stats_of(pool);
  EXPECT_EQ(live.size() * kBytes, s.used) << "after releasing a queue with cached blocks: " << s;
  ASSERT_SUCCESS(urQueueFinish(qb));
  for (size_t i = 1; i < live.size(); ++i) ASSERT_SUCCESS(urUSMFree(own, live[i]));
  EXPECT_EQ(kBytes, stats_of(pool).used);
  ASSERT_SUCCESS(urUSMPoolRelease(pool));  // a block still live: the pool waits for it
  ASSERT_SUCCESS(urUSMFree(own, live[0])); // the pool's last block: the pool goes
  ASSERT_SUCCESS(urQueueRelease(qb));
  EXPECT_SUCCESS(urContextRelease(own));
  if (set == UR_RESULT_SUCCESS) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2); // a worker may hold it briefly
    while (deleted.load() == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(1, deleted.load()) << "the context did not go with its last handle";
  }
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urPoolStatisticsAttackTest);
