// Synchronous USM: cuMemAlloc / cuMemHostAlloc / cuMemAllocManaged, or a pool's
// native memory pool when one is given; frees; pointer queries; the core pool API.
#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::cuda {

// ---- AllocRegistry -----------------------------------------------------------------------

void AllocRegistry::insert(const void *ptr, const AllocRecord &rec) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  Shard &s = shard(p);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.map[p] = rec;
}

bool AllocRegistry::take(const void *ptr, AllocRecord *rec) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  Shard &s = shard(p);
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.map.find(p);
  if (it == s.map.end()) return false;
  *rec = it->second;
  s.map.erase(it);
  return true;
}

bool AllocRegistry::find(const void *ptr, AllocRecord *rec) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  Shard &s = shard(p);
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.map.find(p);
  if (it == s.map.end()) return false;
  *rec = it->second;
  return true;
}

namespace {

ur_result_t check_alloc_args(const ur_usm_desc_t *desc, size_t size, void **ppMem) {
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc && desc->align != 0 && (desc->align & (desc->align - 1)) != 0)
    return UR_RESULT_ERROR_INVALID_VALUE;
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  return UR_RESULT_SUCCESS;
}

// A synchronous allocation from a pool: stream-ordered on the device's internal
// stream, then waited for, so the memory is usable by anyone once this returns.
ur_result_t pooled_sync_alloc(Context *ctx, Pool *pool, MemKind kind, Device *dev, size_t size,
                              const ur_usm_desc_t *desc, void **ppMem) {
  if (pool->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (pool->dev && dev && pool->dev != dev) return UR_RESULT_ERROR_INVALID_DEVICE;
  Device *owner = dev ? dev : ctx->devices[0];
  CUstream stream = nullptr;
  ORDO_CU(owner->internal_stream(&stream));
  ORDO_CU(owner->make_current());
  AllocOrder order;
  order.stream = stream;
  order.alignment = desc && desc->align > 1 ? desc->align : 0;
  if (ur_result_t r = pool_alloc(pool, kind, dev, size, order, false, ppMem)) return r;
  ORDO_CU(drv().cuStreamSynchronize(stream));
  return UR_RESULT_SUCCESS;
}

// Plain driver allocations give 256-byte (device, managed) or page (host)
// alignment; a larger request is met only when the pointer happens to satisfy it.
ur_result_t check_alignment(const ur_usm_desc_t *desc, const void *p) {
  if (desc && desc->align > 1 && reinterpret_cast<uintptr_t>(p) % desc->align != 0)
    return UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  return UR_RESULT_SUCCESS;
}

// Looks up `ptr` (a base or interior pointer) among the context's allocations.
bool lookup(Context *ctx, const void *ptr, const void **base, AllocRecord *rec) {
  if (ctx->allocs.find(ptr, rec)) {
    *base = ptr;
    return true;
  }
  // A block of a user pool lies inside a larger chunk: the core knows its base.
  if (core_block_base(ctx, ptr, base)) return ctx->allocs.find(*base, rec);
  CUdeviceptr start = 0;
  if (drv().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS ||
      start == 0)
    return false;
  *base = reinterpret_cast<const void *>(start);
  return ctx->allocs.find(*base, rec);
}

} // namespace

