// SPDX-License-Identifier: Apache-2.0
#include "driver.hpp"
#include "ordo/secure_env.hpp"

#include <cstdlib>

namespace ordo::hip {

Driver &drv() {
  // Never destroyed: unloading the runtime while exit-time destructors may still
  // release its objects would crash.
  static Driver *driver = new Driver();
  return *driver;
}

bool Driver::load() {
  const char *forced = ordo::secure_env("ORDO_HIP_LIBRARY");
  const char *candidates[] = {forced && *forced ? forced : "libamdhip64.so.5", "libamdhip64.so"};
  bool opened = false;
  for (const char *name : candidates) {
    if (lib_.open(name)) {
      library = name;
      opened = true;
      break;
    }
    if (forced && *forced) break; // only what was asked for
  }
  if (!opened) {
    why_ = std::string(candidates[0]) + " not found (" + lib_.error() + ")";
    not_installed = true;
    return false;
  }
  std::string missing;
#define ORDO_HIP_RESOLVE(name, ret, params)                                                                            \
  if (!lib_.sym(#name, name)) missing += (missing.empty() ? "" : ", ") + std::string(#name);
  ORDO_HIP_FUNCTIONS(ORDO_HIP_RESOLVE)
#undef ORDO_HIP_RESOLVE
  if (!missing.empty()) {
    why_ = library + " lacks " + missing;
    return false;
  }
  if (hipError_t r = hipInit(0)) {
    why_ = "hipInit returned " + error_text(r);
    not_installed = r == hipErrorNoDevice || r == hipErrorInvalidDevice; // what hipInit says without an AMD GPU
    return false;
  }
  if (hipRuntimeGetVersion(&runtime_version) != hipSuccess) runtime_version = 0;
  return true;
}

std::string error_text(hipError_t r) {
  const char *name = drv().hipGetErrorName ? drv().hipGetErrorName(r) : nullptr;
  return std::string(name ? name : "hipError") + " (" + std::to_string(r) + ")";
}

ordo::stream_backend::status status_of(hipError_t r) {
  using ordo::stream_backend::err;
  err kind = err::other;
  switch (r) {
  case hipSuccess: kind = err::none; break;
  case hipErrorNotReady: kind = err::not_ready; break;
  case hipErrorNotFound: kind = err::not_found; break;
  case hipErrorOutOfMemory: kind = err::out_of_memory; break;
  case hipErrorInvalidValue: kind = err::invalid_value; break;
  case hipErrorNotInitialized:
  case hipErrorDeinitialized: kind = err::not_initialized; break;
  case hipErrorNoDevice:
  case hipErrorInvalidDevice: kind = err::invalid_device; break;
  case hipErrorInvalidContext:
  case hipErrorContextIsDestroyed: kind = err::invalid_context; break;
  case hipErrorInvalidImage:
  case hipErrorNoBinaryForGpu:
  case hipErrorSharedObjectInitFailed: kind = err::invalid_image; break;
  case hipErrorInvalidKernelFile:
  case hipErrorInvalidSource: kind = err::build_failure; break;
  case hipErrorInvalidHandle:
  case hipErrorInvalidDeviceFunction: kind = err::invalid_handle; break;
  case hipErrorLaunchOutOfResources: kind = err::out_of_resources; break;
  case hipErrorIllegalAddress:
  case hipErrorLaunchFailure: kind = err::device_lost; break;
  case hipErrorNotSupported: kind = err::not_supported; break;
  case hipErrorHostMemoryAlreadyRegistered: kind = err::already_registered; break;
  default: break;
  }
  return ordo::stream_backend::status{kind, r};
}

} // namespace ordo::hip
