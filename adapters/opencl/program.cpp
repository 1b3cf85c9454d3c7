// SPDX-License-Identifier: Apache-2.0
// urProgram*: programs from SPIR-V (where the device takes IL), from device binaries
// and SPIR bitcode (cl_khr_spir), compile/link, build logs.
#include "ordo/retired_handles.hpp"
#include "program.hpp"

#include <new>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "tables.hpp"

ur_program_handle_t_::~ur_program_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseProgram(cl);
  if (context) ordo::opencl::context_unhold(context);
}

namespace ordo::opencl {

void program_unhold(ur_program_handle_t p) {
  if (p->drop()) ordo::retire(p);
}

ur_result_t wrap_program(ur_context_handle_t c, cl_program native, ur_program_handle_t *out) {
  size_t n = 0;
  std::vector<cl_device_id> ids;
  if (cl.clGetProgramInfo(native, CL_PROGRAM_DEVICES, 0, nullptr, &n) == CL_SUCCESS && n) {
    ids.resize(n / sizeof(cl_device_id));
    cl.clGetProgramInfo(native, CL_PROGRAM_DEVICES, n, ids.data(), nullptr);
  }
  auto *p = new (std::nothrow) ur_program_handle_t_();
  if (!p) {
    cl.clReleaseProgram(native);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->cl = native;
  p->context = c;
  for (cl_device_id id : ids)
    for (ur_device_handle_t d : c->devices)
      if (d->cl == id) p->devices.push_back(d);
  if (p->devices.empty()) p->devices = c->devices;
  c->hold();
  *out = p;
  return UR_RESULT_SUCCESS;
}

namespace {

ur_result_t check_properties(const ur_program_properties_t *props) {
  if (!props) return UR_RESULT_SUCCESS;
  if (props->count > 0 && !props->pMetadatas) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (props->pMetadatas && props->count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

std::vector<cl_device_id> device_ids(const std::vector<ur_device_handle_t> &devices) {
  std::vector<cl_device_id> ids;
  for (ur_device_handle_t d : devices) ids.push_back(d->cl);
  return ids;
}

ur_result_t UR_APICALL urProgramCreateWithIL(ur_context_handle_t hContext, const void *pIL, size_t length,
                                             const ur_program_properties_t *pProperties,
                                             ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(pIL);
  ORDO_CHECK_PTR(phProgram);
  if (ur_result_t r = check_properties(pProperties)) return r;
  if (length == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  // IL needs a device that takes it (CL_DEVICE_IL_VERSION not empty).
  bool any_il = false;
  for (ur_device_handle_t d : hContext->devices) any_il = any_il || d->accepts_il();
  if (!any_il || !cl.clCreateProgramWithIL) return UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE;
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
  ORDO_CHECK_PTR(phDevices);
  ORDO_CHECK_PTR(pLengths);
  ORDO_CHECK_PTR(ppBinaries);
  ORDO_CHECK_PTR(phProgram);
  if (ur_result_t r = check_properties(pProperties)) return r;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<cl_device_id> ids;
  for (uint32_t i = 0; i < numDevices; ++i) {
    ORDO_CHECK_HANDLE(phDevices[i]);
    if (!hContext->has_device(phDevices[i])) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (!ppBinaries[i]) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pLengths[i] == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    ids.push_back(phDevices[i]->cl);
  }
  std::vector<cl_int> status(numDevices, CL_SUCCESS);
  cl_int err = CL_SUCCESS;
  cl_program native =
      cl.clCreateProgramWithBinary(hContext->cl, numDevices, ids.data(), pLengths, ppBinaries, status.data(), &err);
  if (!native) return err == CL_INVALID_BINARY ? UR_RESULT_ERROR_INVALID_NATIVE_BINARY : to_ur(err);
  ur_program_handle_t p = nullptr;
  if (ur_result_t r = wrap_program(hContext, native, &p)) return r;
  p->devices.assign(phDevices, phDevices + numDevices);
  *phProgram = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramBuild(ur_context_handle_t hContext, ur_program_handle_t hProgram,
                                      const char *pOptions) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_HANDLE(hProgram);
  if (hProgram->context != hContext) return UR_RESULT_ERROR_INVALID_CONTEXT;
  std::vector<cl_device_id> ids = device_ids(hProgram->devices);
  cl_int err =
      cl.clBuildProgram(hProgram->cl, static_cast<cl_uint>(ids.size()), ids.data(), pOptions, nullptr, nullptr);
  if (err == CL_INVALID_BINARY) return UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  return to_ur(err);
}

ur_result_t UR_APICALL urProgramCompile(ur_context_handle_t hContext, ur_program_handle_t hProgram,
                                        const char *pOptions) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_HANDLE(hProgram);
  if (hProgram->context != hContext) return UR_RESULT_ERROR_INVALID_CONTEXT;
  std::vector<cl_device_id> ids = device_ids(hProgram->devices);
  return to_ur(cl.clCompileProgram(hProgram->cl, static_cast<cl_uint>(ids.size()), ids.data(), pOptions, 0, nullptr,
                                   nullptr, nullptr, nullptr));
}

ur_result_t UR_APICALL urProgramLink(ur_context_handle_t hContext, uint32_t count,
                                     const ur_program_handle_t *phPrograms, const char *pOptions,
                                     ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(phPrograms);
  ORDO_CHECK_PTR(phProgram);
  *phProgram = nullptr;
  if (count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<cl_program> inputs;
  for (uint32_t i = 0; i < count; ++i) {
    ORDO_CHECK_HANDLE(phPrograms[i]);
    if (phPrograms[i]->context != hContext) return UR_RESULT_ERROR_INVALID_PROGRAM;
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

ur_result_t UR_APICALL urProgramRetain(ur_program_handle_t hProgram) {
  ORDO_CHECK_HANDLE(hProgram);
  if (!hProgram->retain_user()) return ordo::invalid_of(hProgram);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramRelease(ur_program_handle_t hProgram) {
  ORDO_CHECK_HANDLE(hProgram);
  bool last_ = false;
  if (!hProgram->release_user(last_)) return ordo::invalid_of(hProgram);
  if (last_) program_unhold(hProgram);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramGetInfo(ur_program_handle_t hProgram, ur_program_info_t propName, size_t propSize,
                                        void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hProgram);
  if (propName > UR_PROGRAM_INFO_KERNEL_NAMES) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
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
  case UR_PROGRAM_INFO_CONTEXT: return w.value(hProgram->context);
  case UR_PROGRAM_INFO_NUM_DEVICES: return w.value<uint32_t>(static_cast<uint32_t>(hProgram->devices.size()));
  case UR_PROGRAM_INFO_DEVICES: return w.array(hProgram->devices);
  case UR_PROGRAM_INFO_IL: return pass_through(CL_PROGRAM_IL);
  case UR_PROGRAM_INFO_BINARY_SIZES: return pass_through(CL_PROGRAM_BINARY_SIZES);
  case UR_PROGRAM_INFO_BINARIES: return pass_through(CL_PROGRAM_BINARIES);
  case UR_PROGRAM_INFO_NUM_KERNELS: {
    size_t n = 0;
    ORDO_CL_CHECK(cl.clGetProgramInfo(hProgram->cl, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr));
    return w.value<size_t>(n);
  }
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
  if (propName > UR_PROGRAM_BUILD_INFO_BINARY_TYPE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  bool known = false;
  for (ur_device_handle_t d : hProgram->devices) known = known || d == hDevice;
  if (!known) return UR_RESULT_ERROR_INVALID_DEVICE;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  auto text = [&](cl_program_build_info what) -> ur_result_t {
    size_t n = 0;
    ORDO_CL_CHECK(cl.clGetProgramBuildInfo(hProgram->cl, hDevice->cl, what, 0, nullptr, &n));
    std::string s(n, '\0');
    if (n) ORDO_CL_CHECK(cl.clGetProgramBuildInfo(hProgram->cl, hDevice->cl, what, n, &s[0], nullptr));
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return w.string(s);
  };
  switch (propName) {
  case UR_PROGRAM_BUILD_INFO_STATUS: {
    cl_build_status s = CL_BUILD_NONE;
    ORDO_CL_CHECK(cl.clGetProgramBuildInfo(hProgram->cl, hDevice->cl, CL_PROGRAM_BUILD_STATUS, sizeof s, &s, nullptr));
    switch (s) {
    case CL_BUILD_SUCCESS: return w.value(UR_PROGRAM_BUILD_STATUS_SUCCESS);
    case CL_BUILD_ERROR: return w.value(UR_PROGRAM_BUILD_STATUS_ERROR);
    case CL_BUILD_IN_PROGRESS: return w.value(UR_PROGRAM_BUILD_STATUS_IN_PROGRESS);
    default: return w.value(UR_PROGRAM_BUILD_STATUS_NONE);
    }
  }
  case UR_PROGRAM_BUILD_INFO_OPTIONS: return text(CL_PROGRAM_BUILD_OPTIONS);
  case UR_PROGRAM_BUILD_INFO_LOG: return text(CL_PROGRAM_BUILD_LOG);
  case UR_PROGRAM_BUILD_INFO_BINARY_TYPE: {
    cl_program_binary_type t = CL_PROGRAM_BINARY_TYPE_NONE;
    ORDO_CL_CHECK(cl.clGetProgramBuildInfo(hProgram->cl, hDevice->cl, CL_PROGRAM_BINARY_TYPE, sizeof t, &t, nullptr));
    switch (t) {
    case CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT: return w.value(UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
    case CL_PROGRAM_BINARY_TYPE_LIBRARY: return w.value(UR_PROGRAM_BINARY_TYPE_LIBRARY);
    case CL_PROGRAM_BINARY_TYPE_EXECUTABLE: return w.value(UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
    default: return w.value(UR_PROGRAM_BINARY_TYPE_NONE);
    }
  }
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urProgramGetNativeHandle(ur_program_handle_t hProgram, ur_native_handle_t *phNativeProgram) {
  ORDO_CHECK_HANDLE(hProgram);
  ORDO_CHECK_PTR(phNativeProgram);
  *phNativeProgram = reinterpret_cast<ur_native_handle_t>(hProgram->cl);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramCreateWithNativeHandle(ur_native_handle_t hNativeProgram, ur_context_handle_t hContext,
                                                       const ur_program_native_properties_t *pProperties,
                                                       ur_program_handle_t *phProgram) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(phProgram);
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
  t.Program.pfnBuild = urProgramBuild;
  t.Program.pfnCompile = urProgramCompile;
  t.Program.pfnLink = urProgramLink;
  t.Program.pfnRetain = urProgramRetain;
  t.Program.pfnRelease = urProgramRelease;
  t.Program.pfnGetInfo = urProgramGetInfo;
  t.Program.pfnGetBuildInfo = urProgramGetBuildInfo;
  t.Program.pfnGetNativeHandle = urProgramGetNativeHandle;
  t.Program.pfnCreateWithNativeHandle = urProgramCreateWithNativeHandle;
}

} // namespace ordo::opencl
