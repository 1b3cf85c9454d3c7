// SPDX-License-Identifier: Apache-2.0
// urEnqueueEventsWait* (ur_common/wait.hpp over a marker command) and urEnqueueHostTaskExp.
#include "entry_points.hpp"
#include "queue.hpp"
#include "ur_common/wait.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

struct wait_hooks {
  using Queue = ordo::native_cpu::Queue;
  static ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n, const ur_event_handle_t *waits,
                                  ur_event_handle_t *phEvent) {
    CommandBuilder cmd(*q, type);
    if (ur_result_t r = cmd.set_wait_list(n, waits)) return r;
    cmd.set_ordering(barrier ? Ordering::Barrier : Ordering::AllPrevious);
    return cmd.submit(phEvent);
  }
};

ur_result_t UR_APICALL urEnqueueHostTaskExp(ur_queue_handle_t hQueue, ur_exp_host_task_function_t pfnHostTask,
                                            void *data, const ur_exp_host_task_properties_t *pProperties,
                                            uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                            ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (!pfnHostTask) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_HOST_TASK_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  CommandBuilder cmd(*q, UR_COMMAND_HOST_TASK_EXP);
  if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  cmd.set_work(make_work([pfnHostTask, data] {
    WorkerPool::UserCode user;
    pfnHostTask(data);
    return UR_RESULT_SUCCESS;
  }));
  return cmd.submit(phEvent);
}

} // namespace

void install_enqueue_entry_points(ur_dditable_t &t) {
  ordo::ur_common::wait_entry_points<wait_hooks>::install(t);
  t.EnqueueExp.pfnHostTaskExp = urEnqueueHostTaskExp;
}

} // namespace ordo::native_cpu
