// SPDX-License-Identifier: Apache-2.0
// Buffer commands: read, write, copy, fill (1-D and rectangles), map and unmap. Each is
// one Command on the queue's stream; copies are the driver's (unified addresses on
// both sides, pageable host memory included). Maps go through the root buffer's host
// copy (memory.cpp): a map copies the range there unless it invalidates it, an unmap
// copies a written range back; host-storage buffers map their own bytes.
#include <algorithm>
#include <cstring>
#include <functional>

#include "backend.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"

namespace ordo::stream_backend {

namespace {

// A buffer of another context is taken when that context has the queue's device: every
// context of a device allocates in the device's one primary context, so the bytes are
// the device's own memory (docs/cuda.md, "Memory objects"). Any other is refused.
ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
  if (ur_result_t r = unwrap(hQueue, q)) return r;
  if (ur_result_t r = unwrap(hMem, m)) return r;
  if (m->ctx != q->ctx && m->ctx->index_of(q->dev) < 0) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}

bool overlap(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) { return a < b + bn && b < a + an; }

// Runs `work` as one command; waits for it when `blocking`.
template <class F>
ur_result_t submit(Queue *q, ur_command_t type, bool blocking, uint32_t n, const ur_event_handle_t *waits,
                   ur_event_handle_t *out, F &&work) {
  Command cmd(q, type, n, waits, out);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  stream_t s = cmd.stream();
  ur_result_t r = cmd.finish(to_ur(work(s)));
  if (r == UR_RESULT_SUCCESS && blocking) r = to_ur(drv::stream_synchronize(s));
  return r;
}

// A rectangle of `region` between two resolved sides, one 2-D copy per slice.
status copy_rect(uint8_t *dst, const ordo::rect_side &ds, const uint8_t *src, const ordo::rect_side &ss,
                 const ur_rect_region_t &region, stream_t s) {
  for (size_t z = 0; z < region.depth; ++z)
    if (status r = drv::memcpy_2d_async(dst + ds.first + z * ds.slice, ds.row, src + ss.first + z * ss.slice, ss.row,
                                        region.width, region.height, s))
      return r;
  return status{};
}

// Whether two rectangles of `region` share a byte: their rows are disjoint ascending
// runs of `width` bytes, so one walk over both lists finds any intersection.
bool rects_overlap(const uint8_t *a, const ordo::rect_side &as, const uint8_t *b, const ordo::rect_side &bs,
                   const ur_rect_region_t &region) {
  const size_t rows = region.height * region.depth, w = region.width;
  auto row_start = [&](const uint8_t *base, const ordo::rect_side &sd, size_t k) {
    return base + sd.first + (k / region.height) * sd.slice + (k % region.height) * sd.row;
  };
  for (size_t i = 0, j = 0; i < rows && j < rows;) {
    const uint8_t *x = row_start(a, as, i), *y = row_start(b, bs, j);
    if (overlap(x, w, y, w)) return true;
    if (x < y)
      ++i;
    else
      ++j;
  }
  return false;
}

// A copy whose two sides share bytes goes through temporary device memory, so the
// result is as if the source were read whole first. The call waits for the copy to end
// before the temporary memory goes (a rare case: copies within one buffer's bytes).
status staged_copy(const std::function<status(uint8_t *, stream_t)> &in,
                   const std::function<status(uint8_t *, stream_t)> &out, size_t bytes, stream_t s) {
  void *tmp = nullptr;
  if (status r = drv::alloc_device(&tmp, bytes)) return r;
  auto *t = static_cast<uint8_t *>(tmp);
  status r = in(t, s);
  if (!r) r = out(t, s);
  status w = drv::stream_synchronize(s);
  drv::free_device(tmp);
  return r ? r : w;
}

ur_result_t UR_APICALL urEnqueueMemBufferRead(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                              size_t offset, size_t size, void *pDst, uint32_t n,
                                              const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!pDst) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!ordo::mem::range_inside(offset, size, m->size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(q, UR_COMMAND_MEM_BUFFER_READ, blocking, n, waits, phEvent,
                [&](stream_t s) { return drv::memcpy_async(pDst, m->ptr + offset, size, s); });
}

ur_result_t UR_APICALL urEnqueueMemBufferWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                               size_t offset, size_t size, const void *pSrc, uint32_t n,
                                               const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!ordo::mem::range_inside(offset, size, m->size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(q, UR_COMMAND_MEM_BUFFER_WRITE, blocking, n, waits, phEvent,
                [&](stream_t s) { return drv::memcpy_async(m->ptr + offset, pSrc, size, s); });
}

// Overlapping ranges (a copy within one buffer's bytes) are staged (staged_copy).
ur_result_t UR_APICALL urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                              size_t srcOffset, size_t dstOffset, size_t size, uint32_t n,
                                              const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *src, *dst;
  if (ur_result_t r = queue_and_buffer(hQueue, hSrc, q, src)) return r;
  if (ur_result_t r = queue_and_buffer(hQueue, hDst, q, dst)) return r;
  if (!ordo::mem::range_inside(srcOffset, size, src->size) || !ordo::mem::range_inside(dstOffset, size, dst->size))
    return UR_RESULT_ERROR_INVALID_SIZE;
  uint8_t *from = src->ptr + srcOffset, *to = dst->ptr + dstOffset;
  const bool shared = overlap(from, size, to, size);
  return submit(q, UR_COMMAND_MEM_BUFFER_COPY, false, n, waits, phEvent, [&](stream_t s) {
    if (!shared) return drv::memcpy_async(to, from, size, s);
    return staged_copy([&](uint8_t *t, stream_t st) { return drv::memcpy_async(t, from, size, st); },
                       [&](uint8_t *t, stream_t st) { return drv::memcpy_async(to, t, size, st); }, size, s);
  });
}

