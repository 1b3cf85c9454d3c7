// SPDX-License-Identifier: Apache-2.0
// A randomized checker of stream-ordered allocation through the UR API
// (docs/async-alloc.md), on every device that reports
// UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP.
//
// Each program gets a fresh context, 2-4 queues (in-order and out-of-order mixed), a
// user pool with a random maximum (urUSMPoolCreateExp, or a classic urUSMPoolCreate
// pool that also serves host memory) beside the default and host pools, and 30-80
// random operations: allocs of every kind the device has, fills of an owner-unique
// pattern, copies of a block to host memory for a later check, stream-ordered and
// plain frees, barriers, urEnqueueEventsWait, synchronisation points, allocs and frees
// that must be refused, and now and then 2-3 threads at once on queues of their own.
// Two patterns come up more often than chance would make them: a block freed and its
// size asked for again at once (same in-order queue, the free's event in the wait
// list, or unordered), sometimes freed again with urUSMFree before any use and asked
// for a third time; and a queue held by a host task (where the device runs them), so
// that frees stay pending and reuse must go by rules 1 and 3 rather than completion.
// Every command that uses a block is ordered after the block's previous command
// (same in-order queue, wait list, barrier or urEnqueueEventsWait), and every free
// after the block's last use, so the program is legal and a shadow model says what
// must hold:
//  - each check copy reads back exactly its block's pattern (no block has two owners);
//  - an alloc never returns memory overlapping a block live in the program's view
//    (allocated, and no free of it called yet);
//  - the user pool's USED_CURRENT is the sum of its live blocks rounded up to 64
//    bytes (between threaded phases), RESERVED_CURRENT never exceeds its maximum, and a
//    refused request changes no statistic;
//  - every error is the one docs/async-alloc.md gives.
// At its end a program finishes its queues, frees what is left, destroys its pool and
// releases everything, so it leaks nothing (the suite runs under ASan/TSan too).
//
// About one seed in eight runs a program of the lifetime mode instead
// (async_alloc_random_lifetimes.cpp): pools made current, trimmed and destroyed while
// threads allocate through them, fixed pools over every kind of memory, registered host
// memory, pools at their maximum, frees of inner pointers, and teardown with blocks left
// live and the context's extended deleter checked.
//
// ORDO_RANDOM_PROGRAMS sets how many programs run (default 200, seeds 1..N);
// ORDO_RANDOM_SEED=N starts at seed N and runs that program alone unless
// ORDO_RANDOM_PROGRAMS says more, to replay a failure. ORDO_RANDOM_MODE=lifetimes runs
// every seed in the lifetime mode, =classic none (default: the mix, by seed; a seed's
// program is the same in the mix and in its own mode). The run stops after 3 failed
// programs, or ORDO_RANDOM_MAX_FAILURES. The seed fixes the program;
// the interleaving of its threaded phases, the timing of commands and the addresses
// the backend gives the pools (where best fits can tie) are up to the machine.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "async_alloc_support.hpp"

namespace {

using namespace conf::async;

constexpr size_t KiB = 1024, MiB = 1024 * KiB;
constexpr size_t kStagedLimit = 24 * MiB; // host memory for check copies, per program

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// A program that crashes the process (a use-after-free in the layer, say) still names
// its seed: the handler writes it and hands the signal on to the one before it (ASan's
// where it runs).
std::atomic<uint64_t> g_running_seed{0};
struct sigaction g_previous_segv, g_previous_bus;

void name_the_seed(int sig) {
  char buf[64] = "\n[ random   ] crashed in the program of seed ";
  size_t n = std::strlen(buf);
  char digits[24];
  size_t d = 0;
  for (uint64_t v = g_running_seed.load(); d == 0 || v; v /= 10) digits[d++] = char('0' + v % 10);
  while (d && n + 2 < sizeof buf) buf[n++] = digits[--d];
  buf[n++] = '\n';
  ssize_t ignored = write(2, buf, n);
  (void)ignored;
  sigaction(sig, sig == SIGSEGV ? &g_previous_segv : &g_previous_bus, nullptr); // the fault repeats there
}

// Only while the programs run: a crash in a later test is not theirs.
class SeedReporter {
public:
  SeedReporter() {
    struct sigaction sa {};
    sa.sa_handler = name_the_seed;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous_segv);
    sigaction(SIGBUS, &sa, &g_previous_bus);
  }
  ~SeedReporter() {
    sigaction(SIGSEGV, &g_previous_segv, nullptr);
    sigaction(SIGBUS, &g_previous_bus, nullptr);
  }
  SeedReporter(const SeedReporter &) = delete;
  SeedReporter &operator=(const SeedReporter &) = delete;
};

uint64_t env_number(const char *name, uint64_t fallback, bool *given = nullptr) {
  const char *v = std::getenv(name);
  if (given) *given = v && *v;
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 0);
}

// What the device offers, read once per test.
struct DeviceFacts {
  std::vector<ur_usm_type_t> kinds; // device first
  bool out_of_order = false;
  bool profiling = false; // the device takes UR_QUEUE_FLAG_PROFILING_ENABLE
};

struct Totals {
  std::atomic<uint64_t> programs{0}, ops{0}, allocs{0}, fills{0}, copies{0}, frees{0}, plain_frees{0}, orderings{0},
      syncs{0}, refused{0}, full{0}, threaded{0};
};

