// SPDX-License-Identifier: Apache-2.0
// Unit tests of the ordered pool core against the simulated backend.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "ordo_pool/ordered_pool.hpp"
#include "sim_backend.hpp"

namespace ordo::pool::test {
namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

// Queue identities: addresses of these objects.
int queue_a, queue_b, queue_c;
const queue_id qa = &queue_a, qb = &queue_b, qc = &queue_c;

struct req {
  alloc_request r;
  sim_command cmd;
  std::vector<event_handle> waits;

  req(std::size_t size, queue_id q = qa, bool in_order = true) {
    r.size = size;
    r.queue = q;
    r.in_order = in_order;
    r.command = &cmd;
  }
  req &wait(sim_event *e) {
    waits.push_back(e);
    r.wait_list = waits.data();
    r.wait_count = waits.size();
    return *this;
  }
  req &align(std::size_t a) {
    r.alignment = a;
    return *this;
  }
};

struct fixture : ::testing::Test {
  sim_backend be;

  static void *must_alloc(ordered_pool &p, req &&q, alloc_result *res = nullptr) {
    alloc_result out{};
    EXPECT_EQ(p.alloc(q.r, out), status::success);
    if (res) *res = out;
    return out.ptr;
  }
  static void *must_alloc(ordered_pool &p, req &q, alloc_result *res = nullptr) {
    return must_alloc(p, std::move(q), res);
  }
  static release_info on(sim_event *e, queue_id q = qa, bool in_order = true) { return release_info{e, q, in_order}; }
  static bool same_stats(const pool_stats &a, const pool_stats &b) {
    return a.reserved_current == b.reserved_current && a.reserved_high == b.reserved_high &&
           a.used_current == b.used_current && a.used_high == b.used_high;
  }
};

TEST_F(fixture, AllocRoundsAndAligns) {
  ordered_pool p(be, {});
  alloc_result r{};
  void *a = must_alloc(p, req(1), &r);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(r.block_size, 64u);
  EXPECT_EQ(r.source, alloc_source::new_chunk);
  EXPECT_FALSE(r.needs_zero);
  void *b = must_alloc(p, req(100), &r);
  EXPECT_EQ(r.block_size, 128u);
  EXPECT_EQ(r.source, alloc_source::free_block);
  EXPECT_EQ(static_cast<char *>(b) - static_cast<char *>(a), 64); // small requests share a chunk
  EXPECT_EQ(p.chunk_count(), 1u);
  EXPECT_EQ(p.stats().reserved_current, 2 * MiB);
  EXPECT_EQ(p.stats().used_current, 192u);
  void *c = must_alloc(p, req(10).align(4096));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) % 4096, 0u);
  EXPECT_EQ(p.stats().used_current, 256u); // padding is not "used"
  std::memset(c, 0xab, 10);
  EXPECT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(p.free_now(b), status::success);
  EXPECT_EQ(p.free_now(c), status::success);
  EXPECT_EQ(p.stats().used_current, 0u);
  EXPECT_EQ(p.live_allocations(), 0u);
}

TEST_F(fixture, BadArgumentsChangeNothing) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(1000));
  const pool_stats before = p.stats();
  alloc_result r{};
  EXPECT_EQ(p.alloc(req(0).r, r), status::invalid_size);
  EXPECT_EQ(p.alloc(req(64).align(3).r, r), status::invalid_alignment);
  EXPECT_EQ(p.alloc(req(64).align(96).r, r), status::invalid_alignment);
  req bad(64);
  bad.r.wait_count = 2; // but no list
  EXPECT_EQ(p.alloc(bad.r, r), status::invalid_argument);
  EXPECT_EQ(r.ptr, nullptr);
  EXPECT_TRUE(same_stats(before, p.stats()));
  EXPECT_EQ(p.free_now(a), status::success);
}

TEST_F(fixture, Rule1SameInOrderQueue) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  EXPECT_EQ(f->pool_refs, 1);
  EXPECT_EQ(p.pending_blocks(), 1u);
  alloc_result r{};
  req q(4 * KiB, qa);
  EXPECT_EQ(must_alloc(p, q, &r), a);
  EXPECT_EQ(r.source, alloc_source::ordered);
  EXPECT_EQ(r.dependencies_added, 0u);
  EXPECT_TRUE(q.cmd.deps.empty());
  // The new owner holds the previous release until a free command releases it.
  EXPECT_EQ(f->pool_refs, 1);
  EXPECT_EQ(p.pending_blocks(), 0u);
  sim_event *g = be.make_event();
  ASSERT_EQ(p.free(a, on(g, qa)), status::success);
  EXPECT_EQ(f->pool_refs, 0);
  EXPECT_EQ(g->pool_refs, 1);
}

TEST_F(fixture, NoReuseWhenUnordered) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  // Another queue, the same queue out of order: neither is ordered after f.
  void *b = must_alloc(p, req(4 * KiB, qb));
  void *c = must_alloc(p, req(4 * KiB, qb, false));
  EXPECT_NE(b, a);
  EXPECT_NE(c, a);
  EXPECT_EQ(f->pool_refs, 1);
}

TEST_F(fixture, Rule1OutOfOrderQueueIsNotOrdered) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa, false));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa, false)), status::success);
  EXPECT_NE(must_alloc(p, req(4 * KiB, qa, false)), a);
}

TEST_F(fixture, Rule1WaitListAcrossQueues) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(8 * KiB, qa, false));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa, false)), status::success);
  sim_event *other = be.make_event();
  alloc_result r{};
  req q(8 * KiB, qb, false);
  q.wait(other).wait(f);
  EXPECT_EQ(must_alloc(p, q, &r), a);
  EXPECT_EQ(r.source, alloc_source::ordered);
  EXPECT_TRUE(q.cmd.deps.empty());
  EXPECT_EQ(be.total_pool_refs(), 1); // f, held by the new owner
  f->complete = true;
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(be.total_pool_refs(), 0);
}

TEST_F(fixture, Rule1ReachabilityHook) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(8 * KiB, qa, false));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa, false)), status::success);
  be.ordered_hook = [f](command_context, event_handle ev) { return ev == f; };
  alloc_result r{};
  req q(8 * KiB, qb, false);
  EXPECT_EQ(must_alloc(p, q, &r), a);
  EXPECT_EQ(r.source, alloc_source::ordered);
  EXPECT_TRUE(q.cmd.deps.empty());
}

