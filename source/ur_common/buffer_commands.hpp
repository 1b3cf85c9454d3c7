// SPDX-License-Identifier: Apache-2.0
// The buffer commands' entry points (urEnqueueMemBuffer* and urEnqueueMemUnmap) for the
// adapters whose buffers are one address range (Level Zero, the stream backend): the
// argument checks in their order and the map records, written once; the adapter's hooks
// make the commands. A hooks struct `H` gives:
//
//   using Queue = ...; using Mem = ...;  // Mem derives from mem_object (memory.hpp)
//   // The queue and a buffer for fills, rectangles and maps (read, write and copy take
//   // queue_and_any_buffer below).
//   static ur_result_t queue_and_buffer(ur_queue_handle_t, ur_mem_handle_t, Queue *&, Mem *&);
//   static ur_result_t check_wait_list(uint32_t, const ur_event_handle_t *);
//   // The commands, once their arguments are checked; `foreign`: a buffer of another
//   // context that has the queue's device.
//   static ur_result_t read(Queue *, Mem *, bool blocking, size_t offset, size_t size, void *dst, bool foreign,
//                           uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   static ur_result_t write(Queue *, Mem *, bool blocking, size_t offset, size_t size, const void *src,
//                            bool foreign, uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   static ur_result_t copy(Queue *, Mem *src, Mem *dst, size_t srcOffset, size_t dstOffset, size_t size,
//                           bool foreign, uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   static ur_result_t fill(Queue *, Mem *, const void *pattern, size_t patternSize, size_t offset, size_t size,
//                           uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   // Read (READ_RECT) or write (WRITE_RECT) rectangle: both sides resolved, the
//   // buffer's inside it; the hook may refuse what its driver cannot do.
//   static ur_result_t host_rect(Queue *, Mem *, ur_command_t, bool blocking, const ordo::rect_side &bs,
//                                uint8_t *host, const ordo::rect_side &hs, const ur_rect_region_t &,
//                                uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   static ur_result_t copy_rect(Queue *, Mem *src, const ordo::rect_side &, Mem *dst, const ordo::rect_side &,
//                                const ur_rect_region_t &, uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   // Where a map of `offset` lands (`direct`: the buffer's bytes themselves).
//   static ur_result_t map_host(Mem *, size_t offset, uint8_t *&host, bool &direct);
//   // The map's command: copies `size` bytes at `offset` to `host` when `copy`.
//   static ur_result_t map(Queue *, Mem *, bool blocking, uint8_t *host, size_t offset, size_t size, bool copy,
//                          uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
//   // The unmap's command: copies the mapped range back when map.write_back.
//   static ur_result_t unmap(Queue *, Mem *, const typename Mem::Mapping &, uint32_t,
//                            const ur_event_handle_t *, ur_event_handle_t *);
//   // Optional: `static constexpr bool own_context_only = true;` where read, write and
//   // copy take buffers of the queue's context only (H::queue_and_buffer, never
//   // `foreign`). Mem then needs only size, Mapping, mappings, map_mutex and owner()
//   // (native CPU's Mem).
//   // Optional: the adapter's own checks of read, write, copy, fill and the rectangles
//   // right after the handles, before any of the template's (`b` is `a` for a command
//   // on one buffer): OpenCL's wait list, then the buffers' context, in OpenCL's order.
//   static ur_result_t check_command(Queue *, Mem *a, Mem *b, uint32_t, const ur_event_handle_t *);
//   // Optional: where a buffer's bytes lie in its root buffer (buffer_place below), for
//   // the overlap rule of copies; without it Mem's owner() and root_offset() (mem_object).
//   static buffer_place place(Mem *);
//
// A copy (urEnqueueMemBufferCopy, urEnqueueMemBufferCopyRect) whose source and destination
// share a byte of one buffer (the same handle, a buffer and its sub-buffer, two sub-buffers
// of one buffer) is refused with OVERLAPPING_REGIONS before anything is enqueued, on every
// adapter: UR defines that code for copies that do not support overlap, lists no result for
// an overlapping copy, and both analogues refuse it (clEnqueueCopyBuffer's
// CL_MEM_COPY_OVERLAP, zeCommandListAppendMemoryCopy's overlapping regions).
// Rectangles that only interleave (the rows of one between those of the other) share no
// byte and are copied. docs/bad-input.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>

