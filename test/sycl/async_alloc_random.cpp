// SPDX-License-Identifier: Apache-2.0
// sycl_ext_oneapi_async_memory_alloc driven by seeded random programs, the way an
// application uses it: several host threads, each with in-order and out-of-order queues
// on one context, allocating (async_malloc, async_malloc_from_pool; queue and handler
// forms) blocks of 1 B .. 4 MiB, writing them (memset, fill, memcpy from the host, a host
// task producing the data, copies between blocks), ordering all of it with depends_on
// and barriers across queues and threads, freeing (async_free) and creating and
// destroying pools. The host keeps a shadow copy of every block; after every
// synchronisation (queue wait, event wait, wait on a list, all queues) the blocks it
// covers are copied back and compared byte for byte, live blocks never overlap, and
// pool statistics agree with what is live.
//
// Kernels need a SYCL device compiler, which this host-only program is built without
// (docs/sycl.md): host tasks stand in for the producing kernels.
//
// Environment:
//   ORDO_SYCL_RANDOM_SEED      first seed (default 1; "time": from the clock)
//   ORDO_SYCL_RANDOM_PROGRAMS  programs, seeds SEED, SEED+1, ... (default 10)
//   ORDO_SYCL_RANDOM_THREADS   host threads per program (default 3)
//   ORDO_SYCL_RANDOM_STEPS     operations per thread (default 200)
//   ORDO_SYCL_RANDOM_TRACE=1   print every operation (to reduce a failing seed)
//   ORDO_SYCL_RANDOM_HANG_S    a program that runs longer is reported as a hang (default 60)
//   ORDO_SYCL_RANDOM_HOST_DEPS=1  commands depend on host tasks (see Config::host_deps)
#include "sycl_check.hpp"

#include <sycl/ext/oneapi/experimental/async_alloc/async_alloc.hpp>
#include <sycl/ext/oneapi/experimental/async_alloc/memory_pool.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

using namespace ordo_sycl;
namespace syclex = sycl::ext::oneapi::experimental;
using sycl::usm::alloc;

namespace {

constexpr size_t KiB = 1024, MiB = KiB * KiB;
constexpr size_t kMaxBlock = 4 * MiB;
constexpr size_t kThreadLiveCap = 12 * MiB; // bytes one thread keeps live at most
constexpr size_t kMaxLiveBlocks = 20;
constexpr size_t kMailboxCap = 4;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Rng {
  uint64_t s;
  uint64_t next() { return mix(s++); }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
  bool chance(int pct) { return below(100) < static_cast<size_t>(pct); }
  // Log-uniform in [lo, hi]: mostly small, now and then large.
  size_t size_log(size_t lo, size_t hi) {
    int bits_lo = 0, bits_hi = 0;
    while ((size_t(1) << (bits_lo + 1)) <= lo) ++bits_lo;
    while ((size_t(1) << bits_hi) < hi) ++bits_hi;
    int b = bits_lo + static_cast<int>(below(static_cast<size_t>(bits_hi - bits_lo + 1)));
    size_t base = size_t(1) << b;
    size_t v = base + below(base);
    return std::clamp(v, lo, hi);
  }
};

// The bytes a host write puts in: derived from (seed, block id, write number).
void pattern(uint8_t *dst, size_t n, uint64_t key) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = mix(key ^ mix(i / 8));
    std::memcpy(dst + i, &w, std::min<size_t>(8, n - i));
  }
}

std::string hex(const void *p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

struct Config {
  uint64_t seed = 1;
  int programs = 10;
  int threads = 3;
  int steps = 200;
  int hang_s = 60;
  bool trace = false;
  // Host tasks among the other commands, where commands depend on them. The runtime
  // then deadlocks now and then (docs/sycl.md), so by default they run on a queue of
  // their own and the host waits for a producing one before using its data.
  bool host_deps = false;
};

int env_int(const char *name, int fallback) {
  std::string v = env_or(name, "");
  return v.empty() ? fallback : std::atoi(v.c_str());
}

struct Counters {
  std::atomic<uint64_t> allocs{0}, refused{0}, frees{0}, writes{0}, copies{0}, reads{0}, syncs{0}, pools{0},
      handoffs{0}, verified_bytes{0};
};

// One block: where it is, what it must hold, and the last command that touched it (every
// command on a block is ordered after the previous one, so the shadow is exact).
struct Block {
  uint64_t id = 0;
  uint8_t *p = nullptr;
  size_t size = 0;
  uint64_t pool_uid = 0; // 0: the default pool; 1: the program's shared pool; else a thread's own
  std::vector<uint8_t> shadow;
  sycl::event last;
  bool has_event = false; // false: only the in-order queue last_q orders after it so far
  bool host_dep = false;  // `last` may still wait for a host task (below)
  int last_q = -1;        // the owner's queue of `last`, -1 when another thread's
  std::deque<std::string> hist;
  uint64_t writes = 0;

  void note(const std::string &s) {
    hist.push_back(s);
    if (hist.size() > 10) hist.pop_front();
  }
  std::string describe() const {
    std::string s = "block " + std::to_string(id) + " at " + hex(p) + " size " + std::to_string(size) + " pool " +
                    std::to_string(pool_uid) + "; its last commands:";
    for (const std::string &h : hist) s += " [" + h + "]";
    return s;
  }
};

// What every thread of one program shares.
struct Program {
  const Config &cfg;
  uint64_t seed;
  sycl::context ctx;
  sycl::device dev;
  bool fill_ok;
  std::optional<syclex::memory_pool> shared_pool;
  Counters n;

  std::mutex m;                                          // guards everything below
  std::map<uintptr_t, std::pair<size_t, uint64_t>> live; // address -> (size, block id), every thread's
  std::deque<Block> mailbox;                             // blocks handed from one thread to another
  std::vector<std::pair<sycl::event, bool>> beacons;     // events any thread may wait for (, host_dep)
  std::vector<std::string> failures;
  std::vector<std::string> now; // per thread: the operation it is in
  std::atomic<uint64_t> next_id{1}, next_pool{2};
  std::atomic<bool> failed{false};

  Program(const Config &c, uint64_t s, sycl::device d, bool f)
      : cfg(c), seed(s), ctx(d), dev(d), fill_ok(f), now(static_cast<size_t>(c.threads)) {}

  void fail(const std::string &what) {
    std::lock_guard<std::mutex> g(m);
    if (failures.size() < 8) failures.push_back(what);
    failed = true;
  }
  void trace(int tid, uint64_t step, const std::string &op) {
    {
      std::lock_guard<std::mutex> g(m);
      now[static_cast<size_t>(tid)] = "step " + std::to_string(step) + ": " + op;
    }
    if (cfg.trace) {
      std::printf("  t%d s%llu %s\n", tid, static_cast<unsigned long long>(step), op.c_str());
      std::fflush(stdout);
    }
  }
  // Registers [p, p+size); a range overlapping a live block is a failure.
  void add_live(const Block &b, const std::string &who) {
    std::lock_guard<std::mutex> g(m);
    uintptr_t a = reinterpret_cast<uintptr_t>(b.p);
    auto it = live.upper_bound(a);
    std::string clash;
    if (it != live.end() && it->first < a + b.size)
      clash = "block " + std::to_string(it->second.second) + " at " + hex(reinterpret_cast<void *>(it->first)) +
              " size " + std::to_string(it->second.first);
    if (it != live.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second.first > a)
        clash = "block " + std::to_string(prev->second.second) + " at " + hex(reinterpret_cast<void *>(prev->first)) +
                " size " + std::to_string(prev->second.first);
    }
    if (!clash.empty()) {
      if (failures.size() < 8)
        failures.push_back(who + ": new block " + std::to_string(b.id) + " [" + hex(b.p) + ", +" +
                           std::to_string(b.size) + ") overlaps live " + clash);
      failed = true;
      return;
    }
    live[a] = {b.size, b.id};
  }
  void remove_live(const Block &b) {
    std::lock_guard<std::mutex> g(m);
    live.erase(reinterpret_cast<uintptr_t>(b.p));
  }
};

