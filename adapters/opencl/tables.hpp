// SPDX-License-Identifier: Apache-2.0
// Each file of the adapter puts the entry points it implements into the table.
#pragma once
#include "ur_ddi.h"

namespace ordo::opencl {
void install_adapter_entry_points(ur_dditable_t &t);
void install_device_entry_points(ur_dditable_t &t);
void install_context_entry_points(ur_dditable_t &t);
void install_queue_entry_points(ur_dditable_t &t);
void install_event_entry_points(ur_dditable_t &t);
void install_usm_entry_points(ur_dditable_t &t);
void install_memory_entry_points(ur_dditable_t &t);
void install_program_entry_points(ur_dditable_t &t);
void install_kernel_entry_points(ur_dditable_t &t);
void install_enqueue_entry_points(ur_dditable_t &t);
void install_async_alloc_entry_points(ur_dditable_t &t);
void install_host_task_entry_points(ur_dditable_t &t); // after ordo::derived's (ddi.cpp)
} // namespace ordo::opencl
