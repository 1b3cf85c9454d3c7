// SPDX-License-Identifier: Apache-2.0
// The bookkeeping of urVirtualMem* written once (docs/architecture.md): the address
// ranges each context reserved, the pieces of physical memory mapped inside them, and
// UR's rules on both. An adapter keeps one `virtual_ranges` and passes the calls that
// change its address space (mmap on native CPU, cuMemMap on CUDA) as callables; each
// runs under the table's lock and its failure leaves the table as it was.
#pragma once
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

#include "ordo/info.hpp"
#include "ur_api.h"

namespace ordo {

// urPhysicalMemGetInfo's answers, the same on every adapter.
inline ur_result_t physical_mem_info(InfoWriter &out, ur_physical_mem_info_t prop, ur_context_handle_t ctx,
                                     ur_device_handle_t dev, size_t size, ur_physical_mem_flags_t flags,
                                     uint32_t refs) {
  switch (prop) {
  case UR_PHYSICAL_MEM_INFO_CONTEXT: return out.value(ctx);
  case UR_PHYSICAL_MEM_INFO_DEVICE: return out.value(dev);
  case UR_PHYSICAL_MEM_INFO_SIZE: return out.value(size);
  case UR_PHYSICAL_MEM_INFO_PROPERTIES:
    return out.value(ur_physical_mem_properties_t{UR_STRUCTURE_TYPE_PHYSICAL_MEM_PROPERTIES, nullptr, flags});
  case UR_PHYSICAL_MEM_INFO_REFERENCE_COUNT: return out.value(refs);
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// Context: the adapter's context type (compared by address). PhysRef: a counted
// reference to the adapter's physical memory object (a mapping holds its memory).
template <class Context, class PhysRef> class virtual_ranges {
public:
  struct mapping {
    size_t size;
    PhysRef phys;
    size_t offset; // into phys
    ur_virtual_mem_access_flags_t access;
  };
  using mapping_map = std::map<uintptr_t, mapping>; // by start; never overlapping

  // A new reservation [p, p + size) of ctx.
  void add(Context *ctx, uintptr_t p, size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    by_start_.emplace(p, reservation{ctx, size, {}});
  }

  // Removes a whole reservation; `release(mappings)` gives the range back (its
  // mappings are handed over, to be unmapped and dropped outside the lock by the caller
  // through `dropped`). INVALID_VALUE unless [p, p + size) is exactly one reservation of ctx.
  template <class Release>
  ur_result_t remove(Context *ctx, uintptr_t p, size_t size, Release &&release, mapping_map &dropped) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_start_.find(p);
    if (it == by_start_.end() || it->second.context != ctx || it->second.size != size)
      return UR_RESULT_ERROR_INVALID_VALUE;
    if (ur_result_t r = release(it->second.mappings)) return r;
    dropped = std::move(it->second.mappings);
    by_start_.erase(it);
    return UR_RESULT_SUCCESS;
  }

  // Maps [p, p + size) to phys from offset: the range must lie in one reservation of ctx
  // and overlap no mapping. `do_map()` makes the mapping real.
  template <class DoMap>
  ur_result_t map(Context *ctx, uintptr_t p, size_t size, PhysRef phys, size_t offset,
                  ur_virtual_mem_access_flags_t access, DoMap &&do_map) {
    std::lock_guard<std::mutex> lock(mu_);
    reservation *r = containing(ctx, p, size);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
    auto next = r->mappings.lower_bound(p);
    if (next != r->mappings.end() && next->first < p + size) return UR_RESULT_ERROR_INVALID_VALUE; // mapped
    if (next != r->mappings.begin() && std::prev(next)->first + std::prev(next)->second.size > p)
      return UR_RESULT_ERROR_INVALID_VALUE;
    auto placed = r->mappings.emplace(p, mapping{size, std::move(phys), offset, access}).first;
    if (ur_result_t res = do_map()) {
      r->mappings.erase(placed);
      return res;
    }
    return UR_RESULT_SUCCESS;
  }

  // Unmaps exactly one mapping [p, p + size); its physical reference moves to `released`
  // (dropped by the caller outside the lock). `do_unmap(m)` makes it real.
  template <class DoUnmap>
  ur_result_t unmap(Context *ctx, uintptr_t p, size_t size, DoUnmap &&do_unmap, PhysRef &released) {
    std::lock_guard<std::mutex> lock(mu_);
    reservation *r = containing(ctx, p, size);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
    auto it = r->mappings.find(p);
    if (it == r->mappings.end() || it->second.size != size) return UR_RESULT_ERROR_INVALID_VALUE;
    if (ur_result_t res = do_unmap(it->second)) return res;
    released = std::move(it->second.phys);
    r->mappings.erase(it);
    return UR_RESULT_SUCCESS;
  }

  // New access for [p, p + size), which must lie inside one mapping; the mapping is split
  // so that each piece has one access. `do_protect(m, piece_offset)` makes it real.
  template <class DoProtect>
  ur_result_t set_access(Context *ctx, uintptr_t p, size_t size, ur_virtual_mem_access_flags_t access,
                         DoProtect &&do_protect) {
    std::lock_guard<std::mutex> lock(mu_);
    reservation *r = containing(ctx, p, size);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
    auto it = r->mappings.upper_bound(p);
    if (it == r->mappings.begin()) return UR_RESULT_ERROR_INVALID_VALUE;
    --it;
    const uintptr_t start = it->first;
    mapping m = it->second;
    if (p + size > start + m.size) return UR_RESULT_ERROR_INVALID_VALUE; // not inside one mapping
    if (ur_result_t res = do_protect(m)) return res;
    r->mappings.erase(it);
    if (p > start) r->mappings.emplace(start, mapping{p - start, m.phys, m.offset, m.access});
    r->mappings.emplace(p, mapping{size, m.phys, m.offset + (p - start), access});
    if (p + size < start + m.size)
      r->mappings.emplace(p + size,
                          mapping{start + m.size - (p + size), m.phys, m.offset + (p + size - start), m.access});
    return UR_RESULT_SUCCESS;
  }

  // The access of the byte at p (NONE where reserved but not mapped); INVALID_VALUE
  // unless [p, p + max(size, 1)) lies in one reservation of ctx.
  ur_result_t access_at(Context *ctx, uintptr_t p, size_t size, ur_virtual_mem_access_flags_t *access) {
    std::lock_guard<std::mutex> lock(mu_);
    reservation *r = containing(ctx, p, size == 0 ? 1 : size);
    if (!r) return UR_RESULT_ERROR_INVALID_VALUE;
    *access = UR_VIRTUAL_MEM_ACCESS_FLAG_NONE;
    auto it = r->mappings.upper_bound(p);
    if (it != r->mappings.begin()) {
      --it;
      if (p < it->first + it->second.size) *access = it->second.access;
    }
    return UR_RESULT_SUCCESS;
  }

private:
  struct reservation {
    Context *context;
    size_t size;
    mapping_map mappings;
  };

  // The reservation of ctx holding [p, p + size), or null; mu_ is held.
  reservation *containing(Context *ctx, uintptr_t p, size_t size) {
    auto it = by_start_.upper_bound(p);
    if (it == by_start_.begin()) return nullptr;
    --it;
    reservation &r = it->second;
    if (r.context != ctx || p - it->first > r.size || size > r.size - (p - it->first)) return nullptr;
    return &r;
  }

  std::mutex mu_;
  std::map<uintptr_t, reservation> by_start_;
};

} // namespace ordo
