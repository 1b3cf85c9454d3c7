// SPDX-License-Identifier: Apache-2.0
// Work done on a host thread as a command (append_host_work): urEnqueueHostTaskExp, and
// buffer commands across contexts (enqueue_mem.cpp). It runs once the command's waits
// are met, ordered in its list like any command: a barrier after the waits signals an
// internal event; the host thread waits for it, does the work and then signals the
// command's own event from the host (zeEventHostSignal), which the list's next command
// waits for.
#include <functional>
#include <new>

#include "ordo/host_threads.hpp"

#include "common.hpp"

namespace ordo::level_zero {

ur_result_t append_host_work(Command &cmd, std::function<void()> work) {
  Context *ctx = cmd.event()->ctx;
  ZeEvent ready;
  if (ur_result_t r = ctx->events.get(false, ready)) return r;
  ur_result_t r = check(ze().zeCommandListAppendBarrier(cmd.list(), ready.ev, cmd.num_waits(), cmd.waits()));
  if (r != UR_RESULT_SUCCESS) {
    ctx->events.put(ready);
    return r;
  }
  Event *own = cmd.event();
  own->hold(); // the host thread's, until it has signalled
  // Kept, not detached: the adapter's teardown joins it (ordo/host_threads.hpp).
  const bool started = ordo::adapter_host_threads().start([ctx, ready, own, work = std::move(work)] {
    ze().zeEventHostSynchronize(ready.ev, UINT64_MAX);
    work();
    ze().zeEventHostSignal(own->ze.ev);
    ctx->events.put(ready); // nothing else waits for it
    event_drop(own);        // the context outlives this: `own` holds its queue
  });
  if (!started) {
    // No thread: nothing will do the work, so no command may wait for it.
    event_drop(own);
    ctx->events.put(ready);
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEnqueueHostTaskExp(ur_queue_handle_t hQueue, ur_exp_host_task_function_t pfnHostTask,
                                            void *data, const ur_exp_host_task_properties_t *pProperties,
                                            uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                            ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pfnHostTask) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_HOST_TASK_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  try {
    Command cmd(q, UR_COMMAND_HOST_TASK_EXP, numEventsInWaitList, phEventWaitList, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    return cmd.finish(append_host_work(cmd, [pfnHostTask, data] {
      running_user_code = true; // this thread runs nothing else
      pfnHostTask(data);
    }));
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
}

void install_host_task_entry_points(ur_dditable_t &t) { t.EnqueueExp.pfnHostTaskExp = urEnqueueHostTaskExp; }

} // namespace ordo::level_zero
