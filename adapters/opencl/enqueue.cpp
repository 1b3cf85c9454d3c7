// SPDX-License-Identifier: Apache-2.0
// urEnqueue*: waits and barriers, USM copies and fills, kernel launches.
#include <mutex>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "kernel.hpp"
#include "ordo/checked_math.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/wait.hpp"
#include "usm.hpp"

namespace ordo::opencl {
namespace {

// The checks every enqueue starts with; fills `waits` from the UR wait list.
#define ORDO_ENQUEUE_PROLOGUE(q, n, list, waits)                                                                       \
  ORDO_CHECK_HANDLE(q);                                                                                                \
  if (ur_result_t r_ = check_wait_list(n, list)) return r_;                                                            \
  ClWaitList waits;                                                                                                    \
  if (ur_result_t r_ = waits.assign(n, list, (q)->context)) return r_

// A 2-D region's span, (height - 1) * pitch + width, in checked arithmetic, then the
// range check of check_usm_range (usm.hpp).
ur_result_t check_region_2d(ur_context_handle_t c, const void *p, size_t pitch, size_t width, size_t height) {
  size_t span;
  if (!ordo::checked::span_2d(pitch, width, height, span)) return UR_RESULT_ERROR_INVALID_SIZE;
  return check_usm_range(c, p, span);
}

// urEnqueueEventsWait*: a marker, or a barrier (ur_common/wait.hpp).
struct wait_hooks {
  using Queue = ur_queue_handle_t_;
  static ur_result_t enqueue_wait(Queue *q, ur_command_t command, bool barrier, uint32_t n,
                                  const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    if (ur_result_t r = check_wait_list(n, list)) return r;
    ClWaitList waits;
    if (ur_result_t r = waits.assign(n, list, q->context)) return r;
    return submit(
        q, command, waits, phEvent,
        [&](cl_event *ev) {
          return barrier ? cl.clEnqueueBarrierWithWaitList(q->cl, waits.size(), waits.data(), ev)
                         : enqueue_marker(q, waits.size(), waits.data(), ev);
        },
        false, barrier);
  }
};

ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst, const void *pSrc,
                                          size_t size, uint32_t numEventsInWaitList,
                                          const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pDst);
  ORDO_CHECK_PTR(pSrc);
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(hQueue->context, pDst, size)) return r;
  if (ur_result_t r = check_usm_range(hQueue->context, pSrc, size)) return r;
  return submit(
      hQueue, UR_COMMAND_USM_MEMCPY, waits, phEvent,
      [&](cl_event *ev) { return usm_enqueue_memcpy(hQueue, false, pDst, pSrc, size, waits.size(), waits.data(), ev); },
      blocking);
}

ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize, const void *pPattern,
                                        size_t size, uint32_t numEventsInWaitList,
                                        const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pMem);
  ORDO_CHECK_PTR(pPattern);
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(hQueue->context, pMem, size)) return r;
  return submit(hQueue, UR_COMMAND_USM_FILL, waits, phEvent, [&](cl_event *ev) {
    return usm_enqueue_fill(hQueue, pMem, pPattern, patternSize, size, waits.size(), waits.data(), ev);
  });
}

// SVM and USM memory on these devices needs no migration: the command only orders.
ur_result_t UR_APICALL urEnqueueUSMPrefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                            ur_usm_migration_flags_t flags, uint32_t numEventsInWaitList,
                                            const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pMem);
  if (flags & UR_USM_MIGRATION_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(hQueue->context, pMem, size)) return r;
  return submit(hQueue, UR_COMMAND_USM_PREFETCH, waits, phEvent,
                [&](cl_event *ev) { return enqueue_marker(hQueue, waits.size(), waits.data(), ev); });
}

