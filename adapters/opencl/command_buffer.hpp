// SPDX-License-Identifier: Apache-2.0
// Command buffers on OpenCL: the shared recorder (source/command_buffer) replayed through
// this adapter's enqueue entry points (docs/opencl.md, "Command buffers").
#pragma once
#include "ur_ddi.h"

namespace ordo::opencl {
// Installs urCommandBuffer*Exp and urEnqueueCommandBufferExp, and the device's answers
// about them (it wraps the Device.pfnGetInfo already in `t`: call after install_device_entry_points).
void install_command_buffer_entry_points(ur_dditable_t &t);
} // namespace ordo::opencl
