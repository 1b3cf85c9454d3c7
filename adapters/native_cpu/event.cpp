// SPDX-License-Identifier: Apache-2.0
// Events as the task graph's nodes, and urEvent* (ur_common/event.hpp) over them.
#include "event.hpp"

#include "context.hpp"
#include "entry_points.hpp"
#include "ordo/retired_handles.hpp"
#include "queue.hpp"
#include "ur_common/event.hpp"

namespace ordo::native_cpu {

Event::Event(Context *context, Queue *q, ur_command_t cmd, bool profiled)
    : ctx(context), queue(q), command(cmd), profiling(profiled) {
  ref_count.store(0, std::memory_order_relaxed); // internal until published
  if (queue)
    queue->hold();
  else
    ctx->hold();
  if (profiling) t_queued.store(now_ns(), std::memory_order_relaxed);
}

void Event::destroy(Event *ev) noexcept {
  Queue *q = ev->queue;
  if (!q) { // no command: never in a queue's free list
    Context *c = ev->ctx;
    ordo::retire(ev);
    c->drop_hold();
    return;
  }
  // Nothing else can reach it: reset here, on the retiring thread, not the enqueuing one.
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
  counted_out.store(false, std::memory_order_relaxed);
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

// What ur_common's urEvent* entry points leave to the task graph (ur_common/event.hpp).
struct event_hooks {
  using Context = native_cpu::Context;
  using Event = native_cpu::Event;
  static constexpr bool task_graph = true;

  static ur_result_t unwrap_event(ur_event_handle_t h, Event *&e) { return registry_unwrap(h, e); }
  static bool null_native(const Event *e) { return !e->queue; } // only such events have no queue
  static ur_result_t execution_status(Event *e, ur_event_status_t &status) {
    status = static_cast<ur_event_status_t>(e->status.load(std::memory_order_acquire));
    return UR_RESULT_SUCCESS;
  }
  // Timestamps exist only for commands of a profiling queue, and only once reached.
  static bool timed(const Event *e) { return e->profiling; }
  static ur_result_t profiling_time(Event *e, ur_profiling_info_t propName, uint64_t &t) {
    switch (propName) {
    case UR_PROFILING_INFO_COMMAND_QUEUED: t = e->t_queued.load(std::memory_order_relaxed); break;
    case UR_PROFILING_INFO_COMMAND_SUBMIT: t = e->t_submit.load(std::memory_order_relaxed); break;
    case UR_PROFILING_INFO_COMMAND_START: t = e->t_start.load(std::memory_order_relaxed); break;
    case UR_PROFILING_INFO_COMMAND_END:
    case UR_PROFILING_INFO_COMMAND_COMPLETE:
      if (e->terminal()) t = e->t_end.load(std::memory_order_relaxed);
      break;
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
    return t ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  }
  static ur_result_t wait(Event *e) {
    return graph::wait(*e) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS;
  }
  // The command of a released event still runs; the scheduler keeps its node alive.
  // While callbacks of the event are due or running the handle stays registered (they
  // may query it); the last of them unregisters it (task_graph.cpp, callbacks_done).
  static ur_result_t release(Event *e) {
    bool last = false;
    if (!e->release_user(last)) return UR_RESULT_ERROR_INVALID_EVENT; // one release too many
    if (!last) return UR_RESULT_SUCCESS;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      if (!e->callbacks.empty() || e->callbacks_running > 0) {
        e->unregister_after_callbacks = true;
        return UR_RESULT_SUCCESS;
      }
    }
    graph::unregister(*e);
    return UR_RESULT_SUCCESS;
  }
  // The native handle is the event handle itself (native_handles.cpp, "Ownership").
  static ur_result_t native_handle(Event *e, ur_native_handle_t &native) {
    native = reinterpret_cast<ur_native_handle_t>(e);
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t from_native(Context *ctx, ur_native_handle_t native, const ur_event_native_properties_t *props,
                                 ur_event_handle_t *out) {
    if (!native) return null_native_event(ctx, out);
    Event *e = lookup<Event>(reinterpret_cast<ur_event_handle_t>(native));
    if (!e) return UR_RESULT_ERROR_INVALID_EVENT;
    if (e->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
    if (!props || !props->isNativeHandleOwned) e->retain();
    *out = to_handle(e);
    return UR_RESULT_SUCCESS;
  }
  static void add_callback(Event *e, ur_execution_info_t when, ur_event_callback_t fn, void *user) {
    graph::add_callback(*e, when, fn, user);
  }
  // A node with no command, work or dependency: the graph completes it at once, so a
  // command that waits for it finds it finished (add_dependency).
  static ur_result_t null_native_event(Context *ctx, ur_event_handle_t *out) {
    auto *e = new Event(ctx, nullptr, UR_COMMAND_EVENTS_WAIT, false);
    try {
      registry().add(e, handle_kind::event);
    } catch (...) {
      Event::destroy(e);
      throw;
    }
    e->ref_count.store(1, std::memory_order_relaxed); // the user's reference...
    e->hold();                                        // ...keeps the memory too
    graph::submit(*e);                                // drops the scheduler's
    *out = to_handle(e);
    return UR_RESULT_SUCCESS;
  }
};

} // namespace

void install_event_entry_points(ur_dditable_t &t) { ordo::ur_common::event_entry_points<event_hooks>::install(t); }

} // namespace ordo::native_cpu
