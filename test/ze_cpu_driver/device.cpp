// SPDX-License-Identifier: Apache-2.0
// zeInit, drivers, devices and contexts of the CPU test driver.
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "driver.hpp"
#include "tables.hpp"

namespace zecpu {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

Signals &signals() {
  static auto *s = new Signals(); // outlives exit-time destructors
  return *s;
}

bool Signals::wait(uint64_t timeout_ns, const std::function<bool()> &done) {
  std::unique_lock<std::mutex> lock(mutex);
  if (timeout_ns == UINT64_MAX) {
    changed.wait(lock, done);
    return true;
  }
  return changed.wait_for(lock, std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, 1ull << 62)), done);
}

DriverObj &the_driver() {
  static DriverObj *d = [] {
    auto *drv = new DriverObj();
    auto *dev = new Device();
    dev->driver = drv;
    // Half the machine's memory, so that "too much" is refused before the host runs out.
    struct sysinfo si {};
    sysinfo(&si);
    uint64_t total = uint64_t(si.totalram) * si.mem_unit;
    dev->memory_size = std::max<uint64_t>(total / 2, 256ull << 20);
    drv->devices.push_back(dev);
    return drv;
  }();
  return *d;
}

namespace {

constexpr uint32_t kComputeUnits = 4;
constexpr uint32_t kMaxGroupSize = 1024;
constexpr uint32_t kSharedLocalMemory = 64 * 1024;
const char *const kDeviceName = "Ordo CPU test device (Level Zero)";

std::atomic<bool> initialised{false};

// A CPU; ORDO_ZE_CPU_AS_GPU=1 reports a GPU instead, for clients that take GPUs only
// (Intel's Level Zero UR adapter: docs/level-zero.md).
bool reports_gpu() {
  static const bool as_gpu = [] {
    const char *e = std::getenv("ORDO_ZE_CPU_AS_GPU");
    return e && std::strcmp(e, "1") == 0;
  }();
  return as_gpu;
}

ze_result_t ZE_APICALL Init(ze_init_flags_t flags) {
  if (flags & ~(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  initialised = true;
  the_driver();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers) {
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!initialised) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (*pCount == 0 || !phDrivers) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  phDrivers[0] = reinterpret_cast<ze_driver_handle_t>(&the_driver());
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

#if ORDO_ZE_HEADERS_AT_LEAST(1, 10)
// zeInitDrivers (1.10): initialises like zeInit and lists the driver when its device is
// of a type the caller asks for (a GPU only with ORDO_ZE_CPU_AS_GPU=1; there are no CPU
// flags, so a CPU device answers no request).
ze_result_t ZE_APICALL InitDrivers(uint32_t *pCount, ze_driver_handle_t *phDrivers, ze_init_driver_type_desc_t *desc) {
  if (!pCount || !desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->flags == 0) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  initialised = true;
  const bool wanted = reports_gpu() && (desc->flags & ZE_INIT_DRIVER_TYPE_FLAG_GPU);
  const uint32_t available = wanted ? 1 : 0;
  if (*pCount == 0 || !phDrivers) {
    *pCount = available;
    return ZE_RESULT_SUCCESS;
  }
  if (available) phDrivers[0] = reinterpret_cast<ze_driver_handle_t>(&the_driver());
  *pCount = available;
  return ZE_RESULT_SUCCESS;
}
#endif

ze_result_t ZE_APICALL DriverGetApiVersion(ze_driver_handle_t h, ze_api_version_t *v) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!v) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *v = ZE_API_VERSION_CURRENT;
  return ZE_RESULT_SUCCESS;
}

void fill_uuid(uint8_t *out, size_t n, uint8_t tag) {
  std::memset(out, 0, n);
  const char id[] = "ordo-ze-cpu";
  std::memcpy(out, id, std::min(n, sizeof(id) - 1));
  out[n - 1] = tag;
}

ze_result_t ZE_APICALL DriverGetProperties(ze_driver_handle_t h, ze_driver_properties_t *p) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  fill_uuid(p->uuid.id, ZE_MAX_DRIVER_UUID_SIZE, 0xd);
  p->driverVersion = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGetIpcProperties(ze_driver_handle_t h, ze_driver_ipc_properties_t *p) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->flags = 0; // no IPC
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGetExtensionProperties(ze_driver_handle_t h, uint32_t *pCount,
                                                    ze_driver_extension_properties_t *) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *pCount = 0; // none
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGet(ze_driver_handle_t h, uint32_t *pCount, ze_device_handle_t *phDevices) {
  DriverObj *d = as<DriverObj>(h);
  if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  uint32_t n = uint32_t(d->devices.size());
  if (*pCount == 0 || !phDevices) {
    *pCount = n;
    return ZE_RESULT_SUCCESS;
  }
  n = std::min(n, *pCount);
  for (uint32_t i = 0; i < n; ++i) phDevices[i] = reinterpret_cast<ze_device_handle_t>(d->devices[i]);
  *pCount = n;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetSubDevices(ze_device_handle_t h, uint32_t *pCount, ze_device_handle_t *) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *pCount = 0;
  return ZE_RESULT_SUCCESS;
}

#if ORDO_ZE_HEADERS_AT_LEAST(1, 7)
// zeDeviceGetRootDevice (1.7): the device has no sub-devices, so it is a root device,
// which answers a null root.
ze_result_t ZE_APICALL DeviceGetRootDevice(ze_device_handle_t h, ze_device_handle_t *phRootDevice) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phRootDevice) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *phRootDevice = nullptr;
  return ZE_RESULT_SUCCESS;
}
#endif

