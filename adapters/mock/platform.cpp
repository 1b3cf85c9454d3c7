// SPDX-License-Identifier: Apache-2.0
// The mock's one platform, "Mock platform".
#include <cstring>

#include "mock.hpp"

namespace mock {

ur_platform_handle_t the_platform() {
  static ur_platform_handle_t_ platform;
  return &platform;
}

namespace {

ur_result_t UR_APICALL urPlatformGet(ur_adapter_handle_t hAdapter, uint32_t NumEntries,
                                     ur_platform_handle_t *phPlatforms, uint32_t *pNumPlatforms) {
  if (!hAdapter) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (hAdapter != the_adapter()) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  if (NumEntries == 0 && phPlatforms) return UR_RESULT_ERROR_INVALID_SIZE;
  if (!phPlatforms && !pNumPlatforms) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (phPlatforms) phPlatforms[0] = the_platform();
  if (pNumPlatforms) *pNumPlatforms = 1;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPlatformGetInfo(ur_platform_handle_t h, ur_platform_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_platform_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_PLATFORM;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_PLATFORM_INFO_NAME: return out.string("Mock platform");
  case UR_PLATFORM_INFO_VENDOR_NAME: return out.string("Ordo");
  case UR_PLATFORM_INFO_VERSION: return out.string("0.12");
  case UR_PLATFORM_INFO_EXTENSIONS: return out.string("");
  case UR_PLATFORM_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_PLATFORM_INFO_BACKEND: return out.value(UR_BACKEND_UNKNOWN);
  case UR_PLATFORM_INFO_ADAPTER: return out.value(the_adapter());
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urPlatformGetApiVersion(ur_platform_handle_t h, ur_api_version_t *pVersion) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_platform_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_PLATFORM;
  if (!pVersion) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *pVersion = UR_API_VERSION_CURRENT;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPlatformGetNativeHandle(ur_platform_handle_t h, ur_native_handle_t *phNative) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_platform_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_PLATFORM;
  if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNative = reinterpret_cast<ur_native_handle_t>(h);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPlatformCreateWithNativeHandle(ur_native_handle_t hNative, ur_adapter_handle_t hAdapter,
                                                        const ur_platform_native_properties_t *,
                                                        ur_platform_handle_t *phPlatform) {
  if (!hAdapter) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phPlatform) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // The mock's native handle is its platform's own address; nothing else is one.
  if (hNative != reinterpret_cast<ur_native_handle_t>(the_platform())) return UR_RESULT_ERROR_INVALID_PLATFORM;
  *phPlatform = the_platform();
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_platform(ur_dditable_t &t) {
  t.Platform.pfnGet = urPlatformGet;
  t.Platform.pfnGetInfo = urPlatformGetInfo;
  t.Platform.pfnGetApiVersion = urPlatformGetApiVersion;
  t.Platform.pfnGetNativeHandle = urPlatformGetNativeHandle;
  t.Platform.pfnCreateWithNativeHandle = urPlatformCreateWithNativeHandle;
}

} // namespace mock
