// Command buffers on native CPU: the shared recorder (source/command_buffer) replayed as
// commands of the adapter's scheduler (docs/native-cpu.md, "Command buffers").
#pragma once
#include "ur_ddi.h"

namespace nc {
void install_command_buffer_entry_points(ur_dditable_t &t); // command_buffer.cpp
} // namespace nc