TEST_F(fixture, Rule2CompletedFreeAcrossQueues) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(16 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  f->complete = true;
  alloc_result r{};
  EXPECT_EQ(must_alloc(p, req(16 * KiB, qc, false), &r), a);
  EXPECT_EQ(r.source, alloc_source::completed);
  EXPECT_EQ(f->pool_refs, 0);
}

TEST_F(fixture, Rule2CanBeSwitchedOff) {
  pool_config cfg;
  cfg.reuse_completed = false;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(16 * KiB, qa));
  sim_event *f = be.make_event(true);
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  EXPECT_NE(must_alloc(p, req(16 * KiB, qb)), a);
  p.collect(); // a synchronisation point still promotes it
  EXPECT_EQ(f->pool_refs, 0);
  EXPECT_EQ(must_alloc(p, req(16 * KiB, qb)), a);
}

TEST_F(fixture, Rule3InternalDependencyOnlyAtTheLimit) {
  pool_config cfg;
  cfg.max_size = 2 * MiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(MiB, qa));
  void *b = must_alloc(p, req(MiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  alloc_result r{};
  req q(MiB, qb, false);
  EXPECT_EQ(must_alloc(p, q, &r), a);
  EXPECT_EQ(r.source, alloc_source::internal_dependency);
  EXPECT_EQ(r.dependencies_added, 1u);
  ASSERT_EQ(q.cmd.deps.size(), 1u);
  EXPECT_EQ(q.cmd.deps[0], f);
  EXPECT_EQ(f->pool_refs, 1); // held by the new owner until it is freed
  EXPECT_EQ(p.stats().reserved_current, 2 * MiB);
  EXPECT_EQ(p.free_now(b), status::success);
  sim_event *g = be.make_event();
  ASSERT_EQ(p.free(a, on(g, qb, false)), status::success);
  EXPECT_EQ(f->pool_refs, 0);
}

TEST_F(fixture, Rule3PreferredToNothingButNotToGrowth) {
  ordered_pool p(be, {}); // unlimited: growth comes first
  void *a = must_alloc(p, req(2 * MiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  alloc_result r{};
  req q(2 * MiB, qb);
  EXPECT_NE(must_alloc(p, q, &r), a);
  EXPECT_EQ(r.source, alloc_source::new_chunk);
  EXPECT_TRUE(q.cmd.deps.empty());
}

TEST_F(fixture, Rule3OffOrFailingMeansOutOfMemoryUnchanged) {
  pool_config cfg;
  cfg.max_size = MiB;
  cfg.reuse_with_dependency = false;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(MiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  const pool_stats before = p.stats();
  alloc_result r{};
  req q(MiB, qb);
  EXPECT_EQ(p.alloc(q.r, r), status::out_of_memory);
  EXPECT_TRUE(same_stats(before, p.stats()));
  EXPECT_EQ(p.pending_blocks(), 1u);

  cfg.reuse_with_dependency = true;
  ordered_pool p2(be, cfg);
  void *x = must_alloc(p2, req(MiB, qa));
  sim_event *g = be.make_event();
  ASSERT_EQ(p2.free(x, on(g, qa)), status::success);
  be.fail_dependencies = true;
  const pool_stats before2 = p2.stats();
  EXPECT_EQ(p2.alloc(req(MiB, qb).r, r), status::out_of_memory);
  EXPECT_TRUE(same_stats(before2, p2.stats()));
  EXPECT_EQ(g->pool_refs, 1);
  be.fail_dependencies = false;
}

TEST_F(fixture, Rule3JoinsAdjacentPendingBlocks) {
  pool_config cfg;
  cfg.max_size = 256 * KiB;
  cfg.chunk_granularity = 256 * KiB;
  ordered_pool p(be, cfg);
  void *blocks[4];
  sim_event *ev[4];
  queue_id queues[4] = {qa, qb, qc, qa};
  for (auto &b : blocks) b = must_alloc(p, req(64 * KiB, qa));
  for (int i = 0; i < 4; ++i) {
    ev[i] = be.make_event();
    ASSERT_EQ(p.free(blocks[i], on(ev[i], queues[i], false)), status::success);
  }
  EXPECT_EQ(p.pending_blocks(), 4u);
  alloc_result r{};
  req q(256 * KiB, qb, false);
  q.wait(ev[1]); // already ordered: no dependency needed for that one
  EXPECT_EQ(must_alloc(p, q, &r), blocks[0]);
  EXPECT_EQ(r.source, alloc_source::internal_dependency);
  EXPECT_EQ(q.cmd.deps.size(), 3u);
  EXPECT_EQ(be.total_pool_refs(), 4); // the four releases, held by the new owner
  EXPECT_EQ(p.pending_blocks(), 0u);
  EXPECT_EQ(p.stats().used_current, 256 * KiB);
}

TEST_F(fixture, SplitAndCoalesce) {
  pool_config cfg;
  cfg.chunk_granularity = 64 * KiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(16 * KiB));
  void *b = must_alloc(p, req(16 * KiB));
  void *c = must_alloc(p, req(16 * KiB));
  void *d = must_alloc(p, req(16 * KiB));
  EXPECT_EQ(p.chunk_count(), 1u);
  EXPECT_EQ(p.free_now(b), status::success);
  EXPECT_EQ(p.free_now(c), status::success); // b+c merge
  alloc_result r{};
  EXPECT_EQ(must_alloc(p, req(32 * KiB), &r), b);
  EXPECT_EQ(r.source, alloc_source::free_block);
  EXPECT_EQ(p.free_now(b), status::success);
  EXPECT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(p.free_now(d), status::success);
  EXPECT_EQ(must_alloc(p, req(64 * KiB)), a); // the whole chunk again
  EXPECT_EQ(p.chunk_count(), 1u);
  EXPECT_EQ(p.free_now(a), status::success);
}

// 100,000 live blocks: the live table (over 2 MiB) and the block objects (slabs past
// 2 MiB) live in the huge-page regions of bookkeeping_memory.hpp; every block is still
// found, refused when freed twice, and merged back into whole chunks.
TEST_F(fixture, HundredThousandBlocks) {
  pool_config cfg;
  cfg.chunk_granularity = 2 * MiB;
  ordered_pool p(be, cfg);
  constexpr std::size_t n = 100000;
  std::vector<void *> ptrs(n);
  for (std::size_t i = 0; i < n; ++i) ptrs[i] = must_alloc(p, req(64 + 64 * (i % 3)));
  EXPECT_EQ(p.live_allocations(), n);
  std::size_t used = 0;
  for (std::size_t i = 0; i < n; ++i) used += 64 + 64 * (i % 3);
  EXPECT_EQ(p.stats().used_current, used);
  for (std::size_t i = 0; i < n; i += 997) {
    block_info info;
    ASSERT_TRUE(p.lookup(static_cast<char *>(ptrs[i]) + 10, info));
    EXPECT_EQ(info.base, ptrs[i]);
    EXPECT_EQ(info.size, 64 + 64 * (i % 3));
  }
  // Every other block first (no merges), then the rest (each merges both ways).
  for (std::size_t i = 0; i < n; i += 2) ASSERT_EQ(p.free_now(ptrs[i]), status::success);
  for (std::size_t i = 0; i < n; i += 2 * 499) // an error walks its chunk's blocks: a sample
    ASSERT_EQ(p.free_now(ptrs[i]), status::double_free);
  for (std::size_t i = 1; i < n; i += 2) ASSERT_EQ(p.free_now(ptrs[i]), status::success);
  EXPECT_EQ(p.live_allocations(), 0u);
  EXPECT_EQ(p.stats().used_current, 0u);
  p.trim_to(0);
  EXPECT_EQ(p.chunk_count(), 0u);
  EXPECT_EQ(p.stats().reserved_current, 0u);
}

TEST_F(fixture, CompletedPendingBlocksCoalesce) {
  pool_config cfg;
  cfg.chunk_granularity = 64 * KiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(32 * KiB, qa));
  void *b = must_alloc(p, req(32 * KiB, qa));
  sim_event *e1 = be.make_event(), *e2 = be.make_event();
  ASSERT_EQ(p.free(a, on(e1, qa, false)), status::success);
  ASSERT_EQ(p.free(b, on(e2, qb, false)), status::success);
  EXPECT_EQ(p.pending_blocks(), 2u);
  e1->complete = e2->complete = true;
  p.collect();
  EXPECT_EQ(p.pending_blocks(), 0u);
  EXPECT_EQ(must_alloc(p, req(64 * KiB, qc)), a);
  EXPECT_EQ(p.chunk_count(), 1u);
  EXPECT_EQ(p.free_now(a), status::success);
}

TEST_F(fixture, SameInOrderQueuePendingBlocksMerge) {
  pool_config cfg;
  cfg.chunk_granularity = 64 * KiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(16 * KiB, qa));
  void *b = must_alloc(p, req(16 * KiB, qa));
  void *c = must_alloc(p, req(16 * KiB, qa));
  sim_event *e1 = be.make_event(), *e2 = be.make_event(), *e3 = be.make_event();
  ASSERT_EQ(p.free(a, on(e1, qa)), status::success);
  ASSERT_EQ(p.free(c, on(e2, qa)), status::success);
  ASSERT_EQ(p.free(b, on(e3, qa)), status::success); // joins both neighbours
  EXPECT_EQ(p.pending_blocks(), 1u);
  EXPECT_EQ(e1->pool_refs + e2->pool_refs, 0);
  EXPECT_EQ(e3->pool_refs, 1);
  alloc_result r{};
  EXPECT_EQ(must_alloc(p, req(48 * KiB, qa), &r), a);
  EXPECT_EQ(r.source, alloc_source::ordered);
  EXPECT_EQ(be.total_pool_refs(), 1); // e3, held by the new owner
}

TEST_F(fixture, PartialReuseKeepsTheRestPending) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(64 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  EXPECT_EQ(must_alloc(p, req(16 * KiB, qa)), a);
  EXPECT_EQ(f->pool_refs, 2); // the remaining 48 KiB still wait for f; the new owner holds it too
  EXPECT_EQ(p.pending_blocks(), 1u);
  EXPECT_NE(must_alloc(p, req(48 * KiB, qb)), static_cast<char *>(a) + 16 * KiB);
  f->complete = true;
  EXPECT_EQ(must_alloc(p, req(48 * KiB, qb)), static_cast<char *>(a) + 16 * KiB);
  EXPECT_EQ(be.total_pool_refs(), 1);
  ASSERT_EQ(p.free_now(a), status::success); // f completed: nothing left pending
  EXPECT_EQ(be.total_pool_refs(), 0);
}

TEST_F(fixture, MaxSizeAndErrorsLeaveStateUnchanged) {
  pool_config cfg;
  cfg.max_size = 3 * MiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(MiB));
  EXPECT_EQ(p.stats().reserved_current, 2 * MiB);
  const pool_stats before = p.stats();
  const std::size_t gets = be.get_calls;
  alloc_result r{};
  EXPECT_EQ(p.alloc(req(MiB + 512 * KiB).r, r), status::out_of_memory);
  EXPECT_EQ(p.alloc(req(4 * MiB).r, r), status::out_of_memory);
  EXPECT_EQ(p.alloc(req(SIZE_MAX - 8).r, r), status::out_of_memory);
  EXPECT_TRUE(same_stats(before, p.stats()));
  EXPECT_EQ(be.get_calls, gets);           // never asked beyond the limit
  void *b = must_alloc(p, req(MiB));       // the rest of the first chunk
  void *c = must_alloc(p, req(512 * KiB)); // a second chunk, capped to 1 MiB
  EXPECT_EQ(p.stats().reserved_current, 3 * MiB);
  EXPECT_EQ(p.stats().reserved_high, 3 * MiB);
  EXPECT_EQ(p.max_size(), 3 * MiB);
  for (void *x : {a, b, c}) EXPECT_EQ(p.free_now(x), status::success);
}