ur_result_t UR_APICALL urUSMHostAlloc(ur_context_handle_t hContext, const ur_usm_desc_t *pUSMDesc,
                                      ur_usm_pool_handle_t pool, size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
  if (pool) {
    ORDO_UNWRAP(Pool, p, pool);
    return pooled_sync_alloc(ctx, p, MemKind::host, nullptr, size, pUSMDesc, ppMem);
  }
  // UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE bounds every kind of allocation.
  if (size > ctx->devices[0]->facts.total_mem) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  ORDO_CU(ctx->devices[0]->make_current());
  void *p = nullptr;
  CUresult r = drv().cuMemHostAlloc(&p, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  ORDO_CU(r);
  if (ur_result_t bad = check_alignment(pUSMDesc, p)) {
    drv().cuMemFreeHost(p);
    return bad;
  }
  ctx->allocs.insert(p, {nullptr, size, MemKind::host, nullptr, false});
  *ppMem = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMDeviceAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool,
                                        size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (pool) {
    ORDO_UNWRAP(Pool, p, pool);
    return pooled_sync_alloc(ctx, p, MemKind::device, dev, size, pUSMDesc, ppMem);
  }
  if (size > dev->facts.total_mem) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  ORDO_CU(dev->make_current());
  CUdeviceptr p = 0;
  ORDO_CU(drv().cuMemAlloc(&p, size));
  if (ur_result_t bad = check_alignment(pUSMDesc, reinterpret_cast<void *>(p))) {
    drv().cuMemFree(p);
    return bad;
  }
  ctx->allocs.insert(reinterpret_cast<void *>(p), {nullptr, size, MemKind::device, dev, false});
  *ppMem = reinterpret_cast<void *>(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMSharedAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool,
                                        size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (!dev->facts.managed) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (pool) {
    ORDO_UNWRAP(Pool, p, pool);
    return pooled_sync_alloc(ctx, p, MemKind::shared, dev, size, pUSMDesc, ppMem);
  }
  // Managed memory could oversubscribe; MAX_MEM_ALLOC_SIZE still bounds it.
  if (size > dev->facts.total_mem) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  ORDO_CU(dev->make_current());
  CUdeviceptr p = 0;
  ORDO_CU(drv().cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL));
  if (ur_result_t bad = check_alignment(pUSMDesc, reinterpret_cast<void *>(p))) {
    drv().cuMemFree(p);
    return bad;
  }
  ctx->allocs.insert(reinterpret_cast<void *>(p), {nullptr, size, MemKind::shared, dev, false});
  *ppMem = reinterpret_cast<void *>(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMFree(ur_context_handle_t hContext, void *pMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  AllocRecord rec;
  // Unknown pointers, interior pointers and second frees are all refused here.
  if (!ctx->allocs.take(pMem, &rec)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  Device *owner = rec.device ? rec.device : ctx->devices[0];
  ur_result_t result = check(owner->make_current());
  if (result == UR_RESULT_SUCCESS) {
    if (rec.pool) {
      // A pooled block goes back to its pool now: the caller promises no pending use.
      CUstream stream = nullptr;
      result = check(owner->internal_stream(&stream));
      if (result == UR_RESULT_SUCCESS) {
        result = pool_free(ctx, rec, pMem, stream); // puts the record back on failure
        if (result == UR_RESULT_SUCCESS) result = check(drv().cuStreamSynchronize(stream));
        return result;
      }
    } else if (rec.kind == MemKind::host) {
      result = check(drv().cuMemFreeHost(pMem));
    } else {
      result = check(drv().cuMemFree(reinterpret_cast<CUdeviceptr>(pMem)));
    }
  }
  if (result != UR_RESULT_SUCCESS) ctx->allocs.insert(pMem, rec); // nothing lost
  return result;
}

ur_result_t UR_APICALL urUSMGetMemAllocInfo(ur_context_handle_t hContext, const void *pMem,
                                            ur_usm_alloc_info_t propName, size_t propSize,
                                            void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (propName > UR_USM_ALLOC_INFO_POOL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  ORDO_CU(ctx->devices[0]->make_current());

  // Only this context's allocations are described: the driver finds the base of an
  // interior pointer, the registry says whether (and how) the context made it.
  const void *base = nullptr;
  AllocRecord rec;
  bool known = lookup(ctx, pMem, &base, &rec);
  switch (propName) {
  case UR_USM_ALLOC_INFO_TYPE: {
    ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
    if (known)
      type = rec.kind == MemKind::host ? UR_USM_TYPE_HOST
             : rec.kind == MemKind::shared ? UR_USM_TYPE_SHARED
                                           : UR_USM_TYPE_DEVICE;
    return out.value(type);
  }
  case UR_USM_ALLOC_INFO_BASE_PTR:
    if (!known) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    return out.value(const_cast<void *>(base));
  case UR_USM_ALLOC_INFO_SIZE:
    if (!known) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    return out.value(rec.size);
  case UR_USM_ALLOC_INFO_DEVICE:
    if (!known) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    return out.value(reinterpret_cast<ur_device_handle_t>(rec.device)); // null for host memory
  case UR_USM_ALLOC_INFO_POOL:
    if (!known) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    return out.value(reinterpret_cast<ur_usm_pool_handle_t>(rec.pool));
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// ---- the core pool API ---------------------------------------------------------------

ur_result_t UR_APICALL urUSMPoolCreate(ur_context_handle_t hContext, ur_usm_pool_desc_t *pPoolDesc,
                                       ur_usm_pool_handle_t *ppPool) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pPoolDesc || !ppPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Pool *p = nullptr;
  if (ur_result_t r = pool_create(ctx, nullptr, pPoolDesc, false, &p)) return r;
  *ppPool = reinterpret_cast<ur_usm_pool_handle_t>(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolRetain(ur_usm_pool_handle_t pPool) {
  ORDO_UNWRAP(Pool, p, pPool);
  if (p->destroyed.load()) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  p->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolRelease(ur_usm_pool_handle_t pPool) {
  ORDO_UNWRAP(Pool, p, pPool);
  if (p->is_default) return UR_RESULT_ERROR_INVALID_ARGUMENT; // the context owns it
  if (p->destroyed.load()) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  if (p->release()) pool_release_user(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolGetInfo(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName,
                                        size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Pool, p, hPool);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_USM_POOL_INFO_REFERENCE_COUNT: return out.value(p->count());
  case UR_USM_POOL_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(p->ctx));
  default: {
    // The stream-ordered statistics answer here too, as size_t.
    size_t value = 0, size = 0;
    if (ur_result_t r = ordo::cuda::urUSMPoolGetInfoExp(hPool, propName, &value, &size)) return r;
    return out.value(value);
  }
  }
}

} // namespace ordo::cuda
