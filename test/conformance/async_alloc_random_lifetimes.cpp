// SPDX-License-Identifier: Apache-2.0
// The lifetime mode of the randomized checker of stream-ordered allocation
// (async_alloc_random.cpp runs it for some seeds, or for all with
// ORDO_RANDOM_MODE=lifetimes). Where the other mode keeps one user pool for the whole
// program, this one makes pools come and go, over memory of every origin, and ends the
// program with handles released in a random order and blocks still live. What it
// covers (docs/async-alloc.md, "Lifetime", "Errors", "Registered host memory"):
//  - churn: the main thread creates pools, makes them current, trims and destroys them
//    while 1-3 threads allocate with pPool = NULL (the current pool) and from named
//    pools the main thread keeps, fill, read back and free. Every block a thread got must
//    be an allocation of its kind at once (urUSMGetMemAllocInfo), hold its pattern and
//    free with SUCCESS; a destroyed pool stops being current; a destroyed handle is
//    INVALID_VALUE (checked only with ORDO_RANDOM_DESTROYED_HANDLES=1: through the
//    loader such a call reads freed memory, see check_destroyed).
//  - fixed pools over device, host and shared memory from urUSM*Alloc, their ranges
//    identical to, nested in, containing, overlapping or adjacent to another's, or
//    reaching out of the allocation: INVALID_VALUE for memory another pool holds or
//    that is not inside the allocation, SUCCESS otherwise; blocks stay inside their
//    pool's range and never overlap another live block; urUSMFree of the allocation
//    behind a pool that still holds memory is refused (INVALID_MEM_OBJECT) and changes
//    nothing, unless a live block starts at that address (then it frees the block);
//    once the pools are gone and their blocks freed it succeeds.
//  - registered host memory (where the device registers): a fixed pool over it is
//    INVALID_VALUE (the docs require memory from urUSM*Alloc).
//  - a classic pool at its maximum, idle chunks of several kinds in it: a request the
//    maximum allows must succeed once every block is freed.
//  - urUSMFree and urEnqueueUSMFreeExp of every offset of a block: INVALID_MEM_OBJECT,
//    nothing changed (the pool's statistics, the block's type and pattern).
//  - teardown: queues and the context released in a random order, sometimes with
//    blocks of the default and host pools still live (reused ones among them); the
//    context's extended deleter must run at the last release, not before.
// The shadow model (live blocks, pools and the memory they hold, the current pool) says
// what every call answers; where a race makes two answers legal, both are accepted.
// ORDO_RANDOM_LIFETIME_STEPS=churn,alloc,free (names: kStepNames) keeps only those steps,
// to aim a long run at one path.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "async_alloc_support.hpp"

namespace conf::async {

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * KiB;

ur_result_t plain_alloc(ur_context_handle_t ctx, ur_device_handle_t dev, ur_usm_type_t kind, ur_usm_pool_handle_t pool,
                        size_t size, void **out) {
  switch (kind) {
  case UR_USM_TYPE_HOST: return urUSMHostAlloc(ctx, nullptr, pool, size, out);
  case UR_USM_TYPE_SHARED: return urUSMSharedAlloc(ctx, dev, nullptr, pool, size, out);
  default: return urUSMDeviceAlloc(ctx, dev, nullptr, pool, size, out);
  }
}

class LifetimeProgram {
public:
  LifetimeProgram(const urinfo::FoundDevice &dev, uint64_t seed, LifetimeTotals &totals)
      : dev_(dev), seed_(seed), totals_(totals), rng_(seed * 0xd1b54a32d192ed03ull + 7) {}
  bool run();
  const std::string &failure() const { return failure_; }
  size_t calls() const { return calls_.load(); }

private:
  struct Pool {
    ur_usm_pool_handle_t h = nullptr;
    bool exp = false;    // urUSMPoolCreateExp (a device pool); else urUSMPoolCreate
    bool fixed = false;  // over user memory
    bool doomed = false; // churn: the main thread may destroy it while threads run
    bool alive = true;
    ur_usm_type_t kind = UR_USM_TYPE_DEVICE; // fixed pools: the kind they hold
    char *lo = nullptr, *hi = nullptr;       // fixed pools: the range
    size_t max = 0;
    size_t live = 0, used = 0; // fixed pools: live blocks, their sizes rounded up to 64
    bool pending = false;      // a block freed since the queues last finished: its memory
                               // may wait for that free (or for its previous owner's)
    uint64_t id = 0;
  };
  struct Block {
    uint64_t id = 0;
    char *ptr = nullptr;
    size_t size = 0;
    ur_usm_type_t kind = UR_USM_TYPE_DEVICE;
    Pool *pool = nullptr;       // the pool that holds it, where known
    bool context_owned = false; // known to come from the default or host pool
    uint32_t pattern = 0;
    bool filled = false;
    size_t queue = 0; // every command on a block goes to this in-order queue
  };
  struct Backing {
    char *ptr = nullptr;
    size_t size = 0;
    ur_usm_type_t kind = UR_USM_TYPE_DEVICE;
    bool freed = false;
  };
  struct Actor {
    std::mt19937_64 rng;
    std::vector<Block> blocks;
    size_t queue = 0;
    int index = -1; // -1: the main thread
    uint64_t below(uint64_t n) { return n ? rng() % n : 0; }
    bool chance(unsigned percent) { return below(100) < percent; }
  };

  bool fail(const std::string &what);
  void note(const Actor &a, const std::string &op);
  bool expect(ur_result_t got, ur_result_t want, const std::string &what);
  ur_usm_type_t any_kind(Actor &a) { return kinds_[a.below(kinds_.size())]; }

  bool setup();
  void teardown_after_failure();
  bool finish_all();
  bool step(Actor &a);

  // Blocks.
  bool made_block(Actor &a, Block b, const std::string &what);
  bool fill(Block &b);
  bool check_block(const Block &b, const std::string &when);
  bool free_block(Actor &a, size_t index, bool plain);
  bool op_alloc(Actor &a);
  bool op_reuse(Actor &a);
  bool op_offsets(Actor &a);

  // Pools.
  Pool *new_device_pool(Actor &a, bool doomed, size_t max);
  bool destroy_pool(Actor &a, Pool &p);
  bool set_current(Actor &a, Pool *p);
  bool handle_is_live(ur_usm_pool_handle_t h);
  bool check_destroyed(Pool &p);
  bool check_fixed_stats(const std::string &after);
  bool op_churn(Actor &main);
  bool op_fixed(Actor &a);
  bool try_fixed(Actor &a, int backing, char *lo, char *hi, ur_usm_type_t kind, const std::string &relation);
  bool op_free_backing(Actor &a);
  bool op_registered(Actor &a);
  bool op_limits(Actor &a);
  bool end_program(Actor &a);

  const urinfo::FoundDevice &dev_;
  const uint64_t seed_;
  LifetimeTotals &totals_;
  std::mt19937_64 rng_;
  std::vector<ur_usm_type_t> kinds_;
  bool registers_ = false;

  ur_context_handle_t ctx_ = nullptr;
  std::vector<ur_queue_handle_t> queues_;
  std::atomic<int> *deleted_ = nullptr; // null: the adapter has no extended deleter
  std::deque<Pool> pools_;              // every pool the program made (stable addresses)
  Pool *current_ = nullptr;             // the device's current pool (null: the default pool)
  ur_usm_pool_handle_t default_pool_ = nullptr;
  std::vector<Backing> backings_;
  std::atomic<uint64_t> next_id_{1};