TEST_F(fixture, BackendFailureIsOutOfMemory) {
  ordered_pool p(be, {});
  be.fail_chunks = true;
  alloc_result r{};
  EXPECT_EQ(p.alloc(req(100).r, r), status::out_of_memory);
  EXPECT_EQ(p.stats().reserved_current, 0u);
  EXPECT_EQ(p.chunk_count(), 0u);
  be.fail_chunks = false;
  be.refuse_above = 1 * MiB; // the rounded chunk fails, the exact one not
  void *a = must_alloc(p, req(100 * KiB));
  EXPECT_EQ(p.stats().reserved_current, 100 * KiB);
  EXPECT_EQ(p.free_now(a), status::success);
}

TEST_F(fixture, ThresholdReleaseAtSync) {
  pool_config cfg;
  cfg.release_threshold = 2 * MiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(2 * MiB, qa));
  void *b = must_alloc(p, req(2 * MiB, qa));
  void *c = must_alloc(p, req(2 * MiB, qa));
  EXPECT_EQ(p.stats().reserved_current, 6 * MiB);
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  ASSERT_EQ(p.free_now(b), status::success);
  EXPECT_EQ(p.release_above_threshold(), 2 * MiB); // b; a is still pending
  EXPECT_EQ(p.stats().reserved_current, 4 * MiB);
  f->complete = true;                              // the queue finished
  EXPECT_EQ(p.release_above_threshold(), 2 * MiB); // now a too
  EXPECT_EQ(p.stats().reserved_current, 2 * MiB);
  EXPECT_EQ(p.release_above_threshold(), 0u); // never below what is in use
  EXPECT_EQ(p.stats().reserved_high, 6 * MiB);
  EXPECT_EQ(be.total_pool_refs(), 0);
  EXPECT_EQ(p.set_release_threshold(0), status::success);
  EXPECT_EQ(p.release_above_threshold(), 0u);
  EXPECT_EQ(p.free_now(c), status::success);
  EXPECT_EQ(p.release_above_threshold(), 2 * MiB);
  EXPECT_EQ(p.stats().reserved_current, 0u);
  EXPECT_EQ(be.outstanding, 0u);
}

