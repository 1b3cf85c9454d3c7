// SPDX-License-Identifier: Apache-2.0
// The front of urVirtualMem*, urPhysicalMem{Create,GetInfo} and urIPC{Get,Put,Close}-
// PhysMemHandleExp, written once: argument checks in their order and the table of
// reservations and mappings (ordo::virtual_ranges); the adapter's hooks touch the
// address space (native CPU: mmap over memory files; the stream backend: the driver's
// virtual memory management). Handles are checked by `unwrap(handle, T *&)` found by
// argument-dependent lookup (ordo::unwrap, or the adapter's stricter overload). A hooks
// struct `H` gives:
//
//   using Context = ...; using Device = ...;
//   using PhysicalMem = ...;  // an ordo::object with ctx, size, flags
//   using PhysRef = ...;      // a mapping's hold on its physical memory: PhysRef(PhysicalMem *)
//   static ordo::virtual_ranges<Context, PhysRef> &ranges();
//   // The context of urVirtualMem* and urPhysicalMemCreate (an adapter may refuse one
//   // without virtual memory), and a device of it.
//   static ur_result_t context_of(ur_context_handle_t, Context *&);
//   static ur_result_t context_device(Context *, ur_device_handle_t, Device *&);
//   // The granularity of every range of the context (recommended or minimum).
//   static ur_result_t granularity(Context *, bool recommended, size_t &);
//   static void hold_context(Context *); static void drop_context(Context *);
//   // Reserve address space (`hint` is a hint), and give it back (also when the table
//   // has no room for it).
//   static ur_result_t reserve(Context *, const void *hint, size_t, void *&);
//   static void unreserve(void *, size_t);
//   // A whole reservation goes, with the mappings still in it.
//   static ur_result_t free_reservation(Context *, void *, size_t, size_t gran, mapping_map &);
//   static ur_result_t map(Context *, PhysicalMem *, uintptr_t, size_t, size_t offset,
//                          ur_virtual_mem_access_flags_t, size_t gran);
//   static ur_result_t unmap(uintptr_t, size_t, size_t gran);
//   static ur_result_t set_access(Context *, const mapping &, uintptr_t, size_t, size_t gran,
//                                 ur_virtual_mem_access_flags_t);
//   static ur_result_t create_physical(Context *, Device *, size_t, ur_physical_mem_flags_t, size_t gran,
//                                      ur_physical_mem_handle_t *);
//   static ur_device_handle_t device_of(const PhysicalMem *);
//   static ur_result_t UR_APICALL physical_retain(ur_physical_mem_handle_t);
//   static ur_result_t UR_APICALL physical_release(ur_physical_mem_handle_t);
//   // The handle data of memory made with ENABLE_IPC, and their end (pData not null).
//   static ur_result_t ipc_export(PhysicalMem *, void **ppData, size_t *pSize);
//   static ur_result_t ipc_put(const void *pData);
//   static ur_result_t UR_APICALL ipc_open(ur_context_handle_t, ur_device_handle_t, const void *, size_t,
//                                          ur_physical_mem_handle_t *);
#pragma once