  // Shared with threads: guarded by mu_.
  std::mutex mu_;
  std::map<uintptr_t, std::pair<size_t, uint64_t>> live_; // start -> (size, block id)
  std::vector<std::string> log_;
  std::string failure_;
  std::atomic<bool> failed_{false};
  std::atomic<size_t> calls_{0};
};

bool LifetimeProgram::fail(const std::string &what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.exchange(true)) {
    std::ostringstream os;
    os << "[lifetime mode] " << what << "\n  last operations of seed " << seed_ << ":";
    for (size_t i = log_.size() > 16 ? log_.size() - 16 : 0; i < log_.size(); ++i) os << "\n    " << log_[i];
    failure_ = os.str();
  }
  return false;
}

void LifetimeProgram::note(const Actor &a, const std::string &op) {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream os;
  os << "#" << calls_.load() << (a.index >= 0 ? " [thread " + std::to_string(a.index) + "] " : " ") << op;
  log_.push_back(os.str());
}

bool LifetimeProgram::expect(ur_result_t got, ur_result_t want, const std::string &what) {
  if (got == want) return true;
  return fail(what + " gave " + urinfo::result_name(got) + ", expected " + urinfo::result_name(want));
}

bool LifetimeProgram::setup() {
  ur_device_handle_t d = dev_.device;
  for (ur_usm_type_t k : {UR_USM_TYPE_DEVICE, UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED})
    if (conf::usm_supported(d, k)) kinds_.push_back(k);
  ur_bool_t reg = 0;
  registers_ = info(d, UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP, reg) == UR_RESULT_SUCCESS && reg;
  if (!expect(urContextCreate(1, &d, nullptr, &ctx_), UR_RESULT_SUCCESS, "urContextCreate")) return false;
  std::atomic<int> &counter = new_deleter_counter();
  const ur_result_t r = urContextSetExtendedDeleter(ctx_, count_deletion, &counter);
  if (r == UR_RESULT_SUCCESS)
    deleted_ = &counter;
  else if (!expect(r, UR_RESULT_ERROR_UNSUPPORTED_FEATURE, "urContextSetExtendedDeleter"))
    return false;
  // In-order queues only: each block lives on one queue, so queue order is its order.
  // Queue 0 is the main thread's; churn threads take one each of the others.
  for (size_t i = 0; i < 4; ++i) {
    ur_queue_handle_t q = nullptr;
    if (!expect(conf::make_queue(ctx_, d, 0, &q), UR_RESULT_SUCCESS, "urQueueCreate")) return false;
    queues_.push_back(q);
  }
  return expect(urUSMPoolGetDefaultDevicePoolExp(ctx_, d, &default_pool_), UR_RESULT_SUCCESS,
                "urUSMPoolGetDefaultDevicePoolExp");
}

bool LifetimeProgram::finish_all() {
  for (ur_queue_handle_t q : queues_)
    if (!expect(urQueueFinish(q), UR_RESULT_SUCCESS, "urQueueFinish")) return false;
  for (Pool &p : pools_) p.pending = false;
  return true;
}

// ---- blocks ----------------------------------------------------------------------

// A block an alloc returned: it must be an allocation of its kind at once, inside its
// fixed pool's range if it has one, and overlap no live block.
bool LifetimeProgram::made_block(Actor &a, Block b, const std::string &what) {
  if (!b.ptr) return fail(what + " returned a null pointer");
  ur_usm_type_t type = UR_USM_TYPE_FORCE_UINT32;
  const ur_result_t r = urUSMGetMemAllocInfo(ctx_, b.ptr, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr);
  if (r != UR_RESULT_SUCCESS || type != b.kind) {
    std::ostringstream os;
    os << what << " returned " << static_cast<void *>(b.ptr) << ", which urUSMGetMemAllocInfo calls "
       << (r == UR_RESULT_SUCCESS ? conf::usm_kind_name(type) : urinfo::result_name(r)) << " right after the alloc";
    return fail(os.str());
  }
  if (b.pool && b.pool->fixed && (b.ptr < b.pool->lo || b.ptr + b.size > b.pool->hi)) {
    std::ostringstream os;
    os << what << " returned [" << static_cast<void *>(b.ptr) << ", +" << b.size << ") outside its fixed pool's range ["
       << static_cast<void *>(b.pool->lo) << ", " << static_cast<void *>(b.pool->hi) << ")";
    return fail(os.str());
  }
  b.id = next_id_++;
  std::ostringstream clash;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uintptr_t lo = reinterpret_cast<uintptr_t>(b.ptr);
    auto it = live_.upper_bound(lo);
    for (auto c : {it, it == live_.begin() ? live_.end() : std::prev(it)})
      if (c != live_.end() && overlaps(b.ptr, b.size, reinterpret_cast<void *>(c->first), c->second.first))
        clash << what << " returned " << static_cast<void *>(b.ptr) << " (" << b.size
              << " bytes), overlapping live block " << c->second.second << " at " << reinterpret_cast<void *>(c->first)
              << " (" << c->second.first << " bytes)";
    if (clash.str().empty()) {
      live_[lo] = {b.size, b.id};
      if (b.pool && b.pool->fixed) {
        ++b.pool->live;
        b.pool->used += round_up(b.size, 64);
      }
    }
  }
  if (!clash.str().empty()) return fail(clash.str());
  b.pattern = 0x40000000u | uint32_t((seed_ & 0x3fff) << 16) | uint32_t(b.id & 0xffff);
  b.queue = a.queue;
  note(a, what + " -> block " + std::to_string(b.id) + " at " + std::to_string(reinterpret_cast<uintptr_t>(b.ptr)));
  if (a.chance(70) && !fill(b)) return false;
  a.blocks.push_back(b);
  return true;
}

bool LifetimeProgram::fill(Block &b) {
  const size_t bytes = b.size & ~size_t(3);
  if (!bytes) return true;
  ++calls_;
  if (!expect(fill32(queues_[b.queue], b.ptr, bytes, b.pattern, 0, nullptr, nullptr), UR_RESULT_SUCCESS,
              "urEnqueueUSMFill of block " + std::to_string(b.id)))
    return false;
  b.filled = true;
  return true;
}

// Reads a filled block back (its queue orders the read after the fill).
bool LifetimeProgram::check_block(const Block &b, const std::string &when) {
  ur_usm_type_t type = UR_USM_TYPE_FORCE_UINT32;
  const ur_result_t r = urUSMGetMemAllocInfo(ctx_, b.ptr, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr);
  if (r != UR_RESULT_SUCCESS || type != b.kind)
    return fail("block " + std::to_string(b.id) + " is no longer a " + conf::usm_kind_name(b.kind) + " allocation " +
                when + " (" + (r ? urinfo::result_name(r) : conf::usm_kind_name(type)) + ")");
  const size_t bytes = b.size & ~size_t(3);
  if (!b.filled || !bytes) return true;
  std::vector<uint32_t> got(bytes / 4, 0xcdcdcdcdu);
  ++calls_;
  if (!expect(urEnqueueUSMMemcpy(queues_[b.queue], true, got.data(), b.ptr, bytes, 0, nullptr, nullptr),
              UR_RESULT_SUCCESS, "reading block " + std::to_string(b.id) + " " + when))
    return false;
  const size_t bad = first_mismatch(got, b.pattern);
  if (bad == got.size()) return true;
  std::ostringstream os;
  os << "block " << b.id << " (" << static_cast<void *>(b.ptr) << ") holds " << std::hex << got[bad] << " at element "
     << std::dec << bad << " " << when << " instead of its pattern " << std::hex << b.pattern;
  return fail(os.str());
}

