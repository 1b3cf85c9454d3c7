// SPDX-License-Identifier: Apache-2.0
#include "cl_api.hpp"

#include <cstdlib>
#include <mutex>

#include "ordo/dynlib.hpp"
#include "ordo/secure_env.hpp"

namespace ordo::opencl {

ClApi cl;

namespace {

bool load_once(std::string &why) {
  // ORDO_OPENCL_LIBRARY points the adapter at another ICD loader (or at nothing,
  // to test the "no OpenCL" path).
  const char *name = ordo::secure_env("ORDO_OPENCL_LIBRARY");
  if (!name || !*name) name = "libOpenCL.so.1";
  // Open for the process (never destroyed, reachable from here): handles hold function
  // pointers into it.
  static DynLib *const opened = new DynLib();
  DynLib &lib = *opened;
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
    // clang-format off
  case CL_SUCCESS: return UR_RESULT_SUCCESS;
#define ORDO_SAME_NAME(name) case CL_##name: return UR_RESULT_ERROR_##name;
  ORDO_SAME_NAME(DEVICE_NOT_FOUND) ORDO_SAME_NAME(DEVICE_NOT_AVAILABLE) ORDO_SAME_NAME(OUT_OF_RESOURCES)
  ORDO_SAME_NAME(MEM_OBJECT_ALLOCATION_FAILURE) ORDO_SAME_NAME(OUT_OF_HOST_MEMORY)
  ORDO_SAME_NAME(PROFILING_INFO_NOT_AVAILABLE) ORDO_SAME_NAME(MISALIGNED_SUB_BUFFER_OFFSET)
  ORDO_SAME_NAME(DEVICE_PARTITION_FAILED) ORDO_SAME_NAME(INVALID_VALUE) ORDO_SAME_NAME(INVALID_PLATFORM)
  ORDO_SAME_NAME(INVALID_DEVICE) ORDO_SAME_NAME(INVALID_CONTEXT) ORDO_SAME_NAME(INVALID_QUEUE_PROPERTIES)
  ORDO_SAME_NAME(INVALID_HOST_PTR) ORDO_SAME_NAME(INVALID_MEM_OBJECT) ORDO_SAME_NAME(INVALID_IMAGE_FORMAT_DESCRIPTOR)
  ORDO_SAME_NAME(INVALID_IMAGE_SIZE) ORDO_SAME_NAME(INVALID_SAMPLER) ORDO_SAME_NAME(INVALID_BINARY)
  ORDO_SAME_NAME(INVALID_PROGRAM) ORDO_SAME_NAME(INVALID_PROGRAM_EXECUTABLE) ORDO_SAME_NAME(INVALID_KERNEL_NAME)
  ORDO_SAME_NAME(INVALID_KERNEL) ORDO_SAME_NAME(INVALID_KERNEL_ARGS) ORDO_SAME_NAME(INVALID_WORK_DIMENSION)
  ORDO_SAME_NAME(INVALID_WORK_GROUP_SIZE) ORDO_SAME_NAME(INVALID_WORK_ITEM_SIZE) ORDO_SAME_NAME(INVALID_EVENT_WAIT_LIST)
  ORDO_SAME_NAME(INVALID_EVENT) ORDO_SAME_NAME(INVALID_OPERATION) ORDO_SAME_NAME(INVALID_BUFFER_SIZE)
  ORDO_SAME_NAME(INVALID_DEVICE_PARTITION_COUNT) ORDO_SAME_NAME(INVALID_SPEC_ID)
#undef ORDO_SAME_NAME
  case CL_INVALID_DEVICE_TYPE: case CL_INVALID_BUILD_OPTIONS: case CL_INVALID_ARG_VALUE: case CL_INVALID_GLOBAL_OFFSET:
  case CL_INVALID_PROPERTY: case CL_INVALID_COMPILER_OPTIONS: case CL_INVALID_LINKER_OPTIONS:
    return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_COMPILER_NOT_AVAILABLE: case CL_LINKER_NOT_AVAILABLE: return UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE;
  case CL_BUILD_PROGRAM_FAILURE: case CL_COMPILE_PROGRAM_FAILURE: return UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS;
  case CL_LINK_PROGRAM_FAILURE: return UR_RESULT_ERROR_PROGRAM_LINK_FAILURE;
  case CL_MEM_COPY_OVERLAP: return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
  case CL_INVALID_COMMAND_QUEUE: return UR_RESULT_ERROR_INVALID_QUEUE;
  case CL_INVALID_KERNEL_DEFINITION: return UR_RESULT_ERROR_INVALID_KERNEL;
  case CL_INVALID_ARG_INDEX: return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  case CL_INVALID_ARG_SIZE: return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  case CL_INVALID_GLOBAL_WORK_SIZE: return UR_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
  case CL_INVALID_IMAGE_DESCRIPTOR: return UR_RESULT_ERROR_INVALID_IMAGE_FORMAT_DESCRIPTOR;
    // clang-format on
  default: return UR_RESULT_ERROR_UNKNOWN;
  }
}

} // namespace ordo::opencl
