// Commands that only order: event waits and barriers.
#include "common.hpp"
#include "entry_points.hpp"

namespace ordo::l0 {

namespace {

// A wait or barrier. With no wait list it waits for everything enqueued so far; a
// barrier also makes every later command of the queue wait for it. On an
// out-of-order queue either spans every list, so it holds every list's lock.
ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n, const ur_event_handle_t *waits,
                         ur_event_handle_t *phEvent) {
  const bool spans = !q->in_order && (barrier || n == 0);
  Command cmd(q, type, n, waits, phEvent, spans);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  if (spans && n == 0) cmd.join_other_lanes();
  if (spans && barrier) cmd.order_other_lanes();
  return cmd.finish(cmd.append_barrier());
}

} // namespace

ur_result_t UR_APICALL urEnqueueEventsWait(ur_queue_handle_t hQueue, uint32_t numEventsInWaitList,
                                           const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  return enqueue_wait(q, UR_COMMAND_EVENTS_WAIT, false, numEventsInWaitList, phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueEventsWaitWithBarrier(ur_queue_handle_t hQueue, uint32_t numEventsInWaitList,
                                                      const ur_event_handle_t *phEventWaitList,
                                                      ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  return enqueue_wait(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, numEventsInWaitList, phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueEventsWaitWithBarrierExt(ur_queue_handle_t hQueue,
                                                         const ur_exp_enqueue_ext_properties_t *pProperties,
                                                         uint32_t numEventsInWaitList,
                                                         const ur_event_handle_t *phEventWaitList,
                                                         ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (pProperties && (pProperties->flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  // The low-power flag is a hint with no Level Zero counterpart.
  return enqueue_wait(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, numEventsInWaitList, phEventWaitList, phEvent);
}

} // namespace ordo::l0
