// urUSM{Host,Device,Shared}Alloc, urUSMFree, urUSMGetMemAllocInfo and
// urUSMContextMemcpyExp. Every kind is host memory here; the registry remembers
// what each allocation is.
#include <cstdlib>
#include <cstring>

#include "entry_points.hpp"
#include "context.hpp"
#include "event.hpp"
#include "logging.hpp"
#include "ordo/info.hpp"
#include "platform.hpp"
#include "worker_pool.hpp"

namespace nc {

namespace {

// Default alignment: a cache line, so that allocations never share one.
constexpr size_t kDefaultAlign = 64;

ur_result_t check_desc(const ur_usm_desc_t *desc) {
  if (!desc) return UR_RESULT_SUCCESS;
  if (desc->align != 0 && (desc->align & (desc->align - 1)) != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (desc->hints & UR_USM_ADVICE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  ur_result_t result = UR_RESULT_SUCCESS;
  for_each_in_chain(desc->pNext, [&](const ur_base_desc_t *p) {
    if (p->stype == UR_STRUCTURE_TYPE_USM_HOST_DESC &&
        (reinterpret_cast<const ur_usm_host_desc_t *>(p)->flags & UR_USM_HOST_MEM_FLAGS_MASK))
      result = UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (p->stype == UR_STRUCTURE_TYPE_USM_DEVICE_DESC &&
        (reinterpret_cast<const ur_usm_device_desc_t *>(p)->flags & UR_USM_DEVICE_MEM_FLAGS_MASK))
      result = UR_RESULT_ERROR_INVALID_ENUMERATION;
  });
  return result;
}

ur_result_t allocate(ur_context_handle_t hContext, ur_device_handle_t hDevice, bool needs_device,
                     const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size, void **ppMem,
                     ur_usm_type_t type) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (needs_device && !is_device(hDevice)) return device_error(hDevice);
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_desc(pUSMDesc)) return r;
  if (size == 0 || size > max_alloc_size()) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  size_t align = pUSMDesc && pUSMDesc->align > kDefaultAlign ? pUSMDesc->align : kDefaultAlign;
  ur_device_handle_t dev = needs_device ? hDevice : nullptr;
  if (pool) return guarded([&] { return ctx->pools->alloc_now(pool, type, dev, size, align, ppMem); });
  return guarded([&] {
    void *p = nullptr;
    if (posix_memalign(&p, align, size) != 0 || !p)
      return type == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    try {
      ctx->pools->add_plain(p, size, type, dev);
    } catch (...) {
      std::free(p);
      throw;
    }
    try {
      note_usm_memory(p, size, *ctx);
    } catch (...) {
      ctx->pools->take_plain(p);
      std::free(p);
      throw;
    }
    *ppMem = p;
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL usmHostAlloc(ur_context_handle_t hContext, const ur_usm_desc_t *pUSMDesc,
                                    ur_usm_pool_handle_t pool, size_t size, void **ppMem) {
  return allocate(hContext, nullptr, false, pUSMDesc, pool, size, ppMem, UR_USM_TYPE_HOST);
}

ur_result_t UR_APICALL usmDeviceAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                      const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size,
                                      void **ppMem) {
  return allocate(hContext, hDevice, true, pUSMDesc, pool, size, ppMem, UR_USM_TYPE_DEVICE);
}

ur_result_t UR_APICALL usmSharedAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                      const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size,
                                      void **ppMem) {
  return allocate(hContext, hDevice, true, pUSMDesc, pool, size, ppMem, UR_USM_TYPE_SHARED);
}

// Only the exact base of an allocation of this context may be freed; anything
// else (an interior pointer, a double free, a foreign pointer) is refused. A pool
// block (stream-ordered or not) goes back to its pool at once, its pending uses
// ordered by the pool. A plain allocation goes back to the C heap, where anything may
// reuse it: the spec has urUSMFree wait for enqueued commands that may use it, so we
// wait until no command of the context is unfinished (docs/native-cpu.md).
ur_result_t UR_APICALL usmFree(ur_context_handle_t hContext, void *pMem) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ur_result_t pooled = UR_RESULT_SUCCESS;
  if (ctx->pools->free_now(pMem, pooled)) return pooled;
  ordo::so::context_pools::block_facts a;
  // A host task or callback would wait for its own command: it frees at once.
  if (ctx->pools->find_plain(pMem, a) && a.base == pMem && !WorkerPool::on_worker_thread() && !graph::in_callback())
    ctx->wait_idle();
  if (!ctx->pools->take_plain(pMem, &a)) {
    NC_LOG(info, "urUSMFree: %p is not the start of a live USM allocation of this context", pMem);
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  }
  forget_usm_memory(a.base);
  std::free(a.base);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL usmGetMemAllocInfo(ur_context_handle_t hContext, const void *pMem, ur_usm_alloc_info_t propName,
                                          size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (propName > UR_USM_ALLOC_INFO_POOL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  ordo::so::context_pools::block_facts a;
  bool ours = ctx->pools->block_info(pMem, a) || ctx->pools->find_plain(pMem, a);
  if (propName == UR_USM_ALLOC_INFO_TYPE) return out.value(ours ? a.kind : UR_USM_TYPE_UNKNOWN);
  if (!ours) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  switch (propName) {
  case UR_USM_ALLOC_INFO_BASE_PTR: return out.value(a.base);
  case UR_USM_ALLOC_INFO_SIZE: return out.value(a.size);
  case UR_USM_ALLOC_INFO_DEVICE: return out.value(a.device);
  case UR_USM_ALLOC_INFO_POOL: return out.value(a.pool); // null: not from a pool
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// A copy between any two host-accessible pointers, done at once.
ur_result_t UR_APICALL usmContextMemcpyExp(ur_context_handle_t hContext, void *pDst, const void *pSrc, size_t size) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(*ctx, pDst, size)) return r;
  if (ur_result_t r = check_usm_range(*ctx, pSrc, size)) return r;
  std::memmove(pDst, pSrc, size);
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_usm_entry_points(ur_dditable_t &t) {
  t.USM.pfnHostAlloc = usmHostAlloc;
  t.USM.pfnDeviceAlloc = usmDeviceAlloc;
  t.USM.pfnSharedAlloc = usmSharedAlloc;
  t.USM.pfnFree = usmFree;
  t.USM.pfnGetMemAllocInfo = usmGetMemAllocInfo;
  t.USMExp.pfnContextMemcpyExp = usmContextMemcpyExp;
}

} // namespace nc