class Program {
public:
  Program(const urinfo::FoundDevice &dev, const DeviceFacts &facts, uint64_t seed, Totals &totals)
      : dev_(dev), facts_(facts), seed_(seed), totals_(totals), rng_(seed * 0x9e3779b97f4a7c15ull + 1) {}
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  // False when a check failed; failure() says which and what led to it.
  bool run();
  const std::string &failure() const { return failure_; }
  size_t ops_done() const { return ops_done_; }

private:
  struct Queue {
    ur_queue_handle_t h = nullptr;
    bool in_order = true;
  };
  struct Block {
    uint64_t id = 0;
    void *ptr = nullptr;
    size_t size = 0;
    ur_usm_type_t kind = UR_USM_TYPE_DEVICE;
    ur_usm_pool_handle_t named = nullptr; // the pool passed to the alloc (null: default/current/host)
    bool user = false;                    // drawn from the user pool
    uint32_t pattern = 0;
    bool filled = false;
    bool used = false;                // a fill or copy was enqueued (the alloc itself is no use)
    ur_event_handle_t last = nullptr; // the block's newest command's event (null: only queue order)
    size_t last_queue = 0;
  };
  struct Check {
    std::vector<uint32_t> data;
    uint32_t expect = 0;
    uint64_t block = 0;
    void *ptr = nullptr;
  };
  // One thread's view: its random numbers, the queues it may use, its blocks.
  struct Actor {
    std::mt19937_64 rng;
    std::vector<size_t> queues;
    std::vector<Block> blocks;
    bool threaded = false;
    int index = 0;
    uint64_t below(uint64_t n) { return n ? rng() % n : 0; }
    bool chance(unsigned percent) { return below(100) < percent; }
  };

  bool fail(const std::string &what);
  // A failure about the memory at [p, p + size): also lists what every block that
  // ever overlapped it went through.
  bool fail_memory(const std::string &what, const void *p, size_t size);
  // Logs an operation; `block` is the block it is about (0: none).
  void note(const Actor &a, const std::string &op, uint64_t block = 0);
  bool expect_result(ur_result_t got, ur_result_t want, const std::string &what);
  bool check_stats(const char *after);
  bool unchanged(const PoolStats &before, const std::string &what);

  bool setup();
  void teardown();
  bool single_op(Actor &a);
  bool threaded_phase(Actor &main);
  bool finish_and_verify(std::vector<Block> left);

  // Operations; each returns false on a failed check.
  bool op_alloc(Actor &a);
  // An alloc with its parameters given; `made` (if not null) tells whether a block
  // was added to a.blocks (a full user pool may refuse).
  bool alloc_block(Actor &a, ur_usm_type_t kind, ur_usm_pool_handle_t named, size_t size, size_t q,
                   std::vector<ur_event_handle_t> waits, bool want_event, bool *made);
  bool op_handover(Actor &a);
  bool op_fill(Actor &a, Block &b);
  bool op_copy(Actor &a, Block &b);
  // `freed`/`freed_on`, if given, receive the free's event and queue.
  bool op_free(Actor &a, size_t index, ur_event_handle_t *freed = nullptr, size_t *freed_on = nullptr);
  bool op_plain_free(Actor &a, size_t index, bool at_once_if_unused = false);
  bool op_ordering(Actor &a);
  bool op_sync(Actor &a);
  bool op_refused_alloc(Actor &a);
  bool op_bad_free(Actor &a);
  bool op_switch_current(Actor &a);
  bool op_hold(Actor &a);
  void open_hold();

  // Orders the next command on `q` after b's newest command: by queue order, the
  // wait list (filled into `waits`), a barrier or urEnqueueEventsWait.
  bool order_after(Actor &a, size_t q, const Block &b, std::vector<ur_event_handle_t> &waits);
  size_t queue_for(Actor &a, const Block &b);
  size_t pick_size(Actor &a, bool user_pool);
  ur_event_handle_t *keep_event();
  ur_event_handle_t recent_event(Actor &a);
  bool register_live(const Block &b, const std::string &op);
  void unregister_live(const Block &b);

  const urinfo::FoundDevice &dev_;
  const DeviceFacts &facts_;
  const uint64_t seed_;
  Totals &totals_;
  std::mt19937_64 rng_;

  ur_context_handle_t ctx_ = nullptr;
  std::vector<Queue> queues_;
  ur_usm_pool_handle_t pool_ = nullptr; // the user pool
  bool classic_ = false;                // made by urUSMPoolCreate
  bool current_is_user_ = false;        // urUSMPoolSetDevicePoolExp made it the device's current pool
  size_t max_ = 0;
  QueueHold hold_; // keeps one queue's commands pending (async_alloc_support.hpp)
  bool holding_ = false;
  uint64_t next_id_ = 1;
  std::atomic<size_t> ops_done_{0};

  // Shared with threads: guarded by mu_.
  std::mutex mu_;
  std::map<uintptr_t, std::pair<size_t, uint64_t>> live_; // start -> (size, block id)
  std::deque<ur_event_handle_t> events_;                  // every event the program asked for
  std::deque<Check> checks_;                              // stable addresses for non-blocking copies
  size_t staged_ = 0;
  size_t user_used_ = 0;      // the user pool's live blocks, each rounded up to 64 bytes
  std::vector<void *> stale_; // freed pointers, for double frees
  struct LogEntry {
    std::string text;
    uint64_t block;
  };
  std::vector<LogEntry> log_;                                       // every operation, in order
  std::map<uint64_t, std::pair<const void *, size_t>> every_block_; // id -> memory, blocks ever made
  std::string failure_;
  std::atomic<bool> failed_{false};
};

bool Program::fail(const std::string &what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.exchange(true)) {
    std::ostringstream os;
    os << what << "\n  last operations of seed " << seed_ << ":";
    for (size_t i = log_.size() > 14 ? log_.size() - 14 : 0; i < log_.size(); ++i) os << "\n    " << log_[i].text;
    failure_ = os.str();
  }
  return false;
}

bool Program::fail_memory(const std::string &what, const void *p, size_t size) {
  std::ostringstream os;
  os << what;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<uint64_t> ids;
    for (auto &kv : every_block_)
      if (overlaps(p, size, kv.second.first, kv.second.second)) ids.push_back(kv.first);
    os << "\n  every operation on blocks that had this memory:";
    for (const LogEntry &e : log_)
      if (std::find(ids.begin(), ids.end(), e.block) != ids.end()) os << "\n    " << e.text;
  }
  return fail(os.str());
}

