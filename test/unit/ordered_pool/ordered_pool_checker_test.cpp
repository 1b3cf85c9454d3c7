// SPDX-License-Identifier: Apache-2.0
// Randomized checker of the ordered pool core.
//
// Each program is a random mix of alloc, kernel (a use of an allocation) and
// free commands with random wait lists over a few simulated queues, some
// in-order and some not. A simulated out-of-order executor runs ready commands
// in a random legal order, interleaved with enqueueing, so that frees
// complete at random moments relative to later allocs.
//
// Two checks:
//  - static: whenever the pool hands out bytes that an earlier allocation
//    owned, that allocation's free must be ordered before the new alloc
//    command: complete already, or reachable through the command graph
//    (wait lists, in-order queues, internal dependencies the pool added).
//    Every use of the old owner precedes its free and every use of the new
//    owner follows its alloc, so this covers every legal execution order.
//  - dynamic: each use checks that the bytes still hold what the same
//    allocation wrote last (catches overlaps in the order actually run).
//
// ORDO_POOL_CHECK_PROGRAMS sets the number of programs (default 2000; 1000
// in a ThreadSanitizer build),
// ORDO_POOL_CHECK_SEED the first seed (default 1).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ordo_pool/ordered_pool.hpp"

namespace ordo::pool::test {
namespace {

enum class kind { alloc, kernel, free };

struct command {
  int id = 0;
  kind k = kind::kernel;
  int queue = 0;
  int handle = -1;
  std::vector<int> deps; // wait list, in-order predecessor, internal dependencies
  bool executed = false;
  int pool_refs = 0;
};

struct allocation {
  int alloc_cmd = -1;
  unsigned char *ptr = nullptr;
  std::size_t size = 0, block = 0;
  bool freed = false;
  bool freed_now = false; // synchronous free (no event)
  int free_cmd = -1;
  std::vector<int> uses;
  int expect = -1; // last value written by this allocation, -1 = none yet
  bool needs_zero = false;
};

struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#if defined(__SANITIZE_THREAD__)
#define ORDO_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ORDO_TEST_TSAN 1
#endif
#endif
#ifdef ORDO_TEST_TSAN
// The checker is single-threaded: ThreadSanitizer only makes it slower.
constexpr std::size_t default_programs = 1000;
#else
constexpr std::size_t default_programs = 2000;
#endif

std::size_t env_size(const char *name, std::size_t dflt) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

#if defined(__SANITIZE_ADDRESS__)
#define ORDO_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORDO_TEST_ASAN 1
#endif
#endif
#ifdef ORDO_TEST_ASAN
#include <sanitizer/asan_interface.h>
#define ORDO_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ORDO_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ORDO_POISON(p, n) ((void)(p), (void)(n))
#define ORDO_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

// Backend memory: one region with first-fit placement. Every program gives
// all of it back, so a seed gets the same addresses, hence the same pool
// decisions, in any run. Memory given back is poisoned under AddressSanitizer.
class arena {
public:
  static constexpr std::size_t bytes = std::size_t{64} << 20;
  arena() : base_(static_cast<unsigned char *>(std::aligned_alloc(4096, bytes))) {
    holes_[0] = bytes;
    ORDO_POISON(base_, bytes);
  }
  ~arena() {
    ORDO_UNPOISON(base_, bytes);
    std::free(base_);
  }
  arena(const arena &) = delete;
  arena &operator=(const arena &) = delete;

  void *get(std::size_t size) {
    size = round(size);
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      if (it->second < size) continue;
      const std::size_t off = it->first, rest = it->second - size;
      holes_.erase(it);
      if (rest) holes_[off + size] = rest;
      ORDO_UNPOISON(base_ + off, size);
      return base_ + off;
    }
    return nullptr;
  }
  bool empty() const { return holes_.size() == 1 && holes_.begin()->second == bytes; }

