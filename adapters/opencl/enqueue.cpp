// SPDX-License-Identifier: Apache-2.0
// urEnqueue*: waits and barriers, USM copies and fills, kernel launches.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "kernel.hpp"
#include "memory.hpp"
#include "ordo/checked_math.hpp"
#include "ordo/usm_2d_rules.hpp"
#include "program.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/kernel.hpp"
#include "ur_common/usm_commands.hpp"
#include "ur_common/wait.hpp"
#include "usm.hpp"

namespace ordo::opencl {
namespace {

// urEnqueueEventsWait*: a marker, or a barrier (ur_common/wait.hpp).
struct wait_hooks {
  using Queue = ur_queue_handle_t_;
  static ur_result_t enqueue_wait(Queue *q, ur_command_t command, bool barrier, uint32_t n,
                                  const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    ORDO_CL_WAIT_LIST(q, n, list);
    return submit(
        q, command, waits, phEvent,
        [&](cl_event *ev) {
          return barrier ? cl.clEnqueueBarrierWithWaitList(q->cl, waits.size(), waits.data(), ev)
                         : enqueue_marker(q, waits.size(), waits.data(), ev);
        },
        false, barrier);
  }
};

// A 2-D operation as one command per row, all after the wait list, joined by a marker
// whose event is the operation's event; one row (contiguous rows) is the command itself.
// `staging` (taken): host bytes the rows read, freed once they all completed.
template <class Row>
ur_result_t enqueue_rows(ur_queue_handle_t q, size_t height, const ClWaitList &waits, bool blocking,
                         ur_command_t command, ur_event_handle_t *phEvent, Row row,
                         std::unique_ptr<HostStaging> staging = nullptr) {
  std::vector<cl_event> rows;
  rows.reserve(height);
  return submit(
      q, command, waits, phEvent,
      [&](cl_event *ev) {
        cl_event done = nullptr;
        cl_event *out = staging ? &done : ev; // staging needs the end even where nobody asks
        cl_int err = CL_SUCCESS;
        if (height == 1) {
          err = row(0, waits.size(), waits.data(), out);
        } else {
          for (size_t y = 0; y < height && err == CL_SUCCESS; ++y) {
            cl_event e = nullptr;
            err = row(y, waits.size(), waits.data(), &e);
            if (err == CL_SUCCESS) rows.push_back(e);
          }
          if (err == CL_SUCCESS && out)
            err = cl.clEnqueueMarkerWithWaitList(q->cl, cl_uint(rows.size()), rows.data(), out);
          // On failure, rows already enqueued still run: let them finish before reporting.
          if (err != CL_SUCCESS && !rows.empty()) cl.clWaitForEvents(cl_uint(rows.size()), rows.data());
          for (cl_event e : rows) cl.clReleaseEvent(e);
        }
        if (staging && err == CL_SUCCESS) {
          free_after(done, staging.release());
          if (ev)
            *ev = done;
          else
            cl.clReleaseEvent(done);
        }
        return err;
      },
      blocking);
}

// A USM command's wait list and event, for the hooks below.
struct usm_command {
  ur_command_t type;
  ur_event_handle_t *out;
  ClWaitList waits;
  ur_result_t result;
  usm_command(ur_queue_handle_t q, ur_command_t type, uint32_t n, const ur_event_handle_t *list, ur_event_handle_t *out)
      : type(type), out(out), result(begin_command(q, n, list, waits)) {}
  ur_result_t status() const { return result; }
  ur_result_t finish(ur_result_t r) const { return r; } // submit has recorded it
};

// What ur_common's USM commands leave to OpenCL (ur_common/usm_commands.hpp). The wait
// list is checked before any pointer, and urEnqueueUSMMemcpy is one row of the 2-D copy;
// null pointers, zero sizes and the 1-D fill's sizes are the spec's checks (table tail).
struct usm_command_hooks {
  using Queue = ur_queue_handle_t_;
  using Command = usm_command;
  static constexpr bool memcpy_as_2d = true;
  static ur_result_t check_wait_list(Queue *q, uint32_t n, const ur_event_handle_t *list) {
    return ClWaitList::check(n, list, q->ctx);
  }
  // USM of the queue's context, or memory of no context (docs/opencl.md).
  static ur_result_t check_usm(Queue *q, const void *p, size_t bytes) {
    return ur_common::check_usm_range<ur_context_handle_t>(q->ctx, p, bytes);
  }
  static ur_result_t check_hint_range(Queue *q, const void *p, size_t bytes) { return check_usm(q, p, bytes); }

