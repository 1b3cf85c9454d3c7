// SPDX-License-Identifier: Apache-2.0
// urCommandBuffer*Exp and urEnqueueCommandBufferExp on every OpenCL device: the shared
// layer records the commands and each enqueue replays them as OpenCL commands through
// this adapter's own entry points, each waiting for its sync points' events. This
// works the same with or without cl_khr_command_buffer (PoCL has none); the extension
// is not used (docs/opencl.md says why).
#include "command_buffer.hpp"

#include "ordo_cb/command_buffer.hpp"

namespace ordo::opencl {

void install_command_buffer_entry_points(ur_dditable_t &t) {
  ordo::command_buffer::adapter_hooks hooks;
  hooks.host_functions = true; // urEnqueueHostTaskExp (host_task.cpp)
  ordo::command_buffer::install_entry_points(t, hooks);
}

} // namespace ordo::opencl
