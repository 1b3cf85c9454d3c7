// SPDX-License-Identifier: Apache-2.0
// urEvent*: events on cl_event (status, wait, profiling, callbacks).
#include "event.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "context.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/event.hpp"
#include "ur_common/memory.hpp"

ur_event_handle_t_::~ur_event_handle_t_() {
  if (cl) ordo::opencl::cl.clReleaseEvent(cl);
  if (queue && owns_queue)
    ordo::adapter_ddi().Queue.pfnRelease(queue);
  else if (queue)
    ordo::opencl::unhold(queue);
  if (ctx) ordo::opencl::context_unhold(ctx);
}

namespace ordo::opencl {

namespace {

// Events whose last hold was dropped where destroying them is unsafe: inside an OpenCL
// callback (it would call OpenCL from OpenCL's own thread) or under a pool's lock (the
// event may hold the last reference to a queue whose destruction locks that pool).
// They are destroyed at the next event creation or release.
std::mutex g_deferred_mutex;
std::vector<ur_event_handle_t> g_deferred;
std::atomic<bool> g_have_deferred{false};

} // namespace

void reap_deferred_events() {
  if (!g_have_deferred.load(std::memory_order_acquire)) return;
  std::vector<ur_event_handle_t> dead;
  {
    std::lock_guard<std::mutex> lock(g_deferred_mutex);
    if (g_deferred.empty()) return;
    dead.swap(g_deferred);
    g_have_deferred.store(false, std::memory_order_release);
  }
  for (ur_event_handle_t e : dead) ordo::retire(e);
}

void event_unhold_deferred(ur_event_handle_t e) {
  if (!e->drop()) return;
  std::lock_guard<std::mutex> lock(g_deferred_mutex);
  g_deferred.push_back(e);
  g_have_deferred.store(true, std::memory_order_release);
}

ur_result_t ClWaitList::check(uint32_t n, const ur_event_handle_t *list, ur_context_handle_t context) {
  for (uint32_t i = 0; i < n; ++i) {
    if (!ordo::is_a<ur_event_handle_t_>(list[i])) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
    if (list[i]->ctx != context) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t ClWaitList::assign(uint32_t n, const ur_event_handle_t *list, ur_context_handle_t context) {
  size_ = 0;
  ur_ = list;
  ur_n_ = n;
  if (ur_result_t r = check(n, list, context)) return r;
  for (uint32_t i = 0; i < n; ++i) push(list[i]->cl);
  return UR_RESULT_SUCCESS;
}

void ClWaitList::push(cl_event e) {
  if (!e) return; // an event with no cl_event (from a null native handle) is complete
  if (size_ == capacity_) {
    uint32_t cap = capacity_ * 2;
    cl_event *bigger = new cl_event[cap];
    std::copy(data_, data_ + size_, bigger);
    if (data_ != inline_) delete[] data_;
    data_ = bigger;
    capacity_ = cap;
  }
  data_[size_++] = e;
}

ur_event_handle_t wrap_event(ur_queue_handle_t q, ur_command_t command, cl_event ev, uint64_t node, uint64_t seq) {
  auto *e = new (std::nothrow) ur_event_handle_t_();
  if (!e) return nullptr;
  e->cl = ev;
  e->queue = q;
  e->ctx = q->ctx;
  e->command = command;
  e->order_node = node;
  e->seq = seq;
  q->hold();
  q->ctx->hold();
  return e;
}

ur_result_t finish_command(ur_queue_handle_t q, ur_command_t command, cl_event ev, uint64_t node, bool blocking,
                           ur_event_handle_t *out, uint64_t seq) {
  if (blocking && ev) {
    if (cl_int err = cl.clWaitForEvents(1, &ev)) {
      cl.clReleaseEvent(ev);
      return to_ur(err);
    }
  }
  if (!out) {
    if (ev) cl.clReleaseEvent(ev);
    return UR_RESULT_SUCCESS;
  }
  reap_deferred_events();
  ur_event_handle_t e = wrap_event(q, command, ev, node, seq);
  if (!e) {
    cl.clReleaseEvent(ev);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  *out = e;
  return UR_RESULT_SUCCESS;
}

bool event_complete(ur_event_handle_t e) {
  if (!e->cl) return true;
  cl_int status = CL_QUEUED;
  if (cl.clGetEventInfo(e->cl, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
    return false;
  return status <= CL_COMPLETE; // CL_COMPLETE is 0; errors are negative and final
}

namespace {

// OpenCL's execution statuses, profiling queries and callback statuses are UR's, in the
// same order: COMPLETE 0, RUNNING, SUBMITTED, QUEUED; QUEUED 0x1280 ... COMPLETE 0x1284.
static_assert(CL_QUEUED == UR_EVENT_STATUS_QUEUED && CL_QUEUED == UR_EXECUTION_INFO_QUEUED, "statuses");
static_assert(CL_PROFILING_COMMAND_COMPLETE - CL_PROFILING_COMMAND_QUEUED == UR_PROFILING_INFO_COMMAND_COMPLETE, "");

// The events' hooks of ur_common/event.hpp: urEvent* over cl_event.
struct event_hooks {
  using Context = ur_context_handle_t_;
  using Event = ur_event_handle_t_;

  static ur_result_t unwrap_event(ur_event_handle_t h, Event *&e) { return ordo::unwrap(h, e); }
  static bool null_native(const Event *e) { return !e->cl; } // every command's event has one
  static ur_result_t execution_status(Event *e, ur_event_status_t &status) {
    cl_int s = CL_QUEUED;
    ORDO_CL_CHECK(cl.clGetEventInfo(e->cl, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr));
    // A shared cl_event is running while the command it waits for runs: this one
    // has not started yet.
    if (e->shared && s == CL_RUNNING) s = CL_SUBMITTED;
    status = s >= CL_COMPLETE ? ur_event_status_t(s) : UR_EVENT_STATUS_ERROR;
    return UR_RESULT_SUCCESS;
  }
  static bool timed(const Event *e) { return e->queue && e->queue->profiling; }
  static ur_result_t profiling_time(Event *e, ur_profiling_info_t propName, uint64_t &ns) {
    const cl_profiling_info what = CL_PROFILING_COMMAND_QUEUED + propName;
    cl_ulong t = 0;
    cl_int err = cl.clGetEventProfilingInfo(e->cl, what, sizeof t, &t, nullptr);
    // OpenCL 1.2 has no COMPLETE time: a command is complete when it ends.
    if (err == CL_INVALID_VALUE && what == CL_PROFILING_COMMAND_COMPLETE)
      err = cl.clGetEventProfilingInfo(e->cl, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr);
    ORDO_CL_CHECK(err);
    ns = t;
    return UR_RESULT_SUCCESS;
  }
  // clWaitForEvents wants events of one context; wait context by context otherwise.
  static ur_result_t wait_all(uint32_t n, const ur_event_handle_t *events) {
    ClWaitList list;
    bool one_context = true;
    for (uint32_t i = 0; i < n; ++i) {
      list.push(events[i]->cl);
      one_context = one_context && events[i]->ctx == events[0]->ctx;
    }
    if (list.size() == 0) return UR_RESULT_SUCCESS; // none has a cl_event (push skips those)
    cl_int err = one_context ? cl.clWaitForEvents(list.size(), list.data()) : CL_SUCCESS;
    for (cl_uint i = 0; !one_context && i < list.size() && err == CL_SUCCESS; ++i)
      err = cl.clWaitForEvents(1, &list.data()[i]);
    return to_ur(err);
  }
  static void reap() { reap_deferred_events(); } // a wait or release may let go of parked events
  static void destroy(Event *e) { ordo::retire(e); }
  static ur_result_t native_handle(Event *e, ur_native_handle_t &out) {
    // The cl_event names its cl_command_queue (CL_EVENT_COMMAND_QUEUE): commands may now
    // enter that queue unseen, so its finishes may no longer skip it (finish_known).
    if (e->queue) e->queue->native_shared.store(true, std::memory_order_relaxed);
    out = reinterpret_cast<ur_native_handle_t>(e->cl);
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t from_native(ur_context_handle_t c, ur_native_handle_t hNativeEvent,
                                 const ur_event_native_properties_t *pProperties, ur_event_handle_t *phEvent);

  struct callback {
    ur_event_handle_t event;
    ur_event_callback_t fn;
    void *user;
    ur_execution_info_t status;
  };
  static void CL_CALLBACK run_callback(cl_event, cl_int, void *data) {
    auto *cb = static_cast<callback *>(data);
    cb->fn(cb->event, cb->status, cb->user);
    event_unhold_deferred(cb->event);
    delete cb;
  }
  // The event holds one more holder (event.hpp's set_callback), dropped here on a refusal.
  static ur_result_t add_callback(Event *e, ur_execution_info_t execStatus, ur_event_callback_t pfnNotify,
                                  void *pUserData) {
    cl_int when = execStatus; // the same numbers (above)
    // A shared cl_event (event.hpp) runs with the command this one waits for: this
    // one starts, and ends, when that command completes.
    if (e->shared && when == CL_RUNNING) when = CL_COMPLETE;
    auto *cb = new (std::nothrow) callback{e, pfnNotify, pUserData, execStatus};
    cl_int err = cb ? cl.clSetEventCallback(e->cl, when, run_callback, cb) : CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) return UR_RESULT_SUCCESS;
    delete cb;
    unhold(e);
    return to_ur(err);
  }
};

// The UR queue a native event's command was enqueued on (UR_EVENT_INFO_COMMAND_QUEUE,
// as UR answers it): a live queue of the context on that cl_command_queue, or a new
// one wrapping it (a queue being destroyed, its holders gone, waits for queues_mutex
// to unlist it and is passed over). Null for a user event.
ur_result_t queue_of_native_event(cl_event native, ur_context_handle_t c, ur_event_handle_t_ &e) {
  cl_command_queue clq = nullptr;
  ORDO_CL_CHECK(cl.clGetEventInfo(native, CL_EVENT_COMMAND_QUEUE, sizeof clq, &clq, nullptr));
  if (!clq) return UR_RESULT_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(c->queues_mutex);
    for (ur_queue_handle_t q : c->queues)
      if (q->cl == clq && ordo::ur_common::try_hold(q)) {
        e.queue = q;
        return UR_RESULT_SUCCESS;
      }
  }
  ur_queue_handle_t q = nullptr;
  if (ur_result_t r = ordo::adapter_ddi().Queue.pfnCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(clq), c,
                                                                          nullptr, nullptr, &q))
    return r;
  e.queue = q;
  e.owns_queue = true;
  return UR_RESULT_SUCCESS;
}

ur_result_t event_hooks::from_native(ur_context_handle_t c, ur_native_handle_t hNativeEvent,
                                     const ur_event_native_properties_t *pProperties, ur_event_handle_t *phEvent) {
  cl_event native = reinterpret_cast<cl_event>(hNativeEvent);
  if (!native) { // an event with no cl_event and no queue, complete (ur_common/event.hpp)
    auto *e = new (std::nothrow) ur_event_handle_t_();
    if (!e) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    e->ctx = c;
    c->hold();
    *phEvent = e;
    return UR_RESULT_SUCCESS;
  }
  cl_context owner = nullptr;
  ORDO_CL_CHECK(cl.clGetEventInfo(native, CL_EVENT_CONTEXT, sizeof owner, &owner, nullptr));
  if (owner != c->cl) return UR_RESULT_ERROR_INVALID_CONTEXT;
  auto *e = new (std::nothrow) ur_event_handle_t_();
  if (!e) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  e->ctx = c;
  c->hold();
  if (ur_result_t r = queue_of_native_event(native, c, *e)) {
    delete e;
    return r;
  }
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainEvent(native);
  e->cl = native;
  *phEvent = e;
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_event_entry_points(ur_dditable_t &t) { ur_common::event_entry_points<event_hooks>::install(t); }

} // namespace ordo::opencl
