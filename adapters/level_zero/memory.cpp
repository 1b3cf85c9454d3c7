// SPDX-License-Identifier: Apache-2.0
// Memory objects: buffers, sub-buffers, buffers from native handles, their info, and
// buffers as kernel arguments. The flag and region rules are ordo/mem_rules.hpp's, as on
// every adapter. Where the bytes live: docs/level-zero.md, "Memory objects". Images are
// not offered (urMemImage* answer UNSUPPORTED_FEATURE, IMAGE_SUPPORT is false).
#include <algorithm>
#include <cstring>
#include <new>

#include "common.hpp"
#include "ordo/info.hpp"
#include "ordo/mem_rules.hpp"

namespace ordo::level_zero {

namespace {

// UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN (device.cpp: 512 bits), in bytes: a sub-buffer's
// origin is a multiple of it.
constexpr size_t kBaseAlign = 64;

// Intel's driver-experimental functions that make the caller's host memory usable by
// the device in place (zexDriverImportExternalPointer, zexDriverReleaseImportedPointer),
// found through zeDriverGetExtensionFunctionAddress; null where the driver has none.
using import_fn = ze_result_t(ZE_APICALL *)(ze_driver_handle_t, void *, size_t);
using release_import_fn = ze_result_t(ZE_APICALL *)(ze_driver_handle_t, void *);
struct Importer {
  import_fn import_pointer = nullptr;
  release_import_fn release_pointer = nullptr;
};
const Importer &importer(Platform *p) {
  // One driver per platform; the platforms live for the process.
  static std::mutex mutex;
  static std::vector<std::pair<Platform *, Importer>> *known = new std::vector<std::pair<Platform *, Importer>>();
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &k : *known)
    if (k.first == p) return k.second;
  Importer i;
  void *f = nullptr, *g = nullptr;
  if (ze().zeDriverGetExtensionFunctionAddress(p->driver, "zexDriverImportExternalPointer", &f) == ZE_RESULT_SUCCESS &&
      ze().zeDriverGetExtensionFunctionAddress(p->driver, "zexDriverReleaseImportedPointer", &g) == ZE_RESULT_SUCCESS &&
      f && g) {
    i.import_pointer = reinterpret_cast<import_fn>(f);
    i.release_pointer = reinterpret_cast<release_import_fn>(g);
  }
  known->push_back({p, i});
  return known->back().second;
}

// Gives a root's bytes back. Commands that use a buffer hold it until they have
// completed (Command::hold), so nothing can still use the bytes here.
void free_storage(Mem *m) {
  Context *ctx = m->ctx;
  switch (m->storage) {
  case Mem::Storage::device:
  case Mem::Storage::host:
  case Mem::Storage::shared: free_memory(ctx, m->ptr); break;
  case Mem::Storage::imported: {
    const Importer &imp = importer(ctx->platform);
    if (ze_result_t r = imp.release_pointer(ctx->platform->driver, m->ptr))
      ORDO_LOG(logger(), warning, "USE_HOST_POINTER memory %p: import not released: %s", static_cast<void *>(m->ptr),
               error_text(r).c_str());
    break;
  }
  case Mem::Storage::usm: ordo::ur_common::free_owned_usm(m); break;
  case Mem::Storage::alias: break;
  }
  if (m->own_mirror) free_memory(ctx, m->mirror);
}

void destroy(Mem *m) { ordo::ur_common::destroy_mem(m, free_storage); }

size_t max_alloc(const Context *ctx) {
  size_t m = SIZE_MAX;
  for (const Device *d : ctx->devices) m = std::min<size_t>(m, d->facts.props.maxMemAllocSize);
  return m;
}

// USE_HOST_POINTER: the caller's memory is the buffer's storage, so what the host
// writes there later is what commands read, and what they write lands there. Memory
// the driver already knows as host or shared memory of this context is used as it
// is; other memory is imported (zexDriverImportExternalPointer). False when neither
// works: the caller falls back to a device copy that maps through the caller's memory.
bool use_host_memory(Mem *m, void *host) {
  Context *ctx = m->ctx;
  ze_memory_allocation_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  if (ze().zeMemGetAllocProperties(ctx->ze, host, &props, nullptr) == ZE_RESULT_SUCCESS &&
      (props.type == ZE_MEMORY_TYPE_HOST || props.type == ZE_MEMORY_TYPE_SHARED)) {
    m->storage = Mem::Storage::alias; // the caller's USM: not ours to free
  } else {
    const Importer &imp = importer(ctx->platform);
    ze_result_t r = imp.import_pointer ? imp.import_pointer(ctx->platform->driver, host, m->size)
                                       : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (r != ZE_RESULT_SUCCESS) {
      ORDO_LOG(logger(), info, "USE_HOST_POINTER memory %p (%zu bytes) not imported (%s): the buffer is a device copy",
               host, m->size, error_text(r).c_str());
      return false;
    }
    m->storage = Mem::Storage::imported;
  }
  m->ptr = static_cast<uint8_t *>(host);
  m->host_visible = true;
  return true;
}

// Allocates a root's memory and makes its first bytes the host memory's, if any.
ur_result_t allocate_root(Mem *m, ur_mem_flags_t flags, const void *host) {
  Context *ctx = m->ctx;
  if ((flags & UR_MEM_FLAG_USE_HOST_POINTER) && use_host_memory(m, const_cast<void *>(host))) return UR_RESULT_SUCCESS;
  // Device memory is one device's: a context of several devices gets host memory, which
  // every device of the context reaches.
  ur_usm_type_t kind = UR_USM_TYPE_DEVICE;
  Device *dev = ctx->devices[0];
  if ((flags & UR_MEM_FLAG_ALLOC_HOST_POINTER) || ctx->devices.size() > 1) {
    kind = UR_USM_TYPE_HOST;
    dev = nullptr;
  }
  void *p = nullptr;
  if (ze_result_t r = alloc_memory(ctx, kind, dev, m->size, kBaseAlign, &p)) {
    if (r == ZE_RESULT_ERROR_UNSUPPORTED_SIZE) return UR_RESULT_ERROR_INVALID_BUFFER_SIZE;
    return map_error(r);
  }
  m->storage = kind == UR_USM_TYPE_HOST ? Mem::Storage::host : Mem::Storage::device;
  m->ptr = static_cast<uint8_t *>(p);
  // A USE_HOST_POINTER buffer maps through the caller's memory (the map is derived
  // from the host pointer); others map host memory in place.
  if (flags & UR_MEM_FLAG_USE_HOST_POINTER)
    m->mirror = static_cast<uint8_t *>(const_cast<void *>(host));
  else
    m->host_visible = kind == UR_USM_TYPE_HOST;
  if (host) {
    ur_result_t r = UR_RESULT_SUCCESS;
    if (kind == UR_USM_TYPE_HOST)
      std::memcpy(p, host, m->size);
    else
      r = copy_now(ctx, dev, p, host, m->size);
    if (r != UR_RESULT_SUCCESS) {
      free_memory(ctx, p);
      m->ptr = nullptr;
      m->mirror = nullptr;
      m->storage = Mem::Storage::alias;
      return r;
    }
  }
  return UR_RESULT_SUCCESS;
}

// A released buffer's pending commands still run: each holds the buffer until it has.
ur_result_t UR_APICALL urMemRelease(ur_mem_handle_t hMem) {
  ORDO_UNWRAP(Mem, m, hMem);
  switch (ordo::release_reference(m)) {
  case ordo::released::none_left: return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  case ordo::released::last_holder: destroy(m); break;
  case ordo::released::kept: break;
  }
  return UR_RESULT_SUCCESS;
}

// What ur_common's memory entry points leave to the adapter (ur_common/memory.hpp).
struct memory_hooks {
  using Context = level_zero::Context;
  using Device = level_zero::Device;
  using Mem = level_zero::Mem;
  static constexpr size_t kBaseAlign = level_zero::kBaseAlign;
  static size_t max_alloc(const Context *ctx) { return level_zero::max_alloc(ctx); }
  static Mem *make(Context *ctx, Mem *root) { return ordo::ur_common::make_mem(ctx, root); }
  static void drop(Mem *m) { mem_drop(m); }
  static ur_result_t allocate_root(Mem *m, ur_mem_flags_t flags, const void *host) {
    return level_zero::allocate_root(m, flags, host);
  }
  // USM the host may use maps in place; the buffer is listed so that views can be made
  // of its bytes.
  template <class Facts> static void adopt_usm(Mem *m, const Facts &a) {
    m->host_visible = a.kind == UR_USM_TYPE_HOST || a.kind == UR_USM_TYPE_SHARED;
    std::lock_guard<std::mutex> lock(m->ctx->buffers_mutex);
    m->ctx->buffers.push_back(m);
  }
  static ur_result_t UR_APICALL release(ur_mem_handle_t hMem) { return level_zero::urMemRelease(hMem); }
};

} // namespace

