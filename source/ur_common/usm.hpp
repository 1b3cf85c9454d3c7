// SPDX-License-Identifier: Apache-2.0
// Synchronous USM written once over the stream-ordered layer: urUSM{Host,Device,
// Shared}Alloc (a block of the pool named, or a plain backend allocation registered
// in the context's pointer registry), urUSMFree and urUSMGetMemAllocInfo. The adapter
// says only how plain memory is made (its context_hooks::free_plain gives it back):
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Context = ...;  // pools (context_pools *), devices, index_of(Device *)
//     using Device = ...;
//     static size_t max_alloc(const Device *);           // UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE
//     static bool shared_supported(const Device *);
//     static ur_result_t alloc_plain(Context *, ur_usm_type_t, Device * /*null: host*/, size_t size,
//                                    size_t align /*0: any*/, void **out);
//     // Optional: called before a plain allocation is freed by urUSMFree, to wait for
//     // the commands that may still use it where the backend's free does not (an
//     // error leaves the allocation the caller's). Without it the free does not wait.
//     static ur_result_t wait_before_free(Context *);
//     // Optional: the adapter's own refusals of an allocation's descriptor and size,
//     // after the alignment check and before the zero-size one.
//     static ur_result_t check_alloc(const ur_usm_desc_t *, size_t size);
//     // Optional: urUSMFree refused a pointer that is no live allocation's start (to log why).
//     static void free_refused(Context *, void *);
//     // Optional: the adapter's own refusal of an allocation's size and kind in this
//     // context (OpenCL: the size limit of every device it may land on, a kind the
//     // device lacks), made before a pool is asked, in place of the max_alloc and
//     // shared_supported checks.
//     static ur_result_t check_placement(Context *, ur_usm_type_t, Device * /*null: host*/, size_t size);
//     // Optional: after urUSMFree, on every path (ur_common/handles.hpp).
//     static void reap();
//   };
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

#include "ordo/info.hpp"
#include "ordo_so/layer.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

inline size_t align_of(const ur_usm_desc_t *desc) { return desc && desc->align > 1 ? desc->align : 0; }

