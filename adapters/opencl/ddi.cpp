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
    ordo::ocl::fill_adapter_table(t);
    ordo::ocl::fill_device_table(t);
    ordo::ocl::fill_context_table(t);
    ordo::ocl::fill_queue_table(t);
    ordo::ocl::fill_event_table(t);
    ordo::ocl::fill_usm_table(t);
    ordo::ocl::fill_memory_table(t);
    ordo::ocl::fill_program_table(t);
    ordo::ocl::fill_kernel_table(t);
    ordo::ocl::fill_enqueue_table(t);
    ordo::ocl::fill_usm_pool_table(t);
    ordo::ocl::fill_async_alloc_table(t);
    ordo::ocl::fill_command_buffer_table(t);
    ordo::derived::install_entry_points(t); // from the entry points above, where they leave a slot empty
    ordo::ocl::fill_host_task_table(t); // after the derived ones: native commands stay inline
    ordo::derived::install_timestamp_recording(t); // over urEnqueueHostTaskExp
    ordo::derived::install_peer_access(t);         // a device is its own only peer
    ordo::cb::install_graph_capture(t);            // wraps the enqueues above: last
    ordo::fill_unsupported(t);
    return t;
  }();
  return table;
}
