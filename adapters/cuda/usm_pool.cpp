// USM pools. Default pools run on CUDA's native memory pools (the fast path);
// pools the user creates run on Ordo's ordered pool core (ordered_core.hpp), which
// keeps exact limits and statistics.
//
// A default pool borrows one native pool per kind of memory and device: device memory from cuMemPoolCreate / the device's default
// pool, pinned host memory from a CU_MEM_LOCATION_TYPE_HOST pool, shared memory
// from a CU_MEM_ALLOCATION_TYPE_MANAGED pool (CUDA 13). Each native pool gets the
// UR pool's maximum size and release threshold, reuse policies set explicitly,
// and access for the other devices of the context.
#include <algorithm>
#include <cstring>
#include <limits>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordered_core.hpp"

namespace ordo::cuda {

namespace {

// Sets the threshold and the reuse rules. A pool that refuses one is still
// usable (with the driver's default for it), so that is logged, not fatal.
//
// Reuse follows DESIGN.md §3: a freed block serves an allocation ordered after
// the free (event dependencies) or once the free has completed (opportunistic).
// Making an allocation wait for someone else's pending free (an internal
// dependency) is kept for the last resort, when the pool would otherwise fail:
// pool_alloc() turns it on for that one retry. Left on, the driver prefers it to
// growing, which chains the streams of an out-of-order queue together.
void configure(CUmemoryPool pool, uint64_t threshold, const char *what) {
  Driver &cu = drv();
  if (CUresult r = cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold))
    ORDO_LOG(logger(), warning, "%s pool: release threshold not set: %s", what, error_text(r).c_str());
  int on = 1, off = 0;
  struct Rule {
    CUmemPool_attribute attr;
    int *value;
  };
  for (Rule rule : {Rule{CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &on},
                    Rule{CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &on},
                    Rule{CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &off}})
    if (CUresult r = cu.cuMemPoolSetAttribute(pool, rule.attr, rule.value))
      ORDO_LOG(logger(), warning, "%s pool: reuse attribute %d not set: %s", what, int(rule.attr),
               error_text(r).c_str());
}

// Gives `readers` read-write access to memory that lives on `home` (or on the host
// when `home` is null). A device's access to its own pool cannot be set.
CUresult grant_access(CUmemoryPool pool, Device *home, const std::vector<Device *> &readers) {
  for (Device *d : readers) {
    if (d == home) continue;
    if (home) {
      int can = 0;
      drv().cuDeviceCanAccessPeer(&can, d->cu, home->cu);
      if (!can) continue;
    }
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = d->ordinal;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (CUresult r = drv().cuMemPoolSetAccess(pool, &desc, 1)) return r;
  }
  return CUDA_SUCCESS;
}

// A statistic of a core pool: the sum over its cores (exact, from the core).
size_t core_stat(Pool *p, CUmemPool_attribute attr) {
  size_t total = 0;
  for (CorePool *c : p->cores()) {
    ordo::pool::pool_stats st = c->pool().stats();
    switch (attr) {
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: total += st.reserved_current; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: total += st.reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: total += st.used_current; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: total += st.used_high; break;
    default: break;
    }
  }
  return total;
}

// A statistic of a pool: exact from the core for user pools; from the driver for
// default pools (in its reservation granularity, docs/cuda.md).
size_t pool_stat(Pool *p, CUmemPool_attribute attr) {
  if (p->on_core) return core_stat(p, attr);
  size_t total = 0;
  for (CUmemoryPool n : p->natives()) {
    cuuint64_t v = 0;
    if (drv().cuMemPoolGetAttribute(n, attr, &v) == CUDA_SUCCESS) total += static_cast<size_t>(v);
  }
  return total;
}

Pool *make_default_pool(Context *ctx, Device *dev) {
  auto *p = new Pool();
  p->ctx = ctx;
  p->dev = dev;
  p->is_default = true;
  p->host_only = dev == nullptr; // the context's host pool
  p->stream_ordered = true;
  // Keep what was allocated across synchronisation; urUSMPoolTrimToExp gives it back.
  p->threshold = std::numeric_limits<uint64_t>::max();
  p->init_slots(ctx->devices.size());
  return p;
}

} // namespace

