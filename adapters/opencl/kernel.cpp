// SPDX-License-Identifier: Apache-2.0
// urKernel*: kernels of a built program, their info, execution hints, arguments.
#include "ordo/retired_handles.hpp"
#include "kernel.hpp"

#include <algorithm>
#include <new>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "program.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "usm.hpp"

ur_kernel_handle_t_::~ur_kernel_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseKernel(cl);
  if (program) ordo::opencl::program_unhold(program);
}

namespace ordo::opencl {

ur_result_t set_kernel_arg(ur_kernel_handle_t k, const ur_exp_kernel_arg_properties_t &arg) {
  cl_int err = CL_SUCCESS;
  switch (arg.type) {
  case UR_EXP_KERNEL_ARG_TYPE_VALUE:
    if (!arg.value.value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    err = cl.clSetKernelArg(k->cl, arg.index, arg.size, arg.value.value);
    break;
  case UR_EXP_KERNEL_ARG_TYPE_POINTER: err = usm_set_kernel_arg(k->context, k->cl, arg.index, arg.value.pointer); break;
  case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: {
    ur_mem_handle_t m = arg.value.memObjTuple.hMem;
    if (m && !ordo::is_a<ur_mem_handle_t_>(m)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    if (m && m->context != k->context) return UR_RESULT_ERROR_INVALID_MEM_OBJECT; // another context's buffer
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

ur_result_t UR_APICALL urKernelCreate(ur_program_handle_t hProgram, const char *pKernelName,
                                      ur_kernel_handle_t *phKernel) {
  ORDO_CHECK_HANDLE(hProgram);
  ORDO_CHECK_PTR(pKernelName);
  ORDO_CHECK_PTR(phKernel);
  cl_int err = CL_SUCCESS;
  cl_kernel native = cl.clCreateKernel(hProgram->cl, pKernelName, &err);
  if (!native) return to_ur(err);
  auto *k = new (std::nothrow) ur_kernel_handle_t_();
  if (!k) {
    cl.clReleaseKernel(native);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  k->cl = native;
  k->program = hProgram;
  k->context = hProgram->context;
  k->name = pKernelName;
  cl.clGetKernelInfo(native, CL_KERNEL_NUM_ARGS, sizeof k->num_args, &k->num_args, nullptr);
  hProgram->hold();
  *phKernel = k;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelGetInfo(ur_kernel_handle_t hKernel, ur_kernel_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hKernel);
  if (propName > UR_KERNEL_INFO_SPILL_MEM_SIZE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_KERNEL_INFO_FUNCTION_NAME: return w.string(hKernel->name);
  case UR_KERNEL_INFO_NUM_ARGS: return w.value<uint32_t>(hKernel->num_args);
  case UR_KERNEL_INFO_REFERENCE_COUNT: return w.value<uint32_t>(hKernel->count());
  case UR_KERNEL_INFO_CONTEXT: return w.value(hKernel->context);
  case UR_KERNEL_INFO_PROGRAM: return w.value(hKernel->program);
  case UR_KERNEL_INFO_ATTRIBUTES: {
    std::string attrs;
    ORDO_CL_CHECK(cl_string(cl.clGetKernelInfo, hKernel->cl, CL_KERNEL_ATTRIBUTES, attrs));
    return w.string(attrs);
  }
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // NUM_REGS, SPILL_MEM_SIZE: no OpenCL query
  }
}

ur_result_t UR_APICALL urKernelGetGroupInfo(ur_kernel_handle_t hKernel, ur_device_handle_t hDevice,
                                            ur_kernel_group_info_t propName, size_t propSize, void *pPropValue,
                                            size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_HANDLE(hDevice);
  if (propName > UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  if (!hKernel->context->has_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  auto query = [&](cl_kernel_work_group_info what, void *out, size_t n) {
    return cl.clGetKernelWorkGroupInfo(hKernel->cl, hDevice->cl, what, n, out, nullptr);
  };
  switch (propName) {
  case UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE: {
    size_t s[3] = {};
    // Only custom devices and built-in kernels have one.
    if (query(CL_KERNEL_GLOBAL_WORK_SIZE, s, sizeof s) != CL_SUCCESS) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    return w.array(s, 3);
  }
  case UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE: {
    size_t s = 0;
    ORDO_CL_CHECK(query(CL_KERNEL_WORK_GROUP_SIZE, &s, sizeof s));
    return w.value(s);
  }
  case UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE: {
    size_t s[3] = {};
    ORDO_CL_CHECK(query(CL_KERNEL_COMPILE_WORK_GROUP_SIZE, s, sizeof s));
    return w.array(s, 3);
  }
  case UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE: {
    cl_ulong s = 0;
    ORDO_CL_CHECK(query(CL_KERNEL_LOCAL_MEM_SIZE, &s, sizeof s));
    return w.value<size_t>(s);
  }
  case UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: {
    size_t s = 0;
    ORDO_CL_CHECK(query(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, &s, sizeof s));
    return w.value(s);
  }
  case UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE: {
    cl_ulong s = 0;
    ORDO_CL_CHECK(query(CL_KERNEL_PRIVATE_MEM_SIZE, &s, sizeof s));
    return w.value<size_t>(s);
  }
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // compile-time maxima: no OpenCL query
  }
}

// Devices without sub-groups (no clGetKernelSubGroupInfo, or it refuses) behave as if
// every work-item were its own sub-group.
ur_result_t UR_APICALL urKernelGetSubGroupInfo(ur_kernel_handle_t hKernel, ur_device_handle_t hDevice,
                                               ur_kernel_sub_group_info_t propName, size_t propSize, void *pPropValue,
                                               size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_HANDLE(hDevice);
  if (propName > UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  if (!hKernel->context->has_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  size_t wg = 1;
  cl.clGetKernelWorkGroupInfo(hKernel->cl, hDevice->cl, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr);
  auto sub_group_query = [&](cl_kernel_sub_group_info what, size_t &out) {
    if (!cl.clGetKernelSubGroupInfo) return false;
    return cl.clGetKernelSubGroupInfo(hKernel->cl, hDevice->cl, what, sizeof wg, &wg, sizeof out, &out, nullptr) ==
           CL_SUCCESS;
  };
  size_t v = 0;
  switch (propName) {
  case UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE:
    if (!sub_group_query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, v)) v = 1;
    return w.value<uint32_t>(static_cast<uint32_t>(v));
  case UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS:
    if (!sub_group_query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, v)) v = wg;
    return w.value<uint32_t>(static_cast<uint32_t>(v));
  case UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS:
    if (!sub_group_query(CL_KERNEL_COMPILE_NUM_SUB_GROUPS, v)) v = 0;
    return w.value<uint32_t>(static_cast<uint32_t>(v));
  case UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL: return w.value<uint32_t>(0); // none required
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urKernelRetain(ur_kernel_handle_t hKernel) {
  ORDO_CHECK_HANDLE(hKernel);
  if (!hKernel->retain_user()) return ordo::invalid_of(hKernel);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelRelease(ur_kernel_handle_t hKernel) {
  ORDO_CHECK_HANDLE(hKernel);
  bool last_ = false;
  if (!hKernel->release_user(last_)) return ordo::invalid_of(hKernel);
  if (last_ && hKernel->drop()) ordo::retire(hKernel);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelGetNativeHandle(ur_kernel_handle_t hKernel, ur_native_handle_t *phNativeKernel) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_PTR(phNativeKernel);
  *phNativeKernel = reinterpret_cast<ur_native_handle_t>(hKernel->cl);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelCreateWithNativeHandle(ur_native_handle_t hNativeKernel, ur_context_handle_t hContext,
                                                      ur_program_handle_t hProgram,
                                                      const ur_kernel_native_properties_t *pProperties,
                                                      ur_kernel_handle_t *phKernel) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(phKernel);
  cl_kernel native = reinterpret_cast<cl_kernel>(hNativeKernel);
  if (!native) return UR_RESULT_ERROR_INVALID_KERNEL;
  cl_program native_program = nullptr;
  ORDO_CL_CHECK(cl.clGetKernelInfo(native, CL_KERNEL_PROGRAM, sizeof native_program, &native_program, nullptr));
  if (hProgram) {
    ORDO_CHECK_HANDLE(hProgram);
    if (hProgram->cl != native_program) return UR_RESULT_ERROR_INVALID_PROGRAM;
    hProgram->hold();
  } else {
    // Wrap the kernel's own program so UR_KERNEL_INFO_PROGRAM has an answer.
    cl.clRetainProgram(native_program);
    if (ur_result_t r = wrap_program(hContext, native_program, &hProgram)) return r;
    hProgram->ref_count.store(0); // held by this kernel only
  }
  auto *k = new ur_kernel_handle_t_();
  k->cl = native;
  k->program = hProgram;
  k->context = hContext;
  cl_string(cl.clGetKernelInfo, native, CL_KERNEL_FUNCTION_NAME, k->name);
  cl.clGetKernelInfo(native, CL_KERNEL_NUM_ARGS, sizeof k->num_args, &k->num_args, nullptr);
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainKernel(native);
  *phKernel = k;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelSetExecInfo(ur_kernel_handle_t hKernel, ur_kernel_exec_info_t propName, size_t propSize,
                                           const ur_kernel_exec_info_properties_t *, const void *pPropValue) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_PTR(pPropValue);
  if (propName > UR_KERNEL_EXEC_INFO_CACHE_CONFIG) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  std::lock_guard<std::mutex> lock(hKernel->launch_mutex);
  const bool intel = hKernel->context->intel_usm;
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

// Per dimension the largest divisor of the global size that the device and kernel
// allow, filling the kernel's work-group size from the first dimension on.
ur_result_t suggest_local_size(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue, uint32_t dims,
                               const size_t *global, size_t *local) {
  if (dims < 1 || dims > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  size_t kernel_max = 1;
  ORDO_CL_CHECK(cl.clGetKernelWorkGroupInfo(hKernel->cl, hQueue->device->cl, CL_KERNEL_WORK_GROUP_SIZE,
                                            sizeof kernel_max, &kernel_max, nullptr));
  size_t item_max[3] = {1, 1, 1};
  cl.clGetDeviceInfo(hQueue->device->cl, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_max, item_max, nullptr);
  size_t budget = std::max<size_t>(kernel_max, 1);
  for (uint32_t d = 0; d < dims; ++d) {
    size_t best = 1;
    for (size_t c = std::min({global[d], item_max[d], budget}); c >= 1; --c)
      if (global[d] % c == 0) {
        best = c;
        break;
      }
    local[d] = best;
    budget /= best;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urKernelGetSuggestedLocalWorkSize(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue,
                                                         uint32_t numWorkDim, const size_t *pGlobalWorkOffset,
                                                         const size_t *pGlobalWorkSize,
                                                         size_t *pSuggestedLocalWorkSize) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_HANDLE(hQueue);
  ORDO_CHECK_PTR(pGlobalWorkOffset);
  ORDO_CHECK_PTR(pGlobalWorkSize);
  ORDO_CHECK_PTR(pSuggestedLocalWorkSize);
  return suggest_local_size(hKernel, hQueue, numWorkDim, pGlobalWorkSize, pSuggestedLocalWorkSize);
}

ur_result_t UR_APICALL urKernelGetSuggestedLocalWorkSizeWithArgs(ur_kernel_handle_t hKernel, ur_queue_handle_t hQueue,
                                                                 uint32_t numWorkDim, const size_t *pGlobalWorkOffset,
                                                                 const size_t *pGlobalWorkSize, uint32_t numArgs,
                                                                 const ur_exp_kernel_arg_properties_t *pArgs,
                                                                 size_t *pSuggestedLocalWorkSize) {
  ORDO_CHECK_HANDLE(hKernel);
  ORDO_CHECK_HANDLE(hQueue);
  ORDO_CHECK_PTR(pGlobalWorkOffset);
  ORDO_CHECK_PTR(pGlobalWorkSize);
  ORDO_CHECK_PTR(pSuggestedLocalWorkSize);
  if (numArgs > 0 && !pArgs) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // Local memory arguments can lower the work-group size OpenCL reports; set them first.
  std::lock_guard<std::mutex> lock(hKernel->launch_mutex);
  for (uint32_t i = 0; i < numArgs; ++i)
    if (ur_result_t r = set_kernel_arg(hKernel, pArgs[i])) return r;
  return suggest_local_size(hKernel, hQueue, numWorkDim, pGlobalWorkSize, pSuggestedLocalWorkSize);
}

} // namespace

void install_kernel_entry_points(ur_dditable_t &t) {
  t.Kernel.pfnCreate = urKernelCreate;
  t.Kernel.pfnGetInfo = urKernelGetInfo;
  t.Kernel.pfnGetGroupInfo = urKernelGetGroupInfo;
  t.Kernel.pfnGetSubGroupInfo = urKernelGetSubGroupInfo;
  t.Kernel.pfnRetain = urKernelRetain;
  t.Kernel.pfnRelease = urKernelRelease;
  t.Kernel.pfnGetNativeHandle = urKernelGetNativeHandle;
  t.Kernel.pfnCreateWithNativeHandle = urKernelCreateWithNativeHandle;
  t.Kernel.pfnSetExecInfo = urKernelSetExecInfo;
  t.Kernel.pfnGetSuggestedLocalWorkSize = urKernelGetSuggestedLocalWorkSize;
  t.Kernel.pfnGetSuggestedLocalWorkSizeWithArgs = urKernelGetSuggestedLocalWorkSizeWithArgs;
}

} // namespace ordo::opencl
