// SPDX-License-Identifier: Apache-2.0
// Attacks on the ordered pool core's one-line block (ordo_pool/detail.hpp): the queue /
// rule-3 runs union, the requested size kept as a slack, the 44-bit size and the 10-bit
// size class, through the public API (docs/ordered-pool.md, "Bookkeeping memory").
// ORDO_POOL_LAYOUT_PROGRAMS (default 400) / ORDO_POOL_LAYOUT_SEED (1): random programs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "ordo_pool/ordered_pool.hpp"
#include "ordo_pool/size_bins.hpp"
#include "sim_backend.hpp"

namespace ordo::pool::test {
namespace {

constexpr std::size_t KiB = 1024, MiB = KiB * KiB;
constexpr std::size_t TiB16 = std::size_t{1} << 44;
constexpr std::size_t largest = TiB16 - 64; // detail::max_block_bytes

// Hands out address space nobody maps (the pool never touches its memory), so chunks of
// 16 TiB cost nothing; `skew` makes them less than 64-byte aligned.
class fake_backend : public sim_backend {
public:
  ~fake_backend() override { EXPECT_TRUE(out_.empty()) << "chunks still out at backend destruction"; }
  void *get_chunk(std::size_t size) override {
    ++get_calls;
    if (fail_chunks) return nullptr;
    const std::uintptr_t p = next_ + skew;
    next_ = (p + size + 8 * KiB) & ~std::uintptr_t(4 * KiB - 1);
    out_[p] = size;
    outstanding += size;
    return reinterpret_cast<void *>(p);
  }
  void put_chunk(void *base, std::size_t size) override {
    ++put_calls;
    auto it = out_.find(reinterpret_cast<std::uintptr_t>(base));
    ASSERT_NE(it, out_.end()) << "put_chunk of an unknown chunk";
    EXPECT_EQ(it->second, size);
    outstanding -= size;
    out_.erase(it);
  }
  std::size_t skew = 0;

private:
  std::uintptr_t next_ = std::uintptr_t{1} << 42;
  std::map<std::uintptr_t, std::size_t> out_;
};

char queue_ids[4096]; // a queue identity is an address in here
queue_id qid(std::size_t i) { return &queue_ids[i]; }
const queue_id qa = qid(0), qb = qid(1), qc = qid(2), qd = qid(3);

std::uintptr_t u(const void *p) { return reinterpret_cast<std::uintptr_t>(p); }
void *at(std::uintptr_t a) { return reinterpret_cast<void *>(a); }

struct req {
  sim_command cmd;
  alloc_request r;
  req(std::size_t size, queue_id q = qa, bool in_order = true, std::size_t align = 0)
      : r{size, align, q, in_order, nullptr, 0, &cmd} {}
};

void *must(ordered_pool &p, req &&q, alloc_result *res = nullptr) {
  alloc_result out{};
  EXPECT_EQ(p.alloc(q.r, out), status::success);
  if (res) *res = out;
  return out.ptr;
}
release_info on(sim_event *e, queue_id q, bool in_order = true) { return release_info{e, q, in_order}; }
// lookup() of the start and the last byte both report (base, requested, block).
void expect_live(ordered_pool &p, void *ptr, std::size_t requested, std::size_t block) {
  for (std::uintptr_t probe : {u(ptr), u(ptr) + block - 1}) {
    block_info info;
    ASSERT_TRUE(p.lookup(at(probe), info)) << "lost live block " << ptr;
    EXPECT_EQ(std::make_tuple(info.base, info.size, info.block_size), std::make_tuple(ptr, requested, block));
  }
}
bool is_live(ordered_pool &p, void *ptr) {
  block_info info;
  return p.lookup(ptr, info);
}

// --- the queue / runs union ---------------------------------------------------------

enum class run_exit { stream_free, sync_free, cancel, partial_collect, forget_taken_over, destroy };
class RunsBlock : public ::testing::TestWithParam<run_exit> {};

// A live block that rule 3 carved from four pending blocks with four events holds runs_
// where other blocks hold their queue. Every way out of that state must leave the
// pieces' queues, the requested size and every event reference right.
TEST_P(RunsBlock, EveryExitKeepsQueuesSizesAndReferences) {
  fake_backend be;
  pool_config cfg;
  cfg.max_size = cfg.chunk_granularity = 256 * KiB;
  auto p = std::make_unique<ordered_pool>(be, cfg);
  void *blk[4];
  sim_event *ev[4];
  const queue_id fq[4] = {qa, qb, qc, qb};
  for (auto &b : blk) b = must(*p, req(64 * KiB, qa));
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(p->free(blk[i], on(ev[i] = be.make_event(), fq[i], i % 2 == 0)), status::success);
  alloc_result big{};
  req q(256 * KiB - 37, qd, false);
  ASSERT_EQ(p->alloc(q.r, big), status::success);
  ASSERT_EQ(big.ptr, blk[0]);
  EXPECT_EQ(big.source, alloc_source::internal_dependency);
  EXPECT_EQ(q.cmd.deps.size(), 4u);
  expect_live(*p, big.ptr, 256 * KiB - 37, 256 * KiB);
  EXPECT_EQ(be.total_pool_refs(), 4);
  EXPECT_EQ(p->pending_blocks(), 0u);
  // Rule 1 by queue order: the piece kept its in-order queue.
  auto by_queue = [&](void *want, queue_id lane, std::size_t size, std::size_t block) {
    alloc_result r{};
    EXPECT_EQ(must(*p, req(size, lane), &r), want);
    EXPECT_EQ(r.source, alloc_source::ordered);
    expect_live(*p, want, size, block);
  };
  alloc_result r{};
  switch (GetParam()) {
  case run_exit::stream_free: {
    sim_event *f = be.make_event(true);
    ASSERT_EQ(p->free(big.ptr, on(f, qa)), status::success);
    EXPECT_EQ(be.total_pool_refs(), 1); // the free is ordered after every run
    EXPECT_EQ(p->pending_blocks(), 1u);
    by_queue(big.ptr, qa, 256 * KiB - 1, 256 * KiB);
    break;
  }
  case run_exit::sync_free:
  case run_exit::cancel:
    ASSERT_EQ(GetParam() == run_exit::cancel ? p->cancel(big) : p->free_now(big.ptr), status::success);
    EXPECT_FALSE(is_live(*p, big.ptr));
    EXPECT_EQ(p->pending_blocks(), 4u);
    EXPECT_EQ(be.total_pool_refs(), 4);
    by_queue(blk[0], qa, 64 * KiB - 63, 64 * KiB);
    by_queue(blk[2], qc, 64 * KiB, 64 * KiB);
    be.fail_dependencies = true; // the out-of-order pieces are still pending
    EXPECT_EQ(p->alloc(req(64 * KiB, qd, false).r, r), status::out_of_memory);
    break;
  case run_exit::partial_collect:
    ev[1]->complete = ev[2]->complete = ev[3]->complete = true;
    p->collect(); // the run keeps one release (ev[0])
    EXPECT_EQ(be.total_pool_refs(), 1);
    expect_live(*p, big.ptr, 256 * KiB - 37, 256 * KiB);
    ASSERT_EQ(p->free_now(big.ptr), status::success);
    EXPECT_EQ(p->pending_blocks(), 1u);
    be.fail_dependencies = true;
    EXPECT_EQ(must(*p, req(192 * KiB - 5, qd, false), &r), blk[1]);
    EXPECT_EQ(r.source, alloc_source::free_block);
    expect_live(*p, blk[1], 192 * KiB - 5, 192 * KiB);
    by_queue(blk[0], qa, 64 * KiB - 1, 64 * KiB);
    break;
  case run_exit::forget_taken_over:
    p->forget_taken_over();
    EXPECT_EQ(be.total_pool_refs(), 0);
    expect_live(*p, big.ptr, 256 * KiB - 37, 256 * KiB);
    ASSERT_EQ(p->free(big.ptr, on(be.make_event(true), qb, false)), status::success);
    EXPECT_EQ(be.total_pool_refs(), 1);
    break;
  case run_exit::destroy: break;
  }
  be.fail_dependencies = false;
  for (sim_event *e : ev) e->complete = true;
  if (GetParam() != run_exit::destroy) {
    p->collect();
    EXPECT_EQ(p->pending_blocks(), 0u);
    EXPECT_EQ(be.total_pool_refs(), 0);
  }
  p.reset(); // live blocks (runs, taken-over releases) go with it
  EXPECT_EQ(be.total_pool_refs(), 0);
  EXPECT_EQ(be.outstanding, 0u);
}

INSTANTIATE_TEST_SUITE_P(Exits, RunsBlock,
                         ::testing::Values(run_exit::stream_free, run_exit::sync_free, run_exit::cancel,
                                           run_exit::partial_collect, run_exit::forget_taken_over, run_exit::destroy));

// --- the requested size ----------------------------------------------------------------

// Every slack (0..63) on every path a block goes live by, and none after an undo.
TEST(LayoutAttack, RequestedSizeOnEveryPathAndNoneAfterCancel) {
  for (std::size_t slack : {0, 1, 37, 63}) {
    SCOPED_TRACE(slack);
    const std::size_t size = 4 * KiB - slack, other = 4 * KiB - (63 - slack);
    fake_backend be;
    {
      ordered_pool p(be, {});
      alloc_result r{};
      void *a = must(p, req(size, qa), &r);
      EXPECT_EQ(r.source, alloc_source::new_chunk);
      expect_live(p, a, size, 4 * KiB);
      sim_event *f = be.make_event();
      ASSERT_EQ(p.free(a, on(f, qa)), status::success); // into the lane cache
      EXPECT_FALSE(is_live(p, a));
      ASSERT_EQ(must(p, req(other, qa), &r), a); // lent by the cache
      EXPECT_EQ(r.source, alloc_source::ordered);
      expect_live(p, a, other, 4 * KiB);
      p.collect(); // lent blocks become the core's
      expect_live(p, a, other, 4 * KiB);
      ASSERT_EQ(p.cancel(r), status::success); // pending on f again
      EXPECT_FALSE(is_live(p, a));
      EXPECT_EQ(p.pending_blocks(), 1u);
      EXPECT_EQ(f->pool_refs, 1);
      ASSERT_EQ(must(p, req(size, qa), &r), a); // rule 1 in the core
      EXPECT_EQ(r.source, alloc_source::ordered);
      expect_live(p, a, size, 4 * KiB);
      ASSERT_EQ(p.free_now(a), status::success);
      f->complete = true;
      ASSERT_EQ(must(p, req(other, qb, false), &r), a); // rule 2
      expect_live(p, a, other, 4 * KiB);
      ASSERT_EQ(p.cancel(r), status::success);
      EXPECT_FALSE(is_live(p, a));
    }
    {
      // The quick list: a lane already holding 4 cached blocks sends the next free there.
      ordered_pool p(be, {});
      void *t = must(p, req(size, qb));
      std::vector<void *> fill;
      for (int i = 0; i < 4; ++i) { // cached blocks with live blocks between them (no merging)
        must(p, req(64, qb));
        fill.push_back(must(p, req(8 * KiB, qb)));
      }
      must(p, req(64, qb));
      for (void *f : fill) ASSERT_EQ(p.free(f, on(be.make_event(), qb)), status::success);
      sim_event *e = be.make_event();
      ASSERT_EQ(p.free(t, on(e, qb)), status::success);
      EXPECT_EQ(p.pending_blocks(), 5u);
      alloc_result r{};
      ASSERT_EQ(must(p, req(other, qb), &r), t);
      EXPECT_EQ(r.source, alloc_source::ordered);
      expect_live(p, t, other, 4 * KiB);
      ASSERT_EQ(p.free_now(t), status::success); // back pending on e
      EXPECT_FALSE(is_live(p, t));
      for (void *f : fill) EXPECT_FALSE(is_live(p, f));
      ASSERT_EQ(must(p, req(size, qb), &r), t);
      expect_live(p, t, size, 4 * KiB);
    } // destroyed with live, pending and cached blocks
    EXPECT_EQ(be.total_pool_refs(), 0);
  }
}

// --- the 44-bit size -------------------------------------------------------------------

TEST(LayoutAttack, GrowingPoolAtTheCap) {
  fake_backend be;
  {
    ordered_pool p(be, {});
    alloc_result r{};
    void *a = must(p, req(largest - 36), &r); // rounds up to the largest block exactly
    EXPECT_EQ(r.block_size, largest);
    expect_live(p, a, largest - 36, largest);
    EXPECT_EQ(p.stats().reserved_current, largest);
    ASSERT_EQ(p.free(a, on(be.make_event(true), qa)), status::success);
    EXPECT_EQ(p.trim_to(0), largest);
  }
  {
    ordered_pool p(be, {});
    void *a = must(p, req(TiB16 / 2, qa, true, TiB16 / 2)); // need + align - 64 is the cap
    EXPECT_EQ(u(a) % (TiB16 / 2), 0u);
    expect_live(p, a, TiB16 / 2, TiB16 / 2);
    alloc_result r{};
    EXPECT_EQ(p.alloc(req(TiB16 / 2 + 64, qa, true, TiB16 / 2).r, r), status::out_of_memory);
    // 64 bytes at 16 TiB alignment: no chunk may be grown for it (its alignment slack
    // passes the cap), but the chunk the 8 TiB block came from (16 TiB less 64 bytes)
    // holds a free address so aligned, and that serves it.
    const std::size_t calls = be.get_calls;
    void *b = must(p, req(64, qa, true, TiB16));
    EXPECT_EQ(u(b) % TiB16, 0u);
    EXPECT_TRUE(p.owns(b));
    EXPECT_EQ(be.get_calls, calls);
    // Wider alignments: served the same way or refused, never by asking the backend.
    for (std::size_t align : {2 * TiB16, 4 * TiB16, std::size_t{1} << 62}) {
      const status st = p.alloc(req(64, qa, true, align).r, r);
      ASSERT_TRUE(st == status::success || st == status::out_of_memory) << align;
      if (st == status::success) {
        EXPECT_EQ(u(r.ptr) % align, 0u);
        ASSERT_EQ(p.free_now(r.ptr), status::success);
      }
    }
    EXPECT_EQ(be.get_calls, calls);
    ASSERT_EQ(p.free_now(b), status::success);
    ASSERT_EQ(p.free_now(a), status::success);
  }
  // Sizes and alignments near SIZE_MAX are out of memory with nothing asked or changed.
  {
    ordered_pool p(be, {});
    const std::size_t calls = be.get_calls;
    alloc_result r{};
    for (std::size_t s : {SIZE_MAX, SIZE_MAX - 63, SIZE_MAX / 4 + 1, TiB16 - 63, TiB16})
      EXPECT_EQ(p.alloc(req(s).r, r), status::out_of_memory) << s;
    EXPECT_EQ(p.alloc(req(64, qa, true, std::size_t{1} << 63).r, r), status::out_of_memory);
    EXPECT_EQ(be.get_calls, calls);
    EXPECT_EQ(p.stats().used_high, 0u);
    EXPECT_EQ(p.stats().reserved_high, 0u);
  }
  // A maximum just above, at and below the largest block; and SIZE_MAX (no real limit).
  for (std::size_t max : {TiB16 + 1, largest, largest - 64, SIZE_MAX}) {
    pool_config cfg;
    cfg.max_size = max;
    ordered_pool p(be, cfg);
    alloc_result r{}, r2{};
    ASSERT_EQ(p.alloc(req(largest).r, r), max >= largest ? status::success : status::out_of_memory) << max;
    EXPECT_LE(p.stats().reserved_current, max);
    if (!r.ptr) continue;
    expect_live(p, r.ptr, largest, largest);
    // Under TiB16 + 1 only 65 bytes of room are left: no block of 128.
    EXPECT_EQ(p.alloc(req(100).r, r2), max == SIZE_MAX ? status::success : status::out_of_memory);
    if (r2.ptr) expect_live(p, r2.ptr, 100, 128);
  }
  // A granularity of a power of two at or above the cap gives chunks of the cap.
  pool_config cfg;
  cfg.chunk_granularity = std::size_t{1} << 50;
  ordered_pool p(be, cfg);
  must(p, req(100));
  void *b = must(p, req(largest - 128));
  EXPECT_EQ(p.stats().reserved_current, largest);
  expect_live(p, b, largest - 128, largest - 128);
}

TEST(LayoutAttack, FixedPoolsAroundSixteenTebibytes) {
  fake_backend be;
  const std::uintptr_t base = std::uintptr_t{1} << 45;
  struct shape {
    std::uintptr_t skew;
    std::size_t size, usable;
  };
  for (const shape &s : {shape{0, TiB16, largest}, shape{0, TiB16 + 64, largest}, shape{0, TiB16 - 64, largest},
                         shape{0, std::size_t{1} << 60, largest}, shape{32, TiB16, largest - 64},
                         shape{8, TiB16 - 64, largest - 64}, shape{0, TiB16 - 65, largest - 64}}) {
    SCOPED_TRACE(::testing::Message() << "skew " << s.skew << " size " << s.size);
    ordered_pool p(be, {}, at(base + s.skew), s.size);
    const std::uintptr_t lo = (base + s.skew + 63) & ~std::uintptr_t(63);
    EXPECT_EQ(p.stats().reserved_current, s.size);
    EXPECT_EQ(p.max_size(), s.size);
    alloc_result r{};
    EXPECT_EQ(p.alloc(req(s.usable + 1).r, r), status::out_of_memory);
    void *a = must(p, req(s.usable - 63), &r);
    EXPECT_EQ(u(a), lo);
    expect_live(p, a, s.usable - 63, s.usable);
    EXPECT_EQ(p.alloc(req(64).r, r), status::out_of_memory);
    EXPECT_EQ(p.free(at(lo + s.usable), release_info{}), status::not_owned);
    EXPECT_EQ(p.free(at(lo + 64), release_info{}), status::not_block_start);
    ASSERT_EQ(p.free_now(a), status::success);
    // Halves and quarters of the whole, freed in a crossing order, merge back.
    void *q[4];
    for (auto &x : q) x = must(p, req(s.usable / 4 / 64 * 64));
    for (int i : {1, 3, 0, 2}) ASSERT_EQ(p.free_now(q[i]), status::success);
    EXPECT_EQ(must(p, req(s.usable)), a);
    ASSERT_EQ(p.free_now(a), status::success);
  }
  // The largest user size there is.
  ordered_pool p(be, {}, at(64), SIZE_MAX);
  EXPECT_EQ(p.stats().reserved_current, SIZE_MAX);
  void *a = must(p, req(largest));
  EXPECT_EQ(u(a), 64u);
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_EQ(be.get_calls, 0u);
}

// --- the 10-bit size class -----------------------------------------------------------

TEST(LayoutAttack, SizeClassesFitTenBitsAndHugeBlocksAreFoundAgain) {
  using detail::size_bins;
  unsigned last = 0;
  for (std::size_t g = 1; g <= largest / 64; g = g < 64 ? g + 1 : g + g / 3) {
    const unsigned c = size_bins::class_of(g * 64);
    EXPECT_LT(c, 1024u);
    EXPECT_GE(c, last);
    last = c;
  }
  EXPECT_LT(size_bins::class_of(largest), 1024u);
  EXPECT_LE(size_bins::classes, 1024u);
  // Blocks of every power of two up to 2^42 in one 16 TiB pool, freed with gaps so each
  // is listed by its class, then taken again: each comes back from its own class.
  fake_backend be;
  ordered_pool p(be, {}, at(std::uintptr_t{1} << 45), TiB16);
  std::vector<std::pair<void *, std::size_t>> blocks;
  for (unsigned k = 42; k >= 6; --k) {
    const std::size_t s = std::size_t{1} << k;
    blocks.push_back({must(p, req(s)), s});
    blocks.push_back({must(p, req(64)), 64});
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < blocks.size(); i += 2) order.push_back(i);
  for (std::size_t i : order) ASSERT_EQ(p.free_now(blocks[i].first), status::success);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  for (std::size_t i : order) {
    EXPECT_EQ(must(p, req(blocks[i].second - 1)), blocks[i].first) << blocks[i].second;
    expect_live(p, blocks[i].first, blocks[i].second - 1, blocks[i].second);
  }
  for (auto &b : blocks) ASSERT_EQ(p.free_now(b.first), status::success);
  EXPECT_EQ(must(p, req(largest)), at(std::uintptr_t{1} << 45));
}

// --- random programs with a shadow model ------------------------------------------------
// Allocs (random sizes, alignments, queues, wait lists), stream and synchronous frees,
// undone allocs, completions, collect, trims, forget_taken_over, forget_queue, drop_lane
// and close_if_idle over growing, limited and fixed pools (some at TiB scale). The shadow:
// live blocks (sizes, no overlap), "used", reserved bytes, and the releases freed bytes
// wait on: a reuse not ordered after one fails. Events complete only after what their
// commands follow (in-order queues in order); in the end no event reference is left.

struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define LCHECK(c)                                                                                                      \
  do {                                                                                                                 \
    if (!(c)) throw failure("line " + std::to_string(__LINE__) + ", op " + std::to_string(op_) + ": " #c);             \
  } while (0)

struct tally {
  std::size_t allocs = 0, ooms = 0, multi_dep = 0, cancels = 0, by_source[5] = {};
};

class program {
public:
  program(std::uint64_t seed, tally &t) : rng_(seed), t_(t) {}

  void run() {
    // 0 growing, 1 with a maximum, 2 fixed, 3 failing backend; 4 and 5 at TiB scale: a
    // fixed pool of about 16 TiB, a growing one with a maximum of 16 TiB or more (or none).
    const unsigned mode = pick(6);
    cfg_.chunk_granularity = std::size_t{64 * KiB} << (2 * pick(3));
    if (mode == 1) cfg_.max_size = (256 * KiB) << pick(3);
    if (mode == 5) cfg_.max_size = pick(3) * (TiB16 / 2) + (pick(2) ? TiB16 : 0);
    if (mode >= 4) scale_ = std::size_t{1} << (20 + pick(5));
    cfg_.release_threshold = pick(2) * 256 * KiB;
    cfg_.reuse_ordered = pick(10) != 0;
    cfg_.reuse_completed = pick(10) != 0;
    cfg_.reuse_with_dependency = pick(10) != 0;
    be_.skew = pick(2) ? 0 : 16 * (1 + pick(2));
    small_ = mode != 0;
    fail_toggles_ = mode == 3;
    if (pick(2))
      be_.ordered_hook = [this](command_context, event_handle ev) {
        auto *e = static_cast<sim_event *>(ev);
        if (info_.at(e).id % 7 != 3) return false;
        hooked_.push_back(e);
        return true;
      };
    for (auto &q : q_) q = qid(16 + next_q_++);
    if (mode == 2 || mode == 4) {
      fixed_size_ = mode == 2 ? 256 * KiB + pick(4) * 128 * KiB + pick(8) * 8 : TiB16 - 64 + pick(3) * 64 + pick(8) * 8;
      pool_ = std::make_unique<ordered_pool>(be_, cfg_, at((std::uintptr_t{1} << 45) + pick(8) * 8), fixed_size_);
    } else {
      pool_ = std::make_unique<ordered_pool>(be_, cfg_);
    }
    for (const std::size_t ops = 150 + pick(300); op_ < ops; ++op_) {
      step();
      invariants();
    }
    finish();
  }

private:
  struct rec { // freed bytes [lo, hi) waiting on ev
    std::uintptr_t lo, hi;
    sim_event *ev;
    queue_id q;
    bool in_order;
  };
  struct live_t {
    std::size_t requested, bs;
    alloc_result res;
    std::vector<rec> inherited; // releases the alloc took over (incomplete then)
    std::vector<sim_event *> preds;
    bool no_sync = false; // after forget_taken_over(): stream frees only
  };
  using live_it = std::map<std::uintptr_t, live_t>::iterator;

  unsigned pick(std::size_t n) { return static_cast<unsigned>(rng_() % n); }

  std::size_t pick_size() {
    static const std::size_t sizes[] = {1,       63,   64,   65,          127,      128,          200,   1000,
                                        4095,    4096, 4097, 8 * KiB - 1, 16 * KiB, 32 * KiB - 1, 60000, 64 * KiB - 37,
                                        64 * KiB};
    std::size_t s = pick(10) ? sizes[pick(std::size(sizes))] : 1 + pick(small_ ? 100000 : 3000000);
    if (scale_ > 1) s = std::max<std::size_t>(1, std::min(s * scale_, largest) - pick(64));
    return s;
  }
  static std::vector<sim_event *> incomplete(std::vector<sim_event *> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](sim_event *e) { return e->complete; }), v.end());
    return v;
  }
  // Is `target` ordered before one of `from` (itself, or through what they follow)?
  bool reachable(sim_event *target, std::vector<sim_event *> stack) const {
    std::set<sim_event *> seen;
    while (!stack.empty()) {
      sim_event *e = stack.back();
      stack.pop_back();
      if (e == target) return true;
      if (!e->complete && seen.insert(e).second)
        for (sim_event *p : info_.at(e).preds) stack.push_back(p);
    }
    return false;
  }
  live_it random_live() { return std::next(live_.begin(), pick(live_.size())); }

