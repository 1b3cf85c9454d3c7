// SPDX-License-Identifier: Apache-2.0
// urAdapter* and urPlatform* written once for an adapter with one adapter handle and
// a list of platforms found at the first urAdapterGet. The adapter says what differs:
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Adapter = ...;   // count(), retain(), release()
//     using Platform = ...;
//     static Adapter *the_adapter();
//     static const std::vector<Platform *> &platforms();  // discovery, once
//     static Logger &logger();
//     static ur_backend_t backend();
//     static std::string name(const Platform *), vendor(const Platform *), version(const Platform *);
//     static ur_result_t native_handle(Platform *, ur_native_handle_t *out);
//     // Optional: the adapter handle's count drives something (native CPU's worker
//     // pool). They replace the default counting in urAdapterGet (by_get), Retain and
//     // Release, and answer for a count of zero themselves.
//     static ur_result_t retain_adapter(Adapter *, bool by_get);
//     static ur_result_t release_adapter(Adapter *);
//     // Optional: the front-end options the adapter maps (to *ppPlatformOption), in
//     // place of the default list; false refuses with INVALID_VALUE.
//     static bool backend_option(const char *frontend, const char **platform_option);
//     // Optional: the platform's own extension and profile strings (OpenCL has them),
//     // in place of "" and "FULL_PROFILE".
//     static std::string extensions(const Platform *), profile(const Platform *);
//   };
#pragma once

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ordo/adapter_logging.hpp"
#include "ordo/info.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// Whether hooks H have release_adapter / backend_option (the optional hooks above).
template <class H, class = void> struct has_adapter_lifetime : std::false_type {};
template <class H>
struct has_adapter_lifetime<H, std::void_t<decltype(H::release_adapter(std::declval<typename H::Adapter *>()))>>
    : std::true_type {};
template <class H, class = void> struct has_backend_option : std::false_type {};
template <class H>
struct has_backend_option<H, std::void_t<decltype(H::backend_option("", std::declval<const char **>()))>>
    : std::true_type {};

template <class H, class = void> struct has_platform_strings : std::false_type {};
template <class H>
struct has_platform_strings<H, std::void_t<decltype(H::extensions(std::declval<const typename H::Platform *>())),
                                           decltype(H::profile(std::declval<const typename H::Platform *>()))>>
    : std::true_type {};

