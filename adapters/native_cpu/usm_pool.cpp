// USM pools on the ordered pool core: the core's backend hooks, the pool object,
// the pools of a context, and pool memory as the USM entry points see it
// (urUSM*Alloc with a pool, urUSMFree, urUSMGetMemAllocInfo).
#include "usm_pool.hpp"

#include <cstdlib>
#include <cstring>

#include "context.hpp"
#include "event.hpp"
#include "logging.hpp"
#include "platform.hpp"
#include "queue.hpp"

namespace nc {

using ordo::pool::status;

// ---- the core's backend ----

namespace {
// Chunks start on a page: big ones are mapped memory, and blocks never straddle
// another allocation's cache lines.
constexpr size_t kChunkAlign = 4096;
// Commands a rule-1 search follows from a free before giving up (is_ordered_before).
constexpr size_t kOrderSearchVisits = 32;
} // namespace

void *PoolBackend::get_chunk(std::size_t size) {
  void *p = nullptr;
  if (posix_memalign(&p, kChunkAlign, size) != 0 || !p) return nullptr;
  try {
    pool_.context.pools->add_range(p, size, &pool_);
  } catch (...) {
    std::free(p);
    return nullptr;
  }
  return p;
}

// The core returns only chunks holding no live or pending block: nothing uses them.
void PoolBackend::put_chunk(void *base, std::size_t) {
  pool_.context.pools->remove_range(base);
  std::free(base);
}

bool PoolBackend::event_complete(ordo::pool::event_handle ev) { return static_cast<Event *>(ev)->terminal(); }

bool PoolBackend::add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) {
  auto *alloc = static_cast<AllocCommand *>(cmd);
  if (!alloc || !alloc->builder) return false; // urUSM*Alloc cannot wait for anything
  auto *e = static_cast<Event *>(ev);
  if (e->terminal()) return true; // the free has run: nothing to wait for
  try {
    alloc->builder->add_dependency(*e);
  } catch (...) {
    return false;
  }
  return true;
}

void PoolBackend::retain_event(ordo::pool::event_handle ev) { static_cast<Event *>(ev)->add_ref(); }

// May delete the event (and its queue, if it held the last reference); never its
// context: every caller of a pool function holds the context through a handle.
void PoolBackend::release_event(ordo::pool::event_handle ev) { static_cast<Event *>(ev)->drop_ref(); }

bool PoolBackend::is_ordered_before(ordo::pool::command_context cmd, ordo::pool::event_handle ev) {
  auto *alloc = static_cast<AllocCommand *>(cmd);
  if (!alloc || !alloc->queue) return false;
  // The alloc waits for its wait list, and for its queue's newest command (in
  // order) or newest barrier (out of order); the caller holds the queue's mutex.
  const Event *targets[1];
  size_t n = 0;
  if (Event *q = alloc->queue->in_order ? alloc->queue->last : alloc->queue->last_barrier) targets[n++] = q;
  Event &freed = *static_cast<Event *>(ev);
  if (n && graph::reaches(freed, targets, n, kOrderSearchVisits)) return true;
  if (alloc->num_waits == 0) return false;
  auto waits = reinterpret_cast<const Event *const *>(alloc->waits);
  return graph::reaches(freed, waits, alloc->num_waits, kOrderSearchVisits);
}

// ---- the pool ----

namespace {
ur_usm_type_t primary_kind_of(PoolScope scope, const PoolSettings &s) {
  if (s.user_memory) return s.user_kind;
  return scope == PoolScope::Host ? UR_USM_TYPE_HOST : UR_USM_TYPE_DEVICE;
}
} // namespace

Pool::Pool(Context &ctx, PoolScope s, bool def, const PoolSettings &settings)
    : context(ctx), scope(s), is_default(def), flags(settings.flags), primary_kind(primary_kind_of(s, settings)),
      user_memory(settings.user_memory), user_size(settings.user_size), backend_(*this) {
  core_ = settings.user_memory
              ? std::make_unique<ordo::pool::ordered_pool>(backend_, settings.config, settings.user_memory,
                                                           settings.user_size)
              : std::make_unique<ordo::pool::ordered_pool>(backend_, settings.config);
  if (!is_default) context.add_ref(); // last: nothing after it can throw
}

Pool::~Pool() {
  core_.reset(); // returns every chunk (through the context) and every event
  if (!is_default) context.drop_ref();
}

void Pool::on_user_released() {
  destroyed.store(true, std::memory_order_release);
  context.pools->unset_current(*this);
  context.pools->reap_if_idle(*this);
}

