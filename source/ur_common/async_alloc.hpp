// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp on the
// stream-ordered layer, written once for adapters whose queue submits through a
// command object that holds one in-order lane's lock (the stream backend's streams,
// Level Zero's immediate command lists). The adapter says only what a command does:
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Queue = ...;    // has ctx->pools (context_pools *) and dev
//     using Command = ...;  // Command(q, type, n, waits, phEvent): takes the lane's lock;
//                           // status(), identity(), finish(r, keep_lock = false)
//     static ur_result_t check_wait_list(uint32_t, const ur_event_handle_t *);
//     static ur_result_t alloc_work(Command &, const ordo::so::allocation &);  // zeroing, if asked
//     static ur_result_t free_work(Command &);         // what orders the free after its waits
//     static void release_event(ur_event_handle_t);    // the adapter's reference to an event
//   };
//   Queue has `lanes` and an alloc_affinity `affinity` (handles.hpp); Command has lane(),
//   and Command(q, type, n, waits, phEvent, lane_hint) builds an alloc's command.
//
// The pool call happens in the same hold of the lane's lock as the command's work, its
// event and its ordering record, so the pool sees one lane's allocs and frees in the
// order they enter it (docs/async-alloc.md, docs/adapter-guide.md).
#pragma once

#include "ordo_so/layer.hpp"
#include "ur_ddi.h"

namespace ordo::uc {

template <class H> struct async_alloc {
  using Queue = typename H::Queue;
  using Command = typename H::Command;

  static ur_result_t alloc(ur_usm_type_t kind, ur_command_t type, ur_queue_handle_t hQueue,
                           ur_usm_pool_handle_t hPool, size_t size,
                           const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                           const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pProperties && (pProperties->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK))
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    if (ur_result_t r = H::check_wait_list(n, waits)) return r;
    ordo::so::context_pools &pools = *q->ctx->pools;
    auto device = reinterpret_cast<ur_device_handle_t>(q->dev);
    ordo::so::pool_ref pool; // declared before the command: let go outside its lock
    if (ur_result_t r = pools.resolve(hPool, kind, device, pool)) return r;

    Command cmd(q, type, n, waits, phEvent, q->affinity.lane_for(size, n, q->lanes.size())); // holds the lane's lock from here
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    const ordo::so::alloc_command ac{cmd.identity(), true, waits, n, &cmd};
    ordo::so::allocation block;
    if (ur_result_t r = pools.alloc_in_command(pool, kind, device, size, ac, block)) return r;
    if (ur_result_t r = cmd.finish(H::alloc_work(cmd, block))) {
      pools.cancel(pool, block); // no command for the caller: the pool is as before
      return r;
    }
    *ppMem = block.ptr;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL device(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                       const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                                       const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
    return alloc(UR_USM_TYPE_DEVICE, UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP, hQueue, pPool, size, pProperties, n,
                 waits, ppMem, phEvent);
  }
  static ur_result_t UR_APICALL shared(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                       const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                                       const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
    return alloc(UR_USM_TYPE_SHARED, UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP, hQueue, pPool, size, pProperties, n,
                 waits, ppMem, phEvent);
  }
  static ur_result_t UR_APICALL host(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, const size_t size,
                                     const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                                     const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
    return alloc(UR_USM_TYPE_HOST, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP, hQueue, pPool, size, pProperties, n,
                 waits, ppMem, phEvent);
  }

  // The free command's own event (made even when the caller asks for none) is the
  // block's release event, handed to the pool in the same hold of the lane's lock.
  static ur_result_t UR_APICALL free(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, void *pMem, uint32_t n,
                                     const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = H::check_wait_list(n, waits)) return r;
    ordo::so::context_pools &pools = *q->ctx->pools;
    ordo::so::pool_ref owner; // let go outside the lane's lock
    // Memory of a pool of this context (of pPool, if named): refused before any
    // command exists. Whether it is a live block's first byte the core answers once,
    // in free_in_command: a refused free's command only ordered, and is forgotten.
    if (ur_result_t r = pools.find_owner(pPool, pMem, owner)) return r;
    ur_event_handle_t made = nullptr;
    ur_result_t r = UR_RESULT_SUCCESS;
    {
      Command cmd(q, UR_COMMAND_ENQUEUE_USM_FREE_EXP, n, waits, &made);
      if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
      if ((r = cmd.finish(H::free_work(cmd), /*keep_lock=*/true))) return r;
      // Fails for memory that is not a live block's first byte (a double free, an
      // interior pointer, a block another thread freed meanwhile) or when host memory
      // runs out: the command then has no effect, and the caller gets no event for it.
      size_t bytes = 0;
      r = pools.free_in_command(owner, pMem, made, cmd.identity(), true, &bytes);
      if (r == UR_RESULT_SUCCESS) q->affinity.freed(cmd.lane(), bytes, q->lanes.size());
    }
    if (r == UR_RESULT_SUCCESS && phEvent)
      *phEvent = made;
    else
      H::release_event(made); // the pool holds its own reference
    return r;
  }

  // The four slots of ur_dditable_t::EnqueueExp.
  static void install(ur_dditable_t &t) {
    t.EnqueueExp.pfnUSMDeviceAllocExp = device;
    t.EnqueueExp.pfnUSMSharedAllocExp = shared;
    t.EnqueueExp.pfnUSMHostAllocExp = host;
    t.EnqueueExp.pfnUSMFreeExp = free;
  }
};

} // namespace ordo::uc
