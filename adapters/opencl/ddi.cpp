// SPDX-License-Identifier: Apache-2.0
// The adapter's one dispatch table (docs/architecture.md, handle-first dispatch): every handle points at it.
#include "ordo/ddi_fill.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"
#include "command_buffer.hpp"
#include "host_task.hpp"
#include "tables.hpp"

const ur_dditable_t &ordo::adapter_ddi() {
  static const ur_dditable_t table = [] {
    ur_dditable_t t{};
    ordo::opencl::install_adapter_entry_points(t);
    ordo::opencl::install_device_entry_points(t);
    ordo::opencl::install_context_entry_points(t);
    ordo::opencl::install_queue_entry_points(t);
    ordo::opencl::install_event_entry_points(t);
    ordo::opencl::install_usm_entry_points(t);
    ordo::opencl::install_memory_entry_points(t);
    ordo::opencl::install_program_entry_points(t);
    ordo::opencl::install_kernel_entry_points(t);
    ordo::opencl::install_enqueue_entry_points(t);
    ordo::opencl::install_usm_pool_entry_points(t);
    ordo::opencl::install_async_alloc_entry_points(t);
    ordo::opencl::install_command_buffer_entry_points(t);
    ordo::derived::install_entry_points(t);          // from the entry points above, where they leave a slot empty
    ordo::opencl::install_host_task_entry_points(t); // after the derived ones: native commands stay inline
    ordo::derived::install_timestamp_recording(t);   // over urEnqueueHostTaskExp
    ordo::derived::install_peer_access(t);           // a device is its own only peer
    ordo::command_buffer::install_graph_capture(t);  // wraps the enqueues above: last
    ordo::fill_unsupported(t);
    return t;
  }();
  return table;
}
