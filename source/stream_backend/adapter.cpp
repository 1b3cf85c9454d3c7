// SPDX-License-Identifier: Apache-2.0
// The adapter handle, platform discovery and the dispatch table of an adapter on the
// stream backend.
#include <cstring>

#include "backend.hpp"
#include "ordo/adapter_logging.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"
#include "ur_common/table.hpp"

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
// Every slot the adapter implements; the table tail (ur_common/table.hpp) covers the rest.
void build_table(ur_dditable_t &t) {
  namespace sb = ordo::stream_backend;
  sb::install_adapter_entry_points(t);     // urAdapter*, urPlatform*, the logger callback
  sb::install_device_entry_points(t);      // urDevice*, urDeviceWaitExp
  sb::install_context_entry_points(t);     // urContext*
  sb::install_queue_entry_points(t);       // urQueue*
  sb::install_event_entry_points(t);       // urEvent*
  sb::install_wait_entry_points(t);        // urEnqueueEventsWait*, urEnqueueTimestampRecordingExp
  sb::install_enqueue_usm_entry_points(t); // urEnqueueUSM{Fill,Memcpy,Prefetch,Advise}[2D]
  sb::install_usm_entry_points(t);         // urUSM{Host,Device,Shared}Alloc, urUSMFree, urUSMGetMemAllocInfo
  sb::install_pool_entry_points(t);        // the twelve urUSMPool* of the stream-ordered layer
  sb::install_async_alloc_entry_points(t); // urEnqueueUSM*AllocExp, urEnqueueUSMFreeExp
  sb::install_program_entry_points(t);     // urProgram*
  sb::install_kernel_entry_points(t);      // urKernel*
  sb::install_launch_entry_points(t);      // urEnqueueKernelLaunchWithArgsExp
  sb::install_memory_entry_points(t);      // urMem* of buffers
  sb::install_enqueue_mem_entry_points(t); // urEnqueueMemBuffer*, urEnqueueMemUnmap
  sb::install_peer_entry_points(t);
  sb::install_ipc_entry_points(t);
  sb::install_virtual_mem_entry_points(t);
  ordo::command_buffer::install_entry_points(t,
                                             ordo::command_buffer::adapter_hooks{}); // no host tasks: no host functions
  ordo::derived::install_entry_points(t);
  ordo::command_buffer::install_graph_capture(t); // wraps the enqueues above: last
}
} // namespace

const ur_dditable_t &ordo::adapter_ddi() { return ordo::ur_common::table_built_once<build_table>(); }
