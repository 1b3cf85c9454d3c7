// SPDX-License-Identifier: Apache-2.0
// Events: a recycled Level Zero event signalled by the command's append (a
// kernel-timestamp event on a profiling queue), status, waits, profiling and
// completion callbacks.
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"
#include "ur_common/callbacks.hpp"

namespace ordo::level_zero {

uint64_t host_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// ---- EventPools ------------------------------------------------------------------------

ur_result_t EventPools::get(bool timed, ZeEvent &out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto &free = free_[timed ? 1 : 0];
  if (free.empty()) {
    ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                              kEventsPerPool};
    if (timed) desc.flags |= ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
    std::vector<ze_device_handle_t> devices;
    for (Device *d : ctx_->devices) devices.push_back(d->ze);
    ze_event_pool_handle_t pool = nullptr;
    ORDO_ZE(ze().zeEventPoolCreate(ctx_->ze, &desc, uint32_t(devices.size()), devices.data(), &pool));
    pools_.push_back(pool);
    for (uint32_t i = 0; i < kEventsPerPool; ++i) {
      ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
      ze_event_handle_t ev = nullptr;
      if (ze().zeEventCreate(pool, &ed, &ev) != ZE_RESULT_SUCCESS) break;
      all_.push_back(ev);
      free.push_back(ev);
    }
    if (free.empty()) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  out.ev = free.back();
  out.timed = timed;
  free.pop_back();
  return UR_RESULT_SUCCESS;
}

void EventPools::put(const ZeEvent &e) {
  ze().zeEventHostReset(e.ev);
  std::lock_guard<std::mutex> lock(mutex_);
  free_[e.timed ? 1 : 0].push_back(e.ev);
}

void EventPools::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (ze_event_handle_t e : all_) ze().zeEventDestroy(e);
  for (ze_event_pool_handle_t p : pools_) ze().zeEventPoolDestroy(p);
  all_.clear();
  pools_.clear();
  free_[0].clear();
  free_[1].clear();
}

// ---- events ------------------------------------------------------------------------

bool Event::complete() const { return !ze.ev || level_zero::ze().zeEventQueryStatus(ze.ev) == ZE_RESULT_SUCCESS; }

ur_result_t event_create(Queue *q, ur_command_t type, bool timed, Event **out) {
  auto *ev = new Event();
  ev->queue = q;
  ev->ctx = q->ctx;
  ev->command = type;
  ev->queued_ns = timed ? host_now_ns() : 0;
  if (ur_result_t r = q->ctx->events.get(timed, ev->ze)) {
    delete ev;
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(q->ctx->native_mutex);
    q->ctx->events_by_native[ev->ze.ev] = ev;
  }
  queue_hold(q);
  *out = ev;
  return UR_RESULT_SUCCESS;
}

void event_destroy(Event *ev) {
  if (ev->staging) free_memory(ev->ctx, ev->staging);
  if (ev->pooled && ev->ze.ev) {
    {
      std::lock_guard<std::mutex> lock(ev->ctx->native_mutex);
      ev->ctx->events_by_native.erase(ev->ze.ev);
    }
    ev->ctx->events.put(ev->ze);
  } else if (ev->owns_native && ev->ze.ev)
    ze().zeEventDestroy(ev->ze.ev);
  Queue *q = ev->queue;
  Context *ctx = q ? nullptr : ev->ctx;
  Event *origin = ev->origin;
  ordo::retire(ev);
  if (origin) event_drop(origin);
  if (q) queue_drop(q);
  if (ctx) context_drop(ctx);
}

namespace {

ur_event_status_t status_of(const Event *e) {
  if (!e->ze.ev) return UR_EVENT_STATUS_COMPLETE;
  ze_result_t r = ze().zeEventQueryStatus(e->ze.ev);
  if (r == ZE_RESULT_SUCCESS) return UR_EVENT_STATUS_COMPLETE;
  if (r != ZE_RESULT_NOT_READY) return UR_EVENT_STATUS_ERROR;
  return UR_EVENT_STATUS_SUBMITTED;
}

// Completion callbacks: ur_common/callbacks.hpp's thread; a status is reached when
// the event says so. Level Zero tells only completion, so RUNNING is reached with
// COMPLETE; the thread runs an event's RUNNING callbacks before its COMPLETE ones.
struct callback_hooks {
  using Event = level_zero::Event;
  // Called only on the callback thread, before any callback runs there.
  static bool reached(Event *e, ur_execution_info_t status) {
    running_user_code = true;
    if (status == UR_EXECUTION_INFO_SUBMITTED) return true;
    return status_of(e) != UR_EVENT_STATUS_SUBMITTED;
  }
  static void release(Event *e) {
    e->callbacks_due.fetch_sub(1, std::memory_order_acq_rel);
    event_drop(e);
  }
};

ordo::ur_common::callback_thread<callback_hooks> &callbacks() {
  return ordo::ur_common::callback_thread<callback_hooks>::instance();
}

} // namespace

