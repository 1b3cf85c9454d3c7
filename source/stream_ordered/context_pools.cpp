// SPDX-License-Identifier: Apache-2.0
// The layer state of one context: its default, current and host pools, every pool
// made in it, the pointer registry (pool chunks and plain USM), stream-ordered
// commands and synchronous USM on pool memory (docs/async-alloc.md).
#include <algorithm>
#include <cstring>

#include "ordo/checked_math.hpp"
#include "pool_core.hpp"

namespace ordo::stream_ordered {

using ordo::pool::status;

namespace {
// Versions of every context's range map come from one counter, so a context made at a
// freed one's address never matches a thread's remembered answer for the old one.
std::atomic<uint64_t> g_ranges_version{1};
uint64_t next_ranges_version() { return g_ranges_version.fetch_add(1, std::memory_order_relaxed); }
} // namespace

context_pools::context_pools(context_hooks &hooks) : hooks_(hooks), ranges_version_(next_ranges_version()) {}

void context_pools::ranges_changed() { ranges_version_.store(next_ranges_version(), std::memory_order_release); }

context_pools::~context_pools() { shutdown(); }

// The context goes: user pools are gone already (each held the context), so only
// the default and host pools are left; their handles end with the context.
void context_pools::shutdown() {
  std::vector<pool *> owned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    owned.swap(all_);
    defaults_.clear();
    fast_count_.store(0, std::memory_order_release);
    current_.clear();
    current_count_.store(0, std::memory_order_release);
    any_.store(false, std::memory_order_release);
  }
  for (pool *p : owned) {
    if (p->is_default()) p->handle()->ref_count.store(0, std::memory_order_release);
    p->drop_ref();                      // the list's
    if (p->is_default()) p->drop_ref(); // the context's user count
  }
  // Registrations the user never undid: the pages stay the caller's, unpinned.
  std::map<uintptr_t, range> registered;
  {
    std::unique_lock<std::shared_mutex> lock(ranges_mu_);
    registered.swap(registered_);
  }
  for (auto &kv : registered) hooks_.unpin_host(reinterpret_cast<void *>(kv.first), kv.second.size);
}

// ---- pools of the context ------------------------------------------------------------

pool *context_pools::make_default(ur_device_handle_t d, bool host) {
  all_.reserve(all_.size() + 1);
  auto made = std::make_unique<pool>(*this, host ? pool_scope::host : pool_scope::device, d, true, pool_settings{});
  defaults_[host ? nullptr : d] = made.get();
  const size_t i = fast_count_.load(std::memory_order_relaxed);
  if (i < kFastDefaults) {
    fast_[i].device.store(host ? nullptr : d, std::memory_order_relaxed);
    fast_[i].p.store(made.get(), std::memory_order_relaxed);
    fast_count_.store(i + 1, std::memory_order_release);
  }
  made->add_ref(); // the list's, beside the context's user count
  all_.push_back(made.get());
  any_.store(true, std::memory_order_release);
  return made.release();
}

pool *context_pools::find_default(ur_device_handle_t d) const {
  const size_t n = fast_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i)
    if (fast_[i].device.load(std::memory_order_relaxed) == d) return fast_[i].p.load(std::memory_order_relaxed);
  return nullptr;
}

// Default and host pools live as long as the context: borrowed, found without a lock.
ur_result_t context_pools::default_pool(ur_device_handle_t d, pool_ref &out) { return context_default(d, false, out); }
ur_result_t context_pools::host_pool(pool_ref &out) { return context_default(nullptr, true, out); }

ur_result_t context_pools::context_default(ur_device_handle_t d, bool host, pool_ref &out) {
  if (pool *p = find_default(d)) {
    out = pool_ref::borrowed(p);
    return UR_RESULT_SUCCESS;
  }
  try {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = defaults_.find(d);
    out = pool_ref::borrowed(it != defaults_.end() ? it->second : make_default(d, host));
  } catch (...) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return UR_RESULT_SUCCESS;
}

