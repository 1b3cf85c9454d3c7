// SPDX-License-Identifier: Apache-2.0
// Commands that only order: event waits and barriers.
#include "common.hpp"
#include "ur_common/wait.hpp"

namespace ordo::level_zero {

namespace {

// A wait or barrier. With no wait list it waits for everything enqueued so far; a
// barrier also makes every later command of the queue wait for it. On an
// out-of-order queue either spans every list, so it holds every list's lock.
ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n, const ur_event_handle_t *waits,
                         ur_event_handle_t *phEvent) {
  const bool spans = !q->in_order && (barrier || n == 0);
  Command cmd(q, type, n, waits, phEvent, spans);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  if (spans && n == 0) cmd.join_other_lanes();
  if (spans && barrier) cmd.order_other_lanes();
  return cmd.finish(cmd.append_barrier());
}

struct wait_hooks : handle_types {
  static ur_result_t enqueue_wait(Queue *q, ur_command_t type, bool barrier, uint32_t n, const ur_event_handle_t *waits,
                                  ur_event_handle_t *phEvent) {
    return level_zero::enqueue_wait(q, type, barrier, n, waits, phEvent);
  }
};

} // namespace

void install_wait_entry_points(ur_dditable_t &t) { ordo::ur_common::wait_entry_points<wait_hooks>::install(t); }

} // namespace ordo::level_zero
