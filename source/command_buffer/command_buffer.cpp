// SPDX-License-Identifier: Apache-2.0
// urCommandBuffer*Exp and urEnqueueCommandBufferExp over recorded commands
// (docs/command-buffers.md). Appending checks everything the command's enqueue would
// check that can be known then, copies the arguments and holds the handles; enqueueing
// replays the commands in order through the adapter's own entry points, each after its
// sync points, and ends with a marker whose event is the command buffer's.
#include "ordo/guarded.hpp"
#include "ordo_cb/command_buffer.hpp"

#include <algorithm>
#include <utility>
#include <cstring>
#include <new>

#include "ordo/info.hpp"
#include "ordo/rect.hpp"
#include "bound_events.hpp"
#include "records.hpp"

namespace ordo::command_buffer {

namespace {

using SyncPoint = ur_exp_command_buffer_sync_point_t;

using ordo::guarded;

ur_result_t bad_buffer(const void *h) {
  return h ? UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_EXP : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// ---- checks shared by the appends ----

// A buffer of the command buffer's context, and its size.
ur_result_t buffer_of(const CommandBuffer &cb, ur_mem_handle_t m, size_t &size) {
  if (!m) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  ur_context_handle_t c = nullptr;
  if (table().Mem.pfnGetInfo(m, UR_MEM_INFO_CONTEXT, sizeof c, &c, nullptr) != UR_RESULT_SUCCESS || c != cb.context)
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (table().Mem.pfnGetInfo(m, UR_MEM_INFO_SIZE, sizeof size, &size, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return UR_RESULT_SUCCESS;
}

void hold_buffer(Command &c, ur_mem_handle_t m) {
  c.held.reserve(c.held.size() + 1); // may throw before the retain, never after
  table().Mem.pfnRetain(m);
  c.held.push_back(m);
}

bool range_inside(size_t offset, size_t size, size_t total) {
  return size != 0 && offset <= total && size <= total - offset;
}

// A USM range must lie in its allocation; memory the context does not know (the
// host's own) is not checked, as the enqueues do not check it either.
ur_result_t usm_range(const CommandBuffer &cb, const void *p, size_t size) {
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  if (table().USM.pfnGetMemAllocInfo(cb.context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr) !=
          UR_RESULT_SUCCESS ||
      type == UR_USM_TYPE_UNKNOWN)
    return UR_RESULT_SUCCESS;
  void *base = nullptr;
  size_t total = 0;
  if (table().USM.pfnGetMemAllocInfo(cb.context, p, UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr) ||
      table().USM.pfnGetMemAllocInfo(cb.context, p, UR_USM_ALLOC_INFO_SIZE, sizeof total, &total, nullptr))
    return UR_RESULT_SUCCESS;
  size_t offset = static_cast<size_t>(static_cast<const char *>(p) - static_cast<const char *>(base));
  return range_inside(offset, size, total) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_SIZE;
}

// The common part of every append: the handle, the wait lists, the events every run
// waits for (held) and the command's signal event (a bound event, bound at each run).
// `fill` checks and records the command's own arguments; then, under the buffer's
// lock, the command joins it.
template <class Fill>
ur_result_t append(ur_exp_command_buffer_handle_t h, ur_command_t type, uint32_t numSync, const SyncPoint *pSync,
                   uint32_t numEvents, const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                   ur_event_handle_t *phEvent, ur_exp_command_buffer_command_handle_t *phCommand, Fill &&fill) {
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  if ((numSync > 0) != (pSync != nullptr)) return UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_WAIT_LIST_EXP;
  if ((numEvents > 0) != (phEvents != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  return guarded([&]() -> ur_result_t {
    auto cmd = std::make_unique<Command>();
    cmd->type = type;
    if (ur_result_t r = fill(*cb.get(), *cmd)) return r;
    if (phCommand && !cb->desc.isUpdatable) return UR_RESULT_ERROR_INVALID_OPERATION;
    for (uint32_t i = 0; i < numEvents; ++i)
      if (!phEvents[i]) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
    cmd->after.assign(pSync, pSync + numSync);
    std::lock_guard<std::mutex> lock(cb->mu);
    if (cb->finalized) return UR_RESULT_ERROR_INVALID_OPERATION;
    for (SyncPoint s : cmd->after)
      if (s >= cb->commands.size()) return UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_EXP;
    // Events last: nothing below fails once they are held.
    cmd->waits.reserve(numEvents);
    if (phEvent)
      if (ur_result_t r = make_bound(cb->context, type, false, &cmd->signal)) return r;
    cmd->owner = cb.get();
    cb->commands.reserve(cb->commands.size() + 1);
    Command *c = cmd.get();
    register_command(c); // may throw: then the command is not in the buffer either
    cb->commands.push_back(std::move(cmd));
    for (uint32_t i = 0; i < numEvents; ++i) {
      table().Event.pfnRetain(phEvents[i]);
      c->waits.push_back(phEvents[i]);
    }
    if (phEvent) {
      table().Event.pfnRetain(c->signal); // the caller's; the command keeps its own
      *phEvent = c->signal;
    }
    if (pSyncPoint) *pSyncPoint = static_cast<SyncPoint>(cb->commands.size() - 1);
    if (phCommand) *phCommand = reinterpret_cast<ur_exp_command_buffer_command_handle_t>(c);
    return UR_RESULT_SUCCESS;
  });
}

// ---- kernel launches ----

ur_result_t kernel_of(const CommandBuffer &cb, ur_kernel_handle_t k) {
  if (!k) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  ur_context_handle_t c = nullptr;
  if (table().Kernel.pfnGetInfo(k, UR_KERNEL_INFO_CONTEXT, sizeof c, &c, nullptr) != UR_RESULT_SUCCESS ||
      c != cb.context)
    return UR_RESULT_ERROR_INVALID_KERNEL;
  return UR_RESULT_SUCCESS;
}

// The kernel's argument count, or UINT32_MAX when the adapter cannot say.
uint32_t num_args(ur_kernel_handle_t k) {
  uint32_t n = 0;
  if (table().Kernel.pfnGetInfo(k, UR_KERNEL_INFO_NUM_ARGS, sizeof n, &n, nullptr) != UR_RESULT_SUCCESS)
    return UINT32_MAX;
  return n;
}

ur_result_t check_range(uint32_t dims, const size_t *global, const size_t *local) {
  for (uint32_t d = 0; d < dims; ++d) {
    if (global[d] == 0) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
    if (local && (local[d] == 0 || global[d] % local[d] != 0)) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
  }
  return UR_RESULT_SUCCESS;
}

// Records one argument (a copy of its value; a buffer retained). On error nothing is held.
ur_result_t record_arg(const CommandBuffer &cb, const ur_exp_kernel_arg_properties_t &a, ArgRecord &out) {
  out = ArgRecord{};
  out.type = a.type;
  out.index = a.index;
  out.size = a.size;
  switch (a.type) {
  case UR_EXP_KERNEL_ARG_TYPE_VALUE:
    if (a.size == 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    if (!a.value.value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    out.bytes.assign(static_cast<const unsigned char *>(a.value.value),
                     static_cast<const unsigned char *>(a.value.value) + a.size);
    return UR_RESULT_SUCCESS;
  case UR_EXP_KERNEL_ARG_TYPE_POINTER: out.pointer = a.value.pointer; return UR_RESULT_SUCCESS;
  case UR_EXP_KERNEL_ARG_TYPE_LOCAL:
    return a.size == 0 ? UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE : UR_RESULT_SUCCESS;
  case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: {
    if (a.value.memObjTuple.flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    out.mem_flags = a.value.memObjTuple.flags;
    if (ur_mem_handle_t m = a.value.memObjTuple.hMem) {
      size_t size = 0;
      if (buffer_of(cb, m, size) != UR_RESULT_SUCCESS) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
      table().Mem.pfnRetain(m);
      out.mem = m;
    }
    return UR_RESULT_SUCCESS;
  }
  case UR_EXP_KERNEL_ARG_TYPE_SAMPLER: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // no samplers in Ordo
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// Puts `a` in place of the argument of the same index (releasing what that one held).
void set_arg(std::vector<ArgRecord> &args, ArgRecord &&a) {
  for (ArgRecord &old : args)
    if (old.index == a.index) {
      if (old.mem) table().Mem.pfnRelease(old.mem);
      old = std::move(a);
      return;
    }
  args.push_back(std::move(a));
}

void release_args(std::vector<ArgRecord> &args) {
  for (ArgRecord &a : args)
    if (a.mem) table().Mem.pfnRelease(std::exchange(a.mem, nullptr));
  args.clear();
}

// Every index below the kernel's count set once, none above it.
ur_result_t check_arg_indices(ur_kernel_handle_t k, const std::vector<ArgRecord> &args) {
  uint32_t n = num_args(k);
  if (n == UINT32_MAX) return UR_RESULT_SUCCESS;
  std::vector<bool> set(n, false);
  for (const ArgRecord &a : args) {
    if (a.index >= n) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    set[a.index] = true;
  }
  for (bool s : set)
    if (!s) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL appendKernelLaunchWithArgs(
    ur_exp_command_buffer_handle_t hCommandBuffer, ur_kernel_handle_t hKernel, uint32_t workDim,
    const size_t *pGlobalWorkOffset, const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize, uint32_t numArgs,
    const ur_exp_kernel_arg_properties_t *pArgs, uint32_t numKernelAlternatives,
    ur_kernel_handle_t *phKernelAlternatives, uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
    const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint, ur_event_handle_t *phEvent,
    ur_exp_command_buffer_command_handle_t *phCommand) {
  if (!hKernel) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append(hCommandBuffer, UR_COMMAND_KERNEL_LAUNCH, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent,
                phCommand, [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  if (!pGlobalWorkSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (numArgs > 0 && !pArgs) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if ((numKernelAlternatives > 0) != (phKernelAlternatives != nullptr))
                    return UR_RESULT_ERROR_INVALID_VALUE;
                  if (ur_result_t r = kernel_of(cb, hKernel)) return r;
                  for (uint32_t i = 0; i < numKernelAlternatives; ++i) {
                    if (phKernelAlternatives[i] == hKernel) return UR_RESULT_ERROR_INVALID_VALUE;
                    if (ur_result_t r = kernel_of(cb, phKernelAlternatives[i])) return r;
                  }
                  if (workDim < 1 || workDim > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
                  if (ur_result_t r = check_range(workDim, pGlobalWorkSize, pLocalWorkSize)) return r;
                  auto launch = std::make_unique<LaunchRecord>();
                  launch->alternatives.reserve(numKernelAlternatives + 1);
                  launch->alternatives.push_back(hKernel);
                  table().Kernel.pfnRetain(hKernel);
                  for (uint32_t i = 0; i < numKernelAlternatives; ++i) {
                    table().Kernel.pfnRetain(phKernelAlternatives[i]);
                    launch->alternatives.push_back(phKernelAlternatives[i]);
                  }
                  launch->kernel = hKernel;
                  launch->dims = workDim;
                  for (uint32_t d = 0; d < workDim; ++d) {
                    launch->global[d] = pGlobalWorkSize[d];
                    if (pGlobalWorkOffset) launch->offset[d] = pGlobalWorkOffset[d];
                    if (pLocalWorkSize) launch->local[d] = pLocalWorkSize[d];
                  }
                  launch->has_offset = pGlobalWorkOffset != nullptr;
                  launch->has_local = pLocalWorkSize != nullptr;
                  for (uint32_t i = 0; i < numArgs; ++i) {
                    ArgRecord a;
                    if (ur_result_t r = record_arg(cb, pArgs[i], a)) return r; // launch's destructor releases the rest
                    set_arg(launch->args, std::move(a));
                  }
                  if (ur_result_t r = check_arg_indices(hKernel, launch->args)) return r;
                  cmd.launch = std::move(launch);
                  return UR_RESULT_SUCCESS;
                });
}

// Without arguments: for kernels that take none (the pinned API sets arguments only with a launch).
ur_result_t UR_APICALL appendKernelLaunch(ur_exp_command_buffer_handle_t hCommandBuffer, ur_kernel_handle_t hKernel,
                                          uint32_t workDim, const size_t *pGlobalWorkOffset,
                                          const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize,
                                          uint32_t numKernelAlternatives, ur_kernel_handle_t *phKernelAlternatives,
                                          uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
                                          const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                          ur_event_handle_t *phEvent,
                                          ur_exp_command_buffer_command_handle_t *phCommand) {
  return appendKernelLaunchWithArgs(hCommandBuffer, hKernel, workDim, pGlobalWorkOffset, pGlobalWorkSize,
                                    pLocalWorkSize, 0, nullptr, numKernelAlternatives, phKernelAlternatives, numSync,
                                    pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand);
}

// ---- USM ----

ur_result_t UR_APICALL appendUSMMemcpy(ur_exp_command_buffer_handle_t h, void *pDst, const void *pSrc, size_t size,
                                       uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
                                       const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                       ur_event_handle_t *phEvent, ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(h, UR_COMMAND_USM_MEMCPY, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
                [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
                  if (ur_result_t r = usm_range(cb, pDst, size)) return r;
                  if (ur_result_t r = usm_range(cb, pSrc, size)) return r;
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().Enqueue.pfnUSMMemcpy(q, false, pDst, pSrc, size, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

ur_result_t UR_APICALL appendUSMFill(ur_exp_command_buffer_handle_t h, void *pMemory, const void *pPattern,
                                     size_t patternSize, size_t size, uint32_t numSync, const SyncPoint *pSync,
                                     uint32_t numEvents, const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                     ur_event_handle_t *phEvent, ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(h, UR_COMMAND_USM_FILL, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
                [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  if (!pMemory || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize != 0)
                    return UR_RESULT_ERROR_INVALID_SIZE;
                  if (ur_result_t r = usm_range(cb, pMemory, size)) return r;
                  std::vector<unsigned char> pattern(static_cast<const unsigned char *>(pPattern),
                                                     static_cast<const unsigned char *>(pPattern) + patternSize);
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().Enqueue.pfnUSMFill(q, pMemory, pattern.size(), pattern.data(), size, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

ur_result_t UR_APICALL appendUSMPrefetch(ur_exp_command_buffer_handle_t h, const void *pMemory, size_t size,
                                         ur_usm_migration_flags_t flags, uint32_t numSync, const SyncPoint *pSync,
                                         uint32_t numEvents, const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                         ur_event_handle_t *phEvent,
                                         ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(h, UR_COMMAND_USM_PREFETCH, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
                [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  if (!pMemory) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (flags & UR_USM_MIGRATION_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
                  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
                  if (ur_result_t r = usm_range(cb, pMemory, size)) return r;
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().Enqueue.pfnUSMPrefetch(q, pMemory, size, flags, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

// urEnqueueUSMAdvise takes no wait list: the advice goes first, and a marker after
// both it and the command's dependencies is what later commands wait for.
ur_result_t UR_APICALL appendUSMAdvise(ur_exp_command_buffer_handle_t h, const void *pMemory, size_t size,
                                       ur_usm_advice_flags_t advice, uint32_t numSync, const SyncPoint *pSync,
                                       uint32_t numEvents, const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                       ur_event_handle_t *phEvent, ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(
      h, UR_COMMAND_USM_ADVISE, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
      [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
        if (!pMemory) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
        if (advice & UR_USM_ADVICE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
        if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
        if (ur_result_t r = usm_range(cb, pMemory, size)) return r;
        cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
          ur_event_handle_t advised = nullptr;
          if (ur_result_t r = table().Enqueue.pfnUSMAdvise(q, pMemory, size, advice, &advised)) return r;
          std::vector<ur_event_handle_t> all(w, w + n);
          all.push_back(advised);
          ur_result_t r = table().Enqueue.pfnEventsWait(q, static_cast<uint32_t>(all.size()), all.data(), out);
          table().Event.pfnRelease(advised);
          return r;
        };
        return UR_RESULT_SUCCESS;
      });
}

// ---- buffers ----

ur_result_t UR_APICALL appendMemBufferCopy(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                           size_t srcOffset, size_t dstOffset, size_t size, uint32_t numSync,
                                           const SyncPoint *pSync, uint32_t numEvents,
                                           const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                           ur_event_handle_t *phEvent,
                                           ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(h, UR_COMMAND_MEM_BUFFER_COPY, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
                [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  size_t src_size = 0, dst_size = 0;
                  if (ur_result_t r = buffer_of(cb, hSrc, src_size)) return r;
                  if (ur_result_t r = buffer_of(cb, hDst, dst_size)) return r;
                  if (!range_inside(srcOffset, size, src_size) || !range_inside(dstOffset, size, dst_size))
                    return UR_RESULT_ERROR_INVALID_SIZE;
                  // As urEnqueueMemBufferCopy refuses it (ur_common/buffer_commands.hpp); an
                  // append sees handles only, so sub-buffers of one buffer are refused at replay.
                  if (hSrc == hDst && ordo::spans_overlap(srcOffset, size, dstOffset, size))
                    return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
                  hold_buffer(cmd, hSrc);
                  hold_buffer(cmd, hDst);
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().Enqueue.pfnMemBufferCopy(q, hSrc, hDst, srcOffset, dstOffset, size, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

ur_result_t UR_APICALL appendMemBufferWrite(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hBuffer, size_t offset,
                                            size_t size, const void *pSrc, uint32_t numSync, const SyncPoint *pSync,
                                            uint32_t numEvents, const ur_event_handle_t *phEvents,
                                            SyncPoint *pSyncPoint, ur_event_handle_t *phEvent,
                                            ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(h, UR_COMMAND_MEM_BUFFER_WRITE, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
                [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  size_t total = 0;
                  if (ur_result_t r = buffer_of(cb, hBuffer, total)) return r;
                  if (!pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (!range_inside(offset, size, total)) return UR_RESULT_ERROR_INVALID_SIZE;
                  hold_buffer(cmd, hBuffer);
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().Enqueue.pfnMemBufferWrite(q, hBuffer, false, offset, size, pSrc, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

ur_result_t UR_APICALL appendMemBufferRead(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hBuffer, size_t offset,
                                           size_t size, void *pDst, uint32_t numSync, const SyncPoint *pSync,
                                           uint32_t numEvents, const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                           ur_event_handle_t *phEvent,
                                           ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(h, UR_COMMAND_MEM_BUFFER_READ, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
                [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
                  size_t total = 0;
                  if (ur_result_t r = buffer_of(cb, hBuffer, total)) return r;
                  if (!pDst) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (!range_inside(offset, size, total)) return UR_RESULT_ERROR_INVALID_SIZE;
                  hold_buffer(cmd, hBuffer);
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().Enqueue.pfnMemBufferRead(q, hBuffer, false, offset, size, pDst, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

// A buffer's side of a rectangle lies inside the buffer.
ur_result_t rect_in_buffer(const ur_rect_offset_t &origin, const ur_rect_region_t &region, size_t row, size_t slice,
                           size_t total) {
  ordo::rect_side s;
  if (ur_result_t r = ordo::resolve_rect_side(origin, region, row, slice, s)) return r;
  return s.end <= total ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_SIZE;
}

ur_result_t UR_APICALL appendMemBufferCopyRect(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hSrc,
                                               ur_mem_handle_t hDst, ur_rect_offset_t srcOrigin,
                                               ur_rect_offset_t dstOrigin, ur_rect_region_t region, size_t srcRowPitch,
                                               size_t srcSlicePitch, size_t dstRowPitch, size_t dstSlicePitch,
                                               uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
                                               const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                               ur_event_handle_t *phEvent,
                                               ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(
      h, UR_COMMAND_MEM_BUFFER_COPY_RECT, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
      [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
        size_t src_size = 0, dst_size = 0;
        if (ur_result_t r = buffer_of(cb, hSrc, src_size)) return r;
        if (ur_result_t r = buffer_of(cb, hDst, dst_size)) return r;
        if (ur_result_t r = rect_in_buffer(srcOrigin, region, srcRowPitch, srcSlicePitch, src_size)) return r;
        if (ur_result_t r = rect_in_buffer(dstOrigin, region, dstRowPitch, dstSlicePitch, dst_size)) return r;
        if (hSrc == hDst) { // as appendMemBufferCopy
          ordo::rect_side ss, ds;
          ordo::resolve_rect_side(srcOrigin, region, srcRowPitch, srcSlicePitch, ss);
          ordo::resolve_rect_side(dstOrigin, region, dstRowPitch, dstSlicePitch, ds);
          if (ordo::rect_sides_overlap(0, ss, 0, ds, region)) return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
        }
        hold_buffer(cmd, hSrc);
        hold_buffer(cmd, hDst);
        cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
          return table().Enqueue.pfnMemBufferCopyRect(q, hSrc, hDst, srcOrigin, dstOrigin, region, srcRowPitch,
                                                      srcSlicePitch, dstRowPitch, dstSlicePitch, n, w, out);
        };
        return UR_RESULT_SUCCESS;
      });
}

// Read and write rectangles: the buffer side inside the buffer, the host side well formed.
template <bool kWrite>
ur_result_t append_host_rect(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hBuffer, ur_rect_offset_t bufferOffset,
                             ur_rect_offset_t hostOffset, ur_rect_region_t region, size_t bufferRowPitch,
                             size_t bufferSlicePitch, size_t hostRowPitch, size_t hostSlicePitch, void *pHost,
                             uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
                             const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint, ur_event_handle_t *phEvent,
                             ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(
      h, kWrite ? UR_COMMAND_MEM_BUFFER_WRITE_RECT : UR_COMMAND_MEM_BUFFER_READ_RECT, numSync, pSync, numEvents,
      phEvents, pSyncPoint, phEvent, phCommand, [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
        size_t total = 0;
        if (ur_result_t r = buffer_of(cb, hBuffer, total)) return r;
        if (!pHost) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
        if (ur_result_t r = rect_in_buffer(bufferOffset, region, bufferRowPitch, bufferSlicePitch, total)) return r;
        ordo::rect_side host_side;
        if (ur_result_t r = ordo::resolve_rect_side(hostOffset, region, hostRowPitch, hostSlicePitch, host_side))
          return r;
        hold_buffer(cmd, hBuffer);
        cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
          auto fn = kWrite ? table().Enqueue.pfnMemBufferWriteRect : table().Enqueue.pfnMemBufferReadRect;
          return fn(q, hBuffer, false, bufferOffset, hostOffset, region, bufferRowPitch, bufferSlicePitch, hostRowPitch,
                    hostSlicePitch, pHost, n, w, out);
        };
        return UR_RESULT_SUCCESS;
      });
}

ur_result_t UR_APICALL appendMemBufferWriteRect(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hBuffer,
                                                ur_rect_offset_t bufferOffset, ur_rect_offset_t hostOffset,
                                                ur_rect_region_t region, size_t bufferRowPitch, size_t bufferSlicePitch,
                                                size_t hostRowPitch, size_t hostSlicePitch, void *pSrc,
                                                uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
                                                const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                                ur_event_handle_t *phEvent,
                                                ur_exp_command_buffer_command_handle_t *phCommand) {
  return append_host_rect<true>(h, hBuffer, bufferOffset, hostOffset, region, bufferRowPitch, bufferSlicePitch,
                                hostRowPitch, hostSlicePitch, pSrc, numSync, pSync, numEvents, phEvents, pSyncPoint,
                                phEvent, phCommand);
}

ur_result_t UR_APICALL appendMemBufferReadRect(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hBuffer,
                                               ur_rect_offset_t bufferOffset, ur_rect_offset_t hostOffset,
                                               ur_rect_region_t region, size_t bufferRowPitch, size_t bufferSlicePitch,
                                               size_t hostRowPitch, size_t hostSlicePitch, void *pDst, uint32_t numSync,
                                               const SyncPoint *pSync, uint32_t numEvents,
                                               const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                               ur_event_handle_t *phEvent,
                                               ur_exp_command_buffer_command_handle_t *phCommand) {
  return append_host_rect<false>(h, hBuffer, bufferOffset, hostOffset, region, bufferRowPitch, bufferSlicePitch,
                                 hostRowPitch, hostSlicePitch, pDst, numSync, pSync, numEvents, phEvents, pSyncPoint,
                                 phEvent, phCommand);
}

ur_result_t UR_APICALL appendMemBufferFill(ur_exp_command_buffer_handle_t h, ur_mem_handle_t hBuffer,
                                           const void *pPattern, size_t patternSize, size_t offset, size_t size,
                                           uint32_t numSync, const SyncPoint *pSync, uint32_t numEvents,
                                           const ur_event_handle_t *phEvents, SyncPoint *pSyncPoint,
                                           ur_event_handle_t *phEvent,
                                           ur_exp_command_buffer_command_handle_t *phCommand) {
  return append(
      h, UR_COMMAND_MEM_BUFFER_FILL, numSync, pSync, numEvents, phEvents, pSyncPoint, phEvent, phCommand,
      [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
        size_t total = 0;
        if (ur_result_t r = buffer_of(cb, hBuffer, total)) return r;
        if (!pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
        if (patternSize == 0 || (patternSize & (patternSize - 1)) != 0 || size % patternSize != 0 ||
            offset % patternSize != 0 || !range_inside(offset, size, total))
          return UR_RESULT_ERROR_INVALID_SIZE;
        std::vector<unsigned char> pattern(static_cast<const unsigned char *>(pPattern),
                                           static_cast<const unsigned char *>(pPattern) + patternSize);
        hold_buffer(cmd, hBuffer);
        cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
          return table().Enqueue.pfnMemBufferFill(q, hBuffer, pattern.data(), pattern.size(), offset, size, n, w, out);
        };
        return UR_RESULT_SUCCESS;
      });
}

// A host function, run as a host task (only where the adapter has host tasks).
ur_result_t UR_APICALL appendNativeCommand(ur_exp_command_buffer_handle_t h,
                                           ur_exp_command_buffer_native_command_function_t pfnNativeCommand,
                                           void *pData, ur_exp_command_buffer_handle_t hChildCommandBuffer,
                                           uint32_t numSync, const SyncPoint *pSync, SyncPoint *pSyncPoint) {
  return append(h, UR_COMMAND_ENQUEUE_NATIVE_EXP, numSync, pSync, 0, nullptr, pSyncPoint, nullptr, nullptr,
                [&](CommandBuffer &, Command &cmd) -> ur_result_t {
                  if (!pfnNativeCommand) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
                  if (hChildCommandBuffer) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // kSubgraphSupport is false
                  cmd.replay = [=](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w,
                                   ur_event_handle_t *out) {
                    return table().EnqueueExp.pfnHostTaskExp(q, pfnNativeCommand, pData, nullptr, n, w, out);
                  };
                  return UR_RESULT_SUCCESS;
                });
}

// ---- the command buffer ----

ur_result_t UR_APICALL create(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                              const ur_exp_command_buffer_desc_t *pDesc,
                              ur_exp_command_buffer_handle_t *phCommandBuffer) {
  if (!hContext || !hDevice) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pDesc || !phCommandBuffer) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // The device must be one of the context's.
  uint32_t n = 0;
  if (table().Context.pfnGetInfo(hContext, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_CONTEXT;
  return guarded([&]() -> ur_result_t {
    std::vector<ur_device_handle_t> devices(n);
    if (table().Context.pfnGetInfo(hContext, UR_CONTEXT_INFO_DEVICES, n * sizeof(ur_device_handle_t), devices.data(),
                                   nullptr) != UR_RESULT_SUCCESS)
      return UR_RESULT_ERROR_INVALID_CONTEXT;
    if (std::find(devices.begin(), devices.end(), hDevice) == devices.end()) return UR_RESULT_ERROR_INVALID_DEVICE;
    auto cb = std::make_unique<CommandBuffer>(hContext, hDevice, *pDesc);
    register_buffer(cb.get());
    *phCommandBuffer = reinterpret_cast<ur_exp_command_buffer_handle_t>(cb.release());
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL retain(ur_exp_command_buffer_handle_t h) {
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  cb->retain();
  return UR_RESULT_SUCCESS;
}

// The last release forgets the handle and its commands' handles; what an enqueue of
// it still runs holds its own references (kernels, buffers) in the adapter.
ur_result_t UR_APICALL release(ur_exp_command_buffer_handle_t h) {
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  if (cb->release() && unregister_buffer(cb.get())) drop(cb.get());
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL finalize(ur_exp_command_buffer_handle_t h) {
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  std::lock_guard<std::mutex> lock(cb->mu);
  if (cb->finalized) return UR_RESULT_ERROR_INVALID_OPERATION;
  cb->finalized = true;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL getInfo(ur_exp_command_buffer_handle_t h, ur_exp_command_buffer_info_t propName, size_t propSize,
                               void *pPropValue, size_t *pPropSizeRet) {
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  if (propSize == 0 && pPropValue) return UR_RESULT_ERROR_INVALID_SIZE;
  if (propSize != 0 && !pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_EXP_COMMAND_BUFFER_INFO_REFERENCE_COUNT: return out.value(cb->count());
  case UR_EXP_COMMAND_BUFFER_INFO_DESCRIPTOR: return out.value(cb->desc);
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// Replays every command on the queue. On an in-order queue the queue's own order covers
// every sync point (commands are replayed in append order, and a sync point names an
// earlier command), so only the first command waits for the enqueue's wait list and no
// command needs an event. On an out-of-order queue each command waits for its sync
// points (and, in an in-order command buffer, the command before it); commands that
// follow nothing of the buffer wait for the enqueue's wait list and for the previous run
// of this command buffer, so runs do not overlap.
ur_result_t UR_APICALL enqueue(ur_queue_handle_t hQueue, ur_exp_command_buffer_handle_t h, uint32_t numEvents,
                               const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  if (!hQueue) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  if ((numEvents > 0) != (phEvents != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  ur_context_handle_t qc = nullptr;
  ur_device_handle_t qd = nullptr;
  ur_queue_flags_t qflags = 0;
  if (table().Queue.pfnGetInfo(hQueue, UR_QUEUE_INFO_CONTEXT, sizeof qc, &qc, nullptr) != UR_RESULT_SUCCESS ||
      table().Queue.pfnGetInfo(hQueue, UR_QUEUE_INFO_DEVICE, sizeof qd, &qd, nullptr) != UR_RESULT_SUCCESS ||
      table().Queue.pfnGetInfo(hQueue, UR_QUEUE_INFO_FLAGS, sizeof qflags, &qflags, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_QUEUE;
  if (qc != cb->context || qd != cb->device) return UR_RESULT_ERROR_INVALID_QUEUE;
  const bool queue_orders = !(qflags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  return guarded([&]() -> ur_result_t {
    std::lock_guard<std::mutex> lock(cb->mu);
    if (!cb->finalized) return UR_RESULT_ERROR_INVALID_OPERATION;
    const size_t count = cb->commands.size();
    std::vector<ur_event_handle_t> done(queue_orders ? 0 : count, nullptr);
    std::vector<ur_event_handle_t> waits;
    auto release_done = [&] {
      for (ur_event_handle_t e : done)
        if (e) table().Event.pfnRelease(e);
    };
    auto add_external = [&] {
      waits.insert(waits.end(), phEvents, phEvents + numEvents);
      if (cb->last_run) waits.push_back(cb->last_run);
    };
    for (size_t i = 0; i < count; ++i) {
      const Command &c = *cb->commands[i];
      waits.clear();
      ur_event_handle_t signalled = nullptr;
      ur_event_handle_t *out = c.signal ? &signalled : nullptr;
      if (queue_orders) {
        if (i == 0) add_external();
      } else {
        for (SyncPoint s : c.after) waits.push_back(done[s]);
        if (cb->desc.isInOrder && i > 0) waits.push_back(done[i - 1]);
        if (waits.empty()) add_external(); // follows nothing of this buffer
        out = &done[i];
      }
      waits.insert(waits.end(), c.waits.begin(), c.waits.end()); // the command's own wait list
      const uint32_t n = static_cast<uint32_t>(waits.size());
      const ur_event_handle_t *w = n ? waits.data() : nullptr;
      ur_result_t r = c.launch ? c.launch->enqueue(hQueue, n, w, out) : c.replay(hQueue, n, w, out);
      if (r != UR_RESULT_SUCCESS) {
        release_done(); // the commands before it have been submitted and run
        return r;
      }
      // Its signal event now stands for this run's command.
      if (c.signal && out && *out) bind(c.signal, *out);
      if (signalled) unwrapped().Event.pfnRelease(signalled);
    }
    // The run's event: after every command (on an in-order queue, after the queue's
    // newest command), or, with no commands, after what they would have waited for.
    waits.clear();
    if (count == 0)
      add_external();
    else if (!queue_orders)
      waits.assign(done.begin(), done.end());
    ur_event_handle_t run = nullptr;
    ur_result_t r = table().Enqueue.pfnEventsWait(hQueue, static_cast<uint32_t>(waits.size()),
                                                  waits.empty() ? nullptr : waits.data(), &run);
    release_done();
    if (r != UR_RESULT_SUCCESS) return r;
    if (cb->last_run) table().Event.pfnRelease(cb->last_run);
    cb->last_run = run;
    if (phEvent) {
      table().Event.pfnRetain(run);
      *phEvent = run;
    }
    return UR_RESULT_SUCCESS;
  });
}

// ---- updates ----

// The changes one update descriptor asks for, checked before any is applied.
struct Staged {
  LaunchRecord *launch = nullptr;
  ur_kernel_handle_t kernel = nullptr;
  uint32_t dims = 0;
  size_t offset[3], global[3], local[3];
  bool has_offset, has_local;
  uint32_t num_args = UINT32_MAX; // the kernel's, when the adapter says
  std::vector<ArgRecord> args;
};

ur_result_t stage(CommandBuffer &cb, const ur_exp_command_buffer_update_kernel_launch_desc_t &d, Staged &s) {
  if (!d.hCommand) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command *cmd = nullptr;
  {
    Hold owner(d.hCommand, &cmd);
    if (!owner || owner.get() != &cb || !cmd->launch) return UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_COMMAND_HANDLE_EXP;
  }
  LaunchRecord &l = *cmd->launch;
  s.launch = &l;
  s.kernel = l.kernel;
  if (d.hNewKernel) {
    if (std::find(l.alternatives.begin(), l.alternatives.end(), d.hNewKernel) == l.alternatives.end())
      return UR_RESULT_ERROR_INVALID_VALUE;
    s.kernel = d.hNewKernel;
  }
  if (d.newWorkDim < 1 || d.newWorkDim > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  if (d.newWorkDim != l.dims && (!d.pNewGlobalWorkSize || !d.pNewGlobalWorkOffset))
    return UR_RESULT_ERROR_INVALID_VALUE;
  s.dims = d.newWorkDim;
  std::copy(l.offset, l.offset + 3, s.offset);
  std::copy(l.global, l.global + 3, s.global);
  std::copy(l.local, l.local + 3, s.local);
  s.has_offset = l.has_offset;
  s.has_local = l.has_local;
  if (d.pNewGlobalWorkOffset) {
    std::fill(s.offset, s.offset + 3, 0);
    std::copy(d.pNewGlobalWorkOffset, d.pNewGlobalWorkOffset + s.dims, s.offset);
    s.has_offset = true;
  }
  if (d.pNewGlobalWorkSize) {
    std::fill(s.global, s.global + 3, 1);
    std::copy(d.pNewGlobalWorkSize, d.pNewGlobalWorkSize + s.dims, s.global);
    s.has_local = false; // a new global size without a local one: the adapter chooses
  }
  if (d.pNewLocalWorkSize) {
    std::fill(s.local, s.local + 3, 1);
    std::copy(d.pNewLocalWorkSize, d.pNewLocalWorkSize + s.dims, s.local);
    s.has_local = true;
  }
  if (ur_result_t r = check_range(s.dims, s.global, s.has_local ? s.local : nullptr)) return r;
  if ((d.numNewMemObjArgs && !d.pNewMemObjArgList) || (d.numNewPointerArgs && !d.pNewPointerArgList) ||
      (d.numNewValueArgs && !d.pNewValueArgList))
    return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; i < d.numNewMemObjArgs; ++i) {
    const auto &m = d.pNewMemObjArgList[i];
    ur_exp_kernel_arg_properties_t p{UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
                                     nullptr,
                                     UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ,
                                     m.argIndex,
                                     sizeof(void *),
                                     {}};
    p.value.memObjTuple = {m.hNewMemObjArg, m.pProperties ? m.pProperties->memoryAccess : 0};
    ArgRecord a;
    if (ur_result_t r = record_arg(cb, p, a)) return r;
    s.args.push_back(std::move(a));
  }
  for (uint32_t i = 0; i < d.numNewPointerArgs; ++i) {
    const auto &pa = d.pNewPointerArgList[i];
    ArgRecord a;
    a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
    a.index = pa.argIndex;
    a.size = sizeof(void *);
    // pNewPointerArg points at the new pointer value
    if (pa.pNewPointerArg) std::memcpy(&a.pointer, pa.pNewPointerArg, sizeof(void *));
    s.args.push_back(std::move(a));
  }
  for (uint32_t i = 0; i < d.numNewValueArgs; ++i) {
    const auto &v = d.pNewValueArgList[i];
    ur_exp_kernel_arg_properties_t p{UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
                                     nullptr,
                                     v.pNewValueArg ? UR_EXP_KERNEL_ARG_TYPE_VALUE : UR_EXP_KERNEL_ARG_TYPE_LOCAL,
                                     v.argIndex,
                                     v.argSize,
                                     {}};
    p.value.value = v.pNewValueArg; // no value: local memory of that size
    ArgRecord a;
    if (ur_result_t r = record_arg(cb, p, a)) return r;
    s.args.push_back(std::move(a));
  }
  // The arguments after the update cover the (possibly new) kernel's parameters.
  uint32_t n = s.num_args = num_args(s.kernel);
  if (n != UINT32_MAX) {
    std::vector<bool> set(n, false);
    for (const ArgRecord &a : l.args)
      if (a.index < n) set[a.index] = true;
    for (const ArgRecord &a : s.args) {
      if (a.index >= n) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
      set[a.index] = true;
    }
    for (bool b : set)
      if (!b) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL updateKernelLaunch(ur_exp_command_buffer_handle_t h, uint32_t numKernelUpdates,
                                          const ur_exp_command_buffer_update_kernel_launch_desc_t *pUpdates) {
  Hold cb(h);
  if (!cb) return bad_buffer(h);
  if (!pUpdates) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numKernelUpdates == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  return guarded([&]() -> ur_result_t {
    std::lock_guard<std::mutex> lock(cb->mu);
    if (!cb->desc.isUpdatable || !cb->finalized) return UR_RESULT_ERROR_INVALID_OPERATION;
    std::vector<Staged> staged(numKernelUpdates);
    auto discard = [&] {
      for (Staged &s : staged) release_args(s.args);
    };
    for (uint32_t i = 0; i < numKernelUpdates; ++i)
      if (ur_result_t r = stage(*cb.get(), pUpdates[i], staged[i])) {
        discard();
        return r;
      }
    // All checked: apply (nothing below can fail).
    for (Staged &s : staged) {
      LaunchRecord &l = *s.launch;
      if (s.kernel != l.kernel && s.num_args != UINT32_MAX) {
        // Arguments past the new kernel's parameters go.
        std::vector<ArgRecord> kept;
        for (ArgRecord &a : l.args) {
          if (a.index < s.num_args)
            kept.push_back(std::move(a));
          else if (a.mem)
            table().Mem.pfnRelease(a.mem);
        }
        l.args = std::move(kept);
      }
      l.kernel = s.kernel;
      l.dims = s.dims;
      std::copy(s.offset, s.offset + 3, l.offset);
      std::copy(s.global, s.global + 3, l.global);
      std::copy(s.local, s.local + 3, l.local);
      l.has_offset = s.has_offset;
      l.has_local = s.has_local;
      for (ArgRecord &a : s.args) set_arg(l.args, std::move(a));
      s.args.clear();
    }
    return UR_RESULT_SUCCESS;
  });
}

// The command a handle names and its buffer, for an event update: updatable and
// finalized (INVALID_OPERATION otherwise).
template <class F> ur_result_t update_command(ur_exp_command_buffer_command_handle_t h, F &&change) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command *cmd = nullptr;
  Hold cb(h, &cmd);
  if (!cb) return UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_COMMAND_HANDLE_EXP;
  return guarded([&]() -> ur_result_t {
    std::lock_guard<std::mutex> lock(cb->mu);
    if (!cb->desc.isUpdatable || !cb->finalized) return UR_RESULT_ERROR_INVALID_OPERATION;
    return change(*cb.get(), *cmd);
  });
}

// A new signal event for the command's next runs; the old one keeps its last binding.
ur_result_t UR_APICALL updateSignalEvent(ur_exp_command_buffer_command_handle_t hCommand,
                                         ur_event_handle_t *phSignalEvent) {
  if (!hCommand) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phSignalEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return update_command(hCommand, [&](CommandBuffer &cb, Command &cmd) -> ur_result_t {
    if (!cmd.signal) return UR_RESULT_ERROR_INVALID_OPERATION; // appended without an event
    ur_event_handle_t fresh = nullptr;
    if (ur_result_t r = make_bound(cb.context, cmd.type, false, &fresh)) return r;
    table().Event.pfnRelease(cmd.signal);
    cmd.signal = fresh;
    table().Event.pfnRetain(fresh); // the caller's
    *phSignalEvent = fresh;
    return UR_RESULT_SUCCESS;
  });
}

// New events for the command's next runs to wait for: as many as it was appended with.
ur_result_t UR_APICALL updateWaitEvents(ur_exp_command_buffer_command_handle_t hCommand, uint32_t numEvents,
                                        const ur_event_handle_t *phEvents) {
  if (!hCommand) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if ((numEvents > 0) != (phEvents != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  for (uint32_t i = 0; i < numEvents; ++i)
    if (!phEvents[i]) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  return update_command(hCommand, [&](CommandBuffer &, Command &cmd) -> ur_result_t {
    if (numEvents != cmd.waits.size()) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
    for (uint32_t i = 0; i < numEvents; ++i) table().Event.pfnRetain(phEvents[i]);
    for (ur_event_handle_t e : cmd.waits) table().Event.pfnRelease(e);
    cmd.waits.assign(phEvents, phEvents + numEvents);
    return UR_RESULT_SUCCESS;
  });
}

} // namespace

ur_result_t append_replay(ur_exp_command_buffer_handle_t h, ur_command_t type, const std::vector<SyncPoint> &after,
                          Replay replay, SyncPoint *point) {
  return append(h, type, static_cast<uint32_t>(after.size()), after.empty() ? nullptr : after.data(), 0, nullptr, point,
                nullptr, nullptr, [&](CommandBuffer &, Command &cmd) -> ur_result_t {
                  cmd.replay = std::move(replay);
                  return UR_RESULT_SUCCESS;
                });
}

void take_back(ur_exp_command_buffer_handle_t h, SyncPoint point) {
  Hold cb(h);
  if (!cb) return;
  std::unique_ptr<Command> gone;
  {
    std::lock_guard<std::mutex> lock(cb->mu);
    if (cb->finalized || cb->commands.empty() || cb->commands.size() - 1 != point) return;
    gone = std::move(cb->commands.back());
    cb->commands.pop_back();
    unregister_command(gone.get());
  }
  // `gone` releases what it held here, outside the buffer's lock.
}

std::vector<CommandShape> shape_of(ur_exp_command_buffer_handle_t h) {
  std::vector<CommandShape> out;
  Hold cb(h);
  if (!cb) return out;
  std::lock_guard<std::mutex> lock(cb->mu);
  for (auto &c : cb->commands) out.push_back(CommandShape{c->type, c->after});
  return out;
}

void install_entry_points(ur_dditable_t &t, const adapter_hooks &hooks) {
  ur_command_buffer_exp_dditable_t &c = t.CommandBufferExp;
  c.pfnCreateExp = create;
  c.pfnRetainExp = retain;
  c.pfnReleaseExp = release;
  c.pfnFinalizeExp = finalize;
  c.pfnAppendKernelLaunchExp = appendKernelLaunch;
  c.pfnAppendKernelLaunchWithArgsExp = appendKernelLaunchWithArgs;
  c.pfnAppendUSMMemcpyExp = appendUSMMemcpy;
  c.pfnAppendUSMFillExp = appendUSMFill;
  c.pfnAppendMemBufferCopyExp = appendMemBufferCopy;
  c.pfnAppendMemBufferWriteExp = appendMemBufferWrite;
  c.pfnAppendMemBufferReadExp = appendMemBufferRead;
  c.pfnAppendMemBufferCopyRectExp = appendMemBufferCopyRect;
  c.pfnAppendMemBufferWriteRectExp = appendMemBufferWriteRect;
  c.pfnAppendMemBufferReadRectExp = appendMemBufferReadRect;
  c.pfnAppendMemBufferFillExp = appendMemBufferFill;
  c.pfnAppendUSMPrefetchExp = appendUSMPrefetch;
  c.pfnAppendUSMAdviseExp = appendUSMAdvise;
  if (hooks.host_functions) c.pfnAppendNativeCommandExp = appendNativeCommand;
  c.pfnUpdateKernelLaunchExp = updateKernelLaunch;
  c.pfnUpdateSignalEventExp = updateSignalEvent;
  c.pfnUpdateWaitEventsExp = updateWaitEvents;
  c.pfnGetInfoExp = getInfo;
  t.EnqueueExp.pfnCommandBufferExp = enqueue;
}

} // namespace ordo::command_buffer
