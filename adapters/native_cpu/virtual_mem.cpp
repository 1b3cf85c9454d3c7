// SPDX-License-Identifier: Apache-2.0
// urVirtualMem*: address ranges reserved with mmap (no access, no backing), into which
// physical memory (physical_mem.cpp) is mapped with MAP_FIXED and given back to the
// reservation on unmap. Every range is in pages. Kernels and commands use mapped
// addresses as any host memory.
#include <sys/mman.h>

#include <cstdint>

#include "context.hpp"
#include "ordo/info.hpp"
#include "ordo/virtual_ranges.hpp"
#include "physical_mem.hpp"
#include "platform.hpp"

namespace ordo::native_cpu {

namespace {

using Ranges = ordo::virtual_ranges<Context, Ref<PhysicalMem>>;
Ranges &ranges() {
  static Ranges *r = new Ranges; // never destroyed: ranges may outlive statics
  return *r;
}

int protection(ur_virtual_mem_access_flags_t flags) {
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE) return PROT_READ | PROT_WRITE;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY) return PROT_READ;
  return PROT_NONE;
}

bool page_aligned(uintptr_t p, size_t size) { return size != 0 && p % page_size() == 0 && size % page_size() == 0; }

// Puts the pages of [p, p + size) back to reserved, inaccessible address space.
bool back_to_reserved(uintptr_t p, size_t size) {
  return mmap(reinterpret_cast<void *>(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
              0) != MAP_FAILED;
}

ur_result_t UR_APICALL urVirtualMemGranularityGetInfo(ur_context_handle_t hContext, ur_device_handle_t hDevice, size_t,
                                                      ur_virtual_mem_granularity_info_t propName, size_t propSize,
                                                      void *pPropValue, size_t *pPropSizeRet) {
  if (!lookup<Context>(hContext)) return Context::invalid_handle(hContext);
  if (hDevice && !is_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM:
  case UR_VIRTUAL_MEM_GRANULARITY_INFO_RECOMMENDED: return out.value(page_size());
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urVirtualMemReserve(ur_context_handle_t hContext, const void *pStart, size_t size,
                                           void **ppStart) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!ppStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0 || size % page_size() != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (reinterpret_cast<uintptr_t>(pStart) % page_size() != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  // pStart is a hint: the kernel may place the range elsewhere.
  void *p = mmap(const_cast<void *>(pStart), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  try {
    ranges().add(ctx, reinterpret_cast<uintptr_t>(p), size);
  } catch (...) {
    munmap(p, size);
    throw;
  }
  ctx->hold(); // the reservation's; dropped by urVirtualMemFree
  *ppStart = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urVirtualMemFree(ur_context_handle_t hContext, const void *pStart, size_t size) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Ranges::mapping_map dropped; // released outside the lock
  ur_result_t r = ranges().remove(
      ctx, reinterpret_cast<uintptr_t>(pStart), size,
      [&](Ranges::mapping_map &) {
        munmap(const_cast<void *>(pStart), size);
        return UR_RESULT_SUCCESS;
      },
      dropped);
  if (r) return r; // only a whole reservation goes
  ctx->drop_hold();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urVirtualMemMap(ur_context_handle_t hContext, const void *pStart, size_t size,
                                       ur_physical_mem_handle_t hPhysicalMem, size_t offset,
                                       ur_virtual_mem_access_flags_t flags) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  PhysicalMem *phys = lookup<PhysicalMem>(hPhysicalMem);
  if (!phys) return hPhysicalMem ? UR_RESULT_ERROR_INVALID_VALUE : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  if (!page_aligned(p, size) || offset % page_size() != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (offset > phys->size || size > phys->size - offset) return UR_RESULT_ERROR_INVALID_SIZE;
  if (phys->context != ctx) return UR_RESULT_ERROR_INVALID_VALUE;
  // Inside one reservation of this context, over no mapping.
  return ranges().map(ctx, p, size, Ref<PhysicalMem>(phys), offset, flags, [&] {
    return mmap(reinterpret_cast<void *>(p), size, protection(flags), MAP_SHARED | MAP_FIXED, phys->fd,
                static_cast<off_t>(offset)) == MAP_FAILED
               ? UR_RESULT_ERROR_OUT_OF_RESOURCES
               : UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL urVirtualMemUnmap(ur_context_handle_t hContext, const void *pStart, size_t size) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  Ref<PhysicalMem> released; // dropped outside the lock
  // One whole mapping, given back to reserved, inaccessible address space.
  return ranges().unmap(
      ctx, p, size,
      [&](const Ranges::mapping &) {
        return back_to_reserved(p, size) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_OUT_OF_RESOURCES;
      },
      released);
}

// Changes the access of mapped pages; a range inside one mapping splits it.
ur_result_t UR_APICALL urVirtualMemSetAccess(ur_context_handle_t hContext, const void *pStart, size_t size,
                                             ur_virtual_mem_access_flags_t flags) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  if (!page_aligned(p, size)) return UR_RESULT_ERROR_INVALID_VALUE;
  return ranges().set_access(ctx, p, size, flags, [&](const Ranges::mapping &) {
    return mprotect(reinterpret_cast<void *>(p), size, protection(flags)) == 0 ? UR_RESULT_SUCCESS
                                                                               : UR_RESULT_ERROR_OUT_OF_RESOURCES;
  });
}

ur_result_t UR_APICALL urVirtualMemGetInfo(ur_context_handle_t hContext, const void *pStart, size_t size,
                                           ur_virtual_mem_info_t propName, size_t propSize, void *pPropValue,
                                           size_t *pPropSizeRet) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  if (propName != UR_VIRTUAL_MEM_INFO_ACCESS_MODE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  ur_virtual_mem_access_flags_t access = UR_VIRTUAL_MEM_ACCESS_FLAG_NONE; // reserved, not mapped
  if (ur_result_t r = ranges().access_at(ctx, p, size, &access)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(access);
}

} // namespace

void install_virtual_mem_entry_points(ur_dditable_t &t) {
  t.VirtualMem.pfnGranularityGetInfo = urVirtualMemGranularityGetInfo;
  t.VirtualMem.pfnReserve = urVirtualMemReserve;
  t.VirtualMem.pfnFree = urVirtualMemFree;
  t.VirtualMem.pfnMap = urVirtualMemMap;
  t.VirtualMem.pfnUnmap = urVirtualMemUnmap;
  t.VirtualMem.pfnSetAccess = urVirtualMemSetAccess;
  t.VirtualMem.pfnGetInfo = urVirtualMemGetInfo;
}

} // namespace ordo::native_cpu
