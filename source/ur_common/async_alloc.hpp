// SPDX-License-Identifier: Apache-2.0
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
//     static ur_result_t alloc_work(Command &, const ordo::stream_ordered::allocation &);  // zeroing, if asked
//     static ur_result_t free_work(Command &);         // what orders the free after its waits
//     static void release_event(ur_event_handle_t);    // the adapter's reference to an event
//   };
//   Queue has `lanes` and an alloc_affinity `affinity` (handles.hpp); Command has lane(),
//   and Command(q, type, n, waits, phEvent, lane_hint) builds an alloc's command.
//
// Optional, for an adapter whose stream-ordered calls may need no command at all (native
// CPU, docs/native-cpu.md "Performance"); each has a default that the others keep:
//   queue_context(Queue *), queue_device(Queue *): found by argument-dependent lookup,
//     in place of q->ctx and q->dev;
//   Queue without `lanes`/`affinity`: no lane hints;
//   Command::in_order(): whether the pool may treat the command's queue as in order
//     (default true: each lane is); Command::freed(): a free's pool call succeeded;
//   static size_t H::max_alloc(const Device *) of the queue's device
//     (UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE): larger allocs are INVALID_USM_SIZE, as
//     urUSM*Alloc answers them;
//   static bool H::fast_free(Queue *, ur_usm_pool_handle_t, void *, uint32_t n,
//     ur_event_handle_t *phEvent, ur_result_t &r): true when it freed (or refused, in r)
//     the memory with no command, after the argument checks and before any pool lookup.
// Optional, for an adapter that checks more than the size or shares events (OpenCL,
// docs/opencl.md "Allocs and frees without OpenCL commands"):
//   static ur_result_t H::check_wait_list(Queue *, uint32_t, const ur_event_handle_t *):
//     in place of the two-argument one, for a check that needs the queue (its context);
//   static ur_result_t H::check_alloc(Queue *, ur_usm_type_t, size_t size, uint32_t n,
//     const ur_event_handle_t *waits): the wait list, the size and the queue's device
//     checked in the adapter's own order, in place of the size, max_alloc and wait-list
//     checks, before the pool lookup;
//   static bool H::free_in_lock(Command &, context_pools &, ur_usm_pool_handle_t, void *,
//     ur_event_handle_t *phEvent, pool_ref &owner, ur_result_t &r): under the free
//     Command's lock, before its work and in place of find_owner: true when it freed
//     (or refused, in r) the memory with no command; false with `owner` found.
// An alloc's Command may defer the lane's lock to finish() (native CPU does for an alloc
// that waits for nothing and whose event nobody asked for): then the pool call runs
// before any command exists, and finish() makes one only if the block needs it.
// finish() with a failed result returns it still holding the lock, so that a failed
// alloc's block goes back to the pool in the same hold.
//
// The pool call happens in the same hold of the lane's lock as the command's work, its
// event and its ordering record, so the pool sees one lane's allocs and frees in the
// order they enter it (docs/async-alloc.md, docs/adapter-guide.md).
#pragma once

#include <type_traits>

#include "ordo_so/layer.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// The defaults of the optional hooks above.
template <class Q> auto queue_context(Q *q) -> std::decay_t<decltype(q->ctx)> { return q->ctx; }
template <class Q> auto queue_device(Q *q) -> std::decay_t<decltype(q->dev)> { return q->dev; }
template <class Q, class = void> struct has_lanes : std::false_type {};
template <class Q>
struct has_lanes<Q, std::void_t<decltype(std::declval<Q &>().affinity), decltype(std::declval<Q &>().lanes)>>
    : std::true_type {};
template <class C, class = void> struct has_in_order : std::false_type {};
template <class C> struct has_in_order<C, std::void_t<decltype(std::declval<C &>().in_order())>> : std::true_type {};
template <class C, class = void> struct has_freed : std::false_type {};
template <class C> struct has_freed<C, std::void_t<decltype(std::declval<C &>().freed())>> : std::true_type {};
template <class H, class Q, class = void> struct has_device_max_alloc : std::false_type {};
template <class H, class Q>
struct has_device_max_alloc<H, Q, std::void_t<decltype(H::max_alloc(queue_device(std::declval<Q *>())))>>
    : std::true_type {};
