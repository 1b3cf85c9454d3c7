// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation: urEnqueueUSM{Device,Shared,Host}AllocExp and
// urEnqueueUSMFreeExp on the stream-ordered layer (docs/async-alloc.md,
// docs/level-zero.md), through the shared entry points of ur_common/async_alloc.hpp.
//
// Each immediate command list is an in-order queue for the layer. Reuse rule 3 adds
// the free's event to the alloc's wait list; a zero-initialising pool's alloc is a
// fill of the block, any other alloc a barrier, or nothing when it has no wait list, no
// internal dependency and no event asked for (Command::issue_as_command); a free with no
// wait list and no event asked for on an in-order queue is none either (fast_free).
#include "common.hpp"
#include "ur_common/async_alloc.hpp"

namespace ordo::level_zero {

namespace {

struct async_hooks : handle_types {
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *w) {
    return level_zero::check_wait_list(n, w);
  }
  static ur_result_t alloc_work(Command &cmd, const ordo::stream_ordered::allocation &block) {
    if (!block.needs_zero) return cmd.append_barrier();
    if (ur_result_t r = cmd.issue_as_command()) return r;
    const uint8_t zero = 0;
    return check(ze().zeCommandListAppendMemoryFill(cmd.list(), block.ptr, &zero, 1, block.size, cmd.signal(),
                                                    cmd.num_waits(), cmd.waits()));
  }
  // A barrier after the wait list signals the free's event.
  static ur_result_t free_work(Command &cmd) { return cmd.append_barrier(); }
  static void release_event(ur_event_handle_t h) { event_release(reinterpret_cast<Event *>(h)); }
  // A free on an in-order queue with no wait list and no event asked for appends
  // nothing: the list's newest command's event is the block's release event (the free
  // would complete with it), or none when that has completed.
  static bool fast_free(Queue *q, ur_usm_pool_handle_t hPool, void *p, uint32_t n, ur_event_handle_t *phEvent,
                        ur_result_t &r) {
    if (!q->in_order || n || phEvent || q->lanes.size() != 1) return false;
    const size_t held = q->lock_lanes(0, false);
    Lane &lane = *q->lanes[0];
    lane.sweep();
    Event *last = lane.last && !lane.last->complete() ? lane.last : nullptr;
    r = q->ctx->pools->check_and_free(hPool, p, reinterpret_cast<ur_event_handle_t>(last), lane.identity, true);
    q->unlock_lanes(0, held);
    return true;
  }
  // The bound urUSM*Alloc keeps (usm.cpp), so both forms refuse one size alike.
  static size_t max_alloc(const Device *d) { return d->facts.props.maxMemAllocSize; }
};

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) { ordo::ur_common::async_alloc<async_hooks>::install(t); }

} // namespace ordo::level_zero
