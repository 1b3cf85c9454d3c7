// SPDX-License-Identifier: Apache-2.0
// Graph record and replay (urGraph*Exp, urQueue*Graph*Exp, urEnqueueGraphExp) over the
// command-buffer recorder, for every adapter (docs/command-buffers.md, "Graph capture").
//
// install_graph_capture() wraps the adapter's enqueue entry points in its own table: a
// command for a queue that captures is appended to the graph's command buffer instead
// of running, after the sync points its queue order and wait list name. Commands the
// recorder cannot hold answer UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED. An event asked
// for during capture is a capture event: a node of the graph that later captured
// commands may wait for, known only to this file (the event entry points are wrapped
// too). While nothing captures and no capture event lives, each wrapper costs one
// atomic load before the adapter's own entry point.
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ordo/guarded.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "bound_events.hpp"
#include "records.hpp"

namespace ordo::command_buffer {

namespace {

using SyncPoint = ur_exp_command_buffer_sync_point_t;

ur_dditable_t g_orig; // the adapter's entry points as they were before the wrapping
std::atomic<bool> g_installed{false};

using ordo::guarded;

struct Graph : ordo::object {
  Graph(ur_context_handle_t c, uint64_t i) : object(handle_kind::graph), context(c), id(i) {}
  const ur_context_handle_t context;
  const uint64_t id;                           // process-unique, increasing
  ur_exp_command_buffer_handle_t cb = nullptr; // made at the first capture, for that queue's device
  ur_device_handle_t device = nullptr;
  uint32_t capturing = 0; // queues capturing into it now
  size_t recorded = 0;    // commands captured into it (it gets none any other way)
  bool instantiated = false;
  bool user_owned = false; // urGraphCreateExp or urQueueEndGraphCaptureExp gave it out
  std::vector<std::pair<ur_exp_graph_destruction_callback_t, void *>> callbacks;
};
ORDO_HANDLE_CHECK(Graph);

struct ExecGraph : ordo::object {
  explicit ExecGraph(ur_exp_command_buffer_handle_t c) : object(handle_kind::exec_graph), cb(c) {}
  const ur_exp_command_buffer_handle_t cb; // retained
};
ORDO_HANDLE_CHECK(ExecGraph);

// An event of a captured command: the graph node, not something that runs.
struct CaptureEvent : ordo::object {
  CaptureEvent() : object(handle_kind::capture_event) {}
  uint64_t graph_id = 0;
  SyncPoint point = 0;
  ur_queue_handle_t queue = nullptr;
  ur_context_handle_t context = nullptr;
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
};
ORDO_HANDLE_CHECK(CaptureEvent);

// A queue that captures, and the order its commands take in the graph.
struct Capture {
  Graph *graph = nullptr;
  bool in_order = true;
  bool has_last = false; // in order: the newest captured command
  SyncPoint last = 0;
  bool has_barrier = false; // out of order: the newest barrier, and what came after it
  SyncPoint barrier = 0;
  std::vector<SyncPoint> since_barrier;
};

// Everything graph capture knows (capture is not a hot path). `mu` guards graphs and
// captures and is held while a capture appends to its recording (a recording's lock
// after `mu`). `capturing_mu` guards only the set of capturing queues: a replay, which
// holds its recording's lock, asks that set and never takes `mu`. `events_mu` guards
// the capture events, so that releasing an event never waits for `mu`. Order: mu, then a
// recording's lock or events_mu or capturing_mu; the last two take nothing after them.
struct State {
  std::mutex mu;
  std::unordered_map<const void *, std::unique_ptr<Graph>> graphs;
  std::unordered_map<const void *, std::unique_ptr<ExecGraph>> execs;
  std::unordered_map<ur_queue_handle_t, Capture> captures;
  uint64_t next_id = 1;
  std::mutex capturing_mu;
  std::unordered_set<ur_queue_handle_t> capturing; // the keys of `captures`
  std::mutex events_mu;
  std::unordered_map<const void *, std::unique_ptr<CaptureEvent>> events;
};
bool is_capturing(State &s, ur_queue_handle_t q) {
  std::lock_guard<std::mutex> lock(s.capturing_mu);
  return s.capturing.count(q) != 0;
}
void set_capturing(State &s, ur_queue_handle_t q, bool on) { // under mu
  std::lock_guard<std::mutex> lock(s.capturing_mu);
  if (on)
    s.capturing.insert(q);
  else
    s.capturing.erase(q);
}
State &state() {
  static State *s = new State; // never destroyed: handles may outlive static destruction
  return *s;
}
// Capturing queues, live capture events and live bound events: zero means every
// wrapper passes straight through.
std::atomic<uint32_t> g_active{0};
bool active() { return g_active.load(std::memory_order_acquire) != 0; }

Graph *graph_of(State &s, const void *h) {
  auto it = s.graphs.find(h);
  return it == s.graphs.end() ? nullptr : it->second.get();
}
// Under events_mu.
CaptureEvent *capture_event(State &s, ur_event_handle_t e) {
  auto it = s.events.find(e);
  return it == s.events.end() ? nullptr : it->second.get();
}
bool names_capture_event(State &s, uint32_t n, const ur_event_handle_t *w) {
  std::lock_guard<std::mutex> lock(s.events_mu);
  for (uint32_t i = 0; w && i < n; ++i)
    if (capture_event(s, w[i])) return true;
  return false;
}

using Callbacks = std::vector<std::pair<ur_exp_graph_destruction_callback_t, void *>>;

// Forgets the graph; the caller runs the callbacks it returns once the lock is gone.
Callbacks destroy_graph(State &s, Graph *g) {
  Callbacks callbacks = std::move(g->callbacks);
  if (g->cb) table().CommandBufferExp.pfnReleaseExp(g->cb);
  table().Context.pfnRelease(g->context);
  s.graphs.erase(g);
  return callbacks;
}
void run(const Callbacks &callbacks) {
  for (auto &cb : callbacks) cb.first(cb.second);
}

// The queue's context, device and whether it keeps order; false for a bad queue.
bool queue_facts(ur_queue_handle_t q, ur_context_handle_t &ctx, ur_device_handle_t &dev, bool &in_order) {
  ur_queue_flags_t flags = 0;
  if (table().Queue.pfnGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof ctx, &ctx, nullptr) != UR_RESULT_SUCCESS ||
      table().Queue.pfnGetInfo(q, UR_QUEUE_INFO_DEVICE, sizeof dev, &dev, nullptr) != UR_RESULT_SUCCESS ||
      table().Queue.pfnGetInfo(q, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr) != UR_RESULT_SUCCESS)
    return false;
  in_order = !(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  return true;
}

// Events released when the last copy of a recorded command goes: the adapter's own and
// bound events (never capture events). A bound event is held as itself, not as what it
// stands for at capture, so that each replay waits for its signal current then. The
// wrapped entry points serve both; they take events_mu and the bound-event registry's
// lock, never `mu`, so these may run under `mu`.
std::shared_ptr<std::vector<ur_event_handle_t>> hold_events(std::vector<ur_event_handle_t> evs) {
  auto held = std::shared_ptr<std::vector<ur_event_handle_t>>(new std::vector<ur_event_handle_t>(std::move(evs)),
                                                              [](std::vector<ur_event_handle_t> *v) {
                                                                for (ur_event_handle_t e : *v)
                                                                  table().Event.pfnRelease(e);
                                                                delete v;
                                                              });
  for (ur_event_handle_t e : *held) table().Event.pfnRetain(e);
  return held;
}

// A replayed wait: for the run's own wait list and the events the command held. It is
// enqueued through the wrapped entry point, which replaces each bound event by what it
// stands for at that replay.
Replay wait_replay(std::shared_ptr<std::vector<ur_event_handle_t>> held) {
  return [held](ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
    std::vector<ur_event_handle_t> all(w, w + n);
    if (held) all.insert(all.end(), held->begin(), held->end());
    return table().Enqueue.pfnEventsWait(q, static_cast<uint32_t>(all.size()), all.empty() ? nullptr : all.data(), out);
  };
}

// The sync points a command captured on `c` follows: its queue's order, the capture
// events of its wait list, and, for real events in it, a recorded wait for them.
ur_result_t dependencies(Capture &c, uint32_t n, const ur_event_handle_t *w, bool whole_queue,
                         std::vector<SyncPoint> &after, bool &waits_recorded, SyncPoint &wait_point) {
  State &s = state();
  std::vector<ur_event_handle_t> real;
  {
    std::lock_guard<std::mutex> lock(s.events_mu);
    for (uint32_t i = 0; i < n; ++i) {
      if (!w[i]) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
      if (CaptureEvent *e = capture_event(s, w[i])) {
        if (e->graph_id != c.graph->id) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST; // another graph's node
        after.push_back(e->point);
      } else {
        real.push_back(w[i]);
      }
    }
  }
  if (!real.empty()) {
    SyncPoint p = 0;
    if (ur_result_t r = append_replay(c.graph->cb, UR_COMMAND_EVENTS_WAIT, {}, wait_replay(hold_events(real)), &p))
      return r;
    after.push_back(p);
    waits_recorded = true;
    wait_point = p;
  }
  if (c.in_order) {
    if (c.has_last) after.push_back(c.last);
  } else {
    if (c.has_barrier) after.push_back(c.barrier);
    if (whole_queue) after.insert(after.end(), c.since_barrier.begin(), c.since_barrier.end());
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t make_capture_event(Capture &c, ur_queue_handle_t q, ur_command_t type, SyncPoint p,
                               ur_event_handle_t *out) {
  auto e = std::make_unique<CaptureEvent>();
  e->graph_id = c.graph->id;
  e->point = p;
  e->queue = q;
  e->context = c.graph->context;
  e->type = type;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.events_mu);
  s.events.emplace(e.get(), nullptr); // may throw before anything changes
  CaptureEvent *raw = e.release();
  s.events[raw].reset(raw);
  g_active.fetch_add(1, std::memory_order_acq_rel);
  *out = reinterpret_cast<ur_event_handle_t>(raw);
  return UR_RESULT_SUCCESS;
}

// What a captured command does to its queue's order.
enum class Kind { command, wait_all, barrier };

// The common path of every wrapped enqueue. `run` is the adapter's own call; `record`
// appends the command after the given sync points (or refuses it). A command that runs
// now has the bound events of its wait list replaced (in the caller's `n` and `w`, which
// `run` reads) by what they stand for now; a captured one keeps them, to be resolved at
// each replay (docs/command-buffers.md, "Graph capture").
template <class Record, class Run>
ur_result_t command(ur_queue_handle_t q, ur_command_t type, Kind kind, uint32_t &n, const ur_event_handle_t *&w,
                    ur_event_handle_t *out, Record &&record, Run &&run) {
  if (!active()) return run();
  State &s = state();
  auto run_now = [&]() -> ur_result_t {
    SubstitutedWaits waits(n, w);
    n = waits.n;
    w = waits.w;
    if (names_capture_event(s, n, w)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST; // nodes never run
    return run();
  };
  if (!is_capturing(s, q)) return run_now();
  std::unique_lock<std::mutex> lock(s.mu);
  auto it = s.captures.find(q);
  if (it == s.captures.end()) { // the capture ended meanwhile
    lock.unlock();
    return run_now();
  }
  if ((n > 0) != (w != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  Capture &c = it->second;
  return guarded([&]() -> ur_result_t {
    std::vector<SyncPoint> after;
    bool waits_recorded = false;
    SyncPoint wait_point = 0;
    if (ur_result_t r = dependencies(c, n, w, kind != Kind::command && n == 0, after, waits_recorded, wait_point))
      return r;
    SyncPoint p = 0;
    if (ur_result_t r = record(c.graph->cb, after, &p)) {
      // Refused: the wait recorded for its real events goes too (it is the newest).
      if (waits_recorded) take_back(c.graph->cb, wait_point);
      return r;
    }
    c.graph->recorded = size_t(p) + 1; // the newest sync point (a recorded wait may come before it)
    if (c.in_order) {
      c.has_last = true;
      c.last = p;
    } else if (kind == Kind::barrier) {
      c.has_barrier = true;
      c.barrier = p;
      c.since_barrier.clear();
    } else {
      c.since_barrier.push_back(p);
    }
    return out ? make_capture_event(c, q, type, p, out) : UR_RESULT_SUCCESS;
  });
}

ur_result_t uncapturable(ur_exp_command_buffer_handle_t, const std::vector<SyncPoint> &, SyncPoint *) {
  return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED;
}

uint32_t count(const std::vector<SyncPoint> &v) { return static_cast<uint32_t>(v.size()); }
const SyncPoint *data(const std::vector<SyncPoint> &v) { return v.empty() ? nullptr : v.data(); }

// ---- wrapped enqueue entry points ----

#define ORDO_APPEND(fn, ...)                                                                                           \
  table().CommandBufferExp.fn(cb, __VA_ARGS__, count(after), data(after), 0, nullptr, p, nullptr, nullptr)

ur_result_t UR_APICALL eventsWait(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_EVENTS_WAIT, Kind::wait_all, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return append_replay(cb, UR_COMMAND_EVENTS_WAIT, after, wait_replay(nullptr), p);
      },
      [&] { return g_orig.Enqueue.pfnEventsWait(q, n, w, out); });
}

ur_result_t barrier_in_capture(ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
  return append_replay(cb, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, after, wait_replay(nullptr), p);
}

ur_result_t UR_APICALL barrier(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, Kind::barrier, n, w, out, barrier_in_capture,
                 [&] { return g_orig.Enqueue.pfnEventsWaitWithBarrier(q, n, w, out); });
}

// A reusable event in *out (urEventCreateExp) is signalled by this barrier: it is bound
// to the barrier's own event.
ur_result_t UR_APICALL barrierExt(ur_queue_handle_t q, const ur_exp_enqueue_ext_properties_t *props, uint32_t n,
                                  const ur_event_handle_t *w, ur_event_handle_t *out) {
  if (!active() || !out || !is_reusable(*out))
    return command(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, Kind::barrier, n, w, out, barrier_in_capture,
                   [&] { return g_orig.Enqueue.pfnEventsWaitWithBarrierExt(q, props, n, w, out); });
  const ur_event_handle_t target = *out;
  ur_event_handle_t real = nullptr, *mine = &real;
  ur_result_t r = command(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, Kind::barrier, n, w, mine, uncapturable,
                          [&] { return g_orig.Enqueue.pfnEventsWaitWithBarrierExt(q, props, n, w, mine); });
  if (r == UR_RESULT_SUCCESS && real) {
    bind(target, real);
    unwrapped().Event.pfnRelease(real);
  }
  return r;
}

ur_result_t UR_APICALL usmMemcpy(ur_queue_handle_t q, bool blocking, void *dst, const void *src, size_t size,
                                 uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_USM_MEMCPY, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        if (blocking) return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED; // it would never return
        return ORDO_APPEND(pfnAppendUSMMemcpyExp, dst, src, size);
      },
      [&] { return g_orig.Enqueue.pfnUSMMemcpy(q, blocking, dst, src, size, n, w, out); });
}

ur_result_t UR_APICALL usmFill(ur_queue_handle_t q, void *ptr, size_t patternSize, const void *pattern, size_t size,
                               uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_USM_FILL, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return ORDO_APPEND(pfnAppendUSMFillExp, ptr, pattern, patternSize, size);
      },
      [&] { return g_orig.Enqueue.pfnUSMFill(q, ptr, patternSize, pattern, size, n, w, out); });
}