template <class H, class = void> struct has_fast_free : std::false_type {};
template <class H>
struct has_fast_free<
    H, std::void_t<decltype(H::fast_free(nullptr, nullptr, nullptr, 0, nullptr, std::declval<ur_result_t &>()))>>
    : std::true_type {};
template <class H, class Q, class = void> struct has_queue_wait_check : std::false_type {};
template <class H, class Q>
struct has_queue_wait_check<H, Q, std::void_t<decltype(H::check_wait_list(std::declval<Q *>(), 0, nullptr))>>
    : std::true_type {};
template <class H, class Q, class = void> struct has_check_alloc : std::false_type {};
template <class H, class Q>
struct has_check_alloc<H, Q,
                       std::void_t<decltype(H::check_alloc(std::declval<Q *>(), UR_USM_TYPE_HOST, 0, 0, nullptr))>>
    : std::true_type {};
template <class H, class C, class = void> struct has_free_in_lock : std::false_type {};
template <class H, class C>
struct has_free_in_lock<
    H, C,
    std::void_t<decltype(H::free_in_lock(std::declval<C &>(), std::declval<ordo::stream_ordered::context_pools &>(),
                                         nullptr, nullptr, nullptr, std::declval<ordo::stream_ordered::pool_ref &>(),
                                         std::declval<ur_result_t &>()))>> : std::true_type {};

