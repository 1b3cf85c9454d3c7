// The adapter handle, platform discovery and the dispatch table.
#include <cstring>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/adapter_logging.hpp"
#include "ordo/ddi_fill.hpp"
#include "ordo/info.hpp"

namespace ordo::cuda {

Logger &logger() {
  static Logger *log = new Logger("cuda");
  return *log;
}

Object::Object(Tag t) : HandleBase(&adapter_ddi()), tag(t) {}

Adapter *the_adapter() {
  static Adapter *adapter = new Adapter();
  return adapter;
}

namespace {

// Reads what the device info queries need once; none of these needs a context.
void read_facts(Device &d) {
  Driver &cu = drv();
  DeviceFacts &f = d.facts;
  char name[256] = {};
  if (cu.cuDeviceGetName(name, sizeof(name), d.cu) == CUDA_SUCCESS) f.name = name;
  cu.cuDeviceTotalMem(&f.total_mem, d.cu);
  CUuuid uuid{};
  if (cu.cuDeviceGetUuid(&uuid, d.cu) == CUDA_SUCCESS) std::memcpy(f.uuid, uuid.bytes, 16);
  char pci[64] = {};
  if (cu.cuDeviceGetPCIBusId(pci, sizeof(pci), d.cu) == CUDA_SUCCESS) f.pci_address = pci;

  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    return cu.cuDeviceGetAttribute(&v, a, d.cu) == CUDA_SUCCESS ? v : 0;
  };
  f.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  f.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  f.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  f.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  f.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  f.block_dim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  f.block_dim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  f.block_dim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  f.grid_dim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  f.grid_dim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  f.grid_dim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  f.shared_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  f.shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  f.regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  f.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  f.mem_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  f.bus_width = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  f.l2_size = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  f.const_mem = attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  f.ecc = attr(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
  f.integrated = attr(CU_DEVICE_ATTRIBUTE_INTEGRATED);
  f.managed = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  f.concurrent_managed = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
  f.pageable_access = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
  f.host_native_atomics = attr(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
  f.cooperative = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
  f.pci_device_id = static_cast<uint32_t>(attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID));
}

// Loads the driver and builds the platform once per process. With no usable
// driver or no device there is no platform, and one log line says why.
std::vector<Platform *> *discover() {
  auto *list = new std::vector<Platform *>();
  Driver &cu = drv();
  if (!cu.load()) {
    ORDO_LOG(logger(), warning, "no CUDA platform: %s", cu.why().c_str());
    return list;
  }
  int count = 0;
  CUresult r = cu.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    ORDO_LOG(logger(), warning, "no CUDA platform: %s",
             r != CUDA_SUCCESS ? ("cuDeviceGetCount returned " + error_text(r)).c_str()
                               : "the driver reports no device");
    return list;
  }
  auto *platform = new Platform();
  for (int i = 0; i < count; ++i) {
    auto *d = new Device();
    d->platform = platform;
    d->ordinal = i;
    if (cu.cuDeviceGet(&d->cu, i) != CUDA_SUCCESS) {
      delete d;
      continue;
    }
    read_facts(*d);
    platform->devices.push_back(d);
  }
  list->push_back(platform);
  ORDO_LOG(logger(), info, "CUDA driver %d.%d, %zu device(s)", cu.driver_version / 1000,
           cu.driver_version % 1000 / 10, platform->devices.size());
  return list;
}

} // namespace

const std::vector<Platform *> &platforms() {
  static std::vector<Platform *> *list = discover();
  return *list;
}

// ---- urAdapter* ---------------------------------------------------------------------

