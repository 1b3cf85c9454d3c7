// SPDX-License-Identifier: Apache-2.0
// Several threads allocate from and free to one pool while another thread
// completes their free events. Meant to run under ThreadSanitizer too; the
// threads also check that nobody else writes into the blocks they hold.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ordo_pool/ordered_pool.hpp"

namespace ordo::pool::test {
namespace {

struct mt_event {
  std::atomic<bool> complete{false};
  std::atomic<int> pool_refs{0};
};

struct mt_command {
  std::vector<event_handle> deps;
};

class mt_backend : public backend {
public:
  ~mt_backend() override {
    for (auto &kv : chunks_) std::free(kv.first);
  }
  void *get_chunk(std::size_t size) override {
    void *p = std::aligned_alloc(64, (size + 63) / 64 * 64);
    std::lock_guard<std::mutex> l(mu_);
    chunks_[p] = size;
    return p;
  }
  void put_chunk(void *base, std::size_t size) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = chunks_.find(base);
      if (it == chunks_.end() || it->second != size) {
        bad.store(true);
        return;
      }
      chunks_.erase(it);
    }
    std::free(base);
  }
  bool event_complete(event_handle ev) override {
    auto *e = static_cast<mt_event *>(ev);
    if (e->pool_refs.load() <= 0) bad.store(true);
    return e->complete.load(std::memory_order_acquire);
  }
  bool add_dependency(command_context cmd, event_handle ev) override {
    static_cast<mt_command *>(cmd)->deps.push_back(ev);
    return true;
  }
  void retain_event(event_handle ev) override { static_cast<mt_event *>(ev)->pool_refs++; }
  void release_event(event_handle ev) override {
    if (static_cast<mt_event *>(ev)->pool_refs-- <= 0) bad.store(true);
  }
  std::size_t chunks_out() {
    std::lock_guard<std::mutex> l(mu_);
    return chunks_.size();
  }

  std::atomic<bool> bad{false};

private:
  std::mutex mu_;
  std::map<void *, std::size_t> chunks_;
};

