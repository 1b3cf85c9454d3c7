// urUSMPool*: the classic pool functions (urUSMPoolCreate/Retain/Release/GetInfo)
// and the stream-ordered pool family (urUSMPool*Exp). Results for bad input follow
// docs/async-alloc.md, "Errors".
#include "entry_points.hpp"
#include "usm_pool.hpp"

#include "context.hpp"
#include "ordo/info.hpp"
#include "platform.hpp"
#include "usm_registry.hpp"

namespace nc {

namespace {

// A fixed pool must lie inside one plain USM allocation of the context, of the kind
// it names, and overlap no other pool.
ur_result_t check_user_memory(Context &ctx, const ur_usm_pool_buffer_desc_t &buf) {
  if (!buf.pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (buf.size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (buf.memType != UR_USM_TYPE_HOST && buf.memType != UR_USM_TYPE_DEVICE && buf.memType != UR_USM_TYPE_SHARED)
    return UR_RESULT_ERROR_INVALID_VALUE;
  if (buf.device && !is_device(buf.device)) return UR_RESULT_ERROR_INVALID_DEVICE;
  UsmAllocation a;
  if (!usm_registry().find(buf.pMem, &a) || a.context != &ctx || a.type != buf.memType)
    return UR_RESULT_ERROR_INVALID_VALUE;
  size_t offset = static_cast<const char *>(buf.pMem) - static_cast<const char *>(a.base);
  if (buf.size > a.size - offset) return UR_RESULT_ERROR_INVALID_VALUE;
  const char *last = static_cast<const char *>(buf.pMem) + buf.size - 1;
  if (ctx.pools->pool_at(buf.pMem) || ctx.pools->pool_at(last)) return UR_RESULT_ERROR_INVALID_VALUE;
  return UR_RESULT_SUCCESS;
}

// The settings a pool descriptor asks for. For every pool, ur_usm_pool_limits_desc_t
// gives the maximum size (maxPoolableSize; 0: none) and the initial release threshold
// (minDriverAllocSize). READ_ONLY_EXP is a hint; USE_NATIVE_MEMORY_POOL_EXP is
// accepted, and the ordered pool core is this device's native pool.
ur_result_t read_desc(Context &ctx, PoolScope scope, const ur_usm_pool_desc_t &desc, PoolSettings &out) {
  if (desc.flags & UR_USM_POOL_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  out.flags = desc.flags;
  out.config.zero_init = desc.flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK;
  ur_result_t result = UR_RESULT_SUCCESS;
  for_each_in_chain(desc.pNext, [&](const ur_base_desc_t *p) {
    if (result) return;
    if (p->stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC) {
      auto *limits = reinterpret_cast<const ur_usm_pool_limits_desc_t *>(p);
      out.config.max_size = limits->maxPoolableSize;
      out.config.release_threshold = limits->minDriverAllocSize;
      if (out.config.max_size && out.config.release_threshold > out.config.max_size)
        result = UR_RESULT_ERROR_INVALID_VALUE;
    } else if (p->stype == UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC) {
      auto *buf = reinterpret_cast<const ur_usm_pool_buffer_desc_t *>(p);
      result = check_user_memory(ctx, *buf);
      if (!result && scope == PoolScope::Device && buf->memType == UR_USM_TYPE_HOST)
        result = UR_RESULT_ERROR_INVALID_VALUE; // a device pool holds device or shared memory
      out.user_memory = buf->pMem;
      out.user_size = buf->size;
      out.user_kind = buf->memType;
    }
  });
  return result;
}

// A pool the user owns: published, listed by its context (which it holds).
ur_result_t make_user_pool(Context &ctx, PoolScope scope, const ur_usm_pool_desc_t &desc, ur_usm_pool_handle_t *out) {
  PoolSettings settings;
  if (ur_result_t r = read_desc(ctx, scope, desc, settings)) return r;
  auto pool = std::make_unique<Pool>(ctx, scope, /*is_default=*/false, settings);
  Pool *p = pool.get();
  bool published = false;
  try {
    if (p->user_memory) ctx.pools->add_range(p->user_memory, p->user_size, p);
    registry().add(p, Kind::Pool);
    published = true;
    ctx.pools->add(*p); // the last step that can fail
  } catch (...) {
    if (published) registry().remove(p);
    if (p->user_memory) ctx.pools->remove_range(p->user_memory);
    throw;
  }
  *out = to_handle(pool.release());
  return UR_RESULT_SUCCESS;
}

// Ends the user's handle at once, whatever its count (urUSMPoolDestroyExp). False
// when another call ended it first.
bool destroy_user_handle(Pool &p) {
  uint32_t have = p.ref_count.load(std::memory_order_acquire);
  do {
    if (have == 0) return false;
  } while (!p.ref_count.compare_exchange_weak(have, 0, std::memory_order_acq_rel));
  registry().remove(&p);
  p.on_user_released();
  p.drop_ref();
  return true;
}

ur_result_t pool_info(Pool &p, ur_usm_pool_info_t propName, ordo::InfoWriter &out) {
  switch (propName) {
  case UR_USM_POOL_INFO_REFERENCE_COUNT: return out.value(p.count());
  case UR_USM_POOL_INFO_CONTEXT: return out.value(to_handle(&p.context));
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP: return out.value(p.core().release_threshold());
  case UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP: return out.value(p.core().max_size());
  case UR_USM_POOL_INFO_RESERVED_CURRENT_EXP: return out.value(p.core().stats().reserved_current);
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP: return out.value(p.core().stats().reserved_high);
  case UR_USM_POOL_INFO_USED_CURRENT_EXP: return out.value(p.core().stats().used_current);
  case UR_USM_POOL_INFO_USED_HIGH_EXP: return out.value(p.core().stats().used_high);
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// The checks of every (context, device) entry point. The host CPU is the only
// device, and every context holds it.
ur_result_t check_context_device(ur_context_handle_t hContext, ur_device_handle_t hDevice, Context **ctx) {
  *ctx = lookup<Context>(hContext);
  if (!*ctx) return Context::invalid_handle(hContext);
  if (!is_device(hDevice)) return device_error(hDevice);
  return UR_RESULT_SUCCESS;
}

// A device pool of this context and device (not a context pool, not the host pool).
ur_result_t check_device_pool(Context &ctx, ur_usm_pool_handle_t hPool, Pool **pool) {
  *pool = lookup<Pool>(hPool);
  if (!*pool) return Pool::invalid_handle(hPool);
  if (&(*pool)->context != &ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if ((*pool)->scope != PoolScope::Device) return UR_RESULT_ERROR_INVALID_VALUE;
  return UR_RESULT_SUCCESS;
}

// ---- classic pools ----

ur_result_t UR_APICALL usmPoolCreate(ur_context_handle_t hContext, ur_usm_pool_desc_t *pPoolDesc,
                                     ur_usm_pool_handle_t *ppPool) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pPoolDesc || !ppPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return guarded([&] { return make_user_pool(*ctx, PoolScope::Context, *pPoolDesc, ppPool); });
}

ur_result_t UR_APICALL usmPoolRetain(ur_usm_pool_handle_t pPool) { return user_retain<Pool>(pPool); }

// A default pool belongs to its context: the user's count never takes the
// context's reference.
ur_result_t UR_APICALL usmPoolRelease(ur_usm_pool_handle_t pPool) {
  Pool *p = lookup<Pool>(pPool);
  if (!p) return Pool::invalid_handle(pPool);
  if (!p->is_default) return guarded([&] { return user_release<Pool>(pPool); });
  uint32_t n = p->ref_count.load(std::memory_order_acquire);
  while (n > 1 && !p->ref_count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL usmPoolGetInfo(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  Pool *p = lookup<Pool>(hPool);
  if (!p) return Pool::invalid_handle(hPool);
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return pool_info(*p, propName, out);
}

// ---- stream-ordered pools ----

ur_result_t UR_APICALL usmPoolCreateExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        ur_usm_pool_desc_t *pPoolDesc, ur_usm_pool_handle_t *pPool) {
  Context *ctx = nullptr;
  if (ur_result_t r = check_context_device(hContext, hDevice, &ctx)) return r;
  if (!pPoolDesc || !pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return guarded([&] { return make_user_pool(*ctx, PoolScope::Device, *pPoolDesc, pPool); });
}

// With allocations still live, the pool's memory goes when the last is freed.
ur_result_t UR_APICALL usmPoolDestroyExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                         ur_usm_pool_handle_t hPool) {
  Context *ctx = nullptr;
  Pool *p = nullptr;
  if (ur_result_t r = check_context_device(hContext, hDevice, &ctx)) return r;
  if (ur_result_t r = check_device_pool(*ctx, hPool, &p)) return r;
  if (p->is_default) return UR_RESULT_ERROR_INVALID_VALUE; // the context owns it
  return guarded([&] { return destroy_user_handle(*p) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE; });
}

ur_result_t UR_APICALL usmPoolGetDefaultDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                      ur_usm_pool_handle_t *pPool) {
  Context *ctx = nullptr;
  if (ur_result_t r = check_context_device(hContext, hDevice, &ctx)) return r;
  if (!pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return guarded([&] {
    *pPool = to_handle(&ctx->pools->default_pool());
    return UR_RESULT_SUCCESS;
  });
}

// No size is passed: the buffer is as large as the property's type.
ur_result_t UR_APICALL usmPoolGetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, void *pPropValue,
                                         size_t *pPropSizeRet) {
  Pool *p = lookup<Pool>(hPool);
  if (!p) return Pool::invalid_handle(hPool);
  if (propName > UR_USM_POOL_INFO_USED_HIGH_EXP) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t size = propName == UR_USM_POOL_INFO_REFERENCE_COUNT ? sizeof(uint32_t)
                : propName == UR_USM_POOL_INFO_CONTEXT     ? sizeof(ur_context_handle_t)
                                                           : sizeof(size_t);
  ordo::InfoWriter out(size, pPropValue, pPropSizeRet);
  return pool_info(*p, propName, out);
}

// The release threshold can be set (up to the maximum size); writing a high-water
// mark, whatever the value, resets it to the current value. Everything else is
// read-only.
ur_result_t UR_APICALL usmPoolSetInfoExp(ur_usm_pool_handle_t hPool, ur_usm_pool_info_t propName, void *pPropValue,
                                         size_t propSize) {
  Pool *p = lookup<Pool>(hPool);
  if (!p) return Pool::invalid_handle(hPool);
  if (!pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (propName != UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP && propName != UR_USM_POOL_INFO_RESERVED_HIGH_EXP &&
      propName != UR_USM_POOL_INFO_USED_HIGH_EXP)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (propSize != sizeof(size_t)) return UR_RESULT_ERROR_INVALID_SIZE;
  switch (propName) {
  case UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP:
    return p->core().set_release_threshold(*static_cast<const size_t *>(pPropValue)) ==
                   ordo::pool::status::success
               ? UR_RESULT_SUCCESS
               : UR_RESULT_ERROR_INVALID_VALUE; // above the maximum size
  case UR_USM_POOL_INFO_RESERVED_HIGH_EXP: p->core().reset_reserved_high(); return UR_RESULT_SUCCESS;
  default: p->core().reset_used_high(); return UR_RESULT_SUCCESS;
  }
}

ur_result_t UR_APICALL usmPoolSetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                               ur_usm_pool_handle_t hPool) {
  Context *ctx = nullptr;
  Pool *p = nullptr;
  if (ur_result_t r = check_context_device(hContext, hDevice, &ctx)) return r;
  if (ur_result_t r = check_device_pool(*ctx, hPool, &p)) return r;
  ctx->pools->set_current(*p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL usmPoolGetDevicePoolExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                               ur_usm_pool_handle_t *pPool) {
  Context *ctx = nullptr;
  if (ur_result_t r = check_context_device(hContext, hDevice, &ctx)) return r;
  if (!pPool) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return guarded([&] {
    Ref<Pool> hold;
    *pPool = to_handle(&ctx->pools->current_pool(hold));
    return UR_RESULT_SUCCESS;
  });
}

// Gives back wholly free chunks while more than minBytesToKeep is reserved; never
// memory that holds a live block or one a command may still use.
ur_result_t UR_APICALL usmPoolTrimToExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        ur_usm_pool_handle_t hPool, size_t minBytesToKeep) {
  Context *ctx = nullptr;
  Pool *p = nullptr;
  if (ur_result_t r = check_context_device(hContext, hDevice, &ctx)) return r;
  if (ur_result_t r = check_device_pool(*ctx, hPool, &p)) return r;
  p->core().trim_to(minBytesToKeep);
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_usm_pool_entry_points(ur_dditable_t &t) {
  t.USM.pfnPoolCreate = usmPoolCreate;
  t.USM.pfnPoolRetain = usmPoolRetain;
  t.USM.pfnPoolRelease = usmPoolRelease;
  t.USM.pfnPoolGetInfo = usmPoolGetInfo;
  t.USMExp.pfnPoolCreateExp = usmPoolCreateExp;
  t.USMExp.pfnPoolDestroyExp = usmPoolDestroyExp;
  t.USMExp.pfnPoolGetDefaultDevicePoolExp = usmPoolGetDefaultDevicePoolExp;
  t.USMExp.pfnPoolGetInfoExp = usmPoolGetInfoExp;
  t.USMExp.pfnPoolSetInfoExp = usmPoolSetInfoExp;
  t.USMExp.pfnPoolSetDevicePoolExp = usmPoolSetDevicePoolExp;
  t.USMExp.pfnPoolGetDevicePoolExp = usmPoolGetDevicePoolExp;
  t.USMExp.pfnPoolTrimToExp = usmPoolTrimToExp;
}

} // namespace nc
