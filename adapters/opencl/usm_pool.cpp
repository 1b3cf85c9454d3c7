// urUSMPool*: pools on the ordered pool core, per-context default/current/host pools,
// and allocations from a pool outside any queue.
#include "usm_pool.hpp"

#include <algorithm>
#include <cstring>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "usm.hpp"

using Scope = ur_usm_pool_handle_t_::Scope;

namespace ordo::ocl {

// ---- the core's backend: SVM / Intel USM chunks and UR events ----

PoolCore::PoolCore(ur_context_handle_t c, ur_device_handle_t device, ur_usm_type_t chunk_kind,
                   const ordo::pool::pool_config &cfg, void *user_memory, size_t user_size)
    : context_(c), device_(device), chunk_kind_(chunk_kind) {
  pool_ = user_memory ? std::make_unique<ordo::pool::ordered_pool>(*this, cfg, user_memory, user_size)
                      : std::make_unique<ordo::pool::ordered_pool>(*this, cfg);
}

PoolCore::~PoolCore() { pool_.reset(); }

bool PoolCore::serves(ur_usm_type_t kind) const {
  if (kind == UR_USM_TYPE_HOST) return chunk_kind_ == UR_USM_TYPE_HOST;
  if (kind == UR_USM_TYPE_SHARED) return chunk_kind_ == UR_USM_TYPE_SHARED;
  return kind == UR_USM_TYPE_DEVICE && chunk_kind_ != UR_USM_TYPE_HOST;
}

void *PoolCore::get_chunk(std::size_t size) {
  ur_result_t err = UR_RESULT_SUCCESS;
  return usm_get_memory(context_, chunk_kind_, device_, size, 0, err);
}

// Only chunks with no live or pending block come back, so nothing uses them.
void PoolCore::put_chunk(void *base, std::size_t) { usm_release_memory(context_, base); }

bool PoolCore::event_complete(ordo::pool::event_handle ev) {
  return ordo::ocl::event_complete(static_cast<ur_event_handle_t>(ev));
}

bool PoolCore::add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) {
  if (!cmd) return false; // an allocation outside any queue cannot wait
  auto *deps = static_cast<CommandDeps *>(cmd);
  auto *e = static_cast<ur_event_handle_t>(ev);
  e->hold();
  deps->held.push_back(e);
  deps->waits->push(e->cl);
  return true;
}

void PoolCore::retain_event(ordo::pool::event_handle ev) { static_cast<ur_event_handle_t>(ev)->hold(); }

// Called under the pool's lock: the event may hold the last reference to its queue,
// whose destruction locks this pool again.
void PoolCore::release_event(ordo::pool::event_handle ev) {
  event_unhold_deferred(static_cast<ur_event_handle_t>(ev));
}

ur_result_t to_ur(ordo::pool::status s, ur_usm_type_t kind) {
  using ordo::pool::status;
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

namespace {

// Device memory classes take shared chunks where the device has shared USM, so one
// block can be device or shared memory; host classes take host chunks.
ur_usm_type_t chunk_kind_for(ur_context_handle_t c, ur_device_handle_t device) {
  if (!device) return usm_kind_supported(c, UR_USM_TYPE_HOST, nullptr) ? UR_USM_TYPE_HOST : UR_USM_TYPE_UNKNOWN;
  if (device->usm_shared_caps()) return UR_USM_TYPE_SHARED;
  return device->usm_device_caps() ? UR_USM_TYPE_DEVICE : UR_USM_TYPE_UNKNOWN;
}

} // namespace

} // namespace ordo::ocl

