// Synchronous USM: zeMemAllocDevice / zeMemAllocHost / zeMemAllocShared, registered in
// the stream-ordered layer's pointer registry (plain allocations); with a pool, a
// block of that pool (the layer); frees; pointer queries.
#include <new>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::l0 {

namespace {

ur_result_t check_alloc_args(const ur_usm_desc_t *desc, size_t size, void **ppMem) {
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc && desc->align != 0 && (desc->align & (desc->align - 1)) != 0)
    return UR_RESULT_ERROR_INVALID_VALUE;
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  return UR_RESULT_SUCCESS;
}

size_t align_of(const ur_usm_desc_t *desc) { return desc && desc->align > 1 ? desc->align : 0; }

// A block of `pool`, usable at once (no pending use; zeroed by a zero-initialising pool).
ur_result_t pooled_alloc(Context *ctx, ur_usm_pool_handle_t pool, ur_usm_type_t kind, Device *dev, size_t size,
                         const ur_usm_desc_t *desc, void **ppMem) {
  size_t align = desc && desc->align > 1 ? desc->align : 0;
  try {
    return ctx->pools->alloc_now(pool, kind, reinterpret_cast<ur_device_handle_t>(dev), size, align, ppMem);
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
}

// The driver honours the alignment asked for; a pointer that is kept goes into the
// context's registry.
ur_result_t keep_plain(Context *ctx, const ur_usm_desc_t *desc, void *p, size_t size, ur_usm_type_t kind,
                       Device *dev, void **ppMem) {
  ur_result_t r = UR_RESULT_SUCCESS;
  if (desc && desc->align > 1 && reinterpret_cast<uintptr_t>(p) % desc->align != 0)
    r = UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  auto device = reinterpret_cast<ur_device_handle_t>(dev);
  if (r == UR_RESULT_SUCCESS) {
    try {
      ctx->pools->add_plain(p, size, kind, device);
    } catch (...) {
      r = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
  }
  if (r != UR_RESULT_SUCCESS) {
    free_memory(ctx, p);
    return r;
  }
  *ppMem = p;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t UR_APICALL urUSMHostAlloc(ur_context_handle_t hContext, const ur_usm_desc_t *pUSMDesc,
                                      ur_usm_pool_handle_t pool, size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
  if (pool) return pooled_alloc(ctx, pool, UR_USM_TYPE_HOST, nullptr, size, pUSMDesc, ppMem);
  // UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE bounds every kind of allocation.
  if (size > ctx->devices[0]->facts.props.maxMemAllocSize) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  void *p = nullptr;
  ORDO_ZE(alloc_memory(ctx, UR_USM_TYPE_HOST, nullptr, size, align_of(pUSMDesc), &p));
  return keep_plain(ctx, pUSMDesc, p, size, UR_USM_TYPE_HOST, nullptr, ppMem);
}

ur_result_t UR_APICALL urUSMDeviceAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool,
                                        size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (pool) return pooled_alloc(ctx, pool, UR_USM_TYPE_DEVICE, dev, size, pUSMDesc, ppMem);
  if (size > dev->facts.props.maxMemAllocSize) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  void *p = nullptr;
  ORDO_ZE(alloc_memory(ctx, UR_USM_TYPE_DEVICE, dev, size, align_of(pUSMDesc), &p));
  return keep_plain(ctx, pUSMDesc, p, size, UR_USM_TYPE_DEVICE, dev, ppMem);
}

ur_result_t UR_APICALL urUSMSharedAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool,
                                        size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (pool) return pooled_alloc(ctx, pool, UR_USM_TYPE_SHARED, dev, size, pUSMDesc, ppMem);
  if (size > dev->facts.props.maxMemAllocSize) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  void *p = nullptr;
  ORDO_ZE(alloc_memory(ctx, UR_USM_TYPE_SHARED, dev, size, align_of(pUSMDesc), &p));
  return keep_plain(ctx, pUSMDesc, p, size, UR_USM_TYPE_SHARED, dev, ppMem);
}

// A pool block goes back to its pool at once (the caller promises no pending use);
// a plain allocation goes back to the driver. Unknown pointers, interior pointers
// and second frees are refused.
ur_result_t UR_APICALL urUSMFree(ur_context_handle_t hContext, void *pMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ur_result_t pooled = UR_RESULT_SUCCESS;
  if (ctx->pools->free_now(pMem, pooled)) return pooled;
  ordo::so::context_pools::block_facts a;
  if (!ctx->pools->take_plain(pMem, &a)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (ze_result_t r = free_memory(ctx, a.base)) {
    try {
      ctx->pools->add_plain(a.base, a.size, a.kind, a.device); // still the caller's
    } catch (...) {
    }
    return map_error(r);
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMGetMemAllocInfo(ur_context_handle_t hContext, const void *pMem,
                                            ur_usm_alloc_info_t propName, size_t propSize,
                                            void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (propName > UR_USM_ALLOC_INFO_POOL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  // Only this context's allocations are described (interior pointers too): pool
  // blocks by the layer, plain allocations by its registry.
  ordo::so::context_pools::block_facts a;
  const bool known = ctx->pools->block_info(pMem, a) || ctx->pools->find_plain(pMem, a);
  if (propName == UR_USM_ALLOC_INFO_TYPE) return out.value(known ? a.kind : UR_USM_TYPE_UNKNOWN);
  if (!known) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  switch (propName) {
  case UR_USM_ALLOC_INFO_BASE_PTR: return out.value(a.base);
  case UR_USM_ALLOC_INFO_SIZE: return out.value(a.size);
  case UR_USM_ALLOC_INFO_DEVICE: return out.value(a.device); // null for host memory
  case UR_USM_ALLOC_INFO_POOL: return out.value(a.pool);     // null for a plain allocation
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

} // namespace ordo::l0