TEST_F(fixture, TrimTo) {
  ordered_pool p(be, {});
  void *keep = must_alloc(p, req(MiB));
  std::vector<void *> v;
  for (int i = 0; i < 3; ++i) v.push_back(must_alloc(p, req(2 * MiB)));
  for (void *x : v) ASSERT_EQ(p.free_now(x), status::success);
  EXPECT_EQ(p.stats().reserved_current, 8 * MiB);
  EXPECT_EQ(p.trim_to(5 * MiB), 4 * MiB);
  EXPECT_EQ(p.stats().reserved_current, 4 * MiB);
  EXPECT_EQ(p.trim_to(0), 2 * MiB);
  EXPECT_EQ(p.stats().reserved_current, 2 * MiB); // the chunk in use stays
  EXPECT_EQ(p.free_now(keep), status::success);
  EXPECT_EQ(p.trim_to(0), 2 * MiB);
  EXPECT_EQ(be.outstanding, 0u);
}

TEST_F(fixture, ZeroInitFlag) {
  pool_config cfg;
  cfg.zero_init = true;
  ordered_pool p(be, cfg);
  alloc_result r{};
  void *a = must_alloc(p, req(100), &r);
  EXPECT_TRUE(r.needs_zero);
  EXPECT_TRUE(p.zero_init());
  EXPECT_EQ(p.free_now(a), status::success);
}

TEST_F(fixture, FixedPoolFromUserMemory) {
  std::vector<unsigned char> mem(256 * KiB + 64);
  unsigned char *base = mem.data() + 8; // deliberately misaligned
  {
    ordered_pool p(be, {}, base, 256 * KiB);
    EXPECT_TRUE(p.is_fixed());
    EXPECT_EQ(p.max_size(), 256 * KiB);
    EXPECT_EQ(p.stats().reserved_current, 256 * KiB);
    void *a = must_alloc(p, req(100 * KiB));
    EXPECT_GE(static_cast<unsigned char *>(a), base);
    EXPECT_TRUE(p.owns(a));
    alloc_result r{};
    EXPECT_EQ(p.alloc(req(200 * KiB).r, r), status::out_of_memory);
    void *b = must_alloc(p, req(100 * KiB));
    EXPECT_LE(static_cast<unsigned char *>(b) + 100 * KiB, base + 256 * KiB);
    EXPECT_EQ(p.free_now(a), status::success);
    EXPECT_EQ(p.free_now(b), status::success);
    EXPECT_EQ(p.trim_to(0), 0u);
    EXPECT_EQ(p.release_above_threshold(), 0u);
    EXPECT_EQ(p.chunk_count(), 1u);
  }
  EXPECT_EQ(be.get_calls, 0u);
  EXPECT_EQ(be.put_calls, 0u);
}

TEST_F(fixture, StatisticsAreExact) {
  ordered_pool p(be, {});
  std::vector<void *> v;
  std::size_t used = 0;
  for (std::size_t s : {1u, 63u, 64u, 65u, 1000u, 4096u, 100000u}) {
    v.push_back(must_alloc(p, req(s)));
    used += (s + 63) / 64 * 64;
    EXPECT_EQ(p.stats().used_current, used);
  }
  EXPECT_EQ(p.stats().used_high, used);
  const std::size_t high = used;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(p.free_now(v.back()), status::success);
    v.pop_back();
  }
  used = 64 + 64 + 64 + 128;
  EXPECT_EQ(p.stats().used_current, used);
  EXPECT_EQ(p.stats().used_high, high);
  p.reset_used_high();
  EXPECT_EQ(p.stats().used_high, used);
  EXPECT_EQ(p.stats().reserved_high, 2 * MiB);
  for (void *x : v) ASSERT_EQ(p.free_now(x), status::success);
  p.trim_to(0);
  EXPECT_EQ(p.stats().reserved_high, 2 * MiB);
  p.reset_reserved_high();
  EXPECT_EQ(p.stats().reserved_high, 0u);
}

TEST_F(fixture, FreeErrors) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa));
  void *b = must_alloc(p, req(4 * KiB, qa));
  int local = 0;
  const pool_stats before = p.stats();
  EXPECT_EQ(p.free_now(&local), status::not_owned);
  EXPECT_EQ(p.free_now(nullptr), status::not_owned);
  EXPECT_EQ(p.free_now(static_cast<char *>(a) + 64), status::not_block_start);
  EXPECT_TRUE(same_stats(before, p.stats()));
  EXPECT_EQ(p.live_allocations(), 2u);

  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  const pool_stats mid = p.stats();
  sim_event *g = be.make_event();
  EXPECT_EQ(p.free(a, on(g, qa)), status::double_free); // while pending
  EXPECT_EQ(g->pool_refs, 0);
  EXPECT_EQ(f->pool_refs, 1);
  EXPECT_TRUE(same_stats(mid, p.stats()));
  ASSERT_EQ(p.free_now(b), status::success);
  EXPECT_EQ(p.free_now(b), status::double_free); // after it merged
  EXPECT_EQ(p.live_allocations(), 0u);
}

