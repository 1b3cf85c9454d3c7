// SPDX-License-Identifier: Apache-2.0
// No exception crosses the C interface: an entry point's body runs through guarded(),
// which turns std::bad_alloc into OUT_OF_HOST_MEMORY and anything else into UNKNOWN.
#pragma once
#include <new>

#include "ur_api.h"

namespace ordo {

template <class F> ur_result_t guarded(F &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  } catch (...) {
    return UR_RESULT_ERROR_UNKNOWN;
  }
}

} // namespace ordo