  void step() {
    const unsigned r = pick(100);
    if (r < 36) return alloc();
    if (r < 70) {
      if (live_.empty()) return;
      auto it = random_live();
      if (r < 55 || it->second.no_sync) return stream_free(it);
      return sync_free(it, r < 65 ? pick(3) : 3);
    }
    if (r < 84) return complete(1 + pick(3));
    switch (r) {
    case 84: pool_->collect(); break;
    case 85: pool_->release_above_threshold(); break;
    case 86: pool_->trim_to(pick(2) * pick(1024) * KiB); break;
    case 87: (void)pool_->idle_bytes(); break;
    case 88:
      pool_->forget_taken_over();
      for (auto &kv : live_) kv.second.no_sync = true;
      break;
    case 89: // the queue goes away: its identity is never named again
    case 90: {
      const std::size_t s = pick(4);
      r == 89 ? pool_->forget_queue(q_[s]) : pool_->drop_lane(q_[s]);
      q_[s] = qid(16 + next_q_++);
      break;
    }
    case 91:
      closed_ = pool_->close_if_idle();
      if (closed_) LCHECK(live_.empty());
      break;
    case 92: quiesce(); break;
    case 93: be_.fail_chunks = fail_toggles_ && !be_.fail_chunks; break;
    case 94: be_.fail_dependencies = fail_toggles_ && !be_.fail_dependencies; break;
    default:
      for (auto &kv : live_) check_live(kv.first);
    }
  }