// The pattern is a power of two bytes; offset and size are whole patterns.
ur_result_t UR_APICALL urEnqueueMemBufferFill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, const void *pPattern,
                                              size_t patternSize, size_t offset, size_t size, uint32_t n,
                                              const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (ur_result_t r = ordo::ur_common::check_fill(pPattern, patternSize, offset, size, m->size)) return r;
  return submit(q, UR_COMMAND_MEM_BUFFER_FILL, false, n, waits, phEvent, [&](stream_t s) {
    return fill_patterns(m->ptr + offset, static_cast<const uint8_t *>(pPattern), patternSize, size / patternSize, s);
  });
}

// Read and write rectangles: the buffer's side must lie inside it; the host side is the
// caller's.
ur_result_t host_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, ur_command_t type, bool blocking,
                      ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin, ur_rect_region_t region,
                      size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch, size_t hostSlicePitch,
                      void *host, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  ordo::rect_side bs, hs;
  if (ur_result_t r =
          ordo::ur_common::resolve_host_rect(host, bufferOrigin, hostOrigin, region, bufferRowPitch, bufferSlicePitch,
                                             hostRowPitch, hostSlicePitch, m->size, bs, hs))
    return r;
  auto *h = static_cast<uint8_t *>(host);
  // Host memory that is the buffer's own bytes (host storage) must not overlap the rectangle.
  if (rects_overlap(m->ptr, bs, h, hs, region)) return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
  const bool read = type == UR_COMMAND_MEM_BUFFER_READ_RECT;
  return submit(q, type, blocking, n, waits, phEvent, [&](stream_t s) {
    return read ? copy_rect(h, hs, m->ptr, bs, region, s) : copy_rect(m->ptr, bs, h, hs, region, s);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferCopyRect(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                                  ur_rect_offset_t srcOrigin, ur_rect_offset_t dstOrigin,
                                                  ur_rect_region_t region, size_t srcRowPitch, size_t srcSlicePitch,
                                                  size_t dstRowPitch, size_t dstSlicePitch, uint32_t n,
                                                  const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *src, *dst;
  if (ur_result_t r = queue_and_buffer(hQueue, hSrc, q, src)) return r;
  if (ur_result_t r = queue_and_buffer(hQueue, hDst, q, dst)) return r;
  ordo::rect_side ss, ds;
  if (ur_result_t r = ordo::ur_common::resolve_copy_rect(srcOrigin, dstOrigin, region, srcRowPitch, srcSlicePitch,
                                                         dstRowPitch, dstSlicePitch, src->size, dst->size, ss, ds))
    return r;
  const bool shared = rects_overlap(src->ptr, ss, dst->ptr, ds, region);
  return submit(q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, n, waits, phEvent, [&](stream_t s) {
    if (!shared) return copy_rect(dst->ptr, ds, src->ptr, ss, region, s);
    ordo::rect_side tight; // the rectangle alone, rows and slices back to back
    tight.row = region.width;
    tight.slice = region.width * region.height;
    tight.end = tight.slice * region.depth;
    return staged_copy([&](uint8_t *t, stream_t st) { return copy_rect(t, tight, src->ptr, ss, region, st); },
                       [&](uint8_t *t, stream_t st) { return copy_rect(dst->ptr, ds, t, tight, region, st); },
                       tight.end, s);
  });
}

// The host copy of a root buffer: the caller's memory, the host storage, or pinned
// memory made now.
ur_result_t mirror_of(Mem *root, uint8_t **out) {
  std::lock_guard<std::mutex> lock(root->map_mutex);
  if (!root->mirror) {
    ORDO_DRV(root->home->make_current());
    void *p = nullptr;
    status r = drv::alloc_host(&p, root->size);
    if (r.kind == err::out_of_memory) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    ORDO_DRV(r);
    root->mirror = static_cast<uint8_t *>(p);
    root->own_mirror = true;
  }
  *out = root->mirror;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEnqueueMemBufferMap(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                             ur_map_flags_t mapFlags, size_t offset, size_t size, uint32_t n,
                                             const ur_event_handle_t *waits, ur_event_handle_t *phEvent,
                                             void **ppRetMap) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (ur_result_t r = ordo::ur_common::check_map(ppRetMap, mapFlags, offset, size, m->size)) return r;
  if (ur_result_t r = check_wait_list(n, waits)) return r;
  Mem *root = m->owner();
  uint8_t *mirror = nullptr;
  if (ur_result_t r = mirror_of(root, &mirror)) return r;
  uint8_t *host = mirror + m->root_offset() + offset;
  const bool direct = host == m->ptr + offset; // host storage: the bytes themselves
  const bool invalidate = mapFlags & UR_MAP_FLAG_WRITE_INVALIDATE_REGION;
  const bool write_back = !direct && (invalidate || (mapFlags & UR_MAP_FLAG_WRITE) || mapFlags == 0);
  const Mem::Mapping map{host, offset, size, write_back};
  if (ur_result_t r = ordo::ur_common::add_mapping(m, map)) return r; // before the command: an unmap may follow at once
  ur_result_t r = submit(q, UR_COMMAND_MEM_BUFFER_MAP, blocking, n, waits, phEvent, [&](stream_t s) {
    return direct || invalidate ? status{} : drv::memcpy_async(host, m->ptr + offset, size, s);
  });
  if (r != UR_RESULT_SUCCESS) {
    ordo::ur_common::strike_mapping(m, map);
    return r;
  }
  *ppRetMap = host;
  return UR_RESULT_SUCCESS;
}

// Each map is ended by one unmap of the pointer it returned, on this buffer.
ur_result_t UR_APICALL urEnqueueMemUnmap(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, void *pMappedPtr, uint32_t n,
                                         const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hMem, q, m)) return r;
  if (!pMappedPtr) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_wait_list(n, waits)) return r;
  Mem::Mapping map{};
  if (ur_result_t r = ordo::ur_common::take_mapping(m, pMappedPtr, map)) return r;
  ur_result_t r = submit(q, UR_COMMAND_MEM_UNMAP, false, n, waits, phEvent, [&](stream_t s) {
    return map.write_back ? drv::memcpy_async(m->ptr + map.offset, map.host, map.size, s) : status{};
  });
  if (r != UR_RESULT_SUCCESS) ordo::ur_common::restore_mapping(m, map); // nothing was enqueued: the map stands
  return r;
}

} // namespace

void install_enqueue_mem_entry_points(ur_dditable_t &t) {
  t.Enqueue.pfnMemBufferRead = urEnqueueMemBufferRead;
  t.Enqueue.pfnMemBufferWrite = urEnqueueMemBufferWrite;
  t.Enqueue.pfnMemBufferReadRect = ordo::ur_common::enqueue_read_rect<host_rect>;
  t.Enqueue.pfnMemBufferWriteRect = ordo::ur_common::enqueue_write_rect<host_rect>;
  t.Enqueue.pfnMemBufferCopy = urEnqueueMemBufferCopy;
  t.Enqueue.pfnMemBufferCopyRect = urEnqueueMemBufferCopyRect;
  t.Enqueue.pfnMemBufferFill = urEnqueueMemBufferFill;
  t.Enqueue.pfnMemBufferMap = urEnqueueMemBufferMap;
  t.Enqueue.pfnMemUnmap = urEnqueueMemUnmap;
}

} // namespace ordo::stream_backend