bool LifetimeProgram::free_block(Actor &a, size_t index, bool plain) {
  Block b = a.blocks[index];
  a.blocks.erase(a.blocks.begin() + std::ptrdiff_t(index));
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(reinterpret_cast<uintptr_t>(b.ptr));
    if (b.pool && b.pool->fixed) {
      --b.pool->live;
      b.pool->used -= round_up(b.size, 64);
      b.pool->pending = true;
    }
  }
  // Naming the pool is optional, and impossible once it is destroyed.
  ur_usm_pool_handle_t named = b.pool && b.pool->alive && !b.pool->doomed && a.chance(50) ? b.pool->h : nullptr;
  note(a, std::string(plain ? "urUSMFree" : "enqueued free") + " of block " + std::to_string(b.id) +
              (named ? " naming its pool" : ""));
  ++calls_;
  if (plain) {
    if (!expect(urQueueFinish(queues_[b.queue]), UR_RESULT_SUCCESS, "urQueueFinish before urUSMFree")) return false;
    return expect(urUSMFree(ctx_, b.ptr), UR_RESULT_SUCCESS, "urUSMFree of block " + std::to_string(b.id));
  }
  return expect(urEnqueueUSMFreeExp(queues_[b.queue], named, b.ptr, 0, nullptr, nullptr), UR_RESULT_SUCCESS,
                "urEnqueueUSMFreeExp of block " + std::to_string(b.id));
}

// An alloc on the main thread, where the model knows the current pool: pPool = NULL,
// a live user pool, or a live fixed pool (of its kind, or of another: INVALID_VALUE).
bool LifetimeProgram::op_alloc(Actor &a) {
  std::vector<Pool *> live;
  for (Pool &p : pools_)
    if (p.alive) live.push_back(&p);
  Block b;
  b.kind = any_kind(a);
  b.size = 1 + a.below(a.chance(50) ? 4096 : 256 * KiB);
  Pool *named = !live.empty() && a.chance(60) ? live[a.below(live.size())] : nullptr;
  // Without a pool only the enqueued form draws from a pool (urUSM*Alloc is plain).
  const bool enqueued = !named || a.chance(60);
  ur_result_t want = UR_RESULT_SUCCESS;
  bool may_be_full = false;
  if (named) {
    if (named->fixed && named->kind != b.kind)
      want = UR_RESULT_ERROR_INVALID_VALUE;
    else if (named->exp && b.kind == UR_USM_TYPE_HOST)
      want = UR_RESULT_ERROR_INVALID_VALUE;
    if (named->fixed) {
      b.size = std::min(b.size, size_t(named->hi - named->lo));
      // An empty fixed pool holds any request its range holds (an enqueued alloc waits
      // for a pending free, rule 3; urUSM*Alloc cannot); otherwise it may be full.
      may_be_full = named->live > 0 || (named->pending && !enqueued);
    }
    may_be_full = may_be_full || named->max;
  } else if (b.kind != UR_USM_TYPE_HOST && current_) {
    may_be_full = current_->max;
  }
  b.pool = named ? named : b.kind != UR_USM_TYPE_HOST ? current_ : nullptr;
  b.context_owned = !b.pool;
  std::ostringstream what;
  what << (enqueued ? "enqueued " : "urUSM*Alloc ") << conf::usm_kind_name(b.kind) << " alloc of " << b.size
       << " bytes from "
       << (named ? (named->fixed ? "fixed pool " : "pool ") + std::to_string(named->id) : "pPool = NULL");
  note(a, what.str());
  ++calls_;
  void *p = nullptr;
  const ur_result_t r =
      enqueued ? enqueue_alloc(b.kind, queues_[a.queue], named ? named->h : nullptr, b.size, 0, nullptr, &p, nullptr)
               : plain_alloc(ctx_, dev_.device, b.kind, named->h, b.size, &p);
  if (may_be_full && want == UR_RESULT_SUCCESS && r == out_of_memory_for(b.kind)) return true;
  if (!expect(r, want, what.str())) return false;
  if (r != UR_RESULT_SUCCESS) return true;
  b.ptr = static_cast<char *>(p);
  return made_block(a, b, what.str());
}

// A block freed on an in-order queue and its size asked for again at once on that
// queue: the new block may take the old one's memory before that free completed.
bool LifetimeProgram::op_reuse(Actor &a) {
  if (a.blocks.empty()) return op_alloc(a);
  const size_t i = a.below(a.blocks.size());
  Block old = a.blocks[i];
  if (old.pool && old.pool->fixed) return op_alloc(a);
  const size_t q = old.queue;
  if (!free_block(a, i, false)) return false;
  Block b;
  b.kind = old.kind;
  b.size = old.size;
  b.pool = old.pool && old.pool->alive ? old.pool : nullptr;
  if (!b.pool && b.kind != UR_USM_TYPE_HOST) b.pool = current_;
  b.context_owned = !b.pool;
  const std::string what = "enqueued " + std::string(conf::usm_kind_name(b.kind)) + " alloc of " +
                           std::to_string(b.size) + " bytes again, after freeing block " + std::to_string(old.id);
  note(a, what);
  ++calls_;
  void *p = nullptr;
  const size_t keep = a.queue;
  a.queue = q;
  const ur_result_t r =
      enqueue_alloc(b.kind, queues_[q], b.pool ? b.pool->h : nullptr, b.size, 0, nullptr, &p, nullptr);
  bool ok = true;
  if (!(b.pool && b.pool->max && r == out_of_memory_for(b.kind))) {
    ok = expect(r, UR_RESULT_SUCCESS, what);
    if (ok) {
      b.ptr = static_cast<char *>(p);
      ok = made_block(a, b, what);
    }
  }
  a.queue = keep;
  return ok;
}

// urUSMFree and urEnqueueUSMFreeExp of every pointer inside a block (or a sample, for
// large ones) but its start, up to its size rounded to 64: INVALID_MEM_OBJECT, and
// nothing changes.
bool LifetimeProgram::op_offsets(Actor &a) {
  if (a.blocks.empty()) return op_alloc(a);
  const Block &b = a.blocks[a.below(a.blocks.size())];
  const size_t span = round_up(b.size, 64);
  std::vector<size_t> offsets;
  if (span <= 1024) {
    for (size_t o = 1; o < span; ++o) offsets.push_back(o);
  } else {
    for (size_t o : {size_t(1), size_t(4), size_t(63), size_t(64), b.size / 2, b.size - 1, b.size, span - 1})
      if (o > 0 && o < span) offsets.push_back(o);
    for (int i = 0; i < 48; ++i) offsets.push_back(1 + a.below(span - 1));
  }
  PoolStats before;
  const bool stats = b.pool && b.pool->alive;
  if (stats && !read_stats(b.pool->h, before)) return fail("urUSMPoolGetInfoExp failed");
  note(a, "free at " + std::to_string(offsets.size()) + " inner offsets of block " + std::to_string(b.id) + " (" +
              std::to_string(b.size) + " bytes)");
  for (size_t o : offsets) {
    char *p = b.ptr + o;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (live_.count(reinterpret_cast<uintptr_t>(p))) continue; // another block starts there
    }
    ++calls_;
    ++totals_.offset_frees;
    const std::string at =
        " of block " + std::to_string(b.id) + " + " + std::to_string(o) + " (size " + std::to_string(b.size) + ")";
    if (!expect(urUSMFree(ctx_, p), UR_RESULT_ERROR_INVALID_MEM_OBJECT, "urUSMFree" + at)) return false;
    if (o % 3 == 1 && !expect(urEnqueueUSMFreeExp(queues_[b.queue], nullptr, p, 0, nullptr, nullptr),
                              UR_RESULT_ERROR_INVALID_MEM_OBJECT, "urEnqueueUSMFreeExp" + at))
      return false;
  }
  if (stats) {
    PoolStats now;
    if (!read_stats(b.pool->h, now)) return fail("urUSMPoolGetInfoExp failed");
    if (now != before) {
      std::ostringstream os;
      os << "refused frees of inner pointers of block " << b.id << " changed its pool's statistics from " << before
         << " to " << now;
      return fail(os.str());
    }
  }
  return check_block(b, "after frees of its inner pointers were refused");
}

