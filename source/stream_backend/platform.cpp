// The platform: one, holding every device the driver reports (none without a driver).
#include <cstring>

#include "backend.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::sb {

ur_result_t UR_APICALL urPlatformGet(ur_adapter_handle_t hAdapter, uint32_t NumEntries,
                                     ur_platform_handle_t *phPlatforms, uint32_t *pNumPlatforms) {
  ORDO_UNWRAP(Adapter, a, hAdapter);
  (void)a;
  if (NumEntries == 0 && phPlatforms) return UR_RESULT_ERROR_INVALID_SIZE;
  if (!pNumPlatforms && !phPlatforms) return UR_RESULT_ERROR_INVALID_VALUE;
  const auto &list = platforms();
  if (pNumPlatforms) *pNumPlatforms = static_cast<uint32_t>(list.size());
  for (uint32_t i = 0; phPlatforms && i < NumEntries && i < list.size(); ++i)
    phPlatforms[i] = reinterpret_cast<ur_platform_handle_t>(list[i]);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPlatformGetInfo(ur_platform_handle_t hPlatform, ur_platform_info_t propName,
                                         size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Platform, p, hPlatform);
  (void)p;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_PLATFORM_INFO_NAME: return out.string(info().platform_name);
  case UR_PLATFORM_INFO_VENDOR_NAME: return out.string(info().vendor_name);
  case UR_PLATFORM_INFO_VERSION:
    return out.string(std::string(info().display_name) + " " + info().runtime_version);
  case UR_PLATFORM_INFO_EXTENSIONS: return out.string("");
  case UR_PLATFORM_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_PLATFORM_INFO_BACKEND: return out.value(info().backend);
  case UR_PLATFORM_INFO_ADAPTER: return out.value(reinterpret_cast<ur_adapter_handle_t>(the_adapter()));
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urPlatformGetNativeHandle(ur_platform_handle_t hPlatform,
                                                 ur_native_handle_t *phNativePlatform) {
  ORDO_UNWRAP(Platform, p, hPlatform);
  (void)p;
  if (!phNativePlatform) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // Neither CUDA nor HIP has a platform object.
  return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ur_result_t UR_APICALL urPlatformGetApiVersion(ur_platform_handle_t hPlatform,
                                               ur_api_version_t *pVersion) {
  ORDO_UNWRAP(Platform, p, hPlatform);
  (void)p;
  if (!pVersion) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *pVersion = UR_API_VERSION_CURRENT;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPlatformGetBackendOption(ur_platform_handle_t hPlatform,
                                                  const char *pFrontendOption,
                                                  const char **ppPlatformOption) {
  ORDO_UNWRAP(Platform, p, hPlatform);
  (void)p;
  if (!pFrontendOption || !ppPlatformOption) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // The driver's JIT takes no options for these; an empty string means "nothing to add".
  if (std::strcmp(pFrontendOption, "") == 0 || std::strcmp(pFrontendOption, "-O0") == 0 ||
      std::strcmp(pFrontendOption, "-O1") == 0 || std::strcmp(pFrontendOption, "-O2") == 0 ||
      std::strcmp(pFrontendOption, "-O3") == 0) {
    *ppPlatformOption = "";
    return UR_RESULT_SUCCESS;
  }
  return UR_RESULT_ERROR_INVALID_VALUE;
}

} // namespace ordo::sb