ur_result_t UR_APICALL usmPrefetch(ur_queue_handle_t q, const void *ptr, size_t size, ur_usm_migration_flags_t flags,
                                   uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_USM_PREFETCH, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return ORDO_APPEND(pfnAppendUSMPrefetchExp, ptr, size, flags);
      },
      [&] { return g_orig.Enqueue.pfnUSMPrefetch(q, ptr, size, flags, n, w, out); });
}

ur_result_t UR_APICALL usmAdvise(ur_queue_handle_t q, const void *ptr, size_t size, ur_usm_advice_flags_t advice,
                                 ur_event_handle_t *out) {
  uint32_t n = 0;
  const ur_event_handle_t *w = nullptr;
  return command(
      q, UR_COMMAND_USM_ADVISE, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return ORDO_APPEND(pfnAppendUSMAdviseExp, ptr, size, advice);
      },
      [&] { return g_orig.Enqueue.pfnUSMAdvise(q, ptr, size, advice, out); });
}

ur_result_t UR_APICALL bufferRead(ur_queue_handle_t q, ur_mem_handle_t b, bool blocking, size_t offset, size_t size,
                                  void *dst, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_READ, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        if (blocking) return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED;
        return ORDO_APPEND(pfnAppendMemBufferReadExp, b, offset, size, dst);
      },
      [&] { return g_orig.Enqueue.pfnMemBufferRead(q, b, blocking, offset, size, dst, n, w, out); });
}