void Program::note(const Actor &a, const std::string &op, uint64_t block) {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream os;
  os << "#" << ops_done_.load() << (a.threaded ? " [thread " + std::to_string(a.index) + "] " : " ") << op;
  log_.push_back({os.str(), block});
}

bool Program::expect_result(ur_result_t got, ur_result_t want, const std::string &what) {
  if (got == want) return true;
  return fail(what + " gave " + urinfo::result_name(got) + ", expected " + urinfo::result_name(want));
}

// Between threaded phases the model is exact.
bool Program::check_stats(const char *after) {
  PoolStats s;
  if (!read_stats(pool_, s)) return fail(std::string("urUSMPoolGetInfoExp failed after ") + after);
  size_t used = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    used = user_used_;
  }
  if (s.used != used) {
    std::ostringstream os;
    os << "after " << after << ": the user pool's USED_CURRENT is " << s.used << ", its live blocks make " << used
       << " (each rounded up to 64 bytes)";
    return fail(os.str());
  }
  if (max_ && (s.reserved > max_ || s.reserved_high > max_)) {
    std::ostringstream os;
    os << "after " << after << ": the user pool reserves " << s << ", above its maximum " << max_;
    return fail(os.str());
  }
  if (s.reserved < s.used || s.used_high < s.used || s.reserved_high < s.reserved) {
    std::ostringstream os;
    os << "after " << after << ": inconsistent statistics " << s;
    return fail(os.str());
  }
  return true;
}

bool Program::unchanged(const PoolStats &before, const std::string &what) {
  PoolStats now;
  if (!read_stats(pool_, now)) return fail("urUSMPoolGetInfoExp failed after " + what);
  if (now == before) return true;
  std::ostringstream os;
  os << what << " changed the user pool's statistics from " << before << " to " << now;
  return fail(os.str());
}

ur_event_handle_t *Program::keep_event() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(nullptr);
  return &events_.back();
}

// Any event of the program, as noise in a wait list: waiting for more is always legal.
ur_event_handle_t Program::recent_event(Actor &a) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.empty()) return nullptr;
  size_t span = std::min<size_t>(events_.size(), 24);
  return events_[events_.size() - 1 - a.below(span)];
}

bool Program::register_live(const Block &b, const std::string &op) {
  std::ostringstream clash;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uintptr_t lo = reinterpret_cast<uintptr_t>(b.ptr);
    every_block_[b.id] = {b.ptr, b.size};
    auto it = live_.upper_bound(lo);
    for (auto c : {it, it == live_.begin() ? live_.end() : std::prev(it)})
      if (c != live_.end() && overlaps(b.ptr, b.size, reinterpret_cast<void *>(c->first), c->second.first))
        clash << op << " returned " << b.ptr << " (" << b.size << " bytes), overlapping live block " << c->second.second
              << " at " << reinterpret_cast<void *>(c->first) << " (" << c->second.first << " bytes)";
    if (clash.str().empty()) {
      live_[lo] = {b.size, b.id};
      if (b.user) user_used_ += round_up(b.size, 64);
      return true;
    }
  }
  return fail_memory(clash.str(), b.ptr, b.size);
}

void Program::unregister_live(const Block &b) {
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(reinterpret_cast<uintptr_t>(b.ptr));
  if (b.user) user_used_ -= round_up(b.size, 64);
  stale_.push_back(b.ptr);
}

size_t Program::pick_size(Actor &a, bool user_pool) {
  static const size_t classes[] = {64, 100, 4096, 64 * KiB, 300 * KiB, MiB};
  const uint64_t r = a.below(100);
  size_t size = a.chance(40) ? classes[a.below(6)]
                : r < 50     ? 1 + a.below(4096)
                : r < 85     ? 4 * KiB + a.below(252 * KiB)
                             : 256 * KiB + a.below(1792 * KiB);
  if (user_pool && max_) size = std::min(size, std::max<size_t>(64, max_ / 3));
  return size;
}

size_t Program::queue_for(Actor &a, const Block &b) {
  if (!b.last) return b.last_queue; // only queue order holds it (an in-order queue)
  return a.queues[a.below(a.queues.size())];
}

bool Program::order_after(Actor &a, size_t q, const Block &b, std::vector<ur_event_handle_t> &waits) {
  const Queue &queue = queues_[q];
  if (!b.last) return true; // same in-order queue, by queue_for
  if (q == b.last_queue && queue.in_order && a.chance(50)) return true;
  switch (a.below(3)) {
  case 0: waits.push_back(b.last); break;
  case 1:
    ++totals_.orderings;
    if (!expect_result(urEnqueueEventsWaitWithBarrier(queue.h, 1, &b.last, nullptr), UR_RESULT_SUCCESS,
                       "urEnqueueEventsWaitWithBarrier (ordering)"))
      return false;
    break;
  default:
    if (!queue.in_order) { // urEnqueueEventsWait orders nothing after it on an out-of-order queue
      waits.push_back(b.last);
      break;
    }
    ++totals_.orderings;
    if (!expect_result(urEnqueueEventsWait(queue.h, 1, &b.last, nullptr), UR_RESULT_SUCCESS,
                       "urEnqueueEventsWait (ordering)"))
      return false;
  }
  if (!a.threaded && a.chance(15))
    if (ur_event_handle_t extra = recent_event(a)) waits.push_back(extra);
  return true;
}

// ---- the program ------------------------------------------------------------------

