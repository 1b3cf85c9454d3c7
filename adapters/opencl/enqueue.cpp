// SPDX-License-Identifier: Apache-2.0
// urEnqueue*: waits and barriers, USM copies and fills, kernel launches.
#include <mutex>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "kernel.hpp"
#include "ordo/checked_math.hpp"
#include "ordo/usm_2d_rules.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/kernel.hpp"
#include "ur_common/wait.hpp"
#include "usm.hpp"

namespace ordo::opencl {
namespace {

// begin_command (queue.hpp), or return its refusal; declares `waits`.
#define ORDO_ENQUEUE_PROLOGUE(q, n, list, waits)                                                                       \
  ClWaitList waits;                                                                                                    \
  if (ur_result_t r_ = begin_command(q, n, list, waits)) return r_

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
    ORDO_ENQUEUE_PROLOGUE(q, n, list, waits);
    return submit(
        q, command, waits, phEvent,
        [&](cl_event *ev) {
          return barrier ? cl.clEnqueueBarrierWithWaitList(q->cl, waits.size(), waits.data(), ev)
                         : enqueue_marker(q, waits.size(), waits.data(), ev);
        },
        false, barrier);
  }
};

// urEnqueueUSMPrefetch, and urEnqueueUSMAdvise with no wait list: SVM and USM memory on
// these devices needs no migration, and advice is a hint they do not use. The command
// only orders.
ur_result_t usm_hint(ur_queue_handle_t hQueue, ur_command_t command, const void *pMem, size_t size,
                     uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                     ur_event_handle_t *phEvent) {
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (ur_result_t r = check_usm_range(hQueue->ctx, pMem, size)) return r;
  return submit(hQueue, command, waits, phEvent,
                [&](cl_event *ev) { return enqueue_marker(hQueue, waits.size(), waits.data(), ev); });
}

