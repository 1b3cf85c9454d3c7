// SPDX-License-Identifier: Apache-2.0
// The adapter's one dispatch table: every handle points at it (handle-first dispatch).
#include "entry_points.hpp"
#include "ur_common/table.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"

namespace {

void build_table(ur_dditable_t &t) {
  ordo::native_cpu::install_adapter_entry_points(t);
  ordo::native_cpu::install_device_entry_points(t);
  ordo::native_cpu::install_context_entry_points(t);
  ordo::native_cpu::install_queue_entry_points(t);
  ordo::native_cpu::install_event_entry_points(t);
  ordo::native_cpu::install_usm_entry_points(t);
  ordo::native_cpu::install_enqueue_entry_points(t);
  ordo::native_cpu::install_enqueue_usm_entry_points(t);
  ordo::native_cpu::install_memory_entry_points(t);
  ordo::native_cpu::install_enqueue_mem_entry_points(t);
  ordo::native_cpu::install_program_entry_points(t);
  ordo::native_cpu::install_kernel_entry_points(t);
  ordo::native_cpu::install_launch_entry_points(t);
  ordo::native_cpu::install_async_alloc_entry_points(t);
  // Command buffers are recorded by the shared layer and each enqueue replays them through
  // the entry points above: every recorded command is one task of the scheduler, its sync
  // points its dependencies; a native command is a host task (docs/native-cpu.md).
  ordo::command_buffer::adapter_hooks command_buffer_hooks;
  command_buffer_hooks.host_functions = true;
  ordo::command_buffer::install_entry_points(t, command_buffer_hooks);
  ordo::native_cpu::install_virtual_mem_entry_points(t);
  ordo::native_cpu::install_native_handle_entry_points(t);
  ordo::derived::install_entry_points(t);         // from the entry points above, where they leave a slot empty
  ordo::derived::install_timestamp_recording(t);  // over urEnqueueHostTaskExp
  ordo::derived::install_peer_access(t);          // one device: its own only peer
  ordo::command_buffer::install_graph_capture(t); // wraps the enqueues above: last
}

} // namespace

// The table tail (everything else UR_RESULT_ERROR_UNSUPPORTED_FEATURE) comes last.
const ur_dditable_t &ordo::adapter_ddi() { return ordo::ur_common::table_built_once<build_table>(); }
