// SPDX-License-Identifier: Apache-2.0
// urMem*: buffers and sub-buffers on cl_mem, and the buffer enqueues (read, write,
// copy, fill, map, unmap).
#include <cstdint>

#include "ordo/retired_handles.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "memory.hpp"

#include <new>

#include "context.hpp"
#include "event.hpp"
#include "queue.hpp"
#include "tables.hpp"

ur_mem_handle_t_::~ur_mem_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseMemObject(cl);
  if (parent && parent->drop()) ordo::retire(parent);
  if (context) ordo::opencl::context_unhold(context);
}

namespace ordo::opencl {
namespace {

cl_mem_flags cl_flags(ur_mem_flags_t f) {
  cl_mem_flags c = 0;
  if (f & UR_MEM_FLAG_READ_WRITE) c |= CL_MEM_READ_WRITE;
  if (f & UR_MEM_FLAG_WRITE_ONLY) c |= CL_MEM_WRITE_ONLY;
  if (f & UR_MEM_FLAG_READ_ONLY) c |= CL_MEM_READ_ONLY;
  if (f & UR_MEM_FLAG_USE_HOST_POINTER) c |= CL_MEM_USE_HOST_PTR;
  if (f & UR_MEM_FLAG_ALLOC_HOST_POINTER) c |= CL_MEM_ALLOC_HOST_PTR;
  if (f & UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER) c |= CL_MEM_COPY_HOST_PTR;
  return c;
}

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
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  ORDO_CHECK_PTR(phBuffer);
  if (size == 0) return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
  void *host = pProperties ? pProperties->pHost : nullptr;
  const ur_mem_flags_t host_flags = UR_MEM_FLAG_USE_HOST_POINTER | UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER;
  if ((flags & host_flags) && !host) return UR_RESULT_ERROR_INVALID_HOST_PTR;
  if (host && !(flags & host_flags)) return UR_RESULT_ERROR_INVALID_HOST_PTR;
  if (ur_result_t r = ordo::mem::check_buffer_flags(flags)) return r;
  cl_int err = CL_SUCCESS;
  cl_mem native = cl.clCreateBuffer(hContext->cl, cl_flags(flags), size, host, &err);
  if (!native) return err == CL_INVALID_BUFFER_SIZE ? UR_RESULT_ERROR_INVALID_BUFFER_SIZE : to_ur(err);
  return wrap_mem(hContext, native, size, nullptr, phBuffer);
}

ur_result_t UR_APICALL urMemRetain(ur_mem_handle_t hMem) {
  ORDO_CHECK_HANDLE(hMem);
  if (!hMem->retain_user()) return ordo::invalid_of(hMem);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemRelease(ur_mem_handle_t hMem) {
  ORDO_CHECK_HANDLE(hMem);
  bool last_ = false;
  if (!hMem->release_user(last_)) return ordo::invalid_of(hMem);
  if (last_ && hMem->drop()) ordo::retire(hMem);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemBufferPartition(ur_mem_handle_t hBuffer, ur_mem_flags_t flags,
                                            ur_buffer_create_type_t bufferCreateType, const ur_buffer_region_t *pRegion,
                                            ur_mem_handle_t *phMem) {
  ORDO_CHECK_HANDLE(hBuffer);
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (bufferCreateType > UR_BUFFER_CREATE_TYPE_REGION) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  ORDO_CHECK_PTR(pRegion);
  ORDO_CHECK_PTR(phMem);
  if (hBuffer->parent) return UR_RESULT_ERROR_INVALID_MEM_OBJECT; // no sub-buffers of sub-buffers
  if (ur_result_t r = ordo::mem::check_sub_buffer(flags, *pRegion, hBuffer->size)) return r;
  cl_buffer_region region{pRegion->origin, pRegion->size};
  cl_int err = CL_SUCCESS;
  cl_mem native = cl.clCreateSubBuffer(hBuffer->cl, cl_flags(flags), CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (!native) return to_ur(err);
  return wrap_mem(hBuffer->context, native, pRegion->size, hBuffer, phMem);
}

ur_result_t UR_APICALL urMemGetNativeHandle(ur_mem_handle_t hMem, ur_device_handle_t, ur_native_handle_t *phNativeMem) {
  ORDO_CHECK_HANDLE(hMem);
  ORDO_CHECK_PTR(phNativeMem);
  *phNativeMem = reinterpret_cast<ur_native_handle_t>(hMem->cl);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemBufferCreateWithNativeHandle(ur_native_handle_t hNativeMem, ur_context_handle_t hContext,
                                                         const ur_mem_native_properties_t *pProperties,
                                                         ur_mem_handle_t *phMem) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(phMem);
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
  if (propName > UR_MEM_INFO_REFERENCE_COUNT) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_MEM_INFO_SIZE: return w.value<size_t>(hMem->size);
  case UR_MEM_INFO_CONTEXT: return w.value(hMem->context);
  case UR_MEM_INFO_REFERENCE_COUNT: return w.value<uint32_t>(hMem->count());
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

// --- buffer commands ---

#define ORDO_BUFFER_PROLOGUE(q, m, n, list, waits)                                                                     \
  ORDO_CHECK_HANDLE(q);                                                                                                \
  ORDO_CHECK_HANDLE(m);                                                                                                \
  if (ur_result_t r_ = check_wait_list(n, list)) return r_;                                                            \
  ClWaitList waits;                                                                                                    \
  if (ur_result_t r_ = waits.assign(n, list, (q)->context)) return r_;                                                 \
  if ((m)->context != (q)->context) return UR_RESULT_ERROR_INVALID_MEM_OBJECT

bool in_bounds(ur_mem_handle_t m, size_t offset, size_t size) { return ordo::mem::range_inside(offset, size, m->size); }

ur_result_t UR_APICALL urEnqueueMemBufferRead(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingRead,
                                              size_t offset, size_t size, void *pDst, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pDst);
  ORDO_BUFFER_PROLOGUE(hQueue, hBuffer, numEventsInWaitList, phEventWaitList, waits);
  if (!in_bounds(hBuffer, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(
      hQueue, UR_COMMAND_MEM_BUFFER_READ, waits, phEvent,
      [&](cl_event *ev) {
        return cl.clEnqueueReadBuffer(hQueue->cl, hBuffer->cl, false, offset, size, pDst, waits.size(), waits.data(),
                                      ev);
      },
      blockingRead);
}

ur_result_t UR_APICALL urEnqueueMemBufferWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingWrite,
                                               size_t offset, size_t size, const void *pSrc,
                                               uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                               ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pSrc);
  ORDO_BUFFER_PROLOGUE(hQueue, hBuffer, numEventsInWaitList, phEventWaitList, waits);
  if (!in_bounds(hBuffer, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(
      hQueue, UR_COMMAND_MEM_BUFFER_WRITE, waits, phEvent,
      [&](cl_event *ev) {
        return cl.clEnqueueWriteBuffer(hQueue->cl, hBuffer->cl, false, offset, size, pSrc, waits.size(), waits.data(),
                                       ev);
      },
      blockingWrite);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                              ur_mem_handle_t hBufferDst, size_t srcOffset, size_t dstOffset,
                                              size_t size, uint32_t numEventsInWaitList,
                                              const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(hBufferDst);
  ORDO_BUFFER_PROLOGUE(hQueue, hBufferSrc, numEventsInWaitList, phEventWaitList, waits);
  if (hBufferDst->context != hQueue->context) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (!in_bounds(hBufferSrc, srcOffset, size) || !in_bounds(hBufferDst, dstOffset, size))
    return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(hQueue, UR_COMMAND_MEM_BUFFER_COPY, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueCopyBuffer(hQueue->cl, hBufferSrc->cl, hBufferDst->cl, srcOffset, dstOffset, size, waits.size(),
                                  waits.data(), ev);
  });
}

// Rectangular transfers: OpenCL's origins and regions are UR's (bytes, rows, slices).
// The pitch rules and bounds first (source/ordo/rect.hpp), with 0 pitches made tight.
ur_result_t check_rect_side(const ur_rect_offset_t &origin, const ur_rect_region_t &region, size_t &row_pitch,
                            size_t &slice_pitch, size_t limit) {
  ordo::rect_side side;
  if (ur_result_t r = ordo::resolve_rect_side(origin, region, row_pitch, slice_pitch, side)) return r;
  if (side.end > limit) return UR_RESULT_ERROR_INVALID_SIZE;
  row_pitch = side.row;
  slice_pitch = side.slice;
  return UR_RESULT_SUCCESS;
}

struct cl_rect {
  size_t v[3];
  explicit cl_rect(const ur_rect_offset_t &o) : v{o.x, o.y, o.z} {}
  explicit cl_rect(const ur_rect_region_t &r) : v{r.width, r.height, r.depth} {}
};
ur_result_t UR_APICALL urEnqueueMemBufferReadRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingRead,
                                                  ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                                  ur_rect_region_t region, size_t bufferRowPitch,
                                                  size_t bufferSlicePitch, size_t hostRowPitch, size_t hostSlicePitch,
                                                  void *pDst, uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList,
                                                  ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pDst);
  ORDO_BUFFER_PROLOGUE(hQueue, hBuffer, numEventsInWaitList, phEventWaitList, waits);
  if (ur_result_t r = check_rect_side(bufferOrigin, region, bufferRowPitch, bufferSlicePitch, hBuffer->size)) return r;
  if (ur_result_t r = check_rect_side(hostOrigin, region, hostRowPitch, hostSlicePitch, SIZE_MAX)) return r;
  const cl_rect bo(bufferOrigin), ho(hostOrigin), rg(region);
  return submit(
      hQueue, UR_COMMAND_MEM_BUFFER_READ_RECT, waits, phEvent,
      [&](cl_event *ev) {
        return cl.clEnqueueReadBufferRect(hQueue->cl, hBuffer->cl, false, bo.v, ho.v, rg.v, bufferRowPitch,
                                          bufferSlicePitch, hostRowPitch, hostSlicePitch, pDst, waits.size(),
                                          waits.data(), ev);
      },
      blockingRead);
}

ur_result_t UR_APICALL urEnqueueMemBufferWriteRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer,
                                                   bool blockingWrite, ur_rect_offset_t bufferOrigin,
                                                   ur_rect_offset_t hostOrigin, ur_rect_region_t region,
                                                   size_t bufferRowPitch, size_t bufferSlicePitch, size_t hostRowPitch,
                                                   size_t hostSlicePitch, void *pSrc, uint32_t numEventsInWaitList,
                                                   const ur_event_handle_t *phEventWaitList,
                                                   ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pSrc);
  ORDO_BUFFER_PROLOGUE(hQueue, hBuffer, numEventsInWaitList, phEventWaitList, waits);
  if (ur_result_t r = check_rect_side(bufferOrigin, region, bufferRowPitch, bufferSlicePitch, hBuffer->size)) return r;
  if (ur_result_t r = check_rect_side(hostOrigin, region, hostRowPitch, hostSlicePitch, SIZE_MAX)) return r;
  const cl_rect bo(bufferOrigin), ho(hostOrigin), rg(region);
  return submit(
      hQueue, UR_COMMAND_MEM_BUFFER_WRITE_RECT, waits, phEvent,
      [&](cl_event *ev) {
        return cl.clEnqueueWriteBufferRect(hQueue->cl, hBuffer->cl, false, bo.v, ho.v, rg.v, bufferRowPitch,
                                           bufferSlicePitch, hostRowPitch, hostSlicePitch, pSrc, waits.size(),
                                           waits.data(), ev);
      },
      blockingWrite);
}

ur_result_t UR_APICALL urEnqueueMemBufferCopyRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBufferSrc,
                                                  ur_mem_handle_t hBufferDst, ur_rect_offset_t srcOrigin,
                                                  ur_rect_offset_t dstOrigin, ur_rect_region_t region,
                                                  size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch,
                                                  size_t dstSlicePitch, uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList,
                                                  ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(hBufferDst);
  ORDO_BUFFER_PROLOGUE(hQueue, hBufferSrc, numEventsInWaitList, phEventWaitList, waits);
  if (hBufferDst->context != hQueue->context) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (ur_result_t r = check_rect_side(srcOrigin, region, srcRowPitch, srcSlicePitch, hBufferSrc->size)) return r;
  if (ur_result_t r = check_rect_side(dstOrigin, region, dstRowPitch, dstSlicePitch, hBufferDst->size)) return r;
  const cl_rect so(srcOrigin), dO(dstOrigin), rg(region);
  return submit(hQueue, UR_COMMAND_MEM_BUFFER_COPY_RECT, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueCopyBufferRect(hQueue->cl, hBufferSrc->cl, hBufferDst->cl, so.v, dO.v, rg.v, srcRowPitch,
                                      srcSlicePitch, dstRowPitch, dstSlicePitch, waits.size(), waits.data(), ev);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferFill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, const void *pPattern,
                                              size_t patternSize, size_t offset, size_t size,
                                              uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                              ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pPattern);
  ORDO_BUFFER_PROLOGUE(hQueue, hBuffer, numEventsInWaitList, phEventWaitList, waits);
  if (patternSize == 0 || size == 0 || patternSize > size || (patternSize & (patternSize - 1)) || size % patternSize ||
      offset % patternSize)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (!in_bounds(hBuffer, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  return submit(hQueue, UR_COMMAND_MEM_BUFFER_FILL, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueFillBuffer(hQueue->cl, hBuffer->cl, pPattern, patternSize, offset, size, waits.size(),
                                  waits.data(), ev);
  });
}

ur_result_t UR_APICALL urEnqueueMemBufferMap(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blockingMap,
                                             ur_map_flags_t mapFlags, size_t offset, size_t size,
                                             uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                             ur_event_handle_t *phEvent, void **ppRetMap) {
  if (mapFlags & UR_MAP_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  ORDO_CHECK_PTR(ppRetMap);
  if (!ordo::mem::map_flags_ok(mapFlags)) return UR_RESULT_ERROR_INVALID_VALUE;
  ORDO_BUFFER_PROLOGUE(hQueue, hBuffer, numEventsInWaitList, phEventWaitList, waits);
  if (!in_bounds(hBuffer, offset, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  cl_map_flags flags = 0;
  if (mapFlags & UR_MAP_FLAG_READ) flags |= CL_MAP_READ;
  if (mapFlags & UR_MAP_FLAG_WRITE) flags |= CL_MAP_WRITE;
  if (mapFlags & UR_MAP_FLAG_WRITE_INVALIDATE_REGION) flags |= CL_MAP_WRITE_INVALIDATE_REGION;
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
  ORDO_CHECK_PTR(pMappedPtr);
  ORDO_BUFFER_PROLOGUE(hQueue, hMem, numEventsInWaitList, phEventWaitList, waits);
  return submit(hQueue, UR_COMMAND_MEM_UNMAP, waits, phEvent, [&](cl_event *ev) {
    return cl.clEnqueueUnmapMemObject(hQueue->cl, hMem->cl, pMappedPtr, waits.size(), waits.data(), ev);
  });
}

} // namespace

void install_memory_entry_points(ur_dditable_t &t) {
  t.Mem.pfnBufferCreate = urMemBufferCreate;
  t.Mem.pfnRetain = urMemRetain;
  t.Mem.pfnRelease = urMemRelease;
  t.Mem.pfnBufferPartition = urMemBufferPartition;
  t.Mem.pfnGetNativeHandle = urMemGetNativeHandle;
  t.Mem.pfnBufferCreateWithNativeHandle = urMemBufferCreateWithNativeHandle;
  t.Mem.pfnGetInfo = urMemGetInfo;
  t.Enqueue.pfnMemBufferRead = urEnqueueMemBufferRead;
  t.Enqueue.pfnMemBufferWrite = urEnqueueMemBufferWrite;
  t.Enqueue.pfnMemBufferCopy = urEnqueueMemBufferCopy;
  t.Enqueue.pfnMemBufferReadRect = urEnqueueMemBufferReadRect;
  t.Enqueue.pfnMemBufferWriteRect = urEnqueueMemBufferWriteRect;
  t.Enqueue.pfnMemBufferCopyRect = urEnqueueMemBufferCopyRect;
  t.Enqueue.pfnMemBufferFill = urEnqueueMemBufferFill;
  t.Enqueue.pfnMemBufferMap = urEnqueueMemBufferMap;
  t.Enqueue.pfnMemUnmap = urEnqueueMemUnmap;
}

} // namespace ordo::opencl
