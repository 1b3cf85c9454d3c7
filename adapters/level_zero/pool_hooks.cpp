// SPDX-License-Identifier: Apache-2.0
// The Level Zero adapter's hooks into the stream-ordered layer (common.hpp, PoolHooks;
// docs/adapter-guide.md): every pool, default pools included, is the layer's, over
// chunks of zeMemAllocDevice / zeMemAllocHost / zeMemAllocShared memory; a block's
// release event is its free command's event (docs/level-zero.md).
#include <cstring>

#include "common.hpp"
#include "ordo/usm_owners.hpp"

namespace ordo::level_zero {

namespace {
Device *as_device(ur_device_handle_t d) { return reinterpret_cast<Device *>(d); }
} // namespace

namespace {
ze_result_t driver_alloc(Context *ctx, ur_usm_type_t kind, Device *dev, size_t size, size_t align, void **out) {
  ze_device_mem_alloc_desc_t ddesc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  ze_host_mem_alloc_desc_t hdesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  switch (kind) {
  case UR_USM_TYPE_HOST: return ze().zeMemAllocHost(ctx->ze, &hdesc, size, align, out);
  case UR_USM_TYPE_DEVICE: return ze().zeMemAllocDevice(ctx->ze, &ddesc, size, align, dev->ze, out);
  case UR_USM_TYPE_SHARED: return ze().zeMemAllocShared(ctx->ze, &ddesc, &hdesc, size, align, dev->ze, out);
  default: return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  }
}
// Every driver allocation of every context (pool chunks and plain ones), so that a
// command on another context's memory is refused (check_usm) instead of run.
ordo::usm_owners<const Context *> &usm_owners() { return ordo::usm_owners<const Context *>::instance(); }
} // namespace

ze_result_t alloc_memory(Context *ctx, ur_usm_type_t kind, Device *dev, size_t size, size_t align, void **out) {
  ze_result_t r = driver_alloc(ctx, kind, dev, size, align, out);
  if (r != ZE_RESULT_SUCCESS) return r;
  try {
    usm_owners().note(*out, size, ctx);
  } catch (...) {
    ze().zeMemFree(ctx->ze, *out);
    *out = nullptr;
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return r;
}

ze_result_t free_memory(Context *ctx, void *p) {
  usm_owners().forget(p);
  return ze().zeMemFree(ctx->ze, p);
}

ur_result_t check_usm(const Context *ctx, const void *p, size_t bytes) {
  return ordo::ur_common::check_usm_range<const Context *>(ctx, p, bytes);
}

void *PoolHooks::get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) {
  void *p = nullptr;
  ze_result_t r = alloc_memory(ctx_, ur_usm_type_t(c.id), as_device(c.device), size, 0, &p);
  if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY && r != ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
    ORDO_LOG(logger(), warning, "pool chunk of %zu bytes: %s", size, error_text(r).c_str());
  return r == ZE_RESULT_SUCCESS ? p : nullptr;
}

// Only chunks with no live or pending block come back: nothing can still use them.
void PoolHooks::put_chunk(const ordo::stream_ordered::mem_class &, void *base, size_t) {
  ze_result_t r = free_memory(ctx_, base);
  if (r != ZE_RESULT_SUCCESS) ORDO_LOG(logger(), warning, "USM memory %p not freed: %s", base, error_text(r).c_str());
}

// A plain allocation is Level Zero memory of the context, as a chunk is.
void PoolHooks::free_plain(void *base, ur_usm_type_t, ur_device_handle_t) { put_chunk({}, base, 0); }

bool PoolHooks::event_complete(ur_event_handle_t ev) { return reinterpret_cast<Event *>(ev)->complete(); }

// urUSM*Alloc from a zero-initialising pool: host memory directly; device and shared
// memory by a fill on a list of its own, waited for.
ur_result_t PoolHooks::zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) {
  if (kind == UR_USM_TYPE_HOST) {
    std::memset(p, 0, size);
    return UR_RESULT_SUCCESS;
  }
  Device *d = as_device(device);
  ze_command_queue_desc_t desc{
      ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, d->facts.compute_ordinal, 0, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
      ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t list = nullptr;
  ORDO_ZE(ze().zeCommandListCreateImmediate(ctx_->ze, d->ze, &desc, &list));
  ZeEvent done;
  ur_result_t r = ctx_->events.get(false, done);
  const uint8_t zero = 0;
  if (r == UR_RESULT_SUCCESS) {
    r = check(ze().zeCommandListAppendMemoryFill(list, p, &zero, 1, size, done.ev, 0, nullptr));
    if (r == UR_RESULT_SUCCESS) r = check(ze().zeEventHostSynchronize(done.ev, UINT64_MAX));
    ctx_->events.put(done);
  }
  ze().zeCommandListDestroy(list);
  return r;
}

void install_pool_entry_points(ur_dditable_t &t) { ordo::ur_common::install_pool_entry_points<Context, Device>(t); }

} // namespace ordo::level_zero