ur_result_t UR_APICALL urEventGetInfo(ur_event_handle_t hEvent, ur_event_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_L0_UNWRAP_EVENT(e, hEvent);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_EVENT_INFO_COMMAND_QUEUE: return out.value(reinterpret_cast<ur_queue_handle_t>(e->queue));
  case UR_EVENT_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(e->ctx));
  case UR_EVENT_INFO_COMMAND_TYPE: return out.value(e->command);
  case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS: return out.value(status_of(e));
  case UR_EVENT_INFO_REFERENCE_COUNT: return out.value(e->count());
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// Kernel timestamps count device ticks (timerResolution: ns per tick before API 1.1's
// cycles/s); start and end are mapped to host nanoseconds through the device's
// global-timestamp pair.
ur_result_t UR_APICALL urEventGetProfilingInfo(ur_event_handle_t hEvent, ur_profiling_info_t propName, size_t propSize,
                                               void *pPropValue, size_t *pPropSizeRet) {
  ORDO_L0_UNWRAP_EVENT(e, hEvent);
  if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (pPropValue && propSize == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!e->ze.timed || !e->ze.ev) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  if (propName == UR_PROFILING_INFO_COMMAND_QUEUED || propName == UR_PROFILING_INFO_COMMAND_SUBMIT)
    return out.value(e->queued_ns);
  if (!e->complete()) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  ze_kernel_timestamp_result_t ts{};
  ORDO_ZE(ze().zeEventQueryKernelTimestamp(e->ze.ev, &ts));
  const ze_device_properties_t &p = e->queue->dev->facts.props;
  const double ns_per_tick = p.timerResolution ? double(p.timerResolution) : 1.0;
  const uint64_t mask = p.kernelTimestampValidBits >= 64 ? ~0ull : (1ull << p.kernelTimestampValidBits) - 1;
  uint64_t host = 0, device = 0;
  ORDO_ZE(ze().zeDeviceGetGlobalTimestamps(e->queue->dev->ze, &host, &device));
  auto to_host = [&](uint64_t ticks) {
    const double now_dev_ns = double(device & mask) * ns_per_tick;
    const double at_ns = double(ticks & mask) * ns_per_tick;
    return uint64_t(double(host) - (now_dev_ns - at_ns));
  };
  uint64_t start_ns = to_host(ts.global.kernelStart), end_ns = to_host(ts.global.kernelEnd);
  if (start_ns < e->queued_ns) start_ns = e->queued_ns;
  if (end_ns < start_ns) end_ns = start_ns;
  return out.value(propName == UR_PROFILING_INFO_COMMAND_START ? start_ns : end_ns);
}

ur_result_t UR_APICALL urEventWait(uint32_t numEvents, const ur_event_handle_t *phEventWaitList) {
  if (!phEventWaitList) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numEvents == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i < numEvents; ++i) {
    ORDO_L0_UNWRAP_EVENT(e, phEventWaitList[i]);
    (void)e;
  }
  for (uint32_t i = 0; i < numEvents; ++i) {
    auto *e = reinterpret_cast<Event *>(phEventWaitList[i]);
    if (e->ze.ev) ORDO_ZE(ze().zeEventHostSynchronize(e->ze.ev, UINT64_MAX));
  }
  // A synchronisation point of each context named.
  Context *done = nullptr;
  for (uint32_t i = 0; i < numEvents; ++i) {
    Context *ctx = reinterpret_cast<Event *>(phEventWaitList[i])->ctx;
    if (ctx && ctx != done) (done = ctx)->pools->sync_point();
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventRetain(ur_event_handle_t hEvent) {
  ORDO_L0_UNWRAP_EVENT(e, hEvent);
  if (!e->retain_user()) return ordo::invalid_of(e);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventRelease(ur_event_handle_t hEvent) {
  ORDO_L0_UNWRAP_EVENT(e, hEvent);
  switch (ordo::release_reference(e)) {
  case ordo::released::none_left: return UR_RESULT_ERROR_INVALID_EVENT;
  case ordo::released::last_holder: event_destroy(e); break;
  case ordo::released::kept: break;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventGetNativeHandle(ur_event_handle_t hEvent, ur_native_handle_t *phNativeEvent) {
  ORDO_L0_UNWRAP_EVENT(e, hEvent);
  if (!phNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeEvent = reinterpret_cast<ur_native_handle_t>(e->ze.ev);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventCreateWithNativeHandle(ur_native_handle_t hNativeEvent, ur_context_handle_t hContext,
                                                     const ur_event_native_properties_t *pProperties,
                                                     ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!hNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto *e = new Event();
  e->ctx = ctx;
  e->ze.ev = reinterpret_cast<ze_event_handle_t>(hNativeEvent);
  e->pooled = false;
  {
    // One of this context's own events: the copy answers its queue and command and
    // keeps it alive, so its Level Zero event is not recycled under the copy.
    std::lock_guard<std::mutex> lock(ctx->native_mutex);
    auto it = ctx->events_by_native.find(e->ze.ev);
    if (it != ctx->events_by_native.end()) {
      Event *o = it->second;
      o->hold();
      e->origin = o;
      e->queue = o->queue;
      e->command = o->command;
      e->order_node = o->order_node;
    }
  }
  e->owns_native = !e->origin && pProperties && pProperties->isNativeHandleOwned;
  if (e->queue)
    queue_hold(e->queue);
  else
    context_hold(ctx);
  *phEvent = reinterpret_cast<ur_event_handle_t>(e);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventSetCallback(ur_event_handle_t hEvent, ur_execution_info_t execStatus,
                                          ur_event_callback_t pfnNotify, void *pUserData) {
  ORDO_L0_UNWRAP_EVENT(e, hEvent);
  if (execStatus > UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (execStatus == UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  if (!pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  e->hold(); // the callback thread drops it after the call
  e->callbacks_due.fetch_add(1, std::memory_order_acq_rel);
  callbacks().add({e, execStatus, pfnNotify, pUserData});
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::level_zero
