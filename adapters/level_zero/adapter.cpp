// SPDX-License-Identifier: Apache-2.0
// The adapter handle, platform discovery and the dispatch table.
#include <cstring>

#include "common.hpp"
#include "ordo/adapter_logging.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"
#include "ur_common/table.hpp"

namespace ordo::level_zero {

Logger &logger() {
  static Logger *log = new Logger("level_zero");
  return *log;
}

Adapter *the_adapter() {
  static Adapter *adapter = new Adapter();
  return adapter;
}

namespace {

// Reads what the device info queries need once.
void read_facts(Device &d) {
  Ze &z = ze();
  DeviceFacts &f = d.facts;
  f.props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  z.zeDeviceGetProperties(d.ze, &f.props);
  f.compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  z.zeDeviceGetComputeProperties(d.ze, &f.compute);
  f.module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  z.zeDeviceGetModuleProperties(d.ze, &f.module);
  f.access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
  z.zeDeviceGetMemoryAccessProperties(d.ze, &f.access);
  uint32_t n = 0;
  if (z.zeDeviceGetMemoryProperties(d.ze, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<ze_device_memory_properties_t> mem(n);
    for (auto &m : mem) m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    if (z.zeDeviceGetMemoryProperties(d.ze, &n, mem.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n; ++i) f.total_mem += mem[i].totalSize;
  }
  n = 0;
  if (z.zeDeviceGetCacheProperties(d.ze, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<ze_device_cache_properties_t> c(n);
    for (auto &e : c) e.stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES;
    if (z.zeDeviceGetCacheProperties(d.ze, &n, c.data()) == ZE_RESULT_SUCCESS) f.cache_size = c[n - 1].cacheSize;
  }
  // Every list goes to the first group that can compute.
  n = 0;
  if (z.zeDeviceGetCommandQueueGroupProperties(d.ze, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<ze_command_queue_group_properties_t> g(n);
    for (auto &e : g) e.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    if (z.zeDeviceGetCommandQueueGroupProperties(d.ze, &n, g.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n; ++i)
        if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
          f.compute_ordinal = i;
          f.fill_pattern_max = uint32_t(g[i].maxMemoryFillPatternSize);
          break;
        }
  }
}

// Loads the Level Zero loader and builds one platform per driver that reports a
// device. With none there is no platform, and one log line says why.
std::vector<Platform *> *discover() {
  auto *list = new std::vector<Platform *>();
  Ze &z = ze();
  if (!z.load()) {
    log_no_platform(logger(), "Level Zero",
                    z.not_installed ? no_platform_cause::not_installed : no_platform_cause::failed, z.why());
    return list;
  }
  uint32_t n = 0;
  ze_result_t r = z.zeDriverGet(&n, nullptr);
  std::vector<ze_driver_handle_t> drivers(n);
  if (r == ZE_RESULT_SUCCESS && n) r = z.zeDriverGet(&n, drivers.data());
  if (r != ZE_RESULT_SUCCESS || n == 0) {
    if (r != ZE_RESULT_SUCCESS)
      log_no_platform(logger(), "Level Zero", no_platform_cause::failed, "zeDriverGet returned " + error_text(r));
    else
      log_no_platform(logger(), "Level Zero", no_platform_cause::not_installed, "the loader reports no driver");
    return list;
  }
  for (ze_driver_handle_t drv : drivers) {
    uint32_t nd = 0;
    if (z.zeDeviceGet(drv, &nd, nullptr) != ZE_RESULT_SUCCESS || nd == 0) continue;
    std::vector<ze_device_handle_t> devs(nd);
    if (z.zeDeviceGet(drv, &nd, devs.data()) != ZE_RESULT_SUCCESS) continue;
    auto *platform = new Platform();
    platform->driver = drv;
    z.zeDriverGetApiVersion(drv, &platform->api_version);
    ze_driver_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    if (z.zeDriverGetProperties(drv, &props) == ZE_RESULT_SUCCESS) platform->driver_version = props.driverVersion;
    for (ze_device_handle_t zd : devs) {
      auto *d = new Device();
      d->platform = platform;
      d->ze = zd;
      read_facts(*d);
      platform->devices.push_back(d);
    }
    list->push_back(platform);
    ORDO_LOG(logger(), info, "Level Zero driver %u (API %u.%u): %zu device(s), the first '%s'",
             platform->driver_version, ZE_MAJOR_VERSION(platform->api_version), ZE_MINOR_VERSION(platform->api_version),
             platform->devices.size(), platform->devices[0]->facts.props.name);
  }
  if (list->empty())
    log_no_platform(logger(), "Level Zero", no_platform_cause::not_installed, "no driver reports a device");
  return list;
}

} // namespace

const std::vector<Platform *> &platforms() {
  static std::vector<Platform *> *list = discover();
  return *list;
}

} // namespace ordo::level_zero

// ---- the dispatch table ---------------------------------------------------------------

namespace {
// Every slot the adapter implements; the table tail (ur_common/table.hpp) covers the rest.
void build_table(ur_dditable_t &t) {
  namespace lz = ordo::level_zero;
  lz::install_adapter_entry_points(t);     // urAdapter*, urPlatform*, the logger callback
  lz::install_device_entry_points(t);      // urDevice*
  lz::install_context_entry_points(t);     // urContext*
  lz::install_queue_entry_points(t);       // urQueue*
  lz::install_event_entry_points(t);       // urEvent*
  lz::install_wait_entry_points(t);        // urEnqueueEventsWait*
  lz::install_enqueue_usm_entry_points(t); // urEnqueueUSM{Fill,Memcpy,Prefetch,Advise}[2D]
  lz::install_memory_entry_points(t);      // urMem* (buffers; images unsupported)
  lz::install_enqueue_mem_entry_points(t); // urEnqueueMemBuffer*, urEnqueueMemUnmap
  lz::install_usm_entry_points(t);         // urUSM{Host,Device,Shared}Alloc, urUSMFree, urUSMGetMemAllocInfo
  lz::install_pool_entry_points(t);        // the twelve urUSMPool* of the stream-ordered layer
  lz::install_async_alloc_entry_points(t); // urEnqueueUSM*AllocExp, urEnqueueUSMFreeExp
  lz::install_program_entry_points(t);     // urProgram*
  lz::install_kernel_entry_points(t);      // urKernel*
  lz::install_launch_entry_points(t);      // urEnqueueKernelLaunchWithArgsExp
  lz::install_host_task_entry_points(t);   // urEnqueueHostTaskExp
  // Command buffers recorded once and replayed through the entries above (host
  // functions as host tasks), then the entry points derived from the others.
  ordo::command_buffer::adapter_hooks command_buffers;
  command_buffers.host_functions = true;
  ordo::command_buffer::install_entry_points(t, command_buffers);
  ordo::derived::install_entry_points(t);
  ordo::command_buffer::install_graph_capture(t); // wraps the enqueues above: last
}
} // namespace

const ur_dditable_t &ordo::adapter_ddi() { return ordo::ur_common::table_built_once<build_table>(); }
