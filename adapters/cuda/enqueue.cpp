// Commands that only order: event waits, barriers, timestamps.
#include "common.hpp"
#include "entry_points.hpp"

namespace ordo::cuda {

namespace {

// A wait or barrier. With no wait list it waits for everything enqueued so far;
// a barrier also makes every later command of the queue wait for it.
ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n,
                         const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  std::unique_lock<std::mutex> lock(q->barrier_mutex, std::defer_lock);
  if (!q->in_order) lock.lock();
  Command cmd(q, type, n, waits, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  if (q->in_order) return cmd.finish(); // one stream: already ordered both ways
  if (n == 0) {
    if (ur_result_t r = q->join_all_into(cmd.stream())) return r;
  }
  if (barrier) {
    CUevent marker = nullptr;
    ORDO_CU(q->dev->events.get(false, &marker));
    CUresult r = drv().cuEventRecord(marker, cmd.stream());
    for (CUstream s : q->streams)
      if (r == CUDA_SUCCESS && s != cmd.stream()) r = drv().cuStreamWaitEvent(s, marker, 0);
    q->dev->events.put(marker, false);
    ORDO_CU(r);
  }
  return cmd.finish();
}

} // namespace

ur_result_t UR_APICALL urEnqueueEventsWait(ur_queue_handle_t hQueue, uint32_t numEventsInWaitList,
                                           const ur_event_handle_t *phEventWaitList,
                                           ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  return enqueue_wait(q, UR_COMMAND_EVENTS_WAIT, false, numEventsInWaitList, phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueEventsWaitWithBarrier(ur_queue_handle_t hQueue,
                                                      uint32_t numEventsInWaitList,
                                                      const ur_event_handle_t *phEventWaitList,
                                                      ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  return enqueue_wait(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, numEventsInWaitList,
                      phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueEventsWaitWithBarrierExt(ur_queue_handle_t hQueue,
                                                         const ur_exp_enqueue_ext_properties_t *pProperties,
                                                         uint32_t numEventsInWaitList,
                                                         const ur_event_handle_t *phEventWaitList,
                                                         ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (pProperties && (pProperties->flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  // The low-power flag is a hint; CUDA events have no such mode to ask for.
  return enqueue_wait(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, numEventsInWaitList,
                      phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueTimestampRecordingExp(ur_queue_handle_t hQueue, bool blocking,
                                                      uint32_t numEventsInWaitList,
                                                      const ur_event_handle_t *phEventWaitList,
                                                      ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Command cmd(q, UR_COMMAND_TIMESTAMP_RECORDING_EXP, numEventsInWaitList, phEventWaitList, phEvent,
              /*timed=*/true);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  CUstream stream = cmd.stream();
  if (ur_result_t r = cmd.finish()) return r;
  if (blocking) ORDO_CU(drv().cuStreamSynchronize(stream));
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::cuda