#include "ordo/mem_rules.hpp"
#include "ordo/object.hpp"
#include "ordo/rect.hpp"
#include "ur_api.h"
#include "ur_common/memory.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// The queue and a buffer of the queue's context only.
template <class Queue, class Mem>
ur_result_t queue_and_own_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
  if (ur_result_t r = ordo::unwrap(hQueue, q)) return r;
  if (ur_result_t r = ordo::unwrap(hMem, m)) return r;
  if (m->ctx != q->ctx) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}

// The queue and a buffer of its context, or of another context that has the queue's
// device (`foreign` set); any other is refused.
template <class Queue, class Mem>
ur_result_t queue_and_any_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m, bool &foreign) {
  if (ur_result_t r = ordo::unwrap(hQueue, q)) return r;
  if (ur_result_t r = ordo::unwrap(hMem, m)) return r;
  if (m->ctx != q->ctx) {
    if (m->ctx->index_of(q->dev) < 0) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    foreign = true;
  }
  return UR_RESULT_SUCCESS;
}

// The host copy of a root buffer, made at its first map by `alloc(void **)`.
template <class Mem, class Alloc> ur_result_t host_mirror(Mem *root, uint8_t **out, Alloc &&alloc) {
  std::lock_guard<std::mutex> lock(root->map_mutex);
  if (!root->mirror) {
    void *p = nullptr;
    if (ur_result_t r = alloc(&p)) return r;
    root->mirror = static_cast<uint8_t *>(p);
    root->own_mirror = true;
  }
  *out = root->mirror;
  return UR_RESULT_SUCCESS;
}

// Where a buffer's bytes lie: its root buffer and their offset in it.
struct buffer_place {
  const void *root;
  size_t offset;
};

template <class H, class = void> struct has_place : std::false_type {};
template <class H>
struct has_place<H, std::void_t<decltype(H::place(std::declval<typename H::Mem *>()))>> : std::true_type {};

template <class H, class = void> struct own_context_only : std::false_type {};
template <class H>
struct own_context_only<H, std::void_t<decltype(H::own_context_only)>>
    : std::integral_constant<bool, H::own_context_only> {};

template <class H, class = void> struct has_check_command : std::false_type {};
template <class H>
struct has_check_command<H, std::void_t<decltype(H::check_command(nullptr, nullptr, nullptr, 0, nullptr))>>
    : std::true_type {};

