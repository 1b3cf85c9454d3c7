// SPDX-License-Identifier: Apache-2.0
// A UR queue: one cl_command_queue. Out-of-order queues are native where the device
// has them; elsewhere an in-order queue stands in (a valid execution of any order).
#pragma once
#include <atomic>
#include <mutex>
#include <vector>

#include "common.hpp"
#include "event.hpp"
#include "ur_common/handles.hpp"

struct ur_queue_handle_t_ : ordo::opencl::handle_object<ordo::handle_kind::queue, UR_RESULT_ERROR_INVALID_QUEUE> {
  ur_queue_handle_t_();

  cl_command_queue cl = nullptr;
  // Named as ur_common::queue_info reads them.
  ur_context_handle_t ctx = nullptr;
  ur_device_handle_t dev = nullptr;
  ur_queue_flags_t flags = 0; // as the user asked
  bool in_order = true;       // what the cl_command_queue really does
  bool profiling = false;
  // A device queue (CL_QUEUE_ON_DEVICE): only kernels enqueue to it, so the host never
  // finishes or flushes it; OpenCL refuses host commands on it (INVALID_QUEUE).
  bool on_device = false;
  const void *const identity; // this queue for the stream-ordered layer
  // Every command enters the cl_command_queue under this lock, with its record in the
  // context's ordering knowledge; stream-ordered allocs and frees reach the pool in the
  // same hold (docs/ordered-pool.md, "ordering contract"). It guards what follows.
  std::mutex submit_mutex;
  // Commands enqueued through the adapter. A free with no wait list with nothing
  // enqueued since the last such free shares its marker (both complete together).
  std::atomic<uint64_t> commands{0};
  // Every command up to this place (`commands`) is known complete: a finish that
  // started there succeeded. A finish with nothing enqueued since costs no OpenCL call
  // (a blocking urUSMFree finishes every queue of the context, and Intel's clFinish
  // takes microseconds on an idle queue) unless the native queue is in the user's hands,
  // where commands may enter it unseen.
  std::atomic<uint64_t> finished_at{0};
  std::atomic<bool> native_shared{false};
  ur_event_handle_t last_free = nullptr;
  uint64_t last_free_at = 0;
  // The place (`commands`) of the newest barrier: a command of an out-of-order queue
  // placed at or after it follows every barrier a new command would follow.
  uint64_t last_barrier_at = 0;
  // An in-order queue keeps its newest command's cl_event and place while it sees plain
  // stream-ordered frees (no wait list, no event), which release their blocks with it
  // and need no marker; from such a free until kTrackWindow commands without one.
  static constexpr uint32_t kTrackWindow = 64;
  bool track_last = false;
  uint32_t track_left = 0;
  cl_event last_cl = nullptr;
  uint64_t last_cl_at = 0;
  // Out-of-order queues: the newest barrier's cl_event, which every marker with a wait
  // list waits for too: Intel's CPU runtime lets such a marker complete before an earlier
  // barrier of its queue (docs/opencl.md).
  cl_event last_barrier_cl = nullptr;
  ~ur_queue_handle_t_();
};
ORDO_HANDLE_CHECK(ur_queue_handle_t_);