  void alloc() {
    const std::size_t size = pick_size(), s = pick(4);
    const std::size_t align = pick(5) ? 0 : (std::size_t{64} << (pick(4) * 3)) * scale_;
    const queue_id q = q_[s];
    const bool in_order = s < 3;
    std::vector<event_handle> waits;
    for (unsigned k = pick(3); k-- > 0 && !events_.empty();)
      waits.push_back(events_[events_.size() - 1 - pick(std::min<std::size_t>(events_.size(), 16))]);
    sim_command cmd;
    alloc_request rq{size, align, q, in_order, waits.empty() ? nullptr : waits.data(), waits.size(), &cmd};
    hooked_.clear();
    const std::size_t used_before = pool_->stats().used_current;
    alloc_result res{};
    const status st = pool_->alloc(rq, res);
    if (closed_) {
      LCHECK(st == status::closed);
      pool_->reopen();
      closed_ = false;
      return;
    }
    ++t_.allocs;
    if (st == status::out_of_memory) { // nothing changed
      ++t_.ooms;
      LCHECK(pool_->stats().used_current == used_before && pool_->live_allocations() == live_.size());
      return;
    }
    LCHECK(st == status::success);
    const std::size_t bs = (size + 63) / 64 * 64;
    const std::uintptr_t lo = u(res.ptr), hi = lo + bs;
    LCHECK(lo % std::max<std::size_t>(align, 64) == 0 && res.block_size == bs);
    LCHECK(res.dependencies_added == cmd.deps.size());
    auto next = live_.lower_bound(lo);
    LCHECK(next == live_.end() || next->first >= hi);
    LCHECK(next == live_.begin() || std::prev(next)->first + std::prev(next)->second.bs <= lo);
    ++t_.by_source[static_cast<int>(res.source)];
    t_.multi_dep += cmd.deps.size() > 1;
    // What this alloc is ordered after; bytes still waiting must be among it.
    std::vector<sim_event *> ordered = hooked_;
    for (event_handle e : waits) ordered.push_back(static_cast<sim_event *>(e));
    for (event_handle e : cmd.deps) ordered.push_back(static_cast<sim_event *>(e));
    if (in_order) ordered.insert(ordered.end(), carry_[q].begin(), carry_[q].end());
    live_t l{size, bs, res, {}, {}, false};
    std::vector<rec> keep;
    for (const rec &x : recs_) {
      if (x.ev->complete) continue;
      if (x.hi <= lo || x.lo >= hi) {
        keep.push_back(x);
        continue;
      }
      if (!(x.in_order && in_order && x.q == q) && !reachable(x.ev, ordered))
        throw failure("op " + std::to_string(op_) + ": bytes reused before their release (event " +
                      std::to_string(info_.at(x.ev).id) + ") with no order");
      l.inherited.push_back(rec{std::max(x.lo, lo), std::min(x.hi, hi), x.ev, x.q, x.in_order});
      ordered.push_back(x.ev);
      if (x.lo < lo) keep.push_back(rec{x.lo, lo, x.ev, x.q, x.in_order});
      if (x.hi > hi) keep.push_back(rec{hi, x.hi, x.ev, x.q, x.in_order});
    }
    recs_.swap(keep);
    l.preds = incomplete(ordered);
    if (in_order) carry_[q].insert(carry_[q].end(), l.preds.begin(), l.preds.end());
    live_.emplace(lo, std::move(l));
    check_live(lo);
    if (pick(8) == 0) sync_free(live_.find(lo), 3); // undone at once
  }