bool Pool::serves(ur_usm_type_t kind) const {
  if (user_memory) return kind == primary_kind;
  switch (scope) {
  case PoolScope::Device: return kind == UR_USM_TYPE_DEVICE || kind == UR_USM_TYPE_SHARED;
  case PoolScope::Host: return kind == UR_USM_TYPE_HOST;
  case PoolScope::Context: return kind == UR_USM_TYPE_HOST || kind == UR_USM_TYPE_DEVICE || kind == UR_USM_TYPE_SHARED;
  }
  return false;
}

ur_result_t Pool::to_ur(status s, ur_usm_type_t kind) {
  switch (s) {
  case status::success: return UR_RESULT_SUCCESS;
  case status::out_of_memory:
    return kind == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  case status::invalid_size: return UR_RESULT_ERROR_INVALID_USM_SIZE;
  case status::invalid_alignment: return UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  case status::invalid_argument: return UR_RESULT_ERROR_INVALID_VALUE;
  case status::not_owned:
  case status::not_block_start:
  case status::double_free: return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  }
  return UR_RESULT_ERROR_UNKNOWN;
}

ur_usm_type_t Pool::kind_of(const void *base) const {
  if (other_kinds_count_.load(std::memory_order_acquire) == 0) return primary_kind;
  std::lock_guard<std::mutex> lock(kinds_mu_);
  auto it = other_kinds_.find(reinterpret_cast<uintptr_t>(base));
  return it == other_kinds_.end() ? primary_kind : it->second;
}

void Pool::set_kind(const void *base, ur_usm_type_t kind) {
  if (kind == primary_kind) return;
  std::lock_guard<std::mutex> lock(kinds_mu_);
  other_kinds_[reinterpret_cast<uintptr_t>(base)] = kind;
  other_kinds_count_.store(other_kinds_.size(), std::memory_order_release);
}

void Pool::clear_kind(const void *base) {
  if (other_kinds_count_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(kinds_mu_);
  other_kinds_.erase(reinterpret_cast<uintptr_t>(base));
  other_kinds_count_.store(other_kinds_.size(), std::memory_order_release);
}

// ---- the pools of a context ----

ContextPools::~ContextPools() { shutdown(); }

void ContextPools::shutdown() {
  std::vector<Pool *> owned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    owned.swap(all_);
    default_ = nullptr;
    host_ = nullptr;
    current_ = nullptr;
    any_.store(false, std::memory_order_release);
  }
  for (Pool *p : owned) {
    if (p->is_default) registry().remove(p); // the context's own handles end with it
    p->drop_ref();
  }
}

// A default pool's user count (1) belongs to the context, its internal reference to
// the list; both end in shutdown().
Pool *ContextPools::make_default(PoolScope scope) {
  auto owned = std::make_unique<Pool>(ctx_, scope, /*is_default=*/true, PoolSettings{});
  all_.reserve(all_.size() + 1);
  registry().add(owned.get(), Kind::Pool);
  Pool *p = owned.release();
  all_.push_back(p);
  any_.store(true, std::memory_order_release);
  return p;
}

Pool &ContextPools::default_pool() {
  if (Pool *p = default_.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(mu_);
  if (!default_.load(std::memory_order_relaxed)) default_.store(make_default(PoolScope::Device), std::memory_order_release);
  return *default_.load(std::memory_order_relaxed);
}

Pool &ContextPools::host_pool() {
  if (Pool *p = host_.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(mu_);
  if (!host_.load(std::memory_order_relaxed)) host_.store(make_default(PoolScope::Host), std::memory_order_release);
  return *host_.load(std::memory_order_relaxed);
}

// The common case, no pool set by the user, takes no lock. A pool the user set may
// be destroyed by another thread meanwhile, so it is taken with a reference.
Pool &ContextPools::current_pool(Ref<Pool> &hold) {
  if (!current_.load(std::memory_order_acquire)) return default_pool();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Pool *p = current_.load(std::memory_order_relaxed)) {
      hold = Ref<Pool>(p);
      return *p;
    }
  }
  return default_pool();
}

void ContextPools::set_current(Pool &p) {
  std::lock_guard<std::mutex> lock(mu_);
  current_.store(&p == default_.load(std::memory_order_relaxed) ? nullptr : &p, std::memory_order_release);
}

void ContextPools::unset_current(Pool &p) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_.load(std::memory_order_relaxed) == &p) current_.store(nullptr, std::memory_order_release);
}

void ContextPools::add(Pool &p) {
  std::lock_guard<std::mutex> lock(mu_);
  all_.push_back(&p);
  p.add_ref();
  any_.store(true, std::memory_order_release);
}

Ref<Pool> ContextPools::pool_at(const void *ptr) const {
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  std::shared_lock<std::shared_mutex> lock(ranges_mu_);
  auto it = ranges_.upper_bound(addr);
  if (it == ranges_.begin()) return Ref<Pool>();
  --it;
  if (addr - it->first >= it->second.first) return Ref<Pool>();
  // Ranges leave the map before their pool can go, so the pool is alive here.
  return Ref<Pool>(it->second.second);
}

