// SPDX-License-Identifier: Apache-2.0
// The adapter object and platform discovery: every OpenCL platform is a UR platform
// (urAdapter* and urPlatform*: ur_common/adapter.hpp).
#include <cstring>
#include <string>

#include "handle_entry_points.hpp"
#include "platform.hpp"
#include "tables.hpp"
#include "ur_common/adapter.hpp"

namespace ordo::opencl {

Logger &log() {
  static Logger *logger = new Logger("opencl"); // UR_LOG_OPENCL; lives past static teardown
  return *logger;
}

ur_adapter_handle_t_ &the_adapter() {
  static ur_adapter_handle_t_ *adapter = new ur_adapter_handle_t_();
  return *adapter;
}

namespace {

IntelUsmFunctions find_intel_usm(cl_platform_id p) {
  IntelUsmFunctions f;
#define ORDO_INTEL_USM_FIND(member, name)                                                                              \
  f.member = reinterpret_cast<name##_fn>(cl.clGetExtensionFunctionAddressForPlatform(p, #name));
  ORDO_INTEL_USM(ORDO_INTEL_USM_FIND)
#undef ORDO_INTEL_USM_FIND
  return f.complete() ? f : IntelUsmFunctions{};
}

std::unique_ptr<ur_platform_handle_t_> make_platform(cl_platform_id id) {
  auto p = std::make_unique<ur_platform_handle_t_>(id);
  cl_string(cl.clGetPlatformInfo, id, CL_PLATFORM_NAME, p->name);
  cl_string(cl.clGetPlatformInfo, id, CL_PLATFORM_VENDOR, p->vendor);
  cl_string(cl.clGetPlatformInfo, id, CL_PLATFORM_VERSION, p->version);
  cl_string(cl.clGetPlatformInfo, id, CL_PLATFORM_EXTENSIONS, p->extensions);
  cl_string(cl.clGetPlatformInfo, id, CL_PLATFORM_PROFILE, p->profile);
  p->intel_usm = find_intel_usm(id);

  cl_uint n = 0;
  cl_int err = cl.clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
  if (err != CL_SUCCESS && err != CL_DEVICE_NOT_FOUND) {
    ORDO_LOG(log(), warning, "platform \"%s\": clGetDeviceIDs failed (%d); no devices used", p->name.c_str(), err);
    n = 0;
  }
  std::vector<cl_device_id> ids(n);
  if (n && cl.clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) ids.clear();
  for (cl_device_id d : ids) {
    auto dev = std::make_unique<ur_device_handle_t_>(d, p.get());
    if (!probe_device(*dev)) {
      ORDO_LOG(log(), warning, "platform \"%s\": a device could not be queried; skipped", p->name.c_str());
      continue;
    }
    ORDO_LOG(log(), info, "device \"%s\": OpenCL %u.%u, USM through %s, IL \"%s\", SPIR %s", dev->name.c_str(),
             dev->cl_major, dev->cl_minor, dev->intel_usm ? "Intel USM" : "SVM", dev->il_version.c_str(),
             dev->accepts_spir() ? "yes" : "no");
    p->devices.push_back(std::move(dev));
  }
  return p;
}

// With no OpenCL loader or no platform there is none, and one log line says why.
std::vector<ur_platform_handle_t_ *> *discover() {
  auto *list = new std::vector<ur_platform_handle_t_ *>();
  std::string why;
  if (!load_opencl(why)) {
    ORDO_LOG(log(), info, "no OpenCL platforms: %s", why.c_str());
    return list;
  }
  cl_uint n = 0;
  cl_int err = cl.clGetPlatformIDs(0, nullptr, &n);
  if (err != CL_SUCCESS || n == 0) { // -1001 is CL_PLATFORM_NOT_FOUND_KHR: an ICD loader with no ICDs
    ORDO_LOG(log(), info, "no OpenCL platforms: clGetPlatformIDs returned %d with %u platforms", err, n);
    return list;
  }
  std::vector<cl_platform_id> ids(n);
  if (cl.clGetPlatformIDs(n, ids.data(), nullptr) != CL_SUCCESS) return list;
  for (cl_platform_id id : ids) list->push_back(make_platform(id).release());
  const bool polled = choose_waits(*list); // not inside ORDO_LOG: its arguments are skipped when it is off
  ORDO_LOG(log(), info, "%zu OpenCL platform(s); waits %s", list->size(),
           polled ? "poll the events' status" : "block in clWaitForEvents and clFinish");
  return list;
}

struct adapter_hooks {
  using Adapter = ur_adapter_handle_t_;
  using Platform = ur_platform_handle_t_;
  static Adapter *the_adapter() { return &opencl::the_adapter(); }
  static const std::vector<Platform *> &platforms() { return opencl::platforms(); }
  static Logger &logger() { return log(); }
  static ur_backend_t backend() { return UR_BACKEND_OPENCL; }
  static std::string name(const Platform *p) { return p->name; }
  static std::string vendor(const Platform *p) { return p->vendor; }
  static std::string version(const Platform *p) { return p->version; }
  static std::string extensions(const Platform *p) { return p->extensions; }
  static std::string profile(const Platform *p) { return p->profile; }
  static ur_result_t native_handle(Platform *p, ur_native_handle_t *out) { return opencl::native_handle(p, out); }
  static ur_result_t retain_adapter(Adapter *a, bool) { return a->retain(), UR_RESULT_SUCCESS; }
  // The adapter object is never destroyed; it refuses to count below zero.
  static ur_result_t release_adapter(Adapter *a) {
    bool last = false;
    return a->release_user(last) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE;
  }
  // Generic compiler options and their OpenCL spelling.
  static bool backend_option(const char *frontend, const char **platform_option) {
    auto is = [frontend](const char *option) { return std::strcmp(frontend, option) == 0; };
    if (is("-O0"))
      *platform_option = "-cl-opt-disable";
    else if (is("-foffload-fp32-prec-sqrt"))
      *platform_option = "-cl-fp32-correctly-rounded-divide-sqrt";
    else if (is("") || is("-O1") || is("-O2") || is("-O3") || is("-ftarget-compile-fast") ||
             is("-foffload-fp32-prec-div"))
      *platform_option = ""; // OpenCL's compiler needs nothing for these
    else
      return false;
    return true;
  }
};

ur_result_t UR_APICALL urPlatformCreateWithNativeHandle(ur_native_handle_t hNativePlatform,
                                                        ur_adapter_handle_t hAdapter,
                                                        const ur_platform_native_properties_t *,
                                                        ur_platform_handle_t *phPlatform) {
  ORDO_CHECK_HANDLE(hAdapter);
  for (ur_platform_handle_t p : platforms())
    if (reinterpret_cast<ur_native_handle_t>(p->cl) == hNativePlatform) return *phPlatform = p, UR_RESULT_SUCCESS;
  return UR_RESULT_ERROR_INVALID_PLATFORM;
}

} // namespace

const std::vector<ur_platform_handle_t_ *> &platforms() {
  static std::vector<ur_platform_handle_t_ *> *list = discover(); // lives past static teardown
  return *list;
}

void install_adapter_entry_points(ur_dditable_t &t) {
  ordo::ur_common::adapter_entry_points<adapter_hooks>::install(t); // urAdapter*, urPlatform*, the logger callback
  t.Platform.pfnCreateWithNativeHandle = urPlatformCreateWithNativeHandle;
}

} // namespace ordo::opencl
