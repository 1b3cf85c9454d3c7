// SPDX-License-Identifier: Apache-2.0
// The Level Zero API, loaded at run time.
//
// The adapter never links the Level Zero loader: it opens libze_loader.so.1 with
// ordo::DynLib and resolves every function it calls by name, so the library loads
// cleanly where Level Zero is absent. Where the loader is missing, zeInit fails or no
// driver reports a device, the adapter reports no platform and Ze::why() says why.
#pragma once
#include <level_zero/ze_api.h>

#include <string>

#include "ordo/dynlib.hpp"
#include "ur_api.h"

namespace ordo::level_zero {

#define ORDO_ZE_FUNCTIONS(X)                                                                                           \
  X(zeInit)                                                                                                            \
  X(zeDriverGet)                                                                                                       \
  X(zeDriverGetApiVersion)                                                                                             \
  X(zeDriverGetProperties)                                                                                             \
  X(zeDeviceGet)                                                                                                       \
  X(zeDeviceGetProperties)                                                                                             \
  X(zeDeviceGetComputeProperties)                                                                                      \
  X(zeDeviceGetModuleProperties)                                                                                       \
  X(zeDeviceGetMemoryProperties)                                                                                       \
  X(zeDeviceGetMemoryAccessProperties)                                                                                 \
  X(zeDeviceGetCacheProperties)                                                                                        \
  X(zeDeviceGetCommandQueueGroupProperties)                                                                            \
  X(zeDeviceGetGlobalTimestamps)                                                                                       \
  X(zeContextCreateEx)                                                                                                 \
  X(zeContextDestroy)                                                                                                  \
  X(zeCommandListCreateImmediate)                                                                                      \
  X(zeCommandListDestroy)                                                                                              \
  X(zeCommandListAppendBarrier)                                                                                        \
  X(zeCommandListAppendMemoryCopy)                                                                                     \
  X(zeCommandListAppendMemoryCopyRegion)                                                                               \
  X(zeCommandListAppendMemoryFill)                                                                                     \
  X(zeCommandListAppendMemoryPrefetch)                                                                                 \
  X(zeCommandListAppendMemAdvise)                                                                                      \
  X(zeCommandListAppendWaitOnEvents)                                                                                   \
  X(zeCommandListAppendLaunchKernel)                                                                                   \
  X(zeEventPoolCreate)                                                                                                 \
  X(zeEventPoolDestroy)                                                                                                \
  X(zeEventCreate)                                                                                                     \
  X(zeEventDestroy)                                                                                                    \
  X(zeEventHostSynchronize)                                                                                            \
  X(zeEventQueryStatus)                                                                                                \
  X(zeEventHostReset)                                                                                                  \
  X(zeEventHostSignal)                                                                                                 \
  X(zeEventQueryKernelTimestamp)                                                                                       \
  X(zeMemAllocDevice)                                                                                                  \
  X(zeMemAllocHost)                                                                                                    \
  X(zeMemAllocShared)                                                                                                  \
  X(zeMemFree)                                                                                                         \
  X(zeMemGetAllocProperties)                                                                                           \
  X(zeDriverGetExtensionFunctionAddress)                                                                               \
  X(zeModuleCreate)                                                                                                    \
  X(zeModuleDestroy)                                                                                                   \
  X(zeModuleBuildLogGetString)                                                                                         \
  X(zeModuleBuildLogDestroy)                                                                                           \
  X(zeModuleGetKernelNames)                                                                                            \
  X(zeModuleGetNativeBinary)                                                                                           \
  X(zeModuleGetFunctionPointer)                                                                                        \
  X(zeModuleGetGlobalPointer)                                                                                          \
  X(zeKernelCreate)                                                                                                    \
  X(zeKernelDestroy)                                                                                                   \
  X(zeKernelSetArgumentValue)                                                                                          \
  X(zeKernelSetGroupSize)                                                                                              \
  X(zeKernelSuggestGroupSize)                                                                                          \
  X(zeKernelGetProperties)                                                                                             \
  X(zeKernelSetIndirectAccess)                                                                                         \
  X(zeKernelSetGlobalOffsetExp)

class Ze {
public:
  // Opens the loader and calls zeInit; false with why() set when that fails.
  bool load(const char *library = "libze_loader.so.1");
  const std::string &why() const { return why_; }
  bool not_installed = false; // after a failed load(): no libze_loader.so.1, or no driver behind it

#define ORDO_ZE_MEMBER(name) decltype(&::name) name = nullptr;
  ORDO_ZE_FUNCTIONS(ORDO_ZE_MEMBER)
#undef ORDO_ZE_MEMBER

private:
  DynLib lib_;
  std::string why_;
};

Ze &ze();

std::string error_text(ze_result_t r);
ur_result_t map_error(ze_result_t r);
inline ur_result_t check(ze_result_t r) { return r == ZE_RESULT_SUCCESS ? UR_RESULT_SUCCESS : map_error(r); }

} // namespace ordo::level_zero
