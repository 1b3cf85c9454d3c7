// Synchronisation commands: urEnqueueEventsWait, urEnqueueEventsWaitWithBarrier(Ext),
// and urEnqueueHostTaskExp (a user function run as a command).
#include "entry_points.hpp"
#include "queue.hpp"

namespace nc {

namespace {

ur_result_t enqueue_marker(ur_queue_handle_t hQueue, ur_command_t type, Ordering ordering, uint32_t numEvents,
                           const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  Queue *q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  return guarded([&] {
    CommandBuilder cmd(*q, type);
    if (ur_result_t r = cmd.set_wait_list(numEvents, phEvents)) return r;
    cmd.set_ordering(ordering);
    return cmd.submit(phEvent);
  });
}

ur_result_t UR_APICALL enqueueEventsWait(ur_queue_handle_t hQueue, uint32_t numEventsInWaitList,
                                         const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  return enqueue_marker(hQueue, UR_COMMAND_EVENTS_WAIT, Ordering::AllPrevious, numEventsInWaitList, phEventWaitList,
                        phEvent);
}

ur_result_t UR_APICALL enqueueEventsWaitWithBarrier(ur_queue_handle_t hQueue, uint32_t numEventsInWaitList,
                                                    const ur_event_handle_t *phEventWaitList,
                                                    ur_event_handle_t *phEvent) {
  return enqueue_marker(hQueue, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, Ordering::Barrier, numEventsInWaitList,
                        phEventWaitList, phEvent);
}

// The only extended property is a low-power hint; events here never spin anyway.
ur_result_t UR_APICALL enqueueEventsWaitWithBarrierExt(ur_queue_handle_t hQueue,
                                                       const ur_exp_enqueue_ext_properties_t *pProperties,
                                                       uint32_t numEventsInWaitList,
                                                       const ur_event_handle_t *phEventWaitList,
                                                       ur_event_handle_t *phEvent) {
  if (pProperties && (pProperties->flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return enqueue_marker(hQueue, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, Ordering::Barrier, numEventsInWaitList,
                        phEventWaitList, phEvent);
}

ur_result_t UR_APICALL enqueueHostTaskExp(ur_queue_handle_t hQueue, ur_exp_host_task_function_t pfnHostTask,
                                          void *data, const ur_exp_host_task_properties_t *pProperties,
                                          uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                          ur_event_handle_t *phEvent) {
  Queue *q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  if (!pfnHostTask) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_HOST_TASK_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return guarded([&] {
    CommandBuilder cmd(*q, UR_COMMAND_HOST_TASK_EXP);
    if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
    cmd.set_work(make_work([pfnHostTask, data] {
      pfnHostTask(data);
      return UR_RESULT_SUCCESS;
    }));
    return cmd.submit(phEvent);
  });
}

} // namespace

void install_enqueue_entry_points(ur_dditable_t &t) {
  t.Enqueue.pfnEventsWait = enqueueEventsWait;
  t.Enqueue.pfnEventsWaitWithBarrier = enqueueEventsWaitWithBarrier;
  t.Enqueue.pfnEventsWaitWithBarrierExt = enqueueEventsWaitWithBarrierExt;
  t.EnqueueExp.pfnHostTaskExp = enqueueHostTaskExp;
}

} // namespace nc