template <class H> struct async_alloc {
  using Queue = typename H::Queue;
  using Command = typename H::Command;

  static ur_result_t alloc(ur_usm_type_t kind, ur_command_t type, ur_queue_handle_t hQueue, ur_usm_pool_handle_t hPool,
                           size_t size, const ur_exp_async_usm_alloc_properties_t *pProperties, uint32_t n,
                           const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pProperties && (pProperties->flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK))
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if constexpr (has_check_alloc<H, Queue>::value) {
      if (ur_result_t r = H::check_alloc(q, kind, size, n, waits)) return r;
    } else {
      if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
      if constexpr (has_device_max_alloc<H, Queue>::value)
        if (size > H::max_alloc(queue_device(q))) return UR_RESULT_ERROR_INVALID_USM_SIZE;
      if (ur_result_t r = check_wait_list(q, n, waits)) return r;
    }
    ordo::stream_ordered::context_pools &pools = *queue_context(q)->pools;
    auto device = reinterpret_cast<ur_device_handle_t>(queue_device(q));
    ordo::stream_ordered::pool_ref pool; // declared before the command: let go outside its lock
    if (ur_result_t r = pools.resolve(hPool, kind, device, pool)) return r;
    const uint64_t epoch = pools.quarantine_epoch();
    const ur_result_t r = alloc_in_command(q, kind, type, pools, pool, size, n, waits, ppMem, phEvent);
    if (__builtin_expect(r == UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || r == UR_RESULT_ERROR_OUT_OF_HOST_MEMORY, 0))
      return alloc_after_quarantine(r, epoch, q, kind, type, pools, pool, size, n, waits, ppMem, phEvent);
    return r;
  }

  // Out of memory with freed plain allocations in the quarantine: they go back to the
  // backend, outside the lane's lock (a driver's free may wait for the device), and the
  // alloc tries once more (docs/async-alloc.md, "Freed memory"); so it does when another
  // thread gave them back since `epoch`, read before the alloc.
  [[gnu::noinline, gnu::cold]] static ur_result_t
  alloc_after_quarantine(ur_result_t r, uint64_t epoch, Queue *q, ur_usm_type_t kind, ur_command_t type,
                         ordo::stream_ordered::context_pools &pools, ordo::stream_ordered::pool_ref &pool, size_t size,
                         uint32_t n, const ur_event_handle_t *waits, void **ppMem, ur_event_handle_t *phEvent) {
    if (!pools.empty_quarantine(epoch)) return r;
    return alloc_in_command(q, kind, type, pools, pool, size, n, waits, ppMem, phEvent);
  }

  // The command and the pool's block, in one hold of the lane's lock; on failure neither.
  [[gnu::always_inline]] static ur_result_t alloc_in_command(Queue *q, ur_usm_type_t kind, ur_command_t type,
                                                             ordo::stream_ordered::context_pools &pools,
                                                             ordo::stream_ordered::pool_ref &pool, size_t size,
                                                             uint32_t n, const ur_event_handle_t *waits, void **ppMem,
                                                             ur_event_handle_t *phEvent) {
    auto device = reinterpret_cast<ur_device_handle_t>(queue_device(q));
    lane_hint hint;
    if constexpr (has_lanes<Queue>::value) hint = q->affinity.lane_for(size, n, q->lanes.size());
    Command cmd(q, type, n, waits, phEvent, hint); // holds the lane's lock from here (or defers it)
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    bool in_order = true;
    if constexpr (has_in_order<Command>::value) in_order = cmd.in_order();
    const ordo::stream_ordered::alloc_command ac{cmd.identity(), in_order, waits, n, &cmd};
    ordo::stream_ordered::allocation block;
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
    return alloc(UR_USM_TYPE_HOST, UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP, hQueue, pPool, size, pProperties, n, waits,
                 ppMem, phEvent);
  }

  // The free command's own event (made even when the caller asks for none) is the
  // block's release event, handed to the pool in the same hold of the lane's lock.
  static ur_result_t UR_APICALL free(ur_queue_handle_t hQueue, ur_usm_pool_handle_t pPool, void *pMem, uint32_t n,
                                     const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = check_wait_list(q, n, waits)) return r;
    if constexpr (has_fast_free<H>::value) {
      ur_result_t r = UR_RESULT_SUCCESS;
      if (H::fast_free(q, pPool, pMem, n, phEvent, r)) return r;
    }
    ordo::stream_ordered::context_pools &pools = *queue_context(q)->pools;
    ordo::stream_ordered::pool_ref owner; // let go outside the lane's lock
    // Memory of a pool of this context (of pPool, if named): refused before any
    // command exists. Whether it is a live block's first byte the core answers once,
    // in free_in_command: a refused free's command only ordered, and is forgotten.
    constexpr bool in_lock = has_free_in_lock<H, Command>::value;
    if constexpr (!in_lock)
      if (ur_result_t r = pools.find_owner(pPool, pMem, owner)) return r;
    ur_event_handle_t made = nullptr;
    ur_result_t r = UR_RESULT_SUCCESS;
    {
      Command cmd(q, UR_COMMAND_ENQUEUE_USM_FREE_EXP, n, waits, &made);
      if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
      if constexpr (in_lock)
        if (H::free_in_lock(cmd, pools, pPool, pMem, phEvent, owner, r)) return r;
      if ((r = cmd.finish(H::free_work(cmd), /*keep_lock=*/true))) return r;
      // Fails for memory that is not a live block's first byte (a double free, an
      // interior pointer, a block another thread freed meanwhile) or when host memory
      // runs out: the command then has no effect, and the caller gets no event for it.
      size_t bytes = 0;
      bool in_order = true;
      if constexpr (has_in_order<Command>::value) in_order = cmd.in_order();
      r = pools.free_in_command(owner, pMem, made, cmd.identity(), in_order, &bytes);
      if (r == UR_RESULT_SUCCESS) {
        if constexpr (has_lanes<Queue>::value) q->affinity.freed(cmd.lane(), bytes, q->lanes.size());
        if constexpr (has_freed<Command>::value) cmd.freed();
      }
    }
    if (r == UR_RESULT_SUCCESS && phEvent)
      *phEvent = made;
    else
      H::release_event(made); // the pool holds its own reference
    return r;
  }

  static ur_result_t check_wait_list(Queue *q, uint32_t n, const ur_event_handle_t *waits) {
    if constexpr (has_queue_wait_check<H, Queue>::value)
      return H::check_wait_list(q, n, waits);
    else
      return H::check_wait_list(n, waits);
  }

  // The four slots of ur_dditable_t::EnqueueExp.
  static void install(ur_dditable_t &t) {
    t.EnqueueExp.pfnUSMDeviceAllocExp = device;
    t.EnqueueExp.pfnUSMSharedAllocExp = shared;
    t.EnqueueExp.pfnUSMHostAllocExp = host;
    t.EnqueueExp.pfnUSMFreeExp = free;
  }
};

} // namespace ordo::ur_common
