// A UR queue: one cl_command_queue. Out-of-order queues are native where the device
// has them; elsewhere an in-order queue stands in (a valid execution of any order).
#pragma once
#include <atomic>
#include <mutex>
#include <vector>

#include "common.hpp"
#include "event.hpp"

struct ur_queue_handle_t_ : ordo::ocl::ObjectHead {
  ur_queue_handle_t_();

  cl_command_queue cl = nullptr;
  ur_context_handle_t context = nullptr;
  ur_device_handle_t device = nullptr;
  ur_queue_flags_t flags = 0;  // as the user asked
  bool in_order = true;        // what the cl_command_queue really does
  bool profiling = false;
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
  ~ur_queue_handle_t_();
};
ORDO_HANDLE_CHECK(ur_queue_handle_t_);

namespace ordo::ocl {
void queue_unhold(ur_queue_handle_t q);

// Under q->submit_mutex, right after the command entered the cl_command_queue: its
// node in the context's ordering knowledge (predecessors: the wait list's events of
// this context and `extra`, plus what queue order and barriers give).
uint64_t record_command(ur_queue_handle_t q, bool barrier, const ClWaitList &waits,
                        const std::vector<ur_event_handle_t> *extra = nullptr);

// Every command but the stream-ordered alloc and free goes through here:
// `enqueue(cl_event *ev)` calls OpenCL, never blocking (ev is null when nobody needs
// the event), under the submission lock, where the command is also recorded; its
// event carries the node. A blocking command is waited for after the lock.
template <class F>
ur_result_t submit(ur_queue_handle_t q, ur_command_t command, const ClWaitList &waits, ur_event_handle_t *phEvent,
                   F &&enqueue, bool blocking = false, bool barrier = false) {
  cl_event ev = nullptr;
  uint64_t node = 0;
  {
    std::lock_guard<std::mutex> lock(q->submit_mutex);
    cl_int err = enqueue(phEvent || blocking ? &ev : nullptr);
    if (err != CL_SUCCESS) return to_ur(err);
    node = record_command(q, barrier, waits);
  }
  return finish_command(q, command, ev, node, blocking, phEvent);
}
} // namespace ordo::ocl
