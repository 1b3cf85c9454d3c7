// SPDX-License-Identifier: Apache-2.0
// Once warm, alloc and free do no heap allocation for their bookkeeping.
// This binary replaces the global operator new to count calls.
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include <gtest/gtest.h>

#include "ordo_pool/ordered_pool.hpp"
#include "sim_backend.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> news{0};
} // namespace

void *operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) news.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

namespace ordo::pool::test {
namespace {

TEST(OrderedPoolNoAlloc, SteadyStateHitPathDoesNotAllocate) {
  sim_backend be;
  ordered_pool pool(be, {});
  int qa = 0, qb = 0;
  constexpr int rounds = 2000, warm = 200;
  std::vector<sim_event *> events;
  for (int i = 0; i < rounds; ++i) events.push_back(be.make_event());
  const std::size_t sizes[] = {64, 200, 4096, 1000, 30000};
  sim_command cmd;
  void *held[4] = {};
  for (int i = 0; i < rounds; ++i) {
    if (i == warm) counting.store(true);
    // In-order reuse, cross-queue reuse after completion, synchronous frees,
    // splits and merges, a wait list.
    alloc_request a;
    a.size = sizes[i % 5];
    a.queue = &qa;
    a.in_order = true;
    a.command = &cmd;
    alloc_result ra{}, rb{};
    ASSERT_EQ(pool.alloc(a, ra), status::success);
    alloc_request b = a;
    b.size = sizes[(i + 2) % 5];
    b.queue = &qb;
    b.in_order = false;
    event_handle wait[1] = {i > 0 ? events[i - 1] : nullptr};
    b.wait_list = wait;
    b.wait_count = i > 0 ? 1 : 0;
    ASSERT_EQ(pool.alloc(b, rb), status::success);
    ASSERT_EQ(pool.free(ra.ptr, release_info{events[i], &qa, true}), status::success);
    if (held[i % 4]) {
      ASSERT_EQ(pool.free_now(held[i % 4]), status::success);
    }
    held[i % 4] = rb.ptr;
    if (i >= 3) events[i - 3]->complete = true;
    if (i % 50 == 0) pool.collect();
  }
  counting.store(false);
  EXPECT_EQ(news.load(), 0) << "heap allocations on the hit path";
  EXPECT_TRUE(cmd.deps.empty());
  for (void *p : held) {
    if (p) {
      ASSERT_EQ(pool.free_now(p), status::success);
    }
  }
}

} // namespace
} // namespace ordo::pool::test
