// SPDX-License-Identifier: Apache-2.0
// Contexts: a set of devices of the one platform, with the stream-ordered layer's state
// (context_pools) over host memory. urContext* are ur_common/context.hpp's; this file
// says what the template adds. Replace: create() and destroy() (your driver's context),
// the native handle, and the PoolHooks memory answers (which memory serves each kind).
#include <cstring>
#include <new>

#include "common.hpp"
#include "ur_common/context.hpp"
#include "ur_common/pool_hooks.hpp"

namespace ordo::template_adapter {

namespace {

struct context_hooks : handle_types {
  static ur_result_t check_device(const std::vector<Device *> &taken, Device *d) {
    return !taken.empty() && d->platform != taken[0]->platform ? UR_RESULT_ERROR_INVALID_DEVICE : UR_RESULT_SUCCESS;
  }
  static ur_result_t create(const std::vector<Device *> &, Context *&out) {
    out = new (std::nothrow) Context();
    return out ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  static void destroy(Context *) {} // your driver's context goes here, after the pools
  static ur_result_t native_handle(Context *ctx, ur_native_handle_t *out) {
    *out = reinterpret_cast<ur_native_handle_t>(ctx); // your driver's context handle
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::ur_common::context_entry_points<context_hooks>;

} // namespace

// One memory class per kind (and per device for device and shared memory), so that a
// block keeps the kind and device it was made for.
ur_result_t PoolHooks::memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                                    ordo::stream_ordered::mem_class &out) {
  return ordo::ur_common::memory_class_per_device(kind, device, out, [this](ur_device_handle_t d, ur_usm_type_t) {
    return has_device(d) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_DEVICE;
  });
}

void *PoolHooks::get_chunk(const ordo::stream_ordered::mem_class &, size_t size) { return alloc_memory(size, 64); }
void PoolHooks::put_chunk(const ordo::stream_ordered::mem_class &, void *base, size_t) { free_memory(base); }
// A plain allocation (urUSM*Alloc without a pool) that goes back: freed and out of the
// quarantine, or never freed when the context goes.
void PoolHooks::free_plain(void *base, ur_usm_type_t, ur_device_handle_t) { free_memory(base); }

bool PoolHooks::has_device(ur_device_handle_t d) { return d && ctx_->index_of(reinterpret_cast<Device *>(d)) >= 0; }
ur_context_handle_t PoolHooks::handle() { return reinterpret_cast<ur_context_handle_t>(ctx_); }
void PoolHooks::retain_context() { ctx_->hold(); }
void PoolHooks::release_context() { context_drop(ctx_); }

// Host memory is zeroed in place; a device would run a fill and wait for it.
ur_result_t PoolHooks::zero_now(ur_usm_type_t, ur_device_handle_t, void *p, size_t size) {
  std::memset(p, 0, size);
  return UR_RESULT_SUCCESS;
}

void context_drop(Context *ctx) { entry_points::drop(ctx); }
void install_context_entry_points(ur_dditable_t &t) { entry_points::install(t); }

} // namespace ordo::template_adapter