  void stream_free(live_it it) {
    const live_t &l = it->second;
    const std::size_t s = pick(4);
    const queue_id q = pick(20) ? q_[s] : nullptr;
    const bool in_order = s < 3;
    std::vector<sim_event *> preds = l.preds;
    if (in_order && q) preds.insert(preds.end(), carry_[q].begin(), carry_[q].end());
    sim_event *e = be_.make_event();
    info_[e] = {events_.size(), incomplete(preds)};
    events_.push_back(e);
    const release_info rel{e, q, in_order};
    std::size_t bs = l.bs;
    const unsigned how = pick(3);
    LCHECK((how == 0   ? pool_->free(at(it->first), rel)
            : how == 1 ? pool_->free(at(it->first), rel, bs)
                       : pool_->free_if_live(at(it->first), rel)) == status::success);
    LCHECK(bs == l.bs);
    if (in_order && q) carry_[q] = {e};
    recs_.push_back(rec{it->first, it->first + l.bs, e, q, in_order && q});
    freed(it);
  }

  // how: 0 free_now, 1 free with no event, 2 free_if_live with no event, 3 cancel
  void sync_free(live_it it, unsigned how) {
    const live_t &l = it->second;
    void *p = at(it->first);
    t_.cancels += how == 3;
    LCHECK((how == 3   ? pool_->cancel(l.res)
            : how == 0 ? pool_->free_now(p)
            : how == 1 ? pool_->free(p, release_info{nullptr, q_[0], true})
                       : pool_->free_if_live(p, release_info{})) == status::success);
    for (const rec &x : l.inherited) // the pool puts these back pending
      if (!x.ev->complete) recs_.push_back(x);
    freed(it);
  }