CUmemoryPool Pool::make_native(MemKind kind, Device *d, ur_result_t *err) {
  Driver &cu = drv();
  CUmemoryPool pool = nullptr;
  CUmemLocation loc{};
  loc.type = kind == MemKind::host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = kind == MemKind::host ? 0 : d->ordinal;
  CUmemAllocationType type =
      kind == MemKind::shared ? CU_MEM_ALLOCATION_TYPE_MANAGED : CU_MEM_ALLOCATION_TYPE_PINNED;
  if (kind == MemKind::host && !d->facts.host_memory_pools) {
    *err = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return nullptr;
  }
  CUresult r = d->make_current();
  if (r == CUDA_SUCCESS) {
    if (is_default) {
      r = kind == MemKind::device ? cu.cuDeviceGetDefaultMemPool(&pool, d->cu)
                                  : cu.cuMemGetDefaultMemPool(&pool, &loc, type);
    } else {
      CUmemPoolProps props{};
      props.allocType = type;
      props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
      props.location = loc;
      props.maxSize = max_size;
      r = cu.cuMemPoolCreate(&pool, &props);
      if (r == CUDA_SUCCESS) owned_.push_back(pool);
    }
  }
  const char *what = kind == MemKind::host ? "pinned-host" : kind == MemKind::shared ? "managed" : "device";
  if (r == CUDA_SUCCESS) configure(pool, threshold, what);
  if (r == CUDA_SUCCESS && kind != MemKind::shared)
    r = grant_access(pool, kind == MemKind::host ? nullptr : d, ctx->devices);
  if (r != CUDA_SUCCESS) {
    ORDO_LOG(logger(), warning, "no native %s pool on device %d: %s", what, d->ordinal, error_text(r).c_str());
    *err = r == CUDA_ERROR_NOT_SUPPORTED ? UR_RESULT_ERROR_UNSUPPORTED_FEATURE : map_error(r);
    return nullptr;
  }
  return pool;
}

CUmemoryPool Pool::native(MemKind kind, int dev_index, ur_result_t *err) {
  std::atomic<CUmemoryPool> &slot = kind == MemKind::host     ? host_pool_
                                    : kind == MemKind::shared ? shared_pools_[dev_index]
                                                              : device_pools_[dev_index];
  if (CUmemoryPool p = slot.load(std::memory_order_acquire)) return p; // the common case
  std::lock_guard<std::mutex> lock(mutex_);
  CUmemoryPool p = slot.load(std::memory_order_acquire);
  if (!p) {
    p = make_native(kind, ctx->devices[kind == MemKind::host ? 0 : dev_index], err);
    slot.store(p, std::memory_order_release);
  }
  return p;
}

std::vector<CUmemoryPool> Pool::natives() {
  std::vector<CUmemoryPool> all;
  for (auto &p : device_pools_)
    if (CUmemoryPool n = p.load()) all.push_back(n);
  for (auto &p : shared_pools_)
    if (CUmemoryPool n = p.load()) all.push_back(n);
  if (CUmemoryPool n = host_pool_.load()) all.push_back(n);
  return all;
}

CorePool *Pool::core(MemKind kind, int dev_index, ur_result_t *err) {
  if (user_memory) {
    // A fixed pool serves its one kind (and device) of memory from one core, made
    // with the pool (it lives in the host slot).
    bool fits = kind == user_kind && (kind == MemKind::host || !user_device ||
                                      ctx->devices[dev_index] == user_device);
    if (!fits) {
      *err = UR_RESULT_ERROR_INVALID_VALUE;
      return nullptr;
    }
    if (CorePool *c = host_core_.load(std::memory_order_acquire)) return c;
    std::lock_guard<std::mutex> lock(mutex_);
    CorePool *c = host_core_.load(std::memory_order_acquire);
    if (!c) {
      ordo::pool::pool_config cfg;
      cfg.max_size = user_size;
      cfg.release_threshold = static_cast<size_t>(threshold);
      cfg.zero_init = (flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK) != 0;
      c = new CorePool(ctx, user_kind, user_device, cfg, user_memory, user_size);
      core_register(ctx, c);
      host_core_.store(c, std::memory_order_release);
    }
    return c;
  }
  std::atomic<CorePool *> &slot = kind == MemKind::host     ? host_core_
                                  : kind == MemKind::shared ? shared_cores_[dev_index]
                                                            : device_cores_[dev_index];
  if (CorePool *c = slot.load(std::memory_order_acquire)) return c;
  std::lock_guard<std::mutex> lock(mutex_);
  CorePool *c = slot.load(std::memory_order_acquire);
  if (!c) {
    std::lock_guard<std::mutex> threshold_lock(retry_mutex); // against a threshold change
    ordo::pool::pool_config cfg;
    cfg.max_size = max_size;
    cfg.release_threshold = static_cast<size_t>(threshold);
    cfg.zero_init = (flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK) != 0;
    c = new CorePool(ctx, kind, kind == MemKind::host ? nullptr : ctx->devices[dev_index], cfg);
    core_register(ctx, c);
    slot.store(c, std::memory_order_release);
  }
  return c;
}

