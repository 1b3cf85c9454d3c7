// SPDX-License-Identifier: Apache-2.0
// Queue bookkeeping written once for the adapters whose queues are lanes on one device
// (Level Zero, the stream backend) or one driver queue (OpenCL): the holder drop,
// urQueueGetInfo, and the urQueue* entry points up to where the adapter's queue comes in.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ordo/queue_rules.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_api.h"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// Drops one holder of a queue; the last retires it and drops its holder of the context
// (`context_drop`, the adapter's, found by argument-dependent lookup).
template <class Queue> void drop_queue(Queue *q) {
  if (!q->drop()) return;
  auto *ctx = q->ctx;
  ordo::retire(q);
  context_drop(ctx);
}

// urQueueGetInfo once the queue is known; `is_empty(bool &)` answers
// UR_QUEUE_INFO_EMPTY (or fails with the driver's error).
template <class Queue, class IsEmpty>
ur_result_t queue_info(Queue *q, ur_queue_info_t propName, size_t propSize, void *pPropValue, size_t *pPropSizeRet,
                       IsEmpty is_empty) {
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_QUEUE_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(q->ctx));
  case UR_QUEUE_INFO_DEVICE: return out.value(reinterpret_cast<ur_device_handle_t>(q->dev));
  case UR_QUEUE_INFO_FLAGS: return out.value(q->flags);
  case UR_QUEUE_INFO_REFERENCE_COUNT: return out.value(q->count());
  case UR_QUEUE_INFO_EMPTY: {
    bool empty = true;
    if (ur_result_t r = is_empty(empty)) return r;
    return out.boolean(empty);
  }
  case UR_QUEUE_INFO_DEVICE_DEFAULT:
  case UR_QUEUE_INFO_SIZE: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // device-side queues
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

