// The mock's dispatch table, and ordoMockReplace / ordoMockRestoreAll, which let a
// test put its own function in any slot (ordo_mock.h).
#include <cstring>

#include "mock.hpp"
#include "ordo_mock.h"
#include "slot_names.hpp"

namespace mock {
namespace {

ur_dditable_t build_defaults() {
  ur_dditable_t t{};
  fill_adapter(t);
  fill_platform(t);
  fill_device(t);
  fill_context(t);
  fill_queue(t);
  fill_event(t);
  fill_enqueue(t);
  fill_usm(t);
  ordo::fill_unsupported(t);
  return t;
}

const ur_dditable_t &defaults() {
  static const ur_dditable_t t = build_defaults();
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

} // namespace
} // namespace mock

const ur_dditable_t &ordo::adapter_ddi() { return mock::live_table(); }

extern "C" {

UR_DLLEXPORT ur_result_t ordoMockReplace(const char *function, void *replacement, void **pPrevious) {
  if (!function) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  for (size_t i = 0; i < mock::kSlotCount; ++i) {
    if (std::strcmp(mock::kSlotNames[i].function, function) != 0) continue;
    const size_t offset = mock::kSlotNames[i].offset;
    void *fn = replacement ? replacement
                           : *mock::slot_in(const_cast<ur_dditable_t &>(mock::defaults()), offset);
    void *old = __atomic_exchange_n(mock::slot_in(mock::live_table(), offset), fn, __ATOMIC_ACQ_REL);
    if (pPrevious) *pPrevious = old;
    return UR_RESULT_SUCCESS;
  }
  return UR_RESULT_ERROR_INVALID_VALUE;
}

UR_DLLEXPORT void ordoMockRestoreAll(void) {
  for (size_t i = 0; i < mock::kSlotCount; ++i) {
    const size_t offset = mock::kSlotNames[i].offset;
    void *fn = *mock::slot_in(const_cast<ur_dditable_t &>(mock::defaults()), offset);
    __atomic_store_n(mock::slot_in(mock::live_table(), offset), fn, __ATOMIC_RELEASE);
  }
}

} // extern "C"