ur_result_t UR_APICALL bufferWrite(ur_queue_handle_t q, ur_mem_handle_t b, bool blocking, size_t offset, size_t size,
                                   const void *src, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_WRITE, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        if (blocking) return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED;
        return ORDO_APPEND(pfnAppendMemBufferWriteExp, b, offset, size, src);
      },
      [&] { return g_orig.Enqueue.pfnMemBufferWrite(q, b, blocking, offset, size, src, n, w, out); });
}

ur_result_t UR_APICALL bufferCopy(ur_queue_handle_t q, ur_mem_handle_t src, ur_mem_handle_t dst, size_t srcOffset,
                                  size_t dstOffset, size_t size, uint32_t n, const ur_event_handle_t *w,
                                  ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_COPY, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return ORDO_APPEND(pfnAppendMemBufferCopyExp, src, dst, srcOffset, dstOffset, size);
      },
      [&] { return g_orig.Enqueue.pfnMemBufferCopy(q, src, dst, srcOffset, dstOffset, size, n, w, out); });
}

ur_result_t UR_APICALL bufferFill(ur_queue_handle_t q, ur_mem_handle_t b, const void *pattern, size_t patternSize,
                                  size_t offset, size_t size, uint32_t n, const ur_event_handle_t *w,
                                  ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_FILL, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return ORDO_APPEND(pfnAppendMemBufferFillExp, b, pattern, patternSize, offset, size);
      },
      [&] { return g_orig.Enqueue.pfnMemBufferFill(q, b, pattern, patternSize, offset, size, n, w, out); });
}

ur_result_t UR_APICALL bufferReadRect(ur_queue_handle_t q, ur_mem_handle_t b, bool blocking, ur_rect_offset_t bo,
                                      ur_rect_offset_t ho, ur_rect_region_t region, size_t brp, size_t bsp, size_t hrp,
                                      size_t hsp, void *dst, uint32_t n, const ur_event_handle_t *w,
                                      ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_READ_RECT, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        if (blocking) return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED;
        return ORDO_APPEND(pfnAppendMemBufferReadRectExp, b, bo, ho, region, brp, bsp, hrp, hsp, dst);
      },
      [&] {
        return g_orig.Enqueue.pfnMemBufferReadRect(q, b, blocking, bo, ho, region, brp, bsp, hrp, hsp, dst, n, w, out);
      });
}

ur_result_t UR_APICALL bufferWriteRect(ur_queue_handle_t q, ur_mem_handle_t b, bool blocking, ur_rect_offset_t bo,
                                       ur_rect_offset_t ho, ur_rect_region_t region, size_t brp, size_t bsp, size_t hrp,
                                       size_t hsp, void *src, uint32_t n, const ur_event_handle_t *w,
                                       ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_WRITE_RECT, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        if (blocking) return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED;
        return ORDO_APPEND(pfnAppendMemBufferWriteRectExp, b, bo, ho, region, brp, bsp, hrp, hsp, src);
      },
      [&] {
        return g_orig.Enqueue.pfnMemBufferWriteRect(q, b, blocking, bo, ho, region, brp, bsp, hrp, hsp, src, n, w, out);
      });
}

