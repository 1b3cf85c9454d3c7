// SPDX-License-Identifier: Apache-2.0
// HIP on CUDA, for tests only: a libamdhip64.so.5 whose every function is the direct
// call of its CUDA driver API counterpart, as HIP's NVIDIA platform maps them, with
// CUDA's results translated into HIP's. It implements exactly the functions the HIP
// adapter calls (adapters/hip/hip_api.hpp), so the adapter's logic runs on a real GPU's
// semantics where no AMD GPU exists. It checks the adapter, not AMD's runtime (docs/hip.md).
#include <cuda.h>

#include <cstring>

#include "copy_2d.hpp"
#include "hip_api.hpp"

using namespace ordo::hip;

namespace {

// CUDA and HIP share most codes' numbers; the rest map to the nearest HIP code.
hipError_t to_hip(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS: return hipSuccess;
  case CUDA_ERROR_INVALID_VALUE:
  case CUDA_ERROR_OUT_OF_MEMORY:
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_INVALID_SOURCE:
  case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
  case CUDA_ERROR_INVALID_HANDLE:
  case CUDA_ERROR_NOT_FOUND:
  case CUDA_ERROR_NOT_READY:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_NOT_SUPPORTED:
  case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
  case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return static_cast<hipError_t>(r);
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return hipErrorInvalidKernelFile;
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR: return hipErrorLaunchFailure;
  default: return 999; // hipErrorUnknown
  }
}

CUdeviceptr dptr(const void *p) { return reinterpret_cast<CUdeviceptr>(p); }
CUstream cs(hipStream_t s) { return reinterpret_cast<CUstream>(s); }
CUevent ce(hipEvent_t e) { return reinterpret_cast<CUevent>(e); }
CUfunction cf(hipFunction_t f) { return reinterpret_cast<CUfunction>(f); }

CUdevice_attribute cuda_attribute(hipDeviceAttribute_t a) {
  switch (a) {
  case hipDeviceAttributeEccEnabled: return CU_DEVICE_ATTRIBUTE_ECC_ENABLED;
  case hipDeviceAttributeClockRate: return CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
  case hipDeviceAttributeConcurrentManagedAccess: return CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS;
  case hipDeviceAttributeCooperativeLaunch: return CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH;
  case hipDeviceAttributeHostNativeAtomicSupported: return CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED;
  case hipDeviceAttributeIntegrated: return CU_DEVICE_ATTRIBUTE_INTEGRATED;
  case hipDeviceAttributeL2CacheSize: return CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE;
  case hipDeviceAttributeComputeCapabilityMajor: return CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
  case hipDeviceAttributeManagedMemory: return CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY;
  case hipDeviceAttributeMaxBlockDimX: return CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X;
  case hipDeviceAttributeMaxBlockDimY: return CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y;
  case hipDeviceAttributeMaxBlockDimZ: return CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z;
  case hipDeviceAttributeMaxGridDimX: return CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X;
  case hipDeviceAttributeMaxGridDimY: return CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y;
  case hipDeviceAttributeMaxGridDimZ: return CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z;
  case hipDeviceAttributeMaxThreadsPerBlock: return CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
  case hipDeviceAttributeMemoryBusWidth: return CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH;
  case hipDeviceAttributeMemoryClockRate: return CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE;
  case hipDeviceAttributeComputeCapabilityMinor: return CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
  case hipDeviceAttributeMultiprocessorCount: return CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  case hipDeviceAttributePageableMemoryAccess: return CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS;
  case hipDeviceAttributePciDeviceId: return CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID;
  case hipDeviceAttributeMaxRegistersPerBlock: return CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK;
  case hipDeviceAttributeMaxSharedMemoryPerBlock: return CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK;
  case hipDeviceAttributeSharedMemPerBlockOptin: return CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
  case hipDeviceAttributeTotalConstantMemory: return CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY;
  case hipDeviceAttributeWarpSize: return CU_DEVICE_ATTRIBUTE_WARP_SIZE;
  }
  return CU_DEVICE_ATTRIBUTE_MAX;
}

CUmemLocation location_of(int device) {
  CUmemLocation loc{};
  loc.type = device == hipCpuDeviceId ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = device == hipCpuDeviceId ? 0 : device;
  return loc;
}

} // namespace

#define HIP_EXPORT extern "C" __attribute__((visibility("default")))

