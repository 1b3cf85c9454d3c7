// SPDX-License-Identifier: Apache-2.0
// Host tasks on OpenCL (urEnqueueHostTaskExp): a host thread runs the function, and a user
// event tells the queue when it is done (docs/opencl.md, "Host tasks").
#pragma once
#include "ur_ddi.h"

namespace ordo::opencl {
void install_host_task_entry_points(ur_dditable_t &t); // host_task.cpp
} // namespace ordo::opencl
