// SPDX-License-Identifier: Apache-2.0
// Queues: made, counted, asked about, finished, released; they hold their context. No
// command can be enqueued yet (every urEnqueue* is UNSUPPORTED_FEATURE), so finish and
// flush have nothing to wait for. Replace: your driver's queue (a stream, a command
// list) in Queue, its creation and destruction, and finish()/flush(); then add events
// and commands (docs/adapter-guide.md, "Three ways in").
#include <new>

#include "common.hpp"
#include "ordo/info.hpp"
#include "ordo/queue_rules.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_common/queue.hpp"

namespace ordo::template_adapter {

namespace {

struct Queue : object {
  static constexpr handle_kind kKind = handle_kind::queue;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_QUEUE;
  Queue() : object(kKind) {}
  Context *ctx = nullptr; // held: a queue keeps its context alive
  Device *dev = nullptr;
  ur_queue_flags_t flags = 0;
};
ORDO_HANDLE_CHECK(Queue);

ur_result_t UR_APICALL urQueueCreate(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                     const ur_queue_properties_t *pProperties, ur_queue_handle_t *phQueue) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  // The rules every adapter keeps (ordo/queue_rules.hpp): no device-side queues, one
  // compute queue index. Say what your backend has in ordo::queue_capabilities.
  if (ur_result_t r = ordo::check_queue_properties(pProperties)) return r;
  const ur_queue_flags_t flags = pProperties ? pProperties->flags : 0;
  // Then this backend's own: only what UR_DEVICE_INFO_QUEUE_PROPERTIES offers (nothing
  // yet) beyond the hints any queue may ignore.
  if (flags & (UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  auto *q = new (std::nothrow) Queue();
  if (!q) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  q->ctx = ctx;
  q->dev = dev;
  q->flags = flags;
  ctx->hold();
  *phQueue = reinterpret_cast<ur_queue_handle_t>(q);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueRetain(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!q->retain_user()) return ordo::invalid_of(q);
  return UR_RESULT_SUCCESS;
}

// The user's last release: the queue's work would be finished here, then its holders
// let go (commands in flight would hold it too), and the handle retired.
ur_result_t UR_APICALL urQueueRelease(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  bool last_ = false;
  if (!q->release_user(last_)) return ordo::invalid_of(q);
  if (!last_) return UR_RESULT_SUCCESS;
  ordo::ur_common::drop_queue(q);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueGetInfo(ur_queue_handle_t hQueue, ur_queue_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Queue, q, hQueue);
  return ordo::ur_common::queue_info(q, propName, propSize, pPropValue, pPropSizeRet, [](bool &empty) {
    empty = true; // nothing can be enqueued yet
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  (void)q; // wait for the queue's commands here
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueFlush(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  (void)q; // hand the queue's batched commands to the device here
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueGetNativeHandle(ur_queue_handle_t hQueue, ur_queue_native_desc_t *,
                                              ur_native_handle_t *phNative) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNative = reinterpret_cast<ur_native_handle_t>(q); // your driver's queue
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_queue_entry_points(ur_dditable_t &t) {
  t.Queue.pfnCreate = urQueueCreate;
  t.Queue.pfnRetain = urQueueRetain;
  t.Queue.pfnRelease = urQueueRelease;
  t.Queue.pfnGetInfo = urQueueGetInfo;
  t.Queue.pfnFinish = urQueueFinish;
  t.Queue.pfnFlush = urQueueFlush;
  t.Queue.pfnGetNativeHandle = urQueueGetNativeHandle;
}

} // namespace ordo::template_adapter
