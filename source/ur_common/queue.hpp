// SPDX-License-Identifier: Apache-2.0
// Queue bookkeeping written once for the adapters whose queues are lanes on one device
// (Level Zero, the stream backend): the holder drop and urQueueGetInfo. The adapter
// says whether its lanes are empty.
#pragma once

#include <cstddef>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_api.h"

namespace ordo::ur_common {

// Drops one holder of a queue; the last retires it and drops its holder of the context
// (`context_drop`, the adapter's, found by argument-dependent lookup).
template <class Queue> void drop_queue(Queue *q) {
  if (!q->drop()) return;
  auto *ctx = q->ctx;
  ordo::retire(q);
  context_drop(ctx);
}

// urQueueGetInfo once the queue is known; `is_empty(bool &)` answers
// UR_QUEUE_INFO_EMPTY (or fails with the driver's error).
template <class Queue, class IsEmpty>
ur_result_t queue_info(Queue *q, ur_queue_info_t propName, size_t propSize, void *pPropValue, size_t *pPropSizeRet,
                       IsEmpty is_empty) {
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_QUEUE_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(q->ctx));
  case UR_QUEUE_INFO_DEVICE: return out.value(reinterpret_cast<ur_device_handle_t>(q->dev));
  case UR_QUEUE_INFO_FLAGS: return out.value(q->flags);
  case UR_QUEUE_INFO_REFERENCE_COUNT: return out.value(q->count());
  case UR_QUEUE_INFO_EMPTY: {
    bool empty = true;
    if (ur_result_t r = is_empty(empty)) return r;
    return out.boolean(empty);
  }
  case UR_QUEUE_INFO_DEVICE_DEFAULT:
  case UR_QUEUE_INFO_SIZE: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // device-side queues
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

} // namespace ordo::ur_common
