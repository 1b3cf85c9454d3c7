// SPDX-License-Identifier: Apache-2.0
// urCommandBuffer*Exp and urEnqueueCommandBufferExp. A command buffer is recorded by the
// shared layer and each enqueue replays it through this adapter's own entry points, so
// every recorded command becomes one task of the scheduler with its sync points as
// dependencies; host functions (urCommandBufferAppendNativeCommandExp) run as host tasks.
#include "command_buffer.hpp"

#include "ordo_cb/command_buffer.hpp"

namespace ordo::native_cpu {

void install_command_buffer_entry_points(ur_dditable_t &t) {
  ordo::command_buffer::adapter_hooks hooks;
  hooks.host_functions = true; // urEnqueueHostTaskExp (enqueue.cpp)
  ordo::command_buffer::install_entry_points(t, hooks);
}

} // namespace ordo::native_cpu