  void freed(live_it it) {
    const std::uintptr_t lo = it->first;
    const std::size_t bs = it->second.bs;
    const alloc_result res = it->second.res;
    live_.erase(it);
    block_info info;
    LCHECK(!pool_->lookup(at(lo), info));
    if (pick(4)) return;
    const status again = pool_->owns(at(lo)) ? status::double_free : status::not_owned; // undone: chunk may be gone
    LCHECK(pool_->free_now(at(lo)) == again && pool_->cancel(res) == again);
    LCHECK(pool_->free_if_live(at(lo), release_info{}) == status::not_owned);
    if (bs >= 128) LCHECK(pool_->free_now(at(lo + 64)) == again);
  }

  void complete(unsigned n) {
    std::vector<sim_event *> ready;
    for (sim_event *e : events_)
      if (!e->complete && incomplete(info_.at(e).preds).empty()) ready.push_back(e);
    std::shuffle(ready.begin(), ready.end(), rng_);
    for (unsigned i = 0; i < n && i < ready.size(); ++i) ready[i]->complete = true;
  }

  // Everything completes; after collect() the pool holds no event.
  void quiesce() {
    for (sim_event *e : events_) e->complete = true;
    pool_->collect();
    LCHECK(pool_->pending_blocks() == 0 && be_.total_pool_refs() == 0);
    recs_.clear();
    for (auto &kv : live_) check_live(kv.first);
  }

