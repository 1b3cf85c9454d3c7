// SPDX-License-Identifier: Apache-2.0
// The urQueueCreate rules on ur_queue_properties_t that every adapter keeps, written once
// (docs/adapter-guide.md, "Shared rules"): what a queue's flags and its pNext chain may
// say, given what the backend offers. An adapter checks its handles and the out-pointer
// in its own order first, then calls check_queue_properties, then its own rules (flags
// it does not offer yet, say).
#pragma once
#include <cstdint>

#include "ur_api.h"

namespace ordo {

// What a backend's queues can be, beyond the flags every queue may take as hints.
struct queue_capabilities {
  // Device-side queues (UR_QUEUE_FLAG_ON_DEVICE, _ON_DEVICE_DEFAULT): no Ordo backend has them.
  bool on_device = false;
  // How many compute queue indices a device has (UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES):
  // a ur_queue_index_properties_t in the chain must name one below it.
  uint32_t compute_indices = 1;
};

// UR_RESULT_SUCCESS, or the code of the first rule pProperties breaks (null: no
// properties, which breaks none):
//   a flag the spec does not have                      INVALID_ENUMERATION
//   high and low priority together                     INVALID_QUEUE_PROPERTIES
//   batched and immediate submission together          INVALID_QUEUE_PROPERTIES
//   a device-side queue where the backend has none     INVALID_QUEUE_PROPERTIES
//   a compute queue index the device does not have     INVALID_VALUE
inline ur_result_t check_queue_properties(const ur_queue_properties_t *pProperties,
                                          const queue_capabilities &caps = queue_capabilities{}) {
  const ur_queue_flags_t flags = pProperties ? pProperties->flags : 0;
  if (flags & UR_QUEUE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if ((flags & UR_QUEUE_FLAG_PRIORITY_HIGH) && (flags & UR_QUEUE_FLAG_PRIORITY_LOW))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  if ((flags & UR_QUEUE_FLAG_SUBMISSION_BATCHED) && (flags & UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  if (!caps.on_device && (flags & (UR_QUEUE_FLAG_ON_DEVICE | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT)))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  if (!pProperties) return UR_RESULT_SUCCESS;
  // At most 64 links: a chain that loops back on itself ends the walk instead of hanging.
  const auto *ext = static_cast<const ur_base_properties_t *>(pProperties->pNext);
  for (int links = 0; ext && links < 64; ++links, ext = static_cast<const ur_base_properties_t *>(ext->pNext)) {
    if (ext->stype == UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES &&
        reinterpret_cast<const ur_queue_index_properties_t *>(ext)->computeIndex >= caps.compute_indices)
      return UR_RESULT_ERROR_INVALID_VALUE;
  }
  return UR_RESULT_SUCCESS;
}

} // namespace ordo