std::vector<CorePool *> Pool::cores() {
  std::vector<CorePool *> all;
  for (auto &c : device_cores_)
    if (CorePool *k = c.load()) all.push_back(k);
  for (auto &c : shared_cores_)
    if (CorePool *k = c.load()) all.push_back(k);
  if (CorePool *k = host_core_.load()) all.push_back(k);
  return all;
}

void pool_hold(Pool *p) { p->life.hold(); }

void pool_drop(Pool *p) {
  if (!p->life.drop()) return;
  // cuMemPoolDestroy defers the release of blocks whose frees are still pending.
  for (CUmemoryPool n : p->owned_) drv().cuMemPoolDestroy(n);
  for (CorePool *c : p->cores()) {
    core_unregister(p->ctx, c);
    delete c;
  }
  Context *ctx = p->is_default ? nullptr : p->ctx;
  p->tag = Tag::dead;
  delete p;
  if (ctx) context_drop(ctx);
}

void pool_release_user(Pool *p) {
  p->destroyed.store(true);
  {
    std::lock_guard<std::mutex> lock(p->ctx->pools_mutex);
    for (auto &current : p->ctx->current_pools) {
      Pool *expected = p; // the device falls back to its default pool
      current.compare_exchange_strong(expected, nullptr);
    }
  }
  pool_drop(p);
}

