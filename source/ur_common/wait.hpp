// SPDX-License-Identifier: Apache-2.0
// urEnqueueEventsWait, urEnqueueEventsWaitWithBarrier and ...BarrierExt written once over
// the adapter's own wait-or-barrier command:
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Queue = ...;
//     static ur_result_t enqueue_wait(Queue *, ur_command_t, bool barrier, uint32_t n,
//                                     const ur_event_handle_t *waits, ur_event_handle_t *phEvent);
//   };
#pragma once

#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

template <class H> struct wait_entry_points {
  using Queue = typename H::Queue;

  static ur_result_t UR_APICALL wait(ur_queue_handle_t hQueue, uint32_t n, const ur_event_handle_t *waits,
                                     ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    return H::enqueue_wait(q, UR_COMMAND_EVENTS_WAIT, false, n, waits, phEvent);
  }

  static ur_result_t UR_APICALL barrier(ur_queue_handle_t hQueue, uint32_t n, const ur_event_handle_t *waits,
                                        ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    return H::enqueue_wait(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, n, waits, phEvent);
  }

  static ur_result_t UR_APICALL barrier_ext(ur_queue_handle_t hQueue,
                                            const ur_exp_enqueue_ext_properties_t *pProperties, uint32_t n,
                                            const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    if (pProperties && (pProperties->flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    // The low-power flag is a hint; no backend here has such a mode to ask for.
    return H::enqueue_wait(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, n, waits, phEvent);
  }

  static void install(ur_dditable_t &t) {
    t.Enqueue.pfnEventsWait = wait;
    t.Enqueue.pfnEventsWaitWithBarrier = barrier;
    t.Enqueue.pfnEventsWaitWithBarrierExt = barrier_ext;
  }
};

} // namespace ordo::ur_common
