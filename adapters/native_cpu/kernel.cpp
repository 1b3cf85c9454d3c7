// SPDX-License-Identifier: Apache-2.0
// urKernel*: kernel objects and their queries.
#include "entry_points.hpp"
#include "kernel.hpp"

#include <algorithm>
#include <string>

#include "context.hpp"
#include "ordo/info.hpp"
#include "ordo/work_group.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "ur_common/kernel.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

ur_result_t UR_APICALL urKernelCreate(ur_program_handle_t hProgram, const char *pKernelName,
                                      ur_kernel_handle_t *phKernel) {
  ORDO_LOOKUP(Program, p, hProgram);
  if (!pKernelName || !phKernel) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    if (p->status != UR_PROGRAM_BUILD_STATUS_SUCCESS || p->binary_type != UR_PROGRAM_BINARY_TYPE_EXECUTABLE)
      return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
  }
  const ordo_nc_kernel_desc *desc = p->find_kernel(pKernelName);
  if (!desc) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  *phKernel = publish(new Kernel(p, desc));
  return UR_RESULT_SUCCESS;
}

// All memory is reachable from every kernel; the hints need no action.
ur_result_t UR_APICALL urKernelSetExecInfo(ur_kernel_handle_t hKernel, ur_kernel_exec_info_t propName, size_t propSize,
                                           const ur_kernel_exec_info_properties_t *pProperties,
                                           const void *pPropValue) {
  if (!lookup<Kernel>(hKernel)) return Kernel::invalid_handle(hKernel);
  if (!pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  switch (propName) {
  case UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS:
  case UR_KERNEL_EXEC_INFO_USM_PTRS:
  case UR_KERNEL_EXEC_INFO_CACHE_CONFIG: return UR_RESULT_SUCCESS;
  case UR_KERNEL_EXEC_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

struct kernel_hooks {
  using Kernel = ordo::native_cpu::Kernel;
  using Device = ordo::native_cpu::Device;
  static void destroy(Kernel *k) { // the user's last reference
    registry().remove(k);
    k->drop_hold();
  }
  static void *native(Kernel *k) { return k; } // the adapter's object itself
  static bool on_device(Kernel *, Device *) { return true; }
  static uint32_t num_args(Kernel *k) { return k->desc->num_args; }
  // Machine code has no per-kernel register budget (and no spill: no spill()).
  static ur_result_t num_regs(Kernel *, ordo::InfoWriter &) { return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; }
  static std::string attributes(Kernel *k) {
    const size_t *r = k->desc->reqd_local_size;
    if (!k->has_required_size()) return "";
    return "reqd_work_group_size(" + std::to_string(r[0]) + "," + std::to_string(r[1]) + "," + std::to_string(r[2]) +
           ")";
  }
  static ur_result_t group_info(Kernel *k, Device *, ur_kernel_group_info_t propName, ordo::InfoWriter &out) {
    const size_t *reqd = k->desc->reqd_local_size;
    const size_t reqd_total = k->has_required_size() ? reqd[0] * reqd[1] * reqd[2] : 0;
    switch (propName) {
    case UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE: // only for built-in kernels of custom devices
      return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    case UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE: return out.value(reqd_total ? reqd_total : kMaxWorkGroupSize);
    case UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE:
    case UR_KERNEL_GROUP_INFO_COMPILE_MAX_WORK_GROUP_SIZE: return out.array(reqd, 3);
    case UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE: // only what the launch passes
    case UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE: return out.value(size_t{0});
    case UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: return out.value(size_t{1});
    case UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE: return out.value(reqd_total);
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  // Each work-item is its own sub-group: the kernels are plain loops.
  static ur_result_t sub_group_info(Kernel *, Device *, ur_kernel_sub_group_info_t propName, ordo::InfoWriter &out) {
    switch (propName) {
    case UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE: return out.value(uint32_t{1});
    case UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS: return out.value(static_cast<uint32_t>(kMaxWorkGroupSize));
    case UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS:
    case UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL: return out.value(uint32_t{0});
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  static ur_result_t UR_APICALL suggest(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue, uint32_t numWorkDim,
                                        const size_t *pGlobalWorkOffset, const size_t *pGlobalWorkSize,
                                        size_t *pSuggestedLocalWorkSize) {
    ORDO_LOOKUP(Kernel, k, hKernel);
    if (!lookup<Queue>(hQueue)) return Queue::invalid_handle(hQueue);
    if (!pGlobalWorkOffset || !pGlobalWorkSize || !pSuggestedLocalWorkSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    // Refused as the launch would refuse it (ordo/work_group.hpp).
    if (ur_result_t r = ordo::check_global_work_size(numWorkDim, pGlobalWorkSize)) return r;
    choose_local_size(*k, numWorkDim, pGlobalWorkSize, pSuggestedLocalWorkSize);
    return UR_RESULT_SUCCESS;
  }
};

} // namespace

void choose_local_size(const Kernel &k, uint32_t work_dim, const size_t *global, size_t *local) {
  if (k.has_required_size()) {
    for (uint32_t d = 0; d < work_dim; ++d) local[d] = k.desc->reqd_local_size[d];
    return;
  }
  // Aim for about eight groups per worker; dimensions past the first get one item
  // per group, so their extent already provides groups.
  size_t wanted_groups = static_cast<size_t>(WorkerPool::instance().size()) * 8;
  size_t other = 1;
  for (uint32_t d = 1; d < work_dim; ++d) other *= global[d];
  size_t groups_along_x = std::max<size_t>(1, wanted_groups / std::max<size_t>(1, other));
  size_t cap = std::max<size_t>(1, std::min(kMaxWorkGroupSize, global[0] / groups_along_x));
  local[0] = ordo::largest_divisor_at_most(global[0], cap);
  for (uint32_t d = 1; d < work_dim; ++d) local[d] = 1;
}

void install_kernel_entry_points(ur_dditable_t &t) {
  ordo::ur_common::kernel_entry_points<kernel_hooks>::install(t);
  t.Kernel.pfnCreate = urKernelCreate;
  t.Kernel.pfnSetExecInfo = urKernelSetExecInfo;
}

} // namespace ordo::native_cpu
