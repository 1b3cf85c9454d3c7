// SPDX-License-Identifier: Apache-2.0
// A native CPU program whose one kernel fails, so that the suite can check what a
// failed command does to its event and to the commands that depend on it
// (event.cpp, urEventFailureTest). Built into the conformance build folder.
// Including the kernel header exports ordo_nc_abi_version, the ABI version the
// adapter checks before it calls into the binary.
#include <cstdint>

#include "ur_native_cpu_kernel.h"

using ordo_nc::item;

// Every work-item reports failure: the launch ends in UR_EVENT_STATUS_ERROR.
static int32_t fail(const item &) { return 1; }
ORDO_NC_KERNEL(fail);
