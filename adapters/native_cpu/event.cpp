// SPDX-License-Identifier: Apache-2.0
// urEvent*: status, waiting, callbacks and profiling of commands.
#include "ordo/retired_handles.hpp"
#include "entry_points.hpp"
#include "event.hpp"

#include "context.hpp"
#include "ordo/info.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

Event::Event(Context *ctx, Queue *q, ur_command_t cmd, bool profiled)
    : context(ctx), queue(q), command(cmd), profiling(profiled) {
  ref_count.store(0, std::memory_order_relaxed); // internal until published
  queue->hold();
  if (profiling) t_queued.store(now_ns(), std::memory_order_relaxed);
}

// Holds nothing: destroy() dropped the queue, or the queue is deleting its free list.
Event::~Event() = default;

void Event::destroy(Event *ev) noexcept {
  Queue *q = ev->queue;
  // Nothing else can reach the event now: reset what a new command must not see here,
  // on the thread that retired it rather than on the enqueuing one.
  ev->more_successors.clear();
  ev->callbacks.clear();
  ev->callbacks_running = 0;
  ev->unregister_after_callbacks = false;
  ev->has_callbacks.store(false, std::memory_order_relaxed);
  ev->work.reset();
  if (!q->give_back_event(*ev)) ordo::retire(ev);
  q->drop_hold(); // after give_back_event: the queue deletes its free events when it goes
}

void Event::reuse(ur_command_t cmd) {
  command = cmd;
  ref_count.store(0, std::memory_order_relaxed);
  holders.store(1, std::memory_order_relaxed);
  status.store(UR_EVENT_STATUS_QUEUED, std::memory_order_relaxed);
  result = UR_RESULT_SUCCESS;
  waiting_on.store(1, std::memory_order_relaxed);
  dependency_failed.store(false, std::memory_order_relaxed);
  first_successor.store(nullptr, std::memory_order_relaxed);
  order_node.store(0, std::memory_order_relaxed);
  queue_prev = queue_next = free_next = nullptr;
  if (profiling) {
    t_submit.store(0, std::memory_order_relaxed);
    t_start.store(0, std::memory_order_relaxed);
    t_end.store(0, std::memory_order_relaxed);
    t_queued.store(now_ns(), std::memory_order_relaxed);
  }
  queue->hold();
}

namespace {

ur_result_t UR_APICALL urEventGetInfo(ur_event_handle_t hEvent, ur_event_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_LOOKUP(Event, ev, hEvent);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_EVENT_INFO_COMMAND_QUEUE: return out.value(ev->queue ? to_handle(ev->queue) : ur_queue_handle_t{nullptr});
  case UR_EVENT_INFO_CONTEXT: return out.value(to_handle(ev->context));
  case UR_EVENT_INFO_COMMAND_TYPE: return out.value(ev->command);
  case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS:
    return out.value(static_cast<ur_event_status_t>(ev->status.load(std::memory_order_acquire)));
  case UR_EVENT_INFO_REFERENCE_COUNT: return out.value(ev->count());
  case UR_EVENT_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

// Timestamps exist only for commands of a profiling queue, and only once reached.
ur_result_t UR_APICALL urEventGetProfilingInfo(ur_event_handle_t hEvent, ur_profiling_info_t propName, size_t propSize,
                                               void *pPropValue, size_t *pPropSizeRet) {
  ORDO_LOOKUP(Event, ev, hEvent);
  if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (pPropValue && propSize == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!ev->profiling) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  uint64_t t = 0;
  switch (propName) {
  case UR_PROFILING_INFO_COMMAND_QUEUED: t = ev->t_queued.load(std::memory_order_relaxed); break;
  case UR_PROFILING_INFO_COMMAND_SUBMIT: t = ev->t_submit.load(std::memory_order_relaxed); break;
  case UR_PROFILING_INFO_COMMAND_START: t = ev->t_start.load(std::memory_order_relaxed); break;
  case UR_PROFILING_INFO_COMMAND_END:
  case UR_PROFILING_INFO_COMMAND_COMPLETE:
    if (ev->terminal()) t = ev->t_end.load(std::memory_order_relaxed);
    break;
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (t == 0) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE; // not reached yet
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(t);
}

ur_result_t UR_APICALL urEventWait(uint32_t numEvents, const ur_event_handle_t *phEventWaitList) {
  if (!phEventWaitList) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numEvents == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i < numEvents; ++i)
    if (!lookup<Event>(phEventWaitList[i])) return Event::invalid_handle(phEventWaitList[i]);
  bool all_ok = true;
  for (uint32_t i = 0; i < numEvents; ++i) all_ok &= graph::wait(*reinterpret_cast<Event *>(phEventWaitList[i]));
  // A synchronisation point for the pools of each context involved.
  Context *done = nullptr;
  for (uint32_t i = 0; i < numEvents; ++i) {
    Context *c = reinterpret_cast<Event *>(phEventWaitList[i])->context;
    if (c != done) c->pools->sync_point();
    done = c;
  }
  return all_ok ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS;
}

ur_result_t UR_APICALL urEventRetain(ur_event_handle_t hEvent) { return user_retain<Event>(hEvent); }
// The command of a released event still runs; the scheduler keeps its node alive.
// While callbacks of the event are due or running the handle stays registered (they
// may query it); the last of them unregisters it (task_graph.cpp, callbacks_done).
ur_result_t UR_APICALL urEventRelease(ur_event_handle_t hEvent) {
  ORDO_LOOKUP(Event, ev, hEvent);
  bool last = false;
  if (!ev->release_user(last)) return UR_RESULT_ERROR_INVALID_EVENT; // one release too many
  if (!last) return UR_RESULT_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(ev->mu);
    if (!ev->callbacks.empty() || ev->callbacks_running > 0) {
      ev->unregister_after_callbacks = true;
      return UR_RESULT_SUCCESS;
    }
  }
  registry().remove(ev);
  ev->on_user_released();
  ev->drop_hold();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventSetCallback(ur_event_handle_t hEvent, ur_execution_info_t execStatus,
                                          ur_event_callback_t pfnNotify, void *pUserData) {
  ORDO_LOOKUP(Event, ev, hEvent);
  if (!pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (execStatus > UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (execStatus == UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  graph::add_callback(*ev, execStatus, pfnNotify, pUserData);
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_event_entry_points(ur_dditable_t &t) {
  t.Event.pfnGetInfo = urEventGetInfo;
  t.Event.pfnGetProfilingInfo = urEventGetProfilingInfo;
  t.Event.pfnWait = urEventWait;
  t.Event.pfnRetain = urEventRetain;
  t.Event.pfnRelease = urEventRelease;
  t.Event.pfnSetCallback = urEventSetCallback;
}

} // namespace ordo::native_cpu
