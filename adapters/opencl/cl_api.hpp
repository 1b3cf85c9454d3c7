// SPDX-License-Identifier: Apache-2.0
// The OpenCL entry points the adapter uses, loaded from libOpenCL.so.1 at run time.
//
// The CL headers are included for their types only: the adapter never links
// libOpenCL, so it loads (and reports zero platforms) where OpenCL is absent.
#pragma once
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
// clCreateCommandQueue is the fallback for OpenCL 1.2 platforms.
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <mutex>
#include <string>

#include "ur_api.h"

namespace ordo::opencl {

// clang-format off
// Every function here must be present for the adapter to use a platform
// (libOpenCL.so.1 from any ICD loader exports all of them).
#define ORDO_CL_REQUIRED(X) \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetExtensionFunctionAddressForPlatform) X(clGetDeviceIDs) \
  X(clGetDeviceInfo) X(clCreateContext) X(clRetainContext) X(clReleaseContext) X(clGetContextInfo) \
  X(clCreateCommandQueueWithProperties) X(clRetainCommandQueue) X(clReleaseCommandQueue) X(clGetCommandQueueInfo) \
  X(clFinish) X(clFlush) X(clWaitForEvents) X(clGetEventInfo) X(clGetEventProfilingInfo) X(clRetainEvent) \
  X(clReleaseEvent) X(clSetEventCallback) X(clCreateUserEvent) X(clSetUserEventStatus) X(clCreateProgramWithBinary) \
  X(clBuildProgram) X(clCompileProgram) X(clLinkProgram) X(clRetainProgram) X(clReleaseProgram) X(clGetProgramInfo) \
  X(clGetProgramBuildInfo) X(clCreateKernel) X(clRetainKernel) X(clReleaseKernel) X(clGetKernelInfo) \
  X(clGetKernelWorkGroupInfo) X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clEnqueueMarkerWithWaitList) \
  X(clEnqueueBarrierWithWaitList) X(clCreateBuffer) X(clCreateSubBuffer) X(clRetainMemObject) X(clReleaseMemObject) \
  X(clGetMemObjectInfo) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) \
  X(clEnqueueReadBufferRect) X(clEnqueueWriteBufferRect) X(clEnqueueCopyBufferRect) X(clEnqueueFillBuffer) \
  X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject)
// Newer than OpenCL 1.2: looked up, but a platform may lack them (null then).
#define ORDO_CL_OPTIONAL(X) \
  X(clCreateProgramWithIL) X(clGetKernelSubGroupInfo) X(clSetKernelArgSVMPointer) X(clSetKernelExecInfo) \
  X(clSVMAlloc) X(clSVMFree) X(clEnqueueSVMMemcpy) X(clEnqueueSVMMemFill) X(clEnqueueSVMMigrateMem) \
  X(clGetDeviceAndHostTimer) X(clGetHostTimer) X(clCreateCommandQueue) X(clCreateSubDevices) X(clReleaseDevice)
// clang-format on

struct ClApi {
#define ORDO_CL_DECLARE(name) decltype(&::name) name = nullptr;
  ORDO_CL_REQUIRED(ORDO_CL_DECLARE)
  ORDO_CL_OPTIONAL(ORDO_CL_DECLARE)
#undef ORDO_CL_DECLARE
};

// The loaded entry points. Valid (all required ones non-null) once load_opencl()
// has returned true; the adapter creates no handle before that.
extern ClApi cl;

// Loads libOpenCL.so.1 once (thread-safe). On failure `why` says what went wrong.
bool load_opencl(std::string &why);

// clFinish of `q`, or where waits poll (polled_waits.cpp) a marker enqueued under
// `submit_mutex` (the queue's submission lock; null for a queue only the caller uses)
// and waited for by polling. `*clean` (if given): false where the marker ended in error
// because a command before it did (Intel's CPU runtime then ends it, and clFinish,
// before other commands of an out-of-order queue have run).
cl_int finish_queue(cl_command_queue q, std::mutex *submit_mutex, bool *clean = nullptr);
// clReleaseCommandQueue of a queue whose commands have completed; where waits poll,
// after a blocking clFinish, so that the runtime's worker has let go of it first.
void release_queue(cl_command_queue q);

// The ur_result_t that best describes an OpenCL error code.
ur_result_t to_ur(cl_int err);

} // namespace ordo::opencl