template <class H> struct buffer_commands {
  using Queue = typename H::Queue;
  using Mem = typename H::Mem;

  static ur_result_t check_command(Queue *q, Mem *a, Mem *b, uint32_t n, const ur_event_handle_t *waits) {
    if constexpr (has_check_command<H>::value)
      return H::check_command(q, a, b, n, waits);
    else
      return UR_RESULT_SUCCESS;
  }

  static buffer_place place(Mem *m) {
    if constexpr (has_place<H>::value)
      return H::place(m);
    else
      return buffer_place{m->owner(), m->root_offset()};
  }

  // OVERLAPPING_REGIONS for a copy between bytes of one buffer that share a byte (above).
  static ur_result_t check_copy_overlap(Mem *src, size_t srcOffset, Mem *dst, size_t dstOffset, size_t size) {
    const buffer_place s = place(src), d = place(dst);
    if (s.root == d.root && ordo::spans_overlap(s.offset + srcOffset, size, d.offset + dstOffset, size))
      return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t check_copy_overlap(Mem *src, const ordo::rect_side &ss, Mem *dst, const ordo::rect_side &ds,
                                        const ur_rect_region_t &region) {
    const buffer_place s = place(src), d = place(dst);
    if (s.root == d.root && ordo::rect_sides_overlap(s.offset, ss, d.offset, ds, region))
      return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
    return UR_RESULT_SUCCESS;
  }

  // The queue and a buffer for read, write and copy.
  static ur_result_t queue_and_any_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m,
                                          bool &foreign) {
    if constexpr (own_context_only<H>::value) {
      (void)foreign;
      return H::queue_and_buffer(hQueue, hMem, q, m);
    } else
      return ordo::ur_common::queue_and_any_buffer(hQueue, hMem, q, m, foreign);
  }

  static ur_result_t UR_APICALL read(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking, size_t offset,
                                     size_t size, void *pDst, uint32_t n, const ur_event_handle_t *waits,
                                     ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *m;
    bool foreign = false;
    if (ur_result_t r = queue_and_any_buffer(hQueue, hBuffer, q, m, foreign)) return r;
    if (ur_result_t r = check_command(q, m, m, n, waits)) return r;
    if (!pDst) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!ordo::mem::range_inside(offset, size, m->size)) return UR_RESULT_ERROR_INVALID_SIZE;
    return H::read(q, m, blocking, offset, size, pDst, foreign, n, waits, phEvent);
  }

  static ur_result_t UR_APICALL write(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking, size_t offset,
                                      size_t size, const void *pSrc, uint32_t n, const ur_event_handle_t *waits,
                                      ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *m;
    bool foreign = false;
    if (ur_result_t r = queue_and_any_buffer(hQueue, hBuffer, q, m, foreign)) return r;
    if (ur_result_t r = check_command(q, m, m, n, waits)) return r;
    if (!pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!ordo::mem::range_inside(offset, size, m->size)) return UR_RESULT_ERROR_INVALID_SIZE;
    return H::write(q, m, blocking, offset, size, pSrc, foreign, n, waits, phEvent);
  }

  static ur_result_t UR_APICALL copy(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                     size_t srcOffset, size_t dstOffset, size_t size, uint32_t n,
                                     const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *src, *dst;
    bool foreign = false;
    if (ur_result_t r = queue_and_any_buffer(hQueue, hSrc, q, src, foreign)) return r;
    if (ur_result_t r = queue_and_any_buffer(hQueue, hDst, q, dst, foreign)) return r;
    if (ur_result_t r = check_command(q, src, dst, n, waits)) return r;
    if (!ordo::mem::range_inside(srcOffset, size, src->size) || !ordo::mem::range_inside(dstOffset, size, dst->size))
      return UR_RESULT_ERROR_INVALID_SIZE;
    if (ur_result_t r = check_copy_overlap(src, srcOffset, dst, dstOffset, size)) return r;
    return H::copy(q, src, dst, srcOffset, dstOffset, size, foreign, n, waits, phEvent);
  }

  // The pattern is a power of two bytes; offset and size are whole patterns.
  static ur_result_t UR_APICALL fill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, const void *pPattern,
                                     size_t patternSize, size_t offset, size_t size, uint32_t n,
                                     const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *m;
    if (ur_result_t r = H::queue_and_buffer(hQueue, hBuffer, q, m)) return r;
    if (ur_result_t r = check_command(q, m, m, n, waits)) return r;
    if (ur_result_t r = check_fill(pPattern, patternSize, offset, size, m->size)) return r;
    return H::fill(q, m, pPattern, patternSize, offset, size, n, waits, phEvent);
  }

  // Read and write rectangles: the buffer's side must lie inside it; the host side is the
  // caller's.
  static ur_result_t host_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, ur_command_t type, bool blocking,
                               ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin, ur_rect_region_t region,
                               size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch,
                               size_t hostSlicePitch, void *host, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *m;
    if (ur_result_t r = H::queue_and_buffer(hQueue, hBuffer, q, m)) return r;
    if (ur_result_t r = check_command(q, m, m, n, waits)) return r;
    ordo::rect_side bs, hs;
    if (ur_result_t r = resolve_host_rect(host, bufferOrigin, hostOrigin, region, bufferRowPitch, bufferSlicePitch,
                                          hostRowPitch, hostSlicePitch, m->size, bs, hs))
      return r;
    return H::host_rect(q, m, type, blocking, bs, static_cast<uint8_t *>(host), hs, region, n, waits, phEvent);
  }

  static ur_result_t UR_APICALL copy_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                          ur_rect_offset_t srcOrigin, ur_rect_offset_t dstOrigin,
                                          ur_rect_region_t region, size_t srcRowPitch, size_t srcSlicePitch,
                                          size_t dstRowPitch, size_t dstSlicePitch, uint32_t n,
                                          const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *src, *dst;
    if (ur_result_t r = H::queue_and_buffer(hQueue, hSrc, q, src)) return r;
    if (ur_result_t r = H::queue_and_buffer(hQueue, hDst, q, dst)) return r;
    if (ur_result_t r = check_command(q, src, dst, n, waits)) return r;
    ordo::rect_side ss, ds;
    if (ur_result_t r = resolve_copy_rect(srcOrigin, dstOrigin, region, srcRowPitch, srcSlicePitch, dstRowPitch,
                                          dstSlicePitch, src->size, dst->size, ss, ds))
      return r;
    if (ur_result_t r = check_copy_overlap(src, ss, dst, ds, region)) return r;
    return H::copy_rect(q, src, ss, dst, ds, region, n, waits, phEvent);
  }

  // A map is written down before its command (an unmap may follow at once). A direct map
  // (the buffer's own bytes) copies nothing either way; an invalidating one copies
  // nothing in but its range back.
  static ur_result_t UR_APICALL map(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                    ur_map_flags_t mapFlags, size_t offset, size_t size, uint32_t n,
                                    const ur_event_handle_t *waits, ur_event_handle_t *phEvent, void **ppRetMap) {
    Queue *q;
    Mem *m;
    if (ur_result_t r = H::queue_and_buffer(hQueue, hBuffer, q, m)) return r;
    if (ur_result_t r = check_map(ppRetMap, mapFlags, offset, size, m->size)) return r;
    if (ur_result_t r = H::check_wait_list(n, waits)) return r;
    uint8_t *host = nullptr;
    bool direct = false;
    if (ur_result_t r = H::map_host(m, offset, host, direct)) return r;
    const bool invalidate = mapFlags & UR_MAP_FLAG_WRITE_INVALIDATE_REGION;
    const bool write_back = !direct && (invalidate || (mapFlags & UR_MAP_FLAG_WRITE) || mapFlags == 0);
    const typename Mem::Mapping map{host, offset, size, write_back};
    if (ur_result_t r = add_mapping(m, map)) return r;
    if (ur_result_t r = H::map(q, m, blocking, host, offset, size, !(direct || invalidate), n, waits, phEvent)) {
      strike_mapping(m, map);
      return r;
    }
    *ppRetMap = host;
    return UR_RESULT_SUCCESS;
  }

  // Each map is ended by one unmap of the pointer it returned, on this buffer.
  static ur_result_t UR_APICALL unmap(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, void *pMappedPtr, uint32_t n,
                                      const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q;
    Mem *m;
    if (ur_result_t r = H::queue_and_buffer(hQueue, hMem, q, m)) return r;
    if (!pMappedPtr) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = H::check_wait_list(n, waits)) return r;
    typename Mem::Mapping map{};
    if (ur_result_t r = take_mapping(m, pMappedPtr, map)) return r;
    ur_result_t r = H::unmap(q, m, map, n, waits, phEvent);
    if (r != UR_RESULT_SUCCESS) restore_mapping(m, map); // nothing was enqueued: the map stands
    return r;
  }

  static void install(ur_dditable_t &t) {
    t.Enqueue.pfnMemBufferRead = read;
    t.Enqueue.pfnMemBufferWrite = write;
    t.Enqueue.pfnMemBufferReadRect = enqueue_read_rect<host_rect>;
    t.Enqueue.pfnMemBufferWriteRect = enqueue_write_rect<host_rect>;
    t.Enqueue.pfnMemBufferCopy = copy;
    t.Enqueue.pfnMemBufferCopyRect = copy_rect;
    t.Enqueue.pfnMemBufferFill = fill;
    t.Enqueue.pfnMemBufferMap = map;
    t.Enqueue.pfnMemUnmap = unmap;
  }
};

} // namespace ordo::ur_common