// A pool the user set may be destroyed by another thread meanwhile: taken with a
// reference under the lock.
ur_result_t context_pools::current_pool(ur_device_handle_t d, pool_ref &out) {
  if (current_count_.load(std::memory_order_acquire) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = current_.find(d);
    if (it != current_.end()) {
      out = pool_ref(it->second);
      return UR_RESULT_SUCCESS;
    }
  }
  return default_pool(d, out);
}

ur_result_t context_pools::set_current(ur_device_handle_t d, pool &p) {
  std::lock_guard<std::mutex> lock(mu_);
  // Destroyed by another thread since the caller took it: it cannot become current again
  // (user_released() took it out of current_ under this lock, or will after this).
  if (p.destroyed()) return UR_RESULT_ERROR_INVALID_VALUE;
  auto def = defaults_.find(d);
  if (def != defaults_.end() && def->second == &p)
    current_.erase(d);
  else
    current_[d] = &p;
  current_count_.store(current_.size(), std::memory_order_release);
  return UR_RESULT_SUCCESS;
}

void context_pools::add_user_pool(pool &p) {
  std::lock_guard<std::mutex> lock(mu_);
  all_.push_back(&p);
  p.add_ref();
  any_.store(true, std::memory_order_release);
}

void context_pools::user_released(pool &p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = current_.begin(); it != current_.end();) it = it->second == &p ? current_.erase(it) : std::next(it);
    current_count_.store(current_.size(), std::memory_order_release);
  }
  reap_if_idle(p);
}

void context_pools::reap_if_idle(pool &p) {
  if (!p.destroyed() || p.live_allocations() != 0) return;
  p.collect();
  if (!p.close_if_idle()) return; // pending frees: a later synchronisation point reaps it
  std::vector<pool *> idle{&p};
  reap_list(idle);
}

// Gives each idle destroyed pool's memory back, then drops the list's reference
// (outside the lock: the last reference may take the context with it).
void context_pools::reap_list(std::vector<pool *> &idle) {
  std::vector<pool *> reaped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (pool *p : idle) {
      auto it = std::find(all_.begin(), all_.end(), p);
      if (it == all_.end() || p->reaped.exchange(true, std::memory_order_acq_rel)) continue;
      *it = all_.back();
      all_.pop_back();
      reaped.push_back(p);
    }
  }
  for (pool *p : reaped) {
    p->trim_to(0);
    p->drop_ref();
  }
}

// Each pool collects completed frees (and, at a synchronisation point, gives back
// memory above its threshold); destroyed pools with nothing left in use go.
// The pools are listed (referenced) under the lock and visited outside it, so a
// synchronisation point never holds up the context's other pool calls while it
// walks every pool.
void context_pools::sweep(bool release) {
  if (!any_pools()) return;
  std::vector<pool_ref> listed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listed.reserve(all_.size());
    for (pool *p : all_) listed.emplace_back(p); // listed pools are alive here
  }
  std::vector<pool *> idle;
  for (pool_ref &p : listed) {
    if (release)
      p->release_above_threshold();
    else
      p->collect();
    if (p->destroyed() && p->close_if_idle()) idle.push_back(p.get());
  }
  reap_list(idle);
}

// The lane goes: beside its ordering state, the blocks its frees left in the pools'
// lane caches go back to their cores (pending on their releases), so that no slot
// waits for an alloc on a queue that will never come (docs/async-alloc.md, "The lane cache").
void context_pools::queue_released(const void *queue) {
  order_.forget_queue(queue);
  if (!any_pools()) return;
  std::vector<pool_ref> listed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listed.reserve(all_.size());
    for (pool *p : all_) listed.emplace_back(p);
  }
  for (pool_ref &p : listed) p->drop_lane(queue);
}

void context_pools::user_released_context() {
  sweep(false);
  if (!any_pools()) return;
  std::vector<pool_ref> listed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (pool *p : all_) listed.emplace_back(p);
  }
  for (pool_ref &p : listed) p->forget_taken_over();
}

