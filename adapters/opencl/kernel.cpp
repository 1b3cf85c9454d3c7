// SPDX-License-Identifier: Apache-2.0
// urKernel*: kernels of a built program, their info, execution hints, arguments. Retain,
// release, the native handle, urKernelGetInfo and the info queries' argument checks are
// ur_common/kernel.hpp's.
#include "kernel.hpp"

#include <algorithm>
#include <new>
#include <tuple>

#include "context.hpp"
#include "device.hpp"
#include "platform.hpp"
#include "memory.hpp"
#include "ordo/work_group.hpp"
#include "program.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/kernel.hpp"

ur_kernel_handle_t_::~ur_kernel_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseKernel(cl);
  if (program) ordo::opencl::unhold(program);
}

namespace ordo::opencl {

ur_result_t set_kernel_arg(ur_kernel_handle_t k, const ur_exp_kernel_arg_properties_t &arg) {
  cl_int err = CL_SUCCESS;
  switch (arg.type) {
  case UR_EXP_KERNEL_ARG_TYPE_VALUE:
    if (!arg.value.value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    err = cl.clSetKernelArg(k->cl, arg.index, arg.size, arg.value.value);
    break;
  case UR_EXP_KERNEL_ARG_TYPE_POINTER:
    if (!arg.value.pointer) // a null global pointer
      err = cl.clSetKernelArg(k->cl, arg.index, sizeof(cl_mem), nullptr);
    else if (k->program->ctx->intel_usm)
      err = k->program->ctx->platform->intel_usm.set_kernel_arg(k->cl, arg.index, arg.value.pointer);
    else
      err = cl.clSetKernelArgSVMPointer(k->cl, arg.index, arg.value.pointer);
    break;
  case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: {
    ur_mem_handle_t m = arg.value.memObjTuple.hMem;
    if (m && !ordo::is_a<ur_mem_handle_t_>(m)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    if (m && m->ctx != k->program->ctx) return UR_RESULT_ERROR_INVALID_MEM_OBJECT; // another context's buffer
    cl_mem native = m ? m->cl : nullptr;
    err = cl.clSetKernelArg(k->cl, arg.index, sizeof(cl_mem), m ? &native : nullptr);
    break;
  }
  case UR_EXP_KERNEL_ARG_TYPE_LOCAL:
    // Local memory: a size and no value.
    err = cl.clSetKernelArg(k->cl, arg.index, arg.size, nullptr);
    break;
  case UR_EXP_KERNEL_ARG_TYPE_SAMPLER: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // samplers are not implemented
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (err == CL_INVALID_ARG_VALUE && arg.type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ)
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  return to_ur(err);
}

namespace {

// Wraps `native` (the caller's reference) as a kernel of `program`, which it holds;
// `name` null: OpenCL's name for it.
ur_result_t wrap_kernel(cl_kernel native, ur_program_handle_t program, const char *name, ur_kernel_handle_t *out) {
  auto *k = new (std::nothrow) ur_kernel_handle_t_();
  if (!k) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  k->cl = native;
  k->program = program;
  k->name = name ? name : cl_string(cl.clGetKernelInfo, native, CL_KERNEL_FUNCTION_NAME);
  cl.clGetKernelInfo(native, CL_KERNEL_NUM_ARGS, sizeof k->num_args, &k->num_args, nullptr);
  program->hold();
  *out = k;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelCreate(ur_program_handle_t hProgram, const char *pKernelName,
                                      ur_kernel_handle_t *phKernel) {
  ORDO_CHECK_HANDLE(hProgram);
  cl_int err = CL_SUCCESS;
  cl_kernel native = cl.clCreateKernel(hProgram->cl, pKernelName, &err);
  if (!native) return to_ur(err);
  ur_result_t r = wrap_kernel(native, hProgram, pKernelName, phKernel);
  if (r) cl.clReleaseKernel(native);
  return r;
}

// urKernelGetSuggestedLocalWorkSizeWithArgs: local memory arguments can lower the
// work-group size OpenCL reports, so they are set first. Per dimension the largest
// divisor of the global size that the device and kernel allow, filling the kernel's
// work-group size from the first dimension on.
ur_result_t UR_APICALL suggest_local_size(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue, uint32_t dims,
                                          const size_t *pGlobalWorkOffset, const size_t *global, uint32_t numArgs,
                                          const ur_exp_kernel_arg_properties_t *pArgs, size_t *local) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_HANDLE(hQueue);
  // The shape first, as a launch checks it (ordo/work_group.hpp): a refused call sets no
  // argument. A global size of 0 would otherwise be suggested a local size of 1.
  if (ur_result_t r = ordo::check_global_work_size(dims, global)) return r;
  std::lock_guard<std::mutex> lock(hKernel->launch_mutex);
  for (uint32_t i = 0; i < numArgs; ++i)
    if (ur_result_t r = set_kernel_arg(hKernel, pArgs[i])) return r;
  size_t kernel_max = 1;
  ORDO_CL_CHECK(cl.clGetKernelWorkGroupInfo(hKernel->cl, hQueue->dev->cl, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max,
                                            &kernel_max, nullptr));
  size_t item_max[3] = {1, 1, 1};
  cl.clGetDeviceInfo(hQueue->dev->cl, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_max, item_max, nullptr);
  size_t budget = std::max<size_t>(kernel_max, 1);
  for (uint32_t d = 0; d < dims; ++d) {
    local[d] = ordo::largest_divisor_at_most(global[d], std::min(item_max[d], budget));
    budget /= local[d];
  }
  return UR_RESULT_SUCCESS;
}

// What OpenCL answers per device: the queries that map one to one onto
// clGetKernelWorkGroupInfo, and the sub-group queries.
struct kernel_hooks {
  using Kernel = ur_kernel_handle_t_;
  using Device = ur_device_handle_t_;
  static void destroy(Kernel *k) { unhold(k); }
  static void *native(Kernel *k) { return k->cl; }
  static bool on_device(Kernel *k, Device *d) { return k->program->ctx->has_device(d); }
  static uint32_t num_args(Kernel *k) { return k->num_args; }
  static ur_result_t num_regs(Kernel *, InfoWriter &) { return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; }
  static std::string attributes(Kernel *k) { return cl_string(cl.clGetKernelInfo, k->cl, CL_KERNEL_ATTRIBUTES); }

  static ur_result_t group_info(Kernel *k, Device *d, ur_kernel_group_info_t propName, InfoWriter &w) {
    // Answered as OpenCL gives them: size_t[3] or size_t (cl_ulong memory sizes are
    // the same 64 bits).
    static_assert(sizeof(cl_ulong) == sizeof(size_t), "64-bit sizes");
    static constexpr std::tuple<ur_kernel_group_info_t, cl_kernel_work_group_info, size_t> rows[] = {
        {UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE, CL_KERNEL_GLOBAL_WORK_SIZE, 3},
        {UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, CL_KERNEL_WORK_GROUP_SIZE, 1},
        {UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, 3},
        {UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE, CL_KERNEL_LOCAL_MEM_SIZE, 1},
        {UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, 1},
        {UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE, CL_KERNEL_PRIVATE_MEM_SIZE, 1},
    };
    for (auto [ur, what, n] : rows) {
      if (ur != propName) continue;
      size_t s[3] = {};
      cl_int err = cl.clGetKernelWorkGroupInfo(k->cl, d->cl, what, n * sizeof(size_t), s, nullptr);
      // Only custom devices and built-in kernels have a global work size.
      if (err != CL_SUCCESS && ur == UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE)
        return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
      ORDO_CL_CHECK(err);
      return w.array(s, n);
    }
    return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // compile-time maxima: no OpenCL query
  }

  // Devices without sub-groups (no clGetKernelSubGroupInfo, or it refuses) behave as if
  // every work-item were its own sub-group.
  static ur_result_t sub_group_info(Kernel *k, Device *d, ur_kernel_sub_group_info_t propName, InfoWriter &w) {
    size_t wg = 1;
    cl.clGetKernelWorkGroupInfo(k->cl, d->cl, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr);
    auto query = [&](cl_kernel_sub_group_info what, size_t otherwise) {
      size_t v = 0;
      if (cl.clGetKernelSubGroupInfo &&
          cl.clGetKernelSubGroupInfo(k->cl, d->cl, what, sizeof wg, &wg, sizeof v, &v, nullptr) == CL_SUCCESS)
        return w.value<uint32_t>(static_cast<uint32_t>(v));
      return w.value<uint32_t>(static_cast<uint32_t>(otherwise));
    };
    switch (propName) {
    case UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE: return query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, 1);
    case UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS: return query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, wg);
    case UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS: return query(CL_KERNEL_COMPILE_NUM_SUB_GROUPS, 0);
    case UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL: return w.value<uint32_t>(0); // none required
    default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    }
  }

  static ur_result_t UR_APICALL suggest(ur_kernel_handle_t k, ur_queue_handle_t q, uint32_t dims, const size_t *offset,
                                        const size_t *global, size_t *local) {
    return suggest_local_size(k, q, dims, offset, global, 0, nullptr, local);
  }
};

ur_result_t UR_APICALL urKernelCreateWithNativeHandle(ur_native_handle_t hNativeKernel, ur_context_handle_t hContext,
                                                      ur_program_handle_t hProgram,
                                                      const ur_kernel_native_properties_t *pProperties,
                                                      ur_kernel_handle_t *phKernel) {
  ORDO_CHECK_HANDLE(hContext);
  cl_kernel native = reinterpret_cast<cl_kernel>(hNativeKernel);
  if (!native) return UR_RESULT_ERROR_INVALID_KERNEL;
  cl_program native_program = nullptr;
  ORDO_CL_CHECK(cl.clGetKernelInfo(native, CL_KERNEL_PROGRAM, sizeof native_program, &native_program, nullptr));
  ur_program_handle_t own = nullptr; // the kernel's own program, wrapped here
  if (hProgram) {
    ORDO_CHECK_HANDLE(hProgram);
    if (hProgram->cl != native_program) return UR_RESULT_ERROR_INVALID_PROGRAM;
  } else {
    // Wrap the kernel's own program so UR_KERNEL_INFO_PROGRAM has an answer.
    cl.clRetainProgram(native_program);
    if (ur_result_t r = wrap_program(hContext, native_program, &own)) return r;
    own->ref_count.store(0); // the user has no reference to it
    hProgram = own;
  }
  ur_result_t r = wrap_kernel(native, hProgram, nullptr, phKernel);
  if (own) unhold(own); // the kernel holds it (or, on failure, nothing does)
  if (r) return r;
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainKernel(native);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelSetExecInfo(ur_kernel_handle_t hKernel, ur_kernel_exec_info_t propName, size_t propSize,
                                           const ur_kernel_exec_info_properties_t *, const void *pPropValue) {
  ORDO_CHECK_HANDLE(hKernel);
  std::lock_guard<std::mutex> lock(hKernel->launch_mutex);
  const bool intel = hKernel->program->ctx->intel_usm;
  switch (propName) {
  case UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS: {
    if (propSize != sizeof(ur_bool_t)) return UR_RESULT_ERROR_INVALID_SIZE;
    if (!intel) return UR_RESULT_SUCCESS; // SVM: reachable from any kernel of the context
    cl_bool on = *static_cast<const ur_bool_t *>(pPropValue) ? CL_TRUE : CL_FALSE;
    for (cl_kernel_exec_info what :
         {CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL, CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
          CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL})
      ORDO_CL_CHECK(cl.clSetKernelExecInfo(hKernel->cl, what, sizeof on, &on));
    return UR_RESULT_SUCCESS;
  }
  case UR_KERNEL_EXEC_INFO_USM_PTRS:
    if (!cl.clSetKernelExecInfo) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (propSize % sizeof(void *)) return UR_RESULT_ERROR_INVALID_SIZE;
    return to_ur(cl.clSetKernelExecInfo(
        hKernel->cl, intel ? CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL : CL_KERNEL_EXEC_INFO_SVM_PTRS, propSize, pPropValue));
  case UR_KERNEL_EXEC_INFO_CACHE_CONFIG:
    if (propSize != sizeof(ur_kernel_cache_config_t)) return UR_RESULT_ERROR_INVALID_SIZE;
    if (*static_cast<const ur_kernel_cache_config_t *>(pPropValue) > UR_KERNEL_CACHE_CONFIG_LARGE_DATA)
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
    return UR_RESULT_SUCCESS; // a hint OpenCL has no knob for
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

} // namespace

void install_kernel_entry_points(ur_dditable_t &t) {
  ordo::ur_common::kernel_entry_points<kernel_hooks>::install(t);
  t.Kernel.pfnCreate = urKernelCreate;
  t.Kernel.pfnCreateWithNativeHandle = urKernelCreateWithNativeHandle;
  t.Kernel.pfnSetExecInfo = urKernelSetExecInfo;
  t.Kernel.pfnGetSuggestedLocalWorkSizeWithArgs = suggest_local_size;
}

} // namespace ordo::opencl