// ---- pools -----------------------------------------------------------------------

LifetimeProgram::Pool *LifetimeProgram::new_device_pool(Actor &a, bool doomed, size_t max) {
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max,
                                   a.chance(50) ? 0 : (max ? max / 2 : MiB)};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t h = nullptr;
  ++calls_;
  if (!expect(urUSMPoolCreateExp(ctx_, dev_.device, &desc, &h), UR_RESULT_SUCCESS, "urUSMPoolCreateExp"))
    return nullptr;
  Pool p;
  p.h = h;
  p.exp = true;
  p.doomed = doomed;
  p.max = max;
  p.id = next_id_++;
  pools_.push_back(p);
  note(a, "created pool " + std::to_string(p.id) + (max ? " (maximum " + std::to_string(max) + ")" : ""));
  return &pools_.back();
}

bool LifetimeProgram::handle_is_live(ur_usm_pool_handle_t h) {
  if (h == default_pool_) return true;
  for (const Pool &p : pools_)
    if (p.alive && p.h == h) return true;
  return false;
}

// A destroyed handle is INVALID_VALUE everywhere (unless a new pool got its address),
// says docs/async-alloc.md. Off unless ORDO_RANDOM_DESTROYED_HANDLES=1: the loader reads
// the dispatch table through the handle before the layer can refuse it, so a destroyed
// pool's handle is a use-after-free that kills the whole run (issue 21 report).
bool LifetimeProgram::check_destroyed(Pool &p) {
  static const bool enabled = [] {
    const char *v = std::getenv("ORDO_RANDOM_DESTROYED_HANDLES");
    return v && *v && *v != '0';
  }();
  if (!enabled || handle_is_live(p.h)) return true;
  ++calls_;
  size_t v = 0;
  if (!expect(urUSMPoolGetInfoExp(p.h, UR_USM_POOL_INFO_USED_CURRENT_EXP, &v, nullptr), UR_RESULT_ERROR_INVALID_VALUE,
              "urUSMPoolGetInfoExp of destroyed pool " + std::to_string(p.id)))
    return false;
  if (!p.exp) return true;
  return expect(urUSMPoolTrimToExp(ctx_, dev_.device, p.h, 0), UR_RESULT_ERROR_INVALID_VALUE,
                "urUSMPoolTrimToExp of destroyed pool " + std::to_string(p.id));
}

bool LifetimeProgram::destroy_pool(Actor &a, Pool &p) {
  note(a, "destroy pool " + std::to_string(p.id) + (&p == current_ ? " (the current pool)" : ""));
  ++calls_;
  ++totals_.pools_destroyed;
  const ur_result_t r = p.exp ? urUSMPoolDestroyExp(ctx_, dev_.device, p.h) : urUSMPoolRelease(p.h);
  if (!expect(r, UR_RESULT_SUCCESS, p.exp ? "urUSMPoolDestroyExp" : "urUSMPoolRelease")) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    p.alive = false;
  }
  if (current_ == &p) current_ = nullptr; // a destroyed pool stops being current
  ur_usm_pool_handle_t now = nullptr;
  if (!expect(urUSMPoolGetDevicePoolExp(ctx_, dev_.device, &now), UR_RESULT_SUCCESS, "urUSMPoolGetDevicePoolExp"))
    return false;
  const ur_usm_pool_handle_t want = current_ ? current_->h : default_pool_;
  if (now != want)
    return fail("after destroying pool " + std::to_string(p.id) + " the current pool is " +
                (now == p.h ? "still the destroyed one" : "not the one expected") +
                (current_ ? " (expected pool " + std::to_string(current_->id) + ")" : " (expected the default pool)"));
  return check_destroyed(p);
}

bool LifetimeProgram::set_current(Actor &a, Pool *p) {
  note(a, p ? "make pool " + std::to_string(p->id) + " current" : "make the default pool current");
  ++calls_;
  if (!expect(urUSMPoolSetDevicePoolExp(ctx_, dev_.device, p ? p->h : default_pool_), UR_RESULT_SUCCESS,
              "urUSMPoolSetDevicePoolExp"))
    return false;
  current_ = p;
  return true;
}

// Between single-threaded operations a fixed pool's statistics are exact.
bool LifetimeProgram::check_fixed_stats(const std::string &after) {
  for (Pool &p : pools_) {
    if (!p.alive || !p.fixed) continue;
    PoolStats s;
    if (!read_stats(p.h, s)) return fail("urUSMPoolGetInfoExp of fixed pool " + std::to_string(p.id) + " failed");
    if (s.used != p.used || s.reserved != size_t(p.hi - p.lo)) {
      std::ostringstream os;
      os << "after " << after << ": fixed pool " << p.id << " over " << (p.hi - p.lo) << " bytes reports " << s
         << "; its live blocks make " << p.used << " (each rounded up to 64)";
      return fail(os.str());
    }
  }
  return true;
}