// ---- the pointer registry ----------------------------------------------------------

void context_pools::add_range(const void *base, size_t size, pool *p, void *core) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  range r;
  r.size = size;
  r.owner = p;
  r.core = core;
  ranges_[reinterpret_cast<uintptr_t>(base)] = r;
  ranges_changed();
}

void context_pools::remove_range(const void *base) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  ranges_.erase(reinterpret_cast<uintptr_t>(base));
  ranges_changed();
}

namespace {
template <class Map> auto containing(Map &m, uintptr_t addr) -> decltype(m.end()) {
  auto it = m.upper_bound(addr);
  if (it == m.begin()) return m.end();
  --it;
  return addr - it->first < it->second.size ? it : m.end();
}
} // namespace

namespace {
// A thread's last answer of ref_at() for a default pool's chunk: a queue's frees mostly
// land in the chunk of the last one. A default pool lives as long as its context, and
// its chunk's range is in the map while `version` is the map's version.
struct ranges_hit {
  const void *registry = nullptr;
  uint64_t version = 0;
  uintptr_t lo = 0, size = 0;
  pool *owner = nullptr;
  void *core = nullptr;
};
thread_local ranges_hit t_last_hit;
} // namespace

pool_ref context_pools::ref_at(const void *p, void **core) const {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  ranges_hit &hit = t_last_hit;
  if (hit.registry == this && hit.version == ranges_version_.load(std::memory_order_acquire) &&
      addr - hit.lo < hit.size) {
    *core = hit.core;
    return pool_ref::borrowed(hit.owner);
  }
  std::shared_lock<std::shared_mutex> lock(ranges_mu_);
  auto it = containing(ranges_, addr);
  if (it == ranges_.end()) return pool_ref();
  // Ranges leave the map in the pool's destructor, so the object is alive here; but its
  // last reference may be going (a reaped pool): then it holds no block anyway.
  pool *owner = it->second.owner;
  if (owner->is_default()) {
    *core = it->second.core;
    hit = ranges_hit{this,           ranges_version_.load(std::memory_order_relaxed), it->first, it->second.size, owner,
                     it->second.core};
    return pool_ref::borrowed(owner);
  }
  if (!owner->try_add_ref()) return pool_ref();
  *core = it->second.core;
  return pool_ref::adopt(owner);
}

void context_pools::add_plain(void *base, size_t size, ur_usm_type_t kind, ur_device_handle_t device) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  range r;
  r.size = size;
  r.kind = kind;
  r.device = device;
  plain_[reinterpret_cast<uintptr_t>(base)] = r;
}

namespace {
// The quarantine of freed plain allocations (docs/async-alloc.md, "Freed memory"): the
// newest frees of a context, up to this many and this many bytes; a larger allocation
// goes back at once.
constexpr size_t kQuarantineCount = 64;
constexpr size_t kQuarantineBytes = size_t(16) << 20;

} // namespace

bool context_pools::retire_plain(const void *base, block_facts &out, std::vector<block_facts> &release) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  auto it = plain_.find(reinterpret_cast<uintptr_t>(base));
  if (it == plain_.end() || it->second.freed || it->second.fixed_pools) return false;
  out = facts_of(it->first, it->second);
  const size_t size = it->second.size;
  if (size > kQuarantineBytes) {
    release.push_back(out); // may throw: nothing changed yet
    plain_.erase(it);
    return true;
  }
  // The oldest entries that make room leave; room for them is made before anything changes.
  size_t leaving = 0, count = quarantine_.size() + 1, bytes = quarantine_bytes_ + size;
  for (; count > kQuarantineCount || bytes > kQuarantineBytes; ++leaving, --count) bytes -= quarantine_[leaving].size;
  release.reserve(release.size() + leaving); // may throw
  quarantine_.push_back({it->first, size});  // may throw
  it->second.freed = true;
  quarantine_bytes_ = bytes;
  for (; leaving > 0; --leaving) {
    auto oldest = plain_.find(quarantine_.front().base);
    quarantine_.pop_front();
    release.push_back(facts_of(oldest->first, oldest->second));
    plain_.erase(oldest);
  }
  return true;
}

