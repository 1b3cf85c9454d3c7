// Stream-ordered allocation: urEnqueueUSM{Device,Shared,Host}AllocExp and
// urEnqueueUSMFreeExp on the stream-ordered layer (docs/async-alloc.md, docs/level-zero.md).
//
// Each immediate command list is an in-order queue for the layer. An alloc and a free
// are commands on one list of the queue; the pool call happens in the same hold of
// that list's lock as the command's append, its event and its ordering record
// (Command), so the pool sees the allocs and frees of a list in the order they enter
// it, whatever the number of threads. Reuse rule 3 adds the free's event to the
// alloc's wait list; a zero-initialising pool's alloc is a fill of the block, any
// other alloc a barrier.
#include "common.hpp"
#include "entry_points.hpp"

namespace ordo::l0 {

namespace {

ur_result_t enqueue_alloc(ur_usm_type_t kind, ur_command_t type, ur_queue_handle_t hQueue,
                          ur_usm_pool_handle_t hPool, size_t size,
                          const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                          const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && (pProperties->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (ur_result_t r = check_wait_list(n, waits)) return r;
  ordo::so::context_pools &pools = *q->ctx->pools;
  auto device = reinterpret_cast<ur_device_handle_t>(q->dev);
  ordo::so::pool_ref pool; // declared before the command: let go outside its lock
  if (ur_result_t r = pools.resolve(hPool, kind, device, pool)) return r;

  Command cmd(q, type, n, waits, phEvent); // holds the list's lock from here
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  const ordo::so::alloc_command ac{cmd.identity(), true, waits, n, &cmd};
  ordo::so::allocation block;
  if (ur_result_t r = pools.alloc_in_command(pool, kind, device, size, ac, block)) return r;
  ur_result_t r = UR_RESULT_SUCCESS;
  const uint8_t zero = 0;
  if (block.needs_zero)
    r = check(ze().zeCommandListAppendMemoryFill(cmd.list(), block.ptr, &zero, 1, block.size, cmd.signal(),
                                                 cmd.num_waits(), cmd.waits()));
  else
    r = cmd.append_barrier();
  if ((r = cmd.finish(r))) {
    pools.cancel(pool, block); // no command for the caller: the pool is as before
    return r;
  }
  *ppMem = block.ptr;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t UR_APICALL urEnqueueUSMDeviceAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                                  const size_t size,
                                                  const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                  uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList, void **ppMem,
                                                  ur_event_handle_t *phEvent) {
  return enqueue_alloc(UR_USM_TYPE_DEVICE, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP, hQueue, pPool, size,
                       pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMSharedAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                                  const size_t size,
                                                  const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                  uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList, void **ppMem,
                                                  ur_event_handle_t *phEvent) {
  return enqueue_alloc(UR_USM_TYPE_SHARED, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP, hQueue, pPool, size,
                       pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMHostAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                                const size_t size,
                                                const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                uint32_t numEventsInWaitList,
                                                const ur_event_handle_t *phEventWaitList, void **ppMem,
                                                ur_event_handle_t *phEvent) {
  return enqueue_alloc(UR_USM_TYPE_HOST, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP, hQueue, pPool, size,
                       pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

// The free command's own event (made even when the caller asks for none) is the
// block's release event: a barrier after the wait list that signals it, handed to
// the pool in one hold of the list's lock.
ur_result_t UR_APICALL urEnqueueUSMFreeExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                           void *pMem, uint32_t numEventsInWaitList,
                                           const ur_event_handle_t *phEventWaitList,
                                           ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  ordo::so::context_pools &pools = *q->ctx->pools;
  ordo::so::pool_ref owner; // let go outside the list's lock
  // A live block's first byte, of a pool of this context (of pPool, if named):
  // refused before any command exists.
  if (ur_result_t r = pools.check_free(pPool, pMem, owner)) return r;
  ur_event_handle_t made = nullptr;
  ur_result_t r = UR_RESULT_SUCCESS;
  {
    Command cmd(q, UR_COMMAND_ENQUEUE_USM_FREE_EXP, numEventsInWaitList, phEventWaitList, &made);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    if ((r = cmd.finish(cmd.append_barrier(), /*keep_lock=*/true))) return r;
    // Fails only if another thread freed the block meanwhile (or host memory ran
    // out): the command then has no effect, and the caller gets no event for it.
    r = pools.free_in_command(owner, pMem, made, cmd.identity(), true);
  }
  auto *ev = reinterpret_cast<Event *>(made);
  if (r == UR_RESULT_SUCCESS && phEvent)
    *phEvent = made;
  else
    event_release(ev); // the pool holds its own reference
  return r;
}

} // namespace ordo::l0
