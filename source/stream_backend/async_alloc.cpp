// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation: urEnqueueUSM{Device,Shared,Host}AllocExp and
// urEnqueueUSMFreeExp on the stream-ordered layer (docs/async-alloc.md, docs/cuda.md),
// through the shared entry points of ur_common/async_alloc.hpp.
//
// Each driver stream is an in-order queue for the layer. Reuse rule 3 becomes a stream
// wait of the alloc's stream on the free's event; a zero-initialising pool's alloc
// zeroes the block on its stream (a byte memset); a plain free on a one-stream queue
// makes no command (fast_free).
#include "backend.hpp"
#include "ur_common/async_alloc.hpp"

namespace ordo::stream_backend {

namespace {

struct async_hooks : handle_types {
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *w) {
    return stream_backend::check_wait_list(n, w);
  }
  static ur_result_t alloc_work(Command &cmd, const ordo::stream_ordered::allocation &block) {
    if (!block.needs_zero) return UR_RESULT_SUCCESS;
    return to_ur(drv::memset_8(block.ptr, 0, block.size, cmd.stream()));
  }
  // The free's place in its stream orders it: nothing to issue. Its event is deferred
  // (backend.hpp, Lane): a driver event is recorded only if another stream or a host
  // query needs one.
  static ur_result_t free_work(Command &) { return UR_RESULT_SUCCESS; }
  // A free on a one-stream queue with no wait list and no event asked for makes no
  // command: its place in the stream is the next deferred number (backend.hpp, Lane),
  // taken in the same hold of the stream's lock as the pool call. It records no
  // ordering node, so another queue reuses the block by a stream wait on its event
  // (reuse rule 3) or once it is complete, not by reachability (docs/cuda.md).
  // Frees with nothing put onto the stream between them share one event (Lane::free_event).
  static bool fast_free(Queue *q, ur_usm_pool_handle_t hPool, void *p, uint32_t n, ur_event_handle_t *phEvent,
                        ur_result_t &r) {
    if (n || phEvent || q->lanes.size() != 1) return false;
    Lane &lane = *q->lanes[0];
    std::lock_guard<std::mutex> lock(lane.mutex);
    Event *ev = lane.free_event;
    if (!ev || lane.free_epoch != lane.work_epoch || !q->streams_private) {
      if ((r = event_create(q, UR_COMMAND_ENQUEUE_USM_FREE_EXP, false, &ev, /*deferred=*/true))) return true;
      ev->internal = true;
      ev->stream = lane.stream;
      ev->lane = 0;
      ev->seq = lane.issued.load(std::memory_order_relaxed) + 1;
      lane.issued.store(ev->seq, std::memory_order_release);
      if (lane.free_event) event_release_internal(lane.free_event); // the caller's queue reference stays
      lane.free_event = ev;
      lane.free_epoch = lane.work_epoch;
    }
    // The pool takes its own reference.
    r = q->ctx->pools->check_and_free(hPool, p, reinterpret_cast<ur_event_handle_t>(ev), lane.identity, true);
    return true;
  }
  // The bound urUSM*Alloc keeps (usm.cpp), so both forms refuse one size alike.
  static size_t max_alloc(const Device *d) { return d->facts.total_mem; }
  // Called for a free's event the caller did not ask for (or never got): no handle of
  // it went out, so its storage can be reused when the pool lets it go.
  static void release_event(ur_event_handle_t h) { event_release_internal(reinterpret_cast<Event *>(h)); }
};

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) { ordo::ur_common::async_alloc<async_hooks>::install(t); }

} // namespace ordo::stream_backend