// Flags the spec does not define in the host and device descriptors chained to an
// allocation's descriptor: INVALID_ENUMERATION (for hooks' check_alloc; ur_usm_desc_t's
// own hints are check_alloc_args'). Only the first `max_links` descriptors are read
// (native CPU reads 64 of any chain, so that a cycle ends).
inline ur_result_t check_chained_flags(const ur_usm_desc_t *desc, size_t max_links = SIZE_MAX) {
  auto *ext = desc ? static_cast<const ur_base_desc_t *>(desc->pNext) : nullptr;
  for (size_t n = 0; ext && n < max_links; ++n, ext = static_cast<const ur_base_desc_t *>(ext->pNext)) {
    if (ext->stype == UR_STRUCTURE_TYPE_USM_HOST_DESC &&
        (reinterpret_cast<const ur_usm_host_desc_t *>(ext)->flags & UR_USM_HOST_MEM_FLAGS_MASK))
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (ext->stype == UR_STRUCTURE_TYPE_USM_DEVICE_DESC &&
        (reinterpret_cast<const ur_usm_device_desc_t *>(ext)->flags & UR_USM_DEVICE_MEM_FLAGS_MASK))
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
  return UR_RESULT_SUCCESS;
}

// Whether hooks H has wait_before_free (usm_entry_points::free).
template <class H, class = void> struct has_wait_before_free : std::false_type {};
template <class H>
struct has_wait_before_free<H, std::void_t<decltype(H::wait_before_free(std::declval<typename H::Context *>()))>>
    : std::true_type {};

// Whether hooks H have check_alloc, free_refused.
template <class H, class = void> struct has_check_alloc : std::false_type {};
template <class H>
struct has_check_alloc<H, std::void_t<decltype(H::check_alloc(std::declval<const ur_usm_desc_t *>(), size_t{}))>>
    : std::true_type {};

template <class H, class = void> struct has_free_refused : std::false_type {};
template <class H>
struct has_free_refused<H, std::void_t<decltype(H::free_refused(std::declval<typename H::Context *>(), nullptr))>>
    : std::true_type {};

template <class H, class = void> struct has_check_placement : std::false_type {};
template <class H>
struct has_check_placement<H, std::void_t<decltype(H::check_placement(std::declval<typename H::Context *>(),
                                                                      UR_USM_TYPE_HOST, nullptr, size_t{}))>>
    : std::true_type {};

template <class H> struct usm_entry_points {
  using Context = typename H::Context;
  using Device = typename H::Device;

  static ur_result_t check_alloc_args(const ur_usm_desc_t *desc, size_t size, void **ppMem) {
    if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc && desc->align != 0 && (desc->align & (desc->align - 1)) != 0) return UR_RESULT_ERROR_INVALID_VALUE;
    if (desc && (desc->hints & UR_USM_ADVICE_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if constexpr (has_check_alloc<H>::value) {
      if (ur_result_t r = H::check_alloc(desc, size)) return r;
    }
    if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    return UR_RESULT_SUCCESS;
  }

  static bool out_of_memory(ur_result_t r) {
    return r == UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || r == UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }

  // A block of `pool`, usable at once (no pending use; zeroed by a zero-initialising pool).
  // A pool that cannot get a chunk from the backend gets the quarantine's memory first.
  static ur_result_t pooled_alloc(Context *ctx, ur_usm_pool_handle_t pool, ur_usm_type_t kind, Device *dev, size_t size,
                                  const ur_usm_desc_t *desc, void **ppMem) {
    auto device = reinterpret_cast<ur_device_handle_t>(dev);
    try {
      const uint64_t epoch = ctx->pools->quarantine_epoch();
      ur_result_t r = ctx->pools->alloc_now(pool, kind, device, size, align_of(desc), ppMem);
      if (out_of_memory(r) && ctx->pools->empty_quarantine(epoch))
        r = ctx->pools->alloc_now(pool, kind, device, size, align_of(desc), ppMem);
      return r;
    } catch (const std::bad_alloc &) {
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
  }

  // A backend may not honour the alignment asked for: a pointer that misses it is
  // given back. A pointer that is kept goes into the context's registry.
  static ur_result_t plain_alloc(Context *ctx, const ur_usm_desc_t *desc, size_t size, ur_usm_type_t kind, Device *dev,
                                 void **ppMem) {
    void *p = nullptr;
    const uint64_t epoch = ctx->pools->quarantine_epoch();
    ur_result_t made = H::alloc_plain(ctx, kind, dev, size, align_of(desc), &p);
    if (out_of_memory(made) && ctx->pools->empty_quarantine(epoch))
      made = H::alloc_plain(ctx, kind, dev, size, align_of(desc), &p);
    if (made != UR_RESULT_SUCCESS) return made;
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
      ctx->pools->hooks().free_plain(p, kind, device);
      return r;
    }
    *ppMem = p;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL host_alloc(ur_context_handle_t hContext, const ur_usm_desc_t *pUSMDesc,
                                           ur_usm_pool_handle_t pool, size_t size, void **ppMem) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
    if constexpr (has_check_placement<H>::value) {
      if (ur_result_t r = H::check_placement(ctx, UR_USM_TYPE_HOST, nullptr, size)) return r;
      if (pool) return pooled_alloc(ctx, pool, UR_USM_TYPE_HOST, nullptr, size, pUSMDesc, ppMem);
    } else {
      if (pool) return pooled_alloc(ctx, pool, UR_USM_TYPE_HOST, nullptr, size, pUSMDesc, ppMem);
      // UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE bounds every kind of allocation.
      if (size > H::max_alloc(ctx->devices[0])) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    }
    return plain_alloc(ctx, pUSMDesc, size, UR_USM_TYPE_HOST, nullptr, ppMem);
  }

  static ur_result_t device_alloc(ur_usm_type_t kind, ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                  const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size, void **ppMem) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    Device *dev = nullptr;
    if (ur_result_t r = unwrap(hDevice, dev)) return r;
    if (ur_result_t r = check_alloc_args(pUSMDesc, size, ppMem)) return r;
    if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    if constexpr (has_check_placement<H>::value) {
      if (ur_result_t r = H::check_placement(ctx, kind, dev, size)) return r;
      if (pool) return pooled_alloc(ctx, pool, kind, dev, size, pUSMDesc, ppMem);
    } else {
      if (kind == UR_USM_TYPE_SHARED && !H::shared_supported(dev)) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
      if (pool) return pooled_alloc(ctx, pool, kind, dev, size, pUSMDesc, ppMem);
      if (size > H::max_alloc(dev)) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    }
    return plain_alloc(ctx, pUSMDesc, size, kind, dev, ppMem);
  }

  static ur_result_t UR_APICALL device(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                       const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size,
                                       void **ppMem) {
    return device_alloc(UR_USM_TYPE_DEVICE, hContext, hDevice, pUSMDesc, pool, size, ppMem);
  }
  static ur_result_t UR_APICALL shared(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                       const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size,
                                       void **ppMem) {
    return device_alloc(UR_USM_TYPE_SHARED, hContext, hDevice, pUSMDesc, pool, size, ppMem);
  }

  // A pool block goes back to its pool at once (the caller promises no pending use);
  // a plain allocation goes back to the backend, after H::wait_before_free where the
  // hooks have it. Unknown pointers, interior pointers and second frees are refused.
  // A pool block's free may let the pool drop what the adapter then parks (reap).
  static ur_result_t UR_APICALL free(ur_context_handle_t hContext, void *pMem) {
    ur_result_t r = free_unreaped(hContext, pMem);
    reap_parked<H>();
    return r;
  }
  static ur_result_t free_unreaped(ur_context_handle_t hContext, void *pMem) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    ur_result_t pooled = UR_RESULT_SUCCESS;
    if (ctx->pools->free_now(pMem, pooled)) return pooled;
    ordo::stream_ordered::context_pools::block_facts a;
    if constexpr (has_wait_before_free<H>::value) {
      // Only for a pointer that is about to be freed: a refused one waits for nothing.
      if (ctx->pools->find_plain(pMem, a) && a.base == pMem) {
        if (ur_result_t r = H::wait_before_free(ctx)) return r;
      }
    }
    // Held a while, freed, so that commands naming it are refused (docs/async-alloc.md,
    // "Freed memory"); what leaves the quarantine goes back to the backend now.
    std::vector<ordo::stream_ordered::context_pools::block_facts> release;
    try {
      if (!ctx->pools->retire_plain(pMem, a, release)) {
        if constexpr (has_free_refused<H>::value) H::free_refused(ctx, pMem);
        return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
      }
    } catch (const std::bad_alloc &) {
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY; // nothing changed
    }
    ctx->pools->give_back(release); // the user's free succeeded: a backend refusal has no caller to go to
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_info(ur_context_handle_t hContext, const void *pMem, ur_usm_alloc_info_t propName,
                                         size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (propName > UR_USM_ALLOC_INFO_POOL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    // Only this context's allocations are described (interior pointers too): pool
    // blocks by the layer, plain allocations by its registry.
    ordo::stream_ordered::context_pools::block_facts a;
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

  // The five slots of ur_dditable_t::USM that are not pools.
  static void install(ur_dditable_t &t) {
    t.USM.pfnHostAlloc = host_alloc;
    t.USM.pfnDeviceAlloc = device;
    t.USM.pfnSharedAlloc = shared;
    t.USM.pfnFree = free;
    t.USM.pfnGetMemAllocInfo = get_info;
  }
};

} // namespace ordo::ur_common