  void put(void *p, std::size_t size) {
    size = round(size);
    std::size_t off = static_cast<unsigned char *>(p) - base_;
    ORDO_POISON(p, size);
    auto next = holes_.lower_bound(off);
    if (next != holes_.end() && off + size == next->first) {
      size += next->second;
      next = holes_.erase(next);
    }
    if (next != holes_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += size;
        return;
      }
    }
    holes_[off] = size;
  }

private:
  static std::size_t round(std::size_t n) { return (n + 63) / 64 * 64; }
  unsigned char *base_;
  std::map<std::size_t, std::size_t> holes_; // offset -> size
};

// The simulated device: command graph, executor and backend at once.
class world : public backend {
public:
  explicit world(std::uint64_t seed) : rng(seed) {}

  // --- backend ---
  void *get_chunk(std::size_t size) override {
    if (chunk_failures && rng() % 8 == 0) return nullptr;
    void *p = memory().get(size);
    if (p) {
      chunks[p] = size;
      outstanding += size;
    }
    return p;
  }
  void put_chunk(void *base, std::size_t size) override {
    auto it = chunks.find(base);
    note(it != chunks.end() && it->second == size, "put_chunk of an unknown chunk");
    if (it == chunks.end()) return;
    auto lo = static_cast<unsigned char *>(base);
    for (const allocation &a : allocs)
      if (a.ptr < lo + size && lo < a.ptr + a.block)
        note(a.freed && (a.freed_now || cmds[a.free_cmd].executed),
             "chunk returned while an allocation in it may be in use");
    outstanding -= size;
    chunks.erase(it);
    memory().put(base, size);
  }
  bool event_complete(event_handle ev) override {
    command &c = *static_cast<command *>(ev);
    note(c.pool_refs > 0, "event_complete on an event the pool does not hold");
    return c.executed;
  }
  bool add_dependency(command_context cmd, event_handle ev) override {
    command &e = *static_cast<command *>(ev);
    note(e.pool_refs > 0, "add_dependency on an event the pool does not hold");
    static_cast<command *>(cmd)->deps.push_back(e.id);
    return true;
  }
  void retain_event(event_handle ev) override { ++static_cast<command *>(ev)->pool_refs; }
  void release_event(event_handle ev) override {
    command &c = *static_cast<command *>(ev);
    note(c.pool_refs > 0, "release_event below zero");
    if (c.pool_refs > 0) --c.pool_refs;
  }
  bool is_ordered_before(command_context cmd, event_handle ev) override {
    if (!hook) return false;
    return reaches(*static_cast<command *>(cmd), static_cast<command *>(ev)->id);
  }

  // --- graph ---
  static void require(bool ok, const char *what) {
    if (!ok) throw failure(what);
  }
  // The hooks run inside the pool: record the first problem instead of
  // throwing through it; the program checks after every step.
  void note(bool ok, const char *what) {
    if (!ok && hook_error.empty()) hook_error = what;
  }

  // Is command `target` ordered before `from` through the graph?
  bool reaches(const command &from, int target) {
    mark.assign(cmds.size(), 0);
    stack.assign(from.deps.begin(), from.deps.end());
    while (!stack.empty()) {
      int c = stack.back();
      stack.pop_back();
      if (c == target) return true;
      if (mark[c]) continue;
      mark[c] = 1;
      for (int d : cmds[c].deps) stack.push_back(d);
    }
    return false;
  }

  bool ready(const command &c) const {
    if (c.executed) return false;
    for (int d : c.deps)
      if (!cmds[d].executed) return false;
    return true;
  }

  void execute(command &c) {
    c.executed = true;
    allocation &a = allocs[c.handle];
    if (c.k == kind::alloc && a.needs_zero) {
      std::memset(a.ptr, 0, a.size);
      a.expect = 0;
    } else if (c.k == kind::kernel) {
      if (a.expect >= 0)
        for (std::size_t i = 0; i < a.size; ++i) require(a.ptr[i] == a.expect, "bytes changed under a live allocation");
      a.expect = static_cast<unsigned char>(c.id * 7 + 1);
      std::memset(a.ptr, a.expect, a.size);
    }
  }

