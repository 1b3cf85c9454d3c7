// SPDX-License-Identifier: Apache-2.0
// urMem*: buffers and sub-buffers on cl_mem, and the buffer enqueues (read, write,
// copy, fill, map, unmap). The argument checks are ur_common/memory.hpp's.
#include <cstdint>
#include <new>
#include <type_traits>

#include "context.hpp"
#include "event.hpp"
#include "handle_entry_points.hpp"
#include "memory.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/memory.hpp"

ur_mem_handle_t_::~ur_mem_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseMemObject(cl);
  if (parent) ordo::opencl::unhold(parent);
  if (context) ordo::opencl::context_unhold(context);
}

namespace ordo::opencl {
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

ur_result_t wrap_mem(ur_context_handle_t c, cl_mem native, size_t size, ur_mem_handle_t parent, ur_mem_handle_t *out) {
  auto *m = new (std::nothrow) ur_mem_handle_t_();
  if (!m) {
    cl.clReleaseMemObject(native);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  m->cl = native;
  m->context = c;
  m->size = size;
  m->parent = parent;
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
  return wrap_mem(hBuffer->context, native, pRegion->size, hBuffer, phMem);
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

ur_result_t UR_APICALL urMemGetInfo(ur_mem_handle_t hMem, ur_mem_info_t propName, size_t propSize, void *pPropValue,
                                    size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hMem);
  return ordo::ur_common::mem_info(hMem->size, hMem->context, hMem->count(), propName, propSize, pPropValue,
                                   pPropSizeRet);
}

// --- buffer commands ---

// The start of every buffer command: the queue, its buffers (of its context; `b` is `a`
// for a command on one buffer) and the wait list, translated into `waits`.
ur_result_t check_command(ur_queue_handle_t q, ur_mem_handle_t a, ur_mem_handle_t b, uint32_t n,
                          const ur_event_handle_t *list, ClWaitList &waits) {
  ORDO_CHECK_HANDLE(q);
  ORDO_CHECK_HANDLE(a);
  ORDO_CHECK_HANDLE(b);
  if (ur_result_t r = begin_command(q, n, list, waits)) return r;
  if (a->context != q->ctx || b->context != q->ctx) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}
// check_command, or return its refusal; declares `waits`.
#define ORDO_BUFFER_COMMAND(q, a, b, n, list)                                                                          \
  ClWaitList waits;                                                                                                    \
  if (ur_result_t r_ = check_command(q, a, b, n, list, waits)) return r_

// urEnqueueMemBufferRead (Write false) and urEnqueueMemBufferWrite.
template <bool Write>
ur_result_t UR_APICALL enqueue_transfer(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking, size_t offset,
                                        size_t size, std::conditional_t<Write, const void *, void *> host, uint32_t n,
                                        const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
  ORDO_BUFFER_COMMAND(hQueue, hBuffer, hBuffer, n, list);
  if (!ordo::mem::range_inside(offset, size, hBuffer->size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(
      hQueue, Write ? UR_COMMAND_MEM_BUFFER_WRITE : UR_COMMAND_MEM_BUFFER_READ, waits, phEvent,
      [&](cl_event *ev) {
        if constexpr (Write)
          return cl.clEnqueueWriteBuffer(hQueue->cl, hBuffer->cl, false, offset, size, host, waits.size(), waits.data(),
                                         ev);
        else
          return cl.clEnqueueReadBuffer(hQueue->cl, hBuffer->cl, false, offset, size, host, waits.size(), waits.data(),
                                        ev);
      },
      blocking);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                              ur_mem_handle_t hBufferDst, size_t srcOffset, size_t dstOffset,
                                              size_t size, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_BUFFER_COMMAND(hQueue, hBufferSrc, hBufferDst, numEventsInWaitList, phEventWaitList);
  if (!ordo::mem::range_inside(srcOffset, size, hBufferSrc->size) ||
      !ordo::mem::range_inside(dstOffset, size, hBufferDst->size))
    return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(hQueue, UR_COMMAND_MEM_BUFFER_COPY, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueCopyBuffer(hQueue->cl, hBufferSrc->cl, hBufferDst->cl, srcOffset, dstOffset, size, waits.size(),
                                  waits.data(), ev);
  });
}

// Rectangular transfers: OpenCL's origins and regions are UR's (bytes, rows, slices),
// its pitches the resolved ones (0 made tight, source/ordo/rect.hpp).
struct cl_rect {
  size_t v[3];
  explicit cl_rect(const ur_rect_offset_t &o) : v{o.x, o.y, o.z} {}
  explicit cl_rect(const ur_rect_region_t &r) : v{r.width, r.height, r.depth} {}
};

// urEnqueueMemBufferReadRect and WriteRect (ur_common::enqueue_read_rect / enqueue_write_rect).
ur_result_t host_rect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, ur_command_t command, bool blocking,
                      ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin, ur_rect_region_t region,
                      size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch, size_t hostSlicePitch,
                      void *host, uint32_t n, const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
  ORDO_BUFFER_COMMAND(hQueue, hBuffer, hBuffer, n, list);
  ordo::rect_side bs, hs;
  if (ur_result_t r =
          ordo::ur_common::resolve_host_rect(host, bufferOrigin, hostOrigin, region, bufferRowPitch, bufferSlicePitch,
                                             hostRowPitch, hostSlicePitch, hBuffer->size, bs, hs))
    return r;
  const cl_rect bo(bufferOrigin), ho(hostOrigin), rg(region);
  return submit(
      hQueue, command, waits, phEvent,
      [&](cl_event *ev) {
        if (command == UR_COMMAND_MEM_BUFFER_WRITE_RECT)
          return cl.clEnqueueWriteBufferRect(hQueue->cl, hBuffer->cl, false, bo.v, ho.v, rg.v, bs.row, bs.slice, hs.row,
                                             hs.slice, host, waits.size(), waits.data(), ev);
        return cl.clEnqueueReadBufferRect(hQueue->cl, hBuffer->cl, false, bo.v, ho.v, rg.v, bs.row, bs.slice, hs.row,
                                          hs.slice, host, waits.size(), waits.data(), ev);
      },
      blocking);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopyRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                                  ur_mem_handle_t hBufferDst, ur_rect_offset_t srcOrigin,
                                                  ur_rect_offset_t dstOrigin, ur_rect_region_t region,
                                                  size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch,
                                                  size_t dstSlicePitch, uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList,
                                                  ur_event_handle_t *phEvent) {
  ORDO_BUFFER_COMMAND(hQueue, hBufferSrc, hBufferDst, numEventsInWaitList, phEventWaitList);
  ordo::rect_side ss, ds;
  if (ur_result_t r =
          ordo::ur_common::resolve_copy_rect(srcOrigin, dstOrigin, region, srcRowPitch, srcSlicePitch, dstRowPitch,
                                             dstSlicePitch, hBufferSrc->size, hBufferDst->size, ss, ds))
    return r;
  const cl_rect so(srcOrigin), dO(dstOrigin), rg(region);
  return submit(hQueue, UR_COMMAND_MEM_BUFFER_COPY_RECT, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueCopyBufferRect(hQueue->cl, hBufferSrc->cl, hBufferDst->cl, so.v, dO.v, rg.v, ss.row, ss.slice,
                                      ds.row, ds.slice, waits.size(), waits.data(), ev);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferFill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, const void *pPattern,
                                              size_t patternSize, size_t offset, size_t size,
                                              uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                              ur_event_handle_t *phEvent) {
  ORDO_BUFFER_COMMAND(hQueue, hBuffer, hBuffer, numEventsInWaitList, phEventWaitList);
  if (ur_result_t r = ordo::ur_common::check_fill(pPattern, patternSize, offset, size, hBuffer->size)) return r;
  return submit(hQueue, UR_COMMAND_MEM_BUFFER_FILL, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueFillBuffer(hQueue->cl, hBuffer->cl, pPattern, patternSize, offset, size, waits.size(),
                                  waits.data(), ev);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferMap(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingMap,
                                             ur_map_flags_t mapFlags, size_t offset, size_t size,
                                             uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                             ur_event_handle_t *phEvent, void **ppRetMap) {
  ORDO_BUFFER_COMMAND(hQueue, hBuffer, hBuffer, numEventsInWaitList, phEventWaitList);
  if (ur_result_t r = ordo::ur_common::check_map(ppRetMap, mapFlags, offset, size, hBuffer->size)) return r;
  const cl_map_flags flags = mapFlags & ~UR_MAP_FLAGS_MASK;
  void *p = nullptr;
  ur_result_t r = submit(
      hQueue, UR_COMMAND_MEM_BUFFER_MAP, waits, phEvent,
      [&](cl_event *ev) {
        cl_int err = CL_SUCCESS;
        p = cl.clEnqueueMapBuffer(hQueue->cl, hBuffer->cl, false, flags, offset, size, waits.size(), waits.data(), ev,
                                  &err);
        return err;
      },
      blockingMap);
  if (r == UR_RESULT_SUCCESS) *ppRetMap = p;
  return r;
}

ur_result_t UR_APICALL urEnqueueMemUnmap(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, void *pMappedPtr,
                                         uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                         ur_event_handle_t *phEvent) {
  ORDO_BUFFER_COMMAND(hQueue, hMem, hMem, numEventsInWaitList, phEventWaitList);
  return submit(hQueue, UR_COMMAND_MEM_UNMAP, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueUnmapMemObject(hQueue->cl, hMem->cl, pMappedPtr, waits.size(), waits.data(), ev);
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
  t.Mem.pfnGetInfo = urMemGetInfo;
  t.Enqueue.pfnMemBufferRead = enqueue_transfer<false>;
  t.Enqueue.pfnMemBufferWrite = enqueue_transfer<true>;
  t.Enqueue.pfnMemBufferCopy = urEnqueueMemBufferCopy;
  t.Enqueue.pfnMemBufferReadRect = ordo::ur_common::enqueue_read_rect<host_rect>;
  t.Enqueue.pfnMemBufferWriteRect = ordo::ur_common::enqueue_write_rect<host_rect>;
  t.Enqueue.pfnMemBufferCopyRect = urEnqueueMemBufferCopyRect;
  t.Enqueue.pfnMemBufferFill = urEnqueueMemBufferFill;
  t.Enqueue.pfnMemBufferMap = urEnqueueMemBufferMap;
  t.Enqueue.pfnMemUnmap = urEnqueueMemUnmap;
}

} // namespace ordo::opencl
