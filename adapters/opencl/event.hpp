// A UR event: one cl_event, with the queue and command that made it.
#pragma once
#include "common.hpp"

struct ur_event_handle_t_ : ordo::ocl::ObjectHead {
  ur_event_handle_t_() : ObjectHead(ordo::ocl::Tag::event) {}

  cl_event cl = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr; // null for an event made from a native handle
  ur_command_t command = UR_COMMAND_EVENTS_WAIT;
  ~ur_event_handle_t_();
};
ORDO_HANDLE_CHECK(ur_event_handle_t_);

namespace ordo::ocl {
// Wraps `ev` (taking over its reference) as the event of a command of `q`.
// On failure releases `ev`.
ur_result_t make_event(ur_queue_handle_t q, ur_command_t command, cl_event ev, ur_event_handle_t *out);
// The end of every enqueue: counts the command on `q`, and hands `ev` to the caller
// as *out when out is non-null, else releases it.
ur_result_t return_event(ur_queue_handle_t q, ur_command_t command, cl_event ev, ur_event_handle_t *out);
void event_unhold(ur_event_handle_t e);
// Drops a hold where destroying the event is not safe (an OpenCL callback, a pool's
// lock): a last hold parks the event until reap_deferred_events() on a safe path.
void event_unhold_deferred(ur_event_handle_t e);
void reap_deferred_events();
// True once the command finished (successfully or not).
bool event_complete(ur_event_handle_t e);
} // namespace ordo::ocl