TEST_F(fixture, LookupInteriorPointers) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(1000));
  block_info info;
  ASSERT_TRUE(p.lookup(static_cast<char *>(a) + 999, info));
  EXPECT_EQ(info.base, a);
  EXPECT_EQ(info.size, 1000u);
  EXPECT_EQ(info.block_size, 1024u);
  ASSERT_TRUE(p.lookup(a, info));
  EXPECT_FALSE(p.lookup(static_cast<char *>(a) + 1024, info)); // free tail
  EXPECT_TRUE(p.owns(static_cast<char *>(a) + 1024));
  int local;
  EXPECT_FALSE(p.lookup(&local, info));
  EXPECT_FALSE(p.owns(&local));
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_FALSE(p.lookup(a, info));
}

TEST_F(fixture, DestroyWithLiveAllocationsReturnsEverything) {
  sim_event *f = be.make_event();
  {
    ordered_pool p(be, {});
    must_alloc(p, req(100));
    void *b = must_alloc(p, req(3 * MiB));
    ASSERT_EQ(p.free(b, on(f)), status::success);
    EXPECT_EQ(p.live_allocations(), 1u);
    EXPECT_EQ(f->pool_refs, 1);
  }
  EXPECT_EQ(f->pool_refs, 0);
  EXPECT_EQ(be.outstanding, 0u);
  EXPECT_EQ(be.chunks_out(), 0u);
}

TEST_F(fixture, ThresholdAboveMaxIsRejected) {
  pool_config cfg;
  cfg.max_size = 4 * MiB;
  ordered_pool p(be, cfg);
  EXPECT_EQ(p.set_release_threshold(8 * MiB), status::invalid_argument);
  EXPECT_EQ(p.release_threshold(), 0u);
  EXPECT_EQ(p.set_release_threshold(4 * MiB), status::success);
  EXPECT_EQ(p.release_threshold(), 4 * MiB);
}

TEST_F(fixture, ForgetQueue) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  p.forget_queue(qa); // qa released; its identity may now be reused
  EXPECT_NE(must_alloc(p, req(4 * KiB, qa)), a);
  f->complete = true;
  EXPECT_EQ(must_alloc(p, req(4 * KiB, qa)), a);
}

TEST_F(fixture, LargeAlignmentFromPendingAndFree) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(64 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  void *b = must_alloc(p, req(8 * KiB, qa).align(64 * KiB));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % (64 * KiB), 0u);
  f->complete = true;
  p.collect();
  // f is held by b's owner when b was carved from a's pending block, and by nobody
  // when the aligned block lay elsewhere in the chunk (it depends on the chunk's address).
  EXPECT_LE(be.total_pool_refs(), 1);
  EXPECT_EQ(p.stats().used_current, 8 * KiB);
  ASSERT_EQ(p.free_now(b), status::success);
  EXPECT_EQ(be.total_pool_refs(), 0);
}

// A synchronous free of a block handed over under rule 3 keeps the previous
// owner's free pending: an unordered alloc cannot take the block before it ends.
TEST_F(fixture, SyncFreeAfterRule3KeepsPreviousFreePending) {
  pool_config cfg;
  cfg.max_size = 2 * MiB;
  ordered_pool p(be, cfg);
  void *a1 = must_alloc(p, req(2 * MiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a1, on(f, qa)), status::success);
  alloc_result r2{};
  req q2(2 * MiB, qb, false);
  void *a2 = must_alloc(p, q2, &r2);
  ASSERT_EQ(a2, a1);
  EXPECT_EQ(r2.source, alloc_source::internal_dependency);
  ASSERT_EQ(p.free_now(a2), status::success);
  EXPECT_EQ(p.pending_blocks(), 1u);
  alloc_result r3{};
  req q3(2 * MiB, qc, false);
  be.fail_dependencies = true; // an unordered alloc that cannot wait gets nothing
  EXPECT_EQ(p.alloc(q3.r, r3), status::out_of_memory);
  be.fail_dependencies = false;
  req q4(2 * MiB, qc, false);
  EXPECT_EQ(must_alloc(p, q4), a1); // rule 3 again: it waits for f
  ASSERT_EQ(q4.cmd.deps.size(), 1u);
  EXPECT_EQ(q4.cmd.deps[0], f);
  f->complete = true;
  ASSERT_EQ(p.free_now(a1), status::success);
  EXPECT_EQ(p.pending_blocks(), 0u);
  EXPECT_EQ(be.total_pool_refs(), 0);
}

// The same after rule 1 (the free's event in the wait list).
TEST_F(fixture, SyncFreeAfterRule1KeepsPreviousFreePending) {
  ordered_pool p(be, {});
  void *a1 = must_alloc(p, req(64 * KiB, qa, false));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a1, on(f, qa, false)), status::success);
  req q2(64 * KiB, qb, false);
  q2.wait(f);
  ASSERT_EQ(must_alloc(p, q2), a1);
  ASSERT_EQ(p.free_now(a1), status::success);
  EXPECT_NE(must_alloc(p, req(64 * KiB, qc, false)), a1); // unordered: other memory
  f->complete = true;
  EXPECT_EQ(must_alloc(p, req(64 * KiB, qc, false)), a1);
}

