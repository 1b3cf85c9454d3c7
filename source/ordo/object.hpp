// SPDX-License-Identifier: Apache-2.0
// The one object model of every adapter (docs/adapter-guide.md, "The contract").
//
// Every adapter handle derives from ordo::object: the dispatch table first (handle-first
// dispatch, handle.hpp), the user's reference count (HandleBase::ref_count, what
// *_INFO_REFERENCE_COUNT reports), the handle's kind, and the holder count that keeps
// the object alive. Objects are retired, not deleted (ordo::retire, retired_handles.hpp).
//
// unwrap() is the one validation policy: a handle is this adapter's when its first word is
// this adapter's table (a foreign adapter's handle, or a retired one, has another), and
// only then is its kind read. An adapter that must also refuse handles the user has
// released while internal holders keep them adds a registry on top (native CPU does).
#pragma once
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "ordo/ddi_fill.hpp"
#include "ordo/handle.hpp"
#include "ordo/info.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_api.h"

namespace ordo {

enum class handle_kind : uint32_t {
  adapter = 1,
  platform,
  device,
  context,
  queue,
  event,
  program,
  kernel,
  mem,
  sampler,
  physical_mem,
  usm_pool,
  command_buffer,
  image_mem,
  exp_external_mem,
  exp_external_semaphore,
  // Handles of the shared layers (source/command_buffer): their own kinds, so that an
  // adapter's unwrap never takes one for its own event or command buffer.
  command_buffer_command,
  graph,
  exec_graph,
  bound_event,
  capture_event,
};

struct object : HandleBase {
  handle_kind kind;
  // 1 for all of the user's references together, plus 1 per internal holder (an event
  // holds its queue, a queue its context, ...): the object goes when the last one drops.
  std::atomic<uint32_t> holders{1};

  explicit object(handle_kind k) : HandleBase(&adapter_ddi()), kind(k) {}
  object(const object &) = delete;
  object &operator=(const object &) = delete;

  void hold() { holders.fetch_add(1, std::memory_order_relaxed); }
  // True when this dropped the last holder: the caller retires the object.
  bool drop() { return holders.fetch_sub(1, std::memory_order_acq_rel) == 1; }
};

// What urXRelease did to an object that internal holders may outlive.
enum class released { kept, last_holder, none_left };

// Drops one of the user's references; the user's last drops the user's holder.
// `none_left`: the user held none (one release too many while internal holders keep
// the object), and nothing changed. `last_holder`: the caller retires the object.
inline released release_reference(object *o) {
  uint32_t n = o->ref_count.load(std::memory_order_relaxed);
  do {
    if (n == 0) return released::none_left;
  } while (!o->ref_count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel));
  if (n != 1) return released::kept;
  return o->drop() ? released::last_holder : released::kept;
}

// True when `handle` (non-null) is a live handle of this adapter of T's kind. Reads the
// kind only after the first word showed the handle is ours.
template <class T, class H> bool is_a(H handle) {
  static_assert(std::is_pointer<H>::value, "a handle is a pointer");
  static_assert(std::is_base_of<object, T>::value, "T must derive from ordo::object");
  if (!handle) return false;
  const void *h = reinterpret_cast<const void *>(handle);
  if (ddi_of(h) != &adapter_ddi()) return false;
  return static_cast<const object *>(reinterpret_cast<const T *>(h))->kind == T::kKind;
}

// Resolves a handle to the object it must be: null gives INVALID_NULL_HANDLE; a handle
// of another kind, of another adapter or retired gives T::kInvalid.
template <class T, class H> ur_result_t unwrap(H handle, T *&out) {
  out = nullptr;
  if (!handle) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!is_a<T>(handle)) return T::kInvalid;
  out = reinterpret_cast<T *>(const_cast<void *>(reinterpret_cast<const void *>(handle)));
  return UR_RESULT_SUCCESS;
}

// The same test for a handle whose pointee is the object type itself (adapters whose
// handle types are the objects, like OpenCL's).
template <class T> ur_result_t check_handle(T *handle) {
  using U = typename std::remove_const<T>::type;
  U *out = nullptr;
  return unwrap<U>(handle, out);
}

} // namespace ordo

// `Type *var` from `handle`, or return the unwrap result from the entry point.
#define ORDO_UNWRAP(Type, var, handle)                                                                                 \
  Type *var = nullptr;                                                                                                 \
  do {                                                                                                                 \
    if (ur_result_t unwrap_result_ = ::ordo::unwrap(handle, var)) return unwrap_result_;                               \
  } while (0)

// Returns the unwrap result unless `handle` is a live handle of its own type's kind.
#define ORDO_CHECK_HANDLE(handle)                                                                                      \
  do {                                                                                                                 \
    if (ur_result_t check_result_ = ::ordo::check_handle(handle)) return check_result_;                                \
  } while (0)