bool Program::setup() {
  ur_device_handle_t d = dev_.device;
  if (!expect_result(urContextCreate(1, &d, nullptr, &ctx_), UR_RESULT_SUCCESS, "urContextCreate")) return false;
  const size_t nq = 2 + rng_() % 3;
  for (size_t i = 0; i < nq; ++i) {
    Queue q;
    q.in_order = !(facts_.out_of_order && rng_() % 100 < 40);
    // The second queue of a program with three or more profiles (recorded events, taken
    // on the program's threads too); chosen without a draw, so every seed keeps its program.
    const bool profiling = facts_.profiling && i == 1 && nq >= 3;
    ur_queue_flags_t flags = q.in_order ? 0 : UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    if (profiling) flags |= UR_QUEUE_FLAG_PROFILING_ENABLE;
    if (!expect_result(conf::make_queue(ctx_, d, flags, &q.h), UR_RESULT_SUCCESS, "urQueueCreate")) return false;
    queues_.push_back(q);
  }
  static const size_t maxima[] = {0, 2 * MiB, 4 * MiB, 8 * MiB, 32 * MiB};
  max_ = maxima[rng_() % 5];
  const size_t thresholds[] = {0, max_ ? max_ / 2 : MiB, max_ ? max_ : 16 * MiB};
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max_, thresholds[rng_() % 3]};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  classic_ = rng_() % 3 == 0;
  ur_result_t r = classic_ ? urUSMPoolCreate(ctx_, &desc, &pool_) : urUSMPoolCreateExp(ctx_, d, &desc, &pool_);
  return expect_result(r, UR_RESULT_SUCCESS, classic_ ? "urUSMPoolCreate" : "urUSMPoolCreateExp");
}

void Program::teardown() {
  // Best effort after a failure: nothing may be left behind either way.
  open_hold();
  for (Queue &q : queues_) urQueueFinish(q.h);
  hold_.release_scratch();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto &kv : live_) urUSMFree(ctx_, reinterpret_cast<void *>(kv.first));
    live_.clear();
    for (ur_event_handle_t e : events_)
      if (e) urEventRelease(e);
    events_.clear();
  }
  if (pool_) {
    if (current_is_user_) {
      ur_usm_pool_handle_t def = nullptr;
      if (urUSMPoolGetDefaultDevicePoolExp(ctx_, dev_.device, &def) == UR_RESULT_SUCCESS)
        urUSMPoolSetDevicePoolExp(ctx_, dev_.device, def);
    }
    if (classic_)
      urUSMPoolRelease(pool_);
    else
      urUSMPoolDestroyExp(ctx_, dev_.device, pool_);
    pool_ = nullptr;
  }
  for (Queue &q : queues_) urQueueRelease(q.h);
  queues_.clear();
  if (ctx_) urContextRelease(ctx_);
  ctx_ = nullptr;
}

bool Program::run() {
  bool ok = setup();
  Actor main;
  main.rng.seed(rng_());
  for (size_t i = 0; i < queues_.size(); ++i) main.queues.push_back(i);
  const size_t target = 30 + rng_() % 51;
  while (ok && ops_done_ < target) {
    if (queues_.size() >= 2 && main.chance(6))
      ok = threaded_phase(main);
    else
      ok = single_op(main);
    if (ok && !failed_) ok = check_stats(("operation #" + std::to_string(ops_done_.load())).c_str());
  }
  if (ok) ok = finish_and_verify(std::move(main.blocks));
  teardown();
  totals_.ops += ops_done_;
  ++totals_.programs;
  return ok && !failed_;
}

bool Program::single_op(Actor &a) {
  ++ops_done_;
  const uint64_t r = a.below(100);
  std::vector<Block> &bs = a.blocks;
  auto any_block = [&](bool filled) -> Block * {
    std::vector<Block *> c;
    for (Block &b : bs)
      if (!filled || b.filled) c.push_back(&b);
    return c.empty() ? nullptr : c[a.below(c.size())];
  };
  if (r < 24 || bs.empty()) return op_alloc(a);
  if (r < 30) return op_handover(a);
  if (r < 48) {
    Block *b = any_block(false);
    return b ? op_fill(a, *b) : op_alloc(a);
  }
  if (r < 60) {
    Block *b = any_block(true);
    return b ? op_copy(a, *b) : op_alloc(a);
  }
  if (r < 76) return op_free(a, a.below(bs.size()));
  if (r < 80) return op_plain_free(a, a.below(bs.size()));
  if (r < 86) return op_ordering(a);
  if (r < 89) return op_sync(a);
  if (r < 92) return op_refused_alloc(a);
  if (r < 95) return op_bad_free(a);
  if (r < 97) return op_switch_current(a);
  return op_hold(a);
}

// Holds an in-order queue so that what follows on it, and every free ordered after
// it, stays pending for a while: reuse then has to go by rules 1 and 3, not by
// completion. Opened before anything waits on the host.
bool Program::op_hold(Actor &a) {
  if (holding_) {
    note(a, "open the hold");
    open_hold();
    return true;
  }
  std::vector<size_t> in_order;
  for (size_t q : a.queues)
    if (queues_[q].in_order) in_order.push_back(q);
  if (in_order.empty()) return true;
  const size_t q = in_order[a.below(in_order.size())];
  note(a, "hold queue " + std::to_string(q));
  if (!expect_result(hold_.start(ctx_, dev_.device, queues_[q].h, keep_event(), 20), UR_RESULT_SUCCESS,
                     "holding a queue"))
    return false;
  holding_ = hold_.exact();
  return true;
}

void Program::open_hold() {
  hold_.open();
  holding_ = false;
}