struct Pool {
  uint64_t uid;
  syclex::memory_pool pool;
  size_t threshold, max; // max 0: none
  bool zero;
  int pending_frees = 0;
};

syclex::memory_pool make_pool(const sycl::queue *q, const sycl::context &ctx, const sycl::device &dev, size_t thr,
                              size_t max, bool zero) {
  auto make = [&](auto props) {
    return q ? syclex::memory_pool(*q, alloc::device, props) : syclex::memory_pool(ctx, dev, alloc::device, props);
  };
  using syclex::initial_threshold;
  using syclex::maximum_size;
  using syclex::properties;
  using syclex::zero_init;
  if (thr && max && zero) return make(properties{initial_threshold(thr), maximum_size(max), zero_init{}});
  if (thr && max) return make(properties{initial_threshold(thr), maximum_size(max)});
  if (thr && zero) return make(properties{initial_threshold(thr), zero_init{}});
  if (max && zero) return make(properties{maximum_size(max), zero_init{}});
  if (thr) return make(properties{initial_threshold(thr)});
  if (max) return make(properties{maximum_size(max)});
  if (zero) return make(properties{zero_init{}});
  return q ? syclex::memory_pool(*q, alloc::device) : syclex::memory_pool(ctx, dev, alloc::device);
}

struct Check {
  sycl::event ev;
  std::shared_ptr<std::vector<uint8_t>> got;
  std::vector<uint8_t> want;
  std::string what;
  std::shared_ptr<std::atomic<int>> host_verdict; // set by a consuming host task: 1 ok, 2 mismatch
};

class Worker {
public:
  Worker(Program &pg, int tid) : P(pg), tid_(tid), rng_{mix(pg.seed * 1000003 + static_cast<uint64_t>(tid))} {}

  void run() {
    try {
      setup();
      for (step_ = 0; step_ < static_cast<uint64_t>(P.cfg.steps) && !P.failed; ++step_) one_step();
      finish();
    } catch (const sycl::exception &e) {
      fail(std::string("sycl::exception: ") + e.what());
    } catch (const std::exception &e) {
      fail(std::string("exception: ") + e.what());
    }
    // Whatever happened, nothing of this thread may still run when its queues go.
    for (sycl::queue &q : q_) try {
        q.wait();
      } catch (...) {
      }
    if (hq_) try {
        hq_->wait();
      } catch (...) {
      }
  }

private:
  Program &P;
  int tid_;
  Rng rng_;
  uint64_t step_ = 0;
  std::vector<sycl::queue> q_;
  std::optional<sycl::queue> hq_; // host tasks only (see host_q)
  std::vector<bool> in_order_;
  std::vector<Block> blocks_;
  std::vector<Pool> pools_;
  std::vector<Check> checks_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> staging_; // host sources kept until the next full sync
  std::vector<sycl::event> recent_frees_;
  std::vector<char> tainted_, inherits_; // per queue: see submitted()
  bool deps_host_ = false;

  void fail(const std::string &what) {
    P.fail("thread " + std::to_string(tid_) + " step " + std::to_string(step_) + ": " + what);
  }
  std::string qname(int qi) const {
    return "q" + std::to_string(qi) + (in_order_[static_cast<size_t>(qi)] ? "(in-order)" : "(ooo)");
  }
  void op(const std::string &s) { P.trace(tid_, step_, s); }

  void setup() {
    auto handler = [this](sycl::exception_list list) {
      for (const std::exception_ptr &e : list) try {
          std::rethrow_exception(e);
        } catch (const std::exception &x) {
          fail(std::string("asynchronous exception: ") + x.what());
        }
    };
    size_t nq = 2 + rng_.below(2);
    for (size_t i = 0; i < nq; ++i) {
      bool io = i == 0 ? true : i == 1 ? false : rng_.chance(50);
      if (io)
        q_.emplace_back(P.ctx, P.dev, handler, sycl::property_list{sycl::property::queue::in_order{}});
      else
        q_.emplace_back(P.ctx, P.dev, handler);
      in_order_.push_back(io);
    }
    hq_.emplace(P.ctx, P.dev, handler);
    tainted_.assign(nq, 0);
    inherits_.assign(nq, 0);
  }

