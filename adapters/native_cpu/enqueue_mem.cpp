// SPDX-License-Identifier: Apache-2.0
// Buffer commands: urEnqueueMemBuffer{Read,Write,Copy,Fill,ReadRect,WriteRect,CopyRect,Map}
// and urEnqueueMemUnmap. Each is a scheduler command like any other (wait lists, events,
// in-order chaining, failure propagation) that holds its buffers until it has run, so a
// buffer released meanwhile stays valid for it. A buffer is host memory: map returns
// its bytes, and unmap has nothing to write back.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "context.hpp"
#include "entry_points.hpp"
#include "logging.hpp"
#include "memory.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

namespace {

// The queue and a buffer of its context.
ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
  q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  m = lookup<Mem>(hMem);
  if (!m) return Mem::invalid_handle(hMem);
  if (m->context != q->context) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}

// [offset, offset + size) is a non-empty range of the buffer.
bool in_bounds(const Mem &m, size_t offset, size_t size) { return ordo::mem::range_inside(offset, size, m.size); }

bool overlap(const char *a, size_t a_size, const char *b, size_t b_size) { return a < b + b_size && b < a + a_size; }

// ---- rectangles ----

using RectSide = ordo::rect_side;

void copy_rect(char *dst, const RectSide &ds, const char *src, const RectSide &ss, const ur_rect_region_t &region) {
  for (size_t z = 0; z < region.depth; ++z)
    for (size_t y = 0; y < region.height; ++y)
      std::memcpy(dst + ds.first + z * ds.slice + y * ds.row, src + ss.first + z * ss.slice + y * ss.row, region.width);
}

// A rectangular copy as a command. When the two sides' bytes overlap (a copy within
// one buffer, or host memory that is the buffer's own), the rectangle goes through a
// staging copy, so the result is as if the source were read whole before any write.
ur_result_t submit_rect(Queue &q, ur_command_t type, bool blocking, char *dst, const RectSide &ds, const char *src,
                        const RectSide &ss, const ur_rect_region_t &region, std::vector<Ref<Mem>> held,
                        uint32_t numEvents, const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  CommandBuilder cmd(q, type);
  if (ur_result_t r = cmd.set_wait_list(numEvents, phEvents)) return r;
  std::vector<char> staging;
  if (overlap(dst + ds.first, ds.end - ds.first, src + ss.first, ss.end - ss.first))
    staging.resize(region.width * region.height * region.depth); // may throw: nothing enqueued yet
  cmd.set_work(make_work([dst, ds, src, ss, region, held = std::move(held), staging = std::move(staging)]() mutable {
    if (staging.empty()) {
      copy_rect(dst, ds, src, ss, region);
    } else {
      RectSide tight;
      tight.row = region.width;
      tight.slice = region.width * region.height;
      copy_rect(staging.data(), tight, src, ss, region);
      copy_rect(dst, ds, staging.data(), tight, region);
    }
    return UR_RESULT_SUCCESS;
  }));
  return cmd.submit(phEvent, blocking);
}

// ---- read, write, copy, fill ----

ur_result_t UR_APICALL urEnqueueMemBufferRead(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingRead,
                                              size_t offset, size_t size, void *pDst, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!pDst) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!in_bounds(*m, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit_work(*q, UR_COMMAND_MEM_BUFFER_READ, numEventsInWaitList, phEventWaitList, phEvent, blockingRead,
                     [buffer = Ref<Mem>(m), offset, size, pDst] {
                       std::memmove(pDst, buffer->data + offset, size); // the host memory may be the buffer's own
                     });
}

ur_result_t UR_APICALL urEnqueueMemBufferWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingWrite,
                                               size_t offset, size_t size, const void *pSrc,
                                               uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                               ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!in_bounds(*m, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit_work(*q, UR_COMMAND_MEM_BUFFER_WRITE, numEventsInWaitList, phEventWaitList, phEvent, blockingWrite,
                     [buffer = Ref<Mem>(m), offset, size, pSrc] { std::memmove(buffer->data + offset, pSrc, size); });
}

