// Events: a recycled driver event recorded after the command (and one before it on a
// profiling queue), status, waits, profiling and completion callbacks.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>

#include "backend.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"
#include "ur_common/callbacks.hpp"

namespace ordo::sb {

ur_result_t event_create(Queue *q, ur_command_t type, bool timed, Event **out) {
  auto *ev = new Event();
  ev->queue = q;
  ev->ctx = q->ctx;
  ev->dev = q->dev;
  ev->command = type;
  ev->timed = timed;
  ev->queued_ns = timed ? host_now_ns() : 0;
  status r = q->dev->events.get(timed, &ev->done);
  if (!r && timed) r = q->dev->events.get(true, &ev->start);
  if (r) {
    if (ev->done) q->dev->events.put(ev->done, timed);
    delete ev;
    return to_ur(r);
  }
  queue_hold(q);
  *out = ev;
  return UR_RESULT_SUCCESS;
}

void event_destroy(Event *ev) {
  if (ev->exported) {
    std::lock_guard<std::mutex> lock(ev->dev->exported_mutex);
    ev->dev->exported.erase(ev->done);
  }
  if (ev->pooled) {
    if (ev->done) ev->dev->events.put(ev->done, ev->timed);
    if (ev->start) ev->dev->events.put(ev->start, ev->timed);
  } else if (ev->owns_native && ev->done) {
    ev->dev->make_current();
    drv::event_destroy(ev->done);
  }
  Queue *q = ev->queue;
  Context *ctx = q ? nullptr : ev->ctx;
  ordo::retire(ev);
  if (q) queue_drop(q);
  if (ctx) context_drop(ctx);
}

namespace {

// Completion callbacks: ur_common/callbacks.hpp's thread; a status is reached when
// the event says so.
struct callback_hooks {
  using Event = sb::Event;
  static bool reached(Event *e, ur_execution_info_t status) {
    if (!e->done || status == UR_EXECUTION_INFO_SUBMITTED) return true;
    e->dev->make_current();
    if (status == UR_EXECUTION_INFO_RUNNING && e->start && !drv::event_query(e->start)) return true;
    return drv::event_query(e->done).kind != err::not_ready;
  }
  static void release(Event *e) { event_drop(e); }
};

ordo::uc::callback_thread<callback_hooks> &callbacks() { return ordo::uc::callback_thread<callback_hooks>::instance(); }

ur_event_status_t status_of(Event *e) {
  if (!e->done) return UR_EVENT_STATUS_COMPLETE;
  status r = drv::event_query(e->done);
  if (!r) return UR_EVENT_STATUS_COMPLETE;
  if (r.kind != err::not_ready) return UR_EVENT_STATUS_ERROR;
  if (e->start && !drv::event_query(e->start)) return UR_EVENT_STATUS_RUNNING;
  return UR_EVENT_STATUS_SUBMITTED;
}

} // namespace

ur_result_t UR_APICALL urEventGetInfo(ur_event_handle_t hEvent, ur_event_info_t propName,
                                      size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Event, e, hEvent);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_EVENT_INFO_COMMAND_QUEUE: return out.value(reinterpret_cast<ur_queue_handle_t>(e->queue));
  case UR_EVENT_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(e->ctx));
  case UR_EVENT_INFO_COMMAND_TYPE: return out.value(e->command);
  case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS:
    ORDO_DRV(e->dev->make_current());
    return out.value(status_of(e));
  case UR_EVENT_INFO_REFERENCE_COUNT: return out.value(e->count());
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urEventGetProfilingInfo(ur_event_handle_t hEvent, ur_profiling_info_t propName,
                                               size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Event, e, hEvent);
  if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (pPropValue && propSize == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!e->timed || !e->done) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  if (propName == UR_PROFILING_INFO_COMMAND_QUEUED || propName == UR_PROFILING_INFO_COMMAND_SUBMIT)
    return out.value(e->queued_ns);

  ORDO_DRV(e->dev->make_current());
  status q = drv::event_query(e->done);
  if (q.kind == err::not_ready) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  ORDO_DRV(q);
  event_t base = nullptr;
  uint64_t base_ns = 0;
  ORDO_DRV(e->dev->time_base(&base, &base_ns));
  auto device_ns = [&](event_t ev, uint64_t *ns) -> status {
    float ms = 0;
    status r = drv::event_elapsed_ms(&ms, base, ev);
    *ns = base_ns + static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
    return r;
  };
  uint64_t start_ns = 0, end_ns = 0;
  ORDO_DRV(device_ns(e->start ? e->start : e->done, &start_ns));
  ORDO_DRV(device_ns(e->done, &end_ns));
  // The clocks are mapped, not shared: keep queued <= start <= end despite rounding.
  if (start_ns < e->queued_ns) start_ns = e->queued_ns;
  if (end_ns < start_ns) end_ns = start_ns;
  return out.value(propName == UR_PROFILING_INFO_COMMAND_START ? start_ns : end_ns);
}

