// SPDX-License-Identifier: Apache-2.0
// Memory objects, the part that is bookkeeping, written once for the adapters whose
// buffers are one address range (Level Zero, the stream backend): the fields a buffer,
// sub-buffer or view shares with every such adapter, the map list, the argument checks
// of urMemBufferCreate / urMemBufferPartition / urMemBufferCreateWithNativeHandle and
// the buffer commands, urMemGetNativeHandle and urMemGetInfo. The adapter keeps what its
// bytes are (its Storage kinds) and how they are made and freed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#include "ordo/info.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/object.hpp"
#include "ordo/rect.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_api.h"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// The fields of a buffer object: `Self` the adapter's Mem, `Context` its context. A
// sub-buffer or view holds its root and addresses the root's bytes at `origin`.
template <class Self, class Context> struct mem_object : object {
  static constexpr handle_kind kKind = handle_kind::mem;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  mem_object() : object(kKind) {}

  Context *ctx = nullptr; // held
  Self *root = nullptr;   // held; null for a root
  size_t origin = 0;      // offset in the root's bytes
  size_t size = 0;
  uint8_t *ptr = nullptr; // the first byte, as commands and kernels address it
  ur_mem_flags_t access = UR_MEM_FLAG_READ_WRITE;
  bool sub_buffer = false;
  bool free_usm = false; // a USM allocation made a buffer, freed with it

  // Roots only: the host copy maps go through (the adapter says when there is one and
  // whether it owns it), and the maps not yet ended.
  std::mutex map_mutex;
  uint8_t *mirror = nullptr;
  bool own_mirror = false;
  struct Mapping {
    void *host;
    size_t offset, size; // in this memory object
    bool write_back;
  };
  std::vector<Mapping> mappings; // under the root's map_mutex

  Self *owner() { return root ? root : static_cast<Self *>(this); }
  size_t root_offset() const { return root ? origin : 0; }
};

// A buffer's access flags: the one named, READ_WRITE when none is.
inline ur_mem_flags_t access_of(ur_mem_flags_t flags) {
  const ur_mem_flags_t a = flags & ordo::mem::kAccessFlags;
  return a ? a : ur_mem_flags_t{UR_MEM_FLAG_READ_WRITE};
}