#include <cstddef>
#include <cstdint>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ordo/virtual_ranges.hpp"
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo::ur_common {

template <class H> struct virtual_mem_entry_points {
  using Context = typename H::Context;
  using Device = typename H::Device;
  using PhysicalMem = typename H::PhysicalMem;
  using PhysRef = typename H::PhysRef;
  using Ranges = ordo::virtual_ranges<Context, PhysRef>;

  // Every range is whole granules: a start, a size (not 0) and an offset.
  static bool aligned(uintptr_t p, size_t size, size_t offset, size_t gran) {
    return size != 0 && p % gran == 0 && size % gran == 0 && offset % gran == 0;
  }

  static ur_result_t UR_APICALL granularity_get_info(ur_context_handle_t hContext, ur_device_handle_t hDevice, size_t,
                                                     ur_virtual_mem_granularity_info_t propName, size_t propSize,
                                                     void *pPropValue, size_t *pPropSizeRet) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (hDevice) {
      Device *d = nullptr;
      if (ur_result_t r = H::context_device(ctx, hDevice, d)) return r;
    }
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    if (propName != UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM && propName != UR_VIRTUAL_MEM_GRANULARITY_INFO_RECOMMENDED)
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
    size_t g = 0;
    if (ur_result_t r = H::granularity(ctx, propName == UR_VIRTUAL_MEM_GRANULARITY_INFO_RECOMMENDED, g)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    return out.value(g);
  }

  static ur_result_t UR_APICALL reserve(ur_context_handle_t hContext, const void *pStart, size_t size, void **ppStart) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (!ppStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    size_t gran = 0;
    if (ur_result_t r = H::granularity(ctx, false, gran)) return r;
    if (size == 0 || size % gran != 0) return UR_RESULT_ERROR_INVALID_SIZE;
    if (reinterpret_cast<uintptr_t>(pStart) % gran != 0) return UR_RESULT_ERROR_INVALID_VALUE;
    void *p = nullptr;
    if (ur_result_t r = H::reserve(ctx, pStart, size, p)) return r;
    try {
      H::ranges().add(ctx, reinterpret_cast<uintptr_t>(p), size);
    } catch (...) {
      H::unreserve(p, size);
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    H::hold_context(ctx); // the reservation's; dropped by urVirtualMemFree
    *ppStart = p;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL free(ur_context_handle_t hContext, const void *pStart, size_t size) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    size_t gran = 0;
    if (ur_result_t r = H::granularity(ctx, false, gran)) return r;
    typename Ranges::mapping_map dropped; // their physical memory is released outside the lock
    ur_result_t r = H::ranges().remove(
        ctx, reinterpret_cast<uintptr_t>(pStart), size,
        [&](typename Ranges::mapping_map &mappings) {
          return H::free_reservation(ctx, const_cast<void *>(pStart), size, gran, mappings);
        },
        dropped);
    if (r) return r; // only a whole reservation goes
    H::drop_context(ctx);
    return UR_RESULT_SUCCESS;
  }

  // Inside one reservation of this context, over no mapping.
  static ur_result_t UR_APICALL map(ur_context_handle_t hContext, const void *pStart, size_t size,
                                    ur_physical_mem_handle_t hPhysicalMem, size_t offset,
                                    ur_virtual_mem_access_flags_t flags) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    PhysicalMem *phys = nullptr;
    if (ur_result_t r = unwrap(hPhysicalMem, phys)) return r;
    if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    size_t gran = 0;
    if (ur_result_t r = H::granularity(ctx, false, gran)) return r;
    const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
    if (!aligned(p, size, offset, gran)) return UR_RESULT_ERROR_INVALID_VALUE;
    if (offset > phys->size || size > phys->size - offset) return UR_RESULT_ERROR_INVALID_SIZE;
    if (phys->ctx != ctx) return UR_RESULT_ERROR_INVALID_VALUE;
    return H::ranges().map(ctx, p, size, PhysRef(phys), offset, flags,
                           [&] { return H::map(ctx, phys, p, size, offset, flags, gran); });
  }

  // One whole mapping, given back to its reservation.
  static ur_result_t UR_APICALL unmap(ur_context_handle_t hContext, const void *pStart, size_t size) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    size_t gran = 0;
    if (ur_result_t r = H::granularity(ctx, false, gran)) return r;
    const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
    PhysRef released; // dropped outside the lock
    return H::ranges().unmap(
        ctx, p, size, [&](const typename Ranges::mapping &) { return H::unmap(p, size, gran); }, released);
  }

  // Changes the access of mapped pages; a range inside one mapping splits it.
  static ur_result_t UR_APICALL set_access(ur_context_handle_t hContext, const void *pStart, size_t size,
                                           ur_virtual_mem_access_flags_t flags) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    size_t gran = 0;
    if (ur_result_t r = H::granularity(ctx, false, gran)) return r;
    const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
    if (!aligned(p, size, 0, gran)) return UR_RESULT_ERROR_INVALID_VALUE;
    return H::ranges().set_access(ctx, p, size, flags, [&](const typename Ranges::mapping &m) {
      return H::set_access(ctx, m, p, size, gran, flags);
    });
  }

  static ur_result_t UR_APICALL get_info(ur_context_handle_t hContext, const void *pStart, size_t size,
                                         ur_virtual_mem_info_t propName, size_t propSize, void *pPropValue,
                                         size_t *pPropSizeRet) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    if (propName != UR_VIRTUAL_MEM_INFO_ACCESS_MODE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    ur_virtual_mem_access_flags_t access = UR_VIRTUAL_MEM_ACCESS_FLAG_NONE; // reserved, not mapped
    if (ur_result_t r = H::ranges().access_at(ctx, reinterpret_cast<uintptr_t>(pStart), size, &access)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    return out.value(access);
  }

  static ur_result_t UR_APICALL physical_create(ur_context_handle_t hContext, ur_device_handle_t hDevice, size_t size,
                                                const ur_physical_mem_properties_t *pProperties,
                                                ur_physical_mem_handle_t *phPhysicalMem) {
    Context *ctx = nullptr;
    if (ur_result_t r = H::context_of(hContext, ctx)) return r;
    Device *d = nullptr;
    if (ur_result_t r = H::context_device(ctx, hDevice, d)) return r;
    if (!phPhysicalMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    const ur_physical_mem_flags_t flags = pProperties ? pProperties->flags : 0;
    if (flags & UR_PHYSICAL_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    size_t gran = 0;
    if (ur_result_t r = H::granularity(ctx, false, gran)) return r;
    if (size == 0 || size % gran != 0) return UR_RESULT_ERROR_INVALID_SIZE;
    return H::create_physical(ctx, d, size, flags, gran, phPhysicalMem);
  }

  static ur_result_t UR_APICALL physical_get_info(ur_physical_mem_handle_t h, ur_physical_mem_info_t propName,
                                                  size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
    PhysicalMem *p = nullptr;
    if (ur_result_t r = unwrap(h, p)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    return ordo::physical_mem_info(out, propName, reinterpret_cast<ur_context_handle_t>(p->ctx), H::device_of(p),
                                   p->size, p->flags, p->count());
  }

  static ur_result_t UR_APICALL ipc_get(ur_context_handle_t hContext, ur_physical_mem_handle_t hPhysMem, void **ppData,
                                        size_t *pSize) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    PhysicalMem *p = nullptr;
    if (ur_result_t r = unwrap(hPhysMem, p)) return r;
    if (!ppData || !pSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
    // The spec's code for memory made without the flag.
    if (!(p->flags & UR_PHYSICAL_MEM_FLAG_ENABLE_IPC)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
    return H::ipc_export(p, ppData, pSize);
  }

  static ur_result_t UR_APICALL ipc_put(ur_context_handle_t hContext, const void *pData) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!pData) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    return H::ipc_put(pData);
  }

  static ur_result_t UR_APICALL ipc_close(ur_context_handle_t hContext, ur_physical_mem_handle_t hPhysMem) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    PhysicalMem *p = nullptr;
    if (ur_result_t r = unwrap(hPhysMem, p)) return r;
    if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
    return H::physical_release(hPhysMem);
  }

  static void install(ur_dditable_t &t) {
    t.VirtualMem.pfnGranularityGetInfo = granularity_get_info;
    t.VirtualMem.pfnReserve = reserve;
    t.VirtualMem.pfnFree = free;
    t.VirtualMem.pfnMap = map;
    t.VirtualMem.pfnUnmap = unmap;
    t.VirtualMem.pfnSetAccess = set_access;
    t.VirtualMem.pfnGetInfo = get_info;
    t.PhysicalMem.pfnCreate = physical_create;
    t.PhysicalMem.pfnRetain = H::physical_retain;
    t.PhysicalMem.pfnRelease = H::physical_release;
    t.PhysicalMem.pfnGetInfo = physical_get_info;
    t.IPCExp.pfnGetPhysMemHandleExp = ipc_get;
    t.IPCExp.pfnPutPhysMemHandleExp = ipc_put;
    t.IPCExp.pfnOpenPhysMemHandleExp = H::ipc_open;
    t.IPCExp.pfnClosePhysMemHandleExp = ipc_close;
  }
};

} // namespace ordo::ur_common
