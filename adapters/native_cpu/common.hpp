// Shared building blocks of the native CPU adapter: the handle base with its two
// reference counts, an intrusive pointer, handle validation and small helpers.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <utility>

#include "ordo/retired_handles.hpp"
#include "ordo/guarded.hpp"
#include "handle_registry.hpp"
#include "ordo/ddi_fill.hpp"
#include "ordo/handle.hpp"
#include "ur_api.h"

namespace nc {

// Every handle of this adapter derives from Object<T>. Two counts:
//  - HandleBase::ref_count is the user's count (urXRetain/urXRelease, *_INFO_REFERENCE_COUNT);
//    when it drops to zero the handle is unregistered and becomes invalid for the user;
//  - internal_refs keeps the memory alive: one reference for the user's handle while
//    it lives, plus one per internal owner (a pending command keeps its queue, an
//    event keeps its context, ...). The object is deleted when it reaches zero.
template <class T> struct Object : ordo::HandleBase {
  std::atomic<uint32_t> internal_refs{1};

  Object() : ordo::HandleBase(&ordo::adapter_ddi()) {}
  Object(const Object &) = delete;
  Object &operator=(const Object &) = delete;

  void add_ref() noexcept { internal_refs.fetch_add(1, std::memory_order_relaxed); }
  void drop_ref() noexcept {
    if (internal_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) T::destroy(static_cast<T *>(this));
  }
  // The last internal reference is gone. A class may hide this to recycle its objects
  // (Event: its queue keeps it for the next command).
  // Retired, not freed (docs/adapter-guide.md, "Released handles"): a later call on the
  // handle reaches the retired table instead of freed memory.
  static void destroy(T *obj) noexcept { ordo::retire(obj); }
};

// Owning pointer over internal_refs.
template <class T> class Ref {
public:
  Ref() = default;
  explicit Ref(T *p, bool add = true) : p_(p) {
    if (p_ && add) p_->add_ref();
  }
  Ref(const Ref &o) : Ref(o.p_) {}
  Ref(Ref &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref &operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) p_->drop_ref();
  }
  T *get() const { return p_; }
  T *operator->() const { return p_; }
  T &operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  T *release() { return std::exchange(p_, nullptr); }

private:
  T *p_ = nullptr;
};

// Makes a new object visible to the user: registered, user count 1.
template <class T> typename T::handle_type publish(T *obj) {
  registry().add(obj, T::kKind);
  return reinterpret_cast<typename T::handle_type>(obj);
}

// The object behind a user handle, or nullptr when the handle is not a live
// handle of this kind (never dereferences an unknown pointer).
template <class T> T *lookup(typename T::handle_type h) {
  if (!h || !registry().contains(h, T::kKind)) return nullptr;
  return reinterpret_cast<T *>(h);
}

// urXRetain / urXRelease for registry-tracked handles.
template <class T> ur_result_t user_retain(typename T::handle_type h) {
  T *obj = lookup<T>(h);
  if (!obj) return T::invalid_handle(h);
  obj->retain();
  return UR_RESULT_SUCCESS;
}
template <class T> ur_result_t user_release(typename T::handle_type h) {
  T *obj = lookup<T>(h);
  if (!obj) return T::invalid_handle(h);
  if (obj->release()) {
    registry().remove(obj);
    obj->on_user_released();
    obj->drop_ref();
  }
  return UR_RESULT_SUCCESS;
}

// The result for a handle that failed lookup: null or unknown.
inline ur_result_t bad_handle(const void *h, ur_result_t unknown) {
  return h ? unknown : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// The common argument rules of every *GetInfo query.
inline ur_result_t check_info_args(size_t propSize, const void *pPropValue, const size_t *pPropSizeRet) {
  if (propSize == 0 && pPropValue) return UR_RESULT_ERROR_INVALID_SIZE;
  if (propSize != 0 && !pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return UR_RESULT_SUCCESS;
}

// Runs an entry point body, turning allocation failure into the API's error.
using ordo::guarded;

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

} // namespace nc