  int pick_q() { return static_cast<int>(rng_.below(q_.size())); }
  // Host tasks go to a queue of their own, which nothing else uses and nothing waits
  // for but the host (-1), or, with host_deps, to queue qi among the other commands.
  sycl::queue &host_q(int qi) { return qi < 0 ? *hq_ : q_[static_cast<size_t>(qi)]; }

  // What a command on queue qi must wait for so that it comes after everything done to
  // the blocks: their last events, except where the in-order queue already orders it.
  // Sets deps_host_: whether one of them may still wait for a host task.
  std::vector<sycl::event> deps_for(int qi, std::initializer_list<Block *> bs) {
    std::vector<sycl::event> d;
    deps_host_ = false;
    for (Block *b : bs) {
      bool same_lane = in_order_[static_cast<size_t>(qi)] && b->last_q == qi;
      if (same_lane) deps_host_ |= b->host_dep;
      if (same_lane && (!b->has_event || rng_.chance(70))) continue;
      if (!b->has_event) {
        // Only an in-order queue orders after it so far: a barrier there gives an event.
        b->last = q_[static_cast<size_t>(b->last_q)].ext_oneapi_submit_barrier();
        b->has_event = true;
        b->host_dep = submitted(b->last_q, b->host_dep, true);
        b->note(qname(b->last_q) + " barrier for an event");
      }
      d.push_back(b->last);
      deps_host_ |= b->host_dep;
    }
    if (rng_.chance(8)) { // an unrelated event of any thread: cross-thread edges
      std::lock_guard<std::mutex> g(P.m);
      if (!P.beacons.empty()) {
        auto &[e, h] = P.beacons[rng_.below(P.beacons.size())];
        d.push_back(e);
        deps_host_ |= h;
      }
    }
    return d;
  }

  // Only with host_deps. The runtime keeps a command that waits for a host task to
  // itself until the host task has run; a barrier of an out-of-order queue submitted
  // while such a command is pending becomes an implicit dependency of every later
  // command of that queue, and an async_malloc there then throws "Cannot submit a
  // dependency after an asynchronous allocation has already been executed!" after the
  // adapter allocated (the block is lost). So this tracks which queues may hold such
  // commands (in-order queues too, to be safe) until they are waited for, and allocates
  // only on the others, as an application has to.
  // Returns whether the command just submitted on qi may wait for a host task.
  bool submitted(int qi, bool deps_host, bool barrier = false, bool host_task = false) {
    size_t i = static_cast<size_t>(qi);
    bool h = deps_host || inherits_[i] || host_task || (barrier && tainted_[i]);
    if (h) {
      tainted_[i] = 1;
      if (in_order_[i] || barrier) inherits_[i] = 1;
    }
    return h;
  }
  void queue_done(int qi) {
    tainted_[static_cast<size_t>(qi)] = inherits_[static_cast<size_t>(qi)] = 0;
    for (Block &b : blocks_)
      if (b.last_q == qi) b.host_dep = false;
  }

  void touched(Block &b, int qi, const sycl::event &e, const std::string &what, bool host_dep) {
    b.last = e;
    b.has_event = true;
    b.last_q = qi;
    b.host_dep = host_dep;
    b.note("s" + std::to_string(step_) + " " + qname(qi) + " " + what + (host_dep ? " (after a host task)" : ""));
    if (rng_.chance(5)) {
      std::lock_guard<std::mutex> g(P.m);
      if (P.beacons.size() < 16)
        P.beacons.emplace_back(e, host_dep);
      else
        P.beacons[rng_.below(16)] = {e, host_dep};
    }
  }

  // A range of a block: whole, its head, its tail (the last byte is part of the block),
  // or anywhere.
  std::pair<size_t, size_t> range(size_t size) {
    size_t len = 1 + rng_.below(std::min(size, rng_.chance(30) ? size : size_t(64 * KiB)));
    switch (rng_.below(4)) {
    case 0: return {0, size};
    case 1: return {0, len};
    case 2: return {size - len, len};
    default: return {rng_.below(size - len + 1), len};
    }
  }

  size_t live_bytes() const {
    size_t s = 0;
    for (const Block &b : blocks_) s += b.size;
    return s;
  }

  void one_step() {
    size_t w = rng_.below(100);
    bool can_alloc = blocks_.size() < kMaxLiveBlocks && live_bytes() < kThreadLiveCap;
    if (blocks_.empty() || (w < 22 && can_alloc)) return do_alloc();
    if (w < 34) return do_write(blocks_[rng_.below(blocks_.size())]);
    if (w < 46) return do_copy();
    if (w < 53) return do_read(blocks_[rng_.below(blocks_.size())]);
    if (w < 68) return do_free(rng_.below(blocks_.size()));
    if (w < 72) return do_handoff();
    if (w < 90) return do_sync();
    if (w < 95) return do_pool();
    do_alloc();
  }

  // ---- allocation

