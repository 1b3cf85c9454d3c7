// SPDX-License-Identifier: Apache-2.0
// Kernels: a driver function per device of the program, their parameter layout (from
// the driver, or from a PTX image, so launches can check every argument) and info queries.
#include <cstring>

#include "backend.hpp"
#include "image.hpp"
#include "ordo/info.hpp"
#include "ur_common/kernel.hpp"

namespace ordo::stream_backend {

function_t Kernel::function_for(const Device *dev) const {
  const auto &pds = program->per_device;
  for (size_t i = 0; i < pds.size(); ++i)
    if (pds[i].dev == dev) return functions[i];
  return nullptr;
}

function_t Kernel::offset_function_for(const Device *dev) const {
  const auto &pds = program->per_device;
  for (size_t i = 0; i < pds.size(); ++i)
    if (pds[i].dev == dev) return offset_functions[i];
  return nullptr;
}

namespace {

void kernel_destroy(Kernel *k) {
  Program *p = k->program;
  ordo::retire(k);
  program_drop(p);
}

// The parameter sizes of `f` (kernel `name` of `pd`'s image); false when nothing tells.
bool param_sizes_of(function_t f, const Program::PerDevice &pd, const std::string &name, std::vector<size_t> &sizes) {
  status r = drv::function_param_sizes(f, sizes);
  if (!r) return true;
  sizes.clear();
  return r.kind == err::not_supported && pd.is_ptx && ptx_param_sizes(pd.image, name, sizes);
}

} // namespace

int kernel_attr(function_t f, func_attr a) { return drv::function_attribute(f, a); }

// A work-group shape for `gws`: per dimension the largest divisor of the global
// size that still fits the kernel's and the device's limits.
void suggest_local_size(const Device *d, function_t f, uint32_t dims, const size_t *gws, size_t *lws) {
  size_t budget = size_t(kernel_attr(f, func_attr::max_threads_per_block));
  if (budget == 0) budget = size_t(d->facts.max_threads_per_block);
  for (uint32_t i = 0; i < 3; ++i) {
    size_t limit = i < dims ? std::min(budget, size_t(d->facts.block_dim[i])) : 1;
    size_t best = 1;
    if (i < dims)
      for (size_t c = std::min(limit, gws[i]); c >= 1; --c)
        if (gws[i] % c == 0) {
          best = c;
          break;
        }
    lws[i] = best;
    budget /= best;
  }
}

namespace {

// What ur_common's urKernelCreate, urKernelGetSuggestedLocalWorkSize and
// urKernelSetExecInfo leave to the backend (ur_common/kernel.hpp).
struct kernel_driver_hooks {
  using Program = stream_backend::Program;
  using Kernel = stream_backend::Kernel;
  using Queue = stream_backend::Queue;

  // The named function of each device's module, and its global-offset variant.
  static ur_result_t make(Program *p, Kernel *k, const char *pKernelName) {
    function_t first = nullptr;
    const Program::PerDevice *first_pd = nullptr;
    for (auto &pd : p->per_device) {
      function_t f = nullptr;
      if (pd.module) {
        status r = pd.dev->make_current();
        if (!r) r = drv::module_get_function(&f, pd.module, pKernelName);
        if (r)
          return r.kind == err::not_found || r.kind == err::invalid_value ? UR_RESULT_ERROR_INVALID_KERNEL_NAME
                                                                          : to_ur(r);
        if (!first) {
          first = f;
          first_pd = &pd;
        }
      }
      k->functions.push_back(f);
    }
    // Every device got the same image, so one function describes the parameters.
    k->params_known = param_sizes_of(first, *first_pd, k->name, k->param_sizes);
    // The offset variant counts only if it takes the same parameters plus the offset
    // (where the layout is unknown, if it exists).
    std::string variant = k->name + kOffsetSuffix;
    for (auto &pd : p->per_device) {
      function_t f = nullptr;
      if (pd.module && !pd.dev->make_current() && !drv::module_get_function(&f, pd.module, variant.c_str())) {
        std::vector<size_t> sizes;
        std::vector<size_t> want = k->param_sizes;
        want.push_back(3 * sizeof(size_t));
        if (k->params_known && (!param_sizes_of(f, pd, variant, sizes) || sizes != want)) f = nullptr;
      } else {
        f = nullptr;
      }
      k->offset_functions.push_back(f);
    }
    return UR_RESULT_SUCCESS;
  }

  static constexpr size_t kMaxGlobalSize = SIZE_MAX;
  static ur_result_t suggest_for(Kernel *k, Queue *q, uint32_t numWorkDim, const size_t *pGlobalWorkSize,
                                 size_t *pSuggestedLocalWorkSize) {
    function_t f = k->function_for(q->dev);
    if (!f) return UR_RESULT_ERROR_INVALID_KERNEL;
    size_t lws[3];
    suggest_local_size(q->dev, f, numWorkDim, pGlobalWorkSize, lws);
    std::memcpy(pSuggestedLocalWorkSize, lws, numWorkDim * sizeof(size_t));
    return UR_RESULT_SUCCESS;
  }

