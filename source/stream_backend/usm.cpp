// SPDX-License-Identifier: Apache-2.0
// Synchronous USM: device, pinned host and managed driver allocations, registered in
// the stream-ordered layer's pointer registry (plain allocations); with a pool, a
// block of that pool (the layer); frees; pointer queries. The entry points are
// ur_common/usm.hpp's; this file says how the driver makes and frees plain memory, and
// copies without a queue (urUSMContextMemcpyExp).
#include "backend.hpp"
#include "ur_common/usm.hpp"

namespace ordo::stream_backend {

namespace {

struct usm_hooks : handle_types {
  // Managed memory could oversubscribe; MAX_MEM_ALLOC_SIZE still bounds it.
  static size_t max_alloc(const Device *d) { return d->facts.total_mem; }
  static bool shared_supported(const Device *d) { return d->facts.managed; }
  // Plain driver allocations give 256-byte (device, managed) or page (host)
  // alignment; a larger request is met only when the pointer happens to satisfy it.
  static ur_result_t alloc_plain(Context *ctx, ur_usm_type_t kind, Device *dev, size_t size, size_t, void **p) {
    if (kind == UR_USM_TYPE_HOST) {
      ORDO_DRV(ctx->devices[0]->make_current());
      status r = drv::alloc_host(p, size);
      if (r.kind == err::out_of_memory) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
      ORDO_DRV(r);
      return UR_RESULT_SUCCESS;
    }
    ORDO_DRV(dev->make_current());
    ORDO_DRV(kind == UR_USM_TYPE_SHARED ? drv::alloc_managed(p, size) : drv::alloc_device(p, size));
    return UR_RESULT_SUCCESS;
  }
};

// The USM allocation of `ctx` holding `p` (pool block or plain), if any.
bool allocation_of(Context *ctx, const void *p, ordo::stream_ordered::context_pools::block_facts &a) {
  return ctx->pools->block_info(p, a) || ctx->pools->find_plain(p, a);
}

// A pointer of a USM allocation of the context must have `size` bytes inside it
// (INVALID_SIZE, the spec's); any other address is the driver's to reach (unified
// addresses: pageable host memory too). The device that copies is the allocation's.
ur_result_t copy_side(Context *ctx, const void *p, size_t size, Device **dev) {
  ordo::stream_ordered::context_pools::block_facts a;
  // Memory the context freed and still holds is refused, as every USM command refuses it
  // (docs/async-alloc.md, "Freed memory").
  if (!allocation_of(ctx, p, a)) return ctx->pools->check_usm_region(p, size);
  const size_t offset = size_t(static_cast<const uint8_t *>(p) - static_cast<const uint8_t *>(a.base));
  if (offset > a.size || size > a.size - offset) return UR_RESULT_ERROR_INVALID_SIZE;
  if (a.device && !*dev) *dev = reinterpret_cast<Device *>(a.device);
  return UR_RESULT_SUCCESS;
}

// urUSMContextMemcpyExp: a copy that is done when the call returns, on the device's own
// internal stream (no queue; not ordered after any queue's work, as the spec says).
ur_result_t UR_APICALL urUSMContextMemcpyExp(ur_context_handle_t hContext, void *pDst, const void *pSrc, size_t size) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  Device *dev = nullptr;
  if (ur_result_t r = copy_side(ctx, pDst, size, &dev)) return r;
  if (ur_result_t r = copy_side(ctx, pSrc, size, &dev)) return r;
  if (!dev) dev = ctx->devices[0];
  ORDO_DRV(dev->make_current());
  stream_t s = nullptr;
  ORDO_DRV(dev->internal_stream(&s));
  ORDO_DRV(drv::memcpy_async(pDst, pSrc, size, s));
  ORDO_DRV(drv::stream_synchronize(s));
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_usm_entry_points(ur_dditable_t &t) {
  ordo::ur_common::usm_entry_points<usm_hooks>::install(t);
  t.USMExp.pfnContextMemcpyExp = urUSMContextMemcpyExp;
}

} // namespace ordo::stream_backend