// One thread makes, switches, trims and destroys pools while 1-3 threads allocate
// through the current pool and through pools it keeps.
bool LifetimeProgram::op_churn(Actor &main) {
  ++totals_.churns;
  std::vector<Pool *> kept; // live user device pools not fixed: the threads may name them
  for (Pool &p : pools_)
    if (p.alive && p.exp && !p.fixed) {
      p.doomed = false;
      kept.push_back(&p);
    }
  if (kept.empty() || main.chance(30)) {
    Pool *p = new_device_pool(main, false, main.chance(50) ? 0 : 8 * MiB);
    if (!p) return false;
    kept.push_back(p);
  }
  std::vector<Pool *> doomed;
  for (uint64_t i = 1 + main.below(2); i > 0; --i) {
    // Doomed pools have no maximum, so a thread allocating from the current pool
    // never meets a full one.
    Pool *p = new_device_pool(main, true, 0);
    if (!p) return false;
    doomed.push_back(p);
  }
  if (main.chance(70)) {
    if (!set_current(main, doomed[main.below(doomed.size())])) return false;
  } else if (current_ && current_->max && !set_current(main, nullptr)) {
    return false; // threads allocating with pPool = NULL must not meet a full pool
  }

  const size_t n = 1 + main.below(std::min<size_t>(3, queues_.size() - 1));
  std::vector<Actor> actors(n);
  for (size_t t = 0; t < n; ++t) {
    actors[t].rng.seed(main.rng());
    actors[t].queue = t + 1;
    actors[t].index = int(t);
  }
  std::vector<ur_usm_type_t> device_kinds;
  for (ur_usm_type_t k : kinds_)
    if (k != UR_USM_TYPE_HOST) device_kinds.push_back(k);
  std::atomic<size_t> ready{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      Actor &a = actors[t];
      ready.fetch_add(1);
      while (ready.load() < n + 1) std::this_thread::yield();
      const size_t steps = 12 + a.below(20);
      for (size_t i = 0; i < steps && !failed_; ++i) {
        const uint64_t r = a.below(100);
        bool ok = true;
        if (r < 50 || a.blocks.empty()) {
          Block b;
          b.kind = device_kinds.empty() || a.chance(15) ? kinds_[a.below(kinds_.size())]
                                                        : device_kinds[a.below(device_kinds.size())];
          b.size = 1 + a.below(a.chance(70) ? 4096 : 512 * KiB);
          Pool *named = b.kind != UR_USM_TYPE_HOST && a.chance(30) ? kept[a.below(kept.size())] : nullptr;
          b.pool = named; // with pPool = NULL: whichever pool is current when it runs
          b.context_owned = !named && b.kind == UR_USM_TYPE_HOST;
          const std::string what = std::string("enqueued ") + conf::usm_kind_name(b.kind) + " alloc of " +
                                   std::to_string(b.size) + " bytes from " +
                                   (named ? "pool " + std::to_string(named->id) : "pPool = NULL");
          note(a, what);
          ++calls_;
          void *p = nullptr;
          const ur_result_t got =
              enqueue_alloc(b.kind, queues_[a.queue], named ? named->h : nullptr, b.size, 0, nullptr, &p, nullptr);
          if (named && named->max && got == out_of_memory_for(b.kind)) continue;
          ok = expect(got, UR_RESULT_SUCCESS, what);
          if (ok) {
            b.ptr = static_cast<char *>(p);
            ok = made_block(a, b, what);
          }
        } else if (r < 65) {
          ok = fill(a.blocks[a.below(a.blocks.size())]);
        } else if (r < 75) {
          ok = check_block(a.blocks[a.below(a.blocks.size())], "while pools come and go");
        } else {
          ok = free_block(a, a.below(a.blocks.size()), r >= 92);
        }
        if (!ok) break;
      }
    });
  ready.fetch_add(1);
  // The main thread's side: every step on a pool the threads may be drawing from.
  const size_t steps = 4 + main.below(8);
  for (size_t i = 0; i < steps && !failed_; ++i) {
    // Let the threads run between pool steps, briefly (the run's length is CI's).
    if (main.chance(50))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(main.below(80)));
    std::vector<Pool *> live_doomed;
    for (Pool *p : doomed)
      if (p->alive) live_doomed.push_back(p);
    const uint64_t r = main.below(100);
    bool ok = true;
    if (r < 30 && !live_doomed.empty()) {
      ok = destroy_pool(main, *live_doomed[main.below(live_doomed.size())]);
    } else if (r < 50) {
      Pool *p = new_device_pool(main, true, 0);
      ok = p != nullptr;
      if (ok) {
        doomed.push_back(p);
        if (main.chance(50)) ok = set_current(main, p);
      }
    } else if (r < 65) {
      Pool *target = live_doomed.empty() || main.chance(30) ? nullptr : live_doomed[main.below(live_doomed.size())];
      ok = set_current(main, target);
    } else if (r < 80) {
      std::vector<Pool *> all(live_doomed);
      all.insert(all.end(), kept.begin(), kept.end());
      Pool *p = all[main.below(all.size())];
      const size_t floor = main.chance(50) ? 0 : main.below(4 * MiB);
      note(main, "trim pool " + std::to_string(p->id) + " to " + std::to_string(floor));
      ++calls_;
      ok = expect(urUSMPoolTrimToExp(ctx_, dev_.device, p->h, floor), UR_RESULT_SUCCESS, "urUSMPoolTrimToExp");
    } else if (!live_doomed.empty()) {
      // A block from a pool about to go, alive past its pool.
      Pool *p = live_doomed[main.below(live_doomed.size())];
      Block b;
      b.kind = device_kinds.empty() ? UR_USM_TYPE_DEVICE : device_kinds[main.below(device_kinds.size())];
      b.size = 1 + main.below(64 * KiB);
      b.pool = p;
      const std::string what = std::string("enqueued ") + conf::usm_kind_name(b.kind) + " alloc of " +
                               std::to_string(b.size) + " bytes from doomed pool " + std::to_string(p->id);
      note(main, what);
      ++calls_;
      void *ptr = nullptr;
      ok = expect(enqueue_alloc(b.kind, queues_[main.queue], p->h, b.size, 0, nullptr, &ptr, nullptr),
                  UR_RESULT_SUCCESS, what);
      if (ok) {
        b.ptr = static_cast<char *>(ptr);
        ok = made_block(main, b, what);
      }
    }
    if (!ok) break;
  }
  for (std::thread &th : threads) th.join();
  if (failed_) return false;
  // Every block a thread got is still its own, after all that.
  if (!finish_all()) return false;
  for (Actor &a : actors)
    for (Block &b : a.blocks) {
      if (!check_block(b, "after the churn")) return false;
      main.blocks.push_back(b);
    }
  // From here on pools are named only while alive, and they may all be destroyed.
  for (Pool *p : doomed) p->doomed = false;
  return true;
}

// A fixed pool over [lo, hi) of backing `backing`, or a range that reaches out of it
// (backing < 0: the model has it outside any allocation).
bool LifetimeProgram::try_fixed(Actor &a, int backing, char *lo, char *hi, ur_usm_type_t kind,
                                const std::string &relation) {
  const Backing *bk = backing >= 0 ? &backings_[size_t(backing)] : nullptr;
  bool inside = bk && !bk->freed && bk->kind == kind && lo >= bk->ptr && hi <= bk->ptr + bk->size && lo < hi;
  const Pool *holder = nullptr;
  for (const Pool &p : pools_)
    if (p.fixed && (p.alive || p.live) && lo < p.hi && p.lo < hi) holder = &p;
  const bool exp = kind != UR_USM_TYPE_HOST && a.chance(50);
  ur_usm_pool_buffer_desc_t buf{UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC,
                                nullptr,
                                lo,
                                size_t(hi - lo),
                                kind,
                                kind == UR_USM_TYPE_HOST || exp ? nullptr : dev_.device};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &buf, 0};
  const ur_result_t want = inside && !holder ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE;
  std::ostringstream what;
  what << (exp ? "urUSMPoolCreateExp" : "urUSMPoolCreate") << " of a fixed " << conf::usm_kind_name(kind)
       << " pool over " << (hi - lo) << " bytes at offset " << (bk ? lo - bk->ptr : 0) << " of allocation " << backing
       << " (" << relation << ")";
  if (holder) what << ", memory fixed pool " << holder->id << " holds";
  if (!inside) what << ", not inside the allocation";
  note(a, what.str());
  ++calls_;
  ++totals_.fixed_tried;
  ur_usm_pool_handle_t h = nullptr;
  const ur_result_t r = exp ? urUSMPoolCreateExp(ctx_, dev_.device, &desc, &h) : urUSMPoolCreate(ctx_, &desc, &h);
  if (r == UR_RESULT_SUCCESS) {
    // Keep it in the model even when it should not exist, so that it is destroyed.
    Pool p;
    p.h = h;
    p.exp = exp;
    p.fixed = true;
    p.kind = kind;
    p.lo = lo;
    p.hi = hi;
    p.id = next_id_++;
    pools_.push_back(p);
    ++totals_.fixed_made;
  }
  return expect(r, want, what.str());
}

