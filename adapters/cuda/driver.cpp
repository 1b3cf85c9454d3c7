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
    return false;
  }
  if (cuDriverGetVersion(&driver_version) != CUDA_SUCCESS) driver_version = 0;
  if (driver_version < CUDA_VERSION) {
    // cuGetProcAddress at an older version would hand back older prototypes than
    // the ones this build calls.
    why_ = "the driver supports CUDA " + std::to_string(driver_version / 1000) + "." +
           std::to_string(driver_version % 1000 / 10) + ", the adapter needs " +
           std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
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

ur_result_t map_error(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS: return UR_RESULT_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY: return UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  case CUDA_ERROR_INVALID_VALUE: return UR_RESULT_ERROR_INVALID_VALUE;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED: return UR_RESULT_ERROR_UNINITIALIZED;
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE: return UR_RESULT_ERROR_INVALID_DEVICE;
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED: return UR_RESULT_ERROR_INVALID_CONTEXT;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU: return UR_RESULT_ERROR_INVALID_BINARY;
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_INVALID_SOURCE: return UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND: return UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE;
  case CUDA_ERROR_NOT_FOUND: return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  case CUDA_ERROR_INVALID_HANDLE: return UR_RESULT_ERROR_INVALID_ARGUMENT;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS: return UR_RESULT_ERROR_DEVICE_LOST;
  case CUDA_ERROR_NOT_SUPPORTED: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  case CUDA_ERROR_NOT_READY: return UR_RESULT_ERROR_INVALID_OPERATION;
  default: return UR_RESULT_ERROR_UNKNOWN;
  }
}

} // namespace ordo::cuda
