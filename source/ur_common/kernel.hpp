// SPDX-License-Identifier: Apache-2.0
// The urKernel* entry points that are bookkeeping, written once: retain, release, the
// native handle, urKernelGetInfo, and the argument checks of the group and sub-group
// queries. The adapter says what its per-device kernels answer:
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Kernel = ...;  // name, program (->ctx), count(), retain(), release()
//     using Device = ...;
//     static void destroy(Kernel *);                    // the last reference went
//     static void *native(Kernel *);                    // the first device's, or null
//     static bool on_device(Kernel *, Device *);
//     static uint32_t num_args(Kernel *);
//     static ur_result_t num_regs(Kernel *, InfoWriter &);
//     static std::vector<uint32_t> spill(Kernel *);     // one per device of the program
//     static ur_result_t group_info(Kernel *, Device *, ur_kernel_group_info_t, InfoWriter &);
//     static ur_result_t sub_group_info(Kernel *, Device *, ur_kernel_sub_group_info_t, InfoWriter &);
//     static ur_pfnKernelGetSuggestedLocalWorkSize_t suggest;  // the arguments do not change it
//     // Optional: the kernel's attribute string (default ""); leaving out spill() makes
//     // UR_KERNEL_INFO_SPILL_MEM_SIZE unsupported (native CPU: machine code has no spill).
//     static std::string attributes(Kernel *);
//   };
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "ordo/info.hpp"
#include "ordo/work_group.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// The checks every kernel launch starts with, in this order; `check_waits()` is the
// adapter's wait-list check, `same_context` whether kernel and queue share a context.
template <class WaitCheck>
ur_result_t check_launch(uint32_t dims, const size_t *gws, const size_t *lws, uint32_t numArgs, const void *pArgs,
                         WaitCheck check_waits, bool same_context) {
  if (!gws) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!pArgs && numArgs > 0) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_waits()) return r;
  if (ur_result_t r = ordo::check_global_work_size(dims, gws)) return r;
  if (lws)
    for (uint32_t i = 0; i < dims; ++i)
      if (lws[i] == 0) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
  return same_context ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_KERNEL;
}

// The arguments a launch names, against a kernel of `kernel_args` parameters on a device
// with `local_mem_size` bytes of local memory: each index in range
// (INVALID_KERNEL_ARGUMENT_INDEX), each parameter named at least once (INVALID_KERNEL_ARGS:
// nothing carries over from an earlier launch), and the local arguments' sizes, summed
// without wrapping, within the device's local memory (OUT_OF_RESOURCES). The caller has
// checked each argument's own fields.
inline ur_result_t check_named_args(uint32_t kernel_args, uint32_t numArgs, const ur_exp_kernel_arg_properties_t *pArgs,
                                    uint64_t local_mem_size) {
  uint64_t named_few = 0; // up to 64 parameters: no allocation on a launch
  std::vector<bool> named_many(kernel_args > 64 ? kernel_args : 0, false);
  uint64_t local = 0;
  for (uint32_t i = 0; i < numArgs; ++i) {
    const ur_exp_kernel_arg_properties_t &a = pArgs[i];
    if (a.index >= kernel_args) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (kernel_args > 64)
      named_many[a.index] = true;
    else
      named_few |= uint64_t(1) << a.index;
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL) local = a.size > UINT64_MAX - local ? UINT64_MAX : local + a.size;
  }
  const bool all_named = kernel_args > 64
                             ? std::find(named_many.begin(), named_many.end(), false) == named_many.end()
                             : named_few == (kernel_args == 64 ? ~uint64_t(0) : (uint64_t(1) << kernel_args) - 1);
  if (!all_named) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
  return local > local_mem_size ? UR_RESULT_ERROR_OUT_OF_RESOURCES : UR_RESULT_SUCCESS;
}

template <class H, class = void> struct has_kernel_attributes : std::false_type {};
template <class H>
struct has_kernel_attributes<H, std::void_t<decltype(H::attributes(std::declval<typename H::Kernel *>()))>>
    : std::true_type {};
template <class H, class = void> struct has_kernel_spill : std::false_type {};
template <class H>
struct has_kernel_spill<H, std::void_t<decltype(H::spill(std::declval<typename H::Kernel *>()))>> : std::true_type {};