// 2-3 threads at once, each on a queue of its own, with blocks of its own; they share
// the pools (and so the model's live blocks).
bool Program::threaded_phase(Actor &main) {
  ++totals_.threaded;
  open_hold(); // the threads wait on the host
  const size_t n = std::min<size_t>(queues_.size(), 2 + main.below(2));
  std::vector<size_t> order(queues_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), main.rng);
  std::vector<Actor> actors(n);
  for (size_t t = 0; t < n; ++t) {
    actors[t].rng.seed(main.rng());
    actors[t].queues = {order[t]};
    actors[t].threaded = true;
    actors[t].index = int(t);
  }
  std::atomic<size_t> ready{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      Actor &a = actors[t];
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      const size_t steps = 4 + a.below(9);
      for (size_t i = 0; i < steps && !failed_; ++i) {
        ++ops_done_;
        const uint64_t r = a.below(100);
        bool ok;
        if (r < 35 || a.blocks.empty())
          ok = op_alloc(a);
        else if (r < 55)
          ok = op_fill(a, a.blocks[a.below(a.blocks.size())]);
        else if (r < 70) {
          Block &b = a.blocks[a.below(a.blocks.size())];
          ok = b.filled ? op_copy(a, b) : op_fill(a, b);
        } else if (r < 90)
          ok = op_free(a, a.below(a.blocks.size()));
        else if (r < 95)
          ok = op_plain_free(a, a.below(a.blocks.size()));
        else
          ok = op_refused_alloc(a);
        if (!ok) break;
      }
    });
  for (std::thread &th : threads) th.join();
  for (Actor &a : actors)
    for (Block &b : a.blocks) main.blocks.push_back(b);
  return !failed_;
}

bool Program::op_alloc(Actor &a) {
  const ur_usm_type_t kind = facts_.kinds[a.below(facts_.kinds.size())];
  const bool user_serves = classic_ || kind != UR_USM_TYPE_HOST;
  const bool use_user = user_serves && a.chance(60);
  const bool user = use_user || (kind != UR_USM_TYPE_HOST && current_is_user_);
  const size_t q = a.queues[a.below(a.queues.size())];
  std::vector<ur_event_handle_t> waits;
  if (!a.threaded && a.chance(15))
    if (ur_event_handle_t e = recent_event(a)) waits.push_back(e);
  return alloc_block(a, kind, use_user ? pool_ : nullptr, pick_size(a, user), q, std::move(waits),
                     !queues_[q].in_order || a.chance(70), nullptr);
}

bool Program::alloc_block(Actor &a, ur_usm_type_t kind, ur_usm_pool_handle_t named, size_t size, size_t q,
                          std::vector<ur_event_handle_t> waits, bool want_event, bool *made) {
  if (made) *made = false;
  Block b;
  b.kind = kind;
  b.named = named;
  b.user = named == pool_ || (kind != UR_USM_TYPE_HOST && current_is_user_);
  b.size = size;
  const Queue &queue = queues_[q];
  want_event = want_event || !queue.in_order; // an out-of-order queue orders nothing by itself
  ur_event_handle_t *ev = want_event ? keep_event() : nullptr;
  PoolStats before;
  const bool exact = !a.threaded && b.user;
  if (exact && !read_stats(pool_, before)) return fail("urUSMPoolGetInfoExp failed");
  {
    std::lock_guard<std::mutex> lock(mu_);
    b.id = next_id_++;
  }
  std::ostringstream what;
  what << "alloc " << conf::usm_kind_name(b.kind) << " " << b.size << " bytes from "
       << (b.named ? "the user pool" : "the default pool") << " on queue " << q << (queue.in_order ? "" : " (ooo)")
       << " as block " << b.id;
  note(a, what.str(), b.id);
  ++totals_.allocs;
  void *p = nullptr;
  ur_result_t r = enqueue_alloc(b.kind, queue.h, b.named, b.size, uint32_t(waits.size()),
                                waits.empty() ? nullptr : waits.data(), &p, ev);
  if (r == out_of_memory_for(b.kind) && b.user && max_) {
    ++totals_.full; // a pool at its maximum may refuse what does not fit
    return !exact || unchanged(before, "a refused " + what.str());
  }
  if (!expect_result(r, UR_RESULT_SUCCESS, what.str())) return false;
  if (!p) return fail(what.str() + " returned a null pointer");
  b.ptr = p;
  b.pattern = 0x80000000u | uint32_t((seed_ & 0x7fff) << 16) | uint32_t(b.id & 0xffff);
  b.last = ev ? *ev : nullptr;
  b.last_queue = q;
  if (!register_live(b, what.str())) return false;
  a.blocks.push_back(b);
  if (made) *made = true;
  return true;
}

// A block freed and its memory asked for again at once, the same size from the same
// pool: on the same in-order queue, on another queue waiting for the free's event
// (rule 1), or unordered (rule 3 when the pool is full). Sometimes the new block goes
// by urUSMFree before any use, and a third alloc, unordered, follows: the previous
// owner's free must still hold it back.
bool Program::op_handover(Actor &a) {
  if (a.blocks.empty()) return op_alloc(a);
  const size_t index = a.below(a.blocks.size());
  if (a.chance(40) && !op_fill(a, a.blocks[index])) return false; // a last use, perhaps held
  const Block old = a.blocks[index];
  ur_event_handle_t freed = nullptr;
  size_t freed_on = 0;
  if (!op_free(a, index, &freed, &freed_on)) return false;
  const uint64_t how = a.below(3);
  size_t q = a.queues[a.below(a.queues.size())];
  std::vector<ur_event_handle_t> waits;
  if (how == 0 && queues_[freed_on].in_order) {
    q = freed_on; // after the free by queue order alone
  } else if (how == 1) {
    waits.push_back(freed);
  }
  bool made = false;
  if (!alloc_block(a, old.kind, old.named, old.size, q, waits, a.chance(50), &made)) return false;
  if (!made || a.chance(60)) return true;
  if (!op_plain_free(a, a.blocks.size() - 1, true)) return false;
  const size_t q3 = a.queues[a.below(a.queues.size())];
  if (!alloc_block(a, old.kind, old.named, old.size, q3, {}, true, &made)) return false;
  return !made || op_fill(a, a.blocks.back());
}