HIP_EXPORT const char *hipGetErrorName(hipError_t e) {
  const char *name = nullptr;
  if (cuGetErrorName(static_cast<CUresult>(e), &name) != CUDA_SUCCESS || !name) return "hipErrorUnknown";
  return name; // the CUDA name of the same code
}
HIP_EXPORT hipError_t hipInit(unsigned flags) { return to_hip(cuInit(flags)); }
HIP_EXPORT hipError_t hipRuntimeGetVersion(int *v) { return to_hip(cuDriverGetVersion(v)); }
HIP_EXPORT hipError_t hipGetDeviceCount(int *count) {
  hipError_t r = to_hip(cuDeviceGetCount(count));
  return r == hipSuccess && *count == 0 ? hipErrorNoDevice : r;
}
HIP_EXPORT hipError_t hipDeviceGet(hipDevice_t *d, int ordinal) { return to_hip(cuDeviceGet(d, ordinal)); }
HIP_EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t d) {
  return to_hip(cuDeviceGetName(name, len, d));
}
HIP_EXPORT hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int d) {
  return to_hip(cuDeviceGetAttribute(v, cuda_attribute(a), d));
}
HIP_EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t d) { return to_hip(cuDeviceTotalMem(bytes, d)); }
HIP_EXPORT hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t d) {
  return to_hip(cuDeviceGetUuid(reinterpret_cast<CUuuid *>(uuid), d));
}
HIP_EXPORT hipError_t hipDeviceGetPCIBusId(char *id, int len, int d) { return to_hip(cuDeviceGetPCIBusId(id, len, d)); }
HIP_EXPORT hipError_t hipDevicePrimaryCtxRetain(hipCtx_t *c, hipDevice_t d) {
  return to_hip(cuDevicePrimaryCtxRetain(reinterpret_cast<CUcontext *>(c), d));
}
HIP_EXPORT hipError_t hipCtxGetCurrent(hipCtx_t *c) {
  return to_hip(cuCtxGetCurrent(reinterpret_cast<CUcontext *>(c)));
}
HIP_EXPORT hipError_t hipCtxSetCurrent(hipCtx_t c) { return to_hip(cuCtxSetCurrent(reinterpret_cast<CUcontext>(c))); }
HIP_EXPORT hipError_t hipDeviceSynchronize() { return to_hip(cuCtxSynchronize()); }
HIP_EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total) {
  return to_hip(cuMemGetInfo(free_bytes, total));
}
HIP_EXPORT hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest) {
  return to_hip(cuCtxGetStreamPriorityRange(least, greatest));
}
HIP_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned flags, int priority) {
  return to_hip(cuStreamCreateWithPriority(reinterpret_cast<CUstream *>(s),
                                           flags & hipStreamNonBlocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT,
                                           priority));
}
HIP_EXPORT hipError_t hipStreamDestroy(hipStream_t s) { return to_hip(cuStreamDestroy(cs(s))); }
HIP_EXPORT hipError_t hipStreamSynchronize(hipStream_t s) { return to_hip(cuStreamSynchronize(cs(s))); }
HIP_EXPORT hipError_t hipStreamQuery(hipStream_t s) { return to_hip(cuStreamQuery(cs(s))); }
HIP_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) {
  return to_hip(cuStreamWaitEvent(cs(s), ce(e), flags));
}
HIP_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags) {
  return to_hip(cuEventCreate(reinterpret_cast<CUevent *>(e),
                              flags & hipEventDisableTiming ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT));
}
HIP_EXPORT hipError_t hipEventDestroy(hipEvent_t e) { return to_hip(cuEventDestroy(ce(e))); }
HIP_EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return to_hip(cuEventRecord(ce(e), cs(s))); }
HIP_EXPORT hipError_t hipEventQuery(hipEvent_t e) { return to_hip(cuEventQuery(ce(e))); }
HIP_EXPORT hipError_t hipEventSynchronize(hipEvent_t e) { return to_hip(cuEventSynchronize(ce(e))); }
HIP_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) {
  return to_hip(cuEventElapsedTime(ms, ce(a), ce(b)));
}
HIP_EXPORT hipError_t hipMalloc(void **p, size_t size) {
  return to_hip(cuMemAlloc(reinterpret_cast<CUdeviceptr *>(p), size));
}
HIP_EXPORT hipError_t hipFree(void *p) { return to_hip(cuMemFree(dptr(p))); }
HIP_EXPORT hipError_t hipHostMalloc(void **p, size_t size, unsigned flags) {
  unsigned cu_flags = (flags & hipHostMallocPortable ? CU_MEMHOSTALLOC_PORTABLE : 0) |
                      (flags & hipHostMallocMapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0);
  return to_hip(cuMemHostAlloc(p, size, cu_flags));
}
HIP_EXPORT hipError_t hipHostFree(void *p) { return to_hip(cuMemFreeHost(p)); }
HIP_EXPORT hipError_t hipHostRegister(void *p, size_t size, unsigned flags) {
  unsigned cu_flags = (flags & hipHostRegisterPortable ? CU_MEMHOSTREGISTER_PORTABLE : 0) |
                      (flags & hipHostRegisterMapped ? CU_MEMHOSTREGISTER_DEVICEMAP : 0);
  return to_hip(cuMemHostRegister(p, size, cu_flags));
}
HIP_EXPORT hipError_t hipHostUnregister(void *p) { return to_hip(cuMemHostUnregister(p)); }
HIP_EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t *base, size_t *size, hipDeviceptr_t p) {
  CUdeviceptr b = 0;
  hipError_t r = to_hip(cuMemGetAddressRange(&b, size, dptr(p)));
  *base = reinterpret_cast<void *>(b);
  return r;
}
HIP_EXPORT hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t *h, void *p) {
  CUipcMemHandle ch;
  hipError_t r = to_hip(cuIpcGetMemHandle(&ch, dptr(p)));
  std::memcpy(h->reserved, &ch, sizeof ch);
  return r;
}
HIP_EXPORT hipError_t hipIpcOpenMemHandle(void **p, hipIpcMemHandle_t h, unsigned flags) {
  CUipcMemHandle ch;
  std::memcpy(&ch, h.reserved, sizeof ch);
  CUdeviceptr b = 0;
  hipError_t r = to_hip(
      cuIpcOpenMemHandle(&b, ch, flags & hipIpcMemLazyEnablePeerAccess ? CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS : 0));
  *p = reinterpret_cast<void *>(b);
  return r;
}
HIP_EXPORT hipError_t hipIpcCloseMemHandle(void *p) { return to_hip(cuIpcCloseMemHandle(dptr(p))); }
HIP_EXPORT hipError_t hipMallocManaged(void **p, size_t size, unsigned flags) {
  return to_hip(cuMemAllocManaged(reinterpret_cast<CUdeviceptr *>(p), size,
                                  flags & hipMemAttachGlobal ? CU_MEM_ATTACH_GLOBAL : CU_MEM_ATTACH_HOST));
}
HIP_EXPORT hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute a, hipDeviceptr_t p) {
  if (a != HIP_POINTER_ATTRIBUTE_IS_MANAGED) return hipErrorNotSupported;
  return to_hip(cuPointerGetAttribute(data, CU_POINTER_ATTRIBUTE_IS_MANAGED, dptr(p)));
}
HIP_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t size, hipMemcpyKind, hipStream_t s) {
  return to_hip(cuMemcpyAsync(dptr(dst), dptr(src), size, cs(s)));
}
HIP_EXPORT hipError_t hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                       size_t height, hipMemcpyKind, hipStream_t s) {
  auto known = [](const void *p) {
    unsigned type = 0;
    return cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p)) == CUDA_SUCCESS;
  };
  CUDA_MEMCPY2D c = ordo::cuda::copy_2d(known, dst, dpitch, src, spitch, width, height);
  return to_hip(cuMemcpy2DAsync(&c, cs(s)));
}