// A 2-D operation as one command per row, all after the wait list, joined by a marker
// whose event is the operation's event; one row (contiguous rows) is the command itself.
template <class Row>
ur_result_t enqueue_rows(ur_queue_handle_t q, size_t height, const ClWaitList &waits, bool blocking,
                         ur_command_t command, ur_event_handle_t *phEvent, Row row) {
  std::vector<cl_event> rows;
  rows.reserve(height);
  return submit(
      q, command, waits, phEvent,
      [&](cl_event *ev) {
        if (height == 1) return row(0, waits.size(), waits.data(), ev);
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

// urEnqueueUSMFill2D, and urEnqueueUSMFill as one row of any pattern size.
template <ur_command_t Command>
ur_result_t UR_APICALL usm_fill(ur_queue_handle_t hQueue, void *pMem, size_t pitch, size_t patternSize,
                                const void *pPattern, size_t width, size_t height, uint32_t numEventsInWaitList,
                                const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  // urEnqueueUSMFill's size rules are the spec's own (the table tail's checks).
  if (Command == UR_COMMAND_USM_FILL_2D)
    if (ur_result_t r = ordo::usm_2d::fill_sizes(pMem, pitch, patternSize, width, height)) return r;
  if (ur_result_t r = check_region_2d(hQueue->ctx, pMem, pitch, width, height)) return r;
  // Each row starts the pattern afresh, so a row must hold whole patterns.
  if (width % patternSize) return UR_RESULT_ERROR_UNSUPPORTED_SIZE;
  auto *base = static_cast<char *>(pMem);
  const bool flat = pitch == width; // one contiguous range
  return enqueue_rows(hQueue, flat ? 1 : height, waits, false, Command, phEvent,
                      [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
                        return usm_enqueue_fill(hQueue, base + y * pitch, pPattern, patternSize,
                                                flat ? width * height : width, n, w, ev);
                      });
}

// urEnqueueUSMMemcpy2D, and urEnqueueUSMMemcpy as one row.
template <ur_command_t Command>
ur_result_t UR_APICALL usm_copy(ur_queue_handle_t hQueue, bool blocking, void *pDst, size_t dstPitch, const void *pSrc,
                                size_t srcPitch, size_t width, size_t height, uint32_t numEventsInWaitList,
                                const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_ENQUEUE_PROLOGUE(hQueue, numEventsInWaitList, phEventWaitList, waits);
  if (ur_result_t r = ordo::usm_2d::memcpy_sizes(pDst, dstPitch, pSrc, srcPitch, width, height)) return r;
  if (ur_result_t r = check_region_2d(hQueue->ctx, pDst, dstPitch, width, height)) return r;
  if (ur_result_t r = check_region_2d(hQueue->ctx, pSrc, srcPitch, width, height)) return r;
  auto *dst = static_cast<char *>(pDst);
  auto *src = static_cast<const char *>(pSrc);
  const bool flat = dstPitch == width && srcPitch == width; // one contiguous range
  return enqueue_rows(hQueue, flat ? 1 : height, waits, blocking, Command, phEvent,
                      [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
                        return usm_enqueue_memcpy(hQueue, false, dst + y * dstPitch, src + y * srcPitch,
                                                  flat ? width * height : width, n, w, ev);
                      });
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst, const void *pSrc,
                                          size_t size, uint32_t n, const ur_event_handle_t *list,
                                          ur_event_handle_t *phEvent) {
  return usm_copy<UR_COMMAND_USM_MEMCPY>(hQueue, blocking, pDst, size, pSrc, size, size, 1, n, list, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize, const void *pPattern,
                                        size_t size, uint32_t n, const ur_event_handle_t *list,
                                        ur_event_handle_t *phEvent) {
  return usm_fill<UR_COMMAND_USM_FILL>(hQueue, pMem, size, patternSize, pPattern, size, 1, n, list, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMPrefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                            ur_usm_migration_flags_t, uint32_t n, const ur_event_handle_t *list,
                                            ur_event_handle_t *phEvent) {
  return usm_hint(hQueue, UR_COMMAND_USM_PREFETCH, pMem, size, n, list, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMAdvise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                          ur_usm_advice_flags_t, ur_event_handle_t *phEvent) {
  return usm_hint(hQueue, UR_COMMAND_USM_ADVISE, pMem, size, 0, nullptr, phEvent);
}

ur_result_t UR_APICALL urEnqueueKernelLaunchWithArgsExp(
    ur_queue_handle_t hQueue, ur_kernel_handle_t hKernel, uint32_t workDim, const size_t *pGlobalWorkOffset,
    const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize, uint32_t numArgs,
    const ur_exp_kernel_arg_properties_t *pArgs, const ur_kernel_launch_ext_properties_t *launchPropList,
    uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_HANDLE(hQueue);
  ClWaitList waits;
  if (ur_result_t r = ordo::ur_common::check_launch(
          workDim, pGlobalWorkSize, pLocalWorkSize, numArgs, pArgs,
          [&] { return begin_command(hQueue, numEventsInWaitList, phEventWaitList, waits); },
          hKernel->context == hQueue->ctx))
    return r;
  for (uint32_t i = 0; i < numArgs; ++i)
    if (pArgs[i].type > UR_EXP_KERNEL_ARG_TYPE_SAMPLER) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (launchPropList) {
    if (launchPropList->flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE) return UR_RESULT_ERROR_INVALID_OPERATION;
    for (auto *p = static_cast<const ur_base_properties_t *>(launchPropList->pNext); p;
         p = static_cast<const ur_base_properties_t *>(p->pNext))
      if (p->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_CLUSTER_PROPERTY ||
          p->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY)
        return UR_RESULT_ERROR_INVALID_OPERATION; // the device reports no launch capabilities
  }

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
  t.Enqueue.pfnUSMFill2D = usm_fill<UR_COMMAND_USM_FILL_2D>;
  t.Enqueue.pfnUSMMemcpy2D = usm_copy<UR_COMMAND_USM_MEMCPY_2D>;
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = urEnqueueKernelLaunchWithArgsExp;
}

} // namespace ordo::opencl