// A plain allocation and fixed pools over parts of it, each range drawn against a pool
// already there: identical, nested, containing, overlapping, adjacent, or out of range.
bool LifetimeProgram::op_fixed(Actor &a) {
  if (!finish_all()) return false; // frees of earlier blocks have completed: the model is exact
  const ur_usm_type_t kind = any_kind(a);
  constexpr size_t unit = 4 * KiB;
  const size_t units = 8 + a.below(56);
  void *mem = nullptr;
  ++calls_;
  if (!expect(plain_alloc(ctx_, dev_.device, kind, nullptr, units * unit, &mem), UR_RESULT_SUCCESS,
              "urUSM*Alloc of memory for fixed pools"))
    return false;
  backings_.push_back({static_cast<char *>(mem), units * unit, kind, false});
  const int bi = int(backings_.size() - 1);
  char *base = static_cast<char *>(mem);
  note(a, std::string("urUSM*Alloc of ") + conf::usm_kind_name(kind) + " memory for fixed pools: allocation " +
              std::to_string(bi) + ", " + std::to_string(units * unit) + " bytes");
  // The first pool: a random range.
  size_t lo = a.below(units / 2), hi = lo + 2 + a.below(units / 2 - 1);
  if (!try_fixed(a, bi, base + lo * unit, base + hi * unit, kind, "first")) return false;
  for (uint64_t i = 2 + a.below(5); i > 0; --i) {
    // A range placed against a live pool of this allocation.
    std::vector<const Pool *> here;
    for (const Pool &p : pools_)
      if (p.fixed && p.alive && p.lo >= base && p.hi <= base + units * unit) here.push_back(&p);
    if (here.empty()) break;
    const Pool &p = *here[a.below(here.size())];
    const size_t plo = size_t(p.lo - base) / unit, phi = size_t(p.hi - base) / unit;
    const size_t w = 1 + a.below(3);
    std::string rel;
    size_t nlo = plo, nhi = phi;
    switch (a.below(9)) {
    case 0: rel = "identical"; break;
    case 1:
      rel = "nested";
      if (phi - plo < 3) continue;
      nlo = plo + 1, nhi = phi - 1;
      break;
    case 2:
      rel = "containing";
      if (plo == 0 || phi == units) continue;
      nlo = plo - 1, nhi = phi + 1;
      break;
    case 3:
      rel = "overlapping its start";
      if (plo == 0) continue;
      nlo = plo - 1, nhi = plo + 1;
      break;
    case 4:
      rel = "overlapping its end";
      if (phi == units) continue;
      nlo = phi - 1, nhi = phi + 1;
      break;
    case 5:
      rel = "adjacent after it";
      if (phi + w > units) continue;
      nlo = phi, nhi = phi + w;
      break;
    case 6:
      rel = "adjacent before it";
      if (plo < w) continue;
      nlo = plo - w, nhi = plo;
      break;
    case 7:
      rel = "reaching past the allocation's end";
      nlo = units - 1, nhi = units + w;
      break;
    default:
      rel = "the last byte of it only";
      if (!try_fixed(a, bi, p.hi - 64, p.hi, kind, rel)) return false;
      continue;
    }
    if (!try_fixed(a, bi, base + nlo * unit, base + nhi * unit, kind, rel)) return false;
  }
  return check_fixed_stats("making fixed pools");
}

// urUSMFree of an allocation behind fixed pools: refused while a pool holds memory in
// it (live, or destroyed with blocks left), then nothing changed; SUCCESS otherwise.
bool LifetimeProgram::op_free_backing(Actor &a) {
  std::vector<size_t> open;
  for (size_t i = 0; i < backings_.size(); ++i)
    if (!backings_[i].freed) open.push_back(i);
  if (open.empty()) return op_fixed(a);
  if (!finish_all()) return false;
  Backing &bk = backings_[open[a.below(open.size())]];
  bool held = false;
  for (const Pool &p : pools_)
    if (p.fixed && (p.alive || p.live) && p.lo < bk.ptr + bk.size && bk.ptr < p.hi) held = true;
  std::vector<PoolStats> before;
  for (Pool &p : pools_)
    if (p.fixed && p.alive) {
      before.emplace_back();
      if (!read_stats(p.h, before.back())) return fail("urUSMPoolGetInfoExp failed");
    }
  // Under a live pool a block may start at the allocation's first byte: the address
  // then means that block (docs/async-alloc.md, "Fixed pools").
  size_t at_start = a.blocks.size();
  for (size_t i = 0; i < a.blocks.size(); ++i)
    if (a.blocks[i].ptr == bk.ptr) at_start = i;
  if (held && at_start < a.blocks.size()) {
    note(a, "urUSMFree of the allocation behind fixed pools, where block " + std::to_string(a.blocks[at_start].id) +
                " starts: frees the block");
    std::vector<Block> one{a.blocks[at_start]};
    a.blocks.erase(a.blocks.begin() + std::ptrdiff_t(at_start));
    Actor keep;
    keep.rng.seed(a.rng());
    keep.blocks = std::move(one);
    // free_block's plain urUSMFree is exactly this call on this address.
    return free_block(keep, 0, true) && check_fixed_stats("urUSMFree of the address a block and an allocation share");
  }
  note(a, std::string("urUSMFree of the allocation behind fixed pools") + (held ? ", held by a pool" : ""));
  ++calls_;
  const ur_result_t r = urUSMFree(ctx_, bk.ptr);
  if (!held) {
    bk.freed = r == UR_RESULT_SUCCESS;
    return expect(r, UR_RESULT_SUCCESS, "urUSMFree of an allocation no pool holds memory of");
  }
  if (r == UR_RESULT_SUCCESS) {
    bk.freed = true; // gone: nothing may free it again
    // Which meaning the address took: the allocation, or a block starting there.
    std::ostringstream os;
    os << "urUSMFree of an allocation a fixed pool still holds memory of gave SUCCESS (docs/async-alloc.md: a fixed "
          "pool never gives that memory away); pools over it:";
    for (const Pool &p : pools_)
      if (p.fixed && (p.alive || p.live) && p.lo < bk.ptr + bk.size && bk.ptr < p.hi)
        os << " pool " << p.id << (p.alive ? "" : " (destroyed)") << " at offset " << (p.lo - bk.ptr) << " with "
           << p.live << " live blocks";
    for (const Block &b : a.blocks)
      if (b.ptr == bk.ptr) os << "; live block " << b.id << " starts at the allocation's address";
    ur_usm_type_t type = UR_USM_TYPE_FORCE_UINT32;
    const ur_result_t q = urUSMGetMemAllocInfo(ctx_, bk.ptr, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr);
    os << "; urUSMGetMemAllocInfo of that address now answers "
       << (q == UR_RESULT_SUCCESS ? conf::usm_kind_name(type) : urinfo::result_name(q));
    return fail(os.str());
  }
  if (!expect(r, UR_RESULT_ERROR_INVALID_MEM_OBJECT,
              "urUSMFree of an allocation a fixed pool holds memory of (docs/async-alloc.md, \"Fixed pools\")"))
    return false;
  ++totals_.backing_refused;
  size_t i = 0;
  for (Pool &p : pools_)
    if (p.fixed && p.alive) {
      PoolStats now;
      if (!read_stats(p.h, now)) return fail("urUSMPoolGetInfoExp failed");
      if (now != before[i++]) {
        std::ostringstream os;
        os << "a refused urUSMFree of the allocation behind fixed pools changed pool " << p.id << " from "
           << before[i - 1] << " to " << now;
        return fail(os.str());
      }
    }
  for (const Block &b : a.blocks)
    if (b.ptr >= bk.ptr && b.ptr < bk.ptr + bk.size && !check_block(b, "after a refused free of its pool's memory"))
      return false;
  return true;
}

