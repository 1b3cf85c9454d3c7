// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API, loaded at run time.
//
// The adapter never links libcuda: it opens libcuda.so.1 with ordo::DynLib, calls
// cuInit, and resolves every other entry point through cuGetProcAddress at the
// API version of the cuda.h it was compiled against, so each pointer has exactly
// the prototype this header declares (cuMemAdvise_v2, cuEventElapsedTime_v2, ...).
// Where the library is missing, is the toolkit's stub, or lacks a function, the
// adapter reports no platform and Driver::why() says what happened.
#pragma once
#include <cuda.h>

#include <string>

#include "ordo/dynlib.hpp"
#include "driver_api.hpp"
#include "ur_api.h"

namespace ordo::cuda {

// Every driver function the adapter calls. The name is stringized before macro
// expansion (the base name, which cuGetProcAddress wants) and expanded for the
// member (cuMemAlloc -> cuMemAlloc_v2), so calls through `drv().cuMemAlloc(...)`
// expand the same way and match the declared prototype.
#define ORDO_CUDA_DRIVER_FUNCTIONS(X)                                                                                  \
  X(cuGetErrorName)                                                                                                    \
  X(cuGetErrorString)                                                                                                  \
  X(cuDeviceGet)                                                                                                       \
  X(cuDeviceGetCount)                                                                                                  \
  X(cuDeviceGetName)                                                                                                   \
  X(cuDeviceGetAttribute)                                                                                              \
  X(cuDeviceTotalMem)                                                                                                  \
  X(cuDeviceGetUuid)                                                                                                   \
  X(cuDeviceGetPCIBusId)                                                                                               \
  X(cuDeviceCanAccessPeer)                                                                                             \
  X(cuDeviceGetP2PAttribute)                                                                                           \
  X(cuCtxEnablePeerAccess)                                                                                             \
  X(cuCtxDisablePeerAccess)                                                                                            \
  X(cuDevicePrimaryCtxRetain)                                                                                          \
  X(cuCtxGetCurrent)                                                                                                   \
  X(cuCtxSetCurrent)                                                                                                   \
  X(cuCtxSynchronize)                                                                                                  \
  X(cuCtxGetStreamPriorityRange)                                                                                       \
  X(cuStreamCreateWithPriority)                                                                                        \
  X(cuStreamDestroy)                                                                                                   \
  X(cuStreamSynchronize)                                                                                               \
  X(cuStreamQuery)                                                                                                     \
  X(cuStreamWaitEvent)                                                                                                 \
  X(cuEventCreate)                                                                                                     \
  X(cuEventDestroy)                                                                                                    \
  X(cuEventRecord)                                                                                                     \
  X(cuEventQuery)                                                                                                      \
  X(cuEventSynchronize)                                                                                                \
  X(cuEventElapsedTime)                                                                                                \
  X(cuMemAlloc)                                                                                                        \
  X(cuMemFree)                                                                                                         \
  X(cuMemHostAlloc)                                                                                                    \
  X(cuMemHostRegister)                                                                                                 \
  X(cuMemGetAddressRange)                                                                                              \
  X(cuIpcGetMemHandle)                                                                                                 \
  X(cuIpcOpenMemHandle)                                                                                                \
  X(cuIpcCloseMemHandle)                                                                                               \
  X(cuMemHostUnregister)                                                                                               \
  X(cuMemFreeHost)                                                                                                     \
  X(cuMemAllocManaged)                                                                                                 \
  X(cuMemGetInfo)                                                                                                      \
  X(cuPointerGetAttribute)                                                                                             \
  X(cuPointerGetAttributes)                                                                                            \
  X(cuMemcpyAsync)                                                                                                     \
  X(cuMemcpy2DAsync)                                                                                                   \
  X(cuMemsetD8Async)                                                                                                   \
  X(cuMemsetD16Async)                                                                                                  \
  X(cuMemsetD32Async)                                                                                                  \
  X(cuMemsetD2D8Async)                                                                                                 \
  X(cuMemsetD2D16Async)                                                                                                \
  X(cuMemsetD2D32Async)                                                                                                \
  X(cuMemPrefetchAsync)                                                                                                \
  X(cuMemAdvise)                                                                                                       \
  X(cuMemGetAllocationGranularity)                                                                                     \
  X(cuMemAddressReserve)                                                                                               \
  X(cuMemAddressFree)                                                                                                  \
  X(cuMemCreate)                                                                                                       \
  X(cuMemRelease)                                                                                                      \
  X(cuMemExportToShareableHandle)                                                                                      \
  X(cuLinkCreate)                                                                                                      \
  X(cuLinkAddData)                                                                                                     \
  X(cuLinkComplete)                                                                                                    \
  X(cuLinkDestroy)                                                                                                     \
  X(cuMemImportFromShareableHandle)                                                                                    \
  X(cuMemMap)                                                                                                          \
  X(cuMemUnmap)                                                                                                        \
  X(cuMemSetAccess)                                                                                                    \
  X(cuModuleLoadDataEx)                                                                                                \
  X(cuModuleUnload)                                                                                                    \
  X(cuModuleGetFunction)                                                                                               \
  X(cuModuleGetFunctionCount)                                                                                          \
  X(cuModuleEnumerateFunctions)                                                                                        \
  X(cuModuleGetGlobal)                                                                                                 \
  X(cuFuncGetAttribute)                                                                                                \
  X(cuFuncSetAttribute)                                                                                                \
  X(cuFuncGetName)                                                                                                     \
  X(cuFuncGetParamInfo)                                                                                                \
  X(cuLaunchKernel)                                                                                                    \
  X(cuLaunchCooperativeKernel)                                                                                         \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

struct Driver {
  // Loaded before cuInit: cuInit, the resolver and the version query.
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
  decltype(&::cuGetProcAddress) cuGetProcAddress = nullptr;

#define ORDO_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  ORDO_CUDA_DRIVER_FUNCTIONS(ORDO_CUDA_DECLARE)
#undef ORDO_CUDA_DECLARE

  int driver_version = 0; // e.g. 13000

  // Loads libcuda.so.1 (or `library`), calls cuInit and resolves the table. False
  // with why() set when the driver cannot be used.
  bool load(const char *library = "libcuda.so.1");
  const std::string &why() const { return why_; }
  bool not_installed = false; // after a failed load(): no libcuda.so.1, the stub library, or no device

private:
  DynLib lib_;
  std::string why_;
};

// The process-wide driver table; valid only after a successful load (the adapter
// checks that once, when it enumerates platforms).
Driver &drv();

// "CUDA_ERROR_OUT_OF_MEMORY (2)": for logs and JIT messages.
std::string error_text(CUresult r);

// A driver result in the stream backend's terms (source/stream_backend/driver.hpp).
ordo::stream_backend::status status_of(CUresult r);

} // namespace ordo::cuda
