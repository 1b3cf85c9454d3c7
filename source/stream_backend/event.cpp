// SPDX-License-Identifier: Apache-2.0
// Events: a recycled driver event recorded after the command (and one before it on a
// profiling queue), status, waits, profiling and completion callbacks.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>

#include "backend.hpp"
#include "ur_common/event.hpp"
#include "ordo/info.hpp"
#include "ur_common/callbacks.hpp"

namespace ordo::stream_backend {

ur_result_t event_create(Queue *q, ur_command_t type, bool timed, Event **out, bool deferred) {
  void *spare = q->spare_events.take();
  auto *ev = spare ? new (spare) Event() : new Event();
  ev->queue = q;
  ev->ctx = q->ctx;
  ev->dev = q->dev;
  ev->command = type;
  ev->timed = timed;
  ev->queued_ns = timed ? host_now_ns() : 0;
  ev->deferred = deferred;
  if (!deferred) {
    status r = q->dev->events.get(timed, &ev->done);
    if (!r && timed) r = q->dev->events.get(true, &ev->start);
    if (r) {
      if (ev->done) q->dev->events.put(ev->done, timed);
      delete ev;
      return to_ur(r);
    }
  }
  queue_hold(q);
  *out = ev;
  return UR_RESULT_SUCCESS;
}

void event_release_internal(Event *ev) {
  // Written only while false (a free command's event, released once by its maker); a
  // command-less free's event is made internal, so its several holders never write.
  if (!ev->internal) ev->internal = true;
  if (ordo::release_reference(ev) == ordo::released::last_holder) event_destroy(ev);
}

namespace {
// Entries in every device's `exported` map, so that a mark's last drop looks there only
// when something was exported (counted under the map's lock).
std::atomic<size_t> exported_entries{0};
} // namespace

void mark_drop(Mark *m) {
  if (m->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // A deferred event's native handle is its mark's driver event, which other deferred
  // events of the stream may share and export too: its entry goes with the mark (the
  // driver event is nobody's native handle any more), not with the first such event.
  if (exported_entries.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(m->dev->exported_mutex);
    exported_entries.fetch_sub(m->dev->exported.erase(m->ev), std::memory_order_relaxed);
  }
  m->dev->events.put(m->ev, false);
  delete m;
}

namespace {

// The driver event of a deferred event's command, under its stream's mark lock: the
// stream's newest mark when it covers the command, else one recorded now (after the
// command in stream order, so it covers every deferred command numbered so far).
// `fresh`: one of its own, recorded now, not the stream's (a native handle that goes
// out). Null in *out when the command is known complete (and not `fresh`).
status take_mark(Event *e, bool fresh, Mark **out) {
  *out = nullptr;
  Lane &l = e->lane_ref();
  std::lock_guard<std::mutex> lock(l.mark_mutex);
  if (!fresh && l.completed.load(std::memory_order_acquire) >= e->seq) return status{};
  if (!fresh && l.mark && l.mark->seq >= e->seq) {
    l.mark->refs.fetch_add(1, std::memory_order_relaxed);
    *out = l.mark;
    return status{};
  }
  CurrentFor current(e->dev);
  if (!current.ok()) return e->dev->context_error ? e->dev->context_error : status{err::invalid_context, 0};
  event_t ev = nullptr;
  if (status r = e->dev->events.get(false, &ev)) return r;
  // Read before the record: every command numbered up to here is already in the stream.
  const uint64_t covers = l.issued.load(std::memory_order_acquire);
  // A released queue's streams are gone and its commands complete: an event never
  // recorded stands for them (it reads as complete).
  if (l.gone) {
    e->dev->events.put(ev, false);
    if (status r = drv::event_create(&ev, false)) return r;
  } else if (status r = drv::event_record(ev, l.stream)) {
    e->dev->events.put(ev, false);
    return r;
  }
  auto *m = new Mark();
  m->ev = ev;
  m->seq = covers;
  m->dev = e->dev;
  if (!fresh && !l.gone) {
    m->refs.store(2, std::memory_order_relaxed); // the stream's and the event's
    if (l.mark) mark_drop(l.mark);
    l.mark = m;
  }
  *out = m;
  return status{};
}

// Gives `m` (one reference) to `e` unless another thread gave it one first.
Mark *adopt_mark(Event *e, Mark *m) {
  Mark *expected = nullptr;
  if (e->mark.compare_exchange_strong(expected, m, std::memory_order_acq_rel)) return m;
  mark_drop(m);
  return expected;
}

} // namespace

status ensure_recorded(Event *e) {
  if (!e->late) return status{};
  Lane &l = e->lane_ref();
  if (l.unrecorded.load(std::memory_order_acquire) != e) return status{};
  return record_pending(l, e->dev);
}

status wait_event_of(Event *e, event_t *out) {
  *out = e->done;
  if (!e->deferred) return ensure_recorded(e);
  *out = nullptr;
  Lane &l = e->lane_ref();
  if (l.completed.load(std::memory_order_acquire) >= e->seq) return status{};
  Mark *m = e->mark.load(std::memory_order_acquire);
  if (!m) {
    if (status r = take_mark(e, false, &m)) return r;
    if (!m) return status{}; // complete meanwhile
    m = adopt_mark(e, m);
  }
  *out = m->ev;
  return status{};
}

status poll_event(Event *e, bool *done) {
  *done = true;
  if (!e->deferred) {
    if (!e->done) return status{};
    if (status r = ensure_recorded(e)) return r;
    CurrentFor current(e->dev);
    status r = drv::event_query(e->done);
    if (r.kind == err::not_ready) {
      *done = false;
      return status{};
    }
    if (!r) note_complete(e);
    return r;
  }
  Lane &l = e->lane_ref();
  if (l.completed.load(std::memory_order_acquire) >= e->seq) return status{};
  Mark *m = e->mark.load(std::memory_order_acquire);
  if (!m) {
    std::unique_lock<std::mutex> lock(l.mark_mutex);
    if (l.completed.load(std::memory_order_acquire) >= e->seq) return status{};
    if (l.mark && l.mark->seq >= e->seq) {
      m = l.mark;
      m->refs.fetch_add(1, std::memory_order_relaxed);
    } else {
      // No driver event covers it yet: an idle stream says it all with no record.
      CurrentFor current(e->dev);
      const uint64_t covers = l.issued.load(std::memory_order_acquire);
      status q = drv::stream_query(l.stream);
      if (!q) {
        lane_complete_to(l, covers);
        return status{};
      }
      if (q.kind != err::not_ready) return q;
      lock.unlock();
      // Busy: record one now, so the next question has an exact answer.
      if (status r = take_mark(e, false, &m)) return r;
      if (!m) return status{};
    }
    m = adopt_mark(e, m);
  }
  CurrentFor current(e->dev);
  status r = drv::event_query(m->ev);
  if (r.kind == err::not_ready) {
    *done = false;
    return status{};
  }
  if (!r) lane_complete_to(l, m->seq);
  return r;
}

void note_complete(Event *e) {
  if (!e->queue || e->queue->lanes.size() <= e->lane) return;
  Mark *m = e->mark.load(std::memory_order_acquire);
  lane_complete_to(e->lane_ref(), m ? m->seq : e->seq);
}

void event_destroy(Event *ev) {
  Mark *mark = ev->mark.load(std::memory_order_acquire);
  if (ev->late) {
    // Nobody can ask about it any more: its put-off record is not needed.
    Lane &l = ev->lane_ref();
    if (l.unrecorded.load(std::memory_order_acquire) == ev) {
      std::lock_guard<std::mutex> lock(l.mark_mutex);
      Event *expected = ev;
      l.unrecorded.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
    }
  }
  if (ev->exported && ev->done) { // a deferred event's entry goes with its mark (mark_drop)
    std::lock_guard<std::mutex> lock(ev->dev->exported_mutex);
    exported_entries.fetch_sub(ev->dev->exported.erase(ev->done), std::memory_order_relaxed);
  }
  if (mark) mark_drop(mark);
  if (ev->pooled) {
    if (ev->done) ev->dev->events.put(ev->done, ev->timed);
    if (ev->start) ev->dev->events.put(ev->start, ev->timed);
  } else if (ev->owns_native && ev->done) {
    ev->dev->make_current();
    drv::event_destroy(ev->done);
  }
  Queue *q = ev->queue;
  Context *ctx = q ? nullptr : ev->ctx;
  if (ev->internal && q) {
    // No handle of it ever went out: its storage serves the queue's next deferred event.
    ev->~Event();
    if (!q->spare_events.put(ev)) ::operator delete(static_cast<void *>(ev));
  } else if (void *reuse = ordo::retire_for_reuse(ev)) {
    // An event retired long ago: its storage serves this queue's next event.
    if (!q || !q->spare_events.put(reuse)) ::operator delete(reuse);
  }
  if (q) queue_drop(q);
  if (ctx) context_drop(ctx);
}

namespace {

// Completion callbacks: ur_common/callbacks.hpp's thread; a status is reached when
// the event says so.
struct callback_hooks {
  using Event = stream_backend::Event;
  static bool reached(Event *e, ur_execution_info_t status) {
    if (!e->has_work() || status == UR_EXECUTION_INFO_SUBMITTED) return true;
    e->dev->make_current();
    if (status == UR_EXECUTION_INFO_RUNNING && e->start && !drv::event_query(e->start)) return true;
    bool done = false;
    stream_backend::status r = poll_event(e, &done);
    return r || done; // an error ends the wait too
  }
  static void release(Event *e) { event_drop(e); }
};

ordo::ur_common::callback_thread<callback_hooks> &callbacks() {
  return ordo::ur_common::callback_thread<callback_hooks>::instance();
}

ur_event_status_t status_of(Event *e) {
  bool done = false;
  if (poll_event(e, &done)) return UR_EVENT_STATUS_ERROR;
  if (done) return UR_EVENT_STATUS_COMPLETE;
  if (e->start && !drv::event_query(e->start)) return UR_EVENT_STATUS_RUNNING;
  return UR_EVENT_STATUS_SUBMITTED;
}

// What ur_common's urEvent* entry points leave to the backend (ur_common/event.hpp).
struct event_hooks {
  using Context = stream_backend::Context;
  using Event = stream_backend::Event;

  static ur_result_t unwrap_event(ur_event_handle_t h, Event *&e) { return ordo::unwrap(h, e); }
  static bool null_native(const Event *e) { return !e->has_work(); } // every command's event has work
  static ur_result_t execution_status(Event *e, ur_event_status_t &status) {
    ORDO_DRV(e->dev->make_current());
    status = status_of(e);
    return UR_RESULT_SUCCESS;
  }
  static bool timed(const Event *e) { return e->timed && e->done; }

  // Device times are the elapsed time from the device's time base (a timed event
  // recorded at a known host time).
  static ur_result_t command_times(Event *e, uint64_t &start_ns, uint64_t &end_ns) {
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
    ORDO_DRV(device_ns(e->start ? e->start : e->done, &start_ns));
    ORDO_DRV(device_ns(e->done, &end_ns));
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t wait(Event *e) {
    event_t ev = nullptr;
    ORDO_DRV(wait_event_of(e, &ev));
    if (!ev) return UR_RESULT_SUCCESS;
    ORDO_DRV(e->dev->make_current());
    ORDO_DRV(drv::event_synchronize(ev));
    note_complete(e); // and every deferred command of its stream the wait covered
    return UR_RESULT_SUCCESS;
  }
  static void destroy(Event *e) { event_destroy(e); }

  static ur_result_t native_handle(Event *e, ur_native_handle_t &out) {
    ORDO_DRV(ensure_recorded(e));
    event_t native = e->done;
    if (e->deferred) {
      // A driver event of its own, recorded now after the command (or, for a released
      // queue, one never recorded: complete), so it can be exported like any other.
      Mark *m = e->mark.load(std::memory_order_acquire);
      if (!m) {
        ORDO_DRV(take_mark(e, true, &m));
        m = adopt_mark(e, m);
      }
      native = m->ev;
    }
    if (e->queue && native && e->pooled) {
      // `exported` is read and written under the lock: several threads may ask at once.
      std::lock_guard<std::mutex> lock(e->dev->exported_mutex);
      if (!e->exported) {
        if (e->dev->exported.insert_or_assign(native, Device::Exported{e->queue, e->lane}).second)
          exported_entries.fetch_add(1, std::memory_order_relaxed);
        e->exported = true;
      }
    }
    out = reinterpret_cast<ur_native_handle_t>(native);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t adopt_native(Event *e, Context *ctx, ur_native_handle_t hNativeEvent,
                                  const ur_event_native_properties_t *pProperties) {
    e->dev = ctx->devices[0];
    e->done = reinterpret_cast<event_t>(hNativeEvent);
    e->owns_native = pProperties && pProperties->isNativeHandleOwned;
    // A handle this adapter gave out names the queue and stream its command ran on.
    // 0 names nothing: no driver event, so no work (has_work), complete.
    for (size_t i = 0; e->done && i < ctx->devices.size(); ++i) {
      Device *d = ctx->devices[i];
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
    return UR_RESULT_SUCCESS;
  }

  static void add_callback(Event *e, ur_execution_info_t execStatus, ur_event_callback_t pfnNotify, void *pUserData) {
    callbacks().add({e, execStatus, pfnNotify, pUserData});
  }
};

} // namespace

void install_event_entry_points(ur_dditable_t &t) { ordo::ur_common::event_entry_points<event_hooks>::install(t); }

} // namespace ordo::stream_backend