namespace ordo::opencl {

// Under q->submit_mutex, right after the command entered the cl_command_queue: its
// node in the context's ordering knowledge (predecessors: the wait list's events of
// this context and `extra`, plus what queue order and barriers give).
// `*seq` (if given): the command's place in the queue (the event's `seq`).
uint64_t record_command(ur_queue_handle_t q, bool barrier, const ClWaitList &waits,
                        const std::vector<ur_event_handle_t> *extra = nullptr, uint64_t *seq = nullptr);

// Finishes `q` (finish_queue), or nothing where no command entered it since the last
// finish that succeeded (finished_at). Not under q->submit_mutex.
cl_int finish_known(ur_queue_handle_t q);
// Under q->submit_mutex, after record_command: `ev` (not null) completes the command
// at place `seq` of a queue that keeps its newest command's event (track_last).
void note_last(ur_queue_handle_t q, cl_event ev, uint64_t seq);
// Under q->submit_mutex: a plain free on an in-order queue; keep (on) tracking.
void track_newest(ur_queue_handle_t q);

// Under q->submit_mutex: a marker waiting for `waits`, and on an out-of-order queue
// with a wait list also for the newest barrier (last_barrier_cl), as OpenCL says every
// command after a barrier does.
cl_int enqueue_marker(ur_queue_handle_t q, cl_uint n, const cl_event *waits, cl_event *ev);
// Puts `ev` (retained; null: none) in `slot` in place of the event it held (released):
// last_cl, last_barrier_cl under q->submit_mutex.
void keep_event(cl_event &slot, cl_event ev);

// A stream-ordered alloc's or free's command for ur_common/async_alloc.hpp (async_alloc.cpp):
// holds the queue's submission lock from construction to finish() (a failed one: to its
// end). Its work is a zero fill, a marker, or none: no wait and no event asked for, or an
// earlier command's cl_event stands in for the marker's (docs/opencl.md).
struct AsyncCommand {
  AsyncCommand(ur_queue_handle_t q, ur_command_t type, uint32_t n, const ur_event_handle_t *list,
               ur_event_handle_t *phEvent, ordo::ur_common::lane_hint = {});
  ~AsyncCommand(); // lets go of the lock, then of `held` and of a cl_event nobody took
  ur_result_t status() const { return UR_RESULT_SUCCESS; }
  const void *identity() const { return q->identity; }
  bool in_order() const { return q->in_order; }
  bool wait_for(ur_event_handle_t dep); // the pool's dependency (reuse rule 3), held until enqueued
  ur_result_t zero(void *p, size_t size);
  ur_result_t order(); // a shared cl_event, else a marker
  ur_result_t finish(ur_result_t r, bool keep_lock = false);

  const ur_queue_handle_t q;
  const ur_command_t type;
  const uint32_t n;
  const ur_event_handle_t *const list;
  ur_event_handle_t *const out;
  bool want_event; // the caller's (a free's `out` is the layer's own)
  ClWaitList waits;
  std::vector<ur_event_handle_t> held;
  std::unique_lock<std::mutex> lock;
  cl_event ev = nullptr;   // the fill's or marker's, or `same` retained for `out`
  cl_event same = nullptr; // the earlier command's cl_event this one completes with
};

// The start of every command: the queue, and its wait list translated into `waits`
// (a list null or empty against its count: the spec's check, in the table tail).
inline ur_result_t begin_command(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list, ClWaitList &waits) {
  ORDO_CHECK_HANDLE(q);
  return waits.assign(n, list, q->ctx);
}
// begin_command, or return its refusal; declares `waits`.
#define ORDO_CL_WAIT_LIST(q, n, list)                                                                                  \
  ::ordo::opencl::ClWaitList waits;                                                                                    \
  if (ur_result_t begin_result_ = ::ordo::opencl::begin_command(q, n, list, waits)) return begin_result_

// Every command but the stream-ordered alloc and free goes through here:
// `enqueue(cl_event *ev)` calls OpenCL, never blocking (ev is null when nobody needs
// the event), under the submission lock, where the command is also recorded; its
// event carries the node. A blocking command is waited for after the lock.
template <class F>
ur_result_t submit(ur_queue_handle_t q, ur_command_t command, const ClWaitList &waits, ur_event_handle_t *phEvent,
                   F &&enqueue, bool blocking = false, bool barrier = false) {
  cl_event ev = nullptr;
  uint64_t node = 0, seq = 0;
  {
    std::lock_guard<std::mutex> lock(q->submit_mutex);
    const bool track = q->track_last; // only ever set on in-order queues
    const bool keep_barrier = barrier && !q->in_order;
    cl_int err = enqueue(phEvent || blocking || track || keep_barrier ? &ev : nullptr);
    if (err != CL_SUCCESS) {
      // Some of its OpenCL commands may have entered the queue: a finish must not skip it.
      q->commands.fetch_add(1, std::memory_order_relaxed);
      return to_ur(err);
    }
    if (keep_barrier && ev) keep_event(q->last_barrier_cl, ev);
    node = record_command(q, barrier, waits, nullptr, &seq);
    if (track && ev) note_last(q, ev, seq);
  }
  return finish_command(q, command, ev, node, blocking, phEvent, seq);
}
} // namespace ordo::opencl
