// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp: stream-ordered
// allocation on the ordered pool core. An alloc or free command is a marker
// (clEnqueueMarkerWithWaitList) carrying the command's wait list, plus whatever
// internal dependencies the pool adds; its event is the command's event, and a
// free's event is the release event the pool waits on before reusing the block.
#include <mutex>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "usm.hpp"
#include "usm_pool.hpp"

namespace ordo::ocl {
namespace {

ur_command_t alloc_command(ur_usm_type_t kind) {
  switch (kind) {
  case UR_USM_TYPE_HOST: return UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP;
  case UR_USM_TYPE_SHARED: return UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP;
  default: return UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP;
  }
}

// Holds the queue's submission lock for in-order queues only (the pool ignores
// queue order for out-of-order ones).
class SubmitLock {
public:
  explicit SubmitLock(ur_queue_handle_t q) : q_(q) {
    if (q_->in_order) q_->submit_mutex.lock();
  }
  ~SubmitLock() {
    if (q_->in_order) q_->submit_mutex.unlock();
  }
  SubmitLock(const SubmitLock &) = delete;
  SubmitLock &operator=(const SubmitLock &) = delete;

private:
  ur_queue_handle_t q_;
};

ur_result_t enqueue_alloc(ur_queue_handle_t q, ur_usm_pool_handle_t pPool, ur_usm_type_t kind, size_t size,
                          const ur_exp_async_usm_alloc_properties_t *props, uint32_t n, const ur_event_handle_t *list,
                          void **ppMem, ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(q, queue, UR_RESULT_ERROR_INVALID_QUEUE);
  ORDO_CHECK_PTR(ppMem);
  if (props && (props->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_wait_list(n, list)) return r;
  ClWaitList waits;
  if (ur_result_t r = waits.assign(n, list)) return r;
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  ur_context_handle_t c = q->context;
  ur_device_handle_t d = q->device;
  if (!d->async_alloc_supported()) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (size > d->max_alloc) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (!usm_kind_supported(c, kind, d)) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

  // No pool: the device's current pool, or the context's host pool for host memory.
  ur_result_t err = UR_RESULT_SUCCESS;
  ur_usm_pool_handle_t pool = pPool;
  if (!pool) {
    pool = kind == UR_USM_TYPE_HOST ? c->pools->host_pool(err) : c->pools->current_pool(d, err);
    if (!pool) return err;
  } else {
    ORDO_CHECK_HANDLE(pool, pool, UR_RESULT_ERROR_INVALID_VALUE);
    if (pool->context != c) return UR_RESULT_ERROR_INVALID_CONTEXT;
    // Destroyed by the user (no references left), alive only for its live blocks.
    if (!pool->is_default && pool->ref_count.load(std::memory_order_acquire) == 0)
      return UR_RESULT_ERROR_INVALID_VALUE;
  }
  PoolCore *core = pool->core_for(kind, d, err);
  if (!core) return err;

  CommandDeps deps;
  deps.waits = &waits;
  ordo::pool::alloc_request req;
  req.size = size;
  req.queue = q;
  req.in_order = q->in_order;
  req.wait_list = reinterpret_cast<const ordo::pool::event_handle *>(list);
  req.wait_count = n;
  req.command = &deps;
  ordo::pool::alloc_result res;
  cl_event ev = nullptr;
  cl_int cl_err = CL_SUCCESS;
  {
    SubmitLock lock(q);
    ordo::pool::status s = core->pool().alloc(req, res);
    if (s != ordo::pool::status::success) {
      for (ur_event_handle_t e : deps.held) event_unhold(e);
      return to_ur(s, kind);
    }
    // The alloc command: a zero fill where the pool asks for one, else a marker. None is
    // needed when it waits for nothing and nobody asked for its event: the memory is
    // ready at once.
    if (res.needs_zero) {
      unsigned char zero = 0;
      cl_err = usm_enqueue_fill(q, res.ptr, &zero, 1, size, waits.size(), waits.data(), &ev);
    } else if (phEvent || waits.size()) {
      cl_err = cl.clEnqueueMarkerWithWaitList(q->cl, waits.size(), waits.data(), &ev);
    }
    if (cl_err != CL_SUCCESS) core->pool().free_now(res.ptr); // the command never existed
  }
  for (ur_event_handle_t e : deps.held) event_unhold(e);
  if (cl_err != CL_SUCCESS) return to_ur(cl_err);

  c->usm.insert(UsmAllocation{res.ptr, size, kind, kind == UR_USM_TYPE_HOST ? nullptr : d, pool, nullptr});
  pool_hold(pool);
  *ppMem = res.ptr;
  if (!ev) return UR_RESULT_SUCCESS; // no command was needed
  return return_event(q, alloc_command(kind), ev, phEvent);
}

ur_result_t UR_APICALL EnqueueUSMDeviceAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                                const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                                void **ppMem, ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, UR_USM_TYPE_DEVICE, size, pProperties, numEventsInWaitList, phEventWaitList,
                       ppMem, phEvent);
}

ur_result_t UR_APICALL EnqueueUSMSharedAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                                const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                                void **ppMem, ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, UR_USM_TYPE_SHARED, size, pProperties, numEventsInWaitList, phEventWaitList,
                       ppMem, phEvent);
}

