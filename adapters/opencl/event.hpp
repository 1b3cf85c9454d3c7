// SPDX-License-Identifier: Apache-2.0
// A UR event: one cl_event, with the queue and command that made it.
#pragma once
#include "common.hpp"

struct ur_event_handle_t_ : ordo::opencl::handle_object<ordo::handle_kind::event, UR_RESULT_ERROR_INVALID_EVENT> {
  cl_event cl = nullptr;
  ur_context_handle_t ctx = nullptr;
  // Held. For an event made from a native handle: the live UR queue of this context
  // on the cl_event's command queue, else one made for it (owns_queue); null for a
  // user event, which has no queue.
  ur_queue_handle_t queue = nullptr;
  bool owns_queue = false; // `queue` was made for this event: holds its one reference
  ur_command_t command = UR_COMMAND_EVENTS_WAIT;
  // The command's node in its context's ordering knowledge (0: not made by a command).
  uint64_t order_node = 0;
  // The command's place in its queue (ur_queue_handle_t_::commands once it was
  // recorded; 0: unknown). Tells whether a later alloc or free may share `cl`.
  uint64_t seq = 0;
  // `cl` belongs to an earlier command this one waited for and nothing else (a
  // stream-ordered alloc or free with no work of its own, async_alloc.cpp): it
  // completes with it, but never reports RUNNING before that command completes.
  bool shared = false;
  ~ur_event_handle_t_();
};
ORDO_HANDLE_CHECK(ur_event_handle_t_);

namespace ordo::opencl {
// Wraps `ev` (taking over its reference) as the event of a command of `q` whose
// ordering node is `node`; null when out of memory (`ev` is then still the caller's).
// Destroys nothing, so it may be called under the queue's submission lock.
ur_event_handle_t wrap_event(ur_queue_handle_t q, ur_command_t command, cl_event ev, uint64_t node, uint64_t seq = 0);
// The end of every enqueue, after the submission lock: waits for `ev` when the
// command is blocking, then hands it to the caller as *out when out is non-null
// (else releases it).
ur_result_t finish_command(ur_queue_handle_t q, ur_command_t command, cl_event ev, uint64_t node, bool blocking,
                           ur_event_handle_t *out, uint64_t seq = 0);
// Drops a hold where destroying the event is not safe (an OpenCL callback, a pool's
// lock): a last hold parks the event until reap_deferred_events() on a safe path.
void event_unhold_deferred(ur_event_handle_t e);
void reap_deferred_events();
// True once the command finished (successfully or not).
bool event_complete(ur_event_handle_t e);
} // namespace ordo::opencl