template <class H> struct kernel_entry_points {
  using Kernel = typename H::Kernel;
  using Device = typename H::Device;

  static ur_result_t UR_APICALL retain(ur_kernel_handle_t hKernel) {
    Kernel *k = nullptr;
    if (ur_result_t r = unwrap(hKernel, k)) return r;
    if (!k->retain_user()) return ordo::invalid_of(k);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL release(ur_kernel_handle_t hKernel) {
    Kernel *k = nullptr;
    if (ur_result_t r = unwrap(hKernel, k)) return r;
    bool last_ = false;
    if (!k->release_user(last_)) return ordo::invalid_of(k);
    if (last_) H::destroy(k);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL native_handle(ur_kernel_handle_t hKernel, ur_native_handle_t *phNativeKernel) {
    Kernel *k = nullptr;
    if (ur_result_t r = unwrap(hKernel, k)) return r;
    if (!phNativeKernel) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    void *n = H::native(k);
    if (!n) return UR_RESULT_ERROR_INVALID_KERNEL;
    *phNativeKernel = reinterpret_cast<ur_native_handle_t>(n);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_info(ur_kernel_handle_t hKernel, ur_kernel_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
    Kernel *k = nullptr;
    if (ur_result_t r = unwrap(hKernel, k)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    switch (propName) {
    case UR_KERNEL_INFO_FUNCTION_NAME: return out.string(k->name);
    case UR_KERNEL_INFO_NUM_ARGS: return out.value(H::num_args(k));
    case UR_KERNEL_INFO_REFERENCE_COUNT: return out.value(k->count());
    case UR_KERNEL_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(k->program->ctx));
    case UR_KERNEL_INFO_PROGRAM: return out.value(reinterpret_cast<ur_program_handle_t>(k->program));
    case UR_KERNEL_INFO_ATTRIBUTES:
      if constexpr (has_kernel_attributes<H>::value) return out.string(H::attributes(k));
      return out.string("");
    case UR_KERNEL_INFO_NUM_REGS: return H::num_regs(k, out);
    case UR_KERNEL_INFO_SPILL_MEM_SIZE:
      if constexpr (has_kernel_spill<H>::value) return out.array(H::spill(k));
      return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  static ur_result_t UR_APICALL group_info(ur_kernel_handle_t hKernel, ur_device_handle_t hDevice,
                                           ur_kernel_group_info_t propName, size_t propSize, void *pPropValue,
                                           size_t *pPropSizeRet) {
    Kernel *k = nullptr;
    if (ur_result_t r = unwrap(hKernel, k)) return r;
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
    if (propName > UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    if (!H::on_device(k, d)) return UR_RESULT_ERROR_INVALID_DEVICE;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    return H::group_info(k, d, propName, out);
  }

  static ur_result_t UR_APICALL sub_group_info(ur_kernel_handle_t hKernel, ur_device_handle_t hDevice,
                                               ur_kernel_sub_group_info_t propName, size_t propSize, void *pPropValue,
                                               size_t *pPropSizeRet) {
    Kernel *k = nullptr;
    if (ur_result_t r = unwrap(hKernel, k)) return r;
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
    if (propName > UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    if (!H::on_device(k, d)) return UR_RESULT_ERROR_INVALID_DEVICE;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    return H::sub_group_info(k, d, propName, out);
  }

  static ur_result_t UR_APICALL suggest_with_args(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue,
                                                  uint32_t numWorkDim, const size_t *pGlobalWorkOffset,
                                                  const size_t *pGlobalWorkSize, uint32_t numArgs,
                                                  const ur_exp_kernel_arg_properties_t *pArgs,
                                                  size_t *pSuggestedLocalWorkSize) {
    if (!pArgs && numArgs > 0) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    return H::suggest(hKernel, hQueue, numWorkDim, pGlobalWorkOffset, pGlobalWorkSize, pSuggestedLocalWorkSize);
  }

  static void install(ur_dditable_t &t) {
    t.Kernel.pfnRetain = retain;
    t.Kernel.pfnRelease = release;
    t.Kernel.pfnGetNativeHandle = native_handle;
    t.Kernel.pfnGetInfo = get_info;
    t.Kernel.pfnGetGroupInfo = group_info;
    t.Kernel.pfnGetSubGroupInfo = sub_group_info;
    t.Kernel.pfnGetSuggestedLocalWorkSize = H::suggest;
    t.Kernel.pfnGetSuggestedLocalWorkSizeWithArgs = suggest_with_args;
  }
};

// ---- for the adapters whose kernels are one driver kernel per device of the program
// (Level Zero, the stream backend) -------------------------------------------------------

// urKernelCreate: the checks, the program's lock and the kernel's handle; the hooks
// struct `H` (using Program, Kernel: a kernel_object) makes the per-device kernels:
//   static ur_result_t make(Program *, Kernel *, const char *name);  // cleans up its own on failure
template <class H>
ur_result_t UR_APICALL kernel_create(ur_program_handle_t hProgram, const char *pKernelName,
                                     ur_kernel_handle_t *phKernel) {
  using Program = typename H::Program;
  using Kernel = typename H::Kernel;
  ORDO_UNWRAP(Program, p, hProgram);
  if (!pKernelName || !phKernel) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!*pKernelName) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  std::lock_guard<std::mutex> lock(p->mutex);
  if (!p->built.load()) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
  auto *k = new Kernel();
  k->program = p;
  k->name = pKernelName;
  if (ur_result_t r = H::make(p, k, pKernelName)) {
    delete k;
    return r;
  }
  p->hold(); // the kernel's holder of its program
  *phKernel = reinterpret_cast<ur_kernel_handle_t>(k);
  return UR_RESULT_SUCCESS;
}

// urKernelGetSuggestedLocalWorkSize: the checks, then `H::suggest_for(Kernel *, Queue *,
// dims, gws, lws)`. The shape is refused as a launch refuses it (ordo/work_group.hpp), so
// every adapter answers a global size of 0 alike; a global size above H::kMaxGlobalSize
// is INVALID_WORK_DIMENSION too.
template <class H>
ur_result_t UR_APICALL kernel_suggested_local_work_size(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue,
                                                        uint32_t numWorkDim, const size_t *pGlobalWorkOffset,
                                                        const size_t *pGlobalWorkSize,
                                                        size_t *pSuggestedLocalWorkSize) {
  using Kernel = typename H::Kernel;
  using Queue = typename H::Queue;
  ORDO_UNWRAP(Kernel, k, hKernel);
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pGlobalWorkOffset || !pGlobalWorkSize || !pSuggestedLocalWorkSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = ordo::check_global_work_size(numWorkDim, pGlobalWorkSize)) return r;
  for (uint32_t i = 0; i < numWorkDim; ++i)
    if (pGlobalWorkSize[i] > H::kMaxGlobalSize) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  return H::suggest_for(k, q, numWorkDim, pGlobalWorkSize, pSuggestedLocalWorkSize);
}

// urKernelSetExecInfo: USM pointer lists and the cache split are hints; indirect USM
// access goes to `H::indirect_access(Kernel *, bool)`.
template <class H>
ur_result_t UR_APICALL kernel_set_exec_info(ur_kernel_handle_t hKernel, ur_kernel_exec_info_t propName, size_t,
                                            const ur_kernel_exec_info_properties_t *, const void *pPropValue) {
  using Kernel = typename H::Kernel;
  ORDO_UNWRAP(Kernel, k, hKernel);
  if (!pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  switch (propName) {
  case UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS:
    return H::indirect_access(k, *static_cast<const ur_bool_t *>(pPropValue) != 0);
  case UR_KERNEL_EXEC_INFO_USM_PTRS:
  case UR_KERNEL_EXEC_INFO_CACHE_CONFIG: return UR_RESULT_SUCCESS;
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// urEnqueueKernelLaunchWithArgsExp's arguments after the queue and kernel.
struct launch_args {
  uint32_t workDim;
  const size_t *pGlobalWorkOffset;
  const size_t *pGlobalWorkSize;
  const size_t *pLocalWorkSize;
  uint32_t numArgs;
  const ur_exp_kernel_arg_properties_t *pArgs;
  const ur_kernel_launch_ext_properties_t *launchPropList;
  uint32_t numEventsInWaitList;
  const ur_event_handle_t *phEventWaitList;
  ur_event_handle_t *phEvent;
};

// urEnqueueKernelLaunchWithArgsExp: check_launch, then `H::launch(Queue *, Kernel *,
// const launch_args &)`; `H::check_wait_list` is the adapter's.
template <class H>
ur_result_t UR_APICALL enqueue_kernel_launch_with_args(
    ur_queue_handle_t hQueue, ur_kernel_handle_t hKernel, uint32_t workDim, const size_t *pGlobalWorkOffset,
    const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize, uint32_t numArgs,
    const ur_exp_kernel_arg_properties_t *pArgs, const ur_kernel_launch_ext_properties_t *launchPropList,
    uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  using Queue = typename H::Queue;
  using Kernel = typename H::Kernel;
  ORDO_UNWRAP(Queue, q, hQueue);
  ORDO_UNWRAP(Kernel, k, hKernel);
  if (ur_result_t r = check_launch(
          workDim, pGlobalWorkSize, pLocalWorkSize, numArgs, pArgs,
          [&] { return H::check_wait_list(numEventsInWaitList, phEventWaitList); }, k->program->ctx == q->ctx))
    return r;
  return H::launch(q, k,
                   launch_args{workDim, pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, numArgs, pArgs,
                               launchPropList, numEventsInWaitList, phEventWaitList, phEvent});
}

// The urKernel* of an adapter whose kernels are one driver kernel per device of the
// program: kernel_entry_points with urKernelCreate, urKernelGetSuggestedLocalWorkSize and
// urKernelSetExecInfo above; `H` gives both sets of hooks (no `suggest`).
template <class H> struct device_kernel_entry_points {
  struct hooks : H {
    static constexpr ur_pfnKernelGetSuggestedLocalWorkSize_t suggest = kernel_suggested_local_work_size<H>;
  };
  static void install(ur_dditable_t &t) {
    kernel_entry_points<hooks>::install(t);
    t.Kernel.pfnCreate = kernel_create<H>;
    t.Kernel.pfnSetExecInfo = kernel_set_exec_info<H>;
  }
};

} // namespace ordo::ur_common