  void do_alloc() {
    int qi = pick_q();
    for (size_t k = 0; k < q_.size() && tainted_[static_cast<size_t>(qi)]; ++k)
      qi = static_cast<int>((static_cast<size_t>(qi) + 1) % q_.size());
    if (tainted_[static_cast<size_t>(qi)]) wait_queue(qi); // see submitted()
    sycl::queue &q = q_[static_cast<size_t>(qi)];
    Block b;
    b.id = P.next_id++;
    b.size = rng_.size_log(1, kMaxBlock);
    Pool *pool = nullptr;
    size_t src = rng_.below(pools_.empty() ? 2 : 4);
    if (src >= 2) {
      pool = &pools_[rng_.below(pools_.size())];
      b.pool_uid = pool->uid;
      if (pool->max) b.size = std::min(b.size, pool->max);
    } else {
      b.pool_uid = src; // 0 default, 1 shared
    }
    bool handler_form = rng_.chance(50) || (!in_order_[static_cast<size_t>(qi)] && rng_.chance(50));
    std::string what = std::string(handler_form ? "handler " : "queue ") +
                       (b.pool_uid == 0   ? "async_malloc"
                        : b.pool_uid == 1 ? "async_malloc_from_pool(shared)"
                                          : "async_malloc_from_pool(pool " + std::to_string(b.pool_uid) + ")") +
                       " " + std::to_string(b.size) + " B";
    std::vector<sycl::event> after;
    if (handler_form && !recent_frees_.empty() && rng_.chance(50))
      after.push_back(recent_frees_[rng_.below(recent_frees_.size())]); // reuse after a free, as apps do
    op(qname(qi) + " " + what + (after.empty() ? "" : " after a free"));
    const syclex::memory_pool *from = pool ? &pool->pool : b.pool_uid == 1 ? &*P.shared_pool : nullptr;
    try {
      if (handler_form) {
        sycl::event e = q.submit([&](sycl::handler &h) {
          h.depends_on(after);
          b.p = static_cast<uint8_t *>(from ? syclex::async_malloc_from_pool(h, b.size, *from)
                                            : syclex::async_malloc(h, alloc::device, b.size));
        });
        b.last = e;
        b.has_event = true;
      } else {
        b.p = static_cast<uint8_t *>(from ? syclex::async_malloc_from_pool(q, b.size, *from)
                                          : syclex::async_malloc(q, alloc::device, b.size));
        if (!in_order_[static_cast<size_t>(qi)]) { // the commands after a barrier come after the alloc
          b.last = q.ext_oneapi_submit_barrier();
          b.has_event = true;
          b.host_dep = submitted(qi, false, true);
        }
      }
    } catch (const sycl::exception &e) {
      ++P.n.refused;
      // A pool at its maximum may refuse while blocks or pending frees hold it; otherwise
      // a refusal is wrong.
      size_t in_pool = 0;
      for (const Block &x : blocks_)
        if (pool && x.pool_uid == pool->uid) in_pool += x.size;
      bool oom = std::string(e.what()).find("OUT_OF_DEVICE_MEMORY") != std::string::npos;
      if (!oom || !pool || !pool->max || (in_pool == 0 && pool->pending_frees == 0))
        fail(what + " refused: " + e.what() + " (pool has " + std::to_string(in_pool) + " B live, " +
             std::to_string(pool ? pool->pending_frees : 0) + " frees pending)");
      op("  refused: " + std::string(e.what()));
      return;
    }
    ++P.n.allocs;
    b.last_q = qi;
    b.note("s" + std::to_string(step_) + " " + qname(qi) + " " + what);
    if (!b.p) return fail(what + " returned null");
    alloc t0 = sycl::get_pointer_type(b.p, P.ctx), t1 = sycl::get_pointer_type(b.p + b.size - 1, P.ctx);
    if (t0 != alloc::device || t1 != alloc::device)
      fail(what + " at " + hex(b.p) + ": get_pointer_type of its first/last byte is " +
           std::to_string(static_cast<int>(t0)) + "/" + std::to_string(static_cast<int>(t1)) + ", not device");
    P.add_live(b, "thread " + std::to_string(tid_) + " step " + std::to_string(step_));
    if (pool && pool->zero) {
      b.shadow.assign(b.size, 0);
    } else {
      b.shadow.resize(b.size);
      write(b, qi, 0, b.size, true);
    }
    blocks_.push_back(std::move(b));
  }

  // ---- writes

  void do_write(Block &b) {
    auto [off, len] = range(b.size);
    write(b, pick_q(), off, len);
  }

  void write(Block &b, int qi, size_t off, size_t len, bool whole = false) {
    sycl::queue &q = q_[static_cast<size_t>(qi)];
    std::vector<sycl::event> deps = deps_for(qi, {&b});
    const bool h = rng_.chance(40); // handler form
    size_t kind = rng_.below(P.fill_ok ? 4 : 3);
    std::string what;
    sycl::event e;
    if (kind == 0) {
      int v = static_cast<int>(rng_.below(256));
      what = "memset [" + std::to_string(off) + ", +" + std::to_string(len) + ") = " + std::to_string(v);
      op(qname(qi) + " " + what + " on block " + std::to_string(b.id));
      e = h ? q.submit([&](sycl::handler &cgh) {
        cgh.depends_on(deps);
        cgh.memset(b.p + off, v, len);
      })
            : q.memset(b.p + off, v, len, deps);
      std::memset(b.shadow.data() + off, v, len);
    } else if (kind == 3) {
      // fill with an element of 1, 2, 4 or 8 bytes at an offset it divides
      size_t es = size_t(1) << rng_.below(4);
      while (whole && len % es) es /= 2; // a block's first write defines every byte
      size_t a = (off + es - 1) / es * es;
      size_t count = a < off + len ? (off + len - a) / es : 0;
      if (count == 0) {
        es = 1, a = off, count = len;
      }
      uint64_t v = rng_.next();
      what = "fill<" + std::to_string(es * 8) + "> [" + std::to_string(a) + ", x" + std::to_string(count) + ")";
      op(qname(qi) + " " + what + " on block " + std::to_string(b.id));
      auto sub = [&](auto val) {
        using T = decltype(val);
        return h ? q.submit([&](sycl::handler &cgh) {
          cgh.depends_on(deps);
          cgh.fill<T>(b.p + a, val, count);
        })
                 : q.fill<T>(b.p + a, val, count, deps);
      };
      e = es == 1   ? sub(static_cast<uint8_t>(v))
          : es == 2 ? sub(static_cast<uint16_t>(v))
          : es == 4 ? sub(static_cast<uint32_t>(v))
                    : sub(static_cast<uint64_t>(v));
      for (size_t i = 0; i < count; ++i) std::memcpy(b.shadow.data() + a + i * es, &v, es);
    } else {
      uint64_t key = mix(P.seed ^ mix(b.id * 131 + ++b.writes));
      auto src = std::make_shared<std::vector<uint8_t>>(len);
      pattern(b.shadow.data() + off, len, key);
      if (kind == 1) {
        what = "memcpy host pattern -> [" + std::to_string(off) + ", +" + std::to_string(len) + ")";
        std::memcpy(src->data(), b.shadow.data() + off, len);
      } else {
        // A host task produces the data (where an application would run a kernel).
        // The copy waits for it on the host: a command that depends on a host task
        // can deadlock the runtime (see Config::host_deps).
        what = "host task pattern, memcpy -> [" + std::to_string(off) + ", +" + std::to_string(len) + ")";
        sycl::event made = host_q(P.cfg.host_deps ? qi : -1).submit([&](sycl::handler &cgh) {
          cgh.host_task([src, key] { pattern(src->data(), src->size(), key); });
        });
        if (P.cfg.host_deps) {
          submitted(qi, false, false, true);
          deps.push_back(made);
          deps_host_ = true;
        } else {
          made.wait();
        }
      }
      op(qname(qi) + " " + what + " on block " + std::to_string(b.id));
      e = h ? q.submit([&](sycl::handler &cgh) {
        cgh.depends_on(deps);
        cgh.memcpy(b.p + off, src->data(), len);
      })
            : q.memcpy(b.p + off, src->data(), len, deps);
      staging_.push_back(src);
    }
    ++P.n.writes;
    touched(b, qi, e, what, submitted(qi, deps_host_));
  }