bool Program::op_fill(Actor &a, Block &b) {
  const size_t bytes = b.size & ~size_t(3);
  if (!bytes) return true;
  const size_t q = queue_for(a, b);
  std::vector<ur_event_handle_t> waits;
  if (!order_after(a, q, b, waits)) return false;
  ur_event_handle_t *ev = keep_event();
  note(a, "fill block " + std::to_string(b.id) + " on queue " + std::to_string(q) + " with " + hex(b.pattern), b.id);
  ++totals_.fills;
  if (!expect_result(fill32(queues_[q].h, b.ptr, bytes, b.pattern, uint32_t(waits.size()),
                            waits.empty() ? nullptr : waits.data(), ev),
                     UR_RESULT_SUCCESS, "urEnqueueUSMFill of block " + std::to_string(b.id)))
    return false;
  b.last = *ev;
  b.last_queue = q;
  b.filled = true;
  b.used = true;
  return true;
}

bool Program::op_copy(Actor &a, Block &b) {
  const size_t bytes = b.size & ~size_t(3);
  Check *c = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!bytes || staged_ + bytes > kStagedLimit) return true; // enough host memory spent on checks
    staged_ += bytes;
    checks_.push_back(Check{std::vector<uint32_t>(bytes / 4, 0xcdcdcdcdu), b.pattern, b.id, b.ptr});
    c = &checks_.back();
  }
  const size_t q = queue_for(a, b);
  std::vector<ur_event_handle_t> waits;
  if (!order_after(a, q, b, waits)) return false;
  ur_event_handle_t *ev = keep_event();
  note(a, "copy block " + std::to_string(b.id) + " to the host on queue " + std::to_string(q), b.id);
  ++totals_.copies;
  if (!expect_result(urEnqueueUSMMemcpy(queues_[q].h, false, c->data.data(), b.ptr, bytes, uint32_t(waits.size()),
                                        waits.empty() ? nullptr : waits.data(), ev),
                     UR_RESULT_SUCCESS, "urEnqueueUSMMemcpy of block " + std::to_string(b.id)))
    return false;
  b.last = *ev;
  b.last_queue = q;
  b.used = true;
  return true;
}

bool Program::op_free(Actor &a, size_t index, ur_event_handle_t *freed, size_t *freed_on) {
  Block b = a.blocks[index];
  const size_t q = queue_for(a, b);
  std::vector<ur_event_handle_t> waits;
  if (!order_after(a, q, b, waits)) return false;
  // Naming the pool is optional; a block of the default pool is freed with NULL.
  ur_usm_pool_handle_t named = b.named && a.chance(50) ? b.named : nullptr;
  ur_event_handle_t *ev = freed || a.chance(40) ? keep_event() : nullptr;
  a.blocks.erase(a.blocks.begin() + std::ptrdiff_t(index));
  unregister_live(b); // before the call: from then on the pool may hand the memory out
  note(a,
       "free block " + std::to_string(b.id) + " on queue " + std::to_string(q) +
           (waits.empty() ? "" : " after its wait list") + (ev ? " (event kept)" : ""),
       b.id);
  ++totals_.frees;
  if (!expect_result(urEnqueueUSMFreeExp(queues_[q].h, named, b.ptr, uint32_t(waits.size()),
                                         waits.empty() ? nullptr : waits.data(), ev),
                     UR_RESULT_SUCCESS, "urEnqueueUSMFreeExp of block " + std::to_string(b.id)))
    return false;
  if (freed) *freed = *ev;
  if (freed_on) *freed_on = q;
  return true;
}

bool Program::op_plain_free(Actor &a, size_t index, bool at_once_if_unused) {
  Block b = a.blocks[index];
  // The block's own uses must be over: wait for its newest command. A block never
  // used may go at once, its alloc command still pending (it may be waiting for the
  // free of the block's previous owner, which must stay pending).
  const bool at_once = !b.used && (at_once_if_unused || a.chance(70));
  if (!at_once) {
    if (!a.threaded) open_hold();
    ur_result_t w = b.last ? urEventWait(1, &b.last) : urQueueFinish(queues_[b.last_queue].h);
    if (!expect_result(w, UR_RESULT_SUCCESS, "waiting for block " + std::to_string(b.id))) return false;
  }
  a.blocks.erase(a.blocks.begin() + std::ptrdiff_t(index));
  unregister_live(b);
  note(a, std::string("urUSMFree block ") + std::to_string(b.id) + (at_once ? ", never used, at once" : ""), b.id);
  ++totals_.plain_frees;
  return expect_result(urUSMFree(ctx_, b.ptr), UR_RESULT_SUCCESS, "urUSMFree of block " + std::to_string(b.id));
}

bool Program::op_ordering(Actor &a) {
  const size_t q = a.queues[a.below(a.queues.size())];
  std::vector<ur_event_handle_t> waits;
  for (uint64_t i = a.below(3); i > 0; --i)
    if (ur_event_handle_t e = recent_event(a)) waits.push_back(e);
  ur_event_handle_t *ev = a.chance(50) ? keep_event() : nullptr;
  const bool barrier = a.chance(60);
  note(a, std::string(barrier ? "barrier" : "urEnqueueEventsWait") + " on queue " + std::to_string(q) + " after " +
              std::to_string(waits.size()) + " events");
  ++totals_.orderings;
  const uint32_t n = uint32_t(waits.size());
  const ur_event_handle_t *w = waits.empty() ? nullptr : waits.data();
  ur_result_t r =
      barrier ? urEnqueueEventsWaitWithBarrier(queues_[q].h, n, w, ev) : urEnqueueEventsWait(queues_[q].h, n, w, ev);
  return expect_result(r, UR_RESULT_SUCCESS, barrier ? "urEnqueueEventsWaitWithBarrier" : "urEnqueueEventsWait");
}