ur_result_t UR_APICALL bufferCopyRect(ur_queue_handle_t q, ur_mem_handle_t src, ur_mem_handle_t dst,
                                      ur_rect_offset_t so, ur_rect_offset_t d, ur_rect_region_t region, size_t srp,
                                      size_t ssp, size_t drp, size_t dsp, uint32_t n, const ur_event_handle_t *w,
                                      ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_MEM_BUFFER_COPY_RECT, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        return ORDO_APPEND(pfnAppendMemBufferCopyRectExp, src, dst, so, d, region, srp, ssp, drp, dsp);
      },
      [&] { return g_orig.Enqueue.pfnMemBufferCopyRect(q, src, dst, so, d, region, srp, ssp, drp, dsp, n, w, out); });
}

ur_result_t UR_APICALL kernelLaunch(ur_queue_handle_t q, ur_kernel_handle_t k, uint32_t dims, const size_t *offset,
                                    const size_t *global, const size_t *local, uint32_t numArgs,
                                    const ur_exp_kernel_arg_properties_t *args,
                                    const ur_kernel_launch_ext_properties_t *props, uint32_t n,
                                    const ur_event_handle_t *w, ur_event_handle_t *out) {
  // No capture anywhere (the rule): straight on, before command() builds its closures.
  if (!active())
    return g_orig.EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, dims, offset, global, local, numArgs, args, props, n, w,
                                                        out);
  return command(
      q, UR_COMMAND_KERNEL_LAUNCH, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) {
        if (props && props->flags) return UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED; // the recorder keeps no flags
        return ORDO_APPEND(pfnAppendKernelLaunchWithArgsExp, k, dims, offset, global, local, numArgs, args, 0, nullptr);
      },
      [&] {
        return g_orig.EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, dims, offset, global, local, numArgs, args, props, n,
                                                            w, out);
      });
}

#undef ORDO_APPEND

// A command buffer enqueued while capturing is replayed whole as one node.
ur_result_t UR_APICALL commandBuffer(ur_queue_handle_t q, ur_exp_command_buffer_handle_t h, uint32_t n,
                                     const ur_event_handle_t *w, ur_event_handle_t *out) {
  return command(
      q, UR_COMMAND_ENQUEUE_COMMAND_BUFFER_EXP, Kind::command, n, w, out,
      [&](ur_exp_command_buffer_handle_t cb, const std::vector<SyncPoint> &after, SyncPoint *p) -> ur_result_t {
        if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (table().CommandBufferExp.pfnRetainExp(h) != UR_RESULT_SUCCESS)
          return UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_EXP;
        std::shared_ptr<void> held(
            h, [](void *x) { table().CommandBufferExp.pfnReleaseExp(static_cast<ur_exp_command_buffer_handle_t>(x)); });
        return append_replay(
            cb, UR_COMMAND_ENQUEUE_COMMAND_BUFFER_EXP, after,
            [held](ur_queue_handle_t rq, uint32_t rn, const ur_event_handle_t *rw, ur_event_handle_t *rout) {
              return table().EnqueueExp.pfnCommandBufferExp(rq, static_cast<ur_exp_command_buffer_handle_t>(held.get()),
                                                            rn, rw, rout);
            },
            p);
      },
      [&] { return g_orig.EnqueueExp.pfnCommandBufferExp(q, h, n, w, out); });
}

// ---- enqueues a graph cannot hold ----
// Each passes through unless its queue captures (or its wait list names a capture event).

