// SPDX-License-Identifier: Apache-2.0
/* Native CPU program binaries of a kernel ABI other than the adapter's, which the
 * adapter must refuse before it calls anything in them (see
 * adapters/native_cpu/test/test_program_kernel.cpp). One source, three variants:
 *   no_version     built before ordo_nc_abi_version existed: the symbol is absent;
 *   newer_version  ordo_nc_abi_version is ORDO_NC_ABI_VERSION + 1;
 *   wide_version   ordo_nc_abi_version is a uint64_t, not a uint32_t.
 * The table getter has another signature, as an older ABI might, and aborts if it is
 * ever called: a crash, not a wrong answer, is what a stale binary used to cause. */
#define ORDO_NC_TYPES_ONLY /* the header must not define the symbol for us */
#include "ur_native_cpu_kernel.h"

#include <stdlib.h>

#if defined(STALE_NEWER_VERSION)
__attribute__((visibility("default"))) const uint32_t ordo_nc_abi_version = ORDO_NC_ABI_VERSION + 1u;
#elif defined(STALE_WIDE_VERSION)
__attribute__((visibility("default"))) const uint64_t ordo_nc_abi_version = ORDO_NC_ABI_VERSION;
#endif

__attribute__((visibility("default"))) const void *ordo_nc_get_kernel_table(void) { abort(); }