ur_result_t UR_APICALL urEnqueueUSMAdvise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                          ur_usm_advice_flags_t advice, ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(hQueue);
  ORDO_CHECK_PTR(pMem);
  if (advice & UR_USM_ADVICE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(hQueue->context, pMem, size)) return r;
  // Advice is a hint these devices do not use.
  ClWaitList none;
  return submit(hQueue, UR_COMMAND_USM_ADVISE, none, phEvent,
                [&](cl_event *ev) { return cl.clEnqueueMarkerWithWaitList(hQueue->cl, 0, nullptr, ev); });
}

// A 2-D operation as one command per row, all after the wait list, joined by a marker
// whose event is the operation's event.
template <class Row>
ur_result_t enqueue_rows(ur_queue_handle_t q, size_t height, const ClWaitList &waits, bool blocking,
                         ur_command_t command, ur_event_handle_t *phEvent, Row row) {
  std::vector<cl_event> rows;
  rows.reserve(height);
  return submit(
      q, command, waits, phEvent,
      [&](cl_event *ev) {
        cl_int err = CL_SUCCESS;
        for (size_t y = 0; y < height && err == CL_SUCCESS; ++y) {
          cl_event e = nullptr;
          err = row(y, waits.size(), waits.data(), &e);
          if (err == CL_SUCCESS) rows.push_back(e);
        }
        if (err == CL_SUCCESS && ev) err = cl.clEnqueueMarkerWithWaitList(q->cl, cl_uint(rows.size()), rows.data(), ev);
        // On failure, rows already enqueued still run: let them finish before reporting.
        if (err != CL_SUCCESS && !rows.empty()) cl.clWaitForEvents(cl_uint(rows.size()), rows.data());
        for (cl_event e : rows) cl.clReleaseEvent(e);
        return err;
      },
      blocking);
}

ur_result_t UR_APICALL urEnqueueUSMFill2D(ur_queue_handle_t hQueue, void *pMem, size_t pitch, size_t patternSize,
                                          const void *pPattern, size_t width, size_t height,
                                          uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                          ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pMem);
  ORDO_CHECK_PTR(pPattern);
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (pitch == 0 || width == 0 || height == 0 || patternSize == 0 || pitch < width || (patternSize & (patternSize - 1)))
    return UR_RESULT_ERROR_INVALID_SIZE;
  // The span check comes first: it also bounds width * height (pitch >= width).
  if (ur_result_t r = check_region_2d(hQueue->context, pMem, pitch, width, height)) return r;
  if (patternSize > width * height || (width * height) % patternSize) return UR_RESULT_ERROR_INVALID_SIZE;
  // Each row starts the pattern afresh, so a row must hold whole patterns.
  if (width % patternSize) return UR_RESULT_ERROR_UNSUPPORTED_SIZE;
  auto *base = static_cast<char *>(pMem);
  if (pitch == width) { // one contiguous range
    return submit(hQueue, UR_COMMAND_USM_FILL_2D, waits, phEvent, [&](cl_event *ev) {
      return usm_enqueue_fill(hQueue, base, pPattern, patternSize, width * height, waits.size(), waits.data(), ev);
    });
  }
  return enqueue_rows(hQueue, height, waits, false, UR_COMMAND_USM_FILL_2D, phEvent,
                      [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
                        return usm_enqueue_fill(hQueue, base + y * pitch, pPattern, patternSize, width, n, w, ev);
                      });
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy2D(ur_queue_handle_t hQueue, bool blocking, void *pDst, size_t dstPitch,
                                            const void *pSrc, size_t srcPitch, size_t width, size_t height,
                                            uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                            ur_event_handle_t *phEvent) {
  ORDO_CHECK_PTR(pDst);
  ORDO_CHECK_PTR(pSrc);
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (srcPitch == 0 || dstPitch == 0 || srcPitch < width || dstPitch < width || height == 0 || width == 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_region_2d(hQueue->context, pDst, dstPitch, width, height)) return r;
  if (ur_result_t r = check_region_2d(hQueue->context, pSrc, srcPitch, width, height)) return r;
  auto *dst = static_cast<char *>(pDst);
  auto *src = static_cast<const char *>(pSrc);
  if (dstPitch == width && srcPitch == width) { // one contiguous range
    return submit(
        hQueue, UR_COMMAND_USM_MEMCPY_2D, waits, phEvent,
        [&](cl_event *ev) {
          return usm_enqueue_memcpy(hQueue, false, dst, src, width * height, waits.size(), waits.data(), ev);
        },
        blocking);
  }
  return enqueue_rows(hQueue, height, waits, blocking, UR_COMMAND_USM_MEMCPY_2D, phEvent,
                      [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
                        return usm_enqueue_memcpy(hQueue, false, dst + y * dstPitch, src + y * srcPitch, width, n, w,
                                                  ev);
                      });
}