  void do_copy() {
    Block &s = blocks_[rng_.below(blocks_.size())];
    Block &d = blocks_[rng_.below(blocks_.size())];
    size_t so, dof, len;
    if (&s == &d) {
      if (s.size < 2) return;
      len = 1 + rng_.below(s.size / 2);
      size_t lo = rng_.below(s.size - 2 * len + 1);
      size_t hi = lo + len + rng_.below(s.size - lo - 2 * len + 1);
      if (rng_.chance(50))
        so = lo, dof = hi;
      else
        so = hi, dof = lo;
    } else {
      auto [o, l] = range(s.size);
      so = o;
      len = std::min(l, d.size);
      dof = rng_.below(d.size - len + 1);
    }
    int qi = pick_q();
    sycl::queue &q = q_[static_cast<size_t>(qi)];
    std::vector<sycl::event> deps = &s == &d ? deps_for(qi, {&s}) : deps_for(qi, {&s, &d});
    std::string what = "memcpy block " + std::to_string(s.id) + "[" + std::to_string(so) + ", +" + std::to_string(len) +
                       ") -> block " + std::to_string(d.id) + "[" + std::to_string(dof) + ")";
    op(qname(qi) + " " + what);
    sycl::event e = rng_.chance(50) ? q.memcpy(d.p + dof, s.p + so, len, deps) : q.submit([&](sycl::handler &h) {
      h.depends_on(deps);
      h.memcpy(d.p + dof, s.p + so, len);
    });
    std::memmove(d.shadow.data() + dof, s.shadow.data() + so, len);
    ++P.n.copies;
    bool hd = submitted(qi, deps_host_);
    touched(s, qi, e, what, hd);
    if (&s != &d) touched(d, qi, e, what, hd);
  }

  // A read back whose result is judged at the next synchronisation that covers it (or
  // by a host task that consumes it, as an application would).
  void do_read(Block &b) {
    auto [off, len] = range(b.size);
    int qi = pick_q();
    sycl::queue &q = q_[static_cast<size_t>(qi)];
    std::vector<sycl::event> deps = deps_for(qi, {&b});
    Check c;
    c.got = std::make_shared<std::vector<uint8_t>>(len, 0xcd);
    c.want.assign(b.shadow.begin() + static_cast<ptrdiff_t>(off), b.shadow.begin() + static_cast<ptrdiff_t>(off + len));
    c.what = "read back [" + std::to_string(off) + ", +" + std::to_string(len) + ") of " + b.describe();
    op(qname(qi) + " read back [" + std::to_string(off) + ", +" + std::to_string(len) + ") of block " +
       std::to_string(b.id));
    c.ev = q.memcpy(c.got->data(), b.p + off, len, deps);
    touched(b, qi, c.ev, "read back [" + std::to_string(off) + ", +" + std::to_string(len) + ")",
            submitted(qi, deps_host_));
    if (rng_.chance(30)) {
      auto verdict = std::make_shared<std::atomic<int>>(0);
      auto want = std::make_shared<std::vector<uint8_t>>(c.want);
      auto got = c.got;
      sycl::event read = c.ev;
      host_q(P.cfg.host_deps ? qi : -1).submit([&](sycl::handler &h) {
        h.depends_on(read);
        h.host_task([verdict, want, got] { *verdict = *want == *got ? 1 : 2; });
      });
      if (P.cfg.host_deps) submitted(qi, false, false, true);
      c.host_verdict = verdict;
    }
    ++P.n.reads;
    checks_.push_back(std::move(c));
  }

  // ---- frees

  void do_free(size_t i) {
    Block &b = blocks_[i];
    int qi = pick_q();
    sycl::queue &q = q_[static_cast<size_t>(qi)];
    std::vector<sycl::event> deps = deps_for(qi, {&b});
    P.remove_live(b); // before the free: another thread may get the memory as soon as it completes
    bool handler_form = rng_.chance(50);
    op(qname(qi) + (handler_form ? " handler" : " queue") + " async_free block " + std::to_string(b.id) + " (" +
       std::to_string(b.size) + " B)");
    if (handler_form) {
      sycl::event e = q.submit([&](sycl::handler &h) {
        h.depends_on(deps);
        syclex::async_free(h, b.p);
      });
      submitted(qi, deps_host_);
      recent_frees_.push_back(e);
      if (recent_frees_.size() > 4) recent_frees_.erase(recent_frees_.begin());
    } else {
      // The queue form takes no events: a barrier waiting for them orders the free.
      if (!deps.empty()) submitted(qi, deps_host_, true), q.ext_oneapi_submit_barrier(deps);
      syclex::async_free(q, b.p);
      submitted(qi, false);
    }
    for (Pool &p : pools_)
      if (p.uid == b.pool_uid) ++p.pending_frees;
    ++P.n.frees;
    blocks_.erase(blocks_.begin() + static_cast<ptrdiff_t>(i));
  }

