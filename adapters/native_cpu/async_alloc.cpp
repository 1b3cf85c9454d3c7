// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp: stream-ordered
// allocation (docs/async-alloc.md) on the ordered pool core, as commands of the task graph.
//
// An alloc is a command that waits for its wait list and for whatever frees the pool
// made it depend on (rule 3); it zeroes the block when the pool asks. A free is a
// command with no work: its event is the block's release event. Both are omitted
// when nothing can observe them: an alloc that waits for nothing and whose event
// nobody asked for is complete at once, and a plain free on an in-order queue
// releases when the queue's newest command completes, so that command's event is
// the release event.
//
// Queue order (docs/ordered-pool.md, "ordering contract"): each pool call happens in
// the same hold of the queue's mutex as the linking of its command, so the pool sees
// one queue's allocs and frees in the order their commands enter the queue. Two
// exceptions take no queue lock: an alloc that makes no command, and a free on an
// in-order queue with nothing unfinished (docs/native-cpu.md, "Performance").
#include <cstring>

#include "entry_points.hpp"
#include "context.hpp"
#include "logging.hpp"
#include "platform.hpp"
#include "queue.hpp"

namespace nc {

namespace {

// urEnqueueUSM{Device,Shared,Host}AllocExp: one body, the kind and command type apart.
template <ur_usm_type_t kind, ur_command_t type>
ur_result_t UR_APICALL enqueue_alloc(ur_queue_handle_t hQueue, ur_usm_pool_handle_t hPool, const size_t size,
                                     const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t numEvents,
                                     const ur_event_handle_t *phEvents, void **ppMem, ur_event_handle_t *phEvent) {
  Queue *q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0 || size > max_alloc_size()) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  return guarded([&] {
    CommandBuilder cmd(*q, type);
    if (ur_result_t r = cmd.set_wait_list(numEvents, phEvents)) return r;
    ordo::so::context_pools &pools = *q->context->pools;
    ordo::so::pool_ref pool;
    if (ur_result_t r = pools.resolve(hPool, kind, device_handle(), pool)) return r;
    ordo::so::alloc_command hooks{q->identity, q->in_order, phEvents, numEvents, &cmd};
    ordo::so::allocation block;
    Event *ev = nullptr;
    auto make_command = [&] {
      try {
        if (block.needs_zero)
          cmd.set_work(make_work([p = block.ptr, size] {
            std::memset(p, 0, size);
            return UR_RESULT_SUCCESS;
          }));
        ev = cmd.make_event(phEvent != nullptr);
      } catch (...) {
        pools.cancel(pool, block); // the command never existed: the pool is as before
        throw;
      }
    };
    if (!phEvent && numEvents == 0) {
      // Usually no command at all: then the pool call needs no queue lock. An alloc
      // takes only what is free or freed before it (a free's pool call follows the
      // linking of its command), and any command that uses the block is enqueued
      // after this call returns; a command the pool makes necessary (an internal
      // dependency, zeroing) is linked afterwards, before the block is handed out.
      if (ur_result_t r = pools.alloc_in_command(pool, kind, device_handle(), size, hooks, block)) return r;
      if (!block.result.dependencies_added && !block.needs_zero) {
        *ppMem = block.ptr;
        return UR_RESULT_SUCCESS;
      }
      make_command();
      std::lock_guard<std::mutex> lock(q->mu);
      cmd.link_locked(*ev);
    } else {
      std::lock_guard<std::mutex> lock(q->mu);
      if (ur_result_t r = pools.alloc_in_command(pool, kind, device_handle(), size, hooks, block)) return r;
      make_command();
      cmd.link_locked(*ev);
    }
    cmd.start(*ev, phEvent);
    *ppMem = block.ptr;
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL enqueueUSMFreeExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, void *pMem,
                                         uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                         ur_event_handle_t *phEvent) {
  Queue *q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  return guarded([&] {
    // Only the first byte of a live block of a pool of this context (of the pool
    // named, if one is) can be freed; refused before any command exists.
    ordo::so::context_pools &pools = *q->context->pools;
    if (q->in_order && numEventsInWaitList == 0 && !phEvent &&
        q->pending_count.load(std::memory_order_acquire) == 0) {
      // Every earlier command of the queue has finished: no use of the block can be
      // pending, so it is free at once and no queue order is involved.
      ur_result_t r = pools.free_unused(pPool, pMem);
      if (r != UR_RESULT_SUCCESS) NC_LOG(info, "urEnqueueUSMFreeExp: %p refused (%d)", pMem, static_cast<int>(r));
      return r;
    }
    ordo::so::pool_ref owner;
    if (ur_result_t r = pools.check_free(pPool, pMem, owner)) {
      NC_LOG(info, "urEnqueueUSMFreeExp: %p is not a live block of %s", pMem,
             pPool ? "that pool" : "a pool of the context");
      return r;
    }
    ur_result_t r = UR_RESULT_SUCCESS;
    if (q->in_order && numEventsInWaitList == 0 && !phEvent) {
      // Released when the queue's newest command completes: that event is the release event.
      std::lock_guard<std::mutex> lock(q->mu);
      Event *last = q->last && !q->last->terminal() ? q->last : nullptr;
      if (last) q->order_node_locked(*last); // a launch without an event may have none yet
      r = pools.free_in_command(owner, pMem, last ? to_handle(last) : nullptr, q->identity, true);
      if (r == UR_RESULT_SUCCESS && last) q->has_async_frees.store(true, std::memory_order_release);
    } else {
      // A free command. A concurrent second free of the same block leaves a command
      // with no effect behind, and fails below.
      CommandBuilder cmd(*q, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
      if (ur_result_t w = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return w;
      Event *ev = cmd.make_event(phEvent != nullptr);
      {
        std::lock_guard<std::mutex> lock(q->mu);
        cmd.link_locked(*ev);
        r = pools.free_in_command(owner, pMem, to_handle(ev), q->identity, q->in_order);
      }
      ur_event_handle_t user_event = nullptr;
      cmd.start(*ev, phEvent ? &user_event : nullptr);
      if (r == UR_RESULT_SUCCESS) {
        q->has_async_frees.store(true, std::memory_order_release);
        if (phEvent) *phEvent = user_event;
      } else if (user_event) {
        user_release<Event>(user_event);
      }
    }
    if (r != UR_RESULT_SUCCESS) NC_LOG(info, "urEnqueueUSMFreeExp: %p refused", pMem);
    return r;
  });
}

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnUSMDeviceAllocExp = enqueue_alloc<UR_USM_TYPE_DEVICE, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP>;
  t.EnqueueExp.pfnUSMSharedAllocExp = enqueue_alloc<UR_USM_TYPE_SHARED, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP>;
  t.EnqueueExp.pfnUSMHostAllocExp = enqueue_alloc<UR_USM_TYPE_HOST, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP>;
  t.EnqueueExp.pfnUSMFreeExp = enqueueUSMFreeExp;
}

} // namespace nc
