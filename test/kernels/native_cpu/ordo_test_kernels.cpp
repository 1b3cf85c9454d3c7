// SPDX-License-Identifier: Apache-2.0
// The common test kernels (test/kernels/README.md) for the native CPU adapter,
// written against include/ur_native_cpu_kernel.h.
#include <cstdint>

#include "ur_native_cpu_kernel.h"

using ordo_nc::group;
using ordo_nc::item;
using ordo_nc::local_ptr;

// Nothing at all: launch-latency benchmarks.
static void empty(const item &) {}
ORDO_NC_KERNEL(empty);

static void fill(const item &it, uint32_t *out, uint32_t value) { out[it.global_id(0)] = value; }
ORDO_NC_KERNEL(fill);

static void increment(const item &it, uint32_t *data) { data[it.global_id(0)] += 1; }
ORDO_NC_KERNEL(increment);

static void vector_add(const item &it, const float *a, const float *b, float *c) {
  size_t i = it.global_id(0);
  c[i] = a[i] + b[i];
}
ORDO_NC_KERNEL(vector_add);

static void saxpy(const item &it, float a, const float *x, float *y) {
  size_t i = it.global_id(0);
  y[i] = a * x[i] + y[i];
}
ORDO_NC_KERNEL(saxpy);

// Two phases with a work-group barrier between them: every item stores its input
// in local memory, then the first item adds them up.
static void local_sum(const group &g, const uint32_t *in, uint32_t *out, local_ptr<uint32_t> scratch) {
  g.for_each_item([&](const item &it) { scratch[it.local_id(0)] = in[it.global_id(0)]; });
  uint32_t sum = 0;
  for (size_t i = 0; i < g.local_range(0); ++i) sum += scratch[i];
  out[g.group_id(0)] = sum;
}
ORDO_NC_GROUP_KERNEL(local_sum);

static void fill_2d(const item &it, uint32_t *out, uint32_t width) {
  size_t x = it.global_id(0), y = it.global_id(1);
  out[y * width + x] = static_cast<uint32_t>(y * width + x);
}
ORDO_NC_KERNEL(fill_2d);

// A device global (urProgramGetGlobalVariablePointer, urEnqueueDeviceGlobalVariable*):
// 16 words holding 1 to 16 when the program is loaded.
extern "C" {
__attribute__((visibility("default")))
uint32_t ordo_test_global[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
}