  // ---- handing blocks between threads

  void do_handoff() {
    std::string what;
    {
      std::lock_guard<std::mutex> g(P.m);
      if (rng_.chance(50) && !P.mailbox.empty()) {
        Block b = std::move(P.mailbox.front());
        P.mailbox.pop_front();
        b.last_q = -1; // its last event is another thread's (or an old queue's)
        b.note("s" + std::to_string(step_) + " adopted by thread " + std::to_string(tid_));
        what = "adopt block " + std::to_string(b.id);
        blocks_.push_back(std::move(b));
        ++P.n.handoffs;
      } else if (P.mailbox.size() < kMailboxCap) {
        // Only blocks of pools that outlive this thread's own pools travel.
        for (size_t i = 0; i < blocks_.size(); ++i) {
          Block &b = blocks_[i];
          if (b.pool_uid > 1) continue;
          if (!b.has_event) { // the adopter needs an event to order after
            b.last = q_[static_cast<size_t>(b.last_q)].ext_oneapi_submit_barrier();
            b.has_event = true;
            b.host_dep = submitted(b.last_q, b.host_dep, true);
          }
          b.note("s" + std::to_string(step_) + " handed over by thread " + std::to_string(tid_));
          what = "hand over block " + std::to_string(b.id);
          P.mailbox.push_back(std::move(b));
          blocks_.erase(blocks_.begin() + static_cast<ptrdiff_t>(i));
          break;
        }
      }
    }
    if (!what.empty()) op(what);
  }

  // ---- synchronisation and verification

  // Copies the whole block back (ordered after everything done to it) and compares.
  void verify(Block &b) {
    int qi = pick_q();
    std::vector<uint8_t> got(b.size, 0xcd);
    std::vector<sycl::event> deps = deps_for(qi, {&b});
    sycl::event e = q_[static_cast<size_t>(qi)].memcpy(got.data(), b.p, b.size, deps);
    submitted(qi, deps_host_);
    e.wait();
    touched(b, qi, e, "verify", false);
    P.n.verified_bytes += b.size;
    if (got != b.shadow) {
      size_t i = 0;
      while (got[i] == b.shadow[i]) ++i;
      size_t bad = 0;
      for (size_t k = i; k < b.size; ++k) bad += got[k] != b.shadow[k];
      fail("verify: byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
           std::to_string(b.shadow[i]) + " (" + std::to_string(bad) + " bytes differ) in " + b.describe());
    }
  }

  void judge_checks(bool all) {
    for (size_t i = 0; i < checks_.size();) {
      Check &c = checks_[i];
      bool done = all || c.ev.get_info<sycl::info::event::command_execution_status>() ==
                             sycl::info::event_command_status::complete;
      if (!done) {
        ++i;
        continue;
      }
      if (*c.got != c.want) {
        size_t k = 0;
        while ((*c.got)[k] == c.want[k]) ++k;
        fail("byte " + std::to_string(k) + " is " + std::to_string((*c.got)[k]) + ", expected " +
             std::to_string(c.want[k]) + ": " + c.what);
      }
      if (c.host_verdict) {
        if (!all && *c.host_verdict == 0) { // its host task has not run yet
          ++i;
          continue;
        }
        if (*c.host_verdict != 1 && *c.got == c.want)
          fail("the host task consuming a read back saw other data than the read's event promised: " + c.what);
      }
      checks_.erase(checks_.begin() + static_cast<ptrdiff_t>(i));
    }
  }

  void full_sync(bool throw_async) {
    op("wait on every queue");
    for (sycl::queue &q : q_) throw_async ? q.wait_and_throw() : q.wait();
    hq_->wait();
    for (size_t i = 0; i < q_.size(); ++i) queue_done(static_cast<int>(i));
    judge_checks(true);
    for (Block &b : blocks_) verify(b);
    staging_.clear();
    check_pools();
    for (Pool &p : pools_) p.pending_frees = 0;
  }

  // After every queue of this thread has finished: a pool of its own serves only this
  // thread, so its statistics are exact here.
  void check_pools() {
    for (Pool &p : pools_) {
      size_t in_pool = 0;
      for (const Block &b : blocks_)
        if (b.pool_uid == p.uid) in_pool += b.size;
      size_t used = p.pool.get_used_size_current(), reserved = p.pool.get_reserved_size_current();
      std::string s = "pool " + std::to_string(p.uid) + " (threshold " + std::to_string(p.threshold) + ", max " +
                      std::to_string(p.max) + "): used " + std::to_string(used) + ", reserved " +
                      std::to_string(reserved) + ", live " + std::to_string(in_pool);
      if (used < in_pool) fail(s + ": used is less than the live blocks");
      if (in_pool == 0 && used != 0) fail(s + ": used is not 0 with nothing live");
      if (reserved < used) fail(s + ": reserved is less than used");
      if (p.max && reserved > p.max) fail(s + ": reserved is above maximum_size");
    }
  }

  void wait_queue(int qi) {
    op("wait " + qname(qi));
    rng_.chance(50) ? q_[static_cast<size_t>(qi)].wait() : q_[static_cast<size_t>(qi)].wait_and_throw();
    queue_done(qi);
    judge_checks(false);
    for (Block &b : blocks_)
      if (b.last_q == qi) verify(b);
  }