void mem_drop(Mem *m) {
  if (m->drop()) destroy(m);
}

ur_result_t kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *ctx, Mem **mem, void **out) {
  *mem = nullptr;
  *out = nullptr;
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (!h) return UR_RESULT_SUCCESS; // a null buffer: the kernel gets a null pointer
  Mem *m = nullptr;
  if (unwrap(h, m) != UR_RESULT_SUCCESS || m->ctx != ctx) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  *mem = m;
  *out = m->ptr;
  return UR_RESULT_SUCCESS;
}

ur_result_t copy_now(Context *ctx, Device *dev, void *dst, const void *src, size_t size) {
  std::lock_guard<std::mutex> lock(ctx->copy_mutex);
  if (!ctx->copy_list) {
    ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                 nullptr,
                                 dev->facts.compute_ordinal,
                                 0,
                                 0,
                                 ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                                 ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ORDO_ZE(ze().zeCommandListCreateImmediate(ctx->ze, dev->ze, &desc, &ctx->copy_list));
  }
  // A synchronous list has run the copy when the append returns; the event makes
  // that explicit for drivers that only promise it for the queue.
  ZeEvent done;
  if (ur_result_t r = ctx->events.get(false, done)) return r;
  ur_result_t r = check(ze().zeCommandListAppendMemoryCopy(ctx->copy_list, dst, src, size, done.ev, 0, nullptr));
  if (r == UR_RESULT_SUCCESS) r = check(ze().zeEventHostSynchronize(done.ev, UINT64_MAX));
  ctx->events.put(done);
  return r;
}

void install_memory_entry_points(ur_dditable_t &t) { ordo::ur_common::buffer_entry_points<memory_hooks>::install(t); }

} // namespace ordo::level_zero
