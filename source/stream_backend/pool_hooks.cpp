// SPDX-License-Identifier: Apache-2.0
// The stream backend's hooks into the stream-ordered layer (backend.hpp, PoolHooks;
// docs/adapter-guide.md): every pool, default pools included, is the layer's, over
// chunks of driver memory. No driver memory pool is made, read or configured, so the
// process-wide pools other users of the driver share stay as they were (docs/cuda.md,
// docs/hip.md).
#include <cstring>

#include "backend.hpp"

namespace ordo::stream_backend {

namespace {

Device *as_device(ur_device_handle_t d) { return reinterpret_cast<Device *>(d); }

// The device whose primary context holds a class's chunks (host memory: the
// context's first device; it is portable, so every device of the context maps it).
Device *home_of(Context *ctx, const ordo::stream_ordered::mem_class &c) {
  return c.device ? as_device(c.device) : ctx->devices[0];
}

} // namespace

// Memory classes: device and shared memory per device, host memory once.
ur_result_t PoolHooks::memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                                    ordo::stream_ordered::mem_class &out) {
  // Shared memory is managed memory: only where the device has it.
  return ordo::ur_common::memory_class_per_device(kind, device, out, [this](ur_device_handle_t d, ur_usm_type_t k) {
    if (!d || ctx_->index_of(as_device(d)) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (k == UR_USM_TYPE_SHARED && !as_device(d)->facts.managed) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return UR_RESULT_SUCCESS;
  });
}

// Device memory, host memory pinned, portable and mapped (one address on the host
// and every device), shared memory managed.
void *PoolHooks::get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) {
  CurrentFor current(home_of(ctx_, c));
  if (!current.ok()) return nullptr;
  void *p = nullptr;
  status r = c.id == UR_USM_TYPE_HOST     ? drv::alloc_host(&p, size)
             : c.id == UR_USM_TYPE_SHARED ? drv::alloc_managed(&p, size)
                                          : drv::alloc_device(&p, size);
  if (r && r.kind != err::out_of_memory)
    ORDO_LOG(logger(), warning, "pool chunk of %zu bytes: %s", size, drv::error_text(r).c_str());
  return r ? nullptr : p;
}

// Only chunks with no live or pending block come back: nothing can still use them.
void PoolHooks::put_chunk(const ordo::stream_ordered::mem_class &c, void *base, size_t) {
  CurrentFor current(home_of(ctx_, c));
  status r = c.id == UR_USM_TYPE_HOST ? drv::free_host(base) : drv::free_device(base);
  if (r) ORDO_LOG(logger(), warning, "USM memory %p not freed: %s", base, drv::error_text(r).c_str());
}

// A plain allocation is driver memory of its class, as a chunk is.
void PoolHooks::free_plain(void *base, ur_usm_type_t kind, ur_device_handle_t device) {
  put_chunk(ordo::stream_ordered::mem_class{kind == UR_USM_TYPE_HOST ? nullptr : device, unsigned(kind)}, base, 0);
}

// A release event is a free command's UR event, deferred (backend.hpp, Lane) unless
// the queue profiles: its stream's count answers without the driver once a
// synchronisation point passed it.
bool PoolHooks::event_complete(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  bool done = false;
  return !poll_event(e, &done) && done; // an error never counts as done
}

// urUSM*Alloc from a zero-initialising pool: host memory directly, device and
// shared memory on the device's internal stream, waited for.
ur_result_t PoolHooks::zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) {
  if (kind == UR_USM_TYPE_HOST) {
    std::memset(p, 0, size);
    return UR_RESULT_SUCCESS;
  }
  Device *d = as_device(device);
  stream_t s = nullptr;
  ORDO_DRV(d->internal_stream(&s));
  ORDO_DRV(d->make_current());
  ORDO_DRV(drv::memset_8(p, 0, size, s));
  ORDO_DRV(drv::stream_synchronize(s));
  return UR_RESULT_SUCCESS;
}

// urUSMHostAllocRegisterExp: the pages are page-locked, portable and mapped, like
// the pool's host chunks, so every device of the context reaches them at one address.
ur_result_t PoolHooks::pin_host(void *p, size_t size, bool read_only) {
  CurrentFor current(ctx_->devices[0]);
  if (!current.ok()) return UR_RESULT_ERROR_DEVICE_LOST;
  ORDO_DRV(drv::host_register(p, size, read_only));
  return UR_RESULT_SUCCESS;
}

void PoolHooks::unpin_host(void *p, size_t) {
  CurrentFor current(ctx_->devices[0]);
  status r = drv::host_unregister(p);
  if (r) ORDO_LOG(logger(), warning, "registered host memory %p not unregistered: %s", p, drv::error_text(r).c_str());
}

void install_pool_entry_points(ur_dditable_t &t) {
  ordo::ur_common::install_pool_entry_points<Context, Device>(t, true);
}

} // namespace ordo::stream_backend
