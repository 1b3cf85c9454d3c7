// SPDX-License-Identifier: Apache-2.0
// Buffer commands: read, write, copy, fill (1-D and rectangles), map and unmap. Each is
// one Command on a list of the queue (common.hpp) that holds its buffers until it has
// completed, so a buffer released meanwhile stays valid for it. Copies are
// zeCommandListAppendMemoryCopy / ...CopyRegion; two sides that share bytes go through
// host memory kept with the command's event. Maps of memory the host may use (host
// memory, the caller's memory of a USE_HOST_POINTER buffer) are the bytes themselves;
// maps of device memory go through a host copy of the root buffer (docs/level-zero.md).
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <new>
#include <vector>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"

namespace ordo::level_zero {

namespace {

// The queue and a buffer of its context; another context's buffer is refused (fills,
// rectangles, maps: read, write and copy take one, queue_and_any_buffer).
ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
  if (ur_result_t r = unwrap(hQueue, q)) return r;
  if (ur_result_t r = unwrap(hMem, m)) return r;
  if (m->ctx != q->ctx) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}

// The queue and a buffer for read, write and copy: of the queue's context, or of another
// context that has the queue's device (`foreign` set; UR's suite copies across contexts
// of one device). Level Zero lets a list touch only memory of its own context, so such a
// command is done on a host thread, each buffer through its own context (cross_context_copy).
ur_result_t queue_and_any_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m, bool &foreign) {
  if (ur_result_t r = unwrap(hQueue, q)) return r;
  if (ur_result_t r = unwrap(hMem, m)) return r;
  if (m->ctx != q->ctx) {
    if (m->ctx->index_of(q->dev) < 0) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    foreign = true;
  }
  return UR_RESULT_SUCCESS;
}

bool overlap(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) { return a < b + bn && b < a + an; }

// One side of a copy done on the host: a buffer's bytes (copied by its own context's
// synchronous list) or the caller's host memory (`mem` null).
struct HostSide {
  Mem *mem = nullptr;
  uint8_t *ptr = nullptr;
};