#define ORDO_REFUSE_IN_CAPTURE(table_, slot, type, params, args, n, w, out)                                            \
  ur_result_t UR_APICALL refuse_##slot params {                                                                        \
    if (!active()) return g_orig.table_.pfn##slot args;                                                                \
    return command(q, type, Kind::command, n, w, out, uncapturable, [&] { return g_orig.table_.pfn##slot args; });     \
  }

ORDO_REFUSE_IN_CAPTURE(Enqueue, MemImageRead, UR_COMMAND_MEM_IMAGE_READ,
                       (ur_queue_handle_t q, ur_mem_handle_t i, bool b, ur_rect_offset_t o, ur_rect_region_t r,
                        size_t rp, size_t sp, void *p, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, i, b, o, r, rp, sp, p, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, MemImageWrite, UR_COMMAND_MEM_IMAGE_WRITE,
                       (ur_queue_handle_t q, ur_mem_handle_t i, bool b, ur_rect_offset_t o, ur_rect_region_t r,
                        size_t rp, size_t sp, void *p, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, i, b, o, r, rp, sp, p, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, MemImageCopy, UR_COMMAND_MEM_IMAGE_COPY,
                       (ur_queue_handle_t q, ur_mem_handle_t s, ur_mem_handle_t d, ur_rect_offset_t so,
                        ur_rect_offset_t dso, ur_rect_region_t r, uint32_t n, const ur_event_handle_t *w,
                        ur_event_handle_t *e),
                       (q, s, d, so, dso, r, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, MemBufferMap, UR_COMMAND_MEM_BUFFER_MAP,
                       (ur_queue_handle_t q, ur_mem_handle_t b, bool bl, ur_map_flags_t f, size_t o, size_t s,
                        uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e, void **p),
                       (q, b, bl, f, o, s, n, w, e, p), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, MemUnmap, UR_COMMAND_MEM_UNMAP,
                       (ur_queue_handle_t q, ur_mem_handle_t m, void *p, uint32_t n, const ur_event_handle_t *w,
                        ur_event_handle_t *e),
                       (q, m, p, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, USMFill2D, UR_COMMAND_USM_FILL_2D,
                       (ur_queue_handle_t q, void *m, size_t pitch, size_t ps, const void *pat, size_t wd, size_t h,
                        uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, m, pitch, ps, pat, wd, h, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, USMMemcpy2D, UR_COMMAND_USM_MEMCPY_2D,
                       (ur_queue_handle_t q, bool b, void *d, size_t dp, const void *s, size_t sp, size_t wd, size_t h,
                        uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, b, d, dp, s, sp, wd, h, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, DeviceGlobalVariableWrite, UR_COMMAND_DEVICE_GLOBAL_VARIABLE_WRITE,
                       (ur_queue_handle_t q, ur_program_handle_t pr, const char *nm, bool b, size_t c, size_t o,
                        const void *s, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, pr, nm, b, c, o, s, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, DeviceGlobalVariableRead, UR_COMMAND_DEVICE_GLOBAL_VARIABLE_READ,
                       (ur_queue_handle_t q, ur_program_handle_t pr, const char *nm, bool b, size_t c, size_t o,
                        void *d, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, pr, nm, b, c, o, d, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, ReadHostPipe, UR_COMMAND_READ_HOST_PIPE,
                       (ur_queue_handle_t q, ur_program_handle_t pr, const char *nm, bool b, void *p, size_t s,
                        uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, pr, nm, b, p, s, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(Enqueue, WriteHostPipe, UR_COMMAND_WRITE_HOST_PIPE,
                       (ur_queue_handle_t q, ur_program_handle_t pr, const char *nm, bool b, void *p, size_t s,
                        uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, pr, nm, b, p, s, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, USMDeviceAllocExp, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP,
                       (ur_queue_handle_t q, ur_usm_pool_handle_t p, const size_t s,
                        const ur_exp_async_usm_alloc_properties_t *pr, uint32_t n, const ur_event_handle_t *w, void **m,
                        ur_event_handle_t *e),
                       (q, p, s, pr, n, w, m, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, USMSharedAllocExp, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP,
                       (ur_queue_handle_t q, ur_usm_pool_handle_t p, const size_t s,
                        const ur_exp_async_usm_alloc_properties_t *pr, uint32_t n, const ur_event_handle_t *w, void **m,
                        ur_event_handle_t *e),
                       (q, p, s, pr, n, w, m, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, USMHostAllocExp, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP,
                       (ur_queue_handle_t q, ur_usm_pool_handle_t p, const size_t s,
                        const ur_exp_async_usm_alloc_properties_t *pr, uint32_t n, const ur_event_handle_t *w, void **m,
                        ur_event_handle_t *e),
                       (q, p, s, pr, n, w, m, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, USMFreeExp, UR_COMMAND_ENQUEUE_USM_FREE_EXP,
                       (ur_queue_handle_t q, ur_usm_pool_handle_t p, void *m, uint32_t n, const ur_event_handle_t *w,
                        ur_event_handle_t *e),
                       (q, p, m, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, TimestampRecordingExp, UR_COMMAND_TIMESTAMP_RECORDING_EXP,
                       (ur_queue_handle_t q, bool b, uint32_t n, const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, b, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, HostTaskExp, UR_COMMAND_HOST_TASK_EXP,
                       (ur_queue_handle_t q, ur_exp_host_task_function_t f, void *d,
                        const ur_exp_host_task_properties_t *pr, uint32_t n, const ur_event_handle_t *w,
                        ur_event_handle_t *e),
                       (q, f, d, pr, n, w, e), n, w, e)
ORDO_REFUSE_IN_CAPTURE(EnqueueExp, NativeCommandExp, UR_COMMAND_ENQUEUE_NATIVE_EXP,
                       (ur_queue_handle_t q, ur_exp_enqueue_native_command_function_t f, void *d, uint32_t nm,
                        const ur_mem_handle_t *m, const ur_exp_enqueue_native_command_properties_t *pr, uint32_t n,
                        const ur_event_handle_t *w, ur_event_handle_t *e),
                       (q, f, d, nm, m, pr, n, w, e), n, w, e)

#undef ORDO_REFUSE_IN_CAPTURE

// ---- event entry points: capture events are answered here ----

ur_result_t UR_APICALL eventRetain(ur_event_handle_t e) {
  if (active()) {
    State &s = state();
    {
      std::lock_guard<std::mutex> lock(s.events_mu);
      if (CaptureEvent *ce = capture_event(s, e)) {
        ce->retain();
        return UR_RESULT_SUCCESS;
      }
    }
    ur_result_t r = UR_RESULT_SUCCESS;
    if (bound_retain(e, r)) return r;
  }
  return g_orig.Event.pfnRetain(e);
}

ur_result_t UR_APICALL eventRelease(ur_event_handle_t e) {
  if (active()) {
    State &s = state();
    {
      std::lock_guard<std::mutex> lock(s.events_mu);
      if (CaptureEvent *ce = capture_event(s, e)) {
        if (ce->release()) {
          s.events.erase(e);
          g_active.fetch_sub(1, std::memory_order_acq_rel);
        }
        return UR_RESULT_SUCCESS;
      }
    }
    ur_result_t r = UR_RESULT_SUCCESS;
    if (bound_release(e, r)) return r;
  }
  return g_orig.Event.pfnRelease(e);
}

ur_result_t UR_APICALL eventGetInfo(ur_event_handle_t e, ur_event_info_t prop, size_t size, void *value,
                                    size_t *sizeRet) {
  if (active()) {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.events_mu);
    if (CaptureEvent *ce = capture_event(s, e)) {
      if (value && size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
      if (!value && !sizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
      ordo::InfoWriter out(size, value, sizeRet);
      switch (prop) {
      case UR_EVENT_INFO_COMMAND_QUEUE: return out.value(ce->queue);
      case UR_EVENT_INFO_CONTEXT: return out.value(ce->context);
      case UR_EVENT_INFO_COMMAND_TYPE: return out.value(ce->type);
      // A graph node is never submitted as such: each replay has its own commands.
      case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS: return out.value(UR_EVENT_STATUS_QUEUED);
      case UR_EVENT_INFO_REFERENCE_COUNT: return out.value(ce->count());
      default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
      }
    }
  }
  ur_result_t r = UR_RESULT_SUCCESS;
  if (active() && bound_get_info(e, prop, size, value, sizeRet, r)) return r;
  return g_orig.Event.pfnGetInfo(e, prop, size, value, sizeRet);
}

// A capture event never completes: waiting for it, profiling it or watching it is refused.
bool refuse_capture_event(ur_event_handle_t e) {
  if (!active()) return false;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.events_mu);
  return capture_event(s, e) != nullptr;
}

// Bound events wait for what they stand for now (never signalled: nothing).
ur_result_t UR_APICALL eventWait(uint32_t n, const ur_event_handle_t *list) {
  if (!active()) return g_orig.Event.pfnWait(n, list);
  if (names_capture_event(state(), n, list)) return UR_RESULT_ERROR_INVALID_EVENT;
  SubstitutedWaits waits(n, list);
  if (list && n > 0 && waits.n == 0) return UR_RESULT_SUCCESS;
  return g_orig.Event.pfnWait(waits.n, waits.w);
}

ur_result_t UR_APICALL eventGetProfilingInfo(ur_event_handle_t e, ur_profiling_info_t prop, size_t size, void *value,
                                             size_t *sizeRet) {
  if (refuse_capture_event(e)) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  ur_result_t r = UR_RESULT_SUCCESS;
  if (active() && bound_profiling_info(e, prop, size, value, sizeRet, r)) return r;
  return g_orig.Event.pfnGetProfilingInfo(e, prop, size, value, sizeRet);
}

ur_result_t UR_APICALL eventSetCallback(ur_event_handle_t e, ur_execution_info_t status, ur_event_callback_t fn,
                                        void *data) {
  if (refuse_capture_event(e)) return UR_RESULT_ERROR_INVALID_EVENT;
  ur_result_t r = UR_RESULT_SUCCESS;
  if (active() && bound_set_callback(e, status, fn, data, r)) return r;
  return g_orig.Event.pfnSetCallback(e, status, fn, data);
}

ur_result_t UR_APICALL eventGetNativeHandle(ur_event_handle_t e, ur_native_handle_t *out) {
  if (refuse_capture_event(e)) return UR_RESULT_ERROR_INVALID_EVENT;
  ur_result_t r = UR_RESULT_SUCCESS;
  if (active() && bound_native_handle(e, out, r)) return r;
  return g_orig.Event.pfnGetNativeHandle(e, out);
}

// A queue's last release ends its capture; the graph it captured into stays the user's
// (or goes, if the capture made it and nobody was given it).
ur_result_t UR_APICALL queueRelease(ur_queue_handle_t q) {
  Callbacks ended;
  if (active() && q) {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.captures.find(q);
    uint32_t refs = 0;
    if (it != s.captures.end() &&
        table().Queue.pfnGetInfo(q, UR_QUEUE_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr) == UR_RESULT_SUCCESS &&
        refs == 1) {
      Graph *g = it->second.graph;
      --g->capturing;
      s.captures.erase(it);
      set_capturing(s, q, false);
      g_active.fetch_sub(1, std::memory_order_acq_rel);
      if (!g->user_owned && g->capturing == 0) ended = destroy_graph(s, g);
    }
  }
  run(ended);
  return g_orig.Queue.pfnRelease(q);
}

// ---- the graph entry points ----

ur_result_t bad_graph(const void *h) { return h ? UR_RESULT_ERROR_INVALID_GRAPH : UR_RESULT_ERROR_INVALID_NULL_HANDLE; }

ur_result_t new_graph(State &s, ur_context_handle_t ctx, Graph *&out) {
  auto g = std::make_unique<Graph>(ctx, s.next_id);
  s.graphs.emplace(g.get(), nullptr); // may throw before anything changes
  ++s.next_id;
  table().Context.pfnRetain(ctx);
  out = g.get();
  s.graphs[out] = std::move(g);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL graphCreate(ur_context_handle_t ctx, ur_exp_graph_handle_t *phGraph) {
  if (!ctx) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phGraph) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  uint32_t refs = 0;
  if (table().Context.pfnGetInfo(ctx, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr) !=
      UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_CONTEXT;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return guarded([&] {
    Graph *g = nullptr;
    ur_result_t r = new_graph(s, ctx, g);
    if (r == UR_RESULT_SUCCESS) {
      g->user_owned = true;
      *phGraph = reinterpret_cast<ur_exp_graph_handle_t>(g);
    }
    return r;
  });
}

// Starts capture on `q` into `g` (made for it when null).
ur_result_t begin(ur_queue_handle_t q, ur_exp_graph_handle_t hGraph, bool into) {
  if (!q) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (into && !hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  ur_context_handle_t ctx = nullptr;
  ur_device_handle_t dev = nullptr;
  bool in_order = true;
  if (!queue_facts(q, ctx, dev, in_order)) return UR_RESULT_ERROR_INVALID_QUEUE;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return guarded([&]() -> ur_result_t {
    Graph *g = nullptr;
    if (into) {
      g = graph_of(s, hGraph);
      if (!g) return bad_graph(hGraph);
      if (g->context != ctx) return UR_RESULT_ERROR_INVALID_QUEUE;
      if (g->device && g->device != dev) return UR_RESULT_ERROR_INVALID_QUEUE; // one device per graph
      if (g->instantiated || g->recorded) return UR_RESULT_ERROR_INVALID_ARGUMENT;
    }
    if (s.captures.count(q)) return UR_RESULT_ERROR_INVALID_OPERATION; // capturing already
    s.captures.emplace(q, Capture{});                                  // may throw: nothing made yet
    bool made = false;
    auto undo = [&](ur_result_t r) {
      s.captures.erase(q);
      if (made) destroy_graph(s, g); // no callbacks yet
      return r;
    };
    if (!g) {
      if (ur_result_t r = new_graph(s, ctx, g)) return undo(r);
      made = true;
    }
    if (!g->cb) {
      ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
      if (ur_result_t r = table().CommandBufferExp.pfnCreateExp(ctx, dev, &desc, &g->cb)) return undo(r);
      g->device = dev;
    }
    Capture &c = s.captures[q];
    c.graph = g;
    c.in_order = in_order;
    try {
      set_capturing(s, q, true);
    } catch (...) {
      return undo(UR_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    }
    ++g->capturing;
    g_active.fetch_add(1, std::memory_order_acq_rel);
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL queueBeginCapture(ur_queue_handle_t q) { return begin(q, nullptr, false); }
ur_result_t UR_APICALL queueBeginCaptureInto(ur_queue_handle_t q, ur_exp_graph_handle_t g) { return begin(q, g, true); }

ur_result_t UR_APICALL queueEndCapture(ur_queue_handle_t q, ur_exp_graph_handle_t *phGraph) {
  if (!q) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phGraph) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.captures.find(q);
  if (it == s.captures.end()) return UR_RESULT_ERROR_INVALID_OPERATION;
  Graph *g = it->second.graph;
  --g->capturing;
  g->user_owned = true;
  s.captures.erase(it);
  set_capturing(s, q, false);
  g_active.fetch_sub(1, std::memory_order_acq_rel);
  *phGraph = reinterpret_cast<ur_exp_graph_handle_t>(g);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL queueIsCapturing(ur_queue_handle_t q, bool *pResult) {
  if (!q) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pResult) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  uint32_t refs = 0;
  if (table().Queue.pfnGetInfo(q, UR_QUEUE_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_QUEUE;
  // The DPC++ runtime asks before every queue operation: no lock while nothing captures.
  if (!active()) {
    *pResult = false;
    return UR_RESULT_SUCCESS;
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  *pResult = s.captures.count(q) != 0;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL queueGetGraph(ur_queue_handle_t q, ur_exp_graph_handle_t *phGraph) {
  if (!q) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phGraph) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.captures.find(q);
  *phGraph = it == s.captures.end() ? nullptr : reinterpret_cast<ur_exp_graph_handle_t>(it->second.graph);
  return *phGraph ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_OPERATION;
}

ur_result_t UR_APICALL graphInstantiate(ur_exp_graph_handle_t hGraph, ur_exp_executable_graph_handle_t *phExec) {
  if (!hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phExec) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  ur_exp_command_buffer_handle_t cb = nullptr;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    Graph *g = graph_of(s, hGraph);
    if (!g) return bad_graph(hGraph);
    if (g->capturing) return UR_RESULT_ERROR_INVALID_OPERATION; // still being recorded
    if (!g->recorded) return UR_RESULT_ERROR_INVALID_ARGUMENT;  // nothing to run
    cb = g->cb;
    first = !g->instantiated;
    g->instantiated = true;                    // no capture into it from now on
    table().CommandBufferExp.pfnRetainExp(cb); // the executable graph's
  }
  // Finalizing takes the recording's lock, which is never taken under `mu` by a replay.
  ur_result_t r = first ? table().CommandBufferExp.pfnFinalizeExp(cb) : UR_RESULT_SUCCESS;
  if (r == UR_RESULT_SUCCESS)
    r = guarded([&] {
      auto e = std::make_unique<ExecGraph>(cb);
      std::lock_guard<std::mutex> lock(s.mu);
      s.execs.emplace(e.get(), nullptr);
      ExecGraph *raw = e.get();
      s.execs[raw] = std::move(e);
      *phExec = reinterpret_cast<ur_exp_executable_graph_handle_t>(raw);
      return UR_RESULT_SUCCESS;
    });
  if (r != UR_RESULT_SUCCESS) table().CommandBufferExp.pfnReleaseExp(cb);
  return r;
}

ur_result_t UR_APICALL graphDestroy(ur_exp_graph_handle_t hGraph) {
  if (!hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  State &s = state();
  Callbacks ended;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    Graph *g = graph_of(s, hGraph);
    if (!g) return bad_graph(hGraph);
    if (g->capturing) return UR_RESULT_ERROR_INVALID_OPERATION; // a queue still captures into it
    ended = destroy_graph(s, g);                                // executable graphs hold the recording
  }
  run(ended);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL execDestroy(ur_exp_executable_graph_handle_t h) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.execs.find(h);
  if (it == s.execs.end()) return UR_RESULT_ERROR_INVALID_GRAPH;
  table().CommandBufferExp.pfnReleaseExp(it->second->cb);
  s.execs.erase(it);
  return UR_RESULT_SUCCESS;
}

// The recording of an executable graph, held for the caller; null for a bad handle.
ur_exp_command_buffer_handle_t exec_recording(ur_exp_executable_graph_handle_t h) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.execs.find(h);
  if (it == s.execs.end()) return nullptr;
  table().CommandBufferExp.pfnRetainExp(it->second->cb);
  return it->second->cb;
}

ur_result_t UR_APICALL enqueueGraph(ur_queue_handle_t q, ur_exp_executable_graph_handle_t h, uint32_t n,
                                    const ur_event_handle_t *w, ur_event_handle_t *out) {
  if (!q || !h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if ((n > 0) != (w != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  ur_exp_command_buffer_handle_t cb = exec_recording(h);
  if (!cb) return UR_RESULT_ERROR_INVALID_GRAPH;
  // Enqueued into a capture, the whole graph becomes one node of the other graph.
  ur_result_t r = commandBuffer(q, cb, n, w, out);
  table().CommandBufferExp.pfnReleaseExp(cb);
  return r;
}

ur_result_t UR_APICALL graphIsEmpty(ur_exp_graph_handle_t hGraph, bool *pResult) {
  if (!hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pResult) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Graph *g = graph_of(s, hGraph);
  if (!g) return bad_graph(hGraph);
  return guarded([&] {
    *pResult = g->recorded == 0;
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL graphGetId(ur_exp_graph_handle_t hGraph, uint64_t *pId) {
  if (!hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pId) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Graph *g = graph_of(s, hGraph);
  if (!g) return bad_graph(hGraph);
  *pId = g->id;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL graphSetDestructionCallback(ur_exp_graph_handle_t hGraph, ur_exp_graph_destruction_callback_t fn,
                                                   void *data) {
  if (!hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!fn) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Graph *g = graph_of(s, hGraph);
  if (!g) return bad_graph(hGraph);
  return guarded([&] {
    g->callbacks.emplace_back(fn, data);
    return UR_RESULT_SUCCESS;
  });
}

const char *command_name(ur_command_t t) {
  switch (t) {
  case UR_COMMAND_KERNEL_LAUNCH: return "kernel launch";
  case UR_COMMAND_EVENTS_WAIT: return "wait";
  case UR_COMMAND_EVENTS_WAIT_WITH_BARRIER: return "barrier";
  case UR_COMMAND_USM_MEMCPY: return "USM copy";
  case UR_COMMAND_USM_FILL: return "USM fill";
  case UR_COMMAND_USM_PREFETCH: return "USM prefetch";
  case UR_COMMAND_USM_ADVISE: return "USM advise";
  case UR_COMMAND_MEM_BUFFER_READ: return "buffer read";
  case UR_COMMAND_MEM_BUFFER_WRITE: return "buffer write";
  case UR_COMMAND_MEM_BUFFER_COPY: return "buffer copy";
  case UR_COMMAND_MEM_BUFFER_FILL: return "buffer fill";
  case UR_COMMAND_MEM_BUFFER_READ_RECT: return "buffer read rect";
  case UR_COMMAND_MEM_BUFFER_WRITE_RECT: return "buffer write rect";
  case UR_COMMAND_MEM_BUFFER_COPY_RECT: return "buffer copy rect";
  case UR_COMMAND_ENQUEUE_COMMAND_BUFFER_EXP: return "command buffer";
  default: return "command";
  }
}

// A Graphviz description: one node per recorded command, one edge per sync point.
ur_result_t UR_APICALL graphDump(ur_exp_graph_handle_t hGraph, const char *path) {
  if (!hGraph) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!path) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  State &s = state();
  uint64_t id = 0;
  ur_exp_command_buffer_handle_t cb = nullptr;
  {
    // The recording is read outside the lock: a replay holding it may be waiting for it.
    std::lock_guard<std::mutex> lock(s.mu);
    Graph *g = graph_of(s, hGraph);
    if (!g) return bad_graph(hGraph);
    id = g->id;
    cb = g->cb;
    if (cb) table().CommandBufferExp.pfnRetainExp(cb);
  }
  std::vector<CommandShape> shape;
  ur_result_t read = guarded([&] {
    if (cb) shape = shape_of(cb);
    return UR_RESULT_SUCCESS;
  });
  if (cb) table().CommandBufferExp.pfnReleaseExp(cb);
  if (read != UR_RESULT_SUCCESS) return read;
  return guarded([&] {
    std::FILE *f = std::fopen(path, "w");
    if (!f) return UR_RESULT_ERROR_UNKNOWN;
    std::fprintf(f, "digraph ordo_graph_%llu {\n", static_cast<unsigned long long>(id));
    for (size_t i = 0; i < shape.size(); ++i) {
      std::fprintf(f, "  n%zu [label=\"%zu: %s\"];\n", i, i, command_name(shape[i].type));
      for (uint32_t a : shape[i].after) std::fprintf(f, "  n%u -> n%zu;\n", a, i);
    }
    std::fprintf(f, "}\n");
    return std::fclose(f) == 0 ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_UNKNOWN;
  });
}

} // namespace

const ur_dditable_t &unwrapped() { return g_installed.load(std::memory_order_acquire) ? g_orig : table(); }

void note_activity(int delta) {
  if (delta > 0)
    g_active.fetch_add(uint32_t(delta), std::memory_order_acq_rel);
  else
    g_active.fetch_sub(uint32_t(-delta), std::memory_order_acq_rel);
}

void install_graph_capture(ur_dditable_t &t) {
  g_orig = t;
  g_installed.store(true, std::memory_order_release);
  ur_enqueue_dditable_t &e = t.Enqueue;
  ur_enqueue_exp_dditable_t &x = t.EnqueueExp;
  // Wrap only what the adapter has: an empty slot stays empty (the unsupported stub).
#define ORDO_WRAP(slot, fn)                                                                                            \
  if (slot) slot = fn
  ORDO_WRAP(e.pfnEventsWait, eventsWait);
  ORDO_WRAP(e.pfnEventsWaitWithBarrier, barrier);
  ORDO_WRAP(e.pfnEventsWaitWithBarrierExt, barrierExt);
  ORDO_WRAP(e.pfnUSMMemcpy, usmMemcpy);
  ORDO_WRAP(e.pfnUSMFill, usmFill);
  ORDO_WRAP(e.pfnUSMPrefetch, usmPrefetch);
  ORDO_WRAP(e.pfnUSMAdvise, usmAdvise);
  ORDO_WRAP(e.pfnMemBufferRead, bufferRead);
  ORDO_WRAP(e.pfnMemBufferWrite, bufferWrite);
  ORDO_WRAP(e.pfnMemBufferCopy, bufferCopy);
  ORDO_WRAP(e.pfnMemBufferFill, bufferFill);
  ORDO_WRAP(e.pfnMemBufferReadRect, bufferReadRect);
  ORDO_WRAP(e.pfnMemBufferWriteRect, bufferWriteRect);
  ORDO_WRAP(e.pfnMemBufferCopyRect, bufferCopyRect);
  ORDO_WRAP(x.pfnKernelLaunchWithArgsExp, kernelLaunch);
  ORDO_WRAP(x.pfnCommandBufferExp, commandBuffer);
  ORDO_WRAP(e.pfnMemImageRead, refuse_MemImageRead);
  ORDO_WRAP(e.pfnMemImageWrite, refuse_MemImageWrite);
  ORDO_WRAP(e.pfnMemImageCopy, refuse_MemImageCopy);
  ORDO_WRAP(e.pfnMemBufferMap, refuse_MemBufferMap);
  ORDO_WRAP(e.pfnMemUnmap, refuse_MemUnmap);
  ORDO_WRAP(e.pfnUSMFill2D, refuse_USMFill2D);
  ORDO_WRAP(e.pfnUSMMemcpy2D, refuse_USMMemcpy2D);
  ORDO_WRAP(e.pfnDeviceGlobalVariableWrite, refuse_DeviceGlobalVariableWrite);
  ORDO_WRAP(e.pfnDeviceGlobalVariableRead, refuse_DeviceGlobalVariableRead);
  ORDO_WRAP(e.pfnReadHostPipe, refuse_ReadHostPipe);
  ORDO_WRAP(e.pfnWriteHostPipe, refuse_WriteHostPipe);
  ORDO_WRAP(x.pfnUSMDeviceAllocExp, refuse_USMDeviceAllocExp);
  ORDO_WRAP(x.pfnUSMSharedAllocExp, refuse_USMSharedAllocExp);
  ORDO_WRAP(x.pfnUSMHostAllocExp, refuse_USMHostAllocExp);
  ORDO_WRAP(x.pfnUSMFreeExp, refuse_USMFreeExp);
  ORDO_WRAP(x.pfnTimestampRecordingExp, refuse_TimestampRecordingExp);
  ORDO_WRAP(x.pfnHostTaskExp, refuse_HostTaskExp);
  ORDO_WRAP(x.pfnNativeCommandExp, refuse_NativeCommandExp);
  ORDO_WRAP(t.Event.pfnRetain, eventRetain);
  ORDO_WRAP(t.Event.pfnRelease, eventRelease);
  ORDO_WRAP(t.Event.pfnGetInfo, eventGetInfo);
  ORDO_WRAP(t.Event.pfnWait, eventWait);
  ORDO_WRAP(t.Event.pfnGetProfilingInfo, eventGetProfilingInfo);
  ORDO_WRAP(t.Event.pfnSetCallback, eventSetCallback);
  ORDO_WRAP(t.Event.pfnGetNativeHandle, eventGetNativeHandle);
  ORDO_WRAP(t.Queue.pfnRelease, queueRelease);
#undef ORDO_WRAP
  x.pfnGraphExp = enqueueGraph;
  t.EventExp.pfnCreateExp = urEventCreateExp; // bound_events.cpp
  ur_graph_exp_dditable_t &g = t.GraphExp;
  g.pfnCreateExp = graphCreate;
  g.pfnInstantiateGraphExp = graphInstantiate;
  g.pfnDestroyExp = graphDestroy;
  g.pfnExecutableGraphDestroyExp = execDestroy;
  g.pfnIsEmptyExp = graphIsEmpty;
  g.pfnDumpContentsExp = graphDump;
  g.pfnGetIdExp = graphGetId;
  g.pfnSetDestructionCallbackExp = graphSetDestructionCallback;
  ur_queue_exp_dditable_t &qx = t.QueueExp;
  qx.pfnBeginGraphCaptureExp = queueBeginCapture;
  qx.pfnBeginCaptureIntoGraphExp = queueBeginCaptureInto;
  qx.pfnEndGraphCaptureExp = queueEndCapture;
  qx.pfnIsGraphCaptureEnabledExp = queueIsCapturing;
  qx.pfnGetGraphExp = queueGetGraph;
}

} // namespace ordo::command_buffer