bool Program::op_sync(Actor &a) {
  ++totals_.syncs;
  open_hold();
  if (ur_event_handle_t e = a.chance(50) ? recent_event(a) : nullptr) {
    note(a, "urEventWait on a recent event");
    return expect_result(urEventWait(1, &e), UR_RESULT_SUCCESS, "urEventWait");
  }
  const size_t q = a.queues[a.below(a.queues.size())];
  note(a, "urQueueFinish on queue " + std::to_string(q));
  return expect_result(urQueueFinish(queues_[q].h), UR_RESULT_SUCCESS, "urQueueFinish");
}

// Requests no pool may meet: size 0, or more than the user pool's maximum.
bool Program::op_refused_alloc(Actor &a) {
  const ur_usm_type_t kind = facts_.kinds[a.below(facts_.kinds.size())];
  const bool user_serves = classic_ || kind != UR_USM_TYPE_HOST;
  if (!user_serves) return true;
  const bool zero = !max_ || a.chance(30);
  const size_t size = zero ? 0 : max_ + 1 + a.below(max_);
  const ur_result_t want = zero ? UR_RESULT_ERROR_INVALID_USM_SIZE : out_of_memory_for(kind);
  const size_t q = a.queues[a.below(a.queues.size())];
  PoolStats before;
  if (!a.threaded && !read_stats(pool_, before)) return fail("urUSMPoolGetInfoExp failed");
  std::ostringstream what;
  what << "alloc " << conf::usm_kind_name(kind) << " of " << size << " bytes from the user pool (maximum " << max_
       << ")";
  note(a, what.str());
  ++totals_.refused;
  void *p = reinterpret_cast<void *>(0x1000);
  if (!expect_result(enqueue_alloc(kind, queues_[q].h, pool_, size, 0, nullptr, &p, nullptr), want, what.str()))
    return false;
  if (p != reinterpret_cast<void *>(0x1000)) return fail(what.str() + " wrote its pointer although refused");
  return a.threaded || unchanged(before, "a refused " + what.str());
}

// Frees the pool must refuse: an interior pointer, a stale pointer, a block named with
// a pool that does not own it.
bool Program::op_bad_free(Actor &a) {
  const size_t q = a.queues[a.below(a.queues.size())];
  void *p = nullptr;
  ur_usm_pool_handle_t named = nullptr;
  std::string what;
  const uint64_t pick = a.below(3);
  if (pick == 0 && !a.blocks.empty()) {
    const Block &b = a.blocks[a.below(a.blocks.size())];
    if (b.size <= 64) return true;
    p = static_cast<char *>(b.ptr) + 64;
    what = "free of an interior pointer of block " + std::to_string(b.id);
  } else if (pick == 1 && !a.blocks.empty()) {
    const Block &b = a.blocks[a.below(a.blocks.size())];
    if (b.user) {
      if (!expect_result(urUSMPoolGetDefaultDevicePoolExp(ctx_, dev_.device, &named), UR_RESULT_SUCCESS,
                         "urUSMPoolGetDefaultDevicePoolExp"))
        return false;
      what = "free of user-pool block " + std::to_string(b.id) + " naming the default pool";
    } else {
      named = pool_;
      what = "free of default-pool block " + std::to_string(b.id) + " naming the user pool";
    }
    p = b.ptr;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    if (stale_.empty()) return true;
    p = stale_[a.below(stale_.size())];
    if (live_.count(reinterpret_cast<uintptr_t>(p))) return true; // handed out again: live
    what = "second free of a freed pointer";
  }
  PoolStats before;
  if (!read_stats(pool_, before)) return fail("urUSMPoolGetInfoExp failed");
  note(a, what);
  if (!expect_result(urEnqueueUSMFreeExp(queues_[q].h, named, p, 0, nullptr, nullptr),
                     UR_RESULT_ERROR_INVALID_MEM_OBJECT, what))
    return false;
  return unchanged(before, what);
}

// Makes the user pool the device's current pool, or the default pool again: an alloc
// with pPool = NULL then draws from it.
bool Program::op_switch_current(Actor &a) {
  if (classic_) return op_ordering(a);
  ur_usm_pool_handle_t target = pool_;
  if (current_is_user_ && !expect_result(urUSMPoolGetDefaultDevicePoolExp(ctx_, dev_.device, &target),
                                         UR_RESULT_SUCCESS, "urUSMPoolGetDefaultDevicePoolExp"))
    return false;
  note(a, current_is_user_ ? "make the default pool current" : "make the user pool current");
  if (!expect_result(urUSMPoolSetDevicePoolExp(ctx_, dev_.device, target), UR_RESULT_SUCCESS,
                     "urUSMPoolSetDevicePoolExp"))
    return false;
  current_is_user_ = !current_is_user_;
  return true;
}

bool Program::finish_and_verify(std::vector<Block> left) {
  open_hold();
  for (size_t i = 0; i < queues_.size(); ++i)
    if (!expect_result(urQueueFinish(queues_[i].h), UR_RESULT_SUCCESS, "urQueueFinish at the end")) return false;
  for (const Check &c : checks_) {
    const size_t bad = first_mismatch(c.data, c.expect);
    if (bad != c.data.size()) {
      std::ostringstream os;
      os << "block " << c.block << " (" << c.ptr << ") read back " << std::hex << c.data[bad] << " at element "
         << std::dec << bad << " instead of its own pattern " << std::hex << c.expect
         << ": another owner wrote its memory";
      return fail_memory(os.str(), static_cast<const char *>(c.ptr) + 4 * bad, 4);
    }
  }
  // What is left: read once more, then free it, each way.
  Actor end;
  end.rng.seed(rng_());
  for (size_t i = 0; i < queues_.size(); ++i) end.queues.push_back(i);
  for (Block &b : left) {
    if (b.filled) {
      std::vector<uint32_t> got((b.size & ~size_t(3)) / 4, 0xcdcdcdcdu);
      if (!expect_result(urEnqueueUSMMemcpy(queues_[0].h, true, got.data(), b.ptr, got.size() * 4, 0, nullptr, nullptr),
                         UR_RESULT_SUCCESS, "the final read of block " + std::to_string(b.id)))
        return false;
      const size_t bad = first_mismatch(got, b.pattern);
      if (bad != got.size()) {
        std::ostringstream os;
        os << "block " << b.id << " (" << b.ptr << ") holds " << std::hex << got[bad] << " at element " << std::dec
           << bad << " at the end instead of its pattern " << std::hex << b.pattern;
        return fail_memory(os.str(), static_cast<const char *>(b.ptr) + 4 * bad, 4);
      }
    }
    b.last = nullptr; // everything finished
  }
  end.blocks = std::move(left);
  while (!end.blocks.empty()) {
    const bool ok = end.chance(50) ? op_free(end, end.blocks.size() - 1) : op_plain_free(end, end.blocks.size() - 1);
    if (!ok) return false;
  }
  for (size_t i = 0; i < queues_.size(); ++i)
    if (!expect_result(urQueueFinish(queues_[i].h), UR_RESULT_SUCCESS, "urQueueFinish after the last frees"))
      return false;
  PoolStats s;
  if (!read_stats(pool_, s)) return fail("urUSMPoolGetInfoExp failed at the end");
  if (s.used != 0) {
    std::ostringstream os;
    os << "everything is freed, yet the user pool reports " << s;
    return fail(os.str());
  }
  return true;
}