  void do_sync() {
    ++P.n.syncs;
    size_t k = rng_.below(10);
    if (k < 3) { // one queue
      wait_queue(pick_q());
    } else if (k < 6 && !blocks_.empty()) { // one block's last event
      Block &b = blocks_[rng_.below(blocks_.size())];
      op("wait for the last event of block " + std::to_string(b.id));
      if (b.has_event) b.last.wait();
      judge_checks(false);
      verify(b);
    } else if (k < 8 && !blocks_.empty()) { // a list of events
      std::vector<sycl::event> list;
      std::vector<size_t> which;
      for (size_t i = 0; i < blocks_.size(); ++i)
        if (blocks_[i].has_event && rng_.chance(40)) list.push_back(blocks_[i].last), which.push_back(i);
      op("wait for a list of " + std::to_string(list.size()) + " events");
      rng_.chance(50) ? sycl::event::wait(list) : sycl::event::wait_and_throw(list);
      judge_checks(false);
      for (size_t i : which) verify(blocks_[i]);
    } else {
      full_sync(rng_.chance(50));
    }
  }

  // ---- pools

  void do_pool() {
    ++P.n.pools;
    size_t k = rng_.below(10);
    if (pools_.size() < 2 && (k < 5 || pools_.empty())) {
      const size_t maxes[] = {0, 0, 4 * MiB, 8 * MiB, 32 * MiB};
      const size_t thresholds[] = {0, 0, 1 * MiB, 4 * MiB, 16 * MiB};
      size_t max = maxes[rng_.below(5)];
      size_t thr = thresholds[rng_.below(5)];
      if (max && thr > max) thr = max;
      bool zero = rng_.chance(40);
      bool from_queue = rng_.chance(50);
      uint64_t uid = P.next_pool++;
      op("create pool " + std::to_string(uid) + " threshold " + std::to_string(thr) + " max " + std::to_string(max) +
         (zero ? " zero_init" : "") + (from_queue ? " from a queue" : ""));
      Pool p{uid, make_pool(from_queue ? &q_[static_cast<size_t>(pick_q())] : nullptr, P.ctx, P.dev, thr, max, zero),
             thr, max, zero};
      if (p.pool.get_threshold() != thr)
        fail("pool " + std::to_string(uid) + ": get_threshold() " + std::to_string(p.pool.get_threshold()) +
             " after initial_threshold " + std::to_string(thr));
      if (p.pool.get_used_size_current() != 0 || p.pool.get_alloc_kind() != alloc::device ||
          p.pool.get_device() != P.dev || p.pool.get_context() != P.ctx)
        fail("pool " + std::to_string(uid) + ": a new pool answers the wrong kind, device, context or used size");
      pools_.push_back(std::move(p));
    } else if (k < 7 && !pools_.empty()) {
      Pool &p = pools_[rng_.below(pools_.size())];
      size_t to = rng_.below(p.max ? p.max + 1 : 20 * MiB);
      op("pool " + std::to_string(p.uid) + " increase_threshold_to " + std::to_string(to));
      p.pool.increase_threshold_to(to);
      size_t want = std::max(p.threshold, to);
      if (p.pool.get_threshold() != want)
        fail("pool " + std::to_string(p.uid) + ": threshold " + std::to_string(p.pool.get_threshold()) +
             " after increase_threshold_to(" + std::to_string(to) + ") from " + std::to_string(p.threshold));
      p.threshold = want;
    } else if (!pools_.empty()) {
      destroy_pool(rng_.below(pools_.size()), rng_.chance(50));
    }
  }

  // Frees the pool's blocks, then destroys it: after waiting (its statistics must then
  // show nothing used) or at once, with the frees still pending.
  void destroy_pool(size_t pi, bool wait_first) {
    uint64_t uid = pools_[pi].uid;
    for (size_t i = blocks_.size(); i-- > 0;)
      if (blocks_[i].pool_uid == uid) do_free(i);
    if (wait_first) {
      full_sync(false);
      Pool &p = pools_[pi];
      size_t used = p.pool.get_used_size_current();
      if (used != 0)
        fail("pool " + std::to_string(uid) + ": used " + std::to_string(used) + " after every block freed");
      if (p.threshold == 0 && p.pool.get_reserved_size_current() != 0)
        fail("pool " + std::to_string(uid) + ": threshold 0 but reserved " +
             std::to_string(p.pool.get_reserved_size_current()) + " after a wait with nothing live");
    }
    op(std::string("destroy pool ") + std::to_string(uid) + (wait_first ? " after a wait" : " with its frees pending"));
    pools_.erase(pools_.begin() + static_cast<ptrdiff_t>(pi));
  }

  void finish() {
    step_ = static_cast<uint64_t>(P.cfg.steps);
    if (P.failed) return;
    full_sync(false);
    while (!blocks_.empty()) do_free(rng_.below(blocks_.size()));
    while (!pools_.empty()) destroy_pool(rng_.below(pools_.size()), rng_.chance(50));
    full_sync(true);
  }
};

// The environment that runs this one seed again.
std::string rerun(const Config &cfg, uint64_t seed) {
  const Config def;
  return "ORDO_SYCL_RANDOM_SEED=" + std::to_string(seed) + " ORDO_SYCL_RANDOM_PROGRAMS=1" +
         (cfg.threads != def.threads ? " ORDO_SYCL_RANDOM_THREADS=" + std::to_string(cfg.threads) : "") +
         (cfg.steps != def.steps ? " ORDO_SYCL_RANDOM_STEPS=" + std::to_string(cfg.steps) : "") +
         (cfg.host_deps ? " ORDO_SYCL_RANDOM_HOST_DEPS=1" : "");
}

