// urCommandBuffer*Exp and urEnqueueCommandBufferExp. A command buffer is recorded by the
// shared layer and each enqueue replays it through this adapter's own entry points, so
// every recorded command becomes one task of the scheduler with its sync points as
// dependencies; host functions (urCommandBufferAppendNativeCommandExp) run as host tasks.
#include "command_buffer.hpp"

#include "ordo_cb/command_buffer.hpp"

namespace nc {

void install_command_buffer_entry_points(ur_dditable_t &t) {
  ordo::cb::adapter_hooks hooks;
  hooks.host_functions = true; // urEnqueueHostTaskExp (enqueue.cpp)
  ordo::cb::install_entry_points(t, hooks);
}

} // namespace nc
