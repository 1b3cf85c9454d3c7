// urVirtualMem*: address ranges reserved with mmap (no access, no backing), into which
// physical memory (physical_mem.cpp) is mapped with MAP_FIXED and given back to the
// reservation on unmap. Every range is in pages. Kernels and commands use mapped
// addresses as any host memory.
#include <sys/mman.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

#include "context.hpp"
#include "ordo/info.hpp"
#include "physical_mem.hpp"
#include "platform.hpp"

namespace nc {

namespace {

// One mapped piece: `size` bytes of `phys` from `offset`, with its access.
struct Mapping {
  size_t size;
  Ref<PhysicalMem> phys;
  size_t offset;
  ur_virtual_mem_access_flags_t access;
};

struct Reservation {
  Context *context;
  size_t size;
  std::map<uintptr_t, Mapping> mappings; // by start address; never overlapping
};

struct Reservations {
  std::mutex mu;
  std::map<uintptr_t, Reservation> by_start;

  // The reservation of `ctx` holding [p, p + size), or null.
  Reservation *containing(Context *ctx, uintptr_t p, size_t size, uintptr_t *start) {
    auto it = by_start.upper_bound(p);
    if (it == by_start.begin()) return nullptr;
    --it;
    Reservation &r = it->second;
    if (r.context != ctx || p - it->first > r.size || size > r.size - (p - it->first)) return nullptr;
    *start = it->first;
    return &r;
  }
};
Reservations &reservations() {
  static Reservations *r = new Reservations; // never destroyed: ranges may outlive statics
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
  return mmap(reinterpret_cast<void *>(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
              -1, 0) != MAP_FAILED;
}

ur_result_t UR_APICALL granularityGetInfo(ur_context_handle_t hContext, ur_device_handle_t hDevice, size_t,
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

ur_result_t UR_APICALL virtualMemReserve(ur_context_handle_t hContext, const void *pStart, size_t size, void **ppStart) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!ppStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0 || size % page_size() != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (reinterpret_cast<uintptr_t>(pStart) % page_size() != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  return guarded([&] {
    // pStart is a hint: the kernel may place the range elsewhere.
    void *p = mmap(const_cast<void *>(pStart), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    Reservations &rs = reservations();
    try {
      std::lock_guard<std::mutex> lock(rs.mu);
      rs.by_start.emplace(reinterpret_cast<uintptr_t>(p), Reservation{ctx, size, {}});
    } catch (...) {
      munmap(p, size);
      throw;
    }
    ctx->add_ref(); // the reservation's; dropped by urVirtualMemFree
    *ppStart = p;
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL virtualMemFree(ur_context_handle_t hContext, const void *pStart, size_t size) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Reservations &rs = reservations();
  std::map<uintptr_t, Mapping> dropped; // released outside the lock
  {
    std::lock_guard<std::mutex> lock(rs.mu);
    auto it = rs.by_start.find(reinterpret_cast<uintptr_t>(pStart));
    if (it == rs.by_start.end() || it->second.context != ctx || it->second.size != size)
      return UR_RESULT_ERROR_INVALID_VALUE; // only a whole reservation goes
    munmap(const_cast<void *>(pStart), size);
    dropped = std::move(it->second.mappings);
    rs.by_start.erase(it);
  }
  ctx->drop_ref();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL virtualMemMap(ur_context_handle_t hContext, const void *pStart, size_t size,
                                     ur_physical_mem_handle_t hPhysicalMem, size_t offset,
                                     ur_virtual_mem_access_flags_t flags) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  PhysicalMem *phys = lookup<PhysicalMem>(hPhysicalMem);
  if (!phys) return hPhysicalMem ? UR_RESULT_ERROR_INVALID_VALUE : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  if (!page_aligned(p, size) || offset % page_size() != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (offset > phys->size || size > phys->size - offset) return UR_RESULT_ERROR_INVALID_SIZE;
  if (phys->context != ctx) return UR_RESULT_ERROR_INVALID_VALUE;
  return guarded([&] {
    Reservations &rs = reservations();
    std::lock_guard<std::mutex> lock(rs.mu);
    uintptr_t start;
    Reservation *r = rs.containing(ctx, p, size, &start);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE; // not inside one reservation of this context
    auto next = r->mappings.lower_bound(p);
    if (next != r->mappings.end() && next->first < p + size) return UR_RESULT_ERROR_INVALID_VALUE; // already mapped
    if (next != r->mappings.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second.size > p) return UR_RESULT_ERROR_INVALID_VALUE;
    }
    auto placed = r->mappings.emplace(p, Mapping{size, Ref<PhysicalMem>(phys), offset, flags}).first;
    if (mmap(reinterpret_cast<void *>(p), size, protection(flags), MAP_SHARED | MAP_FIXED, phys->fd,
             static_cast<off_t>(offset)) == MAP_FAILED) {
      r->mappings.erase(placed);
      return UR_RESULT_ERROR_OUT_OF_RESOURCES;
    }
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL virtualMemUnmap(ur_context_handle_t hContext, const void *pStart, size_t size) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  Ref<PhysicalMem> released; // dropped outside the lock
  Reservations &rs = reservations();
  std::lock_guard<std::mutex> lock(rs.mu);
  uintptr_t start;
  Reservation *r = rs.containing(ctx, p, size, &start);
  if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
  auto it = r->mappings.find(p);
  if (it == r->mappings.end() || it->second.size != size) return UR_RESULT_ERROR_INVALID_VALUE; // one whole mapping
  if (!back_to_reserved(p, size)) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  released = std::move(it->second.phys);
  r->mappings.erase(it);
  return UR_RESULT_SUCCESS;
}

// Changes the access of mapped pages; a range inside one mapping splits it.
ur_result_t UR_APICALL virtualMemSetAccess(ur_context_handle_t hContext, const void *pStart, size_t size,
                                           ur_virtual_mem_access_flags_t flags) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  if (!page_aligned(p, size)) return UR_RESULT_ERROR_INVALID_VALUE;
  return guarded([&] {
    Reservations &rs = reservations();
    std::lock_guard<std::mutex> lock(rs.mu);
    uintptr_t start;
    Reservation *r = rs.containing(ctx, p, size, &start);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
    auto it = r->mappings.upper_bound(p);
    if (it == r->mappings.begin()) return UR_RESULT_ERROR_INVALID_VALUE;
    --it;
    const uintptr_t m_start = it->first;
    Mapping m = it->second;
    if (p + size > m_start + m.size) return UR_RESULT_ERROR_INVALID_VALUE; // not inside one mapping
    if (mprotect(reinterpret_cast<void *>(p), size, protection(flags)) != 0) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
    // Split the record: [m_start, p) as before, [p, p + size) with the new access, the rest as before.
    r->mappings.erase(it);
    if (p > m_start) r->mappings.emplace(m_start, Mapping{p - m_start, m.phys, m.offset, m.access});
    r->mappings.emplace(p, Mapping{size, m.phys, m.offset + (p - m_start), flags});
    if (p + size < m_start + m.size)
      r->mappings.emplace(p + size, Mapping{m_start + m.size - (p + size), m.phys, m.offset + (p + size - m_start), m.access});
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL virtualMemGetInfo(ur_context_handle_t hContext, const void *pStart, size_t size,
                                         ur_virtual_mem_info_t propName, size_t propSize, void *pPropValue,
                                         size_t *pPropSizeRet) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  if (propName != UR_VIRTUAL_MEM_INFO_ACCESS_MODE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  ur_virtual_mem_access_flags_t access = UR_VIRTUAL_MEM_ACCESS_FLAG_NONE; // reserved, not mapped
  {
    Reservations &rs = reservations();
    std::lock_guard<std::mutex> lock(rs.mu);
    uintptr_t start;
    Reservation *r = rs.containing(ctx, p, size == 0 ? 1 : size, &start);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
    auto it = r->mappings.upper_bound(p);
    if (it != r->mappings.begin()) {
      --it;
      if (p < it->first + it->second.size) access = it->second.access;
    }
  }
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(access);
}

} // namespace

void install_virtual_mem_entry_points(ur_dditable_t &t) {
  t.VirtualMem.pfnGranularityGetInfo = granularityGetInfo;
  t.VirtualMem.pfnReserve = virtualMemReserve;
  t.VirtualMem.pfnFree = virtualMemFree;
  t.VirtualMem.pfnMap = virtualMemMap;
  t.VirtualMem.pfnUnmap = virtualMemUnmap;
  t.VirtualMem.pfnSetAccess = virtualMemSetAccess;
  t.VirtualMem.pfnGetInfo = virtualMemGetInfo;
}

} // namespace nc