// An undone alloc leaves the pool as it was: statistics, high-water marks and a
// chunk grown for it included; a handed-over block is pending again.
TEST_F(fixture, CancelRestoresEverything) {
  ordered_pool p(be, {});
  const pool_stats before = p.stats();
  alloc_result r{};
  must_alloc(p, req(100 * KiB), &r);
  EXPECT_EQ(r.source, alloc_source::new_chunk);
  ASSERT_EQ(p.cancel(r), status::success);
  EXPECT_TRUE(same_stats(before, p.stats()));
  EXPECT_EQ(p.chunk_count(), 0u);

  void *a = must_alloc(p, req(64 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  const pool_stats mid = p.stats();
  req q(64 * KiB, qa);
  ASSERT_EQ(must_alloc(p, q, &r), a);
  ASSERT_EQ(p.cancel(r), status::success);
  EXPECT_TRUE(same_stats(mid, p.stats()));
  EXPECT_EQ(p.pending_blocks(), 1u);
  EXPECT_NE(must_alloc(p, req(64 * KiB, qb, false)), a);
  EXPECT_EQ(p.cancel(r), status::double_free); // already undone
}

// A rule-3 run of several pending blocks: a synchronous free puts each piece
// back on its own release; completed ones become free.
TEST_F(fixture, SyncFreeOfRule3RunRestoresEachPiece) {
  pool_config cfg;
  cfg.max_size = 256 * KiB;
  cfg.chunk_granularity = 256 * KiB;
  ordered_pool p(be, cfg);
  void *blocks[4];
  sim_event *ev[4];
  for (auto &b : blocks) b = must_alloc(p, req(64 * KiB, qa));
  for (int i = 0; i < 4; ++i) {
    ev[i] = be.make_event();
    ASSERT_EQ(p.free(blocks[i], on(ev[i], qa, false)), status::success);
  }
  req q(256 * KiB, qb, false);
  ASSERT_EQ(must_alloc(p, q), blocks[0]);
  ev[1]->complete = true;
  ASSERT_EQ(p.free_now(blocks[0]), status::success);
  EXPECT_EQ(p.pending_blocks(), 3u);
  EXPECT_EQ(be.total_pool_refs(), 3);
  // The completed piece is free memory again; the others wait.
  EXPECT_EQ(must_alloc(p, req(64 * KiB, qc, false)), blocks[1]);
  be.fail_dependencies = true;
  alloc_result r{};
  EXPECT_EQ(p.alloc(req(64 * KiB, qc, false).r, r), status::out_of_memory);
  be.fail_dependencies = false;
  for (sim_event *e : ev) e->complete = true;
  p.collect();
  EXPECT_EQ(p.pending_blocks(), 0u);
  EXPECT_EQ(be.total_pool_refs(), 0);
  EXPECT_EQ(p.free_now(blocks[1]), status::success);
}

// Cores of one UR pool share its maximum, threshold and statistics.
TEST_F(fixture, SharedBudgetLimitsEveryCore) {
  auto budget = std::make_shared<pool_budget>(4 * MiB, 0);
  pool_config cfg;
  cfg.chunk_granularity = 64 * KiB; // chunks of exactly what is asked
  sim_backend be2;
  ordered_pool host(be, cfg, budget), device(be2, cfg, budget);
  void *h = must_alloc(host, req(3 * MiB));
  alloc_result r{};
  const pool_stats before = device.stats();
  EXPECT_EQ(device.alloc(req(3 * MiB).r, r), status::out_of_memory);
  EXPECT_TRUE(same_stats(before, device.stats()));
  EXPECT_LE(budget->stats().reserved_current, 4 * MiB);
  void *d = must_alloc(device, req(MiB / 2));
  EXPECT_EQ(host.stats().used_current, 3 * MiB + MiB / 2);
  EXPECT_EQ(host.stats().used_high, 3 * MiB + MiB / 2);
  ASSERT_EQ(host.free_now(h), status::success);
  ASSERT_EQ(device.free_now(d), status::success);
  // Trim keeps what is asked over both cores together, not in each.
  host.trim_to(0);
  device.trim_to(0);
  EXPECT_EQ(budget->stats().reserved_current, 0u);
}

// Under a maximum a core grows by its requests only: the slack of a larger chunk would be
// room the budget's other cores could not reserve (found by a review: 240 MiB of 2 MiB
// device blocks left no room for a 16 MiB host block in a 256 MiB pool).
TEST_F(fixture, SharedBudgetCoresGrowByTheRequestOnly) {
  auto budget = std::make_shared<pool_budget>(256 * MiB, 0);
  pool_config cfg;
  sim_backend be2;
  ordered_pool device(be, cfg, budget), host(be2, cfg, budget);
  std::vector<void *> blocks;
  for (int i = 0; i < 120; ++i) blocks.push_back(must_alloc(device, req(2 * MiB)));
  EXPECT_EQ(budget->stats().reserved_current, 240 * MiB);
  void *h = must_alloc(host, req(16 * MiB)); // exactly the maximum in use
  EXPECT_EQ(budget->stats().reserved_current, 256 * MiB);
  ASSERT_EQ(host.free_now(h), status::success);
  for (void *b : blocks) ASSERT_EQ(device.free_now(b), status::success);
}

// At its maximum, a pool gives back wholly free chunks to grow a bigger one, but
// never when the request could not fit anyway.
TEST_F(fixture, WhollyFreeChunksMakeRoomUnderTheMaximum) {
  pool_config cfg;
  cfg.max_size = 4 * MiB;
  ordered_pool p(be, cfg);
  void *a = must_alloc(p, req(2 * MiB));
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(p.stats().reserved_current, 2 * MiB);
  alloc_result r{};
  const pool_stats before = p.stats();
  EXPECT_EQ(p.alloc(req(5 * MiB).r, r), status::out_of_memory);
  EXPECT_TRUE(same_stats(before, p.stats())); // cannot fit: the free chunk stays
  void *b = must_alloc(p, req(3 * MiB));
  EXPECT_NE(b, nullptr);
  EXPECT_LE(p.stats().reserved_current, 4 * MiB);
  EXPECT_EQ(p.chunk_count(), 1u);
  ASSERT_EQ(p.free_now(b), status::success);
}

// Chunk sizes (docs/ordered-pool.md): a core that holds a lot grows by a share of it,
// so requests each bigger than the granularity do not cost a chunk each, and the
// unused part stays small; a backend that refuses the bigger chunk still serves the
// request with exactly what it needs.
TEST_F(fixture, ChunksGrowWithWhatTheCoreHolds) {
  pool_config cfg;
  cfg.chunk_granularity = 64 * KiB;
  ordered_pool p(be, cfg);
  constexpr std::size_t n = 1000, size = 96 * KiB; // one 128 KiB chunk each, without the share
  std::vector<void *> ptrs;
  for (std::size_t i = 0; i < n; ++i) ptrs.push_back(must_alloc(p, req(size)));
  EXPECT_LT(p.chunk_count(), n / 8);
  EXPECT_EQ(p.stats().used_high, n * size);
  EXPECT_LE(p.stats().reserved_high, n * size + n * size / 8); // at most ~1/16 unused, plus the first chunks
  // The backend refuses anything above one request: the next growth asks for exactly it.
  be.refuse_above = size;
  const std::size_t gets = be.get_calls;
  std::size_t reserved = 0;
  while (be.get_calls == gets) { // the newest chunk's room first, then one growth
    reserved = p.stats().reserved_current;
    ptrs.push_back(must_alloc(p, req(size)));
  }
  EXPECT_EQ(be.get_calls, gets + 2); // the share refused, then exactly the request
  EXPECT_EQ(p.stats().reserved_current, reserved + size);
  for (void *x : ptrs) ASSERT_EQ(p.free_now(x), status::success);
  p.trim_to(0);
  EXPECT_EQ(p.chunk_count(), 0u);
  EXPECT_EQ(p.stats().reserved_current, 0u);
  EXPECT_EQ(be.outstanding, 0u);
}

// The quick list (docs/ordered-pool.md): a pair of one size reuses the same block
// with no index work, and everything observable stays as without it.
TEST_F(fixture, QuickListPairReusesTheBlockAndKeepsEverythingExact) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB));
  const pool_stats grown = p.stats();
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(p.stats().used_current, 0u);         // not in use once freed
  EXPECT_EQ(p.free_now(a), status::double_free); // a kept block is freed memory
  EXPECT_EQ(p.free(a, on(nullptr)), status::double_free);
  block_info info;
  EXPECT_FALSE(p.lookup(a, info));
  alloc_result r{};
  EXPECT_EQ(must_alloc(p, req(4 * KiB, qb, false), &r), a); // any queue: nothing pending
  EXPECT_EQ(r.source, alloc_source::free_block);
  EXPECT_TRUE(same_stats(p.stats(), grown));
  ASSERT_EQ(p.free_now(a), status::success);
  // A kept block does not keep its chunk: trim flushes the list first.
  EXPECT_EQ(p.idle_bytes(), p.stats().reserved_current);
  p.trim_to(0);
  EXPECT_EQ(p.chunk_count(), 0u);
  EXPECT_EQ(p.stats().reserved_current, 0u);
}

