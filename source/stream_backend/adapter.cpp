// SPDX-License-Identifier: Apache-2.0
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

namespace ordo::stream_backend {

Logger &logger() {
  static Logger *log = new Logger(info().log_name);
  return *log;
}

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
  case err::already_registered:
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
    log_no_platform(logger(), backend,
                    drv::not_installed() ? no_platform_cause::not_installed : no_platform_cause::failed, why);
    return list;
  }
  int count = 0;
  status r = drv::device_count(&count);
  if (r || count == 0) {
    if (r)
      log_no_platform(logger(), backend, no_platform_cause::failed,
                      "the device count query returned " + drv::error_text(r));
    else
      log_no_platform(logger(), backend, no_platform_cause::not_installed, "the driver reports no device");
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
  ORDO_LOG(logger(), info, "%s %s, %zu device(s)", backend, info().runtime_version.c_str(), platform->devices.size());
  return list;
}

} // namespace

const std::vector<Platform *> &platforms() {
  static std::vector<Platform *> *list = discover();
  return *list;
}

} // namespace ordo::stream_backend

// ---- the dispatch table ---------------------------------------------------------------

namespace {
// Every slot the adapter implements; fill_unsupported() covers the rest.
ur_dditable_t build_table() {
  ur_dditable_t t;
  std::memset(&t, 0, sizeof(t));
  ordo::stream_backend::install_adapter_entry_points(t); // urAdapter*, urPlatform*, the logger callback
  t.Device.pfnGet = ordo::stream_backend::urDeviceGet;
  t.Device.pfnGetInfo = ordo::stream_backend::urDeviceGetInfo;
  t.Device.pfnRetain = ordo::stream_backend::urDeviceRetain;
  t.Device.pfnRelease = ordo::stream_backend::urDeviceRelease;
  t.Device.pfnSelectBinary = ordo::stream_backend::urDeviceSelectBinary;
  t.Device.pfnGetNativeHandle = ordo::stream_backend::urDeviceGetNativeHandle;
  t.Device.pfnCreateWithNativeHandle = ordo::stream_backend::urDeviceCreateWithNativeHandle;
  t.Device.pfnGetGlobalTimestamps = ordo::stream_backend::urDeviceGetGlobalTimestamps;
  t.DeviceExp.pfnWaitExp = ordo::stream_backend::urDeviceWaitExp;
  ordo::stream_backend::install_context_entry_points(t); // urContext*
  t.Queue.pfnGetInfo = ordo::stream_backend::urQueueGetInfo;
  t.Queue.pfnCreate = ordo::stream_backend::urQueueCreate;
  t.Queue.pfnRetain = ordo::stream_backend::urQueueRetain;
  t.Queue.pfnRelease = ordo::stream_backend::urQueueRelease;
  t.Queue.pfnGetNativeHandle = ordo::stream_backend::urQueueGetNativeHandle;
  t.Queue.pfnCreateWithNativeHandle = ordo::stream_backend::urQueueCreateWithNativeHandle;
  t.Queue.pfnFinish = ordo::stream_backend::urQueueFinish;
  t.Queue.pfnFlush = ordo::stream_backend::urQueueFlush;
  t.Event.pfnGetInfo = ordo::stream_backend::urEventGetInfo;
  t.Event.pfnGetProfilingInfo = ordo::stream_backend::urEventGetProfilingInfo;
  t.Event.pfnWait = ordo::stream_backend::urEventWait;
  t.Event.pfnRetain = ordo::stream_backend::urEventRetain;
  t.Event.pfnRelease = ordo::stream_backend::urEventRelease;
  t.Event.pfnGetNativeHandle = ordo::stream_backend::urEventGetNativeHandle;
  t.Event.pfnCreateWithNativeHandle = ordo::stream_backend::urEventCreateWithNativeHandle;
  t.Event.pfnSetCallback = ordo::stream_backend::urEventSetCallback;
  ordo::stream_backend::install_wait_entry_points(t); // urEnqueueEventsWait*
  t.EnqueueExp.pfnTimestampRecordingExp = ordo::stream_backend::urEnqueueTimestampRecordingExp;
  t.Enqueue.pfnUSMFill = ordo::stream_backend::urEnqueueUSMFill;
  t.Enqueue.pfnUSMMemcpy = ordo::stream_backend::urEnqueueUSMMemcpy;
  t.Enqueue.pfnUSMPrefetch = ordo::stream_backend::urEnqueueUSMPrefetch;
  t.Enqueue.pfnUSMAdvise = ordo::stream_backend::urEnqueueUSMAdvise;
  t.Enqueue.pfnUSMFill2D = ordo::stream_backend::urEnqueueUSMFill2D;
  t.Enqueue.pfnUSMMemcpy2D = ordo::stream_backend::urEnqueueUSMMemcpy2D;
  ordo::stream_backend::install_usm_entry_points(t);  // urUSM{Host,Device,Shared}Alloc, urUSMFree, urUSMGetMemAllocInfo
  ordo::stream_backend::install_pool_entry_points(t); // the twelve urUSMPool* of the stream-ordered layer
  ordo::stream_backend::install_async_alloc_entry_points(t); // urEnqueueUSM*AllocExp, urEnqueueUSMFreeExp
  ordo::stream_backend::install_program_entry_points(t);     // urProgram*
  t.Kernel.pfnCreate = ordo::stream_backend::urKernelCreate;
  t.Kernel.pfnCreateWithNativeHandle = ordo::stream_backend::urKernelCreateWithNativeHandle;
  ordo::stream_backend::install_kernel_entry_points(t); // the bookkeeping urKernel*
  t.Kernel.pfnSetExecInfo = ordo::stream_backend::urKernelSetExecInfo;
  t.Kernel.pfnSuggestMaxCooperativeGroupCount = ordo::stream_backend::urKernelSuggestMaxCooperativeGroupCount;
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = ordo::stream_backend::urEnqueueKernelLaunchWithArgsExp;
  ordo::stream_backend::install_memory_entry_points(t);
  ordo::stream_backend::install_enqueue_mem_entry_points(t);
  ordo::stream_backend::install_peer_entry_points(t);
  ordo::stream_backend::install_ipc_entry_points(t);
  ordo::stream_backend::install_virtual_mem_entry_points(t);
  ordo::command_buffer::install_entry_points(t,
                                             ordo::command_buffer::adapter_hooks{}); // no host tasks: no host functions
  ordo::derived::install_entry_points(t);
  ordo::command_buffer::install_graph_capture(t); // wraps the enqueues above: last
  ordo::fill_unsupported(t);
  return t;
}
} // namespace

const ur_dditable_t &ordo::adapter_ddi() {
  static const ur_dditable_t table = build_table();
  return table;
}