  void check_live(std::uintptr_t lo) {
    const live_t &l = live_.at(lo);
    for (std::uintptr_t probe : {lo, lo + l.bs - 1}) {
      block_info info;
      LCHECK(pool_->lookup(at(probe), info));
      LCHECK(u(info.base) == lo && info.size == l.requested && info.block_size == l.bs);
    }
    LCHECK(pool_->owns(at(lo)));
    if (l.bs >= 128) LCHECK(pool_->free(at(lo + 64), release_info{}) == status::not_block_start);
  }

  void invariants() {
    const pool_stats st = pool_->stats();
    std::size_t used = 0;
    for (auto &kv : live_) used += kv.second.bs;
    LCHECK(st.used_current == used && st.used_high >= used);
    LCHECK(pool_->live_allocations() == live_.size());
    LCHECK(st.reserved_current == (fixed_size_ ? fixed_size_ : be_.outstanding));
    LCHECK(!cfg_.max_size || st.reserved_current <= cfg_.max_size);
  }

  void finish() {
    be_.fail_chunks = be_.fail_dependencies = false;
    if (pick(3) == 0) { // destroyed with live, pending, cached and quick blocks
      pool_.reset();
      LCHECK(be_.total_pool_refs() == 0 && be_.outstanding == 0);
      return;
    }
    while (!live_.empty()) {
      if (live_.begin()->second.no_sync || pick(2))
        stream_free(live_.begin());
      else
        sync_free(live_.begin(), pick(4));
    }
    quiesce();
    LCHECK(pool_->stats().used_current == 0);
    LCHECK(pool_->idle_bytes() == (fixed_size_ ? 0 : pool_->stats().reserved_current));
    pool_->trim_to(0);
    LCHECK(pool_->stats().reserved_current == fixed_size_ && pool_->chunk_count() == (fixed_size_ ? 1u : 0u));
    pool_.reset();
    LCHECK(be_.total_pool_refs() == 0);
  }

