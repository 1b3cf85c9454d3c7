// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp: stream-ordered
// allocation (DESIGN.md §3) on the ordered pool core, as commands of the task graph.
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
// one queue's allocs and frees in the order their commands enter the queue.
#include <cstring>

#include "entry_points.hpp"
#include "context.hpp"
#include "logging.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "usm_pool.hpp"

namespace nc {

namespace {

using ordo::pool::status;

ur_command_t alloc_command(ur_usm_type_t kind) {
  switch (kind) {
  case UR_USM_TYPE_HOST: return UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP;
  case UR_USM_TYPE_SHARED: return UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP;
  default: return UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP;
  }
}

// The pool an alloc of `kind` on `q` draws from: the named one, or the device's
// current pool (device, shared) or the context's host pool (host). `hold` keeps a
// pool alive that another thread could destroy meanwhile.
ur_result_t resolve_pool(Queue &q, ur_usm_pool_handle_t hPool, ur_usm_type_t kind, Pool *&out, Ref<Pool> &hold) {
  ContextPools &pools = *q.context->pools;
  if (!hPool) {
    out = kind == UR_USM_TYPE_HOST ? &pools.host_pool() : &pools.current_pool(hold);
    return UR_RESULT_SUCCESS;
  }
  Pool *p = lookup<Pool>(hPool);
  if (!p) return Pool::invalid_handle(hPool);
  if (&p->context != q.context) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!p->serves(kind)) return UR_RESULT_ERROR_INVALID_VALUE; // a pool of another kind of memory
  out = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t enqueue_alloc(ur_queue_handle_t hQueue, ur_usm_pool_handle_t hPool, ur_usm_type_t kind, size_t size,
                          const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t numEvents,
                          const ur_event_handle_t *phEvents, void **ppMem, ur_event_handle_t *phEvent) {
  Queue *q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0 || size > max_alloc_size()) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  return guarded([&] {
    CommandBuilder cmd(*q, alloc_command(kind));
    if (ur_result_t r = cmd.set_wait_list(numEvents, phEvents)) return r;
    Pool *pool = nullptr;
    Ref<Pool> hold;
    if (ur_result_t r = resolve_pool(*q, hPool, kind, pool, hold)) return r;
    AllocCommand hooks{&cmd, q, numEvents, phEvents};
    ordo::pool::alloc_request req;
    req.size = size;
    req.queue = q;
    req.in_order = q->in_order;
    req.wait_list = reinterpret_cast<const ordo::pool::event_handle *>(phEvents);
    req.wait_count = numEvents;
    req.command = &hooks;
    ordo::pool::alloc_result res;
    Event *ev = nullptr;
    {
      std::lock_guard<std::mutex> lock(q->mu);
      if (ur_result_t r = Pool::to_ur(pool->core().alloc(req, res), kind)) return r;
      try {
        pool->set_kind(res.ptr, kind);
        if (phEvent || numEvents || res.dependencies_added || res.needs_zero) {
          if (res.needs_zero)
            cmd.set_work(make_work([p = res.ptr, size] {
              std::memset(p, 0, size);
              return UR_RESULT_SUCCESS;
            }));
          ev = cmd.make_event(phEvent != nullptr);
        }
      } catch (...) {
        pool->clear_kind(res.ptr);
        pool->core().free_now(res.ptr); // the command never existed
        throw;
      }
      if (ev) cmd.link_locked(*ev);
    }
    if (ev) cmd.start(*ev, phEvent);
    *ppMem = res.ptr;
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL enqueueUSMDeviceAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                                const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                                void **ppMem, ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, UR_USM_TYPE_DEVICE, size, pProperties, numEventsInWaitList, phEventWaitList,
                       ppMem, phEvent);
}

ur_result_t UR_APICALL enqueueUSMSharedAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                                const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                                void **ppMem, ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, UR_USM_TYPE_SHARED, size, pProperties, numEventsInWaitList, phEventWaitList,
                       ppMem, phEvent);
}

