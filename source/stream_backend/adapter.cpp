// The adapter handle, platform discovery and the dispatch table of an adapter on the
// stream backend.
#include <cstring>

#include "backend.hpp"
#include "entry_points.hpp"
#include "ordo/adapter_logging.hpp"
#include "ordo/ddi_fill.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"

// Per adapter: the table's getters (proc_addr_getters.gen.cpp) read ordo::adapter_ddi(),
// which this file defines for whichever adapter links the backend.

namespace ordo::sb {

Logger &logger() {
  static Logger *log = new Logger(info().log_name);
  return *log;
}

Object::Object(Tag t) : HandleBase(&adapter_ddi()), tag(t) {}

namespace {
backend_info &info_storage() {
  static backend_info *i = new backend_info(drv::describe());
  return *i;
}
} // namespace

const backend_info &info() { return info_storage(); }

ur_result_t to_ur(status s) {
  switch (s.kind) {
  case err::none: return UR_RESULT_SUCCESS;
  case err::not_ready: return UR_RESULT_ERROR_INVALID_OPERATION;
  case err::not_found: return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  case err::out_of_memory: return UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  case err::invalid_value: return UR_RESULT_ERROR_INVALID_VALUE;
  case err::not_initialized: return UR_RESULT_ERROR_UNINITIALIZED;
  case err::invalid_device: return UR_RESULT_ERROR_INVALID_DEVICE;
  case err::invalid_context: return UR_RESULT_ERROR_INVALID_CONTEXT;
  case err::invalid_image: return UR_RESULT_ERROR_INVALID_BINARY;
  case err::build_failure: return UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  case err::no_compiler: return UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE;
  case err::invalid_handle: return UR_RESULT_ERROR_INVALID_ARGUMENT;
  case err::out_of_resources: return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  case err::device_lost: return UR_RESULT_ERROR_DEVICE_LOST;
  case err::not_supported: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  case err::other: break;
  }
  return UR_RESULT_ERROR_UNKNOWN;
}

Adapter *the_adapter() {
  static Adapter *adapter = new Adapter();
  return adapter;
}

namespace {

// Loads the driver and builds the platform once per process. With no usable
// driver or no device there is no platform, and one log line says why.
std::vector<Platform *> *discover() {
  auto *list = new std::vector<Platform *>();
  const char *backend = info().display_name;
  std::string why;
  if (!drv::load(why, info_storage().runtime_version)) {
    ORDO_LOG(logger(), warning, "no %s platform: %s", backend, why.c_str());
    return list;
  }
  int count = 0;
  status r = drv::device_count(&count);
  if (r || count == 0) {
    ORDO_LOG(logger(), warning, "no %s platform: %s", backend,
             r ? ("the device count query returned " + drv::error_text(r)).c_str()
               : "the driver reports no device");
    return list;
  }
  auto *platform = new Platform();
  for (int i = 0; i < count; ++i) {
    auto *d = new Device();
    d->platform = platform;
    d->ordinal = i;
    if (drv::device_get(i, &d->native)) {
      delete d;
      continue;
    }
    drv::read_facts(d->native, d->facts);
    platform->devices.push_back(d);
  }
  list->push_back(platform);
  ORDO_LOG(logger(), info, "%s %s, %zu device(s)", backend, info().runtime_version.c_str(),
           platform->devices.size());
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
  case UR_ADAPTER_INFO_BACKEND: return out.value(info().backend);
  case UR_ADAPTER_INFO_REFERENCE_COUNT: return out.value(a->count());
  case UR_ADAPTER_INFO_VERSION: return out.value(uint32_t{1});
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

} // namespace ordo::sb

// ---- the dispatch table ---------------------------------------------------------------

namespace {
// Every slot the adapter implements; fill_unsupported() covers the rest.
ur_dditable_t build_table() {
  ur_dditable_t t;
  std::memset(&t, 0, sizeof(t));
  t.Adapter.pfnGet = ordo::sb::urAdapterGet;
  t.Adapter.pfnRelease = ordo::sb::urAdapterRelease;
  t.Adapter.pfnRetain = ordo::sb::urAdapterRetain;
  t.Adapter.pfnGetLastError = ordo::sb::urAdapterGetLastError;
  t.Adapter.pfnGetInfo = ordo::sb::urAdapterGetInfo;
  // The runtime's urAdapterSetLoggerCallback: the adapter's log lines reach its callback.
  ordo::adapter_logging how;
  how.logger = ordo::sb::logger;
  how.is_adapter = [](ur_adapter_handle_t h) {
    return h == reinterpret_cast<ur_adapter_handle_t>(ordo::sb::the_adapter());
  };
  ordo::install_logger_entry_points(t, how);
  t.Platform.pfnGet = ordo::sb::urPlatformGet;
  t.Platform.pfnGetInfo = ordo::sb::urPlatformGetInfo;
  t.Platform.pfnGetNativeHandle = ordo::sb::urPlatformGetNativeHandle;
  t.Platform.pfnGetApiVersion = ordo::sb::urPlatformGetApiVersion;
  t.Platform.pfnGetBackendOption = ordo::sb::urPlatformGetBackendOption;
  t.Device.pfnGet = ordo::sb::urDeviceGet;
  t.Device.pfnGetInfo = ordo::sb::urDeviceGetInfo;
  t.Device.pfnRetain = ordo::sb::urDeviceRetain;
  t.Device.pfnRelease = ordo::sb::urDeviceRelease;
  t.Device.pfnSelectBinary = ordo::sb::urDeviceSelectBinary;
  t.Device.pfnGetNativeHandle = ordo::sb::urDeviceGetNativeHandle;
  t.Device.pfnGetGlobalTimestamps = ordo::sb::urDeviceGetGlobalTimestamps;
  t.DeviceExp.pfnWaitExp = ordo::sb::urDeviceWaitExp;
  t.Context.pfnCreate = ordo::sb::urContextCreate;
  t.Context.pfnRetain = ordo::sb::urContextRetain;
  t.Context.pfnRelease = ordo::sb::urContextRelease;
  t.Context.pfnGetInfo = ordo::sb::urContextGetInfo;
  t.Context.pfnGetNativeHandle = ordo::sb::urContextGetNativeHandle;
  t.Context.pfnSetExtendedDeleter = ordo::sb::urContextSetExtendedDeleter;
  t.Queue.pfnGetInfo = ordo::sb::urQueueGetInfo;
  t.Queue.pfnCreate = ordo::sb::urQueueCreate;
  t.Queue.pfnRetain = ordo::sb::urQueueRetain;
  t.Queue.pfnRelease = ordo::sb::urQueueRelease;
  t.Queue.pfnGetNativeHandle = ordo::sb::urQueueGetNativeHandle;
  t.Queue.pfnFinish = ordo::sb::urQueueFinish;
  t.Queue.pfnFlush = ordo::sb::urQueueFlush;
  t.Event.pfnGetInfo = ordo::sb::urEventGetInfo;
  t.Event.pfnGetProfilingInfo = ordo::sb::urEventGetProfilingInfo;
  t.Event.pfnWait = ordo::sb::urEventWait;
  t.Event.pfnRetain = ordo::sb::urEventRetain;
  t.Event.pfnRelease = ordo::sb::urEventRelease;
  t.Event.pfnGetNativeHandle = ordo::sb::urEventGetNativeHandle;
  t.Event.pfnCreateWithNativeHandle = ordo::sb::urEventCreateWithNativeHandle;
  t.Event.pfnSetCallback = ordo::sb::urEventSetCallback;
  t.Enqueue.pfnEventsWait = ordo::sb::urEnqueueEventsWait;
  t.Enqueue.pfnEventsWaitWithBarrier = ordo::sb::urEnqueueEventsWaitWithBarrier;
  t.Enqueue.pfnEventsWaitWithBarrierExt = ordo::sb::urEnqueueEventsWaitWithBarrierExt;
  t.EnqueueExp.pfnTimestampRecordingExp = ordo::sb::urEnqueueTimestampRecordingExp;
  t.Enqueue.pfnUSMFill = ordo::sb::urEnqueueUSMFill;
  t.Enqueue.pfnUSMMemcpy = ordo::sb::urEnqueueUSMMemcpy;
  t.Enqueue.pfnUSMPrefetch = ordo::sb::urEnqueueUSMPrefetch;
  t.Enqueue.pfnUSMAdvise = ordo::sb::urEnqueueUSMAdvise;
  t.Enqueue.pfnUSMFill2D = ordo::sb::urEnqueueUSMFill2D;
  t.Enqueue.pfnUSMMemcpy2D = ordo::sb::urEnqueueUSMMemcpy2D;
  t.USM.pfnHostAlloc = ordo::sb::urUSMHostAlloc;
  t.USM.pfnDeviceAlloc = ordo::sb::urUSMDeviceAlloc;
  t.USM.pfnSharedAlloc = ordo::sb::urUSMSharedAlloc;
  t.USM.pfnFree = ordo::sb::urUSMFree;
  t.USM.pfnGetMemAllocInfo = ordo::sb::urUSMGetMemAllocInfo;
  ordo::sb::install_pool_entry_points(t); // the twelve urUSMPool* of the stream-ordered layer
  t.EnqueueExp.pfnUSMDeviceAllocExp = ordo::sb::urEnqueueUSMDeviceAllocExp;
  t.EnqueueExp.pfnUSMSharedAllocExp = ordo::sb::urEnqueueUSMSharedAllocExp;
  t.EnqueueExp.pfnUSMHostAllocExp = ordo::sb::urEnqueueUSMHostAllocExp;
  t.EnqueueExp.pfnUSMFreeExp = ordo::sb::urEnqueueUSMFreeExp;
  t.Program.pfnCreateWithIL = ordo::sb::urProgramCreateWithIL;
  t.Program.pfnCreateWithBinary = ordo::sb::urProgramCreateWithBinary;
  t.Program.pfnBuild = ordo::sb::urProgramBuild;
  t.ProgramExp.pfnBuildExp = ordo::sb::urProgramBuildExp;
  t.ProgramExp.pfnCompileExp = ordo::sb::urProgramCompileExp;
  t.Program.pfnRetain = ordo::sb::urProgramRetain;
  t.Program.pfnRelease = ordo::sb::urProgramRelease;
  t.Program.pfnGetFunctionPointer = ordo::sb::urProgramGetFunctionPointer;
  t.Program.pfnGetInfo = ordo::sb::urProgramGetInfo;
  t.Program.pfnGetBuildInfo = ordo::sb::urProgramGetBuildInfo;
  t.Program.pfnGetNativeHandle = ordo::sb::urProgramGetNativeHandle;
  t.Kernel.pfnCreate = ordo::sb::urKernelCreate;
  t.Kernel.pfnGetInfo = ordo::sb::urKernelGetInfo;
  t.Kernel.pfnGetGroupInfo = ordo::sb::urKernelGetGroupInfo;
  t.Kernel.pfnGetSubGroupInfo = ordo::sb::urKernelGetSubGroupInfo;
  t.Kernel.pfnRetain = ordo::sb::urKernelRetain;
  t.Kernel.pfnRelease = ordo::sb::urKernelRelease;
  t.Kernel.pfnGetNativeHandle = ordo::sb::urKernelGetNativeHandle;
  t.Kernel.pfnGetSuggestedLocalWorkSize = ordo::sb::urKernelGetSuggestedLocalWorkSize;
  t.Kernel.pfnGetSuggestedLocalWorkSizeWithArgs = ordo::sb::urKernelGetSuggestedLocalWorkSizeWithArgs;
  t.Kernel.pfnSetExecInfo = ordo::sb::urKernelSetExecInfo;
  t.Kernel.pfnSuggestMaxCooperativeGroupCount = ordo::sb::urKernelSuggestMaxCooperativeGroupCount;
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = ordo::sb::urEnqueueKernelLaunchWithArgsExp;
  ordo::sb::install_memory_entry_points(t);
  ordo::sb::install_enqueue_mem_entry_points(t);
  ordo::sb::install_peer_entry_points(t);
  ordo::cb::install_entry_points(t, ordo::cb::adapter_hooks{}); // no host tasks: no host functions
  ordo::derived::install_entry_points(t);
  ordo::fill_unsupported(t);
  return t;
}
} // namespace

const ur_dditable_t &ordo::adapter_ddi() {
  static const ur_dditable_t table = build_table();
  return table;
}
