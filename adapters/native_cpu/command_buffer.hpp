// SPDX-License-Identifier: Apache-2.0
// Command buffers on native CPU: the shared recorder (source/command_buffer) replayed as
// commands of the adapter's scheduler (docs/native-cpu.md, "Command buffers").
#pragma once
#include "ur_ddi.h"

namespace ordo::native_cpu {
void install_command_buffer_entry_points(ur_dditable_t &t); // command_buffer.cpp
} // namespace ordo::native_cpu
