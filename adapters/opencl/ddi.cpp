// SPDX-License-Identifier: Apache-2.0
// The adapter's one dispatch table (docs/architecture.md, handle-first dispatch): every handle points at it.
#include "context.hpp"
#include "device.hpp"
#include "ordo/ddi_fill.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ordo_derived/derived.hpp"
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
    ordo::ur_common::install_pool_entry_points<ur_context_handle_t_, ur_device_handle_t_>(t); // urUSMPool*
    ordo::opencl::install_async_alloc_entry_points(t);
    // urCommandBuffer*Exp on every device, with or without cl_khr_command_buffer (PoCL has
    // none): the shared recorder replays through the entry points above (docs/opencl.md,
    // "Command buffers"). It wraps Device.pfnGetInfo: after the device entry points.
    ordo::command_buffer::adapter_hooks command_buffer_hooks;
    command_buffer_hooks.host_functions = true; // urEnqueueHostTaskExp (host_task.cpp)
    ordo::command_buffer::install_entry_points(t, command_buffer_hooks);
    ordo::derived::install_entry_points(t);          // from the entry points above, where they leave a slot empty
    ordo::opencl::install_host_task_entry_points(t); // after the derived ones: native commands stay inline
    ordo::derived::install_timestamp_recording(t);   // over urEnqueueHostTaskExp
    ordo::derived::install_peer_access(t);           // a device is its own only peer
    ordo::command_buffer::install_graph_capture(t);  // wraps the enqueues above: last
    ordo::table_tail tail;
    // The spec's checks run first, whatever ORDO_ADAPTER_PARAM_CHECKS says: this
    // adapter's own skip what they cover.
    tail.param_checks_required = true;
    ordo::fill_unsupported(t, tail);
    return t;
  }();
  return table;
}