// A new queue of `ctx` on `dev` with `flags`, its lanes not made yet.
template <class Queue, class Context, class Device>
Queue *new_queue(Context *ctx, Device *dev, ur_queue_flags_t flags) {
  auto *q = new Queue();
  q->ctx = ctx;
  q->dev = dev;
  q->flags = flags;
  q->in_order = !(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  q->profiling = (flags & UR_QUEUE_FLAG_PROFILING_ENABLE) != 0;
  return q;
}

// The urQueue* entry points. A hooks struct `H` gives:
//
//   using Context = ...; using Device = ...; using Queue = ...;
//   // The queue's lanes and its handle, once the arguments are checked.
//   static ur_result_t create(Context *, Device *, ur_queue_flags_t, ur_queue_handle_t *);
//   // `Device` null when the caller names none.
//   static ur_result_t create_with_native_handle(Context *, ur_native_handle_t, Device *,
//                                                const ur_queue_native_properties_t *, ur_queue_handle_t *);
//   // The user's last reference went: finish the work, let the lanes go, drop_queue.
//   static ur_result_t release_last(Queue *);
//   static ur_result_t is_empty(Queue *, bool &);      // UR_QUEUE_INFO_EMPTY
//   static ur_native_handle_t native_handle(Queue *, ur_queue_native_desc_t *);
//   static ur_result_t finish(Queue *);                // waits for every lane
//
// Optional hooks, where an adapter's queues differ (OpenCL's):
//
//   // Device-side queues offered, under the adapter's own rules (checked in create).
//   static ordo::queue_capabilities capabilities();
//   // UR_QUEUE_INFO_DEVICE_DEFAULT and _SIZE, answered before any other check of the query.
//   static ur_result_t device_queue_info(Queue *, ur_queue_info_t, InfoWriter &);
//   // In place of create_with_native_handle, for an adapter that reads the native queue
//   // before it checks hDevice (unchecked here), as it finds the device from it.
//   static ur_result_t from_native(Context *, ur_native_handle_t, ur_device_handle_t,
//                                 const ur_queue_native_properties_t *, ur_queue_handle_t *);
//   static ur_result_t flush(Queue *);                 // a driver that submits on flush
//   static void reap();                                // after finish's pool sync point
template <class H, class = void> struct queue_has_capabilities : std::false_type {};
template <class H> struct queue_has_capabilities<H, std::void_t<decltype(&H::capabilities)>> : std::true_type {};
template <class H, class = void> struct queue_has_device_queue_info : std::false_type {};
template <class H>
struct queue_has_device_queue_info<H, std::void_t<decltype(&H::device_queue_info)>> : std::true_type {};
template <class H, class = void> struct queue_has_from_native : std::false_type {};
template <class H> struct queue_has_from_native<H, std::void_t<decltype(&H::from_native)>> : std::true_type {};
template <class H, class = void> struct queue_has_flush : std::false_type {};
template <class H> struct queue_has_flush<H, std::void_t<decltype(&H::flush)>> : std::true_type {};

template <class H> struct queue_entry_points {
  using Context = typename H::Context;
  using Device = typename H::Device;
  using Queue = typename H::Queue;

  static ur_result_t UR_APICALL create(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                       const ur_queue_properties_t *pProperties, ur_queue_handle_t *phQueue) {
    ORDO_UNWRAP(Context, ctx, hContext);
    ORDO_UNWRAP(Device, dev, hDevice);
    if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    if constexpr (queue_has_capabilities<H>::value) {
      if (ur_result_t r = ordo::check_queue_properties(pProperties, H::capabilities())) return r;
    } else {
      // Device-side enqueue does not exist here; one compute queue index per device.
      if (ur_result_t r = ordo::check_queue_properties(pProperties)) return r;
    }
    return H::create(ctx, dev, pProperties ? pProperties->flags : 0, phQueue);
  }

  static ur_result_t UR_APICALL create_with_native_handle(ur_native_handle_t hNativeQueue, ur_context_handle_t hContext,
                                                          ur_device_handle_t hDevice,
                                                          const ur_queue_native_properties_t *pProperties,
                                                          ur_queue_handle_t *phQueue) {
    ORDO_UNWRAP(Context, ctx, hContext);
    if constexpr (queue_has_from_native<H>::value) {
      return H::from_native(ctx, hNativeQueue, hDevice, pProperties, phQueue);
    } else {
      Device *dev = nullptr; // optional
      if (hDevice)
        if (ur_result_t r = ordo::unwrap(hDevice, dev)) return r;
      return H::create_with_native_handle(ctx, hNativeQueue, dev, pProperties, phQueue);
    }
  }

  static ur_result_t UR_APICALL release(ur_queue_handle_t hQueue) {
    ORDO_UNWRAP(Queue, q, hQueue);
    bool last = false;
    if (!q->release_user(last)) return ordo::invalid_of(q);
    return last ? H::release_last(q) : UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_info(ur_queue_handle_t hQueue, ur_queue_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
    ORDO_UNWRAP(Queue, q, hQueue);
    if constexpr (queue_has_device_queue_info<H>::value) {
      if (propName == UR_QUEUE_INFO_DEVICE_DEFAULT || propName == UR_QUEUE_INFO_SIZE) {
        InfoWriter out(propSize, pPropValue, pPropSizeRet);
        return H::device_queue_info(q, propName, out);
      }
    }
    return queue_info(q, propName, propSize, pPropValue, pPropSizeRet,
                      [q](bool &empty) { return H::is_empty(q, empty); });
  }

  // An out-of-order queue has several lanes; the first stands for the queue.
  static ur_result_t UR_APICALL get_native_handle(ur_queue_handle_t hQueue, ur_queue_native_desc_t *pDesc,
                                                  ur_native_handle_t *phNativeQueue) {
    ORDO_UNWRAP(Queue, q, hQueue);
    if (!phNativeQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    *phNativeQueue = H::native_handle(q, pDesc);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL finish(ur_queue_handle_t hQueue) {
    ORDO_UNWRAP(Queue, q, hQueue);
    if (ur_result_t r = H::finish(q)) return r;
    // A synchronisation point: pools collect completed frees and give back memory
    // above their release thresholds.
    q->ctx->pools->sync_point();
    reap_parked<H>();
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL flush(ur_queue_handle_t hQueue) {
    ORDO_UNWRAP(Queue, q, hQueue);
    if constexpr (queue_has_flush<H>::value) return H::flush(q);
    (void)q; // lanes (immediate lists, streams) submit as they are fed
    return UR_RESULT_SUCCESS;
  }

  static void install(ur_dditable_t &t) {
    t.Queue.pfnGetInfo = get_info;
    t.Queue.pfnCreate = create;
    t.Queue.pfnRetain = retain_user_handle<Queue, ur_queue_handle_t>;
    t.Queue.pfnRelease = release;
    t.Queue.pfnGetNativeHandle = get_native_handle;
    t.Queue.pfnCreateWithNativeHandle = create_with_native_handle;
    t.Queue.pfnFinish = finish;
    t.Queue.pfnFlush = flush;
  }
};

} // namespace ordo::ur_common