ur_result_t UR_APICALL urEnqueueKernelLaunchWithArgsExp(
    ur_queue_handle_t hQueue, ur_kernel_handle_t hKernel, uint32_t workDim, const size_t *pGlobalWorkOffset,
    const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize, uint32_t numArgs,
    const ur_exp_kernel_arg_properties_t *pArgs, const ur_kernel_launch_ext_properties_t *launchPropList,
    uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_PTR(pGlobalWorkSize);
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (numArgs > 0 && !pArgs) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; i < numArgs; ++i)
    if (pArgs[i].type > UR_EXP_KERNEL_ARG_TYPE_SAMPLER) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (launchPropList) {
    if (launchPropList->flags & UR_KERNEL_LAUNCH_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (launchPropList->flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE) return UR_RESULT_ERROR_INVALID_OPERATION;
    for (auto *p = static_cast<const ur_base_properties_t *>(launchPropList->pNext); p;
         p = static_cast<const ur_base_properties_t *>(p->pNext))
      if (p->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_CLUSTER_PROPERTY ||
          p->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY)
        return UR_RESULT_ERROR_INVALID_OPERATION; // the device reports no launch capabilities
  }
  if (workDim < 1 || workDim > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  for (uint32_t d = 0; d < workDim; ++d) {
    if (pGlobalWorkSize[d] == 0) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
    if (pLocalWorkSize && pLocalWorkSize[d] == 0) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
  }
  if (hKernel->context != hQueue->context) return UR_RESULT_ERROR_INVALID_KERNEL;

  auto launch = [&](cl_event *ev) {
    return cl.clEnqueueNDRangeKernel(hQueue->cl, hKernel->cl, workDim, pGlobalWorkOffset, pGlobalWorkSize,
                                     pLocalWorkSize, waits.size(), waits.data(), ev);
  };
  // No arguments, no shared state: clEnqueueNDRangeKernel itself is thread-safe.
  if (numArgs == 0 && hKernel->num_args == 0) return submit(hQueue, UR_COMMAND_KERNEL_LAUNCH, waits, phEvent, launch);
  // Arguments live in the cl_kernel: setting them and enqueuing is one step.
  std::lock_guard<std::mutex> lock(hKernel->launch_mutex);
  for (uint32_t i = 0; i < numArgs; ++i)
    if (ur_result_t r = set_kernel_arg(hKernel, pArgs[i])) return r;
  return submit(hQueue, UR_COMMAND_KERNEL_LAUNCH, waits, phEvent, launch);
}

} // namespace

void install_enqueue_entry_points(ur_dditable_t &t) {
  ordo::ur_common::wait_entry_points<wait_hooks>::install(t);
  t.Enqueue.pfnUSMMemcpy = urEnqueueUSMMemcpy;
  t.Enqueue.pfnUSMFill = urEnqueueUSMFill;
  t.Enqueue.pfnUSMPrefetch = urEnqueueUSMPrefetch;
  t.Enqueue.pfnUSMAdvise = urEnqueueUSMAdvise;
  t.Enqueue.pfnUSMFill2D = urEnqueueUSMFill2D;
  t.Enqueue.pfnUSMMemcpy2D = urEnqueueUSMMemcpy2D;
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = urEnqueueKernelLaunchWithArgsExp;
}

} // namespace ordo::opencl
