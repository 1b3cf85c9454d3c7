// SPDX-License-Identifier: Apache-2.0
// Synchronous USM: urUSM{Host,Device,Shared}Alloc, urUSMFree and urUSMGetMemAllocInfo
// are ur_common/usm.hpp's (argument checks, the pointer registry that refuses unknown,
// interior, double and other contexts' frees); this file says how plain memory is made
// (PoolHooks::free_plain, context.cpp, gives it back). Replace: alloc_memory() and free_memory() with your driver's
// calls (one per kind), and max_alloc() with the device's limit.
#include <cstdlib>

#include "common.hpp"
#include "ur_common/usm.hpp"

namespace ordo::template_adapter {

void *alloc_memory(size_t size, size_t align) {
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  const size_t rounded = (size + align - 1) / align * align; // aligned_alloc wants a multiple
  return rounded < size ? nullptr : std::aligned_alloc(align, rounded);
}

void free_memory(void *p) { std::free(p); }

namespace {

struct usm_hooks : handle_types {
  static size_t max_alloc(const Device *d) { return d->facts.max_alloc; }
  static bool shared_supported(const Device *) { return true; }
  static ur_result_t alloc_plain(Context *, ur_usm_type_t, Device *, size_t size, size_t align, void **p) {
    *p = alloc_memory(size, align);
    return *p ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
};

} // namespace

void install_usm_entry_points(ur_dditable_t &t) { ordo::ur_common::usm_entry_points<usm_hooks>::install(t); }

} // namespace ordo::template_adapter