ur_result_t UR_APICALL urEventWait(uint32_t numEvents, const ur_event_handle_t *phEventWaitList) {
  if (!phEventWaitList) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numEvents == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i < numEvents; ++i) {
    ORDO_UNWRAP(Event, e, phEventWaitList[i]);
    (void)e;
  }
  for (uint32_t i = 0; i < numEvents; ++i) {
    auto *e = reinterpret_cast<Event *>(phEventWaitList[i]);
    if (!e->done) continue;
    ORDO_DRV(e->dev->make_current());
    ORDO_DRV(drv::event_synchronize(e->done));
  }
  // A synchronisation point of each context named: pools collect completed frees
  // and give back memory above their release thresholds.
  Context *done = nullptr;
  for (uint32_t i = 0; i < numEvents; ++i) {
    Context *ctx = reinterpret_cast<Event *>(phEventWaitList[i])->ctx;
    if (ctx && ctx != done) (done = ctx)->pools->sync_point();
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventRetain(ur_event_handle_t hEvent) {
  ORDO_UNWRAP(Event, e, hEvent);
  e->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventRelease(ur_event_handle_t hEvent) {
  ORDO_UNWRAP(Event, e, hEvent);
  switch (ordo::release_reference(e)) {
  case ordo::released::none_left: return UR_RESULT_ERROR_INVALID_EVENT;
  case ordo::released::last_holder: event_destroy(e); break;
  case ordo::released::kept: break;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventGetNativeHandle(ur_event_handle_t hEvent, ur_native_handle_t *phNativeEvent) {
  ORDO_UNWRAP(Event, e, hEvent);
  if (!phNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (e->queue && e->done && e->pooled) {
    std::lock_guard<std::mutex> lock(e->dev->exported_mutex);
    e->dev->exported[e->done] = Device::Exported{e->queue, e->lane};
    e->exported = true;
  }
  *phNativeEvent = reinterpret_cast<ur_native_handle_t>(e->done);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventCreateWithNativeHandle(ur_native_handle_t hNativeEvent,
                                                     ur_context_handle_t hContext,
                                                     const ur_event_native_properties_t *pProperties,
                                                     ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!hNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto *e = new Event();
  e->ctx = ctx;
  e->dev = ctx->devices[0];
  e->done = reinterpret_cast<event_t>(hNativeEvent);
  e->pooled = false;
  e->owns_native = pProperties && pProperties->isNativeHandleOwned;
  // A handle this adapter gave out names the queue and stream its command ran on.
  for (Device *d : ctx->devices) {
    std::lock_guard<std::mutex> lock(d->exported_mutex);
    auto it = d->exported.find(e->done);
    if (it == d->exported.end() || it->second.queue->ctx != ctx) continue;
    e->queue = it->second.queue;
    e->lane = it->second.lane;
    e->dev = d;
    queue_hold(e->queue); // instead of the context: the queue holds it
    break;
  }
  if (!e->queue) context_hold(ctx);
  *phEvent = reinterpret_cast<ur_event_handle_t>(e);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventSetCallback(ur_event_handle_t hEvent, ur_execution_info_t execStatus,
                                          ur_event_callback_t pfnNotify, void *pUserData) {
  ORDO_UNWRAP(Event, e, hEvent);
  if (execStatus > UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (execStatus == UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  if (!pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  e->hold(); // the callback thread drops it after the call
  callbacks().add({e, execStatus, pfnNotify, pUserData});
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::sb