ordo::ocl::PoolCore *ur_usm_pool_handle_t_::core_for(ur_usm_type_t kind, ur_device_handle_t dev, ur_result_t &err) {
  using namespace ordo::ocl;
  ur_device_handle_t key = kind == UR_USM_TYPE_HOST ? nullptr : dev;
  PoolCore *core = nullptr;
  switch (scope) {
  case Scope::device:
    // A device pool serves its own device only.
    if (kind == UR_USM_TYPE_HOST) {
      err = UR_RESULT_ERROR_INVALID_VALUE;
      return nullptr;
    }
    if (key != device) {
      err = UR_RESULT_ERROR_INVALID_DEVICE;
      return nullptr;
    }
    core = only_core;
    break;
  case Scope::host:
    if (kind != UR_USM_TYPE_HOST) {
      err = UR_RESULT_ERROR_INVALID_VALUE;
      return nullptr;
    }
    core = only_core;
    break;
  case Scope::context: {
    std::lock_guard<std::mutex> lock(cores_mutex);
    auto it = cores.find(key);
    if (it != cores.end()) {
      core = it->second.get();
    } else if (!user_memory) {
      ur_usm_type_t chunk = chunk_kind_for(context, key);
      if (chunk == UR_USM_TYPE_UNKNOWN) {
        err = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
        return nullptr;
      }
      auto made = std::make_unique<PoolCore>(context, key, chunk, config);
      core = made.get();
      cores.emplace(key, std::move(made));
    }
    break;
  }
  }
  if (!core || !core->serves(kind)) {
    // Another kind than a fixed pool's memory; or shared memory where chunks are coarse-grain.
    err = user_memory || !core ? UR_RESULT_ERROR_INVALID_VALUE : UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return nullptr;
  }
  return core;
}

ur_usm_pool_handle_t_::~ur_usm_pool_handle_t_() {
  only_core = nullptr;
  cores.clear();
  tag = ordo::ocl::Tag::dead;
}

namespace ordo::ocl {

// ---- pool lifetime ----

namespace {

// The pool goes: wait for commands that may still touch its pending blocks, then
// hand every chunk back.
void destroy_pool(ur_usm_pool_handle_t p) {
  ur_context_handle_t c = p->context;
  c->pools->remove(p);
  context_wait_all_queues(c);
  bool owned_by_user = !p->is_default;
  delete p;
  reap_deferred_events();
  if (owned_by_user) context_unhold(c);
}

} // namespace

void pool_hold(ur_usm_pool_handle_t p) { p->hold(); }

void pool_unhold(ur_usm_pool_handle_t p) {
  if (p->unhold()) destroy_pool(p);
}

ur_result_t make_pool(ur_context_handle_t c, ur_device_handle_t device, Scope scope, const ur_usm_pool_desc_t *desc,
                      bool is_default, ur_usm_pool_handle_t *out) {
  auto p = std::make_unique<ur_usm_pool_handle_t_>();
  p->context = c;
  p->device = scope == Scope::device ? device : nullptr;
  p->scope = scope;
  p->is_default = is_default;
  if (desc) {
    if (desc->flags & UR_USM_POOL_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    p->flags = desc->flags;
    p->config.zero_init = desc->flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK;
    for (auto *ext = static_cast<const ur_base_desc_t *>(desc->pNext); ext;
         ext = static_cast<const ur_base_desc_t *>(ext->pNext)) {
      if (ext->stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC) {
        auto *limits = reinterpret_cast<const ur_usm_pool_limits_desc_t *>(ext);
        p->config.max_size = limits->maxPoolableSize;
        p->config.release_threshold = limits->minDriverAllocSize;
        if (p->config.max_size && p->config.release_threshold > p->config.max_size)
          return UR_RESULT_ERROR_INVALID_VALUE;
      } else if (ext->stype == UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC) {
        auto *buf = reinterpret_cast<const ur_usm_pool_buffer_desc_t *>(ext);
        if (!buf->pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
        if (buf->size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
        // The memory must be USM of this context, of the kind the pool is to serve.
        UsmAllocation a;
        if (!c->usm.find(buf->pMem, a) || a.pool || a.type != buf->memType ||
            static_cast<char *>(buf->pMem) + buf->size > static_cast<char *>(a.base) + a.size)
          return UR_RESULT_ERROR_INVALID_VALUE;
        p->user_memory = buf->pMem;
        p->user_size = buf->size;
        p->user_type = buf->memType;
        p->user_device = a.device;
      }
    }
  }
  // Device, host and fixed pools have their one core from the start.
  if (scope != Scope::context || p->user_memory) {
    ur_device_handle_t key = scope == Scope::host ? nullptr : p->device;
    ur_usm_type_t chunk = chunk_kind_for(c, key);
    if (p->user_memory) {
      key = p->user_type == UR_USM_TYPE_HOST ? nullptr : p->user_device;
      if (scope == Scope::device && key != p->device) return UR_RESULT_ERROR_INVALID_VALUE;
      if (scope == Scope::host && key) return UR_RESULT_ERROR_INVALID_VALUE;
      chunk = p->user_type;
    }
    if (chunk == UR_USM_TYPE_UNKNOWN) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    auto core = std::make_unique<PoolCore>(c, key, chunk, p->config, p->user_memory, p->user_size);
    p->only_core = core.get();
    p->cores.emplace(key, std::move(core));
  }
  if (!is_default) c->hold();
  c->pools->add(p.get());
  *out = p.release();
  return UR_RESULT_SUCCESS;
}

// ---- the context's pools ----

ContextPools::ContextPools(ur_context_handle_t c) : context_(c) {}

ContextPools::~ContextPools() {
  std::vector<ur_usm_pool_handle_t> owned;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &kv : defaults_) owned.push_back(kv.second);
    if (host_) owned.push_back(host_);
    defaults_.clear();
    current_.clear();
    host_ = nullptr;
    all_.clear();
  }
  for (ur_usm_pool_handle_t p : owned) delete p;
  reap_deferred_events();
}

// Makes the pool without our lock (make_pool registers it through add()); if another
// thread made one meanwhile, keeps that one.
ur_usm_pool_handle_t ContextPools::default_pool(ur_device_handle_t d, ur_result_t &err) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = defaults_.find(d);
    if (it != defaults_.end()) return it->second;
  }
  ur_usm_pool_handle_t made = nullptr;
  err = make_pool(context_, d, Scope::device, nullptr, true, &made);
  if (err) return nullptr;
  ur_usm_pool_handle_t winner = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    winner = defaults_.emplace(d, made).first->second;
    if (winner != made) all_.erase(std::remove(all_.begin(), all_.end(), made), all_.end());
  }
  if (winner != made) delete made;
  return winner;
}