void ContextPools::add_range(const void *base, size_t size, Pool *p) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  ranges_[reinterpret_cast<uintptr_t>(base)] = {size, p};
}

void ContextPools::remove_range(const void *base) {
  std::unique_lock<std::shared_mutex> lock(ranges_mu_);
  ranges_.erase(reinterpret_cast<uintptr_t>(base));
}

void ContextPools::sync_point() {
  std::vector<Pool *> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Pool *p : all_) {
      p->core().release_above_threshold();
      if (p->destroyed.load(std::memory_order_acquire) && p->core().live_allocations() == 0 &&
          p->core().pending_blocks() == 0)
        idle.push_back(p);
    }
  }
  reap_list(idle);
}

void ContextPools::queue_released(Queue &q) {
  std::vector<Pool *> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Pool *p : all_) {
      p->core().collect();
      p->core().forget_queue(&q);
      if (p->destroyed.load(std::memory_order_acquire) && p->core().live_allocations() == 0 &&
          p->core().pending_blocks() == 0)
        idle.push_back(p);
    }
  }
  reap_list(idle);
}

void ContextPools::collect_all() {
  if (!any()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (Pool *p : all_) p->core().collect();
}

void ContextPools::reap_if_idle(Pool &p) {
  if (!p.destroyed.load(std::memory_order_acquire) || p.core().live_allocations() != 0) return;
  p.core().collect();
  if (p.core().pending_blocks() != 0) return; // a later synchronisation point reaps it
  std::vector<Pool *> idle{&p};
  reap_list(idle);
}

// Gives each idle destroyed pool's memory back, then drops the list's reference
// (outside the lock: the last reference may take the context with it).
void ContextPools::reap_list(std::vector<Pool *> &idle) {
  std::vector<Pool *> reaped;
  for (Pool *p : idle) {
    if (p->reaped.exchange(true, std::memory_order_acq_rel)) continue; // another thread has it
    p->core().trim_to(0);
    if (p->user_memory) remove_range(p->user_memory);
    reaped.push_back(p);
  }
  if (reaped.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Pool *p : reaped)
      for (size_t i = 0; i < all_.size(); ++i)
        if (all_[i] == p) {
          all_[i] = all_.back();
          all_.pop_back();
          break;
        }
  }
  for (Pool *p : reaped) p->drop_ref();
}

void pools_sync_point(Context &ctx) {
  if (ctx.pools->any()) ctx.pools->sync_point();
}

void pools_queue_released(Context &ctx, Queue &q) {
  if (ctx.pools->any()) ctx.pools->queue_released(q);
}

// ---- pool memory outside any queue ----

ur_result_t pool_alloc_now(Context &ctx, ur_usm_pool_handle_t hPool, ur_usm_type_t kind, size_t size, size_t align,
                           void **ppMem) {
  Pool *pool = lookup<Pool>(hPool);
  if (!pool) return Pool::invalid_handle(hPool);
  if (&pool->context != &ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!pool->serves(kind)) return UR_RESULT_ERROR_INVALID_VALUE;
  ordo::pool::alloc_request req;
  req.size = size;
  req.alignment = align;
  ordo::pool::alloc_result res;
  if (ur_result_t r = Pool::to_ur(pool->core().alloc(req, res), kind)) return r;
  try {
    pool->set_kind(res.ptr, kind);
  } catch (...) {
    pool->core().free_now(res.ptr);
    throw;
  }
  if (res.needs_zero) std::memset(res.ptr, 0, size);
  *ppMem = res.ptr;
  return UR_RESULT_SUCCESS;
}

bool pool_free_now(Context &ctx, void *ptr, ur_result_t &result) {
  if (!ctx.pools->any()) return false;
  Ref<Pool> pool = ctx.pools->pool_at(ptr);
  if (!pool) return false;
  ordo::pool::block_info info;
  // Not a live block start: maybe the plain allocation a fixed pool was carved from.
  if (!pool->core().lookup(ptr, info) || info.base != ptr) return false;
  pool->clear_kind(ptr);
  status s = pool->core().free_now(ptr);
  result = Pool::to_ur(s, UR_USM_TYPE_UNKNOWN);
  if (s == status::success) ctx.pools->reap_if_idle(*pool);
  return true;
}

bool pool_block_info(Context &ctx, const void *ptr, PoolBlockInfo &out) {
  if (!ctx.pools->any()) return false;
  Ref<Pool> pool = ctx.pools->pool_at(ptr);
  if (!pool) return false;
  ordo::pool::block_info info;
  if (!pool->core().lookup(ptr, info)) return false;
  out.base = info.base;
  out.size = info.size;
  out.kind = pool->kind_of(info.base);
  out.pool = to_handle(pool.get());
  return true;
}

} // namespace nc