// Host memory the user registered is not memory from urUSM*Alloc: no fixed pool over it.
bool LifetimeProgram::op_registered(Actor &a) {
  if (!registers_) return op_fixed(a);
  ++totals_.registered;
  const size_t page = size_t(sysconf(_SC_PAGESIZE)), pages = 1 + a.below(4);
  void *m = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return true;
  char *mem = static_cast<char *>(m);
  note(a, "register " + std::to_string(pages) + " pages of host memory");
  ++calls_;
  bool ok = expect(urUSMHostAllocRegisterExp(ctx_, mem, pages * page, nullptr), UR_RESULT_SUCCESS,
                   "urUSMHostAllocRegisterExp");
  if (ok) {
    const size_t off = a.below(pages) * page;
    const size_t len = a.chance(50) ? pages * page - off : 64 + a.below(page - 64);
    const ur_usm_type_t kind = a.chance(75) ? UR_USM_TYPE_HOST : UR_USM_TYPE_DEVICE;
    ur_usm_pool_buffer_desc_t buf{UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC,          nullptr, mem + off, len, kind,
                                  kind == UR_USM_TYPE_HOST ? nullptr : dev_.device};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &buf, 0};
    ur_usm_pool_handle_t h = nullptr;
    const std::string what = std::string("urUSMPoolCreate of a fixed ") + conf::usm_kind_name(kind) + " pool over " +
                             std::to_string(len) + " bytes of registered host memory";
    note(a, what);
    ++calls_;
    const ur_result_t r = urUSMPoolCreate(ctx_, &desc, &h);
    if (r == UR_RESULT_SUCCESS) {
      // What the wrongly accepted pool lets happen to the registration, for the report.
      const ur_result_t u = urUSMHostAllocUnregisterExp(ctx_, mem);
      urUSMPoolRelease(h);
      if (u != UR_RESULT_SUCCESS) urUSMHostAllocUnregisterExp(ctx_, mem);
      munmap(mem, pages * page);
      return fail(what +
                  " gave SUCCESS, expected UR_RESULT_ERROR_INVALID_VALUE (docs/async-alloc.md: memory from "
                  "urUSM*Alloc); urUSMHostAllocUnregisterExp under the pool then gave " +
                  urinfo::result_name(u));
    }
    ok = expect(r, UR_RESULT_ERROR_INVALID_VALUE, what + " (docs/async-alloc.md: memory from urUSM*Alloc)");
    ++calls_;
    const ur_result_t u = urUSMHostAllocUnregisterExp(ctx_, mem);
    ok = expect(u, UR_RESULT_SUCCESS, "urUSMHostAllocUnregisterExp") && ok;
  }
  munmap(mem, pages * page);
  return ok;
}

// A classic pool at its maximum with idle chunks of several kinds: once every block is
// freed, a request the maximum allows must succeed (idle chunks go back first).
bool LifetimeProgram::op_limits(Actor &a) {
  ++totals_.limit_checks;
  const size_t max = (2 + 2 * a.below(3)) * MiB; // 2, 4 or 6 MiB
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max, a.chance(70) ? max : max / 2};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t h = nullptr;
  ++calls_;
  if (!expect(urUSMPoolCreate(ctx_, &desc, &h), UR_RESULT_SUCCESS, "urUSMPoolCreate with a maximum")) return false;
  Pool rec;
  rec.h = h;
  rec.max = max;
  rec.id = next_id_++;
  pools_.push_back(rec);
  Pool &pool = pools_.back();
  note(a, "classic pool " + std::to_string(pool.id) + " with maximum " + std::to_string(max));
  // Idle memory of several kinds: blocks of each, then all freed.
  Actor sub;
  sub.rng.seed(a.rng());
  sub.queue = a.queue;
  for (uint64_t i = 2 + a.below(4); i > 0; --i) {
    Block b;
    b.kind = kinds_[i % kinds_.size()];
    b.size = 64 * KiB + a.below(max / 2);
    b.pool = &pool;
    const bool enqueued = a.chance(50);
    const std::string what = std::string(enqueued ? "enqueued " : "urUSM*Alloc ") + conf::usm_kind_name(b.kind) +
                             " alloc of " + std::to_string(b.size) + " bytes from the limited pool";
    note(a, what);
    ++calls_;
    void *p = nullptr;
    const ur_result_t r = enqueued ? enqueue_alloc(b.kind, queues_[a.queue], h, b.size, 0, nullptr, &p, nullptr)
                                   : plain_alloc(ctx_, dev_.device, b.kind, h, b.size, &p);
    if (r == out_of_memory_for(b.kind)) continue;
    if (!expect(r, UR_RESULT_SUCCESS, what)) return false;
    b.ptr = static_cast<char *>(p);
    if (!made_block(sub, b, what)) return false;
  }
  while (!sub.blocks.empty())
    if (!free_block(sub, sub.blocks.size() - 1, a.chance(50))) return false;
  if (!finish_all()) return false;
  PoolStats s;
  if (!read_stats(h, s)) return fail("urUSMPoolGetInfoExp failed");
  if (s.used != 0 || s.reserved > max) {
    std::ostringstream os;
    os << "the limited pool (maximum " << max << ") reports " << s << " with every block freed";
    return fail(os.str());
  }
  // A request the maximum allows, of any kind.
  Block b;
  b.kind = any_kind(a);
  b.size = max / 2 + a.below(max / 2 + 1);
  b.pool = &pool;
  const bool enqueued = a.chance(50);
  std::ostringstream what;
  what << (enqueued ? "enqueued " : "urUSM*Alloc ") << conf::usm_kind_name(b.kind) << " alloc of " << b.size
       << " bytes from a pool of maximum " << max << " that holds " << s.reserved << " bytes, all idle";
  note(a, what.str());
  ++calls_;
  void *p = nullptr;
  const ur_result_t r = enqueued ? enqueue_alloc(b.kind, queues_[a.queue], h, b.size, 0, nullptr, &p, nullptr)
                                 : plain_alloc(ctx_, dev_.device, b.kind, h, b.size, &p);
  if (!expect(r, UR_RESULT_SUCCESS, what.str() + " (docs/async-alloc.md, Limits: idle chunks go back first)"))
    return false;
  b.ptr = static_cast<char *>(p);
  if (!made_block(sub, b, what.str())) return false;
  if (!read_stats(h, s)) return fail("urUSMPoolGetInfoExp failed");
  if (s.used != round_up(b.size, 64) || s.reserved > max) {
    std::ostringstream os;
    os << "after " << what.str() << " the pool reports " << s;
    return fail(os.str());
  }
  if (!check_block(sub.blocks.back(), "in the limited pool")) return false;
  // The block outlives its pool now and then; it is freed like any other later.
  if (a.chance(50)) return free_block(sub, 0, a.chance(50)) && destroy_pool(a, pool);
  a.blocks.push_back(sub.blocks.back());
  return destroy_pool(a, pool);
}

// The kinds of step and where each ends in a draw of 100. ORDO_RANDOM_LIFETIME_STEPS, a
// comma-separated list of these names, keeps only those (to aim a long run at one path;
// alloc runs anyway while the program has no block).
const char *const kStepNames[] = {"alloc", "reuse",   "free",       "check",  "offsets", "churn",
                                  "fixed", "backing", "registered", "limits", "destroy", "current"};
const unsigned kStepEnds[] = {22, 30, 42, 48, 54, 66, 76, 82, 85, 90, 95, 100};
constexpr size_t kStepKinds = sizeof kStepEnds / sizeof kStepEnds[0];

unsigned allowed_steps() {
  static const unsigned mask = [] {
    const char *v = std::getenv("ORDO_RANDOM_LIFETIME_STEPS");
    if (!v || !*v) return ~0u;
    unsigned m = 0;
    std::string list = std::string(v) + ",";
    for (size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1)
      for (size_t k = 0; k < kStepKinds; ++k)
        if (list.compare(at, comma - at, kStepNames[k]) == 0) m |= 1u << k;
    return m ? m : ~0u;
  }();
  return mask;
}