ur_usm_pool_handle_t ContextPools::current_pool(ur_device_handle_t d, ur_result_t &err) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = current_.find(d);
    if (it != current_.end()) return it->second;
  }
  return default_pool(d, err);
}

void ContextPools::set_current(ur_device_handle_t d, ur_usm_pool_handle_t p) {
  std::lock_guard<std::mutex> lock(mutex_);
  current_[d] = p;
}

void ContextPools::unset_current(ur_usm_pool_handle_t p) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = current_.begin(); it != current_.end();) it = it->second == p ? current_.erase(it) : std::next(it);
}

ur_usm_pool_handle_t ContextPools::host_pool(ur_result_t &err) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (host_) return host_;
  }
  ur_usm_pool_handle_t made = nullptr;
  err = make_pool(context_, nullptr, Scope::host, nullptr, true, &made);
  if (err) return nullptr;
  ur_usm_pool_handle_t winner = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!host_) host_ = made;
    winner = host_;
    if (winner != made) all_.erase(std::remove(all_.begin(), all_.end(), made), all_.end());
  }
  if (winner != made) delete made;
  return winner;
}

void ContextPools::add(ur_usm_pool_handle_t p) {
  std::lock_guard<std::mutex> lock(mutex_);
  all_.push_back(p);
}

void ContextPools::remove(ur_usm_pool_handle_t p) {
  unset_current(p);
  std::lock_guard<std::mutex> lock(mutex_);
  all_.erase(std::remove(all_.begin(), all_.end(), p), all_.end());
}

void ContextPools::sync_point() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (ur_usm_pool_handle_t p : all_) p->for_each_core([](PoolCore &c) { c.pool().release_above_threshold(); });
  }
  reap_deferred_events();
}

void ContextPools::forget_queue(ur_queue_handle_t q) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (ur_usm_pool_handle_t p : all_) p->for_each_core([q](PoolCore &c) { c.pool().forget_queue(q); });
}

// ---- allocations outside any queue ----

