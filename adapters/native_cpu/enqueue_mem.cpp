// SPDX-License-Identifier: Apache-2.0
// Buffer commands: urEnqueueMemBuffer{Read,Write,Copy,Fill,ReadRect,WriteRect,CopyRect,Map}
// and urEnqueueMemUnmap. Each is a scheduler command like any other (wait lists, events,
// in-order chaining, failure propagation) that holds its buffers until it has run, so a
// buffer released meanwhile stays valid for it. A buffer is host memory: read, write and
// copy are copies of rectangles (one row for the plain ones), map returns the buffer's
// bytes, and unmap has nothing to write back.
#include <algorithm>
#include <cstring>
#include <vector>

#include "context.hpp"
#include "entry_points.hpp"
#include "logging.hpp"
#include "memory.hpp"
#include "ordo/rect.hpp"
#include "queue.hpp"
#include "ur_common/memory.hpp"

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
  if (dst + ds.first < src + ss.end && src + ss.first < dst + ds.end)
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

// Read and write (plain and rectangles): the buffer side must lie inside the buffer; the
// host side is the caller's to size.
ur_result_t buffer_host_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, ur_command_t type, bool blocking,
                             ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin, ur_rect_region_t region,
                             size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch, size_t hostSlicePitch,
                             void *host, uint32_t numEvents, const ur_event_handle_t *phEvents,
                             ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  RectSide bs, hs;
  if (ur_result_t r =
          ordo::ur_common::resolve_host_rect(host, bufferOrigin, hostOrigin, region, bufferRowPitch, bufferSlicePitch,
                                             hostRowPitch, hostSlicePitch, m->size, bs, hs))
    return r;
  std::vector<Ref<Mem>> held{Ref<Mem>(m)};
  char *h = static_cast<char *>(host);
  if (type == UR_COMMAND_MEM_BUFFER_READ_RECT || type == UR_COMMAND_MEM_BUFFER_READ)
    return submit_rect(*q, type, blocking, h, hs, m->data, bs, region, std::move(held), numEvents, phEvents, phEvent);
  return submit_rect(*q, type, blocking, m->data, bs, h, hs, region, std::move(held), numEvents, phEvents, phEvent);
}

