// SPDX-License-Identifier: Apache-2.0
// urMem*: buffers and sub-buffers on cl_mem, and the buffer enqueues (read, write,
// copy, fill, map, unmap). The argument checks are ur_common/memory.hpp's and
// ur_common/buffer_commands.hpp's.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>

#include "context.hpp"
#include "event.hpp"
#include "handle_entry_points.hpp"
#include "memory.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/buffer_commands.hpp"
#include "ur_common/usm_commands.hpp"

ur_mem_handle_t_::~ur_mem_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseMemObject(cl);
  if (parent) ordo::opencl::unhold(parent);
  if (ctx) ordo::opencl::context_unhold(ctx);
}

namespace ordo::opencl {

namespace {
void CL_CALLBACK delete_staging(cl_event, cl_int, void *data) { delete static_cast<HostStaging *>(data); }
} // namespace

void free_after(cl_event ev, HostStaging *staging) {
  if (cl.clSetEventCallback(ev, CL_COMPLETE, delete_staging, staging) == CL_SUCCESS) return;
  cl.clWaitForEvents(1, &ev);
  delete staging;
}

std::unique_ptr<HostStaging> spelled_out(const unsigned char *pattern, size_t pattern_size, size_t bytes) {
  std::unique_ptr<HostStaging> host;
  try { // the vector's own buffer may throw, not only the new
    host.reset(new HostStaging(bytes));
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
  for (size_t i = 0; i < bytes; ++i) (*host)[i] = pattern[i % pattern_size];
  return host;
}

namespace {

// UR's memory and map flags are OpenCL's bits.
static_assert(UR_MEM_FLAG_READ_WRITE == CL_MEM_READ_WRITE && UR_MEM_FLAG_WRITE_ONLY == CL_MEM_WRITE_ONLY &&
                  UR_MEM_FLAG_READ_ONLY == CL_MEM_READ_ONLY && UR_MEM_FLAG_USE_HOST_POINTER == CL_MEM_USE_HOST_PTR &&
                  UR_MEM_FLAG_ALLOC_HOST_POINTER == CL_MEM_ALLOC_HOST_PTR &&
                  UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER == CL_MEM_COPY_HOST_PTR,
              "memory flags");
static_assert(UR_MAP_FLAG_READ == CL_MAP_READ && UR_MAP_FLAG_WRITE == CL_MAP_WRITE &&
                  UR_MAP_FLAG_WRITE_INVALIDATE_REGION == CL_MAP_WRITE_INVALIDATE_REGION,
              "map flags");
cl_mem_flags cl_flags(ur_mem_flags_t f) { return f & ~UR_MEM_FLAGS_MASK; }

ur_result_t wrap_mem(ur_context_handle_t c, cl_mem native, size_t size, ur_mem_handle_t parent, ur_mem_handle_t *out,
                     size_t origin = 0) {
  auto *m = new (std::nothrow) ur_mem_handle_t_();
  if (!m) {
    cl.clReleaseMemObject(native);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  m->cl = native;
  m->ctx = c;
  m->size = size;
  m->parent = parent;
  m->origin = origin;
  if (parent) parent->hold();
  c->hold();
  *out = m;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemBufferCreate(ur_context_handle_t hContext, ur_mem_flags_t flags, size_t size,
                                         const ur_buffer_properties_t *pProperties, ur_mem_handle_t *phBuffer) {
  ORDO_CHECK_HANDLE(hContext);
  // OpenCL judges the size against its devices (CL_INVALID_BUFFER_SIZE, below).
  if (ur_result_t r = ordo::ur_common::check_buffer_create(flags, size, pProperties, phBuffer, SIZE_MAX)) return r;
  cl_int err = CL_SUCCESS;
  cl_mem native =
      cl.clCreateBuffer(hContext->cl, cl_flags(flags), size, pProperties ? pProperties->pHost : nullptr, &err);
  if (!native) return to_ur(err);
  return wrap_mem(hContext, native, size, nullptr, phBuffer);
}

ur_result_t UR_APICALL urMemBufferPartition(ur_mem_handle_t hBuffer, ur_mem_flags_t flags, ur_buffer_create_type_t,
                                            const ur_buffer_region_t *pRegion, ur_mem_handle_t *phMem) {
  ORDO_CHECK_HANDLE(hBuffer);
  if (hBuffer->parent) return UR_RESULT_ERROR_INVALID_MEM_OBJECT; // no sub-buffers of sub-buffers
  if (ur_result_t r = ordo::mem::check_sub_buffer(flags, *pRegion, hBuffer->size)) return r;
  cl_buffer_region region{pRegion->origin, pRegion->size};
  cl_int err = CL_SUCCESS;
  cl_mem native = cl.clCreateSubBuffer(hBuffer->cl, cl_flags(flags), CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (!native) return to_ur(err);
  return wrap_mem(hBuffer->ctx, native, pRegion->size, hBuffer, phMem, pRegion->origin);
}

ur_result_t UR_APICALL urMemBufferCreateWithNativeHandle(ur_native_handle_t hNativeMem, ur_context_handle_t hContext,
                                                         const ur_mem_native_properties_t *pProperties,
                                                         ur_mem_handle_t *phMem) {
  ORDO_CHECK_HANDLE(hContext);
  cl_mem native = reinterpret_cast<cl_mem>(hNativeMem);
  if (!native) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  size_t size = 0;
  cl_context owner = nullptr;
  ORDO_CL_CHECK(cl.clGetMemObjectInfo(native, CL_MEM_SIZE, sizeof size, &size, nullptr));
  ORDO_CL_CHECK(cl.clGetMemObjectInfo(native, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr));
  if (owner != hContext->cl) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainMemObject(native);
  return wrap_mem(hContext, native, size, nullptr, phMem);
}

// What ur_common's buffer commands leave to OpenCL (ur_common/buffer_commands.hpp): each
// command on its cl_mem, after its wait list. Maps are OpenCL's own (below).
struct buffer_hooks {
  using Queue = ur_queue_handle_t_;
  using Mem = ur_mem_handle_t_;
  static constexpr bool own_context_only = true;
  static ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
    if (ur_result_t r = ordo::unwrap(hQueue, q)) return r;
    return ordo::unwrap(hMem, m);
  }
  // A sub-buffer's bytes are its parent's from its origin (the overlap rule of copies,
  // checked before OpenCL would answer CL_MEM_COPY_OVERLAP).
  static ur_common::buffer_place place(Mem *m) { return {m->parent ? m->parent : m, m->origin}; }
  // After the handles: the wait list, then the buffers' context (buffers of the queue's).
  static ur_result_t check_command(Queue *q, Mem *a, Mem *b, uint32_t n, const ur_event_handle_t *list) {
    if (ur_result_t r = ClWaitList::check(n, list, q->ctx)) return r;
    return a->ctx != q->ctx || b->ctx != q->ctx ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_SUCCESS;
  }

  static ur_result_t read(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, void *dst, bool, uint32_t n,
                          const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    return submit(
        q, UR_COMMAND_MEM_BUFFER_READ, waits, phEvent,
        [&](cl_event *ev) {
          return cl.clEnqueueReadBuffer(q->cl, m->cl, false, offset, size, dst, waits.size(), waits.data(), ev);
        },
        blocking);
  }

  static ur_result_t write(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, const void *src, bool,
                           uint32_t n, const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    return submit(
        q, UR_COMMAND_MEM_BUFFER_WRITE, waits, phEvent,
        [&](cl_event *ev) {
          return cl.clEnqueueWriteBuffer(q->cl, m->cl, false, offset, size, src, waits.size(), waits.data(), ev);
        },
        blocking);
  }

  static ur_result_t copy(Queue *q, Mem *src, Mem *dst, size_t srcOffset, size_t dstOffset, size_t size, bool,
                          uint32_t n, const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY, waits, phEvent, [&](cl_event *ev) {
      return cl.clEnqueueCopyBuffer(q->cl, src->cl, dst->cl, srcOffset, dstOffset, size, waits.size(), waits.data(),
                                    ev);
    });
  }

  // Offset and size are multiples of the pattern, a power of two (check_fill). OpenCL
  // fills patterns of up to 128 bytes, also a larger one that repeats with such a period.
  // Any other is spelled out on the host up to kStagedFill bytes, written, and copied
  // onto the rest of the range in doubling steps, each command after the one before.
  static constexpr size_t kStagedFill = 64 * 1024;
  static ur_result_t fill(Queue *q, Mem *m, const void *pattern, size_t patternSize, size_t offset, size_t size,
                          uint32_t n, const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    const auto *bytes = static_cast<const uint8_t *>(pattern);
    const size_t period = ur_common::pattern_period(bytes, patternSize, kClMaxFillPattern);
    if (period <= kClMaxFillPattern)
      return submit(q, UR_COMMAND_MEM_BUFFER_FILL, waits, phEvent, [&](cl_event *ev) {
        return cl.clEnqueueFillBuffer(q->cl, m->cl, pattern, period, offset, size, waits.size(), waits.data(), ev);
      });
    // Both powers of two, so `staged` is a whole number of patterns.
    const size_t staged = std::min(size, std::max(patternSize, kStagedFill));
    std::unique_ptr<HostStaging> host = spelled_out(bytes, patternSize, staged);
    if (!host) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return submit(q, UR_COMMAND_MEM_BUFFER_FILL, waits, phEvent, [&](cl_event *ev) {
      cl_event prev = nullptr;
      cl_int err =
          cl.clEnqueueWriteBuffer(q->cl, m->cl, false, offset, staged, host->data(), waits.size(), waits.data(), &prev);
      if (err != CL_SUCCESS) return err;
      free_after(prev, host.release());
      err = copy_doubling(prev, staged, size, [&](size_t at, size_t chunk, cl_event wait, cl_event *next) {
        return cl.clEnqueueCopyBuffer(q->cl, m->cl, m->cl, offset, offset + at, chunk, 1, &wait, next);
      });
      // On failure, what was enqueued still runs: let it finish before reporting.
      if (err != CL_SUCCESS) cl.clWaitForEvents(1, &prev);
      if (err == CL_SUCCESS && ev)
        *ev = prev;
      else
        cl.clReleaseEvent(prev);
      return err;
    });
  }

  // Rectangles: OpenCL's origins and regions are UR's (bytes, rows, slices), its
  // pitches the resolved ones (0 made tight, source/ordo/rect.hpp). A sub-buffer's side
  // is given on its root buffer, its origin moved by the sub-buffer's: PoCL crashes on
  // sub-buffers in rectangle commands (two overlapping ones in one copy, above all).
  static cl_mem in_root(Mem *m, const ordo::rect_side &s, size_t at[3]) {
    const ur_common::buffer_place p = place(m);
    at[0] = s.origin[0] + p.offset;
    at[1] = s.origin[1];
    at[2] = s.origin[2];
    return static_cast<const Mem *>(p.root)->cl;
  }
  static ur_result_t host_rect(Queue *q, Mem *m, ur_command_t command, bool blocking, const ordo::rect_side &bs,
                               uint8_t *host, const ordo::rect_side &hs, const ur_rect_region_t &region, uint32_t n,
                               const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    const size_t rg[3] = {region.width, region.height, region.depth};
    size_t at[3];
    cl_mem mem = in_root(m, bs, at);
    return submit(
        q, command, waits, phEvent,
        [&](cl_event *ev) {
          if (command == UR_COMMAND_MEM_BUFFER_WRITE_RECT)
            return cl.clEnqueueWriteBufferRect(q->cl, mem, false, at, hs.origin, rg, bs.row, bs.slice, hs.row, hs.slice,
                                               host, waits.size(), waits.data(), ev);
          return cl.clEnqueueReadBufferRect(q->cl, mem, false, at, hs.origin, rg, bs.row, bs.slice, hs.row, hs.slice,
                                            host, waits.size(), waits.data(), ev);
        },
        blocking);
  }

  static ur_result_t copy_rect(Queue *q, Mem *src, const ordo::rect_side &ss, Mem *dst, const ordo::rect_side &ds,
                               const ur_rect_region_t &region, uint32_t n, const ur_event_handle_t *list,
                               ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    const size_t rg[3] = {region.width, region.height, region.depth};
    size_t from[3], to[3];
    cl_mem sm = in_root(src, ss, from), dm = in_root(dst, ds, to);
    // Within one buffer (the rectangles share no byte: ur_common refused that) OpenCL
    // refuses different pitches, which Ordo's other adapters copy: through a temporary
    // buffer here.
    const bool staged = sm == dm && (ss.row != ds.row || ss.slice != ds.slice);
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY_RECT, waits, phEvent, [&](cl_event *ev) -> cl_int {
      if (!staged)
        return cl.clEnqueueCopyBufferRect(q->cl, sm, dm, from, to, rg, ss.row, ss.slice, ds.row, ds.slice, waits.size(),
                                          waits.data(), ev);
      const size_t zero[3] = {0, 0, 0}, row = region.width, slice = region.width * region.height;
      cl_int err = CL_SUCCESS;
      cl_mem tmp = cl.clCreateBuffer(q->ctx->cl, CL_MEM_READ_WRITE, slice * region.depth, nullptr, &err);
      if (!tmp) return err;
      cl_event in = nullptr;
      err = cl.clEnqueueCopyBufferRect(q->cl, sm, tmp, from, zero, rg, ss.row, ss.slice, row, slice, waits.size(),
                                       waits.data(), &in);
      if (err == CL_SUCCESS)
        err = cl.clEnqueueCopyBufferRect(q->cl, tmp, dm, zero, to, rg, row, slice, ds.row, ds.slice, 1, &in, ev);
      if (in) cl.clReleaseEvent(in);
      cl.clReleaseMemObject(tmp); // OpenCL keeps it until the copies that use it are done
      return err;
    });
  }
};
using buffer_commands = ur_common::buffer_commands<buffer_hooks>;

ur_result_t UR_APICALL urEnqueueMemBufferMap(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingMap,
                                             ur_map_flags_t mapFlags, size_t offset, size_t size,
                                             uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                             ur_event_handle_t *phEvent, void **ppRetMap) {
  ur_mem_handle_t_ *m = nullptr;
  if (ur_result_t r = buffer_hooks::queue_and_buffer(hQueue, hBuffer, hQueue, m)) return r;
  if (ur_result_t r = buffer_hooks::check_command(hQueue, m, m, numEventsInWaitList, phEventWaitList)) return r;
  if (ur_result_t r = ordo::ur_common::check_map(ppRetMap, mapFlags, offset, size, m->size)) return r;
  ORDO_CL_WAIT_LIST(hQueue, numEventsInWaitList, phEventWaitList);
  const cl_map_flags flags = mapFlags & ~UR_MAP_FLAGS_MASK;
  void *p = nullptr;
  ur_result_t r = submit(
      hQueue, UR_COMMAND_MEM_BUFFER_MAP, waits, phEvent,
      [&](cl_event *ev) {
        cl_int err = CL_SUCCESS;
        p = cl.clEnqueueMapBuffer(hQueue->cl, m->cl, false, flags, offset, size, waits.size(), waits.data(), ev, &err);
        return err;
      },
      blockingMap);
  if (r == UR_RESULT_SUCCESS) *ppRetMap = p;
  return r;
}

ur_result_t UR_APICALL urEnqueueMemUnmap(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, void *pMappedPtr,
                                         uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                         ur_event_handle_t *phEvent) {
  ur_mem_handle_t_ *m = nullptr;
  if (ur_result_t r = buffer_hooks::queue_and_buffer(hQueue, hMem, hQueue, m)) return r;
  if (ur_result_t r = buffer_hooks::check_command(hQueue, m, m, numEventsInWaitList, phEventWaitList)) return r;
  ORDO_CL_WAIT_LIST(hQueue, numEventsInWaitList, phEventWaitList);
  return submit(hQueue, UR_COMMAND_MEM_UNMAP, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueUnmapMemObject(hQueue->cl, m->cl, pMappedPtr, waits.size(), waits.data(), ev);
  });
}

} // namespace

void install_memory_entry_points(ur_dditable_t &t) {
  t.Mem.pfnBufferCreate = urMemBufferCreate;
  t.Mem.pfnRetain = ur_common::retain_user_handle<ur_mem_handle_t_>;
  t.Mem.pfnRelease = ur_common::release_user_handle<ur_mem_handle_t_>;
  t.Mem.pfnBufferPartition = urMemBufferPartition;
  t.Mem.pfnGetNativeHandle = native_handle<ur_mem_handle_t_, ur_device_handle_t>;
  t.Mem.pfnBufferCreateWithNativeHandle = urMemBufferCreateWithNativeHandle;
  t.Mem.pfnGetInfo = ur_common::mem_get_info<ur_mem_handle_t_>;
  t.Enqueue.pfnMemBufferRead = buffer_commands::read;
  t.Enqueue.pfnMemBufferWrite = buffer_commands::write;
  t.Enqueue.pfnMemBufferCopy = buffer_commands::copy;
  t.Enqueue.pfnMemBufferReadRect = ur_common::enqueue_read_rect<buffer_commands::host_rect>;
  t.Enqueue.pfnMemBufferWriteRect = ur_common::enqueue_write_rect<buffer_commands::host_rect>;
  t.Enqueue.pfnMemBufferCopyRect = buffer_commands::copy_rect;
  t.Enqueue.pfnMemBufferFill = buffer_commands::fill;
  t.Enqueue.pfnMemBufferMap = urEnqueueMemBufferMap;
  t.Enqueue.pfnMemUnmap = urEnqueueMemUnmap;
}

} // namespace ordo::opencl