  // Unified addressing makes every USM pointer reachable.
  static ur_result_t indirect_access(Kernel *, bool) { return UR_RESULT_SUCCESS; }
};

} // namespace

// A kernel over a driver function of the program: found by name among the program's
// functions (the driver gives no name for a function handle), then made as
// urKernelCreate makes it.
ur_result_t UR_APICALL urKernelCreateWithNativeHandle(ur_native_handle_t hNativeKernel, ur_context_handle_t hContext,
                                                      ur_program_handle_t hProgram,
                                                      const ur_kernel_native_properties_t *pProperties,
                                                      ur_kernel_handle_t *phKernel) {
  ORDO_UNWRAP(Context, ctx, hContext);
  (void)pProperties; // a function belongs to its module: nothing to own
  if (!phKernel) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!hProgram) return UR_RESULT_ERROR_INVALID_NULL_HANDLE; // the function's program is needed
  ORDO_UNWRAP(Program, p, hProgram);
  if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  const function_t want = reinterpret_cast<function_t>(hNativeKernel);
  std::string name;
  {
    std::lock_guard<std::mutex> lock(p->mutex);
    for (auto &pd : p->per_device) {
      if (!pd.module || !name.empty()) continue;
      std::vector<std::string> names;
      if (ur_result_t r = function_names(pd, names)) return r; // UNSUPPORTED: nothing names them
      for (const std::string &n : names) {
        function_t f = nullptr;
        if (!drv::module_get_function(&f, pd.module, n.c_str()) && f == want) {
          name = n;
          break;
        }
      }
    }
  }
  if (name.empty()) return UR_RESULT_ERROR_INVALID_KERNEL; // no function of the program
  return ordo::ur_common::kernel_create<kernel_driver_hooks>(hProgram, name.c_str(), phKernel);
}

ur_result_t UR_APICALL urKernelSuggestMaxCooperativeGroupCount(ur_kernel_handle_t hKernel, ur_device_handle_t hDevice,
                                                               uint32_t workDim, const size_t *pLocalWorkSize,
                                                               size_t dynamicSharedMemorySize,
                                                               uint32_t *pGroupCountRet) {
  ORDO_UNWRAP(Kernel, k, hKernel);
  ORDO_UNWRAP(Device, d, hDevice);
  if (!pLocalWorkSize || !pGroupCountRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (workDim < 1 || workDim > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  function_t f = k->function_for(d);
  if (!f) return UR_RESULT_ERROR_INVALID_DEVICE;
  size_t threads = 1;
  for (uint32_t i = 0; i < workDim; ++i) threads *= pLocalWorkSize[i];
  ORDO_DRV(d->make_current());
  int per_sm = 0;
  ORDO_DRV(drv::occupancy_max_blocks(&per_sm, f, int(threads), dynamicSharedMemorySize));
  *pGroupCountRet = uint32_t(per_sm) * uint32_t(d->facts.sm_count);
  return UR_RESULT_SUCCESS;
}

namespace {

// The bookkeeping urKernel* (ur_common/kernel.hpp) and, from kernel_driver_hooks, the rest.
struct kernel_hooks : handle_types, kernel_driver_hooks {
  using Program = stream_backend::Program;
  using Queue = stream_backend::Queue;
  using Kernel = stream_backend::Kernel;
  static void destroy(Kernel *k) { kernel_destroy(k); }
  static void *native(Kernel *k) {
    for (function_t f : k->functions)
      if (f) return reinterpret_cast<void *>(f);
    return nullptr;
  }
  static bool on_device(Kernel *k, Device *d) { return k->function_for(d) != nullptr; }
  static uint32_t num_args(Kernel *k) { return static_cast<uint32_t>(k->param_sizes.size()); }
  static ur_result_t num_regs(Kernel *k, InfoWriter &out) {
    for (function_t f : k->functions)
      if (f) return out.value(static_cast<uint32_t>(kernel_attr(f, func_attr::num_regs)));
    return UR_RESULT_ERROR_INVALID_KERNEL;
  }
  // Per device of the program: the thread-local (spill) bytes of each function.
  static std::vector<uint32_t> spill(Kernel *k) {
    std::vector<uint32_t> spill;
    for (function_t f : k->functions)
      spill.push_back(f ? static_cast<uint32_t>(kernel_attr(f, func_attr::local_size_bytes)) : 0);
    return spill;
  }
  static ur_result_t group_info(Kernel *k, Device *d, ur_kernel_group_info_t propName, InfoWriter &out) {
    function_t f = k->function_for(d);
    const device_facts &facts = d->facts;
    switch (propName) {
    case UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE: {
      size_t max[3];
      for (int i = 0; i < 3; ++i) max[i] = size_t(facts.grid_dim[i]) * size_t(facts.block_dim[i]);
      return out.array(max, 3);
    }
    case UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE:
      return out.value(size_t(kernel_attr(f, func_attr::max_threads_per_block)));
    case UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE:
    case UR_KERNEL_GROUP_INFO_COMPILE_MAX_WORK_GROUP_SIZE: {
      size_t none[3] = {0, 0, 0}; // the test kernels declare no required or maximum shape
      return out.array(none, 3);
    }
    case UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE: return out.value(size_t{0});
    case UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE: return out.value(size_t(kernel_attr(f, func_attr::shared_size_bytes)));
    case UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: return out.value(size_t(facts.warp_size));
    case UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE: return out.value(size_t(kernel_attr(f, func_attr::local_size_bytes)));
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  static ur_result_t sub_group_info(Kernel *k, Device *d, ur_kernel_sub_group_info_t propName, InfoWriter &out) {
    function_t f = k->function_for(d);
    uint32_t warp = uint32_t(d->facts.warp_size);
    switch (propName) {
    case UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE: return out.value(warp);
    case UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS:
      return out.value(uint32_t(kernel_attr(f, func_attr::max_threads_per_block)) / warp);
    case UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS:
    case UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL: return out.value(uint32_t{0});
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  // The shape does not depend on the arguments here (local memory does not limit it).
};

} // namespace

void install_kernel_entry_points(ur_dditable_t &t) {
  ordo::ur_common::device_kernel_entry_points<kernel_hooks>::install(t);
  t.Kernel.pfnCreateWithNativeHandle = urKernelCreateWithNativeHandle;
  t.Kernel.pfnSuggestMaxCooperativeGroupCount = urKernelSuggestMaxCooperativeGroupCount;
}

} // namespace ordo::stream_backend