ur_result_t UR_APICALL enqueueUSMHostAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                              const ur_exp_async_usm_alloc_properties_t *pProperties,
                                              uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                              void **ppMem, ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, UR_USM_TYPE_HOST, size, pProperties, numEventsInWaitList, phEventWaitList,
                       ppMem, phEvent);
}

// Frees `ptr` in `pool` (clearing its kind first: the block is still live). `rel`
// names the release event.
status free_block(Pool &pool, void *ptr, const ordo::pool::release_info &rel) {
  pool.clear_kind(ptr); // no entry unless ptr starts a live block
  return pool.core().free(ptr, rel);
}

ur_result_t UR_APICALL enqueueUSMFreeExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, void *pMem,
                                         uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                         ur_event_handle_t *phEvent) {
  Queue *q = lookup<Queue>(hQueue);
  if (!q) return Queue::invalid_handle(hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  Pool *named = nullptr;
  if (pPool) {
    named = lookup<Pool>(pPool);
    if (!named) return Pool::invalid_handle(pPool);
    if (&named->context != q->context) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  return guarded([&] {
    // Only the first byte of a live block of a pool of this context (of the pool
    // named, if one is) can be freed here. The default pool is asked first without
    // finding the owner (the common case); the core refuses what it does not own.
    ContextPools &pools = *q->context->pools;
    Pool *owner = named;
    Ref<Pool> hold;
    auto find_owner = [&] {
      if (!owner) {
        hold = pools.pool_at(pMem);
        owner = hold.get();
      }
      return owner != nullptr;
    };
    status s = status::not_owned;
    if (q->in_order && numEventsInWaitList == 0 && !phEvent) {
      // Released when the queue's newest command completes: that event is the release event.
      std::lock_guard<std::mutex> lock(q->mu);
      Event *last = q->last && !q->last->terminal() ? q->last : nullptr;
      ordo::pool::release_info rel{last, q, true};
      if (!owner) {
        if (Pool *def = pools.default_if_made()) {
          s = free_block(*def, pMem, rel);
          if (s != status::not_owned) owner = def;
        }
      }
      if (s == status::not_owned && find_owner()) s = free_block(*owner, pMem, rel);
      if (s == status::success && last) q->has_async_frees.store(true, std::memory_order_release);
    } else {
      // A free command. Refuse a bad pointer before it exists; a concurrent second free
      // of the same block leaves a command with no effect behind, and fails below.
      ordo::pool::block_info info;
      if (!find_owner() || !owner->core().lookup(pMem, info) || info.base != pMem) {
        NC_LOG(info, "urEnqueueUSMFreeExp: %p is not a live block of %s", pMem,
               named ? "that pool" : "a pool of the context");
        return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
      }
      CommandBuilder cmd(*q, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
      if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
      Event *ev = cmd.make_event(phEvent != nullptr);
      {
        std::lock_guard<std::mutex> lock(q->mu);
        cmd.link_locked(*ev);
        s = free_block(*owner, pMem, ordo::pool::release_info{ev, q, q->in_order});
      }
      ur_event_handle_t user_event = nullptr;
      cmd.start(*ev, phEvent ? &user_event : nullptr);
      if (s == status::success) {
        q->has_async_frees.store(true, std::memory_order_release);
        if (phEvent) *phEvent = user_event;
      } else if (user_event) {
        user_release<Event>(user_event);
      }
    }
    if (s != status::success) {
      NC_LOG(info, "urEnqueueUSMFreeExp: %p refused: %s", pMem, ordo::pool::to_string(s));
      return Pool::to_ur(s, UR_USM_TYPE_UNKNOWN);
    }
    pools.reap_if_idle(*owner); // the last allocation of a destroyed pool
    return UR_RESULT_SUCCESS;
  });
}

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnUSMDeviceAllocExp = enqueueUSMDeviceAllocExp;
  t.EnqueueExp.pfnUSMSharedAllocExp = enqueueUSMSharedAllocExp;
  t.EnqueueExp.pfnUSMHostAllocExp = enqueueUSMHostAllocExp;
  t.EnqueueExp.pfnUSMFreeExp = enqueueUSMFreeExp;
}

} // namespace nc