TEST_F(fixture, QuickListPendingBlockGoesOnlyToWhatIsOrderedAfterItsFree) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB));
  sim_event *e = be.make_event();
  ASSERT_EQ(p.free(a, on(e, qa)), status::success);
  EXPECT_EQ(p.pending_blocks(), 1u); // kept whole, still pending on e
  EXPECT_EQ(e->pool_refs, 1);
  alloc_result r{};
  void *other = must_alloc(p, req(4 * KiB, qb), &r); // another queue, not ordered
  EXPECT_NE(other, a);
  EXPECT_EQ(r.dependencies_added, 0u);
  EXPECT_EQ(p.pending_blocks(), 1u);
  void *again = must_alloc(p, req(4 * KiB, qa), &r); // same in-order queue: rule 1
  EXPECT_EQ(again, a);
  EXPECT_EQ(r.source, alloc_source::ordered);
  EXPECT_EQ(p.pending_blocks(), 0u);
  // A synchronous free leaves it pending on the previous owner's free again.
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(p.pending_blocks(), 1u);
  e->complete = true;
  p.collect();
  EXPECT_EQ(p.pending_blocks(), 0u);
  EXPECT_EQ(be.total_pool_refs(), 0);
  ASSERT_EQ(p.free_now(other), status::success);
}

TEST_F(fixture, FreeIfLiveTouchesOnlyLiveBlockStarts) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB));
  const pool_stats before = p.stats();
  int outside = 0;
  EXPECT_EQ(p.free_if_live(&outside, release_info{}), status::not_owned);
  EXPECT_EQ(p.free_if_live(static_cast<char *>(a) + 64, release_info{}), status::not_owned);
  EXPECT_EQ(p.live_allocations(), 1u);
  EXPECT_TRUE(same_stats(p.stats(), before));
  EXPECT_EQ(p.free(static_cast<char *>(a) + 64, release_info{}), status::not_block_start);
  EXPECT_EQ(p.free_if_live(a, release_info{}), status::success);
  EXPECT_EQ(p.free_if_live(a, release_info{}), status::not_owned);
  EXPECT_EQ(p.free(a, release_info{}), status::double_free);
  EXPECT_EQ(p.live_allocations(), 0u);
}

// Many live blocks: the live table grows and still finds each one (and no other).
TEST_F(fixture, ManyLiveBlocksAreFoundAndFreed) {
  ordered_pool p(be, {});
  std::vector<void *> live;
  for (int i = 0; i < 5000; ++i) live.push_back(must_alloc(p, req(64 + 64 * (i % 7))));
  for (std::size_t i = 0; i < live.size(); i += 2) {
    block_info info;
    ASSERT_TRUE(p.lookup(static_cast<char *>(live[i]) + 1, info)); // interior pointer
    EXPECT_EQ(info.base, live[i]);
    ASSERT_EQ(p.free_now(live[i]), status::success);
  }
  for (std::size_t i = 0; i < live.size(); i += 2) EXPECT_EQ(p.free_now(live[i]), status::double_free);
  for (std::size_t i = 1; i < live.size(); i += 2) ASSERT_EQ(p.free_now(live[i]), status::success);
  EXPECT_EQ(p.live_allocations(), 0u);
  EXPECT_EQ(p.stats().used_current, 0u);
}

