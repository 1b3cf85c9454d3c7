// SPDX-License-Identifier: Apache-2.0
// The part of the HIP runtime API (HIP 5.2) the adapter calls, declared here so the
// adapter builds without HIP's headers (they drag in a compiler-specific platform
// layer). Names, values and prototypes are HIP's (hip_runtime_api.h, driver_types.h);
// handles are opaque pointers. Also the test mapping onto CUDA (test/hip_on_cuda)
// implements exactly these.
#pragma once
#include <cstddef>

namespace ordo::hip {

using hipError_t = int;
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNotInitialized = 3;
constexpr hipError_t hipErrorDeinitialized = 4;
constexpr hipError_t hipErrorInvalidDeviceFunction = 98;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorInvalidContext = 201;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorInvalidKernelFile = 218;
constexpr hipError_t hipErrorInvalidSource = 300;
constexpr hipError_t hipErrorSharedObjectInitFailed = 303;
constexpr hipError_t hipErrorInvalidHandle = 400;
constexpr hipError_t hipErrorNotFound = 500;
constexpr hipError_t hipErrorNotReady = 600;
constexpr hipError_t hipErrorIllegalAddress = 700;
constexpr hipError_t hipErrorLaunchOutOfResources = 701;
constexpr hipError_t hipErrorContextIsDestroyed = 709;
constexpr hipError_t hipErrorHostMemoryAlreadyRegistered = 712;
constexpr hipError_t hipErrorLaunchFailure = 719;
constexpr hipError_t hipErrorNotSupported = 801;

struct ihipCtx_t;
struct ihipStream_t;
struct ihipEvent_t;
struct ihipModule_t;
struct ihipModuleSymbol_t;
using hipCtx_t = ihipCtx_t *;
using hipStream_t = ihipStream_t *;
using hipEvent_t = ihipEvent_t *;
using hipModule_t = ihipModule_t *;
using hipFunction_t = ihipModuleSymbol_t *;
using hipDevice_t = int;
using hipDeviceptr_t = void *;
struct hipUUID {
  char bytes[16];
};

// hipDeviceAttribute_t
enum hipDeviceAttribute_t : int {
  hipDeviceAttributeEccEnabled = 0,
  hipDeviceAttributeClockRate = 5,
  hipDeviceAttributeConcurrentManagedAccess = 9,
  hipDeviceAttributeCooperativeLaunch = 10,
  hipDeviceAttributeHostNativeAtomicSupported = 15,
  hipDeviceAttributeIntegrated = 16,
  hipDeviceAttributeL2CacheSize = 19,
  hipDeviceAttributeComputeCapabilityMajor = 23,
  hipDeviceAttributeManagedMemory = 24,
  hipDeviceAttributeMaxBlockDimX = 26,
  hipDeviceAttributeMaxBlockDimY = 27,
  hipDeviceAttributeMaxBlockDimZ = 28,
  hipDeviceAttributeMaxGridDimX = 29,
  hipDeviceAttributeMaxGridDimY = 30,
  hipDeviceAttributeMaxGridDimZ = 31,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeMemoryBusWidth = 59,
  hipDeviceAttributeMemoryClockRate = 60,
  hipDeviceAttributeComputeCapabilityMinor = 61,
  hipDeviceAttributeMultiprocessorCount = 63,
  hipDeviceAttributePageableMemoryAccess = 65,
  hipDeviceAttributePciDeviceId = 68,
  hipDeviceAttributeMaxRegistersPerBlock = 71,
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
  hipDeviceAttributeSharedMemPerBlockOptin = 75,
  hipDeviceAttributeTotalConstantMemory = 83,
  hipDeviceAttributeWarpSize = 87,
};

// hipFunction_attribute
enum hipFunction_attribute : int {
  HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  HIP_FUNC_ATTRIBUTE_NUM_REGS = 4,
};
// hipFuncAttribute
enum hipFuncAttribute : int { hipFuncAttributeMaxDynamicSharedMemorySize = 8 };
// hipPointer_attribute
enum hipPointer_attribute : int { HIP_POINTER_ATTRIBUTE_IS_MANAGED = 8 };
// hipMemoryAdvise
enum hipMemoryAdvise : int {
  hipMemAdviseSetReadMostly = 1,
  hipMemAdviseUnsetReadMostly = 2,
  hipMemAdviseSetPreferredLocation = 3,
  hipMemAdviseUnsetPreferredLocation = 4,
  hipMemAdviseSetAccessedBy = 5,
  hipMemAdviseUnsetAccessedBy = 6,
};
// hipMemcpyKind
enum hipMemcpyKind : int { hipMemcpyDefault = 4 };
// hipJitOption
enum hipJitOption : int {
  hipJitOptionMaxRegisters = 0,
  hipJitOptionInfoLogBuffer = 3,
  hipJitOptionInfoLogBufferSizeBytes = 4,
  hipJitOptionErrorLogBuffer = 5,
  hipJitOptionErrorLogBufferSizeBytes = 6,
  hipJitOptionOptimizationLevel = 7,
};

constexpr unsigned hipStreamDefault = 0x0;
constexpr unsigned hipStreamNonBlocking = 0x1;
constexpr unsigned hipEventDefault = 0x0;
constexpr unsigned hipEventDisableTiming = 0x2;
constexpr unsigned hipHostMallocPortable = 0x1;
constexpr unsigned hipHostMallocMapped = 0x2;
// hipIpcMemHandle_t: 64 opaque bytes (HIP_IPC_HANDLE_SIZE).
struct hipIpcMemHandle_t {
  char reserved[64];
};
constexpr unsigned hipIpcMemLazyEnablePeerAccess = 0x1;
constexpr unsigned hipHostRegisterPortable = 0x1;
constexpr unsigned hipHostRegisterMapped = 0x2;
constexpr unsigned hipMemAttachGlobal = 0x1;
constexpr int hipCpuDeviceId = -1;

// hipDeviceP2PAttr (HIP 5.2's values).
enum hipDeviceP2PAttr : int {
  hipDevP2PAttrPerformanceRank = 0,
  hipDevP2PAttrAccessSupported = 1,
  hipDevP2PAttrNativeAtomicSupported = 2,
  hipDevP2PAttrHipArrayAccessSupported = 3,
};
constexpr hipError_t hipErrorPeerAccessAlreadyEnabled = 704;
constexpr hipError_t hipErrorPeerAccessNotEnabled = 705;

// Every runtime function the adapter calls: X(name, return type, parameters).
#define ORDO_HIP_FUNCTIONS(X)                                                                                          \
  X(hipGetErrorName, const char *, (hipError_t))                                                                       \
  X(hipInit, hipError_t, (unsigned))                                                                                   \
  X(hipRuntimeGetVersion, hipError_t, (int *))                                                                         \
  X(hipGetDeviceCount, hipError_t, (int *))                                                                            \
  X(hipDeviceGet, hipError_t, (hipDevice_t *, int))                                                                    \
  X(hipDeviceGetName, hipError_t, (char *, int, hipDevice_t))                                                          \
  X(hipDeviceGetAttribute, hipError_t, (int *, hipDeviceAttribute_t, int))                                             \
  X(hipDeviceTotalMem, hipError_t, (size_t *, hipDevice_t))                                                            \
  X(hipDeviceGetUuid, hipError_t, (hipUUID *, hipDevice_t))                                                            \
  X(hipDeviceGetPCIBusId, hipError_t, (char *, int, int))                                                              \
  X(hipDevicePrimaryCtxRetain, hipError_t, (hipCtx_t *, hipDevice_t))                                                  \
  X(hipCtxGetCurrent, hipError_t, (hipCtx_t *))                                                                        \
  X(hipCtxSetCurrent, hipError_t, (hipCtx_t))                                                                          \
  X(hipDeviceSynchronize, hipError_t, ())                                                                              \
  X(hipMemGetInfo, hipError_t, (size_t *, size_t *))                                                                   \
  X(hipDeviceGetStreamPriorityRange, hipError_t, (int *, int *))                                                       \
  X(hipStreamCreateWithPriority, hipError_t, (hipStream_t *, unsigned, int))                                           \
  X(hipStreamDestroy, hipError_t, (hipStream_t))                                                                       \
  X(hipStreamSynchronize, hipError_t, (hipStream_t))                                                                   \
  X(hipStreamQuery, hipError_t, (hipStream_t))                                                                         \
  X(hipStreamWaitEvent, hipError_t, (hipStream_t, hipEvent_t, unsigned))                                               \
  X(hipEventCreateWithFlags, hipError_t, (hipEvent_t *, unsigned))                                                     \
  X(hipEventDestroy, hipError_t, (hipEvent_t))                                                                         \
  X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                                                             \
  X(hipEventQuery, hipError_t, (hipEvent_t))                                                                           \
  X(hipEventSynchronize, hipError_t, (hipEvent_t))                                                                     \
  X(hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))                                                \
  X(hipMalloc, hipError_t, (void **, size_t))                                                                          \
  X(hipFree, hipError_t, (void *))                                                                                     \
  X(hipHostMalloc, hipError_t, (void **, size_t, unsigned))                                                            \
  X(hipHostFree, hipError_t, (void *))                                                                                 \
  X(hipHostRegister, hipError_t, (void *, size_t, unsigned))                                                           \
  X(hipMemGetAddressRange, hipError_t, (hipDeviceptr_t *, size_t *, hipDeviceptr_t))                                   \
  X(hipIpcGetMemHandle, hipError_t, (hipIpcMemHandle_t *, void *))                                                     \
  X(hipIpcOpenMemHandle, hipError_t, (void **, hipIpcMemHandle_t, unsigned))                                           \
  X(hipIpcCloseMemHandle, hipError_t, (void *))                                                                        \
  X(hipHostUnregister, hipError_t, (void *))                                                                           \
  X(hipMallocManaged, hipError_t, (void **, size_t, unsigned))                                                         \
  X(hipPointerGetAttribute, hipError_t, (void *, hipPointer_attribute, hipDeviceptr_t))                                \
  X(hipMemcpyAsync, hipError_t, (void *, const void *, size_t, hipMemcpyKind, hipStream_t))                            \
  X(hipMemcpy2DAsync, hipError_t, (void *, size_t, const void *, size_t, size_t, size_t, hipMemcpyKind, hipStream_t))  \
  X(hipMemsetD8Async, hipError_t, (hipDeviceptr_t, unsigned char, size_t, hipStream_t))                                \
  X(hipMemsetD16Async, hipError_t, (hipDeviceptr_t, unsigned short, size_t, hipStream_t))                              \
  X(hipMemsetD32Async, hipError_t, (hipDeviceptr_t, int, size_t, hipStream_t))                                         \
  X(hipMemset2DAsync, hipError_t, (void *, size_t, int, size_t, size_t, hipStream_t))                                  \
  X(hipDeviceCanAccessPeer, hipError_t, (int *, int, int))                                                             \
  X(hipDeviceGetP2PAttribute, hipError_t, (int *, hipDeviceP2PAttr, int, int))                                         \
  X(hipDeviceEnablePeerAccess, hipError_t, (int, unsigned))                                                            \
  X(hipDeviceDisablePeerAccess, hipError_t, (int))                                                                     \
  X(hipMemPrefetchAsync, hipError_t, (const void *, size_t, int, hipStream_t))                                         \
  X(hipMemAdvise, hipError_t, (const void *, size_t, hipMemoryAdvise, int))                                            \
  X(hipModuleLoadDataEx, hipError_t, (hipModule_t *, const void *, unsigned, hipJitOption *, void **))                 \
  X(hipModuleUnload, hipError_t, (hipModule_t))                                                                        \
  X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))                                    \
  X(hipModuleGetGlobal, hipError_t, (hipDeviceptr_t *, size_t *, hipModule_t, const char *))                           \
  X(hipFuncGetAttribute, hipError_t, (int *, hipFunction_attribute, hipFunction_t))                                    \
  X(hipFuncSetAttribute, hipError_t, (const void *, hipFuncAttribute, int))                                            \
  X(hipModuleLaunchKernel, hipError_t,                                                                                 \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void **,        \
     void **))                                                                                                         \
  X(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, hipError_t, (int *, hipFunction_t, int, size_t))

} // namespace ordo::hip