ur_result_t UR_APICALL urEnqueueMemBufferRead(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingRead,
                                              size_t offset, size_t size, void *pDst, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  return buffer_host_rect(hQueue, hBuffer, UR_COMMAND_MEM_BUFFER_READ, blockingRead, {offset, 0, 0}, {0, 0, 0},
                          {size, 1, 1}, 0, 0, 0, 0, pDst, numEventsInWaitList, phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueMemBufferWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingWrite,
                                               size_t offset, size_t size, const void *pSrc,
                                               uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                               ur_event_handle_t *phEvent) {
  return buffer_host_rect(hQueue, hBuffer, UR_COMMAND_MEM_BUFFER_WRITE, blockingWrite, {offset, 0, 0}, {0, 0, 0},
                          {size, 1, 1}, 0, 0, 0, 0, const_cast<void *>(pSrc), numEventsInWaitList, phEventWaitList,
                          phEvent);
}

// Buffer to buffer (plain and rectangles): both sides inside their buffers.
ur_result_t buffer_copy_rect(ur_queue_handle_t hQueue, ur_command_t type, ur_mem_handle_t hBufferSrc,
                             ur_mem_handle_t hBufferDst, ur_rect_offset_t srcOrigin, ur_rect_offset_t dstOrigin,
                             ur_rect_region_t region, size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch,
                             size_t dstSlicePitch, uint32_t numEvents, const ur_event_handle_t *phEvents,
                             ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *src, *dst;
  if (ur_result_t r = queue_and_buffer(hQueue, hBufferSrc, q, src)) return r;
  if (ur_result_t r = queue_and_buffer(hQueue, hBufferDst, q, dst)) return r;
  RectSide ss, ds;
  if (ur_result_t r = ordo::ur_common::resolve_copy_rect(srcOrigin, dstOrigin, region, srcRowPitch, srcSlicePitch,
                                                         dstRowPitch, dstSlicePitch, src->size, dst->size, ss, ds))
    return r;
  return submit_rect(*q, type, false, dst->data, ds, src->data, ss, region, {Ref<Mem>(src), Ref<Mem>(dst)}, numEvents,
                     phEvents, phEvent);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                              ur_mem_handle_t hBufferDst, size_t srcOffset, size_t dstOffset,
                                              size_t size, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  return buffer_copy_rect(hQueue, UR_COMMAND_MEM_BUFFER_COPY, hBufferSrc, hBufferDst, {srcOffset, 0, 0},
                          {dstOffset, 0, 0}, {size, 1, 1}, 0, 0, 0, 0, numEventsInWaitList, phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopyRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                                  ur_mem_handle_t hBufferDst, ur_rect_offset_t srcOrigin,
                                                  ur_rect_offset_t dstOrigin, ur_rect_region_t region,
                                                  size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch,
                                                  size_t dstSlicePitch, uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList,
                                                  ur_event_handle_t *phEvent) {
  return buffer_copy_rect(hQueue, UR_COMMAND_MEM_BUFFER_COPY_RECT, hBufferSrc, hBufferDst, srcOrigin, dstOrigin, region,
                          srcRowPitch, srcSlicePitch, dstRowPitch, dstSlicePitch, numEventsInWaitList, phEventWaitList,
                          phEvent);
}

ur_result_t UR_APICALL urEnqueueMemBufferFill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, const void *pPattern,
                                              size_t patternSize, size_t offset, size_t size,
                                              uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                              ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  if (ur_result_t r = queue_and_buffer(hQueue, hBuffer, q, m)) return r;
  if (ur_result_t r = ordo::ur_common::check_fill(pPattern, patternSize, offset, size, m->size)) return r;
  const char *pat = static_cast<const char *>(pPattern);
  return submit_work(*q, UR_COMMAND_MEM_BUFFER_FILL, numEventsInWaitList, phEventWaitList, phEvent, false,
                     [buffer = Ref<Mem>(m), offset, size, pattern = std::vector<char>(pat, pat + patternSize)] {
                       fill_pattern(buffer->data + offset, size, pattern);
                     });
}

// ---- map and unmap ----

void add_mapping(Mem &m, void *p) {
  std::lock_guard<std::mutex> lock(m.map_mu);
  m.mappings.push_back(p);
}

bool take_mapping(Mem &m, void *p) {
  std::lock_guard<std::mutex> lock(m.map_mu);
  auto it = std::find(m.mappings.begin(), m.mappings.end(), p);
  if (it == m.mappings.end()) return false;
  m.mappings.erase(it);
  return true;
}

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
  if (ur_result_t r = ordo::ur_common::check_map(ppRetMap, mapFlags, offset, size, m->size)) return r;
  CommandBuilder cmd(*q, UR_COMMAND_MEM_BUFFER_MAP);
  if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  void *p = m->data + offset;
  add_mapping(*m, p); // before the command: an unmap may follow at once
  ur_result_t r;
  try {
    r = cmd.submit(phEvent, blockingMap);
  } catch (...) {
    take_mapping(*m, p);
    throw;
  }
  if (r != UR_RESULT_SUCCESS) { // a blocking map whose dependencies failed
    take_mapping(*m, p);
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
  if (!take_mapping(*m, pMappedPtr)) {
    NC_LOG(info, "urEnqueueMemUnmap: %p is not mapped from this buffer", pMappedPtr);
    return UR_RESULT_ERROR_INVALID_VALUE;
  }
  try {
    return cmd.submit(phEvent);
  } catch (...) {
    add_mapping(*m, pMappedPtr); // nothing was enqueued: the map stands
    throw;
  }
}

} // namespace

void install_enqueue_mem_entry_points(ur_dditable_t &t) {
  t.Enqueue.pfnMemBufferRead = urEnqueueMemBufferRead;
  t.Enqueue.pfnMemBufferWrite = urEnqueueMemBufferWrite;
  t.Enqueue.pfnMemBufferReadRect = ordo::ur_common::enqueue_read_rect<buffer_host_rect>;
  t.Enqueue.pfnMemBufferWriteRect = ordo::ur_common::enqueue_write_rect<buffer_host_rect>;
  t.Enqueue.pfnMemBufferCopy = urEnqueueMemBufferCopy;
  t.Enqueue.pfnMemBufferCopyRect = urEnqueueMemBufferCopyRect;
  t.Enqueue.pfnMemBufferFill = urEnqueueMemBufferFill;
  t.Enqueue.pfnMemBufferMap = urEnqueueMemBufferMap;
  t.Enqueue.pfnMemUnmap = urEnqueueMemUnmap;
}

} // namespace ordo::native_cpu