// An alloc that misses asks a bounded number of pending events before growing, and
// every one only when the pool cannot grow.
TEST_F(fixture, MissAsksBoundedEventsButAllAtTheLimit) {
  for (const bool at_limit : {false, true}) {
    sim_backend sim;
    pool_config cfg;
    cfg.chunk_granularity = 64 * KiB;
    cfg.max_size = at_limit ? 100 * 64 * KiB : 0;
    ordered_pool p(sim, cfg);
    std::vector<void *> blocks;
    std::vector<sim_event *> events;
    for (int i = 0; i < 100; ++i) blocks.push_back(must_alloc(p, req(64 * KiB)));
    for (int i = 0; i < 100; ++i) {
      events.push_back(sim.make_event());
      ASSERT_EQ(p.free(blocks[i], on(events.back(), qb, false)), status::success);
    }
    events[50]->complete = true;
    const std::size_t asked_before = sim.complete_queries;
    alloc_result r{};
    req other(64 * KiB, qc);
    ASSERT_EQ(p.alloc(other.r, r), status::success) << "at the limit: " << at_limit;
    if (at_limit) {
      EXPECT_EQ(r.ptr, blocks[50]); // every pending free was asked: the completed one is reused
      EXPECT_EQ(r.source, alloc_source::completed);
    } else {
      // 8 probes of the size index, then at most 32 events before growing.
      EXPECT_LE(sim.complete_queries - asked_before, 8u + 32u);
    }
    ASSERT_EQ(p.free_now(r.ptr), status::success);
    for (sim_event *e : events) e->complete = true;
    p.collect();
    EXPECT_EQ(p.pending_blocks(), 0u);
    EXPECT_EQ(sim.total_pool_refs(), 0);
  }
}

// A live block lets go of the release it took over once that release completes
// (collect), so a block never freed holds no event (docs/async-alloc.md, "Lifetime").
TEST_F(fixture, CollectDropsCompletedTakenOverReleases) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  EXPECT_EQ(must_alloc(p, req(4 * KiB, qa)), a); // rule 1: takes f over
  EXPECT_EQ(f->pool_refs, 1);
  p.collect();
  EXPECT_EQ(f->pool_refs, 1) << "not complete yet: still needed";
  f->complete = true;
  p.collect();
  EXPECT_EQ(f->pool_refs, 0) << "a completed release orders nothing";
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(p.pending_blocks(), 0u);
}

// close_if_idle() refuses while anything is live or pending; once closed, every alloc
// answers `closed` with nothing changed, until reopen().
TEST_F(fixture, CloseIfIdleShutsOutAllocs) {
  ordered_pool p(be, {});
  void *a = must_alloc(p, req(4 * KiB, qa));
  EXPECT_FALSE(p.close_if_idle()) << "a live block";
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  EXPECT_FALSE(p.close_if_idle()) << "a pending block";
  f->complete = true;
  p.collect();
  EXPECT_TRUE(p.close_if_idle());
  const pool_stats before = p.stats();
  alloc_result r{};
  req q(4 * KiB, qa);
  EXPECT_EQ(p.alloc(q.r, r), status::closed);
  EXPECT_EQ(p.live_allocations(), 0u);
  EXPECT_EQ(p.stats().used_current, before.used_current);
  p.reopen();
  EXPECT_NE(must_alloc(p, req(4 * KiB, qa)), nullptr);
}

// A live block keeps its requested size as the block's size less a slack below 64, in
// the word it shares with the block's flags (ordo_pool/detail.hpp): lookup() reports it
// on each path a block goes live by (a new chunk, the lane cache, the core after the
// cache gives its blocks back).
TEST_F(fixture, RequestedSizeOnEveryPathABlockGoesLiveBy) {
  ordered_pool p(be, {});
  block_info info;
  for (std::size_t size :
       {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, 4 * KiB - 1, 4 * KiB, 3 * MiB + 1}) {
    SCOPED_TRACE(size);
    const std::size_t block = (size + 63) / 64 * 64;
    void *a = must_alloc(p, req(size));
    ASSERT_TRUE(p.lookup(a, info));
    EXPECT_EQ(info.size, size);
    EXPECT_EQ(info.block_size, block);
    ASSERT_EQ(p.free_now(a), status::success);
    // The same block for another request of its size: no slack, or the most there is.
    const std::size_t again = block == size ? block - 63 : block;
    void *b = must_alloc(p, req(again));
    ASSERT_TRUE(p.lookup(b, info));
    EXPECT_EQ(info.size, again);
    EXPECT_EQ(info.block_size, block);
    p.collect(); // cached blocks go back to the core, lent ones become its live blocks
    ASSERT_TRUE(p.lookup(b, info));
    EXPECT_EQ(info.size, again);
    EXPECT_EQ(info.block_size, block);
    ASSERT_EQ(p.free_now(b), status::success);
  }
  EXPECT_EQ(p.live_allocations(), 0u);
}

// A block's size has 44 bits (ordo_pool/detail.hpp): a larger request is out of memory
// before the backend is asked, and a fixed pool over more memory than that uses what one
// block can hold (the pool never touches the memory, so none is mapped here).
TEST_F(fixture, NoBlockIsLargerThanSixteenTebibytes) {
  constexpr std::size_t largest = (std::size_t{1} << 44) - 64;
  {
    ordered_pool p(be, {});
    alloc_result out{};
    req past(largest + 1);
    EXPECT_EQ(p.alloc(past.r, out), status::out_of_memory);
    req aligned(largest - 64);
    aligned.align(4096); // fits in no block of the largest size at every address
    EXPECT_EQ(p.alloc(aligned.r, out), status::out_of_memory);
    EXPECT_EQ(be.get_calls, 0u);
    EXPECT_EQ(p.chunk_count(), 0u);
    EXPECT_EQ(p.stats().used_high, 0u);
  }
  void *base = reinterpret_cast<void *>(std::uintptr_t{1} << 45);
  ordered_pool f(be, {}, base, std::size_t{1} << 45);
  EXPECT_EQ(f.max_size(), std::size_t{1} << 45);
  alloc_result r{};
  void *a = must_alloc(f, req(largest), &r);
  EXPECT_EQ(a, base);
  EXPECT_EQ(r.block_size, largest);
  alloc_result out{};
  req more(64);
  EXPECT_EQ(f.alloc(more.r, out), status::out_of_memory);
  block_info info;
  ASSERT_TRUE(f.lookup(static_cast<char *>(a) + (largest - 1), info));
  EXPECT_EQ(info.size, largest);
  ASSERT_EQ(f.free_now(a), status::success);
  void *b = must_alloc(f, req(largest));
  EXPECT_EQ(b, base);
  ASSERT_EQ(f.free_now(b), status::success);
  EXPECT_EQ(be.get_calls, 0u);
}

} // namespace
} // namespace ordo::pool::test
