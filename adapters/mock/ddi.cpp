// SPDX-License-Identifier: Apache-2.0
// The mock's dispatch table, and ordoMockReplace / ordoMockRestoreAll, which let a
// test put its own function in any slot (ordo_mock.h). Like every adapter's, the table
// holds the exception boundary's thunks (ordo::fill_unsupported); a replacement goes
// behind its slot's thunk, so a test's function that throws gets the boundary's answer.
#include <cstring>

#include "mock.hpp"
#include "ordo_mock.h"
#include "slot_names.hpp"

namespace mock {
namespace {

// The mock's own functions, before the table tail put them behind the exception
// boundary: what a slot's thunk calls when no test replaced it (null: the slot holds the
// unsupported stub).
const ur_dditable_t &own_functions() {
  static const ur_dditable_t t = [] {
    ur_dditable_t own{};
    fill_adapter(own);
    fill_platform(own);
    fill_device(own);
    fill_context(own);
    fill_queue(own);
    fill_event(own);
    fill_enqueue(own);
    fill_usm(own);
    return own;
  }();
  return t;
}

// The table as every adapter's is: each function behind the boundary, stubs elsewhere.
const ur_dditable_t &defaults() {
  static const ur_dditable_t t = [] {
    ur_dditable_t d = own_functions();
    ordo::fill_unsupported(d);
    return d;
  }();
  return t;
}

// The live table: every mock handle points here, so a replaced slot takes effect for
// handles that already exist.
ur_dditable_t &live_table() {
  static ur_dditable_t t = defaults();
  return t;
}

void **slot_in(ur_dditable_t &t, size_t offset) {
  return reinterpret_cast<void **>(reinterpret_cast<char *>(&t) + offset);
}
void *slot_of(const ur_dditable_t &t, size_t offset) { return *slot_in(const_cast<ur_dditable_t &>(t), offset); }

// Puts fn in a slot as the table tail would: a function behind the slot's thunk (so a
// test's replacement runs inside the boundary too, and may throw), null for the stub.
// Returns the function that was there (the one behind the thunk, not the thunk).
void *put_in_slot(size_t offset, void *fn) {
  void *thunk = slot_of(ordo::boundary_thunks(), offset);
  void **live = slot_in(live_table(), offset);
  void **target = slot_in(ordo::boundary_targets(), offset);
  void *previous = __atomic_load_n(live, __ATOMIC_ACQUIRE);
  if (previous == thunk) previous = __atomic_load_n(target, __ATOMIC_ACQUIRE);
  if (fn) {
    __atomic_store_n(target, fn, __ATOMIC_RELEASE); // before the thunk can be reached
    __atomic_store_n(live, thunk, __ATOMIC_RELEASE);
  } else {
    __atomic_store_n(live, slot_of(defaults(), offset), __ATOMIC_RELEASE);
  }
  return previous;
}

} // namespace
} // namespace mock

const ur_dditable_t &ordo::adapter_ddi() { return mock::live_table(); }

extern "C" {

UR_DLLEXPORT ur_result_t ordoMockReplace(const char *function, void *replacement, void **pPrevious) {
  if (!function) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  for (size_t i = 0; i < mock::kSlotCount; ++i) {
    if (std::strcmp(mock::kSlotNames[i].function, function) != 0) continue;
    const size_t offset = mock::kSlotNames[i].offset;
    void *fn = replacement ? replacement : mock::slot_of(mock::own_functions(), offset);
    void *old = mock::put_in_slot(offset, fn);
    if (pPrevious) *pPrevious = old;
    return UR_RESULT_SUCCESS;
  }
  return UR_RESULT_ERROR_INVALID_VALUE;
}

UR_DLLEXPORT void ordoMockRestoreAll(void) {
  for (size_t i = 0; i < mock::kSlotCount; ++i) {
    const size_t offset = mock::kSlotNames[i].offset;
    mock::put_in_slot(offset, mock::slot_of(mock::own_functions(), offset));
  }
}

} // extern "C"