template <class H> struct adapter_entry_points {
  using Adapter = typename H::Adapter;
  using Platform = typename H::Platform;

  static ur_result_t UR_APICALL get(uint32_t NumEntries, ur_adapter_handle_t *phAdapters, uint32_t *pNumAdapters) {
    if (NumEntries == 0 && phAdapters) return UR_RESULT_ERROR_INVALID_SIZE;
    if (phAdapters) {
      // Discovery runs here so its log line appears once, at the first get.
      H::platforms();
      if constexpr (has_adapter_lifetime<H>::value) {
        if (ur_result_t r = H::retain_adapter(H::the_adapter(), true)) return r;
      } else {
        H::the_adapter()->retain();
      }
      phAdapters[0] = reinterpret_cast<ur_adapter_handle_t>(H::the_adapter());
    }
    if (pNumAdapters) *pNumAdapters = 1;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL release(ur_adapter_handle_t hAdapter) {
    Adapter *a = nullptr;
    if (ur_result_t r = unwrap(hAdapter, a)) return r;
    if constexpr (has_adapter_lifetime<H>::value) return H::release_adapter(a);
    // The adapter's state lives for the process: handles stay valid across gets.
    if (a->count() == 0) return UR_RESULT_ERROR_INVALID_ARGUMENT;
    a->release();
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL retain(ur_adapter_handle_t hAdapter) {
    Adapter *a = nullptr;
    if (ur_result_t r = unwrap(hAdapter, a)) return r;
    if constexpr (has_adapter_lifetime<H>::value) return H::retain_adapter(a, false);
    a->retain();
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_last_error(ur_adapter_handle_t hAdapter, const char **ppMessage, int32_t *pError) {
    Adapter *a = nullptr;
    if (ur_result_t r = unwrap(hAdapter, a)) return r;
    if (!ppMessage || !pError) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    // No entry point returns UR_RESULT_ERROR_ADAPTER_SPECIFIC, so there is never one.
    *ppMessage = "";
    *pError = 0;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_info(ur_adapter_handle_t hAdapter, ur_adapter_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
    Adapter *a = nullptr;
    if (ur_result_t r = unwrap(hAdapter, a)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    switch (propName) {
    case UR_ADAPTER_INFO_BACKEND: return out.value(H::backend());
    case UR_ADAPTER_INFO_REFERENCE_COUNT: return out.value(a->count());
    case UR_ADAPTER_INFO_VERSION: return out.value(uint32_t{1});
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  static ur_result_t UR_APICALL platform_get(ur_adapter_handle_t hAdapter, uint32_t NumEntries,
                                             ur_platform_handle_t *phPlatforms, uint32_t *pNumPlatforms) {
    Adapter *a = nullptr;
    if (ur_result_t r = unwrap(hAdapter, a)) return r;
    if (NumEntries == 0 && phPlatforms) return UR_RESULT_ERROR_INVALID_SIZE;
    if (!pNumPlatforms && !phPlatforms) return UR_RESULT_ERROR_INVALID_VALUE;
    const auto &list = H::platforms();
    if (pNumPlatforms) *pNumPlatforms = static_cast<uint32_t>(list.size());
    for (uint32_t i = 0; phPlatforms && i < NumEntries && i < list.size(); ++i)
      phPlatforms[i] = reinterpret_cast<ur_platform_handle_t>(list[i]);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL platform_info(ur_platform_handle_t hPlatform, ur_platform_info_t propName,
                                              size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
    Platform *p = nullptr;
    if (ur_result_t r = unwrap(hPlatform, p)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    switch (propName) {
    case UR_PLATFORM_INFO_NAME: return out.string(H::name(p));
    case UR_PLATFORM_INFO_VENDOR_NAME: return out.string(H::vendor(p));
    case UR_PLATFORM_INFO_VERSION: return out.string(H::version(p));
    case UR_PLATFORM_INFO_EXTENSIONS:
      if constexpr (has_platform_strings<H>::value) return out.string(H::extensions(p));
      return out.string("");
    case UR_PLATFORM_INFO_PROFILE:
      if constexpr (has_platform_strings<H>::value) return out.string(H::profile(p));
      return out.string("FULL_PROFILE");
    case UR_PLATFORM_INFO_BACKEND: return out.value(H::backend());
    case UR_PLATFORM_INFO_ADAPTER: return out.value(reinterpret_cast<ur_adapter_handle_t>(H::the_adapter()));
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  static ur_result_t UR_APICALL platform_native(ur_platform_handle_t hPlatform, ur_native_handle_t *phNative) {
    Platform *p = nullptr;
    if (ur_result_t r = unwrap(hPlatform, p)) return r;
    if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    return H::native_handle(p, phNative);
  }

  static ur_result_t UR_APICALL platform_api_version(ur_platform_handle_t hPlatform, ur_api_version_t *pVersion) {
    Platform *p = nullptr;
    if (ur_result_t r = unwrap(hPlatform, p)) return r;
    if (!pVersion) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    *pVersion = UR_API_VERSION_CURRENT;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL platform_backend_option(ur_platform_handle_t hPlatform, const char *pFrontendOption,
                                                        const char **ppPlatformOption) {
    Platform *p = nullptr;
    if (ur_result_t r = unwrap(hPlatform, p)) return r;
    if (!pFrontendOption || !ppPlatformOption) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if constexpr (has_backend_option<H>::value)
      return H::backend_option(pFrontendOption, ppPlatformOption) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE;
    // The driver's compiler takes no options for these; an empty string means "nothing to add".
    if (std::strcmp(pFrontendOption, "") == 0 || std::strcmp(pFrontendOption, "-O0") == 0 ||
        std::strcmp(pFrontendOption, "-O1") == 0 || std::strcmp(pFrontendOption, "-O2") == 0 ||
        std::strcmp(pFrontendOption, "-O3") == 0) {
      *ppPlatformOption = "";
      return UR_RESULT_SUCCESS;
    }
    return UR_RESULT_ERROR_INVALID_VALUE;
  }

  // The urAdapter* and urPlatform* slots, and the runtime's urAdapterSetLoggerCallback
  // (the adapter's log lines reach its callback).
  static void install(ur_dditable_t &t) {
    t.Adapter.pfnGet = get;
    t.Adapter.pfnRelease = release;
    t.Adapter.pfnRetain = retain;
    t.Adapter.pfnGetLastError = get_last_error;
    t.Adapter.pfnGetInfo = get_info;
    ordo::adapter_logging how;
    how.logger = H::logger;
    how.is_adapter = [](ur_adapter_handle_t h) { return h == reinterpret_cast<ur_adapter_handle_t>(H::the_adapter()); };
    ordo::install_logger_entry_points(t, how);
    t.Platform.pfnGet = platform_get;
    t.Platform.pfnGetInfo = platform_info;
    t.Platform.pfnGetNativeHandle = platform_native;
    t.Platform.pfnGetApiVersion = platform_api_version;
    t.Platform.pfnGetBackendOption = platform_backend_option;
  }
};

} // namespace ordo::ur_common
