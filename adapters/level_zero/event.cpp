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
#include "ur_common/event.hpp"
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

// What ur_common's urEvent* entry points leave to the adapter (ur_common/event.hpp).
struct event_hooks {
  using Context = level_zero::Context;
  using Event = level_zero::Event;

  static ur_result_t unwrap_event(ur_event_handle_t h, Event *&e) { return level_zero::unwrap_event(h, e); }
  static bool null_native(const Event *e) { return e->null_native; }
  static ur_result_t execution_status(Event *e, ur_event_status_t &status) {
    status = status_of(e);
    return UR_RESULT_SUCCESS;
  }
  static bool timed(const Event *e) { return e->ze.timed && e->ze.ev; }

  // Kernel timestamps count device ticks (timerResolution: ns per tick before API 1.1's
  // cycles/s); start and end are mapped to host nanoseconds through the device's
  // global-timestamp pair.
  static ur_result_t command_times(Event *e, uint64_t &start_ns, uint64_t &end_ns) {
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
    start_ns = to_host(ts.global.kernelStart);
    end_ns = to_host(ts.global.kernelEnd);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t wait(Event *e) {
    if (e->ze.ev) ORDO_ZE(ze().zeEventHostSynchronize(e->ze.ev, UINT64_MAX));
    return UR_RESULT_SUCCESS;
  }
  static void destroy(Event *e) { event_destroy(e); }
  static ur_result_t native_handle(Event *e, ur_native_handle_t &native) {
    native = reinterpret_cast<ur_native_handle_t>(e->ze.ev);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t adopt_native(Event *e, Context *ctx, ur_native_handle_t hNativeEvent,
                                  const ur_event_native_properties_t *pProperties) {
    e->ze.ev = reinterpret_cast<ze_event_handle_t>(hNativeEvent);
    if (!e->ze.ev) {
      // No native object: a signalled event of the pools stands in for the lists that
      // wait for it (Command::add_wait), and goes back to them with the event.
      if (ur_result_t r = ctx->events.get(false, e->ze)) return r;
      if (ur_result_t r = check(ze().zeEventHostSignal(e->ze.ev))) {
        ctx->events.put(e->ze);
        e->ze = {};
        return r;
      }
      e->null_native = true;
      e->pooled = true;
      context_hold(ctx);
      return UR_RESULT_SUCCESS;
    }
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
    return UR_RESULT_SUCCESS;
  }

  static void add_callback(Event *e, ur_execution_info_t execStatus, ur_event_callback_t pfnNotify, void *pUserData) {
    e->callbacks_due.fetch_add(1, std::memory_order_acq_rel);
    callbacks().add({e, execStatus, pfnNotify, pUserData});
  }
};

} // namespace

void install_event_entry_points(ur_dditable_t &t) { ordo::ur_common::event_entry_points<event_hooks>::install(t); }

} // namespace ordo::level_zero