// The command's copy of `size` bytes, done on a host thread through host memory: the
// source into it, then it into the destination, each buffer only by a list of its own
// context. A failed copy is logged: Level Zero events carry no error.
ur_result_t cross_context_copy(Command &cmd, Device *dev, HostSide dst, HostSide src, size_t size) {
  return append_host_work(cmd, [dev, dst, src, size] {
    ur_result_t r = UR_RESULT_SUCCESS;
    try {
      std::vector<uint8_t> bounce(size);
      if (src.mem)
        r = copy_now(src.mem->ctx, dev, bounce.data(), src.ptr, size);
      else
        std::memcpy(bounce.data(), src.ptr, size);
      if (r == UR_RESULT_SUCCESS) {
        if (dst.mem)
          r = copy_now(dst.mem->ctx, dev, dst.ptr, bounce.data(), size);
        else
          std::memcpy(dst.ptr, bounce.data(), size);
      }
    } catch (const std::bad_alloc &) {
      r = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (r != UR_RESULT_SUCCESS)
      logger().log(LogLevel::warning, "a buffer copy across contexts failed (%d); its event completes anyway", int(r));
  });
}

// Runs one command: `work(cmd)` appends its work, the last append signalling
// cmd.signal(). The command holds `mems`; a blocking call waits for its event.
template <class F>
ur_result_t submit(Queue *q, ur_command_t type, bool blocking, uint32_t n, const ur_event_handle_t *waits,
                   ur_event_handle_t *phEvent, std::initializer_list<Mem *> mems, F &&work) {
  ur_event_handle_t own = nullptr;
  ur_event_handle_t *out = phEvent ? phEvent : blocking ? &own : nullptr;
  try {
    Command cmd(q, type, n, waits, out);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    for (Mem *m : mems) cmd.hold(m);
    if (ur_result_t r = cmd.finish(work(cmd))) return r;
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  ur_result_t r = UR_RESULT_SUCCESS;
  if (blocking) r = check(ze().zeEventHostSynchronize(reinterpret_cast<Event *>(*out)->ze.ev, UINT64_MAX));
  if (own) event_release(reinterpret_cast<Event *>(own));
  return r;
}

// Host memory of `bytes` kept with the command's event (freed with it).
ur_result_t staging(Command &cmd, size_t bytes, uint8_t **out) {
  Event *ev = cmd.event();
  if (ev->staging) return UR_RESULT_ERROR_INVALID_OPERATION; // one per command
  void *p = nullptr;
  ORDO_ZE(alloc_memory(ev->ctx, UR_USM_TYPE_HOST, nullptr, bytes, 0, &p));
  ev->staging = p;
  *out = static_cast<uint8_t *>(p);
  return UR_RESULT_SUCCESS;
}

// Makes what follows on the list wait for what came before (Level Zero lists need not
// run in order).
ur_result_t append_order(Command &cmd) {
  return check(ze().zeCommandListAppendBarrier(cmd.list(), nullptr, 0, nullptr));
}

// A 1-D copy as the command's work. Ranges that share bytes (one buffer, a buffer and
// its sub-buffer, the caller's memory that is the buffer's own) go through staging, so
// the result is as if the source were read whole first.
ur_result_t append_copy(Command &cmd, uint8_t *dst, const uint8_t *src, size_t size) {
  if (!overlap(dst, size, src, size))
    return check(
        ze().zeCommandListAppendMemoryCopy(cmd.list(), dst, src, size, cmd.signal(), cmd.num_waits(), cmd.waits()));
  uint8_t *tmp = nullptr;
  if (ur_result_t r = staging(cmd, size, &tmp)) return r;
  if (ur_result_t r =
          check(ze().zeCommandListAppendMemoryCopy(cmd.list(), tmp, src, size, nullptr, cmd.num_waits(), cmd.waits())))
    return r;
  if (ur_result_t r = append_order(cmd)) return r;
  return check(ze().zeCommandListAppendMemoryCopy(cmd.list(), dst, tmp, size, cmd.signal(), 0, nullptr));
}

// Level Zero regions and pitches are 32-bit.
bool fits_region(const ordo::rect_side &s, const ur_rect_region_t &region) {
  return s.row <= UINT32_MAX && s.slice <= UINT32_MAX && region.width <= UINT32_MAX && region.height <= UINT32_MAX &&
         region.depth <= UINT32_MAX;
}

ur_result_t copy_region(Command &cmd, uint8_t *dst, const ordo::rect_side &ds, const uint8_t *src,
                        const ordo::rect_side &ss, const ur_rect_region_t &region, ze_event_handle_t signal, uint32_t n,
                        ze_event_handle_t *waits) {
  ze_copy_region_t r{0, 0, 0, uint32_t(region.width), uint32_t(region.height), uint32_t(region.depth)};
  return check(ze().zeCommandListAppendMemoryCopyRegion(cmd.list(), dst + ds.first, &r, uint32_t(ds.row),
                                                        uint32_t(ds.slice), src + ss.first, &r, uint32_t(ss.row),
                                                        uint32_t(ss.slice), signal, n, waits));
}

// A rectangle of `region` between two resolved sides as the command's work; sides
// whose spans share bytes go through a tight staging copy of the rectangle.
ur_result_t append_rect(Command &cmd, uint8_t *dst, const ordo::rect_side &ds, const uint8_t *src,
                        const ordo::rect_side &ss, const ur_rect_region_t &region) {
  if (!overlap(dst + ds.first, ds.end - ds.first, src + ss.first, ss.end - ss.first))
    return copy_region(cmd, dst, ds, src, ss, region, cmd.signal(), cmd.num_waits(), cmd.waits());
  ordo::rect_side tight; // the rectangle alone, rows and slices back to back
  tight.row = region.width;
  tight.slice = region.width * region.height;
  tight.end = tight.slice * region.depth;
  uint8_t *tmp = nullptr;
  if (ur_result_t r = staging(cmd, tight.end, &tmp)) return r;
  if (ur_result_t r = copy_region(cmd, tmp, tight, src, ss, region, nullptr, cmd.num_waits(), cmd.waits())) return r;
  if (ur_result_t r = append_order(cmd)) return r;
  return copy_region(cmd, dst, ds, tmp, tight, region, cmd.signal(), 0, nullptr);
}

ur_result_t UR_APICALL urEnqueueMemBufferRead(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                              size_t offset, size_t size, void *pDst, uint32_t n,
                                              const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  bool foreign = false;
  if (ur_result_t r = queue_and_any_buffer(hQueue, hBuffer, q, m, foreign)) return r;
  if (!pDst) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!ordo::mem::range_inside(offset, size, m->size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(q, UR_COMMAND_MEM_BUFFER_READ, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
    if (foreign)
      return cross_context_copy(cmd, q->dev, {nullptr, static_cast<uint8_t *>(pDst)}, {m, m->ptr + offset}, size);
    return append_copy(cmd, static_cast<uint8_t *>(pDst), m->ptr + offset, size);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                               size_t offset, size_t size, const void *pSrc, uint32_t n,
                                               const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *m;
  bool foreign = false;
  if (ur_result_t r = queue_and_any_buffer(hQueue, hBuffer, q, m, foreign)) return r;
  if (!pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!ordo::mem::range_inside(offset, size, m->size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(q, UR_COMMAND_MEM_BUFFER_WRITE, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
    if (foreign)
      return cross_context_copy(cmd, q->dev, {m, m->ptr + offset},
                                {nullptr, const_cast<uint8_t *>(static_cast<const uint8_t *>(pSrc))}, size);
    return append_copy(cmd, m->ptr + offset, static_cast<const uint8_t *>(pSrc), size);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                              size_t srcOffset, size_t dstOffset, size_t size, uint32_t n,
                                              const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  Queue *q;
  Mem *src, *dst;
  bool foreign = false;
  if (ur_result_t r = queue_and_any_buffer(hQueue, hSrc, q, src, foreign)) return r;
  if (ur_result_t r = queue_and_any_buffer(hQueue, hDst, q, dst, foreign)) return r;
  if (!ordo::mem::range_inside(srcOffset, size, src->size) || !ordo::mem::range_inside(dstOffset, size, dst->size))
    return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(q, UR_COMMAND_MEM_BUFFER_COPY, false, n, waits, phEvent, {src, dst}, [&](Command &cmd) {
    if (foreign) return cross_context_copy(cmd, q->dev, {dst, dst->ptr + dstOffset}, {src, src->ptr + srcOffset}, size);
    return append_copy(cmd, dst->ptr + dstOffset, src->ptr + srcOffset, size);
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
  return submit(q, UR_COMMAND_MEM_BUFFER_FILL, false, n, waits, phEvent, {m}, [&](Command &cmd) {
    // The pattern is read at the append (Level Zero copies it; a spelled-out one is
    // written to staging now), so the caller may reuse it at once.
    ur_result_t r = append_fill(cmd, m->ptr + offset, static_cast<const uint8_t *>(pPattern), patternSize, 0, size,
                                q->dev->facts.fill_pattern_max);
    return r ? r : cmd.append_barrier();
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
  if (!fits_region(bs, region) || !fits_region(hs, region)) return UR_RESULT_ERROR_INVALID_SIZE;
  auto *h = static_cast<uint8_t *>(host);
  const bool read = type == UR_COMMAND_MEM_BUFFER_READ_RECT;
  return submit(q, type, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
    return read ? append_rect(cmd, h, hs, m->ptr, bs, region) : append_rect(cmd, m->ptr, bs, h, hs, region);
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
  if (!fits_region(ss, region) || !fits_region(ds, region)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, n, waits, phEvent, {src, dst},
                [&](Command &cmd) { return append_rect(cmd, dst->ptr, ds, src->ptr, ss, region); });
}

// The host copy of a root buffer whose bytes the host may not use: the caller's memory
// (USE_HOST_POINTER not imported), or host memory made at the first map.
ur_result_t mirror_of(Mem *root, uint8_t **out) {
  std::lock_guard<std::mutex> lock(root->map_mutex);
  if (!root->mirror) {
    void *p = nullptr;
    ORDO_ZE(alloc_memory(root->ctx, UR_USM_TYPE_HOST, nullptr, root->size, 0, &p));
    root->mirror = static_cast<uint8_t *>(p);
    root->own_mirror = true;
  }
  *out = root->mirror;
  return UR_RESULT_SUCCESS;
}

// Memory the host may use (host or shared memory, the caller's for USE_HOST_POINTER)
// maps in place; device memory maps through the root's host copy: the map copies the
// range there unless it invalidates it, the unmap copies a range that may have been
// written back.
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
  uint8_t *host = m->ptr + offset;
  const bool direct = root->host_visible;
  if (!direct) {
    uint8_t *mirror = nullptr;
    if (ur_result_t r = mirror_of(root, &mirror)) return r;
    host = mirror + m->root_offset() + offset;
  }
  const bool invalidate = mapFlags & UR_MAP_FLAG_WRITE_INVALIDATE_REGION;
  const bool write_back = !direct && (invalidate || (mapFlags & UR_MAP_FLAG_WRITE) || mapFlags == 0);
  const Mem::Mapping map{host, offset, size, write_back};
  if (ur_result_t r = ordo::ur_common::add_mapping(m, map)) return r; // before the command: an unmap may follow at once
  ur_result_t r = submit(q, UR_COMMAND_MEM_BUFFER_MAP, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
    return direct || invalidate ? cmd.append_barrier() : append_copy(cmd, host, m->ptr + offset, size);
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
  ur_result_t r = submit(q, UR_COMMAND_MEM_UNMAP, false, n, waits, phEvent, {m}, [&](Command &cmd) {
    return map.write_back ? append_copy(cmd, m->ptr + map.offset, static_cast<const uint8_t *>(map.host), map.size)
                          : cmd.append_barrier();
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

} // namespace ordo::level_zero