  // Run one random ready command; false when none is ready.
  bool step() {
    std::vector<int> &r = scratch;
    r.clear();
    for (int id : unexecuted)
      if (ready(cmds[id])) r.push_back(id);
    if (r.empty()) return false;
    int id = r[rng() % r.size()];
    execute(cmds[id]);
    unexecuted.erase(std::find(unexecuted.begin(), unexecuted.end(), id));
    return true;
  }

  template <class Done> void run_until(Done done) {
    while (!done()) require(step(), "executor stuck");
  }

  std::mt19937_64 rng;
  std::deque<command> cmds; // stable addresses: they are the events
  std::vector<int> unexecuted, scratch, stack;
  std::vector<char> mark;
  std::vector<allocation> allocs;
  static arena &memory() {
    static arena a;
    return a;
  }
  std::map<void *, std::size_t> chunks;
  std::size_t outstanding = 0;
  bool hook = false;
  bool chunk_failures = false;
  std::string hook_error;
};

struct tallies {
  std::size_t programs = 0, allocs = 0, ooms = 0;
  std::size_t by_source[5] = {};
};

class program {
public:
  program(std::uint64_t seed, tallies &t) : w(seed), t(t) {}

  void run() {
    auto &rng = w.rng;
    const int nq = 2 + rng() % 3;
    for (int q = 0; q < nq; ++q) {
      in_order.push_back(rng() % 2 == 0);
      last_on_queue.push_back(-1);
    }
    const std::size_t grans[] = {4096, 16384, 65536};
    gran = grans[rng() % 3];
    pool_config cfg;
    cfg.chunk_granularity = gran;
    const int pick = rng() % 8;
    if (pick < 3) cfg.max_size = gran * (1 + rng() % 4) + (rng() % 2) * 64 * (rng() % 16);
    cfg.release_threshold = (rng() % 3) * gran;
    if (cfg.max_size && cfg.release_threshold > cfg.max_size) cfg.release_threshold = 0;
    cfg.zero_init = rng() % 4 == 0;
    cfg.reuse_ordered = rng() % 10 != 0;
    cfg.reuse_completed = rng() % 10 != 0;
    cfg.reuse_with_dependency = rng() % 10 != 0;
    w.hook = rng() % 2 == 0;
    w.chunk_failures = rng() % 10 == 0;
    fixed = rng() % 7 == 0;
    if (fixed) {
      const std::size_t n = gran * (1 + rng() % 4) + 64 + rng() % 200;
      // Page aligned: alignment requests must see the same addresses in any run.
      user_mem.reset(static_cast<unsigned char *>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096)));
      pool = std::make_unique<ordered_pool>(w, cfg, user_mem.get() + rng() % 64, n - 64);
    } else {
      pool = std::make_unique<ordered_pool>(w, cfg);
    }

    const int steps = 30 + rng() % 90;
    for (int s = 0; s < steps; ++s) {
      const int r = rng() % 100;
      if (r < 30)
        do_alloc();
      else if (r < 55)
        do_kernel();
      else if (r < 72)
        do_free();
      else if (r < 76)
        do_free_now();
      else if (r < 88)
        for (int k = rng() % 5; k >= 0 && w.step();) --k;
      else if (r < 93)
        do_finish(rng() % nq);
      else if (r < 95)
        do_trim();
      else if (r < 97)
        do_bad_input();
      else
        pool->collect();
      check_invariants();
    }
    // Drain: free everything, run everything, and the pool must be empty.
    for (std::size_t h = 0; h < w.allocs.size(); ++h)
      if (!w.allocs[h].freed) rng() % 2 ? free_handle(h) : free_now_handle(h);
    w.run_until([&] { return w.unexecuted.empty(); });
    check_invariants();
    pool->collect();
    world::require(pool->pending_blocks() == 0, "pending blocks after every event completed");
    world::require(pool->live_allocations() == 0, "live allocations after freeing all");
    world::require(pool->stats().used_current == 0, "used bytes after freeing all");
    pool->trim_to(0);
    world::require(fixed || pool->stats().reserved_current == 0, "reserve left after trim");
    pool.reset();
    check_invariants_after_death();
    for (const command &c : w.cmds) world::require(c.pool_refs == 0, "event reference leaked");
    ++t.programs;
  }