class urAsyncAllocRandomTest : public conf::DeviceTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::DeviceTest);
    if (!async_supported(device()))
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP";
    if (!conf::usm_supported(device(), UR_USM_TYPE_DEVICE)) GTEST_SKIP() << found().label() << " has no device USM";
  }
};

TEST_P(urAsyncAllocRandomTest, RandomProgramsFollowTheContract) {
  DeviceFacts facts;
  for (ur_usm_type_t k : {UR_USM_TYPE_DEVICE, UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED})
    if (conf::usm_supported(device(), k)) facts.kinds.push_back(k);
  facts.out_of_order = conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  facts.profiling = conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_PROFILING_ENABLE);

  bool replay = false;
  const uint64_t first = env_number("ORDO_RANDOM_SEED", 1, &replay);
  const uint64_t count = env_number("ORDO_RANDOM_PROGRAMS", replay ? 1 : 200);
  Totals totals;
  LifetimeTotals lifetime_totals;
  const char *mode_env = std::getenv("ORDO_RANDOM_MODE");
  const std::string mode = mode_env ? mode_env : "";
  if (!mode.empty() && mode != "lifetimes" && mode != "classic")
    FAIL() << "ORDO_RANDOM_MODE is '" << mode << "': lifetimes, classic or unset (the mix)";
  // The mix: a seed's mode comes from the seed alone, so a replay finds it again.
  auto lifetime_mode = [&](uint64_t seed) {
    if (!mode.empty()) return mode == "lifetimes";
    return ((seed * 0x2545f4914f6cdd1dull) >> 40) % 8 == 0;
  };
  int failures = 0;
  const uint64_t max_failures = env_number("ORDO_RANDOM_MAX_FAILURES", 3);
  const auto t0 = std::chrono::steady_clock::now();
  {
    const SeedReporter reporter;
    for (uint64_t i = 0; i < count && uint64_t(failures) < max_failures; ++i) {
      g_running_seed = first + i;
      if (lifetime_mode(first + i)) {
        std::string why;
        size_t calls = 0;
        if (!run_lifetime_program(found(), first + i, lifetime_totals, why, calls)) {
          ++failures;
          ADD_FAILURE() << "random program " << first + i << " on " << found().label() << " failed after " << calls
                        << " operations: " << why << "\n  replay it: ORDO_RANDOM_SEED=" << first + i
                        << " ORDO_RANDOM_MODE=lifetimes ONEAPI_DEVICE_SELECTOR='" << found().backend_name
                        << ":*' ordo-conformance --gtest_filter='urAsyncAllocRandomTest.*'";
        }
        continue;
      }
      Program program(found(), facts, first + i, totals);
      if (!program.run()) {
        ++failures;
        ADD_FAILURE() << "random program " << first + i << " on " << found().label() << " failed after "
                      << program.ops_done() << " operations: " << program.failure()
                      << "\n  replay it: ORDO_RANDOM_SEED=" << first + i << " ONEAPI_DEVICE_SELECTOR='"
                      << found().backend_name << ":*' ordo-conformance --gtest_filter='urAsyncAllocRandomTest.*'"
                      << "\n  or the run up to it (pools may choose by address, and addresses depend on what ran "
                         "before): ORDO_RANDOM_SEED="
                      << first << " ORDO_RANDOM_PROGRAMS=" << i + 1;
      }
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ random   ] %s: %llu programs from seed %llu, %llu operations (%llu allocs, %llu fills, %llu copies, "
              "%llu stream-ordered frees, %llu plain frees, %llu barriers/waits, %llu syncs, %llu refused as they "
              "must be, %llu refused by a full pool, %llu threaded phases), %d failed, %.2f s\n",
              found().label().c_str(), (unsigned long long)totals.programs.load(), (unsigned long long)first,
              (unsigned long long)totals.ops.load(), (unsigned long long)totals.allocs.load(),
              (unsigned long long)totals.fills.load(), (unsigned long long)totals.copies.load(),
              (unsigned long long)totals.frees.load(), (unsigned long long)totals.plain_frees.load(),
              (unsigned long long)totals.orderings.load(), (unsigned long long)totals.syncs.load(),
              (unsigned long long)totals.refused.load(), (unsigned long long)totals.full.load(),
              (unsigned long long)totals.threaded.load(), failures, s);
  std::printf("[ random   ] %s: and %s\n", found().label().c_str(), describe(lifetime_totals).c_str());
  std::fflush(stdout);
}

CONF_INSTANTIATE_DEVICE_SUITE(urAsyncAllocRandomTest);

} // namespace
