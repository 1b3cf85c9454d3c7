// SPDX-License-Identifier: Apache-2.0
// The urUSMPool* entry points, once for every adapter: the classic pool functions
// (urUSMPoolCreate/Retain/Release/GetInfo) and the stream-ordered pool family
// (urUSMPool*Exp). Results for bad input: docs/async-alloc.md, "Errors".
#include <exception>
#include <unistd.h>
#include <new>

#include "ordo/guarded.hpp"
#include "ordo/info.hpp"
#include "pool_core.hpp"

namespace ordo::stream_ordered {

namespace {

adapter_hooks g_hooks; // set once by install_pool_entry_points (one per adapter library)

using ordo::guarded;

ur_result_t context_of(ur_context_handle_t h, context_pools **out) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  ur_result_t err = UR_RESULT_ERROR_INVALID_CONTEXT;
  *out = g_hooks.pools_of(h, &err);
  return *out ? UR_RESULT_SUCCESS : err;
}

// The checks of every (context, device) entry point.
ur_result_t context_device(ur_context_handle_t hContext, ur_device_handle_t hDevice, context_pools **out) {
  if (ur_result_t r = context_of(hContext, out)) return r;
  if (!hDevice) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if ((g_hooks.is_device && !g_hooks.is_device(hDevice)) || !(*out)->hooks().has_device(hDevice))
    return UR_RESULT_ERROR_INVALID_DEVICE;
  return UR_RESULT_SUCCESS;
}

// The descriptor of a fixed pool. Where its memory lies (inside one plain USM
// allocation of the context, of the kind it names, sharing no byte with another pool)
// is checked when the pool claims it (context_pools::claim_user_memory), in one step
// with recording it.
ur_result_t check_user_memory(context_pools &ctx, const ur_usm_pool_buffer_desc_t &buf) {
  if (!buf.pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (buf.size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (buf.memType != UR_USM_TYPE_HOST && buf.memType != UR_USM_TYPE_DEVICE && buf.memType != UR_USM_TYPE_SHARED)
    return UR_RESULT_ERROR_INVALID_VALUE;
  if (buf.device && !ctx.hooks().has_device(buf.device)) return UR_RESULT_ERROR_INVALID_DEVICE;
  return UR_RESULT_SUCCESS;
}

// The settings a descriptor asks for: ur_usm_pool_limits_desc_t gives the maximum
// size (maxPoolableSize; 0: none) and the initial release threshold
// (minDriverAllocSize). READ_ONLY_EXP is a hint; USE_NATIVE_MEMORY_POOL_EXP is
// accepted: the ordered pool core is the pool Ordo runs on every backend.
ur_result_t read_desc(context_pools &ctx, pool_scope scope, ur_device_handle_t device, const ur_usm_pool_desc_t &desc,
                      pool_settings &out) {
  if (desc.flags & UR_USM_POOL_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  out.flags = desc.flags;
  out.config.zero_init = desc.flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK;
  for (auto *p = static_cast<const ur_base_desc_t *>(desc.pNext); p;
       p = static_cast<const ur_base_desc_t *>(p->pNext)) {
    if (p->stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC) {
      auto *limits = reinterpret_cast<const ur_usm_pool_limits_desc_t *>(p);
      out.config.max_size = limits->maxPoolableSize;
      out.config.release_threshold = limits->minDriverAllocSize;
      if (out.config.max_size && out.config.release_threshold > out.config.max_size)
        return UR_RESULT_ERROR_INVALID_VALUE;
    } else if (p->stype == UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC) {
      auto *buf = reinterpret_cast<const ur_usm_pool_buffer_desc_t *>(p);
      if (ur_result_t r = check_user_memory(ctx, *buf)) return r;
      if (scope == pool_scope::device && buf->memType == UR_USM_TYPE_HOST)
        return UR_RESULT_ERROR_INVALID_VALUE; // a device pool holds device or shared memory
      out.user_memory = buf->pMem;
      out.user_size = buf->size;
      out.user_kind = buf->memType;
      out.user_device = buf->memType == UR_USM_TYPE_HOST ? nullptr : (buf->device ? buf->device : device);
    }
  }
  return UR_RESULT_SUCCESS;
}

// A pool the user owns: registered, listed by its context (which it holds).
ur_result_t make_user_pool(context_pools &ctx, pool_scope scope, ur_device_handle_t device,
                           const ur_usm_pool_desc_t &desc, ur_usm_pool_handle_t *out) {
  pool_settings settings;
  if (ur_result_t r = read_desc(ctx, scope, device, desc, settings)) return r;
  auto made = std::make_unique<pool>(ctx, scope, device, false, settings);
  if (settings.user_memory)
    if (ur_result_t r = made->claim_user_memory()) return r;
  ctx.add_user_pool(*made); // the last step that can fail
  *out = made.release()->handle();
  return UR_RESULT_SUCCESS;
}

// Any pool of the context, referenced.
ur_result_t pool_of(ur_usm_pool_handle_t h, pool_ref &out) { return acquire(h, out); }

// A device pool of this context and device (not a context pool, not the host pool).
ur_result_t device_pool(context_pools &ctx, ur_device_handle_t device, ur_usm_pool_handle_t h, pool_ref &out) {
  if (ur_result_t r = acquire(h, out)) return r;
  if (&out->context() != &ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (out->scope() != pool_scope::device) return UR_RESULT_ERROR_INVALID_VALUE;
  if (out->device() != device) return UR_RESULT_ERROR_INVALID_DEVICE;
  return UR_RESULT_SUCCESS;
}

ur_result_t pool_info(pool &p, ur_usm_pool_info_t propName, ordo::InfoWriter &out) {
  const ordo::pool::pool_stats st = p.budget().stats();
  switch (propName) {
  case UR_USM_POOL_INFO_REFERENCE_COUNT: return out.value(p.handle()->count());
  case UR_USM_POOL_INFO_CONTEXT: return out.value(p.context().hooks().handle());
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP: return out.value(p.budget().release_threshold());
  case UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP: return out.value(p.budget().max_size());
  case UR_USM_POOL_INFO_RESERVED_CURRENT_EXP: return out.value(st.reserved_current);
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP: return out.value(st.reserved_high);
  case UR_USM_POOL_INFO_USED_CURRENT_EXP: return out.value(st.used_current);
  case UR_USM_POOL_INFO_USED_HIGH_EXP: return out.value(st.used_high);
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// ---- classic pools ----

ur_result_t UR_APICALL urUSMPoolCreate(ur_context_handle_t hContext, ur_usm_pool_desc_t *pPoolDesc,
                                       ur_usm_pool_handle_t *ppPool) {
  context_pools *ctx = nullptr;
  if (ur_result_t r = context_of(hContext, &ctx)) return r;
  if (!pPoolDesc || !ppPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return guarded([&] { return make_user_pool(*ctx, pool_scope::context, nullptr, *pPoolDesc, ppPool); });
}

ur_result_t UR_APICALL urUSMPoolRetain(ur_usm_pool_handle_t hPool) {
  pool_ref p;
  if (ur_result_t r = pool_of(hPool, p)) return r;
  p->handle()->retain();
  return UR_RESULT_SUCCESS;
}

// A default pool belongs to its context: the user's count never takes the
// context's reference.
ur_result_t UR_APICALL urUSMPoolRelease(ur_usm_pool_handle_t hPool) {
  pool_ref p;
  if (ur_result_t r = pool_of(hPool, p)) return r;
  auto &count = p->handle()->ref_count;
  uint32_t n = count.load(std::memory_order_acquire);
  if (p->is_default()) {
    while (n > 1 && !count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {
    }
    return UR_RESULT_SUCCESS;
  }
  do {
    if (n == 1)
      return guarded([&] { return p->end_user_handle() ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE; });
    if (n == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  } while (!count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMPoolGetInfo(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, size_t propSize,
                                        void *pPropValue, size_t *pPropSizeRet) {
  pool_ref p;
  if (ur_result_t r = pool_of(hPool, p)) return r;
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (propSize == 0 && pPropValue) return UR_RESULT_ERROR_INVALID_SIZE;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return pool_info(*p, propName, out);
}

// ---- stream-ordered pools ----

ur_result_t UR_APICALL urUSMPoolCreateExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                          ur_usm_pool_desc_t *pPoolDesc, ur_usm_pool_handle_t *pPool) {
  context_pools *ctx = nullptr;
  if (ur_result_t r = context_device(hContext, hDevice, &ctx)) return r;
  if (!pPoolDesc || !pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return guarded([&] { return make_user_pool(*ctx, pool_scope::device, hDevice, *pPoolDesc, pPool); });
}

// With allocations still live, the pool's memory goes when the last is freed.
ur_result_t UR_APICALL urUSMPoolDestroyExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                           ur_usm_pool_handle_t hPool) {
  context_pools *ctx = nullptr;
  pool_ref p;
  if (ur_result_t r = context_device(hContext, hDevice, &ctx)) return r;
  if (ur_result_t r = device_pool(*ctx, hDevice, hPool, p)) return r;
  if (p->is_default()) return UR_RESULT_ERROR_INVALID_VALUE; // the context owns it
  return guarded([&] { return p->end_user_handle() ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE; });
}

ur_result_t UR_APICALL urUSMPoolGetDefaultDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                        ur_usm_pool_handle_t *pPool) {
  context_pools *ctx = nullptr;
  if (ur_result_t r = context_device(hContext, hDevice, &ctx)) return r;
  if (!pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  pool_ref p;
  if (ur_result_t r = ctx->default_pool(hDevice, p)) return r;
  *pPool = p->handle();
  return UR_RESULT_SUCCESS;
}

// No size is passed: the buffer is as large as the property's type.
ur_result_t UR_APICALL urUSMPoolGetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, void *pPropValue,
                                           size_t *pPropSizeRet) {
  pool_ref p;
  if (ur_result_t r = pool_of(hPool, p)) return r;
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const size_t size = propName == UR_USM_POOL_INFO_REFERENCE_COUNT ? sizeof(uint32_t)
                      : propName == UR_USM_POOL_INFO_CONTEXT       ? sizeof(ur_context_handle_t)
                                                                   : sizeof(size_t);
  ordo::InfoWriter out(size, pPropValue, pPropSizeRet);
  return pool_info(*p, propName, out);
}

// The release threshold can be set (up to the maximum size); writing a high-water
// mark, whatever the value, resets it to the current value. The rest is read-only.
ur_result_t UR_APICALL urUSMPoolSetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, void *pPropValue,
                                           size_t propSize) {
  pool_ref p;
  if (ur_result_t r = pool_of(hPool, p)) return r;
  if (!pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (propName != UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP && propName != UR_USM_POOL_INFO_RESERVED_HIGH_EXP &&
      propName != UR_USM_POOL_INFO_USED_HIGH_EXP)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (propSize != sizeof(size_t)) return UR_RESULT_ERROR_INVALID_SIZE;
  switch (propName) {
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP:
    return p->budget().set_release_threshold(*static_cast<const size_t *>(pPropValue)) == ordo::pool::status::success
               ? UR_RESULT_SUCCESS
               : UR_RESULT_ERROR_INVALID_VALUE; // above the maximum size
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP: p->budget().reset_reserved_high(); return UR_RESULT_SUCCESS;
  default: p->budget().reset_used_high(); return UR_RESULT_SUCCESS;
  }
}

ur_result_t UR_APICALL urUSMPoolSetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                 ur_usm_pool_handle_t hPool) {
  context_pools *ctx = nullptr;
  pool_ref p;
  if (ur_result_t r = context_device(hContext, hDevice, &ctx)) return r;
  if (ur_result_t r = device_pool(*ctx, hDevice, hPool, p)) return r;
  return guarded([&] { return ctx->set_current(hDevice, *p); });
}

ur_result_t UR_APICALL urUSMPoolGetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                 ur_usm_pool_handle_t *pPool) {
  context_pools *ctx = nullptr;
  if (ur_result_t r = context_device(hContext, hDevice, &ctx)) return r;
  if (!pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  pool_ref p;
  if (ur_result_t r = ctx->current_pool(hDevice, p)) return r;
  *pPool = p->handle();
  return UR_RESULT_SUCCESS;
}

// Gives back wholly free chunks while the pool holds more than minBytesToKeep;
// never memory that holds a live block or one a command may still use.
ur_result_t UR_APICALL urUSMPoolTrimToExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                          ur_usm_pool_handle_t hPool, size_t minBytesToKeep) {
  context_pools *ctx = nullptr;
  pool_ref p;
  if (ur_result_t r = context_device(hContext, hDevice, &ctx)) return r;
  if (ur_result_t r = device_pool(*ctx, hDevice, hPool, p)) return r;
  p->trim_to(minBytesToKeep);
  return UR_RESULT_SUCCESS;
}

// ---- host memory registration (urUSMHostAllocRegisterExp) ----
// Checks in the order of UR's parameter rules, then the range: whole pages, no wrap.

ur_result_t UR_APICALL urUSMHostAllocRegisterExp(ur_context_handle_t hContext, void *pHostMem, size_t size,
                                                 const ur_exp_usm_host_alloc_register_properties_t *pProperties) {
  if (!pHostMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pProperties && (pProperties->flags & UR_EXP_USM_HOST_ALLOC_REGISTER_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  context_pools *ctx = nullptr;
  if (ur_result_t r = context_of(hContext, &ctx)) return r;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pHostMem);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (p % page != 0 || size % page != 0 || size > UINTPTR_MAX - p) return UR_RESULT_ERROR_INVALID_VALUE;
  const bool read_only = pProperties && (pProperties->flags & UR_EXP_USM_HOST_ALLOC_REGISTER_FLAG_READ_ONLY);
  return guarded([&] { return ctx->register_host(pHostMem, size, read_only); });
}

ur_result_t UR_APICALL urUSMHostAllocUnregisterExp(ur_context_handle_t hContext, void *pHostMem) {
  if (!pHostMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  context_pools *ctx = nullptr;
  if (ur_result_t r = context_of(hContext, &ctx)) return r;
  return ctx->unregister_host(pHostMem);
}

} // namespace

void install_pool_entry_points(ur_dditable_t &t, const adapter_hooks &hooks) {
  g_hooks = hooks;
  t.USM.pfnPoolCreate = urUSMPoolCreate;
  t.USM.pfnPoolRetain = urUSMPoolRetain;
  t.USM.pfnPoolRelease = urUSMPoolRelease;
  t.USM.pfnPoolGetInfo = urUSMPoolGetInfo;
  t.USMExp.pfnPoolCreateExp = urUSMPoolCreateExp;
  t.USMExp.pfnPoolDestroyExp = urUSMPoolDestroyExp;
  t.USMExp.pfnPoolGetDefaultDevicePoolExp = urUSMPoolGetDefaultDevicePoolExp;
  t.USMExp.pfnPoolGetInfoExp = urUSMPoolGetInfoExp;
  t.USMExp.pfnPoolSetInfoExp = urUSMPoolSetInfoExp;
  t.USMExp.pfnPoolSetDevicePoolExp = urUSMPoolSetDevicePoolExp;
  t.USMExp.pfnPoolGetDevicePoolExp = urUSMPoolGetDevicePoolExp;
  t.USMExp.pfnPoolTrimToExp = urUSMPoolTrimToExp;
  if (hooks.host_registration) {
    t.USMExp.pfnHostAllocRegisterExp = urUSMHostAllocRegisterExp;
    t.USMExp.pfnHostAllocUnregisterExp = urUSMHostAllocUnregisterExp;
  }
}

} // namespace ordo::stream_ordered
