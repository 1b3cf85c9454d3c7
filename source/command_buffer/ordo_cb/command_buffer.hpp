// SPDX-License-Identifier: Apache-2.0
// Command buffers recorded once and replayed through the adapter's own enqueue entry
// points (docs/command-buffers.md). An adapter installs the entry points, answers the
// device queries below, and gets urCommandBuffer*Exp and urEnqueueCommandBufferExp.
#pragma once
#include "ur_ddi.h"

namespace ordo::command_buffer {

struct adapter_hooks {
  // The adapter runs a host function as a command (urEnqueueHostTaskExp): then
  // urCommandBufferAppendNativeCommandExp is installed too.
  bool host_functions = false;
};

// What a kernel launch in a command buffer may change (urCommandBufferUpdateKernelLaunchExp):
// the adapter's answer to UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP.
constexpr ur_device_command_buffer_update_capability_flags_t kUpdateCapabilities =
    UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_EVENTS |
    UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_KERNEL_ARGUMENTS |
    UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_LOCAL_WORK_SIZE |
    UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_GLOBAL_WORK_SIZE |
    UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_GLOBAL_WORK_OFFSET |
    UR_DEVICE_COMMAND_BUFFER_UPDATE_CAPABILITY_FLAG_KERNEL_HANDLE;
// Appended commands take wait lists and give events signalled at every run
// (UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP); a command buffer holds no other
// command buffer (..._SUBGRAPH_SUPPORT_EXP).
constexpr bool kEventSupport = true;
constexpr bool kSubgraphSupport = false;

// Puts the command-buffer entry points into `t`. The adapter's own Enqueue, EnqueueExp,
// Event, Mem, Kernel, USM, Queue and Context entry points must be in `t` (or in the
// table ordo::adapter_ddi() returns) when a command buffer is used.
void install_entry_points(ur_dditable_t &t, const adapter_hooks &hooks);

// Graph record and replay (urGraph*Exp, urQueue*Graph*Exp, urEnqueueGraphExp) over the
// recorder: wraps the enqueue, event and urQueueRelease entry points already in `t`, so
// it goes after every other install and before fill_unsupported (docs/command-buffers.md).
void install_graph_capture(ur_dditable_t &t);

} // namespace ordo::command_buffer
