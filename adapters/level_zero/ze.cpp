// SPDX-License-Identifier: Apache-2.0
#include "ze.hpp"

#include <cstdio>

namespace ordo::level_zero {

Ze &ze() {
  // Never destroyed: closing the loader while static destructors may still release
  // Level Zero objects would crash at exit.
  static Ze *z = new Ze();
  return *z;
}

bool Ze::load(const char *library) {
  if (!lib_.open(library)) {
    why_ = std::string(library) + " not found (" + lib_.error() + "; Debian's libze1 provides it)";
    not_installed = true;
    return false;
  }
  std::string missing;
#define ORDO_ZE_RESOLVE(name)                                                                                          \
  if (!lib_.sym(#name, name)) missing += (missing.empty() ? "" : ", ") + std::string(#name);
  ORDO_ZE_FUNCTIONS(ORDO_ZE_RESOLVE)
#undef ORDO_ZE_RESOLVE
  if (!missing.empty()) {
    why_ = std::string(library) + " lacks " + missing;
    return false;
  }
  ze_result_t r = zeInit(0);
  if (r != ZE_RESULT_SUCCESS) {
    why_ = "zeInit returned " + error_text(r) +
           " (no Level Zero driver: an Intel GPU driver, or a test driver named in ZE_ENABLE_ALT_DRIVERS)";
    not_installed = r == ZE_RESULT_ERROR_UNINITIALIZED;
    return false;
  }
  return true;
}

std::string error_text(ze_result_t r) {
  const char *name = nullptr;
  switch (r) {
  case ZE_RESULT_SUCCESS: name = "ZE_RESULT_SUCCESS"; break;
  case ZE_RESULT_NOT_READY: name = "ZE_RESULT_NOT_READY"; break;
  case ZE_RESULT_ERROR_UNINITIALIZED: name = "ZE_RESULT_ERROR_UNINITIALIZED"; break;
  case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: name = "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"; break;
  case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: name = "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"; break;
  case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: name = "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"; break;
  case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE: name = "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"; break;
  case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: name = "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"; break;
  default: break;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(r));
  return name ? std::string(name) + " (" + buf + ")" : std::string(buf);
}

ur_result_t map_error(ze_result_t r) {
  switch (r) {
  case ZE_RESULT_SUCCESS: return UR_RESULT_SUCCESS;
  case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  case ZE_RESULT_ERROR_UNINITIALIZED: return UR_RESULT_ERROR_UNINITIALIZED;
  case ZE_RESULT_ERROR_DEVICE_LOST: return UR_RESULT_ERROR_DEVICE_LOST;
  case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  case ZE_RESULT_ERROR_UNSUPPORTED_SIZE: return UR_RESULT_ERROR_INVALID_USM_SIZE;
  case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: return UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  case ZE_RESULT_ERROR_INVALID_ARGUMENT: return UR_RESULT_ERROR_INVALID_ARGUMENT;
  case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  case ZE_RESULT_ERROR_INVALID_NULL_POINTER: return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  case ZE_RESULT_ERROR_INVALID_SIZE: return UR_RESULT_ERROR_INVALID_SIZE;
  case ZE_RESULT_ERROR_INVALID_ENUMERATION: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: return UR_RESULT_ERROR_INVALID_BINARY;
  case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE: return UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
  case ZE_RESULT_ERROR_INVALID_FUNCTION_NAME: return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX: return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE: return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION: return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
  case ZE_RESULT_NOT_READY: return UR_RESULT_ERROR_INVALID_OPERATION;
  default: return UR_RESULT_ERROR_UNKNOWN;
  }
}

} // namespace ordo::level_zero
