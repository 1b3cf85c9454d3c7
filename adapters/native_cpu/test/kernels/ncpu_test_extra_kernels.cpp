// SPDX-License-Identifier: Apache-2.0
// Kernels that only the native CPU adapter's own tests use: failure, ids in three
// dimensions, argument kinds, dynamic work-group memory, a required work-group size
// and an exported global variable.
#include <cstdint>

#include "ur_native_cpu_kernel.h"

using ordo_nc::group;
using ordo_nc::item;
using ordo_nc::local_ptr;

extern "C" {
__attribute__((visibility("default"))) uint32_t ordo_test_counter = 0;
}

// Fails (status 7) in the work-item whose global id is `bad`; the others write 1.
static int32_t fail_at(const item &it, uint32_t *out, uint32_t bad) {
  if (it.global_id(0) == bad) return 7;
  out[it.global_id(0)] = 1;
  return 0;
}
ORDO_NC_KERNEL(fail_at);

// For each item, at its linear id (offset excluded): its global, local and group ids.
static void record_ids(const item &it, uint32_t *global_ids, uint32_t *local_ids, uint32_t *group_ids) {
  size_t i = it.global_linear_id();
  for (int d = 0; d < 3; ++d) {
    global_ids[3 * i + d] = static_cast<uint32_t>(it.global_id(d));
    local_ids[3 * i + d] = static_cast<uint32_t>(it.local_id(d));
    group_ids[3 * i + d] = static_cast<uint32_t>(it.group_id(d));
  }
}
ORDO_NC_KERNEL(record_ids);

struct Pair {
  uint64_t a;
  uint64_t b;
};

// A 16-byte struct and an 8-byte integer by value: out[gid] = p.a + p.b + x.
static void value_kinds(const item &it, Pair p, uint64_t x, uint64_t *out) { out[it.global_id(0)] = p.a + p.b + x; }
ORDO_NC_KERNEL(value_kinds);

// The sum of each group's inputs, staged in the launch's dynamic work-group memory.
static void wg_memory_sum(const group &g, const uint32_t *in, uint32_t *out) {
  auto *scratch = static_cast<uint32_t *>(g.work_group_memory());
  g.for_each_item([&](const item &it) { scratch[it.local_id(0)] = in[it.global_id(0)]; });
  uint32_t sum = 0;
  for (size_t i = 0; i < g.local_range(0); ++i) sum += scratch[i];
  out[g.group_id(0)] = sum;
}
ORDO_NC_GROUP_KERNEL(wg_memory_sum);

// Two local arguments: each group copies its inputs through both.
static void two_locals(const group &g, const uint32_t *in, uint32_t *out, local_ptr<uint32_t> a,
                       local_ptr<uint64_t> b) {
  g.for_each_item([&](const item &it) { a[it.local_id(0)] = in[it.global_id(0)]; });
  g.for_each_item([&](const item &it) { b[it.local_id(0)] = a[it.local_id(0)] * 2u; });
  g.for_each_item([&](const item &it) { out[it.global_id(0)] = static_cast<uint32_t>(b[it.local_id(0)]); });
}
ORDO_NC_GROUP_KERNEL(two_locals);

// Only runs with work-groups of (4, 1, 1).
static void reqd_four(const item &it, uint32_t *out) {
  out[it.global_id(0)] = static_cast<uint32_t>(it.local_range(0));
}
ORDO_NC_KERNEL_REQD_SIZE(reqd_four, 4, 1, 1);

// Adds one to the exported global variable (a single work-item).
static void bump_counter(const item &) { ++ordo_test_counter; }
ORDO_NC_KERNEL(bump_counter);
