// SPDX-License-Identifier: Apache-2.0
// Retiring a handle instead of freeing it (docs/adapter-guide.md, "Released handles").
//
// Without the validation layer the loader calls through the table read from a handle's
// first word (handle.hpp), so after an object's memory is freed a call on its handle
// jumps through whatever the allocator left there. An object model calls retire() where
// it would `delete` a handle object: the destructor runs as before, then the first word
// points at retired_ddi(), a table whose every slot refuses without reading anything,
// and the storage is kept out of reuse until kRetiredHandlesKept later retirements of
// the same adapter library have happened (or the library is unloaded).
#pragma once
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

#include "ordo/handle.hpp"
#include "ur_ddi.h"

namespace ordo {

// The table of a destroyed handle (generated: source/generated/retired.gen.cpp). Each
// slot answers the INVALID_<OBJECT> code of the handle the loader dispatched on
// (INVALID_EVENT_WAIT_LIST for a wait list, INVALID_NULL_HANDLE where there is none).
const ur_dditable_t &retired_ddi();

// How many retired objects an adapter library keeps before freeing the oldest: a handle
// is refused for at least this many later retirements; a call after that is undefined.
constexpr size_t kRetiredHandlesKept = 1024;

// True for a handle whose object was retired (while its storage is still kept).
inline bool is_retired(const void *handle) { return handle && ddi_of(handle) == &retired_ddi(); }

// Takes raw storage from `new T` whose object is already destroyed; frees the oldest
// kept storage once more than kRetiredHandlesKept are held. With `reuse`, that oldest
// storage is returned instead when it has the same size and alignment (else null).
void *keep_retired_storage(void *storage, size_t size, size_t align, bool reuse = false);

// Frees every kept storage now (the library's unload does it too); later retirements
// are still kept. Only for a point where no handle of this adapter can still be named.
void free_retired_handles();

// Destroys `object` (made with `new T`) whose handle is the member at `handle_word` (the
// handle's first word, inside the object) and retires that handle.
template <class T> void *retire_object(T *object, void *handle_word, bool reuse = false) {
  void *storage = object;
  object->~T();
  // Zero the rest so nothing of the dead object (its kind, its counts) is left; then the
  // table word, as a new object in the storage: ordo::unwrap (object.hpp) refuses it by
  // that first word alone.
  std::memset(storage, 0, sizeof(T));
  ::new (handle_word) const ur_dditable_t *(&retired_ddi());
  return keep_retired_storage(storage, sizeof(T), alignof(T), reuse);
}

// Destroys `object` (made with `new T`) and retires its handle: use instead of `delete`.
template <class T> void retire(T *object) {
  static_assert(std::is_base_of<HandleBase, T>::value && !std::is_polymorphic<T>::value,
                "retire() is for handle types (ORDO_HANDLE_CHECK)");
  if (object) retire_object(object, object);
}

// retire(), handing back the storage of a T retired kRetiredHandlesKept retirements
// before (null when none is due or it was not a T's): storage `new T` could have
// returned, for an object model that makes many short-lived handles (events) to build
// its next one in with placement new, without a trip through the allocator.
template <class T> void *retire_for_reuse(T *object) {
  static_assert(std::is_base_of<HandleBase, T>::value && !std::is_polymorphic<T>::value,
                "retire_for_reuse() is for handle types (ORDO_HANDLE_CHECK)");
  return object ? retire_object(object, object, true) : nullptr;
}

} // namespace ordo
