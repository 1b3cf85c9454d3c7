// Command buffers on OpenCL: the shared recorder (source/command_buffer) replayed through
// this adapter's enqueue entry points (docs/opencl.md, "Command buffers").
#pragma once
#include "ur_ddi.h"

namespace ordo::ocl {
// Installs urCommandBuffer*Exp and urEnqueueCommandBufferExp, and the device's answers
// about them (it wraps the Device.pfnGetInfo already in `t`: call after fill_device_table).
void fill_command_buffer_table(ur_dditable_t &t);
} // namespace ordo::ocl
