// SPDX-License-Identifier: Apache-2.0
// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp on the stream-ordered
// layer (docs/async-alloc.md; docs/opencl.md, "Stream-ordered allocation"). The pool call
// and the command happen in one hold of the queue's submission lock, so the pool sees a
// queue's allocs and frees in the order their commands enter it. A command is a marker
// with the wait list and the pool's internal dependencies, or none where a marker would
// add no order: the UR event then holds the cl_event of the one command the marker would
// have waited for (can_share(), newest_command(); "Allocs and frees without OpenCL commands").
#include <mutex>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "usm.hpp"

namespace ordo::opencl {
namespace {

// Under q->submit_mutex: whether a marker on `q` waiting for `e` alone would complete
// exactly with `e`'s command, so its cl_event can stand in: the newest command of an
// in-order queue, or a command of an out-of-order `q` after its newest barrier (a
// marker would wait for that barrier too). Never on a profiling queue (own times).
bool can_share(ur_queue_handle_t q, ur_event_handle_t e) {
  if (q->profiling || e->queue != q || e->seq == 0) return false;
  if (q->in_order) return e->seq == q->commands.load(std::memory_order_relaxed);
  return e->seq >= q->last_barrier_at;
}

// Under q->submit_mutex: the cl_event of the newest command of an in-order queue that
// keeps it (queue.hpp, track_last), when nothing was enqueued since; null otherwise.
// A command that waits for nothing on that queue completes exactly when it does.
cl_event newest_command(ur_queue_handle_t q) {
  if (!q->in_order || !q->track_last || !q->last_cl) return nullptr;
  return q->last_cl_at == q->commands.load(std::memory_order_relaxed) ? q->last_cl : nullptr;
}

// Under q->submit_mutex: the cl_event an alloc or free waiting for `list` (`waits` events
// in all, the pool's internal dependencies included) takes instead of a marker's: its
// one event where can_share() allows, or with no wait an in-order queue's newest
// command's, unless it wants an event of its own on a profiling queue. Null: a marker.
cl_event shared_event(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list, cl_uint waits, bool want_event) {
  if (n == 1 && waits == 1 && can_share(q, list[0])) return list[0]->cl;
  if (waits == 0 && !(want_event && q->profiling)) return newest_command(q);
  return nullptr;
}

ur_result_t enqueue_alloc(ur_queue_handle_t q, ur_usm_pool_handle_t pPool, ur_usm_type_t kind, ur_command_t type,
                          size_t size, uint32_t n, const ur_event_handle_t *list, void **ppMem,
                          ur_event_handle_t *phEvent) {
  ClWaitList waits;
  if (ur_result_t r = begin_command(q, n, list, waits)) return r;
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  ur_device_handle_t d = q->dev;
  if (!d->async_alloc_supported()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (size > d->max_alloc) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (!usm_kind_supported(q->ctx, kind, d)) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  ordo::stream_ordered::context_pools &pools = *q->ctx->pools;
  ordo::stream_ordered::pool_ref pool;
  if (ur_result_t r = pools.resolve(pPool, kind, d, pool)) return r;

  AllocDeps deps{&waits, {}};
  const ordo::stream_ordered::alloc_command cmd{q->identity, q->in_order, list, n, &deps};
  ordo::stream_ordered::allocation block;
  cl_event ev = nullptr;
  cl_int err = CL_SUCCESS;
  uint64_t node = 0, seq = 0;
  bool shared = false;
  ur_result_t r = UR_RESULT_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(q->submit_mutex);
    r = pools.alloc_in_command(pool, kind, d, size, cmd, block);
    if (r == UR_RESULT_SUCCESS) {
      // A zero fill where the pool asks for one; none with no wait list and no event
      // asked for; else a shared cl_event or a marker.
      cl_event same = nullptr; // the cl_event this alloc's completes with
      if (block.needs_zero) {
        unsigned char zero = 0;
        err = usm_enqueue_fill(q, block.ptr, &zero, 1, size, waits.size(), waits.data(), &ev);
      } else if (phEvent || waits.size()) {
        same = shared_event(q, n, list, waits.size(), phEvent != nullptr);
        if (!same) err = enqueue_marker(q, waits.size(), waits.data(), &ev);
      }
      if (same) {
        shared = true;
        if (phEvent) {
          ev = same;
          cl.clRetainEvent(ev);
        }
      }
      if (err != CL_SUCCESS) {
        pools.cancel(pool, block); // the command never existed: the pool is as before
      } else if (ev || shared) {
        node = record_command(q, false, waits, &deps.held, &seq);
        if (q->track_last) note_last(q, ev ? ev : same, seq);
      }
    }
  }
  for (ur_event_handle_t e : deps.held) event_unhold(e);
  reap_deferred_events();
  if (r != UR_RESULT_SUCCESS) return r;
  if (err != CL_SUCCESS) return to_ur(err);
  *ppMem = block.ptr;
  r = finish_command(q, type, ev, node, false, phEvent, seq);
  if (r == UR_RESULT_SUCCESS && phEvent && shared) (*phEvent)->shared = true;
  return r;
}

// urEnqueueUSM{Device,Shared,Host}AllocExp: the same but for the kind.
template <ur_usm_type_t Kind, ur_command_t Type>
ur_result_t UR_APICALL EnqueueUSMAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                          const ur_exp_async_usm_alloc_properties_t *, uint32_t numEventsInWaitList,
                                          const ur_event_handle_t *phEventWaitList, void **ppMem,
                                          ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, Kind, Type, size, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMFreeExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, void *pMem,
                                           uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                           ur_event_handle_t *phEvent) {
  ClWaitList waits;
  if (ur_result_t r = begin_command(hQueue, numEventsInWaitList, phEventWaitList, waits)) return r;
  ordo::stream_ordered::context_pools &pools = *hQueue->ctx->pools;
  ordo::stream_ordered::pool_ref owner;
  ur_event_handle_t made = nullptr; // this free's own marker, if it has one
  ur_result_t r = UR_RESULT_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(hQueue->submit_mutex);
    ur_event_handle_t freed = hQueue->last_free;
    const uint64_t now = hQueue->commands.load(std::memory_order_relaxed);
    // Nothing was enqueued since the last free's marker: it is this block's release
    // event too, and with no command to make the check and the free are one pool call.
    if (!phEvent && !numEventsInWaitList && freed && hQueue->last_free_at == now) {
      r = pools.check_and_free(pPool, pMem, freed, hQueue->identity, hQueue->in_order);
    } else {
      // Refused before any command exists. Its event (the block's release event) is a
      // shared cl_event or a marker's; a plain free makes an in-order queue keep its newest.
      if ((r = pools.check_free(pPool, pMem, owner))) return r;
      cl_event ev = shared_event(hQueue, numEventsInWaitList, phEventWaitList, waits.size(), phEvent != nullptr);
      const bool shared = ev != nullptr;
      if (numEventsInWaitList == 0 && !phEvent && hQueue->in_order) track_newest(hQueue);
      if (shared) {
        cl.clRetainEvent(ev);
      } else {
        if (cl_int err = enqueue_marker(hQueue, waits.size(), waits.data(), &ev)) return to_ur(err);
      }
      uint64_t seq = 0;
      const uint64_t node = record_command(hQueue, false, waits, nullptr, &seq);
      if (hQueue->track_last) note_last(hQueue, ev, seq);
      made = freed = wrap_event(hQueue, UR_COMMAND_ENQUEUE_USM_FREE_EXP, ev, node, seq);
      if (!made) {
        cl.clReleaseEvent(ev);
        return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
      }
      made->shared = shared;
      if (numEventsInWaitList == 0) {
        if (hQueue->last_free) event_unhold_deferred(hQueue->last_free);
        made->hold(); // the queue's
        hQueue->last_free = made;
        hQueue->last_free_at = hQueue->commands.load(std::memory_order_relaxed);
      }
      // A concurrent second free of the same block leaves a marker with no effect behind.
      r = pools.free_in_command(owner, pMem, freed, hQueue->identity, hQueue->in_order);
    }
  }
  if (made) {
    if (r == UR_RESULT_SUCCESS && phEvent)
      *phEvent = made;
    else if (made->release())
      event_unhold(made);
  }
  reap_deferred_events();
  return r;
}

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnUSMDeviceAllocExp = EnqueueUSMAllocExp<UR_USM_TYPE_DEVICE, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP>;
  t.EnqueueExp.pfnUSMSharedAllocExp = EnqueueUSMAllocExp<UR_USM_TYPE_SHARED, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP>;
  t.EnqueueExp.pfnUSMHostAllocExp = EnqueueUSMAllocExp<UR_USM_TYPE_HOST, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP>;
  t.EnqueueExp.pfnUSMFreeExp = urEnqueueUSMFreeExp;
}

} // namespace ordo::opencl