ur_result_t UR_APICALL urAdapterGet(uint32_t NumEntries, ur_adapter_handle_t *phAdapters,
                                    uint32_t *pNumAdapters) {
  if (NumEntries == 0 && phAdapters) return UR_RESULT_ERROR_INVALID_SIZE;
  if (phAdapters) {
    // Discovery runs here so its log line appears once, at the first get.
    platforms();
    the_adapter()->retain();
    phAdapters[0] = reinterpret_cast<ur_adapter_handle_t>(the_adapter());
  }
  if (pNumAdapters) *pNumAdapters = 1;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterRelease(ur_adapter_handle_t hAdapter) {
  ORDO_UNWRAP(Adapter, a, hAdapter);
  // The adapter's state lives for the process: handles stay valid across gets.
  if (a->count() == 0) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  a->release();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterRetain(ur_adapter_handle_t hAdapter) {
  ORDO_UNWRAP(Adapter, a, hAdapter);
  a->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterGetLastError(ur_adapter_handle_t hAdapter, const char **ppMessage,
                                             int32_t *pError) {
  ORDO_UNWRAP(Adapter, a, hAdapter);
  (void)a;
  if (!ppMessage || !pError) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // No entry point returns UR_RESULT_ERROR_ADAPTER_SPECIFIC, so there is never one.
  *ppMessage = "";
  *pError = 0;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterGetInfo(ur_adapter_handle_t hAdapter, ur_adapter_info_t propName,
                                        size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Adapter, a, hAdapter);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_ADAPTER_INFO_BACKEND: return out.value(UR_BACKEND_CUDA);
  case UR_ADAPTER_INFO_REFERENCE_COUNT: return out.value(a->count());
  case UR_ADAPTER_INFO_VERSION: return out.value(uint32_t{1});
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

} // namespace ordo::cuda

// ---- the dispatch table ---------------------------------------------------------------

namespace {
// Every slot the adapter implements; fill_unsupported() covers the rest.
ur_dditable_t build_table() {
  ur_dditable_t t;
  std::memset(&t, 0, sizeof(t));
  t.Adapter.pfnGet = ordo::cuda::urAdapterGet;
  t.Adapter.pfnRelease = ordo::cuda::urAdapterRelease;
  t.Adapter.pfnRetain = ordo::cuda::urAdapterRetain;
  t.Adapter.pfnGetLastError = ordo::cuda::urAdapterGetLastError;
  t.Adapter.pfnGetInfo = ordo::cuda::urAdapterGetInfo;
  // The runtime's urAdapterSetLoggerCallback: the adapter's log lines reach its callback.
  ordo::adapter_logging how;
  how.logger = ordo::cuda::logger;
  how.is_adapter = [](ur_adapter_handle_t h) {
    return h == reinterpret_cast<ur_adapter_handle_t>(ordo::cuda::the_adapter());
  };
  ordo::install_logger_entry_points(t, how);
  t.Platform.pfnGet = ordo::cuda::urPlatformGet;
  t.Platform.pfnGetInfo = ordo::cuda::urPlatformGetInfo;
  t.Platform.pfnGetNativeHandle = ordo::cuda::urPlatformGetNativeHandle;
  t.Platform.pfnGetApiVersion = ordo::cuda::urPlatformGetApiVersion;
  t.Platform.pfnGetBackendOption = ordo::cuda::urPlatformGetBackendOption;
  t.Device.pfnGet = ordo::cuda::urDeviceGet;
  t.Device.pfnGetInfo = ordo::cuda::urDeviceGetInfo;
  t.Device.pfnRetain = ordo::cuda::urDeviceRetain;
  t.Device.pfnRelease = ordo::cuda::urDeviceRelease;
  t.Device.pfnSelectBinary = ordo::cuda::urDeviceSelectBinary;
  t.Device.pfnGetNativeHandle = ordo::cuda::urDeviceGetNativeHandle;
  t.Device.pfnGetGlobalTimestamps = ordo::cuda::urDeviceGetGlobalTimestamps;
  t.DeviceExp.pfnWaitExp = ordo::cuda::urDeviceWaitExp;
  t.Context.pfnCreate = ordo::cuda::urContextCreate;
  t.Context.pfnRetain = ordo::cuda::urContextRetain;
  t.Context.pfnRelease = ordo::cuda::urContextRelease;
  t.Context.pfnGetInfo = ordo::cuda::urContextGetInfo;
  t.Context.pfnGetNativeHandle = ordo::cuda::urContextGetNativeHandle;
  t.Context.pfnSetExtendedDeleter = ordo::cuda::urContextSetExtendedDeleter;
  t.Queue.pfnGetInfo = ordo::cuda::urQueueGetInfo;
  t.Queue.pfnCreate = ordo::cuda::urQueueCreate;
  t.Queue.pfnRetain = ordo::cuda::urQueueRetain;
  t.Queue.pfnRelease = ordo::cuda::urQueueRelease;
  t.Queue.pfnGetNativeHandle = ordo::cuda::urQueueGetNativeHandle;
  t.Queue.pfnFinish = ordo::cuda::urQueueFinish;
  t.Queue.pfnFlush = ordo::cuda::urQueueFlush;
  t.Event.pfnGetInfo = ordo::cuda::urEventGetInfo;
  t.Event.pfnGetProfilingInfo = ordo::cuda::urEventGetProfilingInfo;
  t.Event.pfnWait = ordo::cuda::urEventWait;
  t.Event.pfnRetain = ordo::cuda::urEventRetain;
  t.Event.pfnRelease = ordo::cuda::urEventRelease;
  t.Event.pfnGetNativeHandle = ordo::cuda::urEventGetNativeHandle;
  t.Event.pfnCreateWithNativeHandle = ordo::cuda::urEventCreateWithNativeHandle;
  t.Event.pfnSetCallback = ordo::cuda::urEventSetCallback;
  t.Enqueue.pfnEventsWait = ordo::cuda::urEnqueueEventsWait;
  t.Enqueue.pfnEventsWaitWithBarrier = ordo::cuda::urEnqueueEventsWaitWithBarrier;
  t.Enqueue.pfnEventsWaitWithBarrierExt = ordo::cuda::urEnqueueEventsWaitWithBarrierExt;
  t.EnqueueExp.pfnTimestampRecordingExp = ordo::cuda::urEnqueueTimestampRecordingExp;
  t.Enqueue.pfnUSMFill = ordo::cuda::urEnqueueUSMFill;
  t.Enqueue.pfnUSMMemcpy = ordo::cuda::urEnqueueUSMMemcpy;
  t.Enqueue.pfnUSMPrefetch = ordo::cuda::urEnqueueUSMPrefetch;
  t.Enqueue.pfnUSMAdvise = ordo::cuda::urEnqueueUSMAdvise;
  t.Enqueue.pfnUSMFill2D = ordo::cuda::urEnqueueUSMFill2D;
  t.Enqueue.pfnUSMMemcpy2D = ordo::cuda::urEnqueueUSMMemcpy2D;
  t.USM.pfnHostAlloc = ordo::cuda::urUSMHostAlloc;
  t.USM.pfnDeviceAlloc = ordo::cuda::urUSMDeviceAlloc;
  t.USM.pfnSharedAlloc = ordo::cuda::urUSMSharedAlloc;
  t.USM.pfnFree = ordo::cuda::urUSMFree;
  t.USM.pfnGetMemAllocInfo = ordo::cuda::urUSMGetMemAllocInfo;
  ordo::cuda::install_pool_entry_points(t); // the twelve urUSMPool* of the stream-ordered layer
  t.EnqueueExp.pfnUSMDeviceAllocExp = ordo::cuda::urEnqueueUSMDeviceAllocExp;
  t.EnqueueExp.pfnUSMSharedAllocExp = ordo::cuda::urEnqueueUSMSharedAllocExp;
  t.EnqueueExp.pfnUSMHostAllocExp = ordo::cuda::urEnqueueUSMHostAllocExp;
  t.EnqueueExp.pfnUSMFreeExp = ordo::cuda::urEnqueueUSMFreeExp;
  t.Program.pfnCreateWithIL = ordo::cuda::urProgramCreateWithIL;
  t.Program.pfnCreateWithBinary = ordo::cuda::urProgramCreateWithBinary;
  t.Program.pfnBuild = ordo::cuda::urProgramBuild;
  t.ProgramExp.pfnBuildExp = ordo::cuda::urProgramBuildExp;
  t.Program.pfnRetain = ordo::cuda::urProgramRetain;
  t.Program.pfnRelease = ordo::cuda::urProgramRelease;
  t.Program.pfnGetFunctionPointer = ordo::cuda::urProgramGetFunctionPointer;
  t.Program.pfnGetInfo = ordo::cuda::urProgramGetInfo;
  t.Program.pfnGetBuildInfo = ordo::cuda::urProgramGetBuildInfo;
  t.Program.pfnGetNativeHandle = ordo::cuda::urProgramGetNativeHandle;
  t.Kernel.pfnCreate = ordo::cuda::urKernelCreate;
  t.Kernel.pfnGetInfo = ordo::cuda::urKernelGetInfo;
  t.Kernel.pfnGetGroupInfo = ordo::cuda::urKernelGetGroupInfo;
  t.Kernel.pfnGetSubGroupInfo = ordo::cuda::urKernelGetSubGroupInfo;
  t.Kernel.pfnRetain = ordo::cuda::urKernelRetain;
  t.Kernel.pfnRelease = ordo::cuda::urKernelRelease;
  t.Kernel.pfnGetNativeHandle = ordo::cuda::urKernelGetNativeHandle;
  t.Kernel.pfnGetSuggestedLocalWorkSize = ordo::cuda::urKernelGetSuggestedLocalWorkSize;
  t.Kernel.pfnGetSuggestedLocalWorkSizeWithArgs = ordo::cuda::urKernelGetSuggestedLocalWorkSizeWithArgs;
  t.Kernel.pfnSetExecInfo = ordo::cuda::urKernelSetExecInfo;
  t.Kernel.pfnSuggestMaxCooperativeGroupCount = ordo::cuda::urKernelSuggestMaxCooperativeGroupCount;
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = ordo::cuda::urEnqueueKernelLaunchWithArgsExp;
  ordo::fill_unsupported(t);
  return t;
}
} // namespace

const ur_dditable_t &ordo::adapter_ddi() {
  static const ur_dditable_t table = build_table();
  return table;
}