// Runs one program (one seed); returns "" or what went wrong.
std::string run_program(const Config &cfg, uint64_t seed, const sycl::device &dev, bool fill_ok, Counters &total) {
  Program P(cfg, seed, dev, fill_ok);
  P.shared_pool.emplace(P.ctx, dev, alloc::device);
  std::atomic<int> done{0};
  std::mutex dm;
  std::condition_variable dcv;
  std::vector<std::thread> threads;
  for (int t = 0; t < cfg.threads; ++t)
    threads.emplace_back([&, t] {
      Worker(P, t).run();
      std::lock_guard<std::mutex> g(dm);
      ++done;
      dcv.notify_all();
    });
  {
    std::unique_lock<std::mutex> g(dm);
    if (!dcv.wait_for(g, std::chrono::seconds(cfg.hang_s), [&] { return done == cfg.threads; })) {
      std::lock_guard<std::mutex> pg(P.m);
      std::printf("[FAIL] seed %llu -- no end after %d s (a hang?) (rerun: %s ORDO_SYCL_RANDOM_TRACE=1);",
                  static_cast<unsigned long long>(seed), cfg.hang_s, rerun(cfg, seed).c_str());
      for (size_t t = 0; t < P.now.size(); ++t) std::printf(" thread %zu at %s;", t, P.now[t].c_str());
      std::printf("\n");
      std::fflush(stdout);
      std::_Exit(1);
    }
  }
  for (std::thread &t : threads) t.join();

  // What the threads handed over and nobody adopted: check and free it here.
  try {
    sycl::queue q(P.ctx, dev, sycl::property::queue::in_order{});
    for (Block &b : P.mailbox) {
      std::vector<uint8_t> got(b.size);
      q.memcpy(got.data(), b.p, b.size, b.last).wait();
      if (got != b.shadow) P.fail("a block left in the mailbox does not hold its data: " + b.describe());
      P.remove_live(b);
      syclex::async_free(q, b.p);
    }
    P.mailbox.clear();
    q.wait();
    if (!P.failed) {
      syclex::memory_pool def = P.ctx.ext_oneapi_get_default_memory_pool(dev, alloc::device);
      if (def.get_used_size_current() != 0)
        P.fail("the default pool uses " + std::to_string(def.get_used_size_current()) + " B after every block freed");
      if (P.shared_pool->get_used_size_current() != 0)
        P.fail("the shared pool uses " + std::to_string(P.shared_pool->get_used_size_current()) +
               " B after every block freed");
      if (!P.live.empty()) P.fail(std::to_string(P.live.size()) + " blocks still registered live at the end");
    }
  } catch (const sycl::exception &e) {
    P.fail(std::string("at the end: sycl::exception: ") + e.what());
  }
  P.shared_pool.reset();

  for (auto c : {&Counters::allocs, &Counters::refused, &Counters::frees, &Counters::writes, &Counters::copies,
                 &Counters::reads, &Counters::syncs, &Counters::pools, &Counters::handoffs, &Counters::verified_bytes})
    (total.*c) += (P.n.*c).load();
  std::string out;
  for (const std::string &f : P.failures) out += (out.empty() ? "" : " | ") + f;
  return out;
}

} // namespace

int main() {
  Checker c("ordo-sycl-async-alloc-random");
  sycl::device dev = pick_device(c);
  if (!dev.has(sycl::aspect::ext_oneapi_async_memory_alloc)) {
    c.skip("aspect ext_oneapi_async_memory_alloc", "the device has no stream-ordered allocation: nothing to run");
    std::printf("== no async alloc on this device\n");
    return 77;
  }

  Config cfg;
  std::string seed = env_or("ORDO_SYCL_RANDOM_SEED", "1");
  cfg.seed = seed == "time"
                 ? static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000
                 : std::strtoull(seed.c_str(), nullptr, 0);
  cfg.programs = std::max(1, env_int("ORDO_SYCL_RANDOM_PROGRAMS", cfg.programs));
  cfg.threads = std::max(1, env_int("ORDO_SYCL_RANDOM_THREADS", cfg.threads));
  cfg.steps = std::max(1, env_int("ORDO_SYCL_RANDOM_STEPS", cfg.steps));
  cfg.hang_s = std::max(1, env_int("ORDO_SYCL_RANDOM_HANG_S", cfg.hang_s));
  cfg.trace = env_or("ORDO_SYCL_RANDOM_TRACE", "0") != "0";
  cfg.host_deps = env_or("ORDO_SYCL_RANDOM_HOST_DEPS", "0") != "0";
  c.info("seeds",
         std::to_string(cfg.seed) + " .. " + std::to_string(cfg.seed + static_cast<uint64_t>(cfg.programs) - 1));
  c.info("threads x steps", std::to_string(cfg.threads) + " x " + std::to_string(cfg.steps));

  // Kinds other than device: used where the runtime takes them, skipped (saying why) where not.
  {
    sycl::queue q(dev, sycl::property::queue::in_order{});
    for (alloc k : {alloc::shared, alloc::host}) {
      std::string name = k == alloc::shared ? "shared" : "host";
      try {
        void *p = syclex::async_malloc(q, k, 64);
        syclex::async_free(q, p);
        q.wait();
        c.info("async_malloc of " + name + " memory", "accepted, but this program draws device memory only");
      } catch (const sycl::exception &e) {
        c.skip("async_malloc of " + name + " memory", std::string("the runtime refuses it: ") + e.what());
      }
    }
  }
  bool fill_ok = !usm_fill_is_a_kernel(dev);
  if (!fill_ok) c.skip("fill commands", kUsmFillKernelWhy);

  Counters total;
  for (int i = 0; i < cfg.programs; ++i) {
    uint64_t s = cfg.seed + static_cast<uint64_t>(i);
    std::string why;
    try {
      why = run_program(cfg, s, dev, fill_ok, total);
    } catch (const sycl::exception &e) {
      why = std::string("sycl::exception: ") + e.what();
    }
    c.check(why.empty(), "seed " + std::to_string(s), why + " (rerun: " + rerun(cfg, s) + ")");
  }
  c.info("operations", "allocs " + std::to_string(total.allocs) + " (refused at maximum_size " +
                           std::to_string(total.refused) + "), frees " + std::to_string(total.frees) + ", writes " +
                           std::to_string(total.writes) + ", copies " + std::to_string(total.copies) + ", reads " +
                           std::to_string(total.reads) + ", syncs " + std::to_string(total.syncs) + ", pool ops " +
                           std::to_string(total.pools) + ", hand-overs " + std::to_string(total.handoffs) +
                           ", bytes verified " + std::to_string(total.verified_bytes));
  return c.finish();
}