void context_pools::give_back(const std::vector<block_facts> &release) {
  for (const block_facts &f : release) hooks_.free_plain(f.base, f.kind, f.device);
}

bool context_pools::empty_quarantine(uint64_t epoch) {
  std::vector<block_facts> release;
  {
    std::unique_lock<std::shared_mutex> lock(ranges_mu_);
    try {
      release.reserve(quarantine_.size()); // nothing changed yet
    } catch (const std::bad_alloc &) {
      return false;
    }
    for (const quarantined &q : quarantine_) {
      auto it = plain_.find(q.base);
      release.push_back(facts_of(it->first, it->second));
      plain_.erase(it);
    }
    quarantine_.clear();
    quarantine_bytes_ = 0;
    // Counted before the registry's lock goes, so that a caller finding the quarantine
    // empty after this sees the give-back under way.
    if (!release.empty()) {
      std::lock_guard<std::mutex> counting(emptying_mu_);
      ++emptying_;
    }
  }
  if (!release.empty()) {
    give_back(release);
    {
      std::lock_guard<std::mutex> counting(emptying_mu_);
      --emptying_;
      emptied_.fetch_add(1, std::memory_order_release);
    }
    emptying_done_.notify_all();
    return true;
  }
  // Another thread may have taken what this caller failed for: its memory counts once
  // it is back.
  std::unique_lock<std::mutex> counting(emptying_mu_);
  emptying_done_.wait(counting, [&] { return emptying_ == 0; });
  return emptied_.load(std::memory_order_acquire) != epoch;
}

bool context_pools::take_plain(const void *base, block_facts *out) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  auto it = plain_.find(reinterpret_cast<uintptr_t>(base));
  if (it == plain_.end() || it->second.freed) return false;
  if (it->second.fixed_pools) return false; // a live fixed pool is carved from it
  if (out) *out = facts_of(it->first, it->second);
  plain_.erase(it);
  return true;
}

bool context_pools::find_plain(const void *p, block_facts &out) const {
  std::shared_lock<std::shared_mutex> lock(ranges_mu_);
  auto it = containing(plain_, reinterpret_cast<uintptr_t>(p));
  if (it != plain_.end() && it->second.freed) return false;
  if (it == plain_.end()) {
    it = containing(registered_, reinterpret_cast<uintptr_t>(p));
    if (it == registered_.end()) return false;
  }
  out = facts_of(it->first, it->second);
  return true;
}

ur_result_t context_pools::check_usm_region(const void *p, size_t bytes) {
  if (!ordo::checked::fits_address_space(p, bytes)) return UR_RESULT_ERROR_INVALID_SIZE;
  block_facts a;
  if (!block_info(p, a) && !find_plain(p, a)) {
    // Memory the context holds but no live allocation covers: freed (a use after free).
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    std::shared_lock<std::shared_mutex> lock(ranges_mu_);
    const auto in_plain = containing(plain_, addr);
    const bool freed = in_plain != plain_.end() ? in_plain->second.freed : containing(ranges_, addr) != ranges_.end();
    return freed ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_SUCCESS;
  }
  const size_t offset = size_t(static_cast<const char *>(p) - static_cast<const char *>(a.base));
  return bytes <= a.size - offset ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_SIZE;
}

namespace {
// Whether any range of `m` shares a byte with [lo, hi).
template <class Map> bool overlaps(const Map &m, uintptr_t lo, uintptr_t hi) {
  auto next = m.lower_bound(lo);
  if (next != m.end() && next->first < hi) return true;
  return next != m.begin() && std::prev(next)->first + std::prev(next)->second.size > lo;
}
} // namespace

