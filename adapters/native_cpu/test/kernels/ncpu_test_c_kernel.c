// SPDX-License-Identifier: Apache-2.0
/* A native CPU program written in C, with its kernel table by hand: the ABI of
 * include/ur_native_cpu_kernel.h without the C++ helpers. */
#include "ur_native_cpu_kernel.h"

/* data[gid] *= 2 over one work-group. */
static int32_t twice(const ordo_nc_group *g, void *const *args) {
  unsigned *data = *(unsigned **)args[0];
  const ordo_nc_range *r = g->range;
  size_t base = r->global_offset[0] + g->group_id[0] * r->local_size[0];
  for (size_t i = 0; i < r->local_size[0]; ++i) data[base + i] *= 2;
  return 0;
}

static const ordo_nc_arg_desc twice_args[] = {{ORDO_NC_ARG_POINTER, sizeof(void *)}};
static const ordo_nc_kernel_desc twice_desc = {"twice", twice, 1, 0, twice_args, {0, 0, 0}};
static const ordo_nc_kernel_desc *const kernels[] = {&twice_desc};

__attribute__((visibility("default"))) void ordo_nc_get_kernel_table(ordo_nc_kernel_table *table) {
  table->abi_version = ORDO_NC_ABI_VERSION;
  table->num_kernels = 1;
  table->kernels = kernels;
}
