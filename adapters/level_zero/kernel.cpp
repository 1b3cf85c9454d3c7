// SPDX-License-Identifier: Apache-2.0
// Kernels: a Level Zero kernel per device of the program, its properties and info
// queries.
#include <algorithm>
#include <cstring>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"
#include "ur_common/kernel.hpp"

namespace ordo::level_zero {

ze_kernel_handle_t Kernel::kernel_for(const Device *dev) const {
  const auto &pds = program->per_device;
  for (size_t i = 0; i < pds.size(); ++i)
    if (pds[i].dev == dev) return kernels[i];
  return nullptr;
}

namespace {
void kernel_destroy(Kernel *k) {
  for (ze_kernel_handle_t zk : k->kernels)
    if (zk) ze().zeKernelDestroy(zk);
  Program *p = k->program;
  ordo::retire(k);
  program_drop(p);
}
} // namespace

ur_result_t UR_APICALL urKernelCreate(ur_program_handle_t hProgram, const char *pKernelName,
                                      ur_kernel_handle_t *phKernel) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (!pKernelName || !phKernel) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!*pKernelName) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  std::lock_guard<std::mutex> lock(p->mutex);
  if (!p->built.load()) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
  auto *k = new Kernel();
  k->program = p;
  k->name = pKernelName;
  bool described = false;
  for (auto &pd : p->per_device) {
    ze_kernel_handle_t zk = nullptr;
    if (pd.module) {
      ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, pKernelName};
      ze_result_t r = ze().zeKernelCreate(pd.module, &desc, &zk);
      if (r != ZE_RESULT_SUCCESS) {
        k->program = nullptr;
        for (ze_kernel_handle_t made : k->kernels)
          if (made) ze().zeKernelDestroy(made);
        delete k;
        return r == ZE_RESULT_ERROR_INVALID_KERNEL_NAME ? UR_RESULT_ERROR_INVALID_KERNEL_NAME : map_error(r);
      }
      if (!described) {
        k->props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
        described = ze().zeKernelGetProperties(zk, &k->props) == ZE_RESULT_SUCCESS;
      }
    }
    k->kernels.push_back(zk);
  }
  program_hold(p);
  *phKernel = reinterpret_cast<ur_kernel_handle_t>(k);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelGetSuggestedLocalWorkSize(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue,
                                                         uint32_t numWorkDim, const size_t *pGlobalWorkOffset,
                                                         const size_t *pGlobalWorkSize,
                                                         size_t *pSuggestedLocalWorkSize) {
  ORDO_UNWRAP(Kernel, k, hKernel);
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pGlobalWorkOffset || !pGlobalWorkSize || !pSuggestedLocalWorkSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numWorkDim < 1 || numWorkDim > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  size_t g[3] = {1, 1, 1};
  for (uint32_t i = 0; i < numWorkDim; ++i) {
    if (pGlobalWorkSize[i] == 0) return UR_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
    if (pGlobalWorkSize[i] > UINT32_MAX) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
    g[i] = pGlobalWorkSize[i];
  }
  ze_kernel_handle_t zk = k->kernel_for(q->dev);
  if (!zk) return UR_RESULT_ERROR_INVALID_KERNEL;
  uint32_t s[3] = {1, 1, 1};
  ORDO_ZE(ze().zeKernelSuggestGroupSize(zk, uint32_t(g[0]), uint32_t(g[1]), uint32_t(g[2]), &s[0], &s[1], &s[2]));
  for (uint32_t i = 0; i < numWorkDim; ++i) pSuggestedLocalWorkSize[i] = s[i];
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelSetExecInfo(ur_kernel_handle_t hKernel, ur_kernel_exec_info_t propName, size_t propSize,
                                           const ur_kernel_exec_info_properties_t *pProperties,
                                           const void *pPropValue) {
  ORDO_UNWRAP(Kernel, k, hKernel);
  (void)propSize;
  (void)pProperties;
  if (!pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  switch (propName) {
  case UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS: {
    const ze_kernel_indirect_access_flags_t all = ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                                                  ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                                                  ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED;
    if (*static_cast<const ur_bool_t *>(pPropValue))
      for (ze_kernel_handle_t zk : k->kernels)
        if (zk) ORDO_ZE(ze().zeKernelSetIndirectAccess(zk, all));
    return UR_RESULT_SUCCESS;
  }
  case UR_KERNEL_EXEC_INFO_USM_PTRS:
  case UR_KERNEL_EXEC_INFO_CACHE_CONFIG: return UR_RESULT_SUCCESS; // hints
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

namespace {

struct kernel_hooks : handle_types {
  using Kernel = level_zero::Kernel;
  static void destroy(Kernel *k) { kernel_destroy(k); }
  static void *native(Kernel *k) {
    for (ze_kernel_handle_t zk : k->kernels)
      if (zk) return zk;
    return nullptr;
  }
  static bool on_device(Kernel *k, Device *d) { return k->kernel_for(d) != nullptr; }
  static uint32_t num_args(Kernel *k) { return k->props.numKernelArgs; }
  static ur_result_t num_regs(Kernel *, InfoWriter &) { return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; }
  static std::vector<uint32_t> spill(Kernel *k) {
    return std::vector<uint32_t>(k->kernels.size(), k->props.spillMemSize);
  }
  static ur_result_t group_info(Kernel *k, Device *d, ur_kernel_group_info_t propName, InfoWriter &out) {
    const ze_device_compute_properties_t &c = d->facts.compute;
    const ze_kernel_properties_t &p = k->props;
    switch (propName) {
    case UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE: {
      size_t max[3] = {size_t(c.maxGroupCountX) * c.maxGroupSizeX, size_t(c.maxGroupCountY) * c.maxGroupSizeY,
                       size_t(c.maxGroupCountZ) * c.maxGroupSizeZ};
      return out.array(max, 3);
    }
    case UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE: return out.value(size_t(c.maxTotalGroupSize));
    case UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE: {
      size_t req[3] = {p.requiredGroupSizeX, p.requiredGroupSizeY, p.requiredGroupSizeZ};
      return out.array(req, 3);
    }
    case UR_KERNEL_GROUP_INFO_COMPILE_MAX_WORK_GROUP_SIZE: {
      size_t none[3] = {0, 0, 0};
      return out.array(none, 3);
    }
    case UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE: return out.value(size_t{0});
    case UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE: return out.value(size_t(p.localMemSize));
    case UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return out.value(size_t(p.maxSubgroupSize ? p.maxSubgroupSize : 1));
    case UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE: return out.value(size_t(p.privateMemSize));
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  static ur_result_t sub_group_info(Kernel *k, Device *, ur_kernel_sub_group_info_t propName, InfoWriter &out) {
    switch (propName) {
    case UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE: return out.value(k->props.maxSubgroupSize);
    case UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS: return out.value(k->props.maxNumSubgroups);
    case UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS: return out.value(k->props.requiredNumSubGroups);
    case UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL: return out.value(k->props.requiredSubgroupSize);
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  static constexpr ur_pfnKernelGetSuggestedLocalWorkSize_t suggest = urKernelGetSuggestedLocalWorkSize;
};

} // namespace

void install_kernel_entry_points(ur_dditable_t &t) { ordo::ur_common::kernel_entry_points<kernel_hooks>::install(t); }

} // namespace ordo::level_zero