private:
  command &new_command(kind k, int q, int handle) {
    w.cmds.emplace_back();
    command &c = w.cmds.back();
    c.id = static_cast<int>(w.cmds.size()) - 1;
    c.k = k;
    c.queue = q;
    c.handle = handle;
    if (in_order[q] && last_on_queue[q] >= 0) c.deps.push_back(last_on_queue[q]);
    return c;
  }
  void commit(command &c) {
    last_on_queue[c.queue] = c.id;
    w.unexecuted.push_back(c.id);
  }
  // A few recent commands, frees preferred (they make rule 1 happen).
  void random_waits(command &c, std::vector<event_handle> *list) {
    const int n = w.rng() % 3;
    const int total = static_cast<int>(w.cmds.size()) - 1; // excluding c itself
    for (int i = 0; i < n && total > 0; ++i) {
      int id = total - 1 - static_cast<int>(w.rng() % std::min(total, 12));
      if (w.cmds[id].k != kind::free && w.rng() % 2) continue;
      add_wait(c, id, list);
    }
  }
  void add_wait(command &c, int id, std::vector<event_handle> *list) {
    c.deps.push_back(id);
    if (list) list->push_back(&w.cmds[id]);
  }
  // Wait for `id` unless the in-order queue already implies it.
  void order_after(command &c, int id) {
    const command &d = w.cmds[id];
    if (!(in_order[c.queue] && d.queue == c.queue)) add_wait(c, id, nullptr);
  }
  int live_handle() {
    std::vector<int> live;
    for (std::size_t h = 0; h < w.allocs.size(); ++h)
      if (!w.allocs[h].freed) live.push_back(static_cast<int>(h));
    return live.empty() ? -1 : live[w.rng() % live.size()];
  }

  void do_alloc() {
    auto &rng = w.rng;
    const int q = rng() % in_order.size();
    std::size_t size;
    switch (rng() % 4) {
    case 0: size = 1 + rng() % 200; break;
    case 1: size = 1 + rng() % gran; break;
    case 2: size = 64 * (1 + rng() % (gran / 64)); break;
    default: size = 1 + rng() % (2 * gran); break;
    }
    const std::size_t aligns[] = {0, 0, 0, 0, 64, 128, 256, 4096};
    const std::size_t align = aligns[rng() % 8];

    const int handle = static_cast<int>(w.allocs.size());
    command &c = new_command(kind::alloc, q, handle);
    std::vector<event_handle> waits;
    random_waits(c, &waits);
    alloc_request rq;
    rq.size = size;
    rq.alignment = align;
    rq.queue = &in_order[0] + q; // any stable distinct address per queue
    rq.in_order = in_order[q];
    rq.wait_list = waits.data();
    rq.wait_count = waits.size();
    rq.command = &c;

    const pool_stats before = pool->stats();
    const std::size_t live_before = pool->live_allocations();
    alloc_result res{};
    const status st = pool->alloc(rq, res);
    ++t.allocs;
    if (st != status::success) {
      world::require(st == status::out_of_memory, "unexpected alloc error");
      const pool_stats after = pool->stats();
      // Reserved may only fall: at the maximum, wholly idle chunks go back to make room
      // before the backend is asked, and stay gone if the backend then refuses
      // (docs/async-alloc.md, "Limits"). Nothing in use changes.
      world::require(after.reserved_current <= before.reserved_current && after.used_current == before.used_current &&
                         after.reserved_high == before.reserved_high && after.used_high == before.used_high &&
                         pool->live_allocations() == live_before,
                     "failed alloc changed the pool");
      ++t.ooms;
      w.cmds.pop_back(); // never enqueued
      return;
    }
    ++t.by_source[static_cast<int>(res.source)];
    auto *p = static_cast<unsigned char *>(res.ptr);
    const std::size_t eff = align ? std::max<std::size_t>(align, 64) : 64;
    world::require(reinterpret_cast<std::uintptr_t>(p) % eff == 0, "misaligned block");
    world::require(res.block_size == (size + 63) / 64 * 64, "block size is not the rounded size");
    world::require(res.needs_zero == pool->zero_init(), "needs_zero does not follow the pool");

    // Static check against every earlier owner of these bytes.
    for (const allocation &old : w.allocs) {
      if (!(old.ptr < p + res.block_size && p < old.ptr + old.block)) continue;
      world::require(old.freed, "bytes handed out twice while still allocated");
      if (old.freed_now || w.cmds[old.free_cmd].executed) continue;
      if (!w.reaches(c, old.free_cmd)) {
        std::ostringstream os;
        os << "alloc " << c.id << " may run before free " << old.free_cmd << " of the previous owner (source "
           << static_cast<int>(res.source) << ")";
        throw failure(os.str());
      }
    }
    allocation a;
    a.alloc_cmd = c.id;
    a.ptr = p;
    a.size = size;
    a.block = res.block_size;
    a.needs_zero = res.needs_zero;
    w.allocs.push_back(a);
    commit(c);
  }

  void do_kernel() {
    const int h = live_handle();
    if (h < 0) return;
    command &c = new_command(kind::kernel, w.rng() % in_order.size(), h);
    allocation &a = w.allocs[h];
    if (!a.uses.empty() && w.rng() % 2)
      order_after(c, a.uses[w.rng() % a.uses.size()]); // transitively after the alloc
    else
      order_after(c, a.alloc_cmd);
    random_waits(c, nullptr);
    a.uses.push_back(c.id);
    commit(c);
  }

  void free_handle(int h) {
    command &c = new_command(kind::free, w.rng() % in_order.size(), h);
    allocation &a = w.allocs[h];
    order_after(c, a.alloc_cmd);
    for (int u : a.uses) order_after(c, u);
    random_waits(c, nullptr);
    const release_info rel{&c, &in_order[0] + c.queue, static_cast<bool>(in_order[c.queue])};
    world::require(pool->free(a.ptr, rel) == status::success, "free failed");
    a.freed = true;
    a.free_cmd = c.id;
    commit(c);
  }
  void do_free() {
    const int h = live_handle();
    if (h >= 0) free_handle(h);
  }

  // The host waits for every use of its own, then frees synchronously. It need
  // not wait for the alloc command: a block that alloc took over from a pending
  // free must stay pending on that free (the previous owner may still use it).
  void free_now_handle(int h) {
    allocation &a = w.allocs[h];
    w.run_until([&] {
      if (a.needs_zero && !w.cmds[a.alloc_cmd].executed)
        return false; // zeroing is the alloc command's own use of the block
      for (int u : a.uses)
        if (!w.cmds[u].executed) return false;
      return true;
    });
    world::require(pool->free_now(a.ptr) == status::success, "free_now failed");
    a.freed = a.freed_now = true;
  }
  void do_free_now() {
    const int h = live_handle();
    if (h >= 0) free_now_handle(h);
  }

  void do_finish(int q) {
    w.run_until([&] {
      for (int id : w.unexecuted)
        if (w.cmds[id].queue == q) return false;
      return true;
    });
    pool->release_above_threshold();
    if (w.rng() % 4 == 0) // as if the queue were released and made again
      pool->forget_queue(&in_order[0] + q);
    const pool_stats s = pool->stats();
    world::require(fixed || s.reserved_current >= s.used_current, "reserved below used");
  }

  void do_trim() {
    const std::size_t keep = (w.rng() % 3) * gran;
    pool->trim_to(keep);
  }

  void do_bad_input() {
    const pool_stats before = pool->stats();
    alloc_result res{};
    alloc_request rq;
    world::require(pool->alloc(rq, res) == status::invalid_size, "size 0 accepted");
    int local = 0;
    world::require(pool->free_now(&local) == status::not_owned, "foreign pointer accepted");
    for (const allocation &a : w.allocs) {
      if (!a.freed) continue;
      block_info info;
      if (pool->lookup(a.ptr, info) && info.base == a.ptr) continue; // the address belongs to a live allocation again
      const status st = pool->free_now(a.ptr);
      world::require(st == status::double_free || st == status::not_block_start || st == status::not_owned,
                     "double free accepted");
      break;
    }
    const pool_stats after = pool->stats();
    world::require(after.used_current == before.used_current && after.reserved_current == before.reserved_current,
                   "bad input changed the pool");
  }

  void check_invariants_after_death() {
    if (!w.hook_error.empty()) throw failure(w.hook_error);
    world::require(w.chunks.empty() && world::memory().empty(), "chunks left after the pool died");
  }

  void check_invariants() {
    if (!w.hook_error.empty()) throw failure(w.hook_error);
    const pool_stats s = pool->stats();
    std::size_t used = 0, live = 0;
    for (const allocation &a : w.allocs)
      if (!a.freed) {
        used += a.block;
        ++live;
      }
    world::require(s.used_current == used, "used statistic is not exact");
    world::require(pool->live_allocations() == live, "live count is wrong");
    world::require(s.used_high >= s.used_current && s.reserved_high >= s.reserved_current,
                   "high-water mark below current");
    if (!fixed) {
      world::require(s.reserved_current == w.outstanding, "reserved is not what the backend gave");
      world::require(!pool->max_size() || s.reserved_current <= pool->max_size(), "reserved beyond the maximum size");
    }
  }

  struct free_deleter {
    void operator()(unsigned char *p) const { std::free(p); }
  };
  // Declaration order is destruction order reversed: the pool goes first.
  world w;
  tallies &t;
  std::unique_ptr<unsigned char, free_deleter> user_mem;
  std::unique_ptr<ordered_pool> pool;
  std::vector<char> in_order; // char: a stable address per queue
  std::vector<int> last_on_queue;
  std::size_t gran = 0;
  bool fixed = false;
};

TEST(OrderedPoolChecker, RandomProgramsNeverShareBytesUnordered) {
  const std::size_t programs = env_size("ORDO_POOL_CHECK_PROGRAMS", default_programs);
  const std::uint64_t first = env_size("ORDO_POOL_CHECK_SEED", 1);
  tallies t;
  for (std::uint64_t seed = first; seed < first + programs; ++seed) {
    try {
      program(seed, t).run();
    } catch (const failure &f) {
      FAIL() << "program with seed " << seed << " failed: " << f.what()
             << "\n  reproduce: ORDO_POOL_CHECK_SEED=" << seed << " ORDO_POOL_CHECK_PROGRAMS=1";
    }
  }
  std::printf("[ checker  ] %zu programs, %zu allocs (%zu out of memory); sources: free %zu, "
              "ordered %zu, completed %zu, internal-dependency %zu, new-chunk %zu\n",
              t.programs, t.allocs, t.ooms, t.by_source[0], t.by_source[1], t.by_source[2], t.by_source[3],
              t.by_source[4]);
  if (programs >= 500) { // every path must have been taken
    for (std::size_t n : t.by_source) EXPECT_GT(n, 0u);
  }
}

} // namespace
} // namespace ordo::pool::test
