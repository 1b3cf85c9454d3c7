// SPDX-License-Identifier: Apache-2.0
// urMem*: buffers and sub-buffers over host memory (a buffer's native handle is its
// host pointer). No images: UR_DEVICE_INFO_IMAGE_SUPPORT is false.
#include "memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "context.hpp"
#include "entry_points.hpp"
#include "logging.hpp"
#include "ordo/info.hpp"
#include "platform.hpp"
#include "ur_common/memory.hpp"

namespace ordo::native_cpu {

namespace {

// Buffers with bytes of their own (no aliases), so that a native handle (a host pointer)
// leads back to its buffer. Never destroyed: entry points may run during process exit.
struct StorageList {
  std::mutex mu;
  std::vector<Mem *> buffers;
};

// The live buffer of `ctx` whose own bytes contain `p`, with an internal reference; or
// null. One being destroyed (no holder left) is skipped: it is about to leave the list.
Mem *buffer_containing(Context *ctx, const char *p) {
  StorageList &list = singleton<StorageList>();
  std::lock_guard<std::mutex> lock(list.mu);
  for (Mem *m : list.buffers)
    if (m->context == ctx && p >= m->data && p < m->data + m->size && ordo::ur_common::try_hold(m)) return m;
  return nullptr;
}

ur_result_t publish_mem(Mem *m, ur_mem_handle_t *out) {
  try {
    *out = publish(m);
  } catch (...) {
    m->drop_hold();
    throw;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urMemBufferCreate(ur_context_handle_t hContext, ur_mem_flags_t flags, size_t size,
                                         const ur_buffer_properties_t *pProperties, ur_mem_handle_t *phBuffer) {
  ORDO_LOOKUP(Context, ctx, hContext);
  // The shared checks, less the pNext chain's, which is walked with a bound on its length
  // (for_each_in_chain: a cyclic chain is not followed for ever). A memory channel and an
  // allocation location are placement hints; the CPU has one memory.
  ur_buffer_properties_t head = pProperties ? *pProperties : ur_buffer_properties_t{};
  head.pNext = nullptr;
  if (ur_result_t r =
          ordo::ur_common::check_buffer_create(flags, size, pProperties ? &head : nullptr, phBuffer, max_alloc_size()))
    return r;
  ur_result_t chain = UR_RESULT_SUCCESS;
  for_each_in_chain(pProperties ? pProperties->pNext : nullptr, [&](const ur_base_desc_t *p) {
    if (p->stype != UR_STRUCTURE_TYPE_BUFFER_CHANNEL_PROPERTIES &&
        p->stype != UR_STRUCTURE_TYPE_BUFFER_ALLOC_LOCATION_PROPERTIES)
      chain = UR_RESULT_ERROR_INVALID_VALUE;
  });
  if (chain) return chain;
  void *host = pProperties ? pProperties->pHost : nullptr;
  const ur_mem_flags_t access = ordo::ur_common::access_of(flags);
  if (flags & UR_MEM_FLAG_USE_HOST_POINTER)
    return publish_mem(new Mem(ctx, static_cast<char *>(host), size, access, Mem::Storage::UserHost), phBuffer);
  void *p = nullptr;
  if (posix_memalign(&p, mem_base_align_bytes(), size) != 0 || !p) {
    NC_LOG(info, "urMemBufferCreate: %zu bytes could not be allocated", size);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  std::unique_ptr<char, decltype(&std::free)> bytes(static_cast<char *>(p), &std::free);
  if (flags & UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER) std::memcpy(bytes.get(), host, size);
  Mem *m = new Mem(ctx, bytes.get(), size, access, Mem::Storage::Owned);
  bytes.release(); // the buffer's now
  return publish_mem(m, phBuffer);
}

// A sub-buffer is a view of its parent's bytes and keeps the parent alive; the rules
// are clCreateSubBuffer's (ur_common::check_partition).
ur_result_t UR_APICALL urMemBufferPartition(ur_mem_handle_t hBuffer, ur_mem_flags_t flags,
                                            ur_buffer_create_type_t bufferCreateType, const ur_buffer_region_t *pRegion,
                                            ur_mem_handle_t *phMem) {
  ORDO_LOOKUP(Mem, b, hBuffer);
  ur_mem_flags_t access = 0;
  if (ur_result_t r = ordo::ur_common::check_partition(flags, bufferCreateType, pRegion, phMem, b->sub_buffer, b->size,
                                                       b->access, mem_base_align_bytes(), access))
    return r;
  Mem *m = new Mem(b->context, b->data + pRegion->origin, pRegion->size, access, Mem::Storage::Alias, b);
  m->sub_buffer = true;
  return publish_mem(m, phMem);
}

// The buffer's first byte in host memory, valid for as long as the buffer lives.
ur_result_t UR_APICALL urMemGetNativeHandle(ur_mem_handle_t hMem, ur_device_handle_t hDevice,
                                            ur_native_handle_t *phNativeMem) {
  ORDO_LOOKUP(Mem, m, hMem);
  if (hDevice && !is_device(hDevice)) return device_error(hDevice);
  if (!phNativeMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeMem = reinterpret_cast<ur_native_handle_t>(m->data);
  return UR_RESULT_SUCCESS;
}

// A host pointer becomes a buffer (up to the end of its memory) when it lies in a live
// buffer of the context (the new buffer shares the bytes and keeps that buffer alive) or
// in a USM allocation of the context (with isNativeHandleOwned, which needs the
// allocation's first byte, the buffer frees it when it goes); else INVALID_MEM_OBJECT.
ur_result_t UR_APICALL urMemBufferCreateWithNativeHandle(ur_native_handle_t hNativeMem, ur_context_handle_t hContext,
                                                         const ur_mem_native_properties_t *pProperties,
                                                         ur_mem_handle_t *phMem) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!phMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  char *p = reinterpret_cast<char *>(hNativeMem);
  if (!p) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  const bool owned = pProperties && pProperties->isNativeHandleOwned;
  if (Mem *source = buffer_containing(ctx, p)) {
    Ref<Mem> hold(source, /*add=*/false); // buffer_containing's reference, until the new buffer has its own
    size_t size = static_cast<size_t>(source->data + source->size - p);
    return publish_mem(new Mem(ctx, p, size, UR_MEM_FLAG_READ_WRITE, Mem::Storage::Alias, source), phMem);
  }
  ordo::stream_ordered::context_pools::block_facts a;
  if (ur_result_t r = ordo::ur_common::native_usm_block(*ctx->pools, p, owned, a)) {
    NC_LOG(info, "urMemBufferCreateWithNativeHandle: %p %s", static_cast<void *>(p),
           r == UR_RESULT_ERROR_INVALID_VALUE ? "is inside a USM allocation: cannot own it"
                                              : "is in no buffer or USM allocation of this context");
    return r;
  }
  size_t size = static_cast<size_t>(static_cast<char *>(a.base) + a.size - p);
  Mem *m = new Mem(ctx, p, size, UR_MEM_FLAG_READ_WRITE, Mem::Storage::Usm);
  m->free_usm = owned;
  return publish_mem(m, phMem);
}

ur_result_t UR_APICALL urMemGetInfo(ur_mem_handle_t hMemory, ur_mem_info_t propName, size_t propSize, void *pPropValue,
                                    size_t *pPropSizeRet) {
  ORDO_LOOKUP(Mem, m, hMemory);
  return ordo::ur_common::mem_info(m->size, to_handle(m->context), m->count(), propName, propSize, pPropValue,
                                   pPropSizeRet);
}

} // namespace

Mem::Mem(Context *ctx, char *d, size_t n, ur_mem_flags_t a, Storage s, Mem *p)
    : context(ctx), parent(p), data(d), size(n), access(a), storage(s) {
  if (storage != Storage::Alias) {
    StorageList &list = singleton<StorageList>();
    std::lock_guard<std::mutex> lock(list.mu);
    list.buffers.push_back(this); // may throw: nothing taken yet
  }
  context->hold();
  if (parent) parent->hold();
}

Mem::~Mem() {
  if (storage != Storage::Alias) {
    StorageList &list = singleton<StorageList>();
    std::lock_guard<std::mutex> lock(list.mu);
    list.buffers.erase(std::find(list.buffers.begin(), list.buffers.end(), this));
  }
  if (storage == Storage::Owned) std::free(data);
  if (storage == Storage::Usm && free_usm) ordo::ur_common::free_owned_usm(*context->pools, data);
  if (parent) parent->drop_hold();
  context->drop_hold();
}

ur_result_t hold_kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *queue_context,
                                std::vector<Ref<Mem>> &held) {
  if (!h) return UR_RESULT_SUCCESS; // a null buffer: the kernel gets a null pointer
  ORDO_LOOKUP(Mem, m, h);
  if (m->context != queue_context) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  if (flags & UR_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  held.emplace_back(m);
  return UR_RESULT_SUCCESS;
}

void install_memory_entry_points(ur_dditable_t &t) {
  t.Mem.pfnBufferCreate = urMemBufferCreate;
  t.Mem.pfnRetain = user_retain<Mem>;
  t.Mem.pfnRelease = user_release<Mem>; // a pending command holds its buffers until it has run
  t.Mem.pfnBufferPartition = urMemBufferPartition;
  t.Mem.pfnGetNativeHandle = urMemGetNativeHandle;
  t.Mem.pfnBufferCreateWithNativeHandle = urMemBufferCreateWithNativeHandle;
  t.Mem.pfnGetInfo = urMemGetInfo;
}

} // namespace ordo::native_cpu
