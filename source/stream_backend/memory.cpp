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

void destroy(Mem *m);

void drop(Mem *m) {
  if (m->drop()) destroy(m);
}

// Gives the memory back. The driver's free waits for the device's work on it, so a
// buffer released while commands that use it are pending goes once they are done;
// every device of the context is synchronised first so that holds for any of them.
void free_storage(Mem *m) {
  Context *ctx = m->ctx;
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
  case Mem::Storage::usm: ordo::ur_common::free_owned_usm(m); break;
  case Mem::Storage::alias: break;
  }
  if (m->own_mirror) drv::free_host(m->mirror);
}

void destroy(Mem *m) { ordo::ur_common::destroy_mem(m, free_storage); }

// A new memory object of `ctx` (context held); `root` (if any) gets a holder and gives
// the view its home device.
Mem *make_mem(Context *ctx, Mem *root) {
  Mem *m = ordo::ur_common::make_mem(ctx, root);
  if (root) m->home = root->home;
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

ur_result_t UR_APICALL urMemRelease(ur_mem_handle_t hMem) {
  ORDO_UNWRAP(Mem, m, hMem);
  bool last_ = false;
  if (!m->release_user(last_)) return ordo::invalid_of(m);
  if (last_) drop(m);
  return UR_RESULT_SUCCESS;
}

// What ur_common's memory entry points leave to the backend (ur_common/memory.hpp).
struct memory_hooks {
  using Context = stream_backend::Context;
  using Device = stream_backend::Device;
  using Mem = stream_backend::Mem;
  static constexpr size_t kBaseAlign = stream_backend::kBaseAlign;
  static size_t max_alloc(const Context *ctx) { return stream_backend::max_alloc(ctx); }
  static Mem *make(Context *ctx, Mem *root) { return make_mem(ctx, root); }
  static void drop(Mem *m) { stream_backend::drop(m); }
  static ur_result_t allocate_root(Mem *m, ur_mem_flags_t flags, const void *host) {
    ur_result_t r = stream_backend::allocate_root(m, flags, host);
    if (r != UR_RESULT_SUCCESS) m->storage = Mem::Storage::alias; // nothing to free
    return r;
  }
  // A view of USM lives on the allocation's device; host USM maps in place.
  template <class Facts> static void adopt_usm(Mem *m, const Facts &a) {
    m->home = a.device ? reinterpret_cast<Device *>(a.device) : m->ctx->devices[0];
    if (a.kind == UR_USM_TYPE_HOST) m->mirror = m->ptr;
  }
  static ur_result_t UR_APICALL release(ur_mem_handle_t hMem) { return stream_backend::urMemRelease(hMem); }
};

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

// The native handle is the device address of the first byte (CUdeviceptr / hipDeviceptr_t).
void install_memory_entry_points(ur_dditable_t &t) { ordo::ur_common::buffer_entry_points<memory_hooks>::install(t); }

} // namespace ordo::stream_backend
