// SPDX-License-Identifier: Apache-2.0
// urProgram*: programs from SPIR-V (where the device takes IL), from device binaries
// and SPIR bitcode (cl_khr_spir), compile/link, build logs.
#include "program.hpp"

#include <algorithm>
#include <new>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "handle_entry_points.hpp"
#include "tables.hpp"

ur_program_handle_t_::~ur_program_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseProgram(cl);
  if (ctx) ordo::opencl::context_unhold(ctx);
}

namespace ordo::opencl {

ur_result_t wrap_program(ur_context_handle_t c, cl_program native, ur_program_handle_t *out) {
  std::vector<cl_device_id> ids;
  cl_array(cl.clGetProgramInfo, native, CL_PROGRAM_DEVICES, ids);
  auto *p = new (std::nothrow) ur_program_handle_t_();
  if (!p) {
    cl.clReleaseProgram(native);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->cl = native;
  p->ctx = c;
  for (cl_device_id id : ids)
    for (ur_device_handle_t d : c->devices)
      if (d->cl == id) p->devices.push_back(d);
  if (p->devices.empty()) p->devices = c->devices;
  c->hold();
  *out = p;
  return UR_RESULT_SUCCESS;
}

namespace {

std::vector<cl_device_id> device_ids(const std::vector<ur_device_handle_t> &devices) {
  std::vector<cl_device_id> ids;
  for (ur_device_handle_t d : devices) ids.push_back(d->cl);
  return ids;
}

ur_result_t UR_APICALL urProgramCreateWithIL(ur_context_handle_t hContext, const void *pIL, size_t length,
                                             const ur_program_properties_t *pProperties,
                                             ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  // IL needs a device that takes it (CL_DEVICE_IL_VERSION not empty).
  const auto &devices = hContext->devices;
  if (std::none_of(devices.begin(), devices.end(), [](auto d) { return d->accepts_il(); }) || !cl.clCreateProgramWithIL)
    return UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE;
  cl_int err = CL_SUCCESS;
  cl_program native = cl.clCreateProgramWithIL(hContext->cl, pIL, length, &err);
  if (!native) return err == CL_INVALID_VALUE ? UR_RESULT_ERROR_INVALID_BINARY : to_ur(err);
  return wrap_program(hContext, native, phProgram);
}

// Device binaries, or SPIR bitcode on devices with cl_khr_spir.
ur_result_t UR_APICALL urProgramCreateWithBinary(ur_context_handle_t hContext, uint32_t numDevices,
                                                 ur_device_handle_t *phDevices, size_t *pLengths,
                                                 const uint8_t **ppBinaries, const ur_program_properties_t *pProperties,
                                                 ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  for (uint32_t i = 0; i < numDevices; ++i) {
    ORDO_CHECK_HANDLE(phDevices[i]);
    if (!hContext->has_device(phDevices[i])) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (!ppBinaries[i]) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pLengths[i] == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  }
  const std::vector<ur_device_handle_t> devices(phDevices, phDevices + numDevices);
  std::vector<cl_device_id> ids = device_ids(devices);
  cl_int err = CL_SUCCESS;
  cl_program native =
      cl.clCreateProgramWithBinary(hContext->cl, numDevices, ids.data(), pLengths, ppBinaries, nullptr, &err);
  if (!native) return err == CL_INVALID_BINARY ? UR_RESULT_ERROR_INVALID_NATIVE_BINARY : to_ur(err);
  if (ur_result_t r = wrap_program(hContext, native, phProgram)) return r;
  (*phProgram)->devices = devices;
  return UR_RESULT_SUCCESS;
}

// urProgramBuild and (Compile true) urProgramCompile, for the program's devices.
template <bool Compile>
ur_result_t UR_APICALL build(ur_context_handle_t hContext, ur_program_handle_t hProgram, const char *pOptions) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_HANDLE(hProgram);
  if (hProgram->ctx != hContext) return UR_RESULT_ERROR_INVALID_CONTEXT;
  std::vector<cl_device_id> ids = device_ids(hProgram->devices);
  const cl_uint n = static_cast<cl_uint>(ids.size());
  if (Compile)
    return to_ur(cl.clCompileProgram(hProgram->cl, n, ids.data(), pOptions, 0, nullptr, nullptr, nullptr, nullptr));
  cl_int err = cl.clBuildProgram(hProgram->cl, n, ids.data(), pOptions, nullptr, nullptr);
  return err == CL_INVALID_BINARY ? UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE : to_ur(err);
}

ur_result_t UR_APICALL urProgramLink(ur_context_handle_t hContext, uint32_t count,
                                     const ur_program_handle_t *phPrograms, const char *pOptions,
                                     ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  *phProgram = nullptr;
  std::vector<cl_program> inputs;
  for (uint32_t i = 0; i < count; ++i) {
    ORDO_CHECK_HANDLE(phPrograms[i]);
    if (phPrograms[i]->ctx != hContext) return UR_RESULT_ERROR_INVALID_PROGRAM;
    inputs.push_back(phPrograms[i]->cl);
  }
  std::vector<cl_device_id> ids = device_ids(hContext->devices);
  cl_int err = CL_SUCCESS;
  cl_program native = cl.clLinkProgram(hContext->cl, static_cast<cl_uint>(ids.size()), ids.data(), pOptions, count,
                                       inputs.data(), nullptr, nullptr, &err);
  // A failed link may still give a program: hand it out for its build log.
  if (native) {
    if (ur_result_t r = wrap_program(hContext, native, phProgram)) return r;
  }
  if (err == CL_SUCCESS && !native) return UR_RESULT_ERROR_PROGRAM_LINK_FAILURE;
  if (err == CL_INVALID_BINARY || err == CL_INVALID_OPERATION) return UR_RESULT_ERROR_PROGRAM_LINK_FAILURE;
  return to_ur(err);
}

ur_result_t UR_APICALL urProgramGetInfo(ur_program_handle_t hProgram, ur_program_info_t propName, size_t propSize,
                                        void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hProgram);
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  // The answers OpenCL gives as they are, with UR's size rule on top.
  auto pass_through = [&](cl_program_info what) -> ur_result_t {
    size_t n = 0;
    ORDO_CL_CHECK(cl.clGetProgramInfo(hProgram->cl, what, 0, nullptr, &n));
    if (pPropSizeRet) *pPropSizeRet = n;
    if (!pPropValue) return UR_RESULT_SUCCESS;
    if (propSize < n) return UR_RESULT_ERROR_INVALID_SIZE;
    ORDO_CL_CHECK(cl.clGetProgramInfo(hProgram->cl, what, propSize, pPropValue, nullptr));
    return UR_RESULT_SUCCESS;
  };
  switch (propName) {
  case UR_PROGRAM_INFO_REFERENCE_COUNT: return w.value<uint32_t>(hProgram->count());
  case UR_PROGRAM_INFO_CONTEXT: return w.value(hProgram->ctx);
  case UR_PROGRAM_INFO_NUM_DEVICES: return w.value<uint32_t>(static_cast<uint32_t>(hProgram->devices.size()));
  case UR_PROGRAM_INFO_DEVICES: return w.array(hProgram->devices);
  case UR_PROGRAM_INFO_IL: return pass_through(CL_PROGRAM_IL);
  case UR_PROGRAM_INFO_BINARY_SIZES: return pass_through(CL_PROGRAM_BINARY_SIZES);
  case UR_PROGRAM_INFO_BINARIES: return pass_through(CL_PROGRAM_BINARIES);
  case UR_PROGRAM_INFO_NUM_KERNELS: return pass_through(CL_PROGRAM_NUM_KERNELS); // size_t in both
  case UR_PROGRAM_INFO_KERNEL_NAMES: {
    std::string names;
    ORDO_CL_CHECK(cl_string(cl.clGetProgramInfo, hProgram->cl, CL_PROGRAM_KERNEL_NAMES, names));
    return w.string(names);
  }
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urProgramGetBuildInfo(ur_program_handle_t hProgram, ur_device_handle_t hDevice,
                                             ur_program_build_info_t propName, size_t propSize, void *pPropValue,
                                             size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hProgram);
  ORDO_CHECK_HANDLE(hDevice);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  const auto &devices = hProgram->devices;
  if (std::find(devices.begin(), devices.end(), hDevice) == devices.end()) return UR_RESULT_ERROR_INVALID_DEVICE;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  auto query = [&](cl_program p, cl_program_build_info what, size_t n, void *out, size_t *n_ret) {
    return cl.clGetProgramBuildInfo(p, hDevice->cl, what, n, out, n_ret);
  };
  std::string text;
  cl_int code = 0; // a cl_build_status or cl_program_binary_type: 32 bits either way
  switch (propName) {
  case UR_PROGRAM_BUILD_INFO_OPTIONS:
  case UR_PROGRAM_BUILD_INFO_LOG:
    ORDO_CL_CHECK(cl_string(query, hProgram->cl,
                            propName == UR_PROGRAM_BUILD_INFO_LOG ? CL_PROGRAM_BUILD_LOG : CL_PROGRAM_BUILD_OPTIONS,
                            text));
    return w.string(text);
  case UR_PROGRAM_BUILD_INFO_STATUS:
    ORDO_CL_CHECK(query(hProgram->cl, CL_PROGRAM_BUILD_STATUS, sizeof code, &code, nullptr));
    switch (code) {
    case CL_BUILD_SUCCESS: return w.value(UR_PROGRAM_BUILD_STATUS_SUCCESS);
    case CL_BUILD_ERROR: return w.value(UR_PROGRAM_BUILD_STATUS_ERROR);
    case CL_BUILD_IN_PROGRESS: return w.value(UR_PROGRAM_BUILD_STATUS_IN_PROGRESS);
    default: return w.value(UR_PROGRAM_BUILD_STATUS_NONE);
    }
  case UR_PROGRAM_BUILD_INFO_BINARY_TYPE:
    ORDO_CL_CHECK(query(hProgram->cl, CL_PROGRAM_BINARY_TYPE, sizeof code, &code, nullptr));
    switch (code) {
    case CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT: return w.value(UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    case CL_PROGRAM_BINARY_TYPE_LIBRARY: return w.value(UR_PROGRAM_BINARY_TYPE_LIBRARY);
    case CL_PROGRAM_BINARY_TYPE_EXECUTABLE: return w.value(UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
    default: return w.value(UR_PROGRAM_BINARY_TYPE_NONE);
    }
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urProgramCreateWithNativeHandle(ur_native_handle_t hNativeProgram, ur_context_handle_t hContext,
                                                       const ur_program_native_properties_t *pProperties,
                                                       ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  cl_program native = reinterpret_cast<cl_program>(hNativeProgram);
  if (!native) return UR_RESULT_ERROR_INVALID_PROGRAM;
  cl_context owner = nullptr;
  ORDO_CL_CHECK(cl.clGetProgramInfo(native, CL_PROGRAM_CONTEXT, sizeof owner, &owner, nullptr));
  if (owner != hContext->cl) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainProgram(native);
  return wrap_program(hContext, native, phProgram);
}

} // namespace

void install_program_entry_points(ur_dditable_t &t) {
  t.Program.pfnCreateWithIL = urProgramCreateWithIL;
  t.Program.pfnCreateWithBinary = urProgramCreateWithBinary;
  t.Program.pfnBuild = build<false>;
  t.Program.pfnCompile = build<true>;
  t.Program.pfnLink = urProgramLink;
  t.Program.pfnRetain = ur_common::retain_user_handle<ur_program_handle_t_>;
  t.Program.pfnRelease = ur_common::release_user_handle<ur_program_handle_t_>;
  t.Program.pfnGetInfo = urProgramGetInfo;
  t.Program.pfnGetBuildInfo = urProgramGetBuildInfo;
  t.Program.pfnGetNativeHandle = native_handle<ur_program_handle_t_>;
  t.Program.pfnCreateWithNativeHandle = urProgramCreateWithNativeHandle;
}

} // namespace ordo::opencl
