// SPDX-License-Identifier: Apache-2.0
// A UR queue: one cl_command_queue. Out-of-order queues are native where the device
// has them; elsewhere an in-order queue stands in (a valid execution of any order).
#pragma once
#include <atomic>
#include <mutex>
#include <vector>

#include "common.hpp"
#include "event.hpp"

struct ur_queue_handle_t_ : ordo::object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::queue;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_QUEUE;
  ur_queue_handle_t_();

  cl_command_queue cl = nullptr;
  // Named as ur_common::queue_info reads them.
  ur_context_handle_t ctx = nullptr;
  ur_device_handle_t dev = nullptr;
  ur_queue_flags_t flags = 0; // as the user asked
  bool in_order = true;       // what the cl_command_queue really does
  bool profiling = false;
  // A device queue (CL_QUEUE_ON_DEVICE): only kernels enqueue to it (device-side
  // enqueue), so the host never finishes or flushes it; host commands on it are
  // refused by OpenCL (INVALID_QUEUE).
  bool on_device = false;
  // This queue for the stream-ordered layer: never the identity of another queue.
  const void *const identity;
  // Every command enters the cl_command_queue under this lock, together with its
  // record in the context's ordering knowledge; stream-ordered allocs and frees
  // reach the pool in the same hold (docs/ordered-pool.md, "ordering contract").
  std::mutex submit_mutex;
  // Counts commands enqueued through the adapter. A free with no wait list enqueued
  // when nothing else was since the last such free shares that free's marker: both
  // complete once everything before them has (guarded by submit_mutex).
  std::atomic<uint64_t> commands{0};
  ur_event_handle_t last_free = nullptr;
  uint64_t last_free_at = 0;
  // The place (`commands`) of the newest barrier (guarded by submit_mutex). A command
  // of this out-of-order queue placed at or after it follows every barrier a new
  // command would follow.
  uint64_t last_barrier_at = 0;
  // An in-order queue keeps the cl_event of its newest command and its place (guarded
  // by submit_mutex) while it sees plain stream-ordered frees (no wait list, no event):
  // such a free releases its block when that command completes, with no marker. It
  // starts at such a free and stops after kTrackWindow commands with none, so that a
  // queue that no longer frees does not pay for an event per command.
  static constexpr uint32_t kTrackWindow = 64;
  bool track_last = false;
  uint32_t track_left = 0;
  cl_event last_cl = nullptr;
  uint64_t last_cl_at = 0;
  // Out-of-order queues: the cl_event of the newest barrier (guarded by submit_mutex).
  // Every marker with a wait list waits for it too: Intel's CPU runtime lets such a
  // marker complete before an earlier barrier of its queue (docs/opencl.md).
  cl_event last_barrier_cl = nullptr;
  ~ur_queue_handle_t_();
};
ORDO_HANDLE_CHECK(ur_queue_handle_t_);

namespace ordo::opencl {
void queue_unhold(ur_queue_handle_t q);

// Under q->submit_mutex, right after the command entered the cl_command_queue: its
// node in the context's ordering knowledge (predecessors: the wait list's events of
// this context and `extra`, plus what queue order and barriers give).
// `*seq` (if given): the command's place in the queue (the event's `seq`).
uint64_t record_command(ur_queue_handle_t q, bool barrier, const ClWaitList &waits,
                        const std::vector<ur_event_handle_t> *extra = nullptr, uint64_t *seq = nullptr);

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

// The start of every command: the queue, and its wait list translated into `waits`
// (a list null or empty against its count: the spec's check, in the table tail).
inline ur_result_t begin_command(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list, ClWaitList &waits) {
  ORDO_CHECK_HANDLE(q);
  return waits.assign(n, list, q->ctx);
}

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
    if (err != CL_SUCCESS) return to_ur(err);
    if (keep_barrier && ev) keep_event(q->last_barrier_cl, ev);
    node = record_command(q, barrier, waits, nullptr, &seq);
    if (track && ev) note_last(q, ev, seq);
  }
  return finish_command(q, command, ev, node, blocking, phEvent, seq);
}
} // namespace ordo::opencl
