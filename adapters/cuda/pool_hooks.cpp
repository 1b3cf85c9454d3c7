// The CUDA adapter's hooks into the stream-ordered layer (common.hpp, PoolHooks;
// docs/adapter-guide.md): every pool, default pools included, is the layer's, over
// chunks of driver memory. No CUDA memory pool is made, read or configured, so the
// process-wide pools other CUDA users share stay as they were (docs/cuda.md).
#include <cstring>

#include "common.hpp"

namespace ordo::cuda {

namespace {

Device *as_device(ur_device_handle_t d) { return reinterpret_cast<Device *>(d); }

// The device whose primary context holds a class's chunks (host memory: the
// context's first device; it is portable, so every device of the context maps it).
Device *home_of(Context *ctx, const ordo::so::mem_class &c) {
  return c.device ? as_device(c.device) : ctx->devices[0];
}

// A hook runs inside a command being built on some stream: it makes `d`'s context
// current for its own calls and puts the caller's back.
class CurrentFor {
public:
  explicit CurrentFor(Device *d) {
    CUcontext want = d->context();
    drv().cuCtxGetCurrent(&previous_);
    ok_ = want != nullptr;
    if (ok_ && want != previous_) ok_ = switched_ = drv().cuCtxSetCurrent(want) == CUDA_SUCCESS;
  }
  ~CurrentFor() {
    if (switched_) drv().cuCtxSetCurrent(previous_);
  }
  bool ok() const { return ok_; }

private:
  CUcontext previous_ = nullptr;
  bool ok_ = false, switched_ = false;
};

} // namespace

// Memory classes: device and shared memory per device, host memory once.
ur_result_t PoolHooks::memory_class(ur_usm_type_t kind, ur_device_handle_t device, ordo::so::mem_class &out) {
  if (kind == UR_USM_TYPE_HOST) {
    out = ordo::so::mem_class{nullptr, UR_USM_TYPE_HOST};
    return UR_RESULT_SUCCESS;
  }
  if (kind != UR_USM_TYPE_DEVICE && kind != UR_USM_TYPE_SHARED) return UR_RESULT_ERROR_INVALID_VALUE;
  if (!device || ctx_->index_of(as_device(device)) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (kind == UR_USM_TYPE_SHARED && !as_device(device)->facts.managed) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  out = ordo::so::mem_class{device, unsigned(kind)};
  return UR_RESULT_SUCCESS;
}

// Device memory from cuMemAlloc, host memory pinned, portable and mapped (one
// address on the host and every device), shared memory managed.
void *PoolHooks::get_chunk(const ordo::so::mem_class &c, size_t size) {
  CurrentFor current(home_of(ctx_, c));
  if (!current.ok()) return nullptr;
  CUresult r = CUDA_SUCCESS;
  if (c.id == UR_USM_TYPE_HOST) {
    void *p = nullptr;
    r = drv().cuMemHostAlloc(&p, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    return r == CUDA_SUCCESS ? p : nullptr;
  }
  CUdeviceptr p = 0;
  r = c.id == UR_USM_TYPE_SHARED ? drv().cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL) : drv().cuMemAlloc(&p, size);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY)
    ORDO_LOG(logger(), warning, "pool chunk of %zu bytes: %s", size, error_text(r).c_str());
  return r == CUDA_SUCCESS ? reinterpret_cast<void *>(p) : nullptr;
}

// Only chunks with no live or pending block come back: nothing can still use them.
void PoolHooks::put_chunk(const ordo::so::mem_class &c, void *base, size_t) {
  CurrentFor current(home_of(ctx_, c));
  CUresult r = c.id == UR_USM_TYPE_HOST ? drv().cuMemFreeHost(base)
                                        : drv().cuMemFree(reinterpret_cast<CUdeviceptr>(base));
  if (r != CUDA_SUCCESS) ORDO_LOG(logger(), warning, "pool chunk %p not freed: %s", base, error_text(r).c_str());
}

// A release event is a free command's UR event, recorded before the pool saw it.
bool PoolHooks::event_complete(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  if (!e->done) return true;
  CurrentFor current(e->dev);
  return drv().cuEventQuery(e->done) == CUDA_SUCCESS; // an error never counts as done
}

void PoolHooks::retain_event(ur_event_handle_t ev) { reinterpret_cast<Event *>(ev)->retain(); }

// The last reference may destroy the event and its queue (a queue's destruction
// never calls the layer), never the context: whoever calls into the layer holds
// the context through a queue, an event or the context handle itself.
void PoolHooks::release_event(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  if (e->release()) event_destroy(e);
}

uint64_t PoolHooks::event_node(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  return e->ctx == ctx_ ? e->order_node : 0;
}

// Reuse rule 3: the alloc command's stream waits for the free's event (an order-only
// edge, captured now, so no reference outlives the call).
bool PoolHooks::add_dependency(void *adapter_command, ur_event_handle_t ev) {
  return static_cast<Command *>(adapter_command)->wait_for(reinterpret_cast<Event *>(ev));
}

bool PoolHooks::has_device(ur_device_handle_t d) { return ctx_->index_of(as_device(d)) >= 0; }
ur_context_handle_t PoolHooks::handle() { return reinterpret_cast<ur_context_handle_t>(ctx_); }
void PoolHooks::retain_context() { context_hold(ctx_); }
void PoolHooks::release_context() { context_drop(ctx_); }

// urUSM*Alloc from a zero-initialising pool: host memory directly, device and
// shared memory on the device's internal stream, waited for.
ur_result_t PoolHooks::zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) {
  if (kind == UR_USM_TYPE_HOST) {
    std::memset(p, 0, size);
    return UR_RESULT_SUCCESS;
  }
  Device *d = as_device(device);
  CUstream s = nullptr;
  ORDO_CU(d->internal_stream(&s));
  ORDO_CU(d->make_current());
  ORDO_CU(drv().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p), 0, size, s));
  ORDO_CU(drv().cuStreamSynchronize(s));
  return UR_RESULT_SUCCESS;
}

CUresult free_plain(Context *ctx, void *p, ur_usm_type_t kind, ur_device_handle_t device) {
  Device *d = device ? as_device(device) : ctx->devices[0];
  if (CUresult r = d->make_current()) return r;
  return kind == UR_USM_TYPE_HOST ? drv().cuMemFreeHost(p) : drv().cuMemFree(reinterpret_cast<CUdeviceptr>(p));
}

namespace {
ordo::so::context_pools *pools_of(ur_context_handle_t h, ur_result_t *err) {
  Context *ctx = nullptr;
  if (ur_result_t r = unwrap(h, ctx)) {
    *err = r;
    return nullptr;
  }
  return ctx->pools.get();
}
bool is_device(ur_device_handle_t h) {
  Device *d = nullptr;
  return unwrap(h, d) == UR_RESULT_SUCCESS;
}
} // namespace

void install_pool_entry_points(ur_dditable_t &t) {
  ordo::so::adapter_hooks hooks;
  hooks.pools_of = pools_of;
  hooks.is_device = is_device;
  ordo::so::install_pool_entry_points(t, hooks);
}

} // namespace ordo::cuda