// Overlapping ranges (one buffer, or a buffer and its sub-buffer) copy as if through a
// staging buffer.
ur_result_t UR_APICALL urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                              ur_mem_handle_t hBufferDst, size_t srcOffset, size_t dstOffset,
                                              size_t size, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *src, *dst;
  if (ur_result_t r = queue_and_buffer(hQueue, hBufferSrc, q, src)) return r;
  if (ur_result_t r = queue_and_buffer(hQueue, hBufferDst, q, dst)) return r;
  if (!in_bounds(*src, srcOffset, size) || !in_bounds(*dst, dstOffset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit_work(*q, UR_COMMAND_MEM_BUFFER_COPY, numEventsInWaitList, phEventWaitList, phEvent, false,
                     [s = Ref<Mem>(src), d = Ref<Mem>(dst), srcOffset, dstOffset, size] {
                       std::memmove(d->data + dstOffset, s->data + srcOffset, size);
                     });
}

// Repeats `pattern` (a power of two bytes) over [dst, dst + bytes).
void fill_pattern(char *dst, size_t bytes, const std::vector<char> &pattern) {
  const size_t n = pattern.size();
  if (n == 1) {
    std::memset(dst, pattern[0], bytes);
    return;
  }
  std::memcpy(dst, pattern.data(), n);
  for (size_t done = n; done < bytes;) { // doubling copies of what is already filled
    size_t chunk = std::min(done, bytes - done);
    std::memcpy(dst + done, dst, chunk);
    done += chunk;
  }
}

ur_result_t UR_APICALL urEnqueueMemBufferFill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, const void *pPattern,
                                              size_t patternSize, size_t offset, size_t size,
                                              uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                              ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (patternSize == 0 || size == 0 || patternSize > size || (patternSize & (patternSize - 1)) != 0 ||
      size % patternSize != 0 || offset % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (!in_bounds(*m, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  const char *pat = static_cast<const char *>(pPattern);
  return submit_work(*q, UR_COMMAND_MEM_BUFFER_FILL, numEventsInWaitList, phEventWaitList, phEvent, false,
                     [buffer = Ref<Mem>(m), offset, size, pattern = std::vector<char>(pat, pat + patternSize)] {
                       fill_pattern(buffer->data + offset, size, pattern);
                     });
}

// ---- rectangles: buffer <-> host, buffer -> buffer ----

// Read and write: the buffer side must lie inside the buffer; the host side is the
// caller's to size.
ur_result_t buffer_host_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, ur_command_t type, bool blocking,
                             ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin, ur_rect_region_t region,
                             size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch, size_t hostSlicePitch,
                             void *host, uint32_t numEvents, const ur_event_handle_t *phEvents,
                             ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!host) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  RectSide bs, hs;
  if (ur_result_t r = ordo::resolve_rect_side(bufferOrigin, region, bufferRowPitch, bufferSlicePitch, bs)) return r;
  if (ur_result_t r = ordo::resolve_rect_side(hostOrigin, region, hostRowPitch, hostSlicePitch, hs)) return r;
  if (bs.end > m->size) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<Ref<Mem>> held{Ref<Mem>(m)};
  char *h = static_cast<char *>(host);
  if (type == UR_COMMAND_MEM_BUFFER_READ_RECT)
    return submit_rect(*q, type, blocking, h, hs, m->data, bs, region, std::move(held), numEvents, phEvents, phEvent);
  return submit_rect(*q, type, blocking, m->data, bs, h, hs, region, std::move(held), numEvents, phEvents, phEvent);
}

// urEnqueueMemBufferReadRect and WriteRect: one signature, the direction apart.
template <ur_command_t type>
ur_result_t UR_APICALL enqueueBufferHostRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                             ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                             ur_rect_region_t region, size_t bufferRowPitch, size_t bufferSlicePitch,
                                             size_t hostRowPitch, size_t hostSlicePitch, void *pHost,
                                             uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                             ur_event_handle_t *phEvent) {
  return buffer_host_rect(hQueue, hBuffer, type, blocking, bufferOrigin, hostOrigin, region, bufferRowPitch,
                          bufferSlicePitch, hostRowPitch, hostSlicePitch, pHost, numEventsInWaitList, phEventWaitList,
                          phEvent);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopyRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                                  ur_mem_handle_t hBufferDst, ur_rect_offset_t srcOrigin,
                                                  ur_rect_offset_t dstOrigin, ur_rect_region_t region,
                                                  size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch,
                                                  size_t dstSlicePitch, uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList,
                                                  ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *src, *dst;
  if (ur_result_t r = queue_and_buffer(hQueue, hBufferSrc, q, src)) return r;
  if (ur_result_t r = queue_and_buffer(hQueue, hBufferDst, q, dst)) return r;
  RectSide ss, ds;
  if (ur_result_t r = ordo::resolve_rect_side(srcOrigin, region, srcRowPitch, srcSlicePitch, ss)) return r;
  if (ur_result_t r = ordo::resolve_rect_side(dstOrigin, region, dstRowPitch, dstSlicePitch, ds)) return r;
  if (ss.end > src->size || ds.end > dst->size) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<Ref<Mem>> held{Ref<Mem>(src), Ref<Mem>(dst)};
  return submit_rect(*q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, dst->data, ds, src->data, ss, region, std::move(held),
                     numEventsInWaitList, phEventWaitList, phEvent);
}

