// urPlatform*: every OpenCL platform is a UR platform.
#include <cstring>

#include "platform.hpp"
#include "tables.hpp"

namespace ordo::ocl {
namespace {

ur_result_t UR_APICALL PlatformGet(ur_adapter_handle_t hAdapter, uint32_t NumEntries,
                                   ur_platform_handle_t *phPlatforms, uint32_t *pNumPlatforms) {
  ORDO_CHECK_HANDLE(hAdapter);
  if (NumEntries == 0 && phPlatforms) return UR_RESULT_ERROR_INVALID_SIZE;
  if (!phPlatforms && !pNumPlatforms) return UR_RESULT_ERROR_INVALID_VALUE;
  discover_platforms();
  auto &all = the_adapter().platforms;
  if (phPlatforms)
    for (uint32_t i = 0; i < NumEntries && i < all.size(); ++i) phPlatforms[i] = all[i].get();
  if (pNumPlatforms) *pNumPlatforms = static_cast<uint32_t>(all.size());
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL PlatformGetInfo(ur_platform_handle_t hPlatform, ur_platform_info_t propName,
                                       size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hPlatform);
  if (propName > UR_PLATFORM_INFO_ADAPTER || propName < UR_PLATFORM_INFO_NAME)
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_PLATFORM_INFO_NAME: return w.string(hPlatform->name);
  case UR_PLATFORM_INFO_VENDOR_NAME: return w.string(hPlatform->vendor);
  case UR_PLATFORM_INFO_VERSION: return w.string(hPlatform->version);
  case UR_PLATFORM_INFO_EXTENSIONS: return w.string(hPlatform->extensions);
  case UR_PLATFORM_INFO_PROFILE: return w.string(hPlatform->profile);
  case UR_PLATFORM_INFO_BACKEND: return w.value(UR_BACKEND_OPENCL);
  case UR_PLATFORM_INFO_ADAPTER: return w.value<ur_adapter_handle_t>(&the_adapter());
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL PlatformGetApiVersion(ur_platform_handle_t hPlatform, ur_api_version_t *pVersion) {
  ORDO_CHECK_HANDLE(hPlatform);
  ORDO_CHECK_PTR(pVersion);
  *pVersion = UR_API_VERSION_CURRENT;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL PlatformGetNativeHandle(ur_platform_handle_t hPlatform,
                                               ur_native_handle_t *phNativePlatform) {
  ORDO_CHECK_HANDLE(hPlatform);
  ORDO_CHECK_PTR(phNativePlatform);
  *phNativePlatform = reinterpret_cast<ur_native_handle_t>(hPlatform->cl);
  return UR_RESULT_SUCCESS;
}

// A native cl_platform_id maps back to the platform handle that wraps it.
ur_result_t UR_APICALL PlatformCreateWithNativeHandle(ur_native_handle_t hNativePlatform,
                                                      ur_adapter_handle_t hAdapter,
                                                      const ur_platform_native_properties_t *,
                                                      ur_platform_handle_t *phPlatform) {
  ORDO_CHECK_HANDLE(hAdapter);
  ORDO_CHECK_PTR(phPlatform);
  discover_platforms();
  for (auto &p : the_adapter().platforms)
    if (reinterpret_cast<ur_native_handle_t>(p->cl) == hNativePlatform) {
      *phPlatform = p.get();
      return UR_RESULT_SUCCESS;
    }
  return UR_RESULT_ERROR_INVALID_PLATFORM;
}

// Generic compiler options and their OpenCL spelling.
ur_result_t UR_APICALL PlatformGetBackendOption(ur_platform_handle_t hPlatform,
                                                const char *pFrontendOption,
                                                const char **ppPlatformOption) {
  ORDO_CHECK_HANDLE(hPlatform);
  ORDO_CHECK_PTR(pFrontendOption);
  ORDO_CHECK_PTR(ppPlatformOption);
  static const struct {
    const char *frontend, *opencl;
  } options[] = {
      {"-O0", "-cl-opt-disable"},
      {"-O1", ""},
      {"-O2", ""},
      {"-O3", ""},
      {"-ftarget-compile-fast", ""},
      {"-foffload-fp32-prec-div", ""},
      {"-foffload-fp32-prec-sqrt", "-cl-fp32-correctly-rounded-divide-sqrt"},
  };
  for (const auto &o : options)
    if (std::strcmp(pFrontendOption, o.frontend) == 0) {
      *ppPlatformOption = o.opencl;
      return UR_RESULT_SUCCESS;
    }
  if (pFrontendOption[0] == '\0') {
    *ppPlatformOption = "";
    return UR_RESULT_SUCCESS;
  }
  return UR_RESULT_ERROR_INVALID_VALUE;
}

} // namespace

void fill_platform_table(ur_dditable_t &t) {
  t.Platform.pfnGet = PlatformGet;
  t.Platform.pfnGetInfo = PlatformGetInfo;
  t.Platform.pfnGetApiVersion = PlatformGetApiVersion;
  t.Platform.pfnGetNativeHandle = PlatformGetNativeHandle;
  t.Platform.pfnCreateWithNativeHandle = PlatformCreateWithNativeHandle;
  t.Platform.pfnGetBackendOption = PlatformGetBackendOption;
}

} // namespace ordo::ocl