ze_result_t ZE_APICALL DeviceGetProperties(ze_device_handle_t h, ze_device_properties_t *p) {
  Device *d = as<Device>(h);
  if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->type = reports_gpu() ? ZE_DEVICE_TYPE_GPU : ZE_DEVICE_TYPE_CPU;
  p->vendorId = 0x8086 ^ 0xffff; // no real vendor: not Intel's id
  p->deviceId = 0x0c9d;
  p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
  p->subdeviceId = 0;
  p->coreClockRate = 1000;
  p->maxMemAllocSize = d->max_alloc_size();
  p->maxHardwareContexts = 64;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = 1;
  p->physicalEUSimdWidth = 8;
  p->numEUsPerSubslice = 1;
  p->numSubslicesPerSlice = kComputeUnits;
  p->numSlices = 1;
  p->timerResolution = 1; // ns per tick (a 1.x device reports nanoseconds here)
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = 64;
  fill_uuid(p->uuid.id, ZE_MAX_DEVICE_UUID_SIZE, uint8_t(d->ordinal));
  std::memset(p->name, 0, ZE_MAX_DEVICE_NAME);
  std::strncpy(p->name, kDeviceName, ZE_MAX_DEVICE_NAME - 1);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetComputeProperties(ze_device_handle_t h, ze_device_compute_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->maxTotalGroupSize = kMaxGroupSize;
  p->maxGroupSizeX = kMaxGroupSize;
  p->maxGroupSizeY = kMaxGroupSize;
  p->maxGroupSizeZ = 64;
  p->maxGroupCountX = UINT32_MAX;
  p->maxGroupCountY = UINT32_MAX;
  p->maxGroupCountZ = UINT32_MAX;
  p->maxSharedLocalMemory = kSharedLocalMemory;
  p->numSubGroupSizes = 1;
  std::memset(p->subGroupSizes, 0, sizeof(p->subGroupSizes));
  p->subGroupSizes[0] = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetModuleProperties(ze_device_handle_t h, ze_device_module_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->spirvVersionSupported = 0; // native modules only
  p->flags = ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
  p->fp16flags = 0;
  p->fp32flags =
      ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN | ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
  p->fp64flags = p->fp32flags;
  p->maxArgumentsSize = 4096;
  p->printfBufferSize = 0;
  std::memset(p->nativeKernelSupported.id, 0, ZE_MAX_NATIVE_KERNEL_UUID_SIZE);
  std::memcpy(p->nativeKernelSupported.id, "ordo-nc-abi-2", 13);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetCommandQueueGroupProperties(ze_device_handle_t h, uint32_t *pCount,
                                                            ze_command_queue_group_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*pCount == 0 || !p) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  *pCount = 1;
  p->flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
  p->maxMemoryFillPatternSize = 128;
  p->numQueues = 64;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetMemoryProperties(ze_device_handle_t h, uint32_t *pCount,
                                                 ze_device_memory_properties_t *p) {
  Device *d = as<Device>(h);
  if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*pCount == 0 || !p) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  *pCount = 1;
  p->flags = 0;
  p->maxClockRate = 0;
  p->maxBusWidth = 64;
  p->totalSize = d->memory_size;
  std::memset(p->name, 0, ZE_MAX_DEVICE_NAME);
  std::strncpy(p->name, "host memory", ZE_MAX_DEVICE_NAME - 1);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetMemoryAccessProperties(ze_device_handle_t h, ze_device_memory_access_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
                                           ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
                                           ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
  p->hostAllocCapabilities = all;
  p->deviceAllocCapabilities = all;
  p->sharedSingleDeviceAllocCapabilities = all;
  p->sharedCrossDeviceAllocCapabilities = all;
  p->sharedSystemAllocCapabilities = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetCacheProperties(ze_device_handle_t h, uint32_t *pCount,
                                                ze_device_cache_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*pCount == 0 || !p) {
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
  }
  *pCount = 1;
  p->flags = 0;
  p->cacheSize = 1 << 20;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetImageProperties(ze_device_handle_t h, ze_device_image_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->maxImageDims1D = p->maxImageDims2D = p->maxImageDims3D = 0; // no images
  p->maxImageBufferSize = 0;
  p->maxImageArraySlices = 0;
  p->maxSamplers = 0;
  p->maxReadImageArgs = p->maxWriteImageArgs = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetExternalMemoryProperties(ze_device_handle_t h,
                                                         ze_device_external_memory_properties_t *p) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->memoryAllocationImportTypes = p->memoryAllocationExportTypes = 0;
  p->imageImportTypes = p->imageExportTypes = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetP2PProperties(ze_device_handle_t a, ze_device_handle_t b,
                                              ze_device_p2p_properties_t *p) {
  if (!as<Device>(a) || !as<Device>(b)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS | ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceCanAccessPeer(ze_device_handle_t a, ze_device_handle_t b, ze_bool_t *v) {
  if (!as<Device>(a) || !as<Device>(b)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!v) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *v = 1; // one address space
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetStatus(ze_device_handle_t h) {
  return as<Device>(h) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// Host and device share one clock (CLOCK_MONOTONIC, ns).
ze_result_t ZE_APICALL DeviceGetGlobalTimestamps(ze_device_handle_t h, uint64_t *host, uint64_t *device) {
  if (!as<Device>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!host || !device) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *host = *device = now_ns();
  return ZE_RESULT_SUCCESS;
}

ze_result_t make_context(uint32_t n, ze_device_handle_t *devices, ze_context_handle_t *out) {
  auto *c = new Context();
  if (n == 0) {
    c->devices = the_driver().devices;
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      Device *d = as<Device>(devices[i]);
      if (!d) {
        delete c;
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
      }
      c->devices.push_back(d);
    }
  }
  *out = reinterpret_cast<ze_context_handle_t>(c);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ContextCreate(ze_driver_handle_t h, const ze_context_desc_t *desc, ze_context_handle_t *out) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return make_context(0, nullptr, out);
}

ze_result_t ZE_APICALL ContextCreateEx(ze_driver_handle_t h, const ze_context_desc_t *desc, uint32_t n,
                                       ze_device_handle_t *devices, ze_context_handle_t *out) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || (n && !devices)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return make_context(n, devices, out);
}

ze_result_t ZE_APICALL ContextDestroy(ze_context_handle_t h) {
  Context *c = as<Context>(h);
  if (!c) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  c->magic = 0;
  delete c;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ContextGetStatus(ze_context_handle_t h) {
  return as<Context>(h) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

ze_result_t ZE_APICALL ContextResidency(ze_context_handle_t h, ze_device_handle_t d, void *, size_t) {
  if (!as<Context>(h) || !as<Device>(d)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ZE_RESULT_SUCCESS; // host memory is always resident
}

ze_result_t ZE_APICALL ContextSystemBarrier(ze_context_handle_t h, ze_device_handle_t d) {
  if (!as<Context>(h) || !as<Device>(d)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ZE_RESULT_SUCCESS;
}

} // namespace

void install(ze_global_dditable_t &t) {
  t.pfnInit = Init;
#if ORDO_ZE_HEADERS_AT_LEAST(1, 10)
  t.pfnInitDrivers = InitDrivers;
#endif
}

void install(ze_driver_dditable_t &t) {
  t.pfnGet = DriverGet;
  t.pfnGetApiVersion = DriverGetApiVersion;
  t.pfnGetProperties = DriverGetProperties;
  t.pfnGetIpcProperties = DriverGetIpcProperties;
  t.pfnGetExtensionProperties = DriverGetExtensionProperties;
  t.pfnGetExtensionFunctionAddress = DriverGetExtensionFunctionAddress;
}

void install(ze_device_dditable_t &t) {
  t.pfnGet = DeviceGet;
  t.pfnGetSubDevices = DeviceGetSubDevices;
  t.pfnGetProperties = DeviceGetProperties;
  t.pfnGetComputeProperties = DeviceGetComputeProperties;
  t.pfnGetModuleProperties = DeviceGetModuleProperties;
  t.pfnGetCommandQueueGroupProperties = DeviceGetCommandQueueGroupProperties;
  t.pfnGetMemoryProperties = DeviceGetMemoryProperties;
  t.pfnGetMemoryAccessProperties = DeviceGetMemoryAccessProperties;
  t.pfnGetCacheProperties = DeviceGetCacheProperties;
  t.pfnGetImageProperties = DeviceGetImageProperties;
  t.pfnGetExternalMemoryProperties = DeviceGetExternalMemoryProperties;
  t.pfnGetP2PProperties = DeviceGetP2PProperties;
  t.pfnCanAccessPeer = DeviceCanAccessPeer;
  t.pfnGetStatus = DeviceGetStatus;
  t.pfnGetGlobalTimestamps = DeviceGetGlobalTimestamps;
#if ORDO_ZE_HEADERS_AT_LEAST(1, 7)
  t.pfnGetRootDevice = DeviceGetRootDevice;
#endif
}

void install(ze_context_dditable_t &t) {
  t.pfnCreate = ContextCreate;
  t.pfnCreateEx = ContextCreateEx;
  t.pfnDestroy = ContextDestroy;
  t.pfnGetStatus = ContextGetStatus;
  t.pfnSystemBarrier = ContextSystemBarrier;
  t.pfnMakeMemoryResident = ContextResidency;
  t.pfnEvictMemory = ContextResidency;
}

} // namespace zecpu
