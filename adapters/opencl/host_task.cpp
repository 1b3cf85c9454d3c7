// SPDX-License-Identifier: Apache-2.0
// urEnqueueHostTaskExp: a marker after the wait list says when the function may run; a
// thread waits for it, runs the function and completes a user event; a second marker,
// waiting for that user event, is the command the queue orders later commands after
// (and the event the caller gets). A failed wait list fails the task without running it.
// The thread waits on the marker's cl_event itself: urEventWait is a synchronisation
// point of the program's (pools give back memory above their thresholds), and one the
// program never made must not happen at a moment it cannot see (docs/async-alloc.md).
#include "cl_api.hpp"
#include "context.hpp"
#include "event.hpp"
#include "ordo/ddi_fill.hpp"
#include "ordo/host_threads.hpp"
#include "queue.hpp"
#include "tables.hpp"

namespace ordo::opencl {

namespace {

ur_result_t UR_APICALL urEnqueueHostTaskExp(ur_queue_handle_t hQueue, ur_exp_host_task_function_t pfnHostTask,
                                            void *data, const ur_exp_host_task_properties_t *pProperties,
                                            uint32_t numEvents, const ur_event_handle_t *phEvents,
                                            ur_event_handle_t *phEvent) {
  const ur_dditable_t &t = ordo::adapter_ddi();
  ORDO_CHECK_HANDLE(hQueue); // the rest of the arguments: the spec's checks (table tail)
  ur_event_handle_t ready = nullptr, gate = nullptr, done = nullptr;
  if (ur_result_t r = t.Enqueue.pfnEventsWait(hQueue, numEvents, phEvents, &ready)) return r;
  cl_int err = CL_SUCCESS;
  cl_event user = cl.clCreateUserEvent(hQueue->ctx->cl, &err);
  ur_event_native_properties_t owned{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, true};
  ur_result_t r =
      user ? t.Event.pfnCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(user), hQueue->ctx, &owned, &gate)
           : UR_RESULT_ERROR_OUT_OF_RESOURCES;
  if (r == UR_RESULT_SUCCESS) r = t.Enqueue.pfnEventsWait(hQueue, 1, &gate, &done);
  if (r == UR_RESULT_SUCCESS) {
    // Kept, not detached: the adapter's teardown joins it (ordo/host_threads.hpp).
    const bool started = ordo::adapter_host_threads().start([&t, ready, gate, user, pfnHostTask, data] {
      bool ok = cl.clWaitForEvents(1, &ready->cl) == CL_SUCCESS;
      if (ok) pfnHostTask(data);
      cl.clSetUserEventStatus(user, ok ? CL_COMPLETE : CL_INVALID_EVENT_WAIT_LIST);
      t.Event.pfnRelease(ready);
      t.Event.pfnRelease(gate);
    });
    if (!started) r = UR_RESULT_ERROR_OUT_OF_RESOURCES; // no thread: the task fails, nothing waits forever
  }
  if (r != UR_RESULT_SUCCESS) {
    if (user) cl.clSetUserEventStatus(user, CL_OUT_OF_RESOURCES);
    if (user && !gate) cl.clReleaseEvent(user); // else the gate owns it
    for (ur_event_handle_t e : {ready, gate, done})
      if (e) t.Event.pfnRelease(e);
    return r;
  }
  if (phEvent)
    *phEvent = done;
  else
    t.Event.pfnRelease(done);
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_host_task_entry_points(ur_dditable_t &t) { t.EnqueueExp.pfnHostTaskExp = urEnqueueHostTaskExp; }

} // namespace ordo::opencl