ur_result_t context_pools::register_host(void *p, size_t size, bool read_only) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + size;
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  if (overlaps(plain_, lo, hi) || overlaps(ranges_, lo, hi) || overlaps(registered_, lo, hi))
    return UR_RESULT_ERROR_INVALID_VALUE;
  range r;
  r.size = size;
  r.kind = UR_USM_TYPE_HOST;
  auto slot = registered_.emplace(lo, r).first; // may throw: nothing pinned yet
  if (ur_result_t err = hooks_.pin_host(p, size, read_only)) {
    registered_.erase(slot);
    return err;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t context_pools::unregister_host(void *p) {
  size_t size = 0;
  {
    std::unique_lock<std::shared_mutex> lock(ranges_mu_);
    auto it = registered_.find(reinterpret_cast<uintptr_t>(p));
    if (it == registered_.end()) return UR_RESULT_ERROR_INVALID_VALUE;
    size = it->second.size;
    registered_.erase(it);
  }
  hooks_.unpin_host(p, size);
  return UR_RESULT_SUCCESS;
}

ur_result_t context_pools::claim_user_memory(const void *base, size_t size, ur_usm_type_t kind, pool *p, void *core) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(base);
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  auto in = containing(plain_, lo); // registered host memory is not USM of the context
  if (in == plain_.end() || in->second.freed || in->second.kind != kind) return UR_RESULT_ERROR_INVALID_VALUE;
  if (size > in->second.size - (lo - in->first)) return UR_RESULT_ERROR_INVALID_VALUE;
  if (overlaps(ranges_, lo, lo + size)) return UR_RESULT_ERROR_INVALID_VALUE; // another pool's
  range r;
  r.size = size;
  r.owner = p;
  r.core = core;
  ranges_.emplace(lo, r); // may throw: nothing changed yet
  ranges_changed();
  ++in->second.fixed_pools;
  return UR_RESULT_SUCCESS;
}

void context_pools::unclaim_user_memory(const void *base) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(base);
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  ranges_.erase(lo);
  ranges_changed();
  auto in = containing(plain_, lo);
  if (in != plain_.end() && in->second.fixed_pools) --in->second.fixed_pools;
}

std::vector<context_pools::block_facts> context_pools::plain_allocations() const {
  std::shared_lock<std::shared_mutex> lock(ranges_mu_);
  std::vector<block_facts> all;
  all.reserve(plain_.size());
  for (auto &kv : plain_) all.push_back(facts_of(kv.first, kv.second));
  return all;
}

// ---- stream-ordered commands --------------------------------------------------------

ur_result_t context_pools::resolve(ur_usm_pool_handle_t named, ur_usm_type_t kind, ur_device_handle_t device,
                                   pool_ref &out) {
  if (!named) {
    ur_result_t r = kind == UR_USM_TYPE_HOST ? host_pool(out) : current_pool(device, out);
    out.via_current = true;
    return r;
  }
  if (ur_result_t r = acquire(named, out)) return r;
  if (&out->context() != this) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return out->serves(kind, device);
}

