// Synchronous USM: device, pinned host and managed driver allocations, registered in
// the stream-ordered layer's pointer registry (plain allocations); with a pool, a
// block of that pool (the layer); frees; pointer queries. The entry points are
// ur_common/usm.hpp's; this file says how the driver makes and frees plain memory.
#include "backend.hpp"
#include "entry_points.hpp"
#include "ur_common/usm.hpp"

namespace ordo::sb {

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
  static ur_result_t free_plain(Context *ctx, void *p, ur_usm_type_t kind, ur_device_handle_t device) {
    return to_ur(sb::free_plain(ctx, p, kind, device));
  }
};

} // namespace

void install_usm_entry_points(ur_dditable_t &t) { ordo::uc::usm_entry_points<usm_hooks>::install(t); }

} // namespace ordo::sb
