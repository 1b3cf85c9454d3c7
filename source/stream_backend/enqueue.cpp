// SPDX-License-Identifier: Apache-2.0
// Commands that only order: event waits, barriers, timestamps.
#include "backend.hpp"
#include "ur_common/wait.hpp"

namespace ordo::stream_backend {

namespace {

// A wait or barrier. With no wait list it waits for everything enqueued so far;
// a barrier also makes every later command of the queue wait for it. On an
// out-of-order queue either spans every stream, so it holds every stream's lock.
ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n, const ur_event_handle_t *waits,
                         ur_event_handle_t *phEvent) {
  const bool spans = !q->in_order && (barrier || n == 0);
  Command cmd(q, type, n, waits, phEvent, false, spans);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  if (spans && n == 0) {
    if (ur_result_t r = cmd.join_other_lanes()) return r;
  }
  if (spans && barrier) {
    if (ur_result_t r = cmd.order_other_lanes()) return r;
  }
  return cmd.finish();
}

struct wait_hooks : handle_types {
  static ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n, const ur_event_handle_t *waits,
                                  ur_event_handle_t *phEvent) {
    return stream_backend::enqueue_wait(q, type, barrier, n, waits, phEvent);
  }
};

} // namespace

ur_result_t UR_APICALL urEnqueueTimestampRecordingExp(ur_queue_handle_t hQueue, bool blocking,
                                                      uint32_t numEventsInWaitList,
                                                      const ur_event_handle_t *phEventWaitList,
                                                      ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Command cmd(q, UR_COMMAND_TIMESTAMP_RECORDING_EXP, numEventsInWaitList, phEventWaitList, phEvent,
              /*timed=*/true);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  stream_t stream = cmd.stream();
  if (ur_result_t r = cmd.finish()) return r;
  if (blocking) ORDO_DRV(drv::stream_synchronize(stream));
  return UR_RESULT_SUCCESS;
}

void install_wait_entry_points(ur_dditable_t &t) {
  ordo::ur_common::wait_entry_points<wait_hooks>::install(t); // urEnqueueEventsWait*
  t.EnqueueExp.pfnTimestampRecordingExp = urEnqueueTimestampRecordingExp;
}

} // namespace ordo::stream_backend
