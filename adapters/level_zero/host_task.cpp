// urEnqueueHostTaskExp: a function of the user's, run on a host thread once the
// command's waits are met, ordered in its list like any command. A barrier after the
// waits signals an internal event; the host thread waits for it, runs the function
// and then signals the command's own event from the host (zeEventHostSignal), which
// the list's next command waits for.
#include "ordo/host_threads.hpp"

#include "common.hpp"
#include "entry_points.hpp"

namespace ordo::l0 {

ur_result_t UR_APICALL urEnqueueHostTaskExp(ur_queue_handle_t hQueue, ur_exp_host_task_function_t pfnHostTask,
                                            void *data, const ur_exp_host_task_properties_t *pProperties,
                                            uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                            ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pfnHostTask) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_HOST_TASK_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  Context *ctx = q->ctx;
  ZeEvent ready;
  if (ur_result_t r = ctx->events.get(false, ready)) return r;
  Command cmd(q, UR_COMMAND_HOST_TASK_EXP, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) {
    ctx->events.put(ready);
    return cmd.status();
  }
  ur_result_t r = check(ze().zeCommandListAppendBarrier(cmd.list(), ready.ev, cmd.num_waits(), cmd.waits()));
  if (r != UR_RESULT_SUCCESS) {
    ctx->events.put(ready);
    return r;
  }
  Event *own = cmd.event();
  own->hold(); // the host thread's, until it has signalled
  // Kept, not detached: the adapter's teardown joins it (ordo/host_threads.hpp).
  const bool started = ordo::adapter_host_threads().start([ctx, ready, own, pfnHostTask, data] {
    running_user_code = true; // this thread runs nothing else
    ze().zeEventHostSynchronize(ready.ev, UINT64_MAX);
    pfnHostTask(data);
    ze().zeEventHostSignal(own->ze.ev);
    ctx->events.put(ready); // nothing else waits for it
    event_drop(own);        // the context outlives this: `own` holds its queue
  });
  if (!started) {
    // No thread: nothing will run the task, so no command may wait for it.
    event_drop(own);
    ctx->events.put(ready);
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  return cmd.finish();
}

} // namespace ordo::l0