bool LifetimeProgram::step(Actor &a) {
  ++calls_;
  size_t kind = 0;
  for (int tries = 0; tries < 64; ++tries) {
    const uint64_t r = a.below(100);
    kind = 0;
    while (r >= kStepEnds[kind]) ++kind;
    if (allowed_steps() & (1u << kind)) break;
    kind = 0;
  }
  if (a.blocks.empty()) kind = 0;
  switch (kind) {
  case 0: return op_alloc(a);
  case 1: return op_reuse(a);
  case 2: return free_block(a, a.below(a.blocks.size()), a.chance(40));
  case 3: return check_block(a.blocks[a.below(a.blocks.size())], "between operations");
  case 4: return op_offsets(a);
  case 5: return op_churn(a);
  case 6: return op_fixed(a);
  case 7: return op_free_backing(a);
  case 8: return op_registered(a);
  case 9: return op_limits(a);
  case 10: {
    std::vector<Pool *> live;
    for (Pool &p : pools_)
      if (p.alive) live.push_back(&p);
    if (live.empty()) return op_alloc(a);
    if (!finish_all()) return false;
    return destroy_pool(a, *live[a.below(live.size())]);
  }
  default: {
    std::vector<Pool *> device_pools{nullptr};
    for (Pool &p : pools_)
      if (p.alive && p.exp && !p.fixed) device_pools.push_back(&p);
    return set_current(a, device_pools[a.below(device_pools.size())]);
  }
  }
}

// The end: every block of a pool the program made is freed and those pools destroyed
// (a destroyed pool holds its context until its memory is back); blocks of the default
// and host pools may stay live, reused ones among them. Then the queues and the
// context go, in a random order, and the context's extended deleter must run at the
// last release and not before.
bool LifetimeProgram::end_program(Actor &a) {
  if (!finish_all()) return false;
  for (const Block &b : a.blocks)
    if (!check_block(b, "at the end")) return false;
  const bool leave_live = a.chance(50);
  for (size_t i = a.blocks.size(); i-- > 0;) {
    const Block &b = a.blocks[i];
    if (leave_live && b.context_owned && a.chance(70)) continue;
    if (!free_block(a, i, a.chance(50))) return false;
  }
  if (leave_live) {
    // Blocks that took over memory of a free just before (issue 21, case 3).
    if (current_ && !set_current(a, nullptr)) return false;
    for (uint64_t i = 1 + a.below(3); i > 0; --i) {
      Block b;
      b.kind = any_kind(a);
      b.size = 64 + a.below(8 * KiB);
      b.context_owned = true;
      void *p = nullptr;
      ++calls_;
      if (!expect(enqueue_alloc(b.kind, queues_[a.queue], nullptr, b.size, 0, nullptr, &p, nullptr), UR_RESULT_SUCCESS,
                  "enqueued alloc before a reuse"))
        return false;
      b.ptr = static_cast<char *>(p);
      if (!made_block(a, b, "enqueued alloc before a reuse") || !op_reuse(a)) return false;
    }
    for (const Block &b : a.blocks)
      if (!b.context_owned) return fail("block " + std::to_string(b.id) + " of a user pool is left at the end");
  }
  if (!finish_all()) return false;
  for (Pool &p : pools_)
    if (p.alive && !destroy_pool(a, p)) return false;
  for (Backing &bk : backings_)
    if (!bk.freed) {
      ++calls_;
      if (!expect(urUSMFree(ctx_, bk.ptr), UR_RESULT_SUCCESS,
                  "urUSMFree of memory behind fixed pools that are all destroyed, their blocks freed"))
        return false;
      bk.freed = true;
    }
  totals_.left_live += a.blocks.size();
  note(a, "release the queues and the context with " + std::to_string(a.blocks.size()) + " blocks live");
  // Released in a random order; the context's place among the queues is random too.
  std::vector<size_t> order(queues_.size() + 1);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), a.rng);
  for (size_t k = 0; k < order.size(); ++k) {
    if (deleted_ && deleted_->load() != 0)
      return fail("the context's extended deleter ran before its last handle was released");
    ++calls_;
    const ur_result_t r = order[k] == queues_.size() ? urContextRelease(ctx_) : urQueueRelease(queues_[order[k]]);
    if (order[k] == queues_.size())
      ctx_ = nullptr;
    else
      queues_[order[k]] = nullptr;
    if (!expect(r, UR_RESULT_SUCCESS, order[k] == queues_.size() ? "urContextRelease" : "urQueueRelease")) return false;
  }
  queues_.clear();
  a.blocks.clear();
  if (!deleted_) return true;
  ++totals_.deleter_checks;
  // The last release destroys the context.
  if (deletions_after_last_release(*deleted_) != 1) {
    std::ostringstream os;
    os << "the context's extended deleter ran " << deleted_->load() << " times after the last release (queues and "
       << "context released with " << totals_.left_live.load() << " blocks left live over the run so far; "
       << (leave_live ? "this program left default- and host-pool blocks live, reused ones among them)"
                      : "this program freed every block)");
    return fail(os.str());
  }
  return true;
}

// Best effort after a failure: nothing may hang, and as little as possible leaks.
void LifetimeProgram::teardown_after_failure() {
  if (!ctx_) return; // released already: what is left is the context's (or leaks with it)
  for (ur_queue_handle_t q : queues_)
    if (q) urQueueFinish(q);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto &kv : live_) urUSMFree(ctx_, reinterpret_cast<void *>(kv.first));
    live_.clear();
  }
  for (Pool &p : pools_)
    if (p.alive) {
      if (p.exp)
        urUSMPoolDestroyExp(ctx_, dev_.device, p.h);
      else
        urUSMPoolRelease(p.h);
      p.alive = false;
    }
  for (Backing &bk : backings_)
    if (!bk.freed) urUSMFree(ctx_, bk.ptr);
  for (ur_queue_handle_t q : queues_)
    if (q) urQueueRelease(q);
  queues_.clear();
  if (ctx_) urContextRelease(ctx_);
  ctx_ = nullptr;
}

bool LifetimeProgram::run() {
  Actor main;
  main.rng.seed(rng_());
  main.queue = 0;
  bool ok = setup();
  const size_t target = 10 + rng_() % 16;
  for (size_t i = 0; ok && i < target; ++i) {
    ok = step(main);
    if (ok && !failed_) ok = check_fixed_stats("operation #" + std::to_string(calls_.load()));
  }
  if (ok && !failed_) ok = end_program(main);
  if (!ok || failed_) {
    teardown_after_failure();
    return false;
  }
  return true;
}

} // namespace

bool run_lifetime_program(const urinfo::FoundDevice &dev, uint64_t seed, LifetimeTotals &totals, std::string &failure,
                          size_t &calls) {
  LifetimeProgram program(dev, seed, totals);
  const bool ok = program.run();
  ++totals.programs;
  totals.calls += program.calls();
  calls = program.calls();
  if (!ok) failure = program.failure();
  return ok;
}

std::string describe(const LifetimeTotals &t) {
  std::ostringstream os;
  os << t.programs.load() << " lifetime programs, " << t.calls.load() << " operations (" << t.churns.load()
     << " pool churns, " << t.pools_destroyed.load() << " pools destroyed, " << t.fixed_made.load() << " of "
     << t.fixed_tried.load() << " fixed pools made, " << t.backing_refused.load()
     << " frees of a pool's memory refused, " << t.registered.load() << " registrations, " << t.limit_checks.load()
     << " full pools, " << t.offset_frees.load() << " frees of inner pointers, " << t.left_live.load()
     << " blocks left live at teardown, " << t.deleter_checks.load() << " deleter checks)";
  return os.str();
}

} // namespace conf::async