ur_result_t pool_create(Context *ctx, Device *dev, const ur_usm_pool_desc_t *desc,
                        bool stream_ordered, Pool **out) {
  if (desc->flags & UR_USM_POOL_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (dev && ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  size_t max_size = 0;
  uint64_t threshold = 0;
  const ur_usm_pool_buffer_desc_t *buffer = nullptr;
  for (auto *ext = static_cast<const ur_base_desc_t *>(desc->pNext); ext;
       ext = static_cast<const ur_base_desc_t *>(ext->pNext)) {
    if (ext->stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC) {
      auto *limits = reinterpret_cast<const ur_usm_pool_limits_desc_t *>(ext);
      max_size = limits->maxPoolableSize;
      threshold = limits->minDriverAllocSize;
    } else if (ext->stype == UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC) {
      buffer = reinterpret_cast<const ur_usm_pool_buffer_desc_t *>(ext);
    }
  }
  if (max_size && threshold > max_size) return UR_RESULT_ERROR_INVALID_VALUE;
  MemKind user_kind = MemKind::device;
  Device *user_device = nullptr;
  if (buffer) {
    if (!buffer->pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (buffer->size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    switch (buffer->memType) {
    case UR_USM_TYPE_HOST: user_kind = MemKind::host; break;
    case UR_USM_TYPE_DEVICE: user_kind = MemKind::device; break;
    case UR_USM_TYPE_SHARED: user_kind = MemKind::shared; break;
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
    user_device = reinterpret_cast<Device *>(buffer->device);
    if (user_device && ctx->index_of(user_device) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (dev && user_device && user_device != dev) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (user_kind != MemKind::host && !user_device) user_device = dev;
    max_size = buffer->size; // a fixed pool never grows
    if (threshold > max_size) threshold = max_size;
  }
  auto *p = new Pool();
  p->ctx = ctx;
  p->dev = dev;
  p->stream_ordered = stream_ordered;
  p->on_core = true;
  p->flags = desc->flags;
  p->max_size = max_size;
  p->threshold = threshold;
  p->init_slots(ctx->devices.size());
  if (buffer) {
    p->user_memory = buffer->pMem;
    p->user_size = buffer->size;
    p->user_kind = user_kind;
    p->user_device = user_device;
    ur_result_t err = UR_RESULT_SUCCESS;
    p->core(user_kind, user_device ? ctx->index_of(user_device) : 0, &err); // made now
  }
  context_hold(ctx);
  *out = p;
  return UR_RESULT_SUCCESS;
}

namespace {
// Returns the pool in `slot`, making a default pool there first if it is empty.
Pool *default_in(Context *ctx, Device *dev, std::atomic<Pool *> &slot) {
  if (Pool *p = slot.load(std::memory_order_acquire)) return p;
  std::lock_guard<std::mutex> lock(ctx->pools_mutex);
  Pool *p = slot.load(std::memory_order_acquire);
  if (!p) {
    p = make_default_pool(ctx, dev);
    slot.store(p, std::memory_order_release);
  }
  return p;
}
} // namespace

ur_result_t pool_for_default(Context *ctx, Device *dev, MemKind kind, Pool **out) {
  if (kind == MemKind::host) {
    *out = default_in(ctx, nullptr, ctx->host_pool);
    return UR_RESULT_SUCCESS;
  }
  int i = ctx->index_of(dev);
  if (i < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  Pool *current = ctx->current_pools[i].load(std::memory_order_acquire);
  *out = current ? current : default_in(ctx, dev, ctx->default_pools[i]);
  return UR_RESULT_SUCCESS;
}

namespace {

// An allocation from a core pool: the core picks the block under its ordering
// rules; dependencies it adds become waits of the command's stream.
ur_result_t core_alloc(Pool *pool, MemKind kind, int index, size_t size, const AllocOrder &order,
                       void **out) {
  ur_result_t err = UR_RESULT_SUCCESS;
  CorePool *core = pool->core(kind, index, &err);
  if (!core) return err;
  CoreCommand cmd{order.stream};
  ordo::pool::alloc_request req;
  req.size = size;
  req.alignment = order.alignment;
  req.queue = order.queue_id;
  req.in_order = order.queue_id != nullptr; // a CUDA stream runs its commands in order
  req.wait_list = reinterpret_cast<const ordo::pool::event_handle *>(order.waits);
  req.wait_count = order.wait_count;
  req.command = order.stream ? &cmd : nullptr;
  ordo::pool::alloc_result got;
  if (ur_result_t r = core_result(core->pool().alloc(req, got), kind)) return r;
  if (got.needs_zero) {
    if (CUresult z = drv().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(got.ptr), 0, size, order.stream)) {
      core->pool().free_now(got.ptr);
      return map_error(z);
    }
  }
  *out = got.ptr;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t pool_alloc(Pool *pool, MemKind kind, Device *dev, size_t size, const AllocOrder &order,
                       bool async, void **out) {
  Context *ctx = pool->ctx;
  int index = kind == MemKind::host ? 0 : ctx->index_of(dev);
  if (index < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  // A pool of one kind of memory refuses the others.
  if (pool->host_only != (kind == MemKind::host) && (pool->host_only || pool->dev))
    return UR_RESULT_ERROR_INVALID_VALUE;
  CUstream stream = order.stream;
  CUdeviceptr p = 0;
  if (pool->on_core) {
    void *ptr = nullptr;
    if (ur_result_t r = core_alloc(pool, kind, index, size, order, &ptr)) return r;
    p = reinterpret_cast<CUdeviceptr>(ptr);
  } else {
    ur_result_t err = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    CUmemoryPool native = pool->native(kind, index, &err);
    if (!native) return err;
    CUresult r = drv().cuMemAllocFromPoolAsync(&p, size, native, stream);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      // Rather than fail, let this allocation wait for frees still pending elsewhere.
      std::lock_guard<std::mutex> lock(pool->retry_mutex);
      int on = 1, off = 0;
      if (drv().cuMemPoolSetAttribute(native, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &on) ==
          CUDA_SUCCESS) {
        r = drv().cuMemAllocFromPoolAsync(&p, size, native, stream);
        drv().cuMemPoolSetAttribute(native, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &off);
      }
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return kind == MemKind::host ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                   : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    ORDO_CU(r);
    if (pool->flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK) {
      if (CUresult z = drv().cuMemsetD8Async(p, 0, size, stream)) {
        drv().cuMemFreeAsync(p, stream);
        return map_error(z);
      }
    }
  }
  pool_hold(pool);
  ctx->allocs.insert(reinterpret_cast<void *>(p),
                     {pool, size, kind, kind == MemKind::host ? nullptr : dev, async});
  *out = reinterpret_cast<void *>(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t pool_free(Context *ctx, const AllocRecord &rec, void *ptr, CUstream stream, Event *release,
                      const void *queue_id) {
  if (rec.pool->on_core) {
    ur_result_t err = UR_RESULT_SUCCESS;
    int index = rec.kind == MemKind::host ? 0 : ctx->index_of(rec.device);
    CorePool *core = rec.pool->core(rec.kind, index < 0 ? 0 : index, &err);
    if (!core) {
      ctx->allocs.insert(ptr, rec);
      return err;
    }
    ordo::pool::release_info rel;
    rel.event = release;
    rel.queue = release ? queue_id : nullptr;
    rel.in_order = release && queue_id;
    if (ur_result_t r = core_result(core->pool().free(ptr, rel), rec.kind)) {
      ctx->allocs.insert(ptr, rec);
      return r;
    }
  } else if (CUresult r = drv().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), stream)) {
    ctx->allocs.insert(ptr, rec);
    return map_error(r);
  }
  pool_drop(rec.pool);
  return UR_RESULT_SUCCESS;
}

// ---- entry points ------------------------------------------------------------------

namespace {

// The checks every pool entry point that names a context and a device shares.
ur_result_t check_pool_owner(Context *ctx, Device *dev, Pool *p) {
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (p && p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (p && p->dev && p->dev != dev) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (p && p->destroyed.load()) return UR_RESULT_ERROR_INVALID_VALUE;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t UR_APICALL urUSMPoolCreateExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                          ur_usm_pool_desc_t *pPoolDesc, ur_usm_pool_handle_t *pPool) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (!pPoolDesc || !pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Pool *p = nullptr;
  if (ur_result_t r = pool_create(ctx, dev, pPoolDesc, true, &p)) return r;
  *pPool = reinterpret_cast<ur_usm_pool_handle_t>(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolDestroyExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                           ur_usm_pool_handle_t hPool) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  ORDO_UNWRAP(Pool, p, hPool);
  if (ur_result_t r = check_pool_owner(ctx, dev, p)) return r;
  if (p->is_default) return UR_RESULT_ERROR_INVALID_VALUE; // the context owns it
  // Live allocations keep the pool until they are freed (pool_drop then runs).
  p->ref_count.store(0);
  pool_release_user(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolGetDefaultDevicePoolExp(ur_context_handle_t hContext,
                                                        ur_device_handle_t hDevice,
                                                        ur_usm_pool_handle_t *pPool) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (!pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  int i = ctx->index_of(dev);
  if (i < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (!dev->facts.memory_pools) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  *pPool = reinterpret_cast<ur_usm_pool_handle_t>(default_in(ctx, dev, ctx->default_pools[i]));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolGetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName,
                                           void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Pool, p, hPool);
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  auto answer = [&](auto v) {
    if (pPropSizeRet) *pPropSizeRet = sizeof(v);
    if (pPropValue) std::memcpy(pPropValue, &v, sizeof(v));
    return UR_RESULT_SUCCESS;
  };
  switch (propName) {
  case UR_USM_POOL_INFO_REFERENCE_COUNT: return answer(p->count());
  case UR_USM_POOL_INFO_CONTEXT: return answer(reinterpret_cast<ur_context_handle_t>(p->ctx));
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP:
    return answer(static_cast<size_t>(std::min<uint64_t>(p->threshold, SIZE_MAX)));
  case UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP: {
    if (p->on_core) return answer(p->max_size); // 0: no limit
    Device *d = p->dev ? p->dev : p->ctx->devices[0];
    return answer(p->max_size ? p->max_size : d->facts.total_mem);
  }
  case UR_USM_POOL_INFO_RESERVED_CURRENT_EXP:
    return answer(pool_stat(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT));
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP: return answer(pool_stat(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH));
  case UR_USM_POOL_INFO_USED_CURRENT_EXP: return answer(pool_stat(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
  case UR_USM_POOL_INFO_USED_HIGH_EXP: return answer(pool_stat(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH));
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urUSMPoolSetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName,
                                           void *pPropValue, size_t propSize) {
  ORDO_UNWRAP(Pool, p, hPool);
  if (!pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  switch (propName) {
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP: {
    if (propSize != sizeof(size_t)) return UR_RESULT_ERROR_INVALID_SIZE;
    size_t value = 0;
    std::memcpy(&value, pPropValue, sizeof(value));
    if (p->max_size && value > p->max_size) return UR_RESULT_ERROR_INVALID_VALUE;
    if (p->on_core) {
      std::lock_guard<std::mutex> lock(p->retry_mutex); // cores made meanwhile read it
      for (CorePool *c : p->cores())
        if (ur_result_t r = core_result(c->pool().set_release_threshold(value), MemKind::device)) return r;
      p->threshold = value;
      return UR_RESULT_SUCCESS;
    }
    cuuint64_t threshold = value;
    for (CUmemoryPool n : p->natives())
      ORDO_CU(drv().cuMemPoolSetAttribute(n, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    p->threshold = value; // pools made later start with it too
    return UR_RESULT_SUCCESS;
  }
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP:
  case UR_USM_POOL_INFO_USED_HIGH_EXP: {
    if (propSize != sizeof(size_t)) return UR_RESULT_ERROR_INVALID_SIZE;
    size_t value = 0;
    std::memcpy(&value, pPropValue, sizeof(value));
    if (value != 0) return UR_RESULT_ERROR_INVALID_VALUE; // only a reset to 0 is possible
    if (p->on_core) {
      // The core resets a high-water mark to the current value.
      for (CorePool *c : p->cores()) {
        if (propName == UR_USM_POOL_INFO_RESERVED_HIGH_EXP)
          c->pool().reset_reserved_high();
        else
          c->pool().reset_used_high();
      }
      return UR_RESULT_SUCCESS;
    }
    cuuint64_t zero = 0;
    CUmemPool_attribute attr = propName == UR_USM_POOL_INFO_RESERVED_HIGH_EXP
                                   ? CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
                                   : CU_MEMPOOL_ATTR_USED_MEM_HIGH;
    for (CUmemoryPool n : p->natives()) ORDO_CU(drv().cuMemPoolSetAttribute(n, attr, &zero));
    return UR_RESULT_SUCCESS;
  }
  default:
    // Everything else is read-only (or not a pool property).
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urUSMPoolSetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                 ur_usm_pool_handle_t hPool) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  ORDO_UNWRAP(Pool, p, hPool);
  if (ur_result_t r = check_pool_owner(ctx, dev, p)) return r;
  std::lock_guard<std::mutex> lock(ctx->pools_mutex);
  int i = ctx->index_of(dev);
  ctx->current_pools[i].store(p == ctx->default_pools[i].load() ? nullptr : p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolGetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                 ur_usm_pool_handle_t *pPool) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (!pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!dev->facts.memory_pools) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  Pool *p = nullptr;
  if (ur_result_t r = pool_for_default(ctx, dev, MemKind::device, &p)) return r;
  *pPool = reinterpret_cast<ur_usm_pool_handle_t>(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolTrimToExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                          ur_usm_pool_handle_t hPool, size_t minBytesToKeep) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  ORDO_UNWRAP(Pool, p, hPool);
  if (ur_result_t r = check_pool_owner(ctx, dev, p)) return r;
  if (p->on_core) {
    // Only wholly free chunks go back: memory in use or pending never does.
    for (CorePool *c : p->cores()) c->pool().trim_to(minBytesToKeep);
    return UR_RESULT_SUCCESS;
  }
  ORDO_CU(dev->make_current());
  // The driver never releases memory in use, whatever minBytesToKeep says.
  for (CUmemoryPool n : p->natives()) ORDO_CU(drv().cuMemPoolTrimTo(n, minBytesToKeep));
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::cuda
