// SPDX-License-Identifier: Apache-2.0
#include "cl_api.hpp"

#include <cstdlib>
#include <mutex>

#include "ordo/dynlib.hpp"
#include "ordo/secure_env.hpp"

namespace ordo::opencl {

ClApi cl;

namespace {

// Kept open for the life of the process: handles hold function pointers into it.
DynLib &opencl_library() {
  static DynLib *lib = new DynLib();
  return *lib;
}

bool load_once(std::string &why) {
  // ORDO_OPENCL_LIBRARY points the adapter at another ICD loader (or at nothing,
  // to test the "no OpenCL" path).
  const char *name = ordo::secure_env("ORDO_OPENCL_LIBRARY");
  if (!name || !*name) name = "libOpenCL.so.1";
  DynLib &lib = opencl_library();
  if (!lib.open(name)) {
    why = "cannot load " + std::string(name) + ": " + lib.error();
    return false;
  }
  ClApi api;
#define ORDO_CL_LOAD_REQUIRED(fn)                                                                                      \
  if (!lib.sym(#fn, api.fn)) {                                                                                         \
    why = std::string(name) + " lacks " #fn;                                                                           \
    return false;                                                                                                      \
  }
  ORDO_CL_REQUIRED(ORDO_CL_LOAD_REQUIRED)
#undef ORDO_CL_LOAD_REQUIRED
#define ORDO_CL_LOAD_OPTIONAL(fn) lib.sym(#fn, api.fn);
  ORDO_CL_OPTIONAL(ORDO_CL_LOAD_OPTIONAL)
#undef ORDO_CL_LOAD_OPTIONAL
  cl = api;
  return true;
}

} // namespace

bool load_opencl(std::string &why) {
  static std::once_flag once;
  static bool ok = false;
  static std::string reason;
  std::call_once(once, [] { ok = load_once(reason); });
  why = reason;
  return ok;
}

ur_result_t to_ur(cl_int err) {
  switch (err) {
  case CL_SUCCESS: return UR_RESULT_SUCCESS;
  case CL_DEVICE_NOT_FOUND: return UR_RESULT_ERROR_DEVICE_NOT_FOUND;
  case CL_DEVICE_NOT_AVAILABLE: return UR_RESULT_ERROR_DEVICE_NOT_AVAILABLE;
  case CL_COMPILER_NOT_AVAILABLE:
  case CL_LINKER_NOT_AVAILABLE: return UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE;
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return UR_RESULT_ERROR_MEM_OBJECT_ALLOCATION_FAILURE;
  case CL_OUT_OF_RESOURCES: return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  case CL_OUT_OF_HOST_MEMORY: return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  case CL_PROFILING_INFO_NOT_AVAILABLE: return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  case CL_MISALIGNED_SUB_BUFFER_OFFSET: return UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET;
  case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS;
  case CL_BUILD_PROGRAM_FAILURE:
  case CL_COMPILE_PROGRAM_FAILURE: return UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  case CL_LINK_PROGRAM_FAILURE: return UR_RESULT_ERROR_PROGRAM_LINK_FAILURE;
  case CL_DEVICE_PARTITION_FAILED: return UR_RESULT_ERROR_DEVICE_PARTITION_FAILED;
  case CL_MEM_COPY_OVERLAP: return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
  case CL_INVALID_VALUE: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_DEVICE_TYPE: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_PLATFORM: return UR_RESULT_ERROR_INVALID_PLATFORM;
  case CL_INVALID_DEVICE: return UR_RESULT_ERROR_INVALID_DEVICE;
  case CL_INVALID_CONTEXT: return UR_RESULT_ERROR_INVALID_CONTEXT;
  case CL_INVALID_QUEUE_PROPERTIES: return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  case CL_INVALID_COMMAND_QUEUE: return UR_RESULT_ERROR_INVALID_QUEUE;
  case CL_INVALID_HOST_PTR: return UR_RESULT_ERROR_INVALID_HOST_PTR;
  case CL_INVALID_MEM_OBJECT: return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  case CL_INVALID_IMAGE_FORMAT_DESCRIPTOR: return UR_RESULT_ERROR_INVALID_IMAGE_FORMAT_DESCRIPTOR;
  case CL_INVALID_IMAGE_SIZE: return UR_RESULT_ERROR_INVALID_IMAGE_SIZE;
  case CL_INVALID_SAMPLER: return UR_RESULT_ERROR_INVALID_SAMPLER;
  case CL_INVALID_BINARY: return UR_RESULT_ERROR_INVALID_BINARY;
  case CL_INVALID_BUILD_OPTIONS: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_PROGRAM: return UR_RESULT_ERROR_INVALID_PROGRAM;
  case CL_INVALID_PROGRAM_EXECUTABLE: return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
  case CL_INVALID_KERNEL_NAME: return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  case CL_INVALID_KERNEL_DEFINITION: return UR_RESULT_ERROR_INVALID_KERNEL;
  case CL_INVALID_KERNEL: return UR_RESULT_ERROR_INVALID_KERNEL;
  case CL_INVALID_ARG_INDEX: return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  case CL_INVALID_ARG_VALUE: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_ARG_SIZE: return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  case CL_INVALID_KERNEL_ARGS: return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
  case CL_INVALID_WORK_DIMENSION: return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  case CL_INVALID_WORK_GROUP_SIZE: return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
  case CL_INVALID_WORK_ITEM_SIZE: return UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE;
  case CL_INVALID_GLOBAL_OFFSET: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_EVENT_WAIT_LIST: return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  case CL_INVALID_EVENT: return UR_RESULT_ERROR_INVALID_EVENT;
  case CL_INVALID_OPERATION: return UR_RESULT_ERROR_INVALID_OPERATION;
  case CL_INVALID_BUFFER_SIZE: return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
  case CL_INVALID_GLOBAL_WORK_SIZE: return UR_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
  case CL_INVALID_PROPERTY: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_IMAGE_DESCRIPTOR: return UR_RESULT_ERROR_INVALID_IMAGE_FORMAT_DESCRIPTOR;
  case CL_INVALID_COMPILER_OPTIONS:
  case CL_INVALID_LINKER_OPTIONS: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_INVALID_DEVICE_PARTITION_COUNT: return UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT;
  case CL_INVALID_SPEC_ID: return UR_RESULT_ERROR_INVALID_SPEC_ID;
  default: return UR_RESULT_ERROR_UNKNOWN;
  }
}

} // namespace ordo::opencl
