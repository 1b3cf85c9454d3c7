// SPDX-License-Identifier: Apache-2.0
// Kernels: a Level Zero kernel per device of the program, its properties and info
// queries.
#include <algorithm>
#include <cstring>

#include "common.hpp"
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

namespace {

// What ur_common's urKernelCreate, urKernelGetSuggestedLocalWorkSize and
// urKernelSetExecInfo leave to the adapter (ur_common/kernel.hpp).
struct kernel_driver_hooks {
  using Program = level_zero::Program;
  using Kernel = level_zero::Kernel;
  using Queue = level_zero::Queue;

  // A Level Zero kernel per device the program is built for; the first one describes
  // the kernel.
  static ur_result_t make(Program *p, Kernel *k, const char *pKernelName) {
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
          return r == ZE_RESULT_ERROR_INVALID_KERNEL_NAME ? UR_RESULT_ERROR_INVALID_KERNEL_NAME : map_error(r);
        }
        if (!described) {
          k->props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
          described = ze().zeKernelGetProperties(zk, &k->props) == ZE_RESULT_SUCCESS;
        }
      }
      k->kernels.push_back(zk);
    }
    return UR_RESULT_SUCCESS;
  }

  // Level Zero group counts and sizes are 32-bit.
  static constexpr size_t kMaxGlobalSize = UINT32_MAX;
  static ur_result_t suggest_for(Kernel *k, Queue *q, uint32_t numWorkDim, const size_t *pGlobalWorkSize,
                                 size_t *pSuggestedLocalWorkSize) {
    size_t g[3] = {1, 1, 1};
    for (uint32_t i = 0; i < numWorkDim; ++i) g[i] = pGlobalWorkSize[i];
    ze_kernel_handle_t zk = k->kernel_for(q->dev);
    if (!zk) return UR_RESULT_ERROR_INVALID_KERNEL;
    uint32_t s[3] = {1, 1, 1};
    ORDO_ZE(ze().zeKernelSuggestGroupSize(zk, uint32_t(g[0]), uint32_t(g[1]), uint32_t(g[2]), &s[0], &s[1], &s[2]));
    for (uint32_t i = 0; i < numWorkDim; ++i) pSuggestedLocalWorkSize[i] = s[i];
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t indirect_access(Kernel *k, bool on) {
    const ze_kernel_indirect_access_flags_t all = ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                                                  ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                                                  ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED;
    if (on)
      for (ze_kernel_handle_t zk : k->kernels)
        if (zk) ORDO_ZE(ze().zeKernelSetIndirectAccess(zk, all));
    return UR_RESULT_SUCCESS;
  }
};

// The bookkeeping urKernel* (ur_common/kernel.hpp) and, from kernel_driver_hooks, the rest.
struct kernel_hooks : handle_types, kernel_driver_hooks {
  using Program = level_zero::Program;
  using Queue = level_zero::Queue;
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
};

} // namespace

void install_kernel_entry_points(ur_dditable_t &t) {
  ordo::ur_common::device_kernel_entry_points<kernel_hooks>::install(t);
}

} // namespace ordo::level_zero