ur_result_t UR_APICALL EnqueueUSMHostAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                              const ur_exp_async_usm_alloc_properties_t *pProperties,
                                              uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                              void **ppMem, ur_event_handle_t *phEvent) {
  return enqueue_alloc(hQueue, pPool, UR_USM_TYPE_HOST, size, pProperties, numEventsInWaitList, phEventWaitList,
                       ppMem, phEvent);
}

ur_result_t UR_APICALL EnqueueUSMFreeExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, void *pMem,
                                         uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                         ur_event_handle_t *phEvent) {
  ORDO_CHECK_HANDLE(hQueue, queue, UR_RESULT_ERROR_INVALID_QUEUE);
  ORDO_CHECK_PTR(pMem);
  if (ur_result_t r = check_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  ClWaitList waits;
  if (ur_result_t r = waits.assign(numEventsInWaitList, phEventWaitList)) return r;
  if (pPool) ORDO_CHECK_HANDLE(pPool, pool, UR_RESULT_ERROR_INVALID_VALUE);
  ur_context_handle_t c = hQueue->context;
  if (pPool && pPool->context != c) return UR_RESULT_ERROR_INVALID_CONTEXT;

  // Only the first byte of a live stream-ordered block of this context (and of the
  // pool named, if one is) can be freed here.
  UsmAllocation a;
  if (!c->usm.find(pMem, a) || a.base != pMem || !a.pool || (pPool && pPool != a.pool))
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  ur_result_t err = UR_RESULT_SUCCESS;
  PoolCore *core = a.pool->core_for(a.type, a.device, err);
  if (!core) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  // Claim the block: a second free of it, from any thread, now fails here.
  if (!c->usm.erase(pMem)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;

  ur_event_handle_t freed = nullptr;
  {
    std::lock_guard<std::mutex> lock(hQueue->submit_mutex);
    uint64_t now = hQueue->commands.load(std::memory_order_relaxed);
    if (!phEvent && numEventsInWaitList == 0 && hQueue->last_free && hQueue->last_free_at == now) {
      // Nothing was enqueued since the last free's marker: it completes when this
      // free's would, so it is this block's release event too.
      freed = hQueue->last_free;
      freed->retain();
      freed->hold();
    } else {
      cl_event ev = nullptr;
      cl_int cl_err = cl.clEnqueueMarkerWithWaitList(hQueue->cl, waits.size(), waits.data(), &ev);
      ur_result_t r = cl_err == CL_SUCCESS ? make_event(hQueue, UR_COMMAND_ENQUEUE_USM_FREE_EXP, ev, &freed) : to_ur(cl_err);
      if (r != UR_RESULT_SUCCESS) {
        c->usm.insert(a);
        return r;
      }
      if (numEventsInWaitList == 0) {
        if (hQueue->last_free) event_unhold(hQueue->last_free);
        freed->hold(); // the queue's
        hQueue->last_free = freed;
        hQueue->last_free_at = now;
      }
    }
    // The free's event is the block's release event; the pool keeps it alive.
    ordo::pool::status s = core->pool().free(pMem, ordo::pool::release_info{freed, hQueue, hQueue->in_order});
    if (s != ordo::pool::status::success) {
      // Cannot happen for a block the registry held, but leave nothing changed if it does.
      c->usm.insert(a);
      freed->release();
      event_unhold(freed);
      return to_ur(s, a.type);
    }
  }
  pool_unhold(a.pool); // one live allocation fewer; a destroyed pool may go now
  if (phEvent) {
    *phEvent = freed;
  } else {
    freed->release();
    event_unhold(freed);
  }
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_async_alloc_table(ur_dditable_t &t) {
  t.EnqueueExp.pfnUSMDeviceAllocExp = EnqueueUSMDeviceAllocExp;
  t.EnqueueExp.pfnUSMSharedAllocExp = EnqueueUSMSharedAllocExp;
  t.EnqueueExp.pfnUSMHostAllocExp = EnqueueUSMHostAllocExp;
  t.EnqueueExp.pfnUSMFreeExp = EnqueueUSMFreeExp;
}

} // namespace ordo::ocl
