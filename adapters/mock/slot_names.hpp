// SPDX-License-Identifier: Apache-2.0
// Function name -> slot position in ur_dditable_t (generated: slot_names.gen.cpp).
#pragma once
#include <cstddef>

#include "ur_ddi.h"

namespace mock {

struct SlotName {
  const char *function; // "urQueueFlush"
  size_t offset;        // of its slot inside ur_dditable_t
};
extern const SlotName kSlotNames[];
extern const size_t kSlotCount;

} // namespace mock