ur_result_t pool_alloc_now(ur_context_handle_t c, ur_usm_pool_handle_t pool, ur_usm_type_t kind,
                           ur_device_handle_t device, size_t size, size_t alignment, void **out) {
  ORDO_CHECK_HANDLE(pool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  if (pool->context != c) return UR_RESULT_ERROR_INVALID_CONTEXT;
  ur_result_t err = UR_RESULT_SUCCESS;
  PoolCore *core = pool->core_for(kind, device, err);
  if (!core) return err;
  ordo::pool::alloc_request req;
  req.size = size;
  req.alignment = alignment;
  ordo::pool::alloc_result res;
  if (ur_result_t r = to_ur(core->pool().alloc(req, res), kind)) return r;
  if (res.needs_zero) {
    if (kind != UR_USM_TYPE_DEVICE) {
      std::memset(res.ptr, 0, size); // host-accessible memory
    } else {
      // Device memory: zero it through a short-lived queue of that device.
      cl_int e = CL_SUCCESS;
      cl_command_queue q = cl.clCreateCommandQueueWithProperties(c->cl, device->cl, nullptr, &e);
      unsigned char zero = 0;
      if (q) {
        e = c->intel_usm ? c->platform->intel_usm.fill(q, res.ptr, &zero, 1, size, 0, nullptr, nullptr)
                         : cl.clEnqueueSVMMemFill(q, res.ptr, &zero, 1, size, 0, nullptr, nullptr);
        if (e == CL_SUCCESS) e = cl.clFinish(q);
        cl.clReleaseCommandQueue(q);
      }
      if (e != CL_SUCCESS) {
        core->pool().free_now(res.ptr);
        return to_ur(e);
      }
    }
  }
  c->usm.insert(UsmAllocation{res.ptr, size, kind, kind == UR_USM_TYPE_HOST ? nullptr : device, pool, nullptr});
  pool_hold(pool);
  *out = res.ptr;
  return UR_RESULT_SUCCESS;
}

ur_result_t pool_free_now(ur_context_handle_t c, const UsmAllocation &a) {
  ur_result_t err = UR_RESULT_SUCCESS;
  PoolCore *core = a.pool->core_for(a.type, a.device, err);
  if (!core) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (!c->usm.erase(a.base)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT; // freed meanwhile
  ordo::pool::status s = core->pool().free_now(a.base);
  if (s != ordo::pool::status::success) {
    c->usm.insert(a);
    return to_ur(s, a.type);
  }
  pool_unhold(a.pool);
  return UR_RESULT_SUCCESS;
}

// ---- urUSMPool* entry points ----

namespace {

ur_result_t pool_info(ur_usm_pool_handle_t p, ur_usm_pool_info_t propName, InfoWriter &w) {
  ordo::pool::pool_stats total;
  size_t threshold = 0, max_size = 0;
  p->for_each_core([&](PoolCore &c) {
    ordo::pool::pool_stats s = c.pool().stats();
    total.reserved_current += s.reserved_current;
    total.reserved_high += s.reserved_high;
    total.used_current += s.used_current;
    total.used_high += s.used_high;
    threshold = c.pool().release_threshold();
    max_size = c.pool().max_size();
  });
  if (p->cores.empty()) {
    threshold = p->config.release_threshold;
    max_size = p->config.max_size;
  }
  switch (propName) {
  case UR_USM_POOL_INFO_REFERENCE_COUNT: return w.value<uint32_t>(p->count());
  case UR_USM_POOL_INFO_CONTEXT: return w.value(p->context);
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP: return w.value<size_t>(threshold);
  case UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP: return w.value<size_t>(max_size);
  case UR_USM_POOL_INFO_RESERVED_CURRENT_EXP: return w.value<size_t>(total.reserved_current);
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP: return w.value<size_t>(total.reserved_high);
  case UR_USM_POOL_INFO_USED_CURRENT_EXP: return w.value<size_t>(total.used_current);
  case UR_USM_POOL_INFO_USED_HIGH_EXP: return w.value<size_t>(total.used_high);
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

// Drops `n` user references (all of them when n is 0) of a pool the user made; the
// pool goes once no allocation from it is live either. False if none were left.
bool drop_user_refs(ur_usm_pool_handle_t p, uint32_t n) {
  uint32_t have = p->ref_count.load();
  uint32_t left = 0;
  do {
    if (have == 0) return false;
    left = n == 0 || n >= have ? 0 : have - n;
  } while (!p->ref_count.compare_exchange_weak(have, left));
  if (left == 0) {
    p->context->pools->unset_current(p);
    pool_unhold(p);
  }
  return true;
}

bool pools_supported(ur_context_handle_t c) {
  for (ur_device_handle_t d : c->devices)
    if (!d->async_alloc_supported()) return false;
  return true;
}

// The checks every (context, device[, pool]) entry point makes.
ur_result_t check_context_device(ur_context_handle_t c, ur_device_handle_t d) {
  ORDO_CHECK_HANDLE(c, context, UR_RESULT_ERROR_INVALID_CONTEXT);
  ORDO_CHECK_HANDLE(d, device, UR_RESULT_ERROR_INVALID_DEVICE);
  if (!c->has_device(d)) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (!d->async_alloc_supported()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  return UR_RESULT_SUCCESS;
}

ur_result_t check_device_pool(ur_context_handle_t c, ur_device_handle_t d, ur_usm_pool_handle_t p) {
  ORDO_CHECK_HANDLE(p, pool, UR_RESULT_ERROR_INVALID_VALUE);
  if (p->context != c) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (p->scope != Scope::device) return UR_RESULT_ERROR_INVALID_VALUE;
  if (p->device != d) return UR_RESULT_ERROR_INVALID_DEVICE;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMPoolCreate(ur_context_handle_t hContext, ur_usm_pool_desc_t *pPoolDesc,
                                     ur_usm_pool_handle_t *ppPool) {
  ORDO_CHECK_HANDLE(hContext, context, UR_RESULT_ERROR_INVALID_CONTEXT);
  ORDO_CHECK_PTR(pPoolDesc);
  ORDO_CHECK_PTR(ppPool);
  if (pPoolDesc->flags & UR_USM_POOL_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!pools_supported(hContext)) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  return make_pool(hContext, nullptr, Scope::context, pPoolDesc, false, ppPool);
}

ur_result_t UR_APICALL USMPoolRetain(ur_usm_pool_handle_t pPool) {
  ORDO_CHECK_HANDLE(pPool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  pPool->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMPoolRelease(ur_usm_pool_handle_t pPool) {
  ORDO_CHECK_HANDLE(pPool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  if (pPool->is_default) {
    // The context owns its default pools: the count never drops below its own reference.
    uint32_t n = pPool->ref_count.load();
    do {
      if (n <= 1) return UR_RESULT_SUCCESS;
    } while (!pPool->ref_count.compare_exchange_weak(n, n - 1));
    return UR_RESULT_SUCCESS;
  }
  return drop_user_refs(pPool, 1) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE;
}

ur_result_t UR_APICALL USMPoolGetInfo(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hPool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  return pool_info(hPool, propName, w);
}

ur_result_t UR_APICALL USMPoolCreateExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        ur_usm_pool_desc_t *pPoolDesc, ur_usm_pool_handle_t *pPool) {
  ORDO_CHECK_PTR(pPoolDesc);
  ORDO_CHECK_PTR(pPool);
  if (ur_result_t r = check_context_device(hContext, hDevice)) return r;
  if (pPoolDesc->flags & UR_USM_POOL_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return make_pool(hContext, hDevice, Scope::device, pPoolDesc, false, pPool);
}

// Destroys the user's pool; with allocations still live, when the last one is freed.
ur_result_t UR_APICALL USMPoolDestroyExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                         ur_usm_pool_handle_t hPool) {
  if (ur_result_t r = check_context_device(hContext, hDevice)) return r;
  if (ur_result_t r = check_device_pool(hContext, hDevice, hPool)) return r;
  if (hPool->is_default) return UR_RESULT_ERROR_INVALID_VALUE; // the context owns it
  return drop_user_refs(hPool, 0) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE; // 0: destroyed before
}

ur_result_t UR_APICALL USMPoolGetDefaultDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                      ur_usm_pool_handle_t *pPool) {
  ORDO_CHECK_PTR(pPool);
  if (ur_result_t r = check_context_device(hContext, hDevice)) return r;
  ur_result_t err = UR_RESULT_SUCCESS;
  ur_usm_pool_handle_t p = hContext->pools->default_pool(hDevice, err);
  if (!p) return err;
  *pPool = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMPoolGetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, void *pPropValue,
                                         size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hPool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // No size is passed: the caller's buffer is as large as the property's type.
  size_t size = propName == UR_USM_POOL_INFO_REFERENCE_COUNT ? sizeof(uint32_t)
                : propName == UR_USM_POOL_INFO_CONTEXT     ? sizeof(ur_context_handle_t)
                                                           : sizeof(size_t);
  InfoWriter w(size, pPropValue, pPropSizeRet);
  return pool_info(hPool, propName, w);
}

ur_result_t UR_APICALL USMPoolSetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, void *pPropValue,
                                         size_t propSize) {
  ORDO_CHECK_HANDLE(hPool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  ORDO_CHECK_PTR(pPropValue);
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (propSize != sizeof(size_t)) return UR_RESULT_ERROR_INVALID_SIZE;
  size_t value = *static_cast<size_t *>(pPropValue);
  switch (propName) {
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP: {
    if (hPool->config.max_size && value > hPool->config.max_size) return UR_RESULT_ERROR_INVALID_VALUE;
    {
      std::lock_guard<std::mutex> lock(hPool->cores_mutex);
      hPool->config.release_threshold = value; // for cores made later
    }
    ur_result_t r = UR_RESULT_SUCCESS;
    hPool->for_each_core([&](PoolCore &c) {
      if (c.pool().set_release_threshold(value) != ordo::pool::status::success) r = UR_RESULT_ERROR_INVALID_VALUE;
    });
    return r;
  }
  // Writing a high-water mark resets it to the current value.
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP:
    hPool->for_each_core([](PoolCore &c) { c.pool().reset_reserved_high(); });
    return UR_RESULT_SUCCESS;
  case UR_USM_POOL_INFO_USED_HIGH_EXP:
    hPool->for_each_core([](PoolCore &c) { c.pool().reset_used_high(); });
    return UR_RESULT_SUCCESS;
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION; // read-only properties (docs/async-alloc.md)
  }
}

ur_result_t UR_APICALL USMPoolSetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                               ur_usm_pool_handle_t hPool) {
  if (ur_result_t r = check_context_device(hContext, hDevice)) return r;
  if (ur_result_t r = check_device_pool(hContext, hDevice, hPool)) return r;
  hContext->pools->set_current(hDevice, hPool);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMPoolGetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                               ur_usm_pool_handle_t *pPool) {
  ORDO_CHECK_PTR(pPool);
  if (ur_result_t r = check_context_device(hContext, hDevice)) return r;
  ur_result_t err = UR_RESULT_SUCCESS;
  ur_usm_pool_handle_t p = hContext->pools->current_pool(hDevice, err);
  if (!p) return err;
  *pPool = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMPoolTrimToExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        ur_usm_pool_handle_t hPool, size_t minBytesToKeep) {
  if (ur_result_t r = check_context_device(hContext, hDevice)) return r;
  if (ur_result_t r = check_device_pool(hContext, hDevice, hPool)) return r;
  hPool->for_each_core([&](PoolCore &c) { c.pool().trim_to(minBytesToKeep); });
  reap_deferred_events();
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_usm_pool_table(ur_dditable_t &t) {
  t.USM.pfnPoolCreate = USMPoolCreate;
  t.USM.pfnPoolRetain = USMPoolRetain;
  t.USM.pfnPoolRelease = USMPoolRelease;
  t.USM.pfnPoolGetInfo = USMPoolGetInfo;
  t.USMExp.pfnPoolCreateExp = USMPoolCreateExp;
  t.USMExp.pfnPoolDestroyExp = USMPoolDestroyExp;
  t.USMExp.pfnPoolGetDefaultDevicePoolExp = USMPoolGetDefaultDevicePoolExp;
  t.USMExp.pfnPoolGetInfoExp = USMPoolGetInfoExp;
  t.USMExp.pfnPoolSetInfoExp = USMPoolSetInfoExp;
  t.USMExp.pfnPoolSetDevicePoolExp = USMPoolSetDevicePoolExp;
  t.USMExp.pfnPoolGetDevicePoolExp = USMPoolGetDevicePoolExp;
  t.USMExp.pfnPoolTrimToExp = USMPoolTrimToExp;
}

} // namespace ordo::ocl
