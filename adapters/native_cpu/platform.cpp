// urPlatform*: the one platform of this adapter.
#include <cstring>

#include "entry_points.hpp"
#include "ordo/info.hpp"
#include "platform.hpp"

namespace nc {

namespace {

constexpr const char *kPlatformName = "Ordo native CPU";
constexpr const char *kPlatformVendor = "Ordo";
constexpr const char *kPlatformVersion = "0.12.0";

ur_result_t UR_APICALL platformGet(ur_adapter_handle_t hAdapter, uint32_t NumEntries, ur_platform_handle_t *phPlatforms,
                                   uint32_t *pNumPlatforms) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (NumEntries == 0 && phPlatforms) return UR_RESULT_ERROR_INVALID_SIZE;
  if (!phPlatforms && !pNumPlatforms) return UR_RESULT_ERROR_INVALID_VALUE;
  if (phPlatforms) phPlatforms[0] = platform_handle();
  if (pNumPlatforms) *pNumPlatforms = 1;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL platformGetInfo(ur_platform_handle_t hPlatform, ur_platform_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  if (!is_platform(hPlatform)) return bad_handle(hPlatform, UR_RESULT_ERROR_INVALID_PLATFORM);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_PLATFORM_INFO_NAME: return out.string(kPlatformName);
  case UR_PLATFORM_INFO_VENDOR_NAME: return out.string(kPlatformVendor);
  case UR_PLATFORM_INFO_VERSION: return out.string(kPlatformVersion);
  case UR_PLATFORM_INFO_EXTENSIONS: return out.string("");
  case UR_PLATFORM_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_PLATFORM_INFO_BACKEND: return out.value(UR_BACKEND_NATIVE_CPU);
  case UR_PLATFORM_INFO_ADAPTER: return out.value(adapter_handle());
  case UR_PLATFORM_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

ur_result_t UR_APICALL platformGetApiVersion(ur_platform_handle_t hPlatform, ur_api_version_t *pVersion) {
  if (!is_platform(hPlatform)) return bad_handle(hPlatform, UR_RESULT_ERROR_INVALID_PLATFORM);
  if (!pVersion) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *pVersion = UR_API_VERSION_CURRENT;
  return UR_RESULT_SUCCESS;
}

// Front-end options that mean something to a compiler; kernels here are already
// machine code, so each maps to nothing.
ur_result_t UR_APICALL platformGetBackendOption(ur_platform_handle_t hPlatform, const char *pFrontendOption,
                                                const char **ppPlatformOption) {
  if (!is_platform(hPlatform)) return bad_handle(hPlatform, UR_RESULT_ERROR_INVALID_PLATFORM);
  if (!pFrontendOption || !ppPlatformOption) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  static const char *const known[] = {"-O0", "-O1", "-O2", "-O3", "-ftarget-compile-fast",
                                      "-foffload-fp32-prec-div", "-foffload-fp32-prec-sqrt"};
  for (const char *k : known) {
    if (std::strcmp(pFrontendOption, k) == 0) {
      *ppPlatformOption = "";
      return UR_RESULT_SUCCESS;
    }
  }
  return UR_RESULT_ERROR_INVALID_VALUE;
}

} // namespace

Platform::Platform() : ordo::object(kKind) {}

Platform &the_platform() {
  static Platform *p = new Platform;
  return *p;
}

void install_platform_entry_points(ur_dditable_t &t) {
  t.Platform.pfnGet = platformGet;
  t.Platform.pfnGetInfo = platformGetInfo;
  t.Platform.pfnGetApiVersion = platformGetApiVersion;
  t.Platform.pfnGetBackendOption = platformGetBackendOption;
}

} // namespace nc
