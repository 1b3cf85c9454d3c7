// urAdapter*: the one adapter object, platform discovery, last-error reporting.
#include <string>

#include "ordo/adapter_logging.hpp"
#include "platform.hpp"
#include "tables.hpp"

namespace ordo::ocl {

Logger &log() {
  static Logger *logger = new Logger("opencl"); // UR_LOG_OPENCL; lives past static teardown
  return *logger;
}

namespace {
thread_local std::string t_last_message;
thread_local int32_t t_last_code = 0;
} // namespace

void set_last_error(const std::string &message, int32_t code) {
  t_last_message = message;
  t_last_code = code;
}
const char *last_error_message() { return t_last_message.c_str(); }
int32_t last_error_code() { return t_last_code; }

ur_adapter_handle_t_ &the_adapter() {
  static ur_adapter_handle_t_ *adapter = new ur_adapter_handle_t_();
  return *adapter;
}

namespace {

IntelUsmFunctions find_intel_usm(cl_platform_id p) {
  IntelUsmFunctions f;
  auto get = [p](const char *name) { return cl.clGetExtensionFunctionAddressForPlatform(p, name); };
  f.host_alloc = reinterpret_cast<clHostMemAllocINTEL_fn>(get("clHostMemAllocINTEL"));
  f.device_alloc = reinterpret_cast<clDeviceMemAllocINTEL_fn>(get("clDeviceMemAllocINTEL"));
  f.shared_alloc = reinterpret_cast<clSharedMemAllocINTEL_fn>(get("clSharedMemAllocINTEL"));
  f.blocking_free = reinterpret_cast<clMemBlockingFreeINTEL_fn>(get("clMemBlockingFreeINTEL"));
  f.get_alloc_info = reinterpret_cast<clGetMemAllocInfoINTEL_fn>(get("clGetMemAllocInfoINTEL"));
  f.set_kernel_arg =
      reinterpret_cast<clSetKernelArgMemPointerINTEL_fn>(get("clSetKernelArgMemPointerINTEL"));
  f.memcpy = reinterpret_cast<clEnqueueMemcpyINTEL_fn>(get("clEnqueueMemcpyINTEL"));
  f.fill = reinterpret_cast<clEnqueueMemFillINTEL_fn>(get("clEnqueueMemFillINTEL"));
  if (!f.complete()) f = IntelUsmFunctions{};
  return f;
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
    ORDO_LOG(log(), warning, "platform \"%s\": clGetDeviceIDs failed (%d); no devices used",
             p->name.c_str(), err);
    n = 0;
  }
  std::vector<cl_device_id> ids(n);
  if (n && cl.clGetDeviceIDs(id, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) ids.clear();
  for (cl_device_id d : ids) {
    auto dev = std::make_unique<ur_device_handle_t_>(d, p.get());
    if (!probe_device(*dev)) {
      ORDO_LOG(log(), warning, "platform \"%s\": a device could not be queried; skipped",
               p->name.c_str());
      continue;
    }
    ORDO_LOG(log(), info, "device \"%s\": OpenCL %u.%u, USM through %s, IL \"%s\", SPIR %s",
             dev->name.c_str(), dev->cl_major, dev->cl_minor, dev->intel_usm ? "Intel USM" : "SVM",
             dev->il_version.c_str(), dev->accepts_spir() ? "yes" : "no");
    p->devices.push_back(std::move(dev));
  }
  return p;
}

} // namespace

void discover_platforms() {
  ur_adapter_handle_t_ &a = the_adapter();
  std::call_once(a.discovered, [&a] {
    std::string why;
    if (!load_opencl(why)) {
      ORDO_LOG(log(), info, "no OpenCL platforms: %s", why.c_str());
      return;
    }
    cl_uint n = 0;
    cl_int err = cl.clGetPlatformIDs(0, nullptr, &n);
    if (err != CL_SUCCESS || n == 0) {
      // -1001 is CL_PLATFORM_NOT_FOUND_KHR: an ICD loader with no ICDs installed.
      ORDO_LOG(log(), info, "no OpenCL platforms: clGetPlatformIDs returned %d with %u platforms",
               err, n);
      return;
    }
    std::vector<cl_platform_id> ids(n);
    if (cl.clGetPlatformIDs(n, ids.data(), nullptr) != CL_SUCCESS) return;
    for (cl_platform_id id : ids) a.platforms.push_back(make_platform(id));
    ORDO_LOG(log(), info, "%zu OpenCL platform(s)", a.platforms.size());
  });
}

namespace {

ur_result_t UR_APICALL AdapterGet(uint32_t NumEntries, ur_adapter_handle_t *phAdapters,
                                  uint32_t *pNumAdapters) {
  if (NumEntries == 0 && phAdapters) return UR_RESULT_ERROR_INVALID_SIZE;
  if (phAdapters) {
    ur_adapter_handle_t_ &a = the_adapter();
    a.retain();
    phAdapters[0] = &a;
  }
  if (pNumAdapters) *pNumAdapters = 1;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL AdapterRetain(ur_adapter_handle_t hAdapter) {
  ORDO_CHECK_HANDLE(hAdapter);
  hAdapter->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL AdapterRelease(ur_adapter_handle_t hAdapter) {
  ORDO_CHECK_HANDLE(hAdapter);
  // The adapter object is never destroyed; refuse to count below zero.
  uint32_t n = hAdapter->ref_count.load();
  do {
    if (n == 0) return UR_RESULT_ERROR_INVALID_VALUE; // released more often than taken
  } while (!hAdapter->ref_count.compare_exchange_weak(n, n - 1));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL AdapterGetLastError(ur_adapter_handle_t hAdapter, const char **ppMessage,
                                           int32_t *pError) {
  ORDO_CHECK_HANDLE(hAdapter);
  ORDO_CHECK_PTR(ppMessage);
  ORDO_CHECK_PTR(pError);
  *ppMessage = last_error_message();
  *pError = last_error_code();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL AdapterGetInfo(ur_adapter_handle_t hAdapter, ur_adapter_info_t propName,
                                      size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hAdapter);
  if (propName > UR_ADAPTER_INFO_VERSION) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_ADAPTER_INFO_BACKEND: return w.value(UR_BACKEND_OPENCL);
  case UR_ADAPTER_INFO_REFERENCE_COUNT: return w.value<uint32_t>(hAdapter->count());
  case UR_ADAPTER_INFO_VERSION: return w.value<uint32_t>(1);
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

} // namespace

void fill_adapter_table(ur_dditable_t &t) {
  t.Adapter.pfnGet = AdapterGet;
  t.Adapter.pfnRetain = AdapterRetain;
  t.Adapter.pfnRelease = AdapterRelease;
  t.Adapter.pfnGetLastError = AdapterGetLastError;
  t.Adapter.pfnGetInfo = AdapterGetInfo;
  // The runtime's urAdapterSetLoggerCallback: Ordo's log lines reach its callback too.
  ordo::adapter_logging how;
  how.logger = log;
  how.is_adapter = [](ur_adapter_handle_t h) { return h == &the_adapter(); };
  ordo::install_logger_entry_points(t, how);
}

} // namespace ordo::ocl