  std::mt19937_64 rng_;
  tally &t_;
  fake_backend be_; // outlives pool_
  pool_config cfg_;
  std::unique_ptr<ordered_pool> pool_;
  std::size_t fixed_size_ = 0, op_ = 0, next_q_ = 0, scale_ = 1;
  bool small_ = false, fail_toggles_ = false, closed_ = false;
  queue_id q_[4] = {};
  std::map<std::uintptr_t, live_t> live_;
  std::vector<rec> recs_;
  std::vector<sim_event *> events_, hooked_;
  struct ev_info {
    std::size_t id;
    std::vector<sim_event *> preds; // what its command follows
  };
  std::map<sim_event *, ev_info> info_;
  std::map<queue_id, std::vector<sim_event *>> carry_; // what an in-order queue's next command follows
};

std::uint64_t env_u64(const char *name, std::uint64_t fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(LayoutAttack, RandomProgramsAgainstAShadowModel) {
  const std::uint64_t programs = env_u64("ORDO_POOL_LAYOUT_PROGRAMS", 400);
  const std::uint64_t first = env_u64("ORDO_POOL_LAYOUT_SEED", 1);
  tally t;
  for (std::uint64_t seed = first; seed < first + programs; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    try {
      program(seed, t).run();
    } catch (const failure &f) {
      FAIL() << "program " << seed << ": " << f.what() << "\n  reproduce: ORDO_POOL_LAYOUT_SEED=" << seed
             << " ORDO_POOL_LAYOUT_PROGRAMS=1";
    }
  }
  std::printf("[ layout   ] %zu allocs (%zu out of memory, %zu with 2+ dependencies, %zu undone); by source: %zu "
              "%zu %zu %zu %zu\n",
              t.allocs, t.ooms, t.multi_dep, t.cancels, t.by_source[0], t.by_source[1], t.by_source[2], t.by_source[3],
              t.by_source[4]);
  if (programs >= 200) { // every path was taken
    for (std::size_t n : t.by_source) EXPECT_GT(n, 0u);
    EXPECT_GT(t.multi_dep, 0u);
  }
}

// --- what this attack found -----------------------------------------------------------
// Each of these failed before its fix (four also with the two-line blocks; the aligned
// block under the cap only with the one-line ones).

// forget_queue() drops the identity from pending blocks only: a live block that took over
// a release of that queue keeps it, and a synchronous free puts it back pending on the
// old identity, which rule 1 then hands to the queue that reuses it.
TEST(LayoutAttackFound, ForgetQueueMissesTakenOverReleases) {
  fake_backend be;
  ordered_pool p(be, {});
  void *a = must(p, req(4 * KiB, qa));
  sim_event *f = be.make_event();
  ASSERT_EQ(p.free(a, on(f, qa)), status::success);
  p.collect();                             // pending in the core
  EXPECT_EQ(must(p, req(4 * KiB, qa)), a); // rule 1: takes f over, with queue qa
  p.forget_queue(qa);                      // qa's identity may now be reused
  ASSERT_EQ(p.free_now(a), status::success);
  EXPECT_NE(must(p, req(4 * KiB, qa)), a) << "f has not completed";
  // The same through a block the lane cache lent.
  void *b = must(p, req(8 * KiB, qb));
  sim_event *g = be.make_event();
  ASSERT_EQ(p.free(b, on(g, qb)), status::success);
  EXPECT_EQ(must(p, req(8 * KiB, qb)), b);
  p.forget_queue(qb);
  ASSERT_EQ(p.free_now(b), status::success);
  EXPECT_NE(must(p, req(8 * KiB, qb)), b) << "g has not completed";
  f->complete = g->complete = true;
}

// A fixed pool whose shared budget cannot reserve the user's memory: the reservation
// failed unnoticed, and the destructor gave back what was never reserved. Now the pool
// holds and uses what the budget has room for, and gives back exactly that.
TEST(LayoutAttackFound, FixedPoolOverASmallerSharedBudget) {
  fake_backend be;
  auto budget = std::make_shared<pool_budget>(TiB16, 0);
  {
    ordered_pool p(be, {}, at(std::uintptr_t{1} << 45), std::size_t{1} << 50, budget);
    EXPECT_EQ(budget->stats().reserved_current, TiB16);
  }
  EXPECT_EQ(budget->stats().reserved_current, 0u);
  ordered_pool g(be, {}, budget); // the budget's other cores can still grow
  void *small = must(g, req(64));
  ASSERT_NE(small, nullptr);
  const std::size_t taken = budget->stats().reserved_current;
  {
    // Beside a growing core: only the room it leaves, and only those bytes are used.
    ordered_pool p(be, {}, at(std::uintptr_t{1} << 46), TiB16, budget);
    EXPECT_EQ(budget->stats().reserved_current, TiB16);
    alloc_result r{};
    EXPECT_EQ(p.alloc(req(TiB16 - taken + 64).r, r), status::out_of_memory);
    void *a = must(p, req(TiB16 - taken));
    EXPECT_EQ(u(a), std::uintptr_t{1} << 46);
    EXPECT_FALSE(p.owns(at((std::uintptr_t{1} << 46) + (TiB16 - taken))));
    ASSERT_EQ(p.free_now(a), status::success);
  }
  EXPECT_EQ(budget->stats().reserved_current, taken);
  ASSERT_EQ(g.free_now(small), status::success);
}

// chunk_granularity near SIZE_MAX wraps to 0 when rounded up to 64 (the constructor's
// align_up), and every chunk the pool then asks for is 0 bytes: it never grows.
TEST(LayoutAttackFound, GranularityNearSizeMaxStillGrows) {
  fake_backend be;
  pool_config cfg;
  cfg.chunk_granularity = SIZE_MAX;
  ordered_pool p(be, cfg);
  alloc_result r{};
  ASSERT_EQ(p.alloc(req(64).r, r), status::success);
  EXPECT_EQ(p.free_now(r.ptr), status::success);
}

// The cap is checked on size + alignment - 64 before anything is looked at, so a fixed
// pool (or a free block) that is already aligned cannot serve a block well under 16 TiB.
TEST(LayoutAttackFound, AlignedBlockUnderTheCapFromAFixedPool) {
  fake_backend be;
  ordered_pool p(be, {}, at(TiB16), TiB16);
  alloc_result r{};
  ASSERT_EQ(p.alloc(req(TiB16 / 2 + 64, qa, true, TiB16 / 2).r, r), status::success);
  EXPECT_EQ(u(r.ptr), TiB16);
  EXPECT_EQ(p.free_now(r.ptr), status::success);
}

// A rule-3 block whose list of releases collect() shrank to one entry: free() stocks no
// block objects for a synchronous free of it (ordered_pool.cpp, `k > 1`), yet
// release_now() still cuts the pending piece out of the block (two new blocks for one in
// the middle), and with no spare object new_block() dereferences null. The aligned allocs
// only use up the spare objects (3 per alloc: a chunk, a head and a tail).
void sync_free_of_one_run_left() {
  fake_backend be;
  be.skew = 64;
  pool_config cfg;
  cfg.chunk_granularity = 256 * KiB;
  ordered_pool p(be, cfg);
  void *blk[4];
  sim_event *ev[4];
  for (auto &b : blk) b = must(p, req(64 * KiB, qa, false));
  for (int i = 0; i < 4; ++i) p.free(blk[i], on(ev[i] = be.make_event(), qb, false));
  be.fail_chunks = true; // the pool cannot grow: rule 3 over all four
  alloc_result big{};
  must(p, req(256 * KiB, qd, false), &big);
  be.fail_chunks = false;
  ev[0]->complete = ev[2]->complete = ev[3]->complete = true;
  p.collect(); // the run keeps ev[1] only
  for (int i = 0; i < 4; ++i) must(p, req(64, qa, true, 4096));
  EXPECT_EQ(p.free_now(big.ptr), status::success); // crashes here
  EXPECT_EQ(p.pending_blocks(), 1u);
  ev[1]->complete = true;
  std::exit(::testing::Test::HasFailure() ? 1 : 0);
}
TEST(LayoutAttackFound, SyncFreeOfARuleThreeBlockWithOneReleaseLeft) {
  EXPECT_EXIT(sync_free_of_one_run_left(), ::testing::ExitedWithCode(0), "");
}

} // namespace
} // namespace ordo::pool::test
