// SPDX-License-Identifier: Apache-2.0
#include "driver.hpp"

#include <cstdio>

namespace ordo::cuda {

Driver &drv() {
  // Never destroyed: closing libcuda while other static destructors may still
  // release driver objects would crash at exit.
  static Driver *driver = new Driver();
  return *driver;
}

namespace {
// Names of the few codes we may have to print before cuGetErrorName is resolved.
const char *early_name(CUresult r) {
  switch (r) {
  case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_OPERATING_SYSTEM: return "CUDA_ERROR_OPERATING_SYSTEM";
  default: return "CUDA error";
  }
}
} // namespace

bool Driver::load(const char *library) {
  if (!lib_.open(library)) {
    why_ = std::string(library) + " not found (" + lib_.error() + ")";
    not_installed = true;
    return false;
  }
  if (!lib_.sym("cuInit", cuInit) || !lib_.sym("cuDriverGetVersion", cuDriverGetVersion) ||
      !lib_.sym("cuGetProcAddress_v2", cuGetProcAddress)) {
    why_ = std::string(library) + " lacks cuInit/cuDriverGetVersion/cuGetProcAddress_v2";
    return false;
  }
  CUresult r = cuInit(0);
  if (r != CUDA_SUCCESS) {
    why_ = "cuInit returned " + std::to_string(static_cast<int>(r)) + " (" + early_name(r) + ")";
    not_installed = r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY;
    return false;
  }
  if (cuDriverGetVersion(&driver_version) != CUDA_SUCCESS) driver_version = 0;
  if (driver_version < CUDA_VERSION) {
    // cuGetProcAddress at an older version would hand back older prototypes than
    // the ones this build calls.
    why_ = "the driver supports CUDA " + std::to_string(driver_version / 1000) + "." +
           std::to_string(driver_version % 1000 / 10) + ", the adapter needs " + std::to_string(CUDA_VERSION / 1000) +
           "." + std::to_string(CUDA_VERSION % 1000 / 10);
    return false;
  }

  std::string missing;
  auto resolve = [&](const char *name, void **slot) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rr = cuGetProcAddress(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (rr != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !*slot) {
      *slot = nullptr;
      if (!missing.empty()) missing += ", ";
      missing += name;
    }
  };
#define ORDO_CUDA_RESOLVE(name) resolve(#name, reinterpret_cast<void **>(&name));
  ORDO_CUDA_DRIVER_FUNCTIONS(ORDO_CUDA_RESOLVE)
#undef ORDO_CUDA_RESOLVE
  if (!missing.empty()) {
    why_ = "the driver lacks " + missing;
    return false;
  }
  return true;
}

std::string error_text(CUresult r) {
  const char *name = nullptr;
  if (drv().cuGetErrorName) drv().cuGetErrorName(r, &name);
  return std::string(name ? name : early_name(r)) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

ordo::stream_backend::status status_of(CUresult r) {
  using ordo::stream_backend::err;
  err kind = err::other;
  switch (r) {
  case CUDA_SUCCESS: kind = err::none; break;
  case CUDA_ERROR_NOT_READY: kind = err::not_ready; break;
  case CUDA_ERROR_NOT_FOUND: kind = err::not_found; break;
  case CUDA_ERROR_OUT_OF_MEMORY: kind = err::out_of_memory; break;
  case CUDA_ERROR_INVALID_VALUE: kind = err::invalid_value; break;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED: kind = err::not_initialized; break;
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE: kind = err::invalid_device; break;
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED: kind = err::invalid_context; break;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU: kind = err::invalid_image; break;
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_INVALID_SOURCE: kind = err::build_failure; break;
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND: kind = err::no_compiler; break;
  case CUDA_ERROR_INVALID_HANDLE: kind = err::invalid_handle; break;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: kind = err::out_of_resources; break;
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS: kind = err::device_lost; break;
  case CUDA_ERROR_NOT_SUPPORTED: kind = err::not_supported; break;
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: kind = err::already_registered; break;
  default: break;
  }
  return ordo::stream_backend::status{kind, static_cast<int>(r)};
}

} // namespace ordo::cuda