  static ur_result_t fill(Command &cmd, Queue *q, void *dst, const uint8_t *pattern, size_t patternSize, size_t size) {
    return fill_2d(cmd, q, static_cast<uint8_t *>(dst), size, pattern, patternSize, size, 1);
  }
  // The pattern runs on across rows, as over width * height contiguous bytes (as on
  // the other adapters): row y starts (y * width) % patternSize bytes into it.
  static ur_result_t fill_2d(Command &cmd, Queue *q, uint8_t *dst, size_t pitch, const uint8_t *pattern,
                             size_t patternSize, size_t width, size_t height) {
    // The smallest period the pattern repeats with fills as well as the whole pattern.
    const size_t period = ur_common::pattern_period(pattern, patternSize, kClMaxFillPattern);
    if (pitch == width || height == 1) // one contiguous range
      return enqueue_rows(q, 1, cmd.waits, false, cmd.type, cmd.out,
                          [&](size_t, cl_uint n, const cl_event *w, cl_event *ev) {
                            return usm_enqueue_fill(q, dst, pattern, period, width * height, n, w, ev);
                          });
    // Rows of whole periods, each an OpenCL fill of its own.
    if (period <= kClMaxFillPattern && width % period == 0 && pitch % period == 0 &&
        reinterpret_cast<uintptr_t>(dst) % period == 0)
      return enqueue_rows(q, height, cmd.waits, false, cmd.type, cmd.out,
                          [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
                            return usm_enqueue_fill(q, dst + y * pitch, pattern, period, width, n, w, ev);
                          });
    // Otherwise the rows are copied from the pattern spelled out on the host: row y
    // from its phase on. `line` runs on to the last row's end.
    size_t last_phase = 0;
    for (size_t y = 0; y < height; ++y) last_phase = std::max(last_phase, (y * width) % patternSize);
    std::unique_ptr<HostStaging> line = spelled_out(pattern, patternSize, last_phase + width);
    if (!line) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    const unsigned char *from = line->data();
    return enqueue_rows(
        q, height, cmd.waits, false, cmd.type, cmd.out,
        [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
          return usm_enqueue_memcpy(q, false, dst + y * pitch, from + ((y * width) % patternSize), width, n, w, ev);
        },
        std::move(line));
  }

  // Prefetch and advice: SVM and USM memory on these devices needs no migration, and
  // advice is a hint they do not use. The command only orders.
  static ur_result_t hint(Command &cmd, Queue *q) {
    return submit(q, cmd.type, cmd.waits, cmd.out,
                  [&](cl_event *ev) { return enqueue_marker(q, cmd.waits.size(), cmd.waits.data(), ev); });
  }
  static ur_result_t prefetch(Command &cmd, Queue *q, const void *, size_t, ur_usm_migration_flags_t) {
    return hint(cmd, q);
  }
  static ur_result_t advise(Command &cmd, Queue *q, const void *, size_t, ur_usm_advice_flags_t) {
    return hint(cmd, q);
  }

  static ur_result_t memcpy(Queue *q, bool blocking, void *pDst, const void *pSrc, size_t size, uint32_t n,
                            const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    return copy_rows(UR_COMMAND_USM_MEMCPY, q, blocking, pDst, size, pSrc, size, size, 1, n, list, phEvent);
  }
  static ur_result_t memcpy_2d(Queue *q, bool blocking, void *pDst, size_t dstPitch, const void *pSrc, size_t srcPitch,
                               size_t width, size_t height, uint32_t n, const ur_event_handle_t *list,
                               ur_event_handle_t *phEvent) {
    return copy_rows(UR_COMMAND_USM_MEMCPY_2D, q, blocking, pDst, dstPitch, pSrc, srcPitch, width, height, n, list,
                     phEvent);
  }
  static ur_result_t copy_rows(ur_command_t command, Queue *q, bool blocking, void *pDst, size_t dstPitch,
                               const void *pSrc, size_t srcPitch, size_t width, size_t height, uint32_t n,
                               const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
    usm_command cmd(q, command, n, list, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    const bool flat = dstPitch == width && srcPitch == width; // one contiguous range
    return enqueue_rows(q, flat ? 1 : height, cmd.waits, blocking, command, phEvent,
                        [&](size_t y, cl_uint n, const cl_event *w, cl_event *ev) {
                          return usm_enqueue_memcpy(q, false, static_cast<char *>(pDst) + y * dstPitch,
                                                    static_cast<const char *>(pSrc) + y * srcPitch,
                                                    flat ? width * height : width, n, w, ev);
                        });
  }
};

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
          hKernel->program->ctx == hQueue->ctx))
    return r;
  for (uint32_t i = 0; i < numArgs; ++i)
    if (pArgs[i].type > UR_EXP_KERNEL_ARG_TYPE_SAMPLER) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  // A cl_kernel keeps the arguments of its last launch: one this launch leaves out must be
  // refused here, not run with an earlier launch's value.
  if (ur_result_t r = ordo::ur_common::check_named_args(hKernel->num_args, numArgs, pArgs, hQueue->dev->local_mem))
    return r;
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
  ordo::ur_common::usm_commands<usm_command_hooks>::install(t);
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = urEnqueueKernelLaunchWithArgsExp;
}

} // namespace ordo::opencl