HIP_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t p, unsigned char v, size_t n, hipStream_t s) {
  return to_hip(cuMemsetD8Async(dptr(p), v, n, cs(s)));
}
HIP_EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t p, unsigned short v, size_t n, hipStream_t s) {
  return to_hip(cuMemsetD16Async(dptr(p), v, n, cs(s)));
}
HIP_EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t p, int v, size_t n, hipStream_t s) {
  return to_hip(cuMemsetD32Async(dptr(p), static_cast<unsigned>(v), n, cs(s)));
}
HIP_EXPORT hipError_t hipMemset2DAsync(void *p, size_t pitch, int v, size_t width, size_t height, hipStream_t s) {
  return to_hip(cuMemsetD2D8Async(dptr(p), pitch, static_cast<unsigned char>(v), width, height, cs(s)));
}
HIP_EXPORT hipError_t hipDeviceCanAccessPeer(int *can, int d, int peer) {
  return to_hip(cuDeviceCanAccessPeer(can, d, peer));
}
HIP_EXPORT hipError_t hipDeviceGetP2PAttribute(int *v, hipDeviceP2PAttr a, int d, int peer) {
  CUdevice_P2PAttribute ca = CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED;
  switch (a) {
  case hipDevP2PAttrPerformanceRank: ca = CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK; break;
  case hipDevP2PAttrAccessSupported: ca = CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED; break;
  case hipDevP2PAttrNativeAtomicSupported: ca = CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED; break;
  case hipDevP2PAttrHipArrayAccessSupported: ca = CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED; break;
  default: return hipErrorInvalidValue;
  }
  return to_hip(cuDeviceGetP2PAttribute(v, ca, d, peer));
}
// HIP names the peer by ordinal and acts on the current context; CUDA wants the peer's context.
HIP_EXPORT hipError_t hipDeviceEnablePeerAccess(int peer, unsigned flags) {
  CUcontext c = nullptr;
  if (CUresult r = cuDevicePrimaryCtxRetain(&c, peer)) return to_hip(r);
  CUresult r = cuCtxEnablePeerAccess(c, flags);
  cuDevicePrimaryCtxRelease(peer);
  return to_hip(r);
}
HIP_EXPORT hipError_t hipDeviceDisablePeerAccess(int peer) {
  CUcontext c = nullptr;
  if (CUresult r = cuDevicePrimaryCtxRetain(&c, peer)) return to_hip(r);
  CUresult r = cuCtxDisablePeerAccess(c);
  cuDevicePrimaryCtxRelease(peer);
  return to_hip(r);
}
HIP_EXPORT hipError_t hipMemPrefetchAsync(const void *p, size_t n, int device, hipStream_t s) {
  return to_hip(cuMemPrefetchAsync(dptr(p), n, location_of(device), 0, cs(s)));
}
HIP_EXPORT hipError_t hipMemAdvise(const void *p, size_t n, hipMemoryAdvise advice, int device) {
  // hipMemoryAdvise's values 1..6 are CUmem_advise's.
  return to_hip(cuMemAdvise(dptr(p), n, static_cast<CUmem_advise>(advice), location_of(device)));
}
HIP_EXPORT hipError_t hipModuleLoadDataEx(hipModule_t *m, const void *image, unsigned n, hipJitOption *options,
                                          void **values) {
  // hipJitOption's values are CUjit_option's.
  return to_hip(
      cuModuleLoadDataEx(reinterpret_cast<CUmodule *>(m), image, n, reinterpret_cast<CUjit_option *>(options), values));
}
HIP_EXPORT hipError_t hipModuleUnload(hipModule_t m) { return to_hip(cuModuleUnload(reinterpret_cast<CUmodule>(m))); }
HIP_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
  return to_hip(cuModuleGetFunction(reinterpret_cast<CUfunction *>(f), reinterpret_cast<CUmodule>(m), name));
}
HIP_EXPORT hipError_t hipModuleGetGlobal(hipDeviceptr_t *p, size_t *bytes, hipModule_t m, const char *name) {
  CUdeviceptr at = 0;
  hipError_t r = to_hip(cuModuleGetGlobal(&at, bytes, reinterpret_cast<CUmodule>(m), name));
  if (p) *p = reinterpret_cast<hipDeviceptr_t>(at);
  return r;
}
HIP_EXPORT hipError_t hipFuncGetAttribute(int *v, hipFunction_attribute a, hipFunction_t f) {
  // hipFunction_attribute's values are CUfunction_attribute's.
  return to_hip(cuFuncGetAttribute(v, static_cast<CUfunction_attribute>(a), cf(f)));
}
HIP_EXPORT hipError_t hipFuncSetAttribute(const void *f, hipFuncAttribute a, int v) {
  if (a != hipFuncAttributeMaxDynamicSharedMemorySize) return hipErrorNotSupported;
  return to_hip(cuFuncSetAttribute(reinterpret_cast<CUfunction>(const_cast<void *>(f)),
                                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v));
}
HIP_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                            unsigned by, unsigned bz, unsigned shared, hipStream_t s, void **params,
                                            void **extra) {
  return to_hip(cuLaunchKernel(cf(f), gx, gy, gz, bx, by, bz, shared, cs(s), params, extra));
}
HIP_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, hipFunction_t f, int threads,
                                                                         size_t shared) {
  return to_hip(cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, cf(f), threads, shared));
}