ur_result_t context_pools::alloc_in_command(pool_ref &p, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                                            const alloc_command &cmd, allocation &out) {
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  mem_class cls;
  if (ur_result_t r = hooks_.memory_class(kind, kind == UR_USM_TYPE_HOST ? nullptr : device, cls)) return r;
  // The current pool was destroyed and closed after resolve() took it: it is no longer
  // current, so the alloc goes where pPool == NULL points now (a named pool: refused).
  while (p->closed() && p.via_current)
    if (ur_result_t r = resolve(nullptr, kind, device, p)) return r;
  ur_result_t err = UR_RESULT_SUCCESS;
  pool::core *c = p->core_for(cls, err);
  if (!c) return p->closed() && p.via_current ? alloc_in_command(p, kind, device, size, cmd, out) : err;
  ordo::pool::alloc_request req;
  req.size = size;
  req.queue = cmd.queue;
  req.in_order = cmd.in_order;
  req.wait_list = reinterpret_cast<const ordo::pool::event_handle *>(cmd.waits);
  req.wait_count = cmd.num_waits;
  req.command = const_cast<alloc_command *>(&cmd);
  ordo::pool::alloc_result &res = out.result; // set by a successful alloc
  ordo::pool::status st = c->op->alloc(req, res);
  if (st == status::out_of_memory && p->release_idle_except(c, (size + 63) / 64 * 64))
    st = c->op->alloc(req, res); // room made
  if (st == status::closed && p.via_current) return alloc_in_command(p, kind, device, size, cmd, out);
  if (st != status::success) return to_result(st, kind); // success needs no table (the hot path)
  try {
    p->set_kind(res.ptr, kind, hooks_.primary_kind(cls));
  } catch (...) {
    c->op->cancel(res);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  out.ptr = res.ptr;
  out.needs_zero = res.needs_zero;
  out.size = size;
  out.kind = kind;
  out.core = c;
  return UR_RESULT_SUCCESS;
}

void context_pools::cancel(pool_ref &p, const allocation &a) {
  auto *c = static_cast<pool::core *>(a.core);
  p->clear_kind(a.ptr);
  c->op->cancel(a.result);
}

ur_result_t context_pools::find_owner(ur_usm_pool_handle_t named, void *ptr, pool_ref &owner) {
  if (named) { // a destroyed pool's blocks are freed naming no pool
    pool_ref np;
    if (ur_result_t r = acquire(named, np)) return r;
    if (&np->context() != this) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  void *core = nullptr;
  owner = ref_at(ptr, &core);
  if (!owner) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (named && owner->handle() != named) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  owner.core_hint = core;
  return UR_RESULT_SUCCESS;
}

ur_result_t context_pools::check_free(ur_usm_pool_handle_t named, void *ptr, pool_ref &owner) {
  if (ur_result_t r = find_owner(named, ptr, owner)) return r;
  ordo::pool::block_info info;
  if (!static_cast<pool::core *>(owner.core_hint)->op->lookup(ptr, info) || info.base != ptr)
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}

ur_result_t context_pools::free_in_command(pool_ref &owner, void *ptr, ur_event_handle_t release, const void *queue,
                                           bool in_order, size_t *block_size) {
  void *core = owner.core_hint; // found by check_free; the core checks the block again
  if (!core) {
    pool_ref again = ref_at(ptr, &core);
    if (again.get() != owner.get()) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  }
  auto *c = static_cast<pool::core *>(core);
  owner->clear_kind(ptr);
  size_t bytes = 0;
  const status s = c->op->free(ptr, ordo::pool::release_info{release, queue, in_order}, bytes);
  if (s == status::success && block_size) *block_size = bytes;
  if (s != status::success) return to_result(s, UR_USM_TYPE_HOST); // out of host memory only (bookkeeping)
  if (owner->destroyed()) reap_if_idle(*owner);                    // its last allocation
  return UR_RESULT_SUCCESS;
}

ur_result_t context_pools::free_unused(ur_usm_pool_handle_t named, void *ptr) {
  return check_and_free(named, ptr, nullptr, nullptr, false);
}

ur_result_t context_pools::check_and_free(ur_usm_pool_handle_t named, void *ptr, ur_event_handle_t release,
                                          const void *queue, bool in_order) {
  const ordo::pool::release_info rel{release, queue, in_order};
  if (!named) {
    // Most blocks are the default pools': ask their live tables first (O(1)), before
    // the registry's lookup among every chunk of the context. A default pool lives as
    // long as the context; a pointer starts a live block of one pool at most, so its
    // kind entry (if any) can only be that pool's.
    const size_t n = fast_count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
      pool *p = fast_[i].p.load(std::memory_order_relaxed);
      p->clear_kind(ptr);
      const status s = p->free_if_live(ptr, rel);
      if (s != status::not_owned) return to_result(s, UR_USM_TYPE_HOST);
    }
  }
  if (named) {
    pool_ref np;
    if (ur_result_t r = acquire(named, np)) return r;
    if (&np->context() != this) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  void *core = nullptr;
  pool_ref owner = ref_at(ptr, &core);
  if (!owner || (named && owner->handle() != named)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  // Before the block can be anyone else's (as free_in_command). The core refuses
  // anything but the start of a live block (not_owned, not_block_start, double_free:
  // all INVALID_MEM_OBJECT) and changes nothing then; only a live block's start has
  // a kind entry.
  owner->clear_kind(ptr);
  const status s = static_cast<pool::core *>(core)->op->free(ptr, rel);
  if (s != status::success) return to_result(s, UR_USM_TYPE_HOST); // out of host memory only (bookkeeping)
  if (owner->destroyed()) reap_if_idle(*owner);                    // its last allocation
  return UR_RESULT_SUCCESS;
}

// ---- synchronous USM on pool memory ------------------------------------------------

ur_result_t context_pools::alloc_now(ur_usm_pool_handle_t hPool, ur_usm_type_t kind, ur_device_handle_t device,
                                     size_t size, size_t align, void **out) {
  pool_ref p;
  if (ur_result_t r = acquire(hPool, p)) return r;
  if (&p->context() != this) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (ur_result_t r = p->serves(kind, device)) return r;
  mem_class cls;
  if (ur_result_t r = hooks_.memory_class(kind, kind == UR_USM_TYPE_HOST ? nullptr : device, cls)) return r;
  ur_result_t err = UR_RESULT_SUCCESS;
  pool::core *c = p->core_for(cls, err);
  if (!c) return err;
  ordo::pool::alloc_request req;
  req.size = size;
  req.alignment = align;
  ordo::pool::alloc_result res{};
  ordo::pool::status st = c->op->alloc(req, res);
  if (st == status::out_of_memory && p->release_idle_except(c, (size + 63) / 64 * 64))
    st = c->op->alloc(req, res); // room made
  if (ur_result_t r = to_result(st, kind)) return r;
  ur_result_t r = UR_RESULT_SUCCESS;
  try {
    p->set_kind(res.ptr, kind, hooks_.primary_kind(cls));
  } catch (...) {
    r = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  if (!r && res.needs_zero) r = hooks_.zero_now(kind, device, res.ptr, size);
  if (r) {
    p->clear_kind(res.ptr);
    c->op->cancel(res);
    return r;
  }
  *out = res.ptr;
  return UR_RESULT_SUCCESS;
}

bool context_pools::free_now(void *ptr, ur_result_t &result) {
  if (!any_pools()) return false;
  void *core = nullptr;
  pool_ref owner = ref_at(ptr, &core);
  if (!owner) return false;
  auto *c = static_cast<pool::core *>(core);
  ordo::pool::block_info info;
  // Not a live block start: maybe the plain allocation a fixed pool was carved from.
  if (!c->op->lookup(ptr, info) || info.base != ptr) return false;
  owner->clear_kind(ptr);
  const status s = c->op->free_now(ptr);
  result = to_result(s, UR_USM_TYPE_HOST); // a free runs out of host memory only (bookkeeping)
  if (s == status::success) reap_if_idle(*owner);
  return true;
}

bool context_pools::block_info(const void *ptr, block_facts &out) {
  if (!any_pools()) return false;
  void *core = nullptr;
  pool_ref owner = ref_at(ptr, &core);
  if (!owner) return false;
  auto *c = static_cast<pool::core *>(core);
  ordo::pool::block_info info;
  if (!c->op->lookup(ptr, info)) return false;
  // The block's rounding past the size asked for is not part of the allocation.
  if (static_cast<const char *>(ptr) - static_cast<const char *>(info.base) >= static_cast<ptrdiff_t>(info.size))
    return false;
  out.base = info.base;
  out.size = info.size;
  out.kind = owner->kind_of(info.base, hooks_.primary_kind(c->cls));
  out.device = out.kind == UR_USM_TYPE_HOST ? nullptr : c->cls.device;
  out.pool = owner->handle();
  return true;
}

} // namespace ordo::stream_ordered
