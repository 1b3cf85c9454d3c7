// Each file of the adapter puts the entry points it implements into the table.
#pragma once
#include "ur_ddi.h"

namespace ordo::ocl {
void fill_adapter_table(ur_dditable_t &t);
void fill_device_table(ur_dditable_t &t);
void fill_context_table(ur_dditable_t &t);
void fill_queue_table(ur_dditable_t &t);
void fill_event_table(ur_dditable_t &t);
void fill_usm_table(ur_dditable_t &t);
void fill_memory_table(ur_dditable_t &t);
void fill_program_table(ur_dditable_t &t);
void fill_kernel_table(ur_dditable_t &t);
void fill_enqueue_table(ur_dditable_t &t);
void fill_usm_pool_table(ur_dditable_t &t); // the stream-ordered layer's (pool_hooks.cpp)
void fill_async_alloc_table(ur_dditable_t &t);
} // namespace ordo::ocl
