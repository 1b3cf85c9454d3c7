// Stream-ordered allocation: urEnqueueUSM{Device,Shared,Host}AllocExp and
// urEnqueueUSMFreeExp on the queue's stream.
//
// Default pools: the driver's native pool does the ordering: a block freed on one
// stream is reused by an allocation on another when it follows the free's event
// (through the wait list, which became cuStreamWaitEvent), when the free has
// completed, or by making the allocation wait for the free.
// User pools: the ordered pool core does it (ordered_core.hpp). Each stream is an
// in-order queue for the core; a free's release event is the free command's UR
// event, recorded before the core sees it, and an allocation's stream operations
// are issued after the core chose its block, so the core sees the commands of a
// stream in the order they enter it.
#include "common.hpp"
#include "entry_points.hpp"

namespace ordo::cuda {

namespace {

ur_result_t enqueue_alloc(MemKind kind, ur_command_t type, ur_queue_handle_t hQueue,
                          ur_usm_pool_handle_t pPool, size_t size,
                          const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                          const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (pProperties && (pProperties->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (kind == MemKind::shared && !q->dev->facts.managed) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  Pool *pool = nullptr;
  if (pPool) {
    ORDO_UNWRAP(Pool, p, pPool);
    if (p->ctx != q->ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
    if (p->dev && p->dev != q->dev && kind != MemKind::host) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (p->destroyed.load(std::memory_order_relaxed)) return UR_RESULT_ERROR_INVALID_VALUE;
    // A pool of the wrong kind of memory: the host pool for device memory, a
    // device pool for host memory.
    if (p->host_only != (kind == MemKind::host) && (p->host_only || p->dev))
      return UR_RESULT_ERROR_INVALID_VALUE;
    pool = p;
  } else if (ur_result_t r = pool_for_default(q->ctx, q->dev, kind, &pool)) {
    return r;
  }

  Command cmd(q, type, n, waits, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  void *ptr = nullptr;
  AllocOrder order;
  order.stream = cmd.stream();
  order.queue_id = q->stream_id(cmd.stream());
  order.wait_count = n;
  order.waits = waits;
  if (ur_result_t r = pool_alloc(pool, kind, q->dev, size, order, true, &ptr)) return r;
  if (ur_result_t r = cmd.finish()) {
    // No event for the caller: undo the allocation so nothing leaks.
    AllocRecord rec;
    if (q->ctx->allocs.take(ptr, &rec)) pool_free(q->ctx, rec, ptr, cmd.stream());
    return r;
  }
  *ppMem = ptr;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t UR_APICALL urEnqueueUSMDeviceAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                                  const size_t size,
                                                  const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                  uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList, void **ppMem,
                                                  ur_event_handle_t *phEvent) {
  return enqueue_alloc(MemKind::device, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP, hQueue, pPool, size,
                       pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMSharedAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                                  const size_t size,
                                                  const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                  uint32_t numEventsInWaitList,
                                                  const ur_event_handle_t *phEventWaitList, void **ppMem,
                                                  ur_event_handle_t *phEvent) {
  return enqueue_alloc(MemKind::shared, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP, hQueue, pPool, size,
                       pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMHostAllocExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                                const size_t size,
                                                const ur_exp_async_usm_alloc_properties_t *pProperties,
                                                uint32_t numEventsInWaitList,
                                                const ur_event_handle_t *phEventWaitList, void **ppMem,
                                                ur_event_handle_t *phEvent) {
  return enqueue_alloc(MemKind::host, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP, hQueue, pPool, size,
                       pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMFreeExp(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool,
                                           void *pMem, uint32_t numEventsInWaitList,
                                           const ur_event_handle_t *phEventWaitList,
                                           ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Pool *named = nullptr;
  if (pPool) {
    ORDO_UNWRAP(Pool, p, pPool);
    if (p->ctx != q->ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
    named = p;
  }
  Context *ctx = q->ctx;
  AllocRecord rec;
  // Not a live pooled block of this context (unknown, already freed, from a plain
  // urUSM*Alloc) or not from the pool named: refused, nothing changes.
  if (!ctx->allocs.find(pMem, &rec) || !rec.pool || (named && rec.pool != named))
    return UR_RESULT_ERROR_INVALID_MEM_OBJECT;

  if (!rec.pool->on_core) {
    Command cmd(q, UR_COMMAND_ENQUEUE_USM_FREE_EXP, numEventsInWaitList, phEventWaitList, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    // Another thread may have freed it since the check: only one take succeeds.
    if (!ctx->allocs.take(pMem, &rec)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    if (ur_result_t r = pool_free(ctx, rec, pMem, cmd.stream())) return r;
    return cmd.finish();
  }

  // A core pool needs the free's event as the block's release event, whether or
  // not the caller asked for it.
  ur_event_handle_t own = nullptr;
  ur_event_handle_t *out = phEvent ? phEvent : &own;
  CUstream stream = nullptr;
  {
    Command cmd(q, UR_COMMAND_ENQUEUE_USM_FREE_EXP, numEventsInWaitList, phEventWaitList, out);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    if (!ctx->allocs.take(pMem, &rec)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
    stream = cmd.stream();
    if (ur_result_t r = cmd.finish()) {
      ctx->allocs.insert(pMem, rec);
      return r;
    }
  }
  auto *release = reinterpret_cast<Event *>(*out);
  ur_result_t r = pool_free(ctx, rec, pMem, stream, release, q->stream_id(stream));
  if (own || r != UR_RESULT_SUCCESS) {
    // The core holds its own reference; ours (or the caller's, on failure) goes.
    if (release->release()) event_destroy(release);
    if (phEvent && r != UR_RESULT_SUCCESS) *phEvent = nullptr;
  }
  return r;
}

} // namespace ordo::cuda
