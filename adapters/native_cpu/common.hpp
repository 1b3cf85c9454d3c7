// SPDX-License-Identifier: Apache-2.0
// The native CPU adapter's handle base, an owning pointer over holders, small helpers.
#pragma once
#include <time.h>

#include <cstdint>
#include <utility>

#include "ordo/guarded.hpp"
#include "ordo/object.hpp"
#include "ur_common/handle_registry.hpp"
#include "ur_api.h"

namespace ordo::native_cpu {

// The result for a handle that failed lookup: null or unknown.
inline ur_result_t bad_handle(const void *h, ur_result_t unknown) {
  return h ? unknown : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// Every handle the user can release: an ordo::object (ordo/object.hpp) whose user count
// ends the handle (it leaves the registry of live handles, ur_common/handle_registry.hpp,
// so an unknown pointer is never read) and whose holders (the user's handle, and each
// internal holder: a pending command its queue, an event its context) keep the memory.
template <class T> struct Object : ordo::object {
  Object() : ordo::object(T::kKind) {}
  void drop_hold() noexcept {
    if (drop()) T::destroy(static_cast<T *>(this));
  }
  // The last holder is gone: retired, not freed (docs/adapter-guide.md, "Released
  // handles"). A class may hide this to recycle its objects (Event).
  static void destroy(T *obj) noexcept { ordo::retire(obj); }
  static ur_result_t invalid_handle(const void *h) { return bad_handle(h, T::kInvalid); }
  void on_user_released() {} // user_release's hook; Queue has one
};

// Owning pointer over holders (hold / drop_hold).
template <class T> class Ref {
public:
  Ref() = default;
  explicit Ref(T *p, bool add = true) : p_(p) {
    if (p_ && add) p_->hold();
  }
  Ref(const Ref &o) : Ref(o.p_) {}
  Ref(Ref &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref &operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) p_->drop_hold();
  }
  T *operator->() const { return p_; }
  T &operator*() const { return *p_; }

private:
  T *p_ = nullptr;
};

// The registry option of the one object model (ur_common/handle_registry.hpp).
using ordo::handle_kind;
using ordo::ur_common::lookup;
using ordo::ur_common::publish;
using ordo::ur_common::registry;
using ordo::ur_common::registry_unwrap;
using ordo::ur_common::user_release;
using ordo::ur_common::user_retain;

using ordo::check_info_args;
using ordo::guarded; // allocation failure as the API's error

// Monotonic nanoseconds: profiling timestamps and urDeviceGetGlobalTimestamps.
inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Walks a pNext chain of UR property structs.
template <class F> void for_each_in_chain(const void *pNext, F &&f) {
  const auto *p = static_cast<const ur_base_desc_t *>(pNext);
  for (int guard = 0; p && guard < 64; ++guard) {
    f(p);
    p = static_cast<const ur_base_desc_t *>(p->pNext);
  }
}

} // namespace ordo::native_cpu
