// SPDX-License-Identifier: Apache-2.0
// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp: ur_common/async_alloc.hpp's
// with an AsyncCommand (queue.hpp): a marker, a zero fill, or no OpenCL command where a
// marker would add no order (docs/opencl.md, "Allocs and frees without OpenCL commands").
#include "context.hpp"
#include "device.hpp"
#include "tables.hpp"
#include "ur_common/async_alloc.hpp"
#include "usm.hpp"

namespace ordo::opencl {
namespace {

// Under q->submit_mutex: the cl_event with which a marker waiting for `list` (`waits` in all,
// the pool's included) would complete, or null. One event: an in-order queue's newest command,
// or one after an out-of-order queue's newest barrier; not on a profiling queue (own times).
// None: an in-order queue's newest command (track_last), unless it wants its own profiled event.
cl_event shared_event(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list, cl_uint waits, bool want_event) {
  const uint64_t newest = q->commands.load(std::memory_order_relaxed);
  if (n == 1 && waits == 1) {
    const ur_event_handle_t e = list[0];
    if (q->profiling || e->queue != q || e->seq == 0) return nullptr;
    return (q->in_order ? e->seq == newest : e->seq >= q->last_barrier_at) ? e->cl : nullptr;
  }
  if (waits || (want_event && q->profiling) || !q->in_order || !q->track_last) return nullptr;
  return q->last_cl_at == newest ? q->last_cl : nullptr;
}

struct async_hooks {
  using Queue = ur_queue_handle_t_;
  using Command = AsyncCommand;
  static ur_result_t check_wait_list(Queue *q, uint32_t n, const ur_event_handle_t *list) {
    return ClWaitList::check(n, list, q->ctx);
  }
  static ur_result_t check_alloc(Queue *q, ur_usm_type_t kind, size_t size, uint32_t n, const ur_event_handle_t *list) {
    if (ur_result_t r = check_wait_list(q, n, list)) return r;
    if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    if (!q->dev->async_alloc_supported()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (size > q->dev->max_alloc) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    return usm_kind_supported(q->ctx, kind, q->dev) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  }
  // No wait (the pool's included) and no event asked for: no command.
  static ur_result_t alloc_work(Command &cmd, const ordo::stream_ordered::allocation &block) {
    if (block.needs_zero) return cmd.zero(block.ptr, block.size);
    return cmd.want_event || cmd.waits.size() ? cmd.order() : UR_RESULT_SUCCESS;
  }
  static ur_result_t free_work(Command &cmd) { return cmd.order(); }
  static void release_event(ur_event_handle_t e) {
    if (e->release()) unhold(e);
  }
  // Nothing enqueued since the last free with no wait list: its event releases this block
  // too, in one pool call. Else a pointer that is no live block's start makes no command.
  static bool free_in_lock(Command &cmd, ordo::stream_ordered::context_pools &pools, ur_usm_pool_handle_t hPool,
                           void *p, ur_event_handle_t *phEvent, ordo::stream_ordered::pool_ref &owner, ur_result_t &r) {
    Queue *q = cmd.q;
    cmd.want_event = phEvent != nullptr;
    const bool shares = !phEvent && !cmd.n && q->last_free && q->last_free_at == q->commands.load();
    r = shares ? pools.check_and_free(hPool, p, q->last_free, q->identity, q->in_order)
               : pools.check_free(hPool, p, owner);
    return shares || r != UR_RESULT_SUCCESS;
  }
};

} // namespace

AsyncCommand::AsyncCommand(ur_queue_handle_t q, ur_command_t type, uint32_t n, const ur_event_handle_t *list,
                           ur_event_handle_t *phEvent, ordo::ur_common::lane_hint)
    : q(q), type(type), n(n), list(list), out(phEvent), want_event(phEvent != nullptr) {
  waits.assign(n, list, q->ctx); // checked already (async_hooks)
  lock = std::unique_lock<std::mutex>(q->submit_mutex);
}

AsyncCommand::~AsyncCommand() {
  if (lock.owns_lock()) lock.unlock();
  if (ev) cl.clReleaseEvent(ev);
  for (ur_event_handle_t e : held) unhold(e);
  reap_deferred_events();
}

bool AsyncCommand::wait_for(ur_event_handle_t dep) {
  try {
    held.reserve(held.size() + 1);
    waits.push(dep->cl);
  } catch (...) {
    return false;
  }
  dep->hold();
  held.push_back(dep);
  return true;
}

ur_result_t AsyncCommand::zero(void *p, size_t size) {
  const unsigned char zero = 0;
  return to_ur(usm_enqueue_fill(q, p, &zero, 1, size, waits.size(), waits.data(), &ev));
}

ur_result_t AsyncCommand::order() { // a plain free makes an in-order queue keep its newest command
  same = shared_event(q, n, list, waits.size(), want_event);
  if (type == UR_COMMAND_ENQUEUE_USM_FREE_EXP && n == 0 && !want_event && q->in_order) track_newest(q);
  return same ? UR_RESULT_SUCCESS : to_ur(enqueue_marker(q, waits.size(), waits.data(), &ev));
}

// Records the command (none: an alloc with no work) and wraps its event for `out`; a free
// with no wait list becomes the queue's last free.
ur_result_t AsyncCommand::finish(ur_result_t r, bool keep_lock) {
  if (r != UR_RESULT_SUCCESS) {
    if (ev) q->commands.fetch_add(1, std::memory_order_relaxed); // in the queue: a finish must not skip it
    return r;
  }
  if (ev || same) {
    uint64_t seq = 0;
    const uint64_t node = record_command(q, false, waits, &held, &seq);
    if (q->track_last) note_last(q, ev ? ev : same, seq);
    if (out) {
      if (!ev) cl.clRetainEvent(ev = same);
      ur_event_handle_t e = wrap_event(q, type, ev, node, seq);
      if (!e) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY; // the destructor releases `ev`
      ev = nullptr;
      e->shared = same != nullptr;
      *out = e;
      if (type == UR_COMMAND_ENQUEUE_USM_FREE_EXP && n == 0) {
        if (q->last_free) event_unhold_deferred(q->last_free);
        e->hold(); // the queue's
        q->last_free = e;
        q->last_free_at = q->commands.load(std::memory_order_relaxed);
      }
    }
  }
  if (!keep_lock) lock.unlock();
  return UR_RESULT_SUCCESS;
}

void install_async_alloc_entry_points(ur_dditable_t &t) { ordo::ur_common::async_alloc<async_hooks>::install(t); }

} // namespace ordo::opencl