// Events live until the end of the test; the completer finishes them in
// batches, a little later than they were handed over.
class completer {
public:
  explicit completer(std::size_t capacity) : events_(capacity) {}
  mt_event *make() {
    const std::size_t i = next_.fetch_add(1);
    return i < events_.size() ? &events_[i] : nullptr;
  }
  void submit(mt_event *e) {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(e);
  }
  void run(const std::atomic<bool> &stop) {
    std::mt19937 rng(7);
    for (;;) {
      std::deque<mt_event *> batch;
      {
        std::lock_guard<std::mutex> l(mu_);
        const std::size_t n = std::min<std::size_t>(queue_.size(), 1 + rng() % 8);
        for (std::size_t i = 0; i < n; ++i) {
          batch.push_back(queue_.front());
          queue_.pop_front();
        }
        if (batch.empty() && stop.load()) return;
      }
      for (mt_event *e : batch) e->complete.store(true, std::memory_order_release);
      std::this_thread::yield();
    }
  }
  static void wait(event_handle ev) {
    while (!static_cast<mt_event *>(ev)->complete.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  std::deque<mt_event> &all() { return events_; }

private:
  std::deque<mt_event> events_;
  std::atomic<std::size_t> next_{0};
  std::mutex mu_;
  std::deque<mt_event *> queue_;
};

struct held {
  unsigned char *p;
  std::size_t size;
  unsigned char tag;
};

TEST(OrderedPoolThreads, ConcurrentAllocFreeWithAsyncCompletion) {
  constexpr int workers = 4;
  constexpr int iterations = 2000;
  mt_backend be;
  completer done(workers * iterations + 16);
  std::atomic<bool> stop{false};
  std::atomic<int> corrupt{0}, ooms{0}, with_deps{0};
  std::atomic<mt_event *> recent{nullptr}; // a free event other threads may wait on
  int shared_queue = 0;
  {
    pool_config cfg;
    cfg.max_size = 1u << 20; // tight: rule 3 and out-of-memory happen
    cfg.chunk_granularity = 256u << 10;
    cfg.release_threshold = 512u << 10;
    ordered_pool pool(be, cfg);
    std::thread finisher([&] { done.run(stop); });

    auto worker = [&](int id) {
      std::mt19937 rng(100 + id);
      const int my_queue = 0;
      std::vector<held> mine;
      for (int it = 0; it < iterations; ++it) {
        const bool own = rng() % 4 != 0;
        mt_command cmd;
        alloc_request rq;
        rq.size = 1 + rng() % (64u << 10);
        rq.queue = own ? static_cast<queue_id>(&my_queue) : &shared_queue;
        rq.in_order = own;
        event_handle wait[1] = {recent.load()};
        if (wait[0] && rng() % 2) {
          rq.wait_list = wait;
          rq.wait_count = 1;
        }
        rq.command = &cmd;
        alloc_result res{};
        if (pool.alloc(rq, res) == status::success) {
          // As a device would: start only after the wait list and the
          // dependencies the pool added.
          for (std::size_t i = 0; i < rq.wait_count; ++i) completer::wait(rq.wait_list[i]);
          for (event_handle ev : cmd.deps) completer::wait(ev);
          if (!cmd.deps.empty()) with_deps++;
          const auto tag = static_cast<unsigned char>(id * 50 + it % 50 + 1);
          std::memset(res.ptr, tag, rq.size);
          mine.push_back({static_cast<unsigned char *>(res.ptr), rq.size, tag});
        } else {
          ooms++;
        }
        // Release some of what we hold; check nobody wrote into it.
        while (!mine.empty() && (mine.size() > 4 || rng() % 2)) {
          const std::size_t k = rng() % mine.size();
          held h = mine[k];
          mine[k] = mine.back();
          mine.pop_back();
          for (std::size_t i = 0; i < h.size; ++i)
            if (h.p[i] != h.tag) {
              corrupt++;
              break;
            }
          block_info info;
          if (!pool.lookup(h.p + h.size / 2, info) || info.base != h.p) corrupt++;
          if (rng() % 5 == 0) {
            EXPECT_EQ(pool.free_now(h.p), status::success);
          } else {
            mt_event *e = done.make();
            ASSERT_NE(e, nullptr);
            release_info rel{e, own ? static_cast<queue_id>(&my_queue) : &shared_queue, own};
            EXPECT_EQ(pool.free(h.p, rel), status::success);
            done.submit(e);
            recent.store(e);
          }
        }
        switch (rng() % 64) {
        case 0: pool.release_above_threshold(); break;
        case 1: pool.trim_to(256u << 10); break;
        case 2: pool.collect(); break;
        case 3: (void)pool.stats(); break;
        default: break;
        }
      }
      for (held &h : mine) EXPECT_EQ(pool.free_now(h.p), status::success);
    };

    std::vector<std::thread> threads;
    for (int i = 0; i < workers; ++i) threads.emplace_back(worker, i);
    for (auto &t : threads) t.join();
    stop.store(true);
    finisher.join();

    EXPECT_EQ(corrupt.load(), 0);
    EXPECT_EQ(pool.live_allocations(), 0u);
    EXPECT_EQ(pool.stats().used_current, 0u);
    EXPECT_LE(pool.stats().reserved_high, cfg.max_size);
    pool.collect();
    EXPECT_EQ(pool.pending_blocks(), 0u);
    pool.trim_to(0);
    EXPECT_EQ(pool.stats().reserved_current, 0u);
  }
  EXPECT_FALSE(be.bad.load());
  EXPECT_EQ(be.chunks_out(), 0u);
  for (mt_event &e : done.all()) EXPECT_EQ(e.pool_refs.load(), 0);
  std::printf("[ threads  ] %d workers x %d iterations: %d allocs out of memory, %d with "
              "internal dependencies\n",
              workers, iterations, ooms.load(), with_deps.load());
}

// A fixed pool of exactly one block, so "used" can never exceed one block: threads
// allocate and free it (through the lane cache, and through the core when a collect()
// has put it back there) while the main thread reads the statistics. A free through the
// core that put the block in the cache before counting it out let another thread's
// cached alloc count it in again: used 2 blocks of a 1-block pool (found under TSan's
// slowdown within seconds; CI runs this test under TSan).
TEST(OrderedPoolThreads, StatisticsNeverExceedWhatThePoolCanHold) {
  constexpr std::size_t kBlock = 4096;
  void *mem = std::aligned_alloc(4096, kBlock);
  ASSERT_NE(nullptr, mem);
  {
    mt_backend be;
    ordered_pool pool(be, pool_config{}, mem, kBlock);
    std::atomic<bool> stop{false};
    std::atomic<bool> bad_free{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([&] {
        alloc_request rq;
        rq.size = kBlock;
        while (!stop.load(std::memory_order_relaxed)) {
          alloc_result r{};
          if (pool.alloc(rq, r) == status::success && pool.free_now(r.ptr) != status::success) bad_free = true;
        }
      });
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) pool.collect();
    });
    std::size_t worst_current = 0, worst_high = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3000);
    while (std::chrono::steady_clock::now() < until && worst_high <= kBlock) {
      const pool_stats st = pool.stats();
      worst_current = std::max(worst_current, st.used_current);
      worst_high = std::max(worst_high, st.used_high);
    }
    stop = true;
    for (std::thread &t : threads) t.join();
    EXPECT_FALSE(bad_free.load()) << "a free of the pool's one live block was refused";
    EXPECT_LE(worst_current, kBlock) << "USED_CURRENT above what the pool can hold";
    EXPECT_LE(worst_high, kBlock) << "USED_HIGH above what the pool can hold";
    EXPECT_LE(pool.stats().used_high, kBlock);
    EXPECT_EQ(0u, pool.stats().used_current);
  }
  std::free(mem);
}

} // namespace
} // namespace ordo::pool::test