// Adds a holder unless the object is already going (its last holder dropped).
inline bool try_hold(object *o) {
  uint32_t n = o->holders.load(std::memory_order_relaxed);
  while (n != 0)
    if (o->holders.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
  return false;
}

// The root buffer of `ctx` (its `buffers` under `buffers_mutex`) whose bytes hold `p`,
// with a holder; null if none.
template <class Mem, class Context> Mem *buffer_containing(Context *ctx, const uint8_t *p) {
  std::lock_guard<std::mutex> lock(ctx->buffers_mutex);
  for (Mem *b : ctx->buffers)
    if (p >= b->ptr && p < b->ptr + b->size && try_hold(b)) return b;
  return nullptr;
}

// The pNext chain of ur_buffer_properties_t: placement hints (a memory channel, an
// allocation location) are accepted and have nothing to choose between here.
inline ur_result_t check_buffer_chain(const void *next) {
  for (auto *p = static_cast<const ur_base_properties_t *>(next); p;
       p = static_cast<const ur_base_properties_t *>(p->pNext))
    if (p->stype != UR_STRUCTURE_TYPE_BUFFER_CHANNEL_PROPERTIES &&
        p->stype != UR_STRUCTURE_TYPE_BUFFER_ALLOC_LOCATION_PROPERTIES)
      return UR_RESULT_ERROR_INVALID_VALUE;
  return UR_RESULT_SUCCESS;
}

// urMemBufferCreate's checks after the context's, in this order; `max_alloc` is the
// largest buffer the context's devices take.
inline ur_result_t check_buffer_create(ur_mem_flags_t flags, size_t size, const ur_buffer_properties_t *pProperties,
                                       const ur_mem_handle_t *phBuffer, size_t max_alloc) {
  if (!phBuffer) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
  const void *host = pProperties ? pProperties->pHost : nullptr;
  if ((flags & ordo::mem::kHostPointerFlags) && !host) return UR_RESULT_ERROR_INVALID_HOST_PTR;
  if (host && !(flags & ordo::mem::kHostPointerFlags)) return UR_RESULT_ERROR_INVALID_HOST_PTR;
  if (ur_result_t r = ordo::mem::check_buffer_flags(flags)) return r;
  if (size > max_alloc) return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
  if (pProperties)
    if (ur_result_t r = check_buffer_chain(pProperties->pNext)) return r;
  return UR_RESULT_SUCCESS;
}

// urMemBufferPartition's checks after the parent's handle, as clCreateSubBuffer: no
// sub-buffer of a sub-buffer, no host-pointer flags, access only narrowed, the origin a
// multiple of `base_align` (UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN). `access` gets the
// sub-buffer's access.
inline ur_result_t check_partition(ur_mem_flags_t flags, ur_buffer_create_type_t bufferCreateType,
                                   const ur_buffer_region_t *pRegion, const ur_mem_handle_t *phMem, bool parent_is_sub,
                                   size_t parent_size, ur_mem_flags_t parent_access, size_t base_align,
                                   ur_mem_flags_t &access) {
  if (!pRegion || !phMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (bufferCreateType != UR_BUFFER_CREATE_TYPE_REGION) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (pRegion->size == 0) return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
  if (parent_is_sub) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (ur_result_t r = ordo::mem::check_sub_buffer(flags, *pRegion, parent_size)) return r;
  access = (flags & ordo::mem::kAccessFlags) ? (flags & ordo::mem::kAccessFlags) : parent_access;
  if (parent_access != UR_MEM_FLAG_READ_WRITE && access != parent_access) return UR_RESULT_ERROR_INVALID_VALUE;
  if (pRegion->origin % base_align != 0) return UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET;
  return UR_RESULT_SUCCESS;
}

// urMemGetInfo once the memory object is known.
inline ur_result_t mem_info(size_t size, ur_context_handle_t ctx, uint32_t count, ur_mem_info_t propName,
                            size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  if (propName > UR_MEM_INFO_REFERENCE_COUNT) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_MEM_INFO_SIZE: return out.value(size);
  case UR_MEM_INFO_CONTEXT: return out.value(ctx);
  case UR_MEM_INFO_REFERENCE_COUNT: return out.value(count);
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

template <class Mem>
ur_result_t UR_APICALL mem_get_info(ur_mem_handle_t hMemory, ur_mem_info_t propName, size_t propSize, void *pPropValue,
                                    size_t *pPropSizeRet) {
  ORDO_UNWRAP(Mem, m, hMemory);
  return mem_info(m->size, reinterpret_cast<ur_context_handle_t>(m->ctx), m->count(), propName, propSize, pPropValue,
                  pPropSizeRet);
}

// The native handle is the address of the first byte (a sub-buffer's: its root's bytes
// at its origin), the same for every device of the context.
template <class Mem, class Device>
ur_result_t UR_APICALL mem_get_native_handle(ur_mem_handle_t hMem, ur_device_handle_t hDevice,
                                             ur_native_handle_t *phNativeMem) {
  ORDO_UNWRAP(Mem, m, hMem);
  if (hDevice) {
    ORDO_UNWRAP(Device, d, hDevice);
    if (m->ctx->index_of(d) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  }
  if (!phNativeMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeMem = reinterpret_cast<ur_native_handle_t>(m->ptr);
  return UR_RESULT_SUCCESS;
}

// The USM allocation of the context's pools that holds `p`, for a buffer made from a
// native handle: INVALID_MEM_OBJECT when there is none, INVALID_VALUE when the buffer
// should own memory it does not start.
template <class Pools, class Facts> ur_result_t native_usm_block(Pools &pools, void *p, bool owned, Facts &a) {
  if (!pools.block_info(p, a) && !pools.find_plain(p, a)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (owned && p != a.base) return UR_RESULT_ERROR_INVALID_VALUE;
  return UR_RESULT_SUCCESS;
}

// A new memory object of `ctx` (context held: `context_hold`, the adapter's, found by
// argument-dependent lookup); `root` (if any) gets a holder.
template <class Mem, class Context> Mem *make_mem(Context *ctx, Mem *root) {
  Mem *m = new Mem();
  m->ctx = ctx;
  context_hold(ctx);
  if (root) {
    root->hold();
    m->root = root;
  }
  return m;
}

// The last holder of a memory object is gone: a root leaves its context's list and its
// bytes go (`free_storage(Mem *)`), then the object, its holder of the root and of the
// context (`context_drop`, the adapter's).
template <class Mem, class FreeStorage> void destroy_mem(Mem *m, FreeStorage &&free_storage) {
  auto *ctx = m->ctx;
  if (!m->root) {
    {
      std::lock_guard<std::mutex> lock(ctx->buffers_mutex);
      auto it = std::find(ctx->buffers.begin(), ctx->buffers.end(), m);
      if (it != ctx->buffers.end()) ctx->buffers.erase(it);
    }
    free_storage(m);
  }
  Mem *root = m->root;
  ordo::retire(m);
  if (root && root->drop()) destroy_mem(root, free_storage);
  context_drop(ctx);
}

// The USM allocation at `p` that a buffer owned (urMemBufferCreateWithNativeHandle), at
// the buffer's end: back to its pool, or a plain one out of the registry and to the
// backend. Through the layer, not urUSMFree: the user may have released the context's
// handle by now (the buffer still holds the context itself).
template <class Pools> void free_owned_usm(Pools &pools, void *p) {
  ur_result_t pooled = UR_RESULT_SUCCESS;
  typename Pools::block_facts a;
  if (!pools.free_now(p, pooled) && pools.take_plain(p, &a)) pools.give_back({a});
}
template <class Mem> void free_owned_usm(Mem *m) {
  if (m->free_usm) free_owned_usm(*m->ctx->pools, m->ptr);
}

// urMemBufferCreate, urMemBufferPartition, urMemBufferCreateWithNativeHandle and the
// bookkeeping entry points of memory objects. A hooks struct `H` gives:
//
//   using Context = ...; using Device = ...; using Mem = ...;  // Mem: a mem_object
//   static constexpr size_t kBaseAlign;  // UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN in bytes
//   static size_t max_alloc(const Context *);  // the largest buffer
//   static Mem *make(Context *, Mem *root);    // make_mem and what the adapter adds
//   static void drop(Mem *);                   // drops a holder
//   // A root's bytes for urMemBufferCreate; on failure nothing is left to free.
//   static ur_result_t allocate_root(Mem *, ur_mem_flags_t, const void *host);
//   // A root on a USM allocation of the context (ptr, size, storage usm and free_usm
//   // set): what the adapter adds.
//   template <class Facts> static void adopt_usm(Mem *, const Facts &);
//   static ur_result_t UR_APICALL release(ur_mem_handle_t);  // urMemRelease
template <class H> struct buffer_entry_points {
  using Context = typename H::Context;
  using Mem = typename H::Mem;

  static ur_mem_handle_t to_handle(Mem *m) { return reinterpret_cast<ur_mem_handle_t>(m); }

  static ur_result_t UR_APICALL buffer_create(ur_context_handle_t hContext, ur_mem_flags_t flags, size_t size,
                                              const ur_buffer_properties_t *pProperties, ur_mem_handle_t *phBuffer) {
    ORDO_UNWRAP(Context, ctx, hContext);
    if (ur_result_t r = check_buffer_create(flags, size, pProperties, phBuffer, H::max_alloc(ctx))) return r;
    const void *host = pProperties ? pProperties->pHost : nullptr;
    Mem *m = nullptr;
    try {
      m = H::make(ctx, nullptr);
      m->size = size;
      m->access = access_of(flags);
      if (ur_result_t r = H::allocate_root(m, flags, host)) {
        H::drop(m); // nothing to free: allocate_root left nothing
        return r;
      }
      std::lock_guard<std::mutex> lock(ctx->buffers_mutex);
      ctx->buffers.push_back(m);
    } catch (const std::bad_alloc &) {
      if (m) H::drop(m);
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *phBuffer = to_handle(m);
    return UR_RESULT_SUCCESS;
  }

  // As clCreateSubBuffer: no sub-buffer of a sub-buffer, no host-pointer flags, access
  // only narrowed, the origin a multiple of UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN.
  static ur_result_t UR_APICALL buffer_partition(ur_mem_handle_t hBuffer, ur_mem_flags_t flags,
                                                 ur_buffer_create_type_t bufferCreateType,
                                                 const ur_buffer_region_t *pRegion, ur_mem_handle_t *phMem) {
    ORDO_UNWRAP(Mem, b, hBuffer);
    ur_mem_flags_t access = 0;
    if (ur_result_t r = check_partition(flags, bufferCreateType, pRegion, phMem, b->sub_buffer, b->size, b->access,
                                        H::kBaseAlign, access))
      return r;
    try {
      Mem *m = H::make(b->ctx, b->owner());
      m->origin = b->root_offset() + pRegion->origin;
      m->size = pRegion->size;
      m->ptr = b->ptr + pRegion->origin;
      m->access = access;
      m->storage = Mem::Storage::alias;
      m->sub_buffer = true;
      *phMem = to_handle(m);
      return UR_RESULT_SUCCESS;
    } catch (const std::bad_alloc &) {
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
  }

  // An address becomes a buffer when the adapter knows the memory it is in (which gives
  // the size: to the end of that memory): a live buffer of the context (the view shares
  // its bytes and holds it), or a USM allocation of the context (freed with the buffer
  // when ownership is given, which needs the allocation's first byte). Any other address
  // is refused with INVALID_MEM_OBJECT.
  static ur_result_t UR_APICALL buffer_create_with_native_handle(ur_native_handle_t hNativeMem,
                                                                 ur_context_handle_t hContext,
                                                                 const ur_mem_native_properties_t *pProperties,
                                                                 ur_mem_handle_t *phMem) {
    ORDO_UNWRAP(Context, ctx, hContext);
    if (!phMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    auto *p = reinterpret_cast<uint8_t *>(hNativeMem);
    if (!p) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    const bool owned = pProperties && pProperties->isNativeHandleOwned;
    try {
      if (Mem *source = buffer_containing<Mem>(ctx, p)) {
        Mem *m = nullptr;
        try {
          m = H::make(ctx, source);
        } catch (...) {
          H::drop(source);
          throw;
        }
        H::drop(source); // buffer_containing's holder; make took the view's
        m->origin = size_t(p - source->ptr);
        m->size = source->size - m->origin;
        m->ptr = p;
        m->storage = Mem::Storage::alias;
        *phMem = to_handle(m);
        return UR_RESULT_SUCCESS;
      }
      typename std::decay_t<decltype(*ctx->pools)>::block_facts a;
      if (ur_result_t r = native_usm_block(*ctx->pools, p, owned, a)) return r;
      Mem *m = H::make(ctx, nullptr);
      m->size = size_t(static_cast<uint8_t *>(a.base) + a.size - p);
      m->ptr = p;
      m->storage = Mem::Storage::usm;
      m->free_usm = owned;
      H::adopt_usm(m, a);
      *phMem = to_handle(m);
      return UR_RESULT_SUCCESS;
    } catch (const std::bad_alloc &) {
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
  }

  // The native handle is the address of the first byte.
  static void install(ur_dditable_t &t) {
    t.Mem.pfnBufferCreate = buffer_create;
    t.Mem.pfnRetain = retain_user_handle<Mem, ur_mem_handle_t>;
    t.Mem.pfnRelease = H::release;
    t.Mem.pfnBufferPartition = buffer_partition;
    t.Mem.pfnGetNativeHandle = mem_get_native_handle<Mem, typename H::Device>;
    t.Mem.pfnBufferCreateWithNativeHandle = buffer_create_with_native_handle;
    t.Mem.pfnGetInfo = mem_get_info<Mem>;
  }
};

// ---- buffer commands ------------------------------------------------------------------

// urEnqueueMemBufferFill: the pattern is a power of two bytes; offset and size are
// whole patterns inside the buffer of `total` bytes.
inline ur_result_t check_fill(const void *pPattern, size_t patternSize, size_t offset, size_t size, size_t total) {
  if (!pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (patternSize == 0 || size == 0 || patternSize > size || (patternSize & (patternSize - 1)) != 0 ||
      size % patternSize != 0 || offset % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (!ordo::mem::range_inside(offset, size, total)) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

// A read or write rectangle between a buffer of `total` bytes and host memory: both
// sides resolved, the buffer's inside it.
inline ur_result_t resolve_host_rect(const void *host, ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                     ur_rect_region_t region, size_t bufferRowPitch, size_t bufferSlicePitch,
                                     size_t hostRowPitch, size_t hostSlicePitch, size_t total, ordo::rect_side &bs,
                                     ordo::rect_side &hs) {
  if (!host) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = ordo::resolve_rect_side(bufferOrigin, region, bufferRowPitch, bufferSlicePitch, bs)) return r;
  if (ur_result_t r = ordo::resolve_rect_side(hostOrigin, region, hostRowPitch, hostSlicePitch, hs)) return r;
  if (bs.end > total) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

// urEnqueueMemBufferCopyRect: both sides resolved and inside their buffers.
inline ur_result_t resolve_copy_rect(ur_rect_offset_t srcOrigin, ur_rect_offset_t dstOrigin, ur_rect_region_t region,
                                     size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch, size_t dstSlicePitch,
                                     size_t src_total, size_t dst_total, ordo::rect_side &ss, ordo::rect_side &ds) {
  if (ur_result_t r = ordo::resolve_rect_side(srcOrigin, region, srcRowPitch, srcSlicePitch, ss)) return r;
  if (ur_result_t r = ordo::resolve_rect_side(dstOrigin, region, dstRowPitch, dstSlicePitch, ds)) return r;
  if (ss.end > src_total || ds.end > dst_total) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

// The adapter's read/write rectangle command; the two entry points below call it.
using host_rect_fn = ur_result_t (*)(ur_queue_handle_t, ur_mem_handle_t, ur_command_t, bool, ur_rect_offset_t,
                                     ur_rect_offset_t, ur_rect_region_t, size_t, size_t, size_t, size_t, void *,
                                     uint32_t, const ur_event_handle_t *, ur_event_handle_t *);

template <host_rect_fn HostRect>
ur_result_t UR_APICALL enqueue_read_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                         ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                         ur_rect_region_t region, size_t bufferRowPitch, size_t bufferSlicePitch,
                                         size_t hostRowPitch, size_t hostSlicePitch, void *pDst, uint32_t n,
                                         const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  return HostRect(hQueue, hBuffer, UR_COMMAND_MEM_BUFFER_READ_RECT, blocking, bufferOrigin, hostOrigin, region,
                  bufferRowPitch, bufferSlicePitch, hostRowPitch, hostSlicePitch, pDst, n, waits, phEvent);
}

template <host_rect_fn HostRect>
ur_result_t UR_APICALL enqueue_write_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                          ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                          ur_rect_region_t region, size_t bufferRowPitch, size_t bufferSlicePitch,
                                          size_t hostRowPitch, size_t hostSlicePitch, void *pSrc, uint32_t n,
                                          const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  return HostRect(hQueue, hBuffer, UR_COMMAND_MEM_BUFFER_WRITE_RECT, blocking, bufferOrigin, hostOrigin, region,
                  bufferRowPitch, bufferSlicePitch, hostRowPitch, hostSlicePitch, pSrc, n, waits, phEvent);
}

// urEnqueueMemBufferMap's checks after the queue's and buffer's, before the wait list.
inline ur_result_t check_map(void **ppRetMap, ur_map_flags_t mapFlags, size_t offset, size_t size, size_t total) {
  if (!ppRetMap) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (mapFlags & UR_MAP_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!ordo::mem::map_flags_ok(mapFlags)) return UR_RESULT_ERROR_INVALID_VALUE;
  if (!ordo::mem::range_inside(offset, size, total)) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

// A map is written down before its command (an unmap may follow at once) and struck
// out again when the command was not enqueued.
template <class Mem> ur_result_t add_mapping(Mem *m, const typename Mem::Mapping &map) {
  try {
    std::lock_guard<std::mutex> lock(m->owner()->map_mutex);
    m->mappings.push_back(map);
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return UR_RESULT_SUCCESS;
}

template <class Mem> void strike_mapping(Mem *m, const typename Mem::Mapping &map) {
  std::lock_guard<std::mutex> lock(m->owner()->map_mutex);
  for (auto it = m->mappings.end(); it != m->mappings.begin();) {
    --it;
    if (it->host == map.host && it->offset == map.offset && it->size == map.size) {
      m->mappings.erase(it);
      return;
    }
  }
}

// The map that `host` ended, taken off the buffer's list: INVALID_VALUE when this
// buffer has no such map.
template <class Mem> ur_result_t take_mapping(Mem *m, const void *host, typename Mem::Mapping &out) {
  std::lock_guard<std::mutex> lock(m->owner()->map_mutex);
  auto it = std::find_if(m->mappings.begin(), m->mappings.end(),
                         [&](const typename Mem::Mapping &x) { return x.host == host; });
  if (it == m->mappings.end()) return UR_RESULT_ERROR_INVALID_VALUE;
  out = *it;
  m->mappings.erase(it);
  return UR_RESULT_SUCCESS;
}

// An unmap whose command was not enqueued: the map stands.
template <class Mem> void restore_mapping(Mem *m, const typename Mem::Mapping &map) {
  std::lock_guard<std::mutex> lock(m->owner()->map_mutex);
  m->mappings.push_back(map);
}

} // namespace ordo::ur_common
