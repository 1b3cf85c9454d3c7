// SPDX-License-Identifier: Apache-2.0
// The common head of every adapter handle.
//
// Handle-first dispatch (docs/architecture.md): a loader reads the table pointer from the first
// word of whatever handle it is given. So every handle type derives from HandleBase,
// whose first member is that pointer, and has no virtual functions (a vtable pointer
// would take the first word). ORDO_HANDLE_CHECK(T) enforces both at compile time.
// An object model destroys a handle object with ordo::retire (retired_handles.hpp), not
// `delete`, so the first word of a released handle is never freed memory.
#pragma once
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "ur_ddi.h"

namespace ordo {

struct HandleBase {
  const ur_dditable_t *ddi;
  std::atomic<uint32_t> ref_count{1};

  explicit HandleBase(const ur_dditable_t *table) : ddi(table) {}
  void retain() { ref_count.fetch_add(1, std::memory_order_relaxed); }
  // True when this call dropped the last reference.
  bool release() { return ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  uint32_t count() const { return ref_count.load(std::memory_order_relaxed); }
  // urXRetain / urXRelease on an object internal holders may keep after the user's last
  // release: false, and nothing changed, when the user holds no reference (a released
  // handle). `last`: this release dropped the user's last reference.
  bool retain_user() {
    uint32_t n = ref_count.load(std::memory_order_relaxed);
    do {
      if (n == 0) return false;
    } while (!ref_count.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel));
    return true;
  }
  bool release_user(bool &last) {
    uint32_t n = ref_count.load(std::memory_order_relaxed);
    do {
      if (n == 0) return false;
    } while (!ref_count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel));
    last = n == 1;
    return true;
  }
};

// The refusal for a released handle of T (T::kInvalid, the one object model's).
template <class T> constexpr ur_result_t invalid_of(const T *) { return T::kInvalid; }

// Reads the dispatch table of any handle, adapter or foreign, the way a loader does.
inline const ur_dditable_t *ddi_of(const void *handle) { return *static_cast<const ur_dditable_t *const *>(handle); }

} // namespace ordo

#define ORDO_HANDLE_CHECK(T)                                                                                           \
  static_assert(std::is_base_of<::ordo::HandleBase, T>::value && !std::is_polymorphic<T>::value,                       \
                #T " must derive from ordo::HandleBase and have no virtual functions")
