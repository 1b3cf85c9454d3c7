// SPDX-License-Identifier: Apache-2.0
// Memory objects: buffers, sub-buffers, views from native handles, their info, and
// buffers as kernel arguments. The flag and region rules are ordo/mem_rules.hpp's, as
// on every adapter. Where the bytes live: docs/cuda.md, "Memory objects".
#include <algorithm>
#include <cstring>
#include <new>

#include "backend.hpp"
#include "ordo/info.hpp"
#include "ordo/mem_rules.hpp"

namespace ordo::stream_backend {

namespace {

constexpr size_t kBaseAlign = 256; // UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN (device.cpp), in bytes

ur_mem_handle_t to_handle(Mem *m) { return reinterpret_cast<ur_mem_handle_t>(m); }

void destroy(Mem *m);

void drop(Mem *m) {
  if (m->drop()) destroy(m);
}

// Gives the memory back. The driver's free waits for the device's work on it, so a
// buffer released while commands that use it are pending goes once they are done;
// every device of the context is synchronised first so that holds for any of them.
void destroy(Mem *m) {
  Context *ctx = m->ctx;
  if (!m->root) {
    {
      std::lock_guard<std::mutex> lock(ctx->buffers_mutex);
      auto it = std::find(ctx->buffers.begin(), ctx->buffers.end(), m);
      if (it != ctx->buffers.end()) ctx->buffers.erase(it);
    }
    for (Device *d : ctx->devices)
      if (!d->make_current()) drv::synchronize_current();
    if (m->home) m->home->make_current();
    switch (m->storage) {
    case Mem::Storage::device:
    case Mem::Storage::managed: drv::free_device(m->ptr); break;
    case Mem::Storage::host: drv::free_host(m->ptr); break;
    case Mem::Storage::registered: {
      status r = drv::host_unregister(m->ptr);
      if (r)
        ORDO_LOG(logger(), warning, "USE_HOST_POINTER memory %p not unregistered: %s", m->ptr,
                 drv::error_text(r).c_str());
      break;
    }
    case Mem::Storage::usm: {
      if (!m->free_usm) break;
      ur_result_t pooled = UR_RESULT_SUCCESS;
      ordo::stream_ordered::context_pools::block_facts a;
      if (!ctx->pools->free_now(m->ptr, pooled) && ctx->pools->take_plain(m->ptr, &a))
        free_plain(ctx, a.base, a.kind, a.device);
      break;
    }
    case Mem::Storage::alias: break;
    }
    if (m->own_mirror) drv::free_host(m->mirror);
  }
  Mem *root = m->root;
  ordo::retire(m);
  if (root) drop(root);
  context_drop(ctx);
}

// A new memory object of `ctx` (context held); `root` (if any) gets a holder.
Mem *make_mem(Context *ctx, Mem *root) {
  Mem *m = new Mem();
  m->ctx = ctx;
  context_hold(ctx);
  if (root) {
    root->hold();
    m->root = root;
    m->home = root->home;
  }
  return m;
}

// Copies `size` bytes between host memory and the device now (creation).
status copy_now(Device *d, void *dst, const void *src, size_t size) {
  stream_t s = nullptr;
  if (status r = d->internal_stream(&s)) return r;
  if (status r = drv::memcpy_async(dst, src, size, s)) return r;
  return drv::stream_synchronize(s);
}

size_t max_alloc(const Context *ctx) {
  size_t m = SIZE_MAX;
  for (const Device *d : ctx->devices) m = std::min(m, d->facts.total_mem);
  return m;
}

ur_result_t publish(Mem *m, ur_mem_handle_t *out) {
  *out = to_handle(m);
  return UR_RESULT_SUCCESS;
}

// USE_HOST_POINTER: the caller's memory is the buffer's storage (the spec's "storage
// bits"), so what the host writes there later is what commands read. The pages are
// registered with the driver (portable, mapped) and used in place; memory the caller
// already registered is used in place and left registered. False when the driver
// registers nothing (then the caller falls back to a device copy).
bool use_host_memory(Mem *m, void *host) {
  status r = drv::host_register(host, m->size, false);
  if (r && r.kind != err::already_registered) {
    ORDO_LOG(logger(), warning,
             "USE_HOST_POINTER memory %p (%zu bytes) not registered (%s): the buffer is a device copy", host, m->size,
             drv::error_text(r).c_str());
    return false;
  }
  m->storage = r ? Mem::Storage::alias : Mem::Storage::registered; // alias: not ours to unregister
  m->ptr = static_cast<uint8_t *>(host);
  m->mirror = m->ptr;
  return true;
}

// Allocates a root's memory and makes its first bytes the host memory's, if any.
ur_result_t allocate_root(Mem *m, ur_mem_flags_t flags, const void *host) {
  Context *ctx = m->ctx;
  bool all_managed = ctx->devices.size() > 1;
  for (Device *d : ctx->devices) all_managed = all_managed && d->facts.managed;
  m->home = ctx->devices[0];
  ORDO_DRV(m->home->make_current());
  if ((flags & UR_MEM_FLAG_USE_HOST_POINTER) && use_host_memory(m, const_cast<void *>(host))) return UR_RESULT_SUCCESS;
  void *p = nullptr;
  status r;
  if (flags & UR_MEM_FLAG_ALLOC_HOST_POINTER) {
    m->storage = Mem::Storage::host;
    r = drv::alloc_host(&p, m->size);
  } else if (all_managed) {
    m->storage = Mem::Storage::managed;
    r = drv::alloc_managed(&p, m->size);
  } else {
    m->storage = Mem::Storage::device;
    r = drv::alloc_device(&p, m->size);
  }
  if (r)
    return r.kind == err::out_of_memory && m->storage == Mem::Storage::host ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                                                            : to_ur(r);
  m->ptr = static_cast<uint8_t *>(p);
  if (m->storage == Mem::Storage::host) m->mirror = m->ptr;
  if (flags & UR_MEM_FLAG_USE_HOST_POINTER) m->mirror = static_cast<uint8_t *>(const_cast<void *>(host));
  if (host) {
    status c = m->storage == Mem::Storage::host ? (std::memcpy(p, host, m->size), status{})
                                                : copy_now(m->home, p, host, m->size);
    if (c) {
      if (m->storage == Mem::Storage::host)
        drv::free_host(p);
      else
        drv::free_device(p);
      m->ptr = nullptr;
      return to_ur(c);
    }
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemBufferCreate(ur_context_handle_t hContext, ur_mem_flags_t flags, size_t size,
                                         const ur_buffer_properties_t *pProperties, ur_mem_handle_t *phBuffer) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (ur_result_t r = ordo::ur_common::check_buffer_create(flags, size, pProperties, phBuffer, max_alloc(ctx)))
    return r;
  const void *host = pProperties ? pProperties->pHost : nullptr;
  Mem *m = nullptr;
  try {
    m = make_mem(ctx, nullptr);
    m->size = size;
    m->access = ordo::ur_common::access_of(flags);
    if (ur_result_t r = allocate_root(m, flags, host)) {
      m->storage = Mem::Storage::alias; // nothing to free
      drop(m);
      return r;
    }
    std::lock_guard<std::mutex> lock(ctx->buffers_mutex);
    ctx->buffers.push_back(m);
  } catch (const std::bad_alloc &) {
    if (m) drop(m);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return publish(m, phBuffer);
}

ur_result_t UR_APICALL urMemRetain(ur_mem_handle_t hMem) {
  ORDO_UNWRAP(Mem, m, hMem);
  if (!m->retain_user()) return ordo::invalid_of(m);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemRelease(ur_mem_handle_t hMem) {
  ORDO_UNWRAP(Mem, m, hMem);
  bool last_ = false;
  if (!m->release_user(last_)) return ordo::invalid_of(m);
  if (last_) drop(m);
  return UR_RESULT_SUCCESS;
}

// As clCreateSubBuffer: no sub-buffer of a sub-buffer, no host-pointer flags, access
// only narrowed, the origin a multiple of UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN.
ur_result_t UR_APICALL urMemBufferPartition(ur_mem_handle_t hBuffer, ur_mem_flags_t flags,
                                            ur_buffer_create_type_t bufferCreateType, const ur_buffer_region_t *pRegion,
                                            ur_mem_handle_t *phMem) {
  ORDO_UNWRAP(Mem, b, hBuffer);
  ur_mem_flags_t access = 0;
  if (ur_result_t r = ordo::ur_common::check_partition(flags, bufferCreateType, pRegion, phMem, b->sub_buffer, b->size,
                                                       b->access, kBaseAlign, access))
    return r;
  try {
    Mem *m = make_mem(b->ctx, b->owner());
    m->origin = b->root_offset() + pRegion->origin;
    m->size = pRegion->size;
    m->ptr = b->ptr + pRegion->origin;
    m->access = access;
    m->storage = Mem::Storage::alias;
    m->sub_buffer = true;
    return publish(m, phMem);
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
}

// A device address becomes a buffer when the adapter knows the memory it is in (which
// gives the size: to the end of that memory): a live buffer of the context (the view
// shares its bytes and holds it), or a USM allocation of the context (freed with the
// buffer when ownership is given, which needs the allocation's first byte). Any other
// address is refused with INVALID_MEM_OBJECT.
ur_result_t UR_APICALL urMemBufferCreateWithNativeHandle(ur_native_handle_t hNativeMem, ur_context_handle_t hContext,
                                                         const ur_mem_native_properties_t *pProperties,
                                                         ur_mem_handle_t *phMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!phMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  auto *p = reinterpret_cast<uint8_t *>(hNativeMem);
  if (!p) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  const bool owned = pProperties && pProperties->isNativeHandleOwned;
  try {
    if (Mem *source = ordo::ur_common::buffer_containing<Mem>(ctx, p)) {
      Mem *m = make_mem(ctx, source);
      drop(source); // buffer_containing's holder; make_mem took the view's
      m->origin = size_t(p - source->ptr);
      m->size = source->size - m->origin;
      m->ptr = p;
      m->storage = Mem::Storage::alias;
      return publish(m, phMem);
    }
    ordo::stream_ordered::context_pools::block_facts a;
    if (ur_result_t r = ordo::ur_common::native_usm_block(*ctx->pools, p, owned, a)) return r;
    Mem *m = make_mem(ctx, nullptr);
    m->size = size_t(static_cast<uint8_t *>(a.base) + a.size - p);
    m->ptr = p;
    m->storage = Mem::Storage::usm;
    m->free_usm = owned;
    m->home = a.device ? reinterpret_cast<Device *>(a.device) : ctx->devices[0];
    if (a.kind == UR_USM_TYPE_HOST) m->mirror = p;
    return publish(m, phMem);
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
}

} // namespace

ur_result_t kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *ctx, void **out) {
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!h) { // a null buffer: the kernel gets a null pointer
    *out = nullptr;
    return UR_RESULT_SUCCESS;
  }
  Mem *m = nullptr;
  if (unwrap(h, m) != UR_RESULT_SUCCESS || m->ctx != ctx) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  *out = m->ptr;
  return UR_RESULT_SUCCESS;
}

void install_memory_entry_points(ur_dditable_t &t) {
  t.Mem.pfnBufferCreate = urMemBufferCreate;
  t.Mem.pfnRetain = urMemRetain;
  t.Mem.pfnRelease = urMemRelease;
  t.Mem.pfnBufferPartition = urMemBufferPartition;
  // The native handle is the device address of the first byte (CUdeviceptr / hipDeviceptr_t).
  t.Mem.pfnGetNativeHandle = ordo::ur_common::mem_get_native_handle<Mem, Device>;
  t.Mem.pfnBufferCreateWithNativeHandle = urMemBufferCreateWithNativeHandle;
  t.Mem.pfnGetInfo = ordo::ur_common::mem_get_info<Mem>;
}

} // namespace ordo::stream_backend