// ---- map and unmap ----

// The map is the buffer's own bytes at `offset`, returned at once; the command (and
// a blocking call) completes when its wait list and queue order allow the caller to
// use them. Each map is remembered until an unmap of that pointer.
ur_result_t UR_APICALL urEnqueueMemBufferMap(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingMap,
                                             ur_map_flags_t mapFlags, size_t offset, size_t size,
                                             uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                             ur_event_handle_t *phEvent, void **ppRetMap) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (!ppRetMap) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (mapFlags & UR_MAP_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!ordo::mem::map_flags_ok(mapFlags)) return UR_RESULT_ERROR_INVALID_VALUE; // clEnqueueMapBuffer's rule
  if (!in_bounds(*m, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  CommandBuilder cmd(*q, UR_COMMAND_MEM_BUFFER_MAP);
  if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  void *p = m->data + offset;
  auto forget = [&] {
    std::lock_guard<std::mutex> lock(m->map_mu);
    auto it = std::find(m->mappings.begin(), m->mappings.end(), p);
    if (it != m->mappings.end()) m->mappings.erase(it);
  };
  {
    std::lock_guard<std::mutex> lock(m->map_mu);
    m->mappings.push_back(p); // before the command: an unmap may follow at once
  }
  ur_result_t r;
  try {
    r = cmd.submit(phEvent, blockingMap);
  } catch (...) {
    forget();
    throw;
  }
  if (r != UR_RESULT_SUCCESS) { // a blocking map whose dependencies failed
    forget();
    return r;
  }
  *ppRetMap = p;
  return UR_RESULT_SUCCESS;
}

// The pointer must come from a map of this buffer not yet unmapped (each map, one unmap).
ur_result_t UR_APICALL urEnqueueMemUnmap(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, void *pMappedPtr,
                                         uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                         ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hMem, q, m)) return r;
  if (!pMappedPtr) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  CommandBuilder cmd(*q, UR_COMMAND_MEM_UNMAP);
  if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  {
    std::lock_guard<std::mutex> lock(m->map_mu);
    auto it = std::find(m->mappings.begin(), m->mappings.end(), pMappedPtr);
    if (it == m->mappings.end()) {
      NC_LOG(info, "urEnqueueMemUnmap: %p is not mapped from this buffer", pMappedPtr);
      return UR_RESULT_ERROR_INVALID_VALUE;
    }
    m->mappings.erase(it);
  }
  try {
    return cmd.submit(phEvent);
  } catch (...) {
    std::lock_guard<std::mutex> lock(m->map_mu);
    m->mappings.push_back(pMappedPtr); // nothing was enqueued: the map stands
    throw;
  }
}

} // namespace

void install_enqueue_mem_entry_points(ur_dditable_t &t) {
  t.Enqueue.pfnMemBufferRead = urEnqueueMemBufferRead;
  t.Enqueue.pfnMemBufferWrite = urEnqueueMemBufferWrite;
  t.Enqueue.pfnMemBufferReadRect = enqueueBufferHostRect<UR_COMMAND_MEM_BUFFER_READ_RECT>;
  t.Enqueue.pfnMemBufferWriteRect = enqueueBufferHostRect<UR_COMMAND_MEM_BUFFER_WRITE_RECT>;
  t.Enqueue.pfnMemBufferCopy = urEnqueueMemBufferCopy;
  t.Enqueue.pfnMemBufferCopyRect = urEnqueueMemBufferCopyRect;
  t.Enqueue.pfnMemBufferFill = urEnqueueMemBufferFill;
  t.Enqueue.pfnMemBufferMap = urEnqueueMemBufferMap;
  t.Enqueue.pfnMemUnmap = urEnqueueMemUnmap;
}

} // namespace ordo::native_cpu
