// SPDX-License-Identifier: Apache-2.0
// Each API-object file puts its entry points into the adapter's dispatch table (adapter.cpp).
#pragma once
#include "ur_ddi.h"

namespace ordo::native_cpu {

void install_device_entry_points(ur_dditable_t &t);        // device.cpp
void install_context_entry_points(ur_dditable_t &t);       // context.cpp: urContext*, urUSMPool*
void install_queue_entry_points(ur_dditable_t &t);         // queue.cpp
void install_event_entry_points(ur_dditable_t &t);         // event.cpp
void install_usm_entry_points(ur_dditable_t &t);           // usm.cpp
void install_enqueue_entry_points(ur_dditable_t &t);       // enqueue.cpp
void install_enqueue_usm_entry_points(ur_dditable_t &t);   // enqueue_usm.cpp
void install_program_entry_points(ur_dditable_t &t);       // program.cpp
void install_kernel_entry_points(ur_dditable_t &t);        // kernel.cpp
void install_launch_entry_points(ur_dditable_t &t);        // launch.cpp
void install_async_alloc_entry_points(ur_dditable_t &t);   // async_alloc.cpp
void install_memory_entry_points(ur_dditable_t &t);        // memory.cpp
void install_enqueue_mem_entry_points(ur_dditable_t &t);   // enqueue_mem.cpp
void install_native_handle_entry_points(ur_dditable_t &t); // native_handles.cpp
void install_virtual_mem_entry_points(ur_dditable_t &t);   // virtual_mem.cpp: physical, virtual, IPC

} // namespace ordo::native_cpu
