// SPDX-License-Identifier: Apache-2.0
// The adapter, its one platform and its one dispatch table (every handle points at it:
// handle-first dispatch). urAdapter* and urPlatform* are ur_common/adapter.hpp's; the
// first reference to the adapter starts the worker pool and the last one stops it
// (docs/native-cpu.md).
#include <cstring>

#include "entry_points.hpp"
#include "logging.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"
#include "platform.hpp"
#include "ur_common/adapter.hpp"
#include "ur_common/table.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

struct adapter_hooks {
  using Adapter = ordo::native_cpu::Adapter;
  using Platform = ordo::native_cpu::Platform;
  static Adapter *the_adapter() { return &ordo::native_cpu::the_adapter(); }
  static const std::vector<Platform *> &platforms() {
    static const std::vector<Platform *> list{&the_platform()};
    return list;
  }
  static ordo::Logger &logger() { return ordo::native_cpu::logger(); }
  static ur_backend_t backend() { return UR_BACKEND_NATIVE_CPU; }
  static std::string name(const Platform *) { return "Ordo native CPU"; }
  static std::string vendor(const Platform *) { return "Ordo"; }
  static std::string version(const Platform *) { return "0.12.0"; }
  // The native object of a native CPU handle is the adapter's object itself.
  static ur_result_t native_handle(Platform *p, ur_native_handle_t *out) {
    *out = reinterpret_cast<ur_native_handle_t>(p);
    return UR_RESULT_SUCCESS;
  }
  // urAdapterRetain / Release of an adapter never obtained from urAdapterGet: UNINITIALIZED.
  static ur_result_t retain_adapter(Adapter *a, bool by_get) {
    std::lock_guard<std::mutex> lock(a->mu);
    if (!by_get && a->count() == 0) return UR_RESULT_ERROR_UNINITIALIZED;
    if (a->count() == 0) WorkerPool::instance().acquire();
    a->retain();
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t release_adapter(Adapter *a) {
    std::lock_guard<std::mutex> lock(a->mu);
    if (a->count() == 0) return UR_RESULT_ERROR_UNINITIALIZED;
    if (a->release()) WorkerPool::instance().release(); // runs what is queued, then joins
    return UR_RESULT_SUCCESS;
  }
  // Kernels here are already machine code: each option a compiler knows maps to nothing.
  static bool backend_option(const char *frontend, const char **platform_option) {
    static const char *const known[] = {
        "-O0", "-O1", "-O2", "-O3", "-ftarget-compile-fast", "-foffload-fp32-prec-div", "-foffload-fp32-prec-sqrt"};
    for (const char *k : known) {
      if (std::strcmp(frontend, k) == 0) {
        *platform_option = "";
        return true;
      }
    }
    return false;
  }
};

} // namespace

ordo::Logger &logger() {
  static ordo::Logger *logger = new ordo::Logger("native_cpu"); // outlives static destructors
  return *logger;
}

void build_table(ur_dditable_t &t) {
  ordo::ur_common::adapter_entry_points<adapter_hooks>::install(t);
  install_device_entry_points(t);
  install_context_entry_points(t);
  install_queue_entry_points(t);
  install_event_entry_points(t);
  install_usm_entry_points(t);
  install_enqueue_entry_points(t);
  install_enqueue_usm_entry_points(t);
  install_memory_entry_points(t);
  install_enqueue_mem_entry_points(t);
  install_program_entry_points(t);
  install_kernel_entry_points(t);
  install_launch_entry_points(t);
  install_async_alloc_entry_points(t);
  // Command buffers are recorded by the shared layer and each enqueue replays them through
  // the entry points above: every recorded command is one task of the scheduler, its sync
  // points its dependencies; a native command is a host task (docs/native-cpu.md).
  ordo::command_buffer::adapter_hooks command_buffer_hooks;
  command_buffer_hooks.host_functions = true;
  ordo::command_buffer::install_entry_points(t, command_buffer_hooks);
  install_virtual_mem_entry_points(t);
  install_native_handle_entry_points(t);
  ordo::derived::install_entry_points(t);         // from the entry points above, where they leave a slot empty
  ordo::derived::install_timestamp_recording(t);  // over urEnqueueHostTaskExp
  ordo::derived::install_peer_access(t);          // one device: its own only peer
  ordo::command_buffer::install_graph_capture(t); // wraps the enqueues above: last
}

} // namespace ordo::native_cpu

// The table tail (everything else UR_RESULT_ERROR_UNSUPPORTED_FEATURE) comes last.
const ur_dditable_t &ordo::adapter_ddi() { return ordo::ur_common::table_built_once<ordo::native_cpu::build_table>(); }
