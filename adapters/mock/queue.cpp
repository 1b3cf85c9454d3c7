// SPDX-License-Identifier: Apache-2.0
// Mock queues: every command completes when it is enqueued, so Flush and Finish have
// nothing to wait for.
#include "mock.hpp"

namespace mock {
namespace {

ur_result_t check(ur_queue_handle_t h) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_queue_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_QUEUE;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueCreate(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                     const ur_queue_properties_t *pProperties, ur_queue_handle_t *phQueue) {
  if (!hContext || !hDevice) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!live<ur_context_handle_t_>(hContext)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!live<ur_device_handle_t_>(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  const ur_queue_flags_t flags = pProperties ? pProperties->flags : 0;
  if (flags & UR_QUEUE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  hContext->retain(); // a queue keeps its context alive
  *phQueue = registry().create<ur_queue_handle_t_>(hContext, hDevice, flags);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueRetain(ur_queue_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  h->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueRelease(ur_queue_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  if (!h->release()) return UR_RESULT_SUCCESS;
  h->alive.store(false, std::memory_order_release);
  return release_context(h->context);
}

ur_result_t UR_APICALL urQueueGetInfo(ur_queue_handle_t h, ur_queue_info_t propName, size_t propSize, void *pPropValue,
                                      size_t *pPropSizeRet) {
  if (ur_result_t r = check(h)) return r;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_QUEUE_INFO_CONTEXT: return out.value(h->context);
  case UR_QUEUE_INFO_DEVICE: return out.value(h->device);
  case UR_QUEUE_INFO_FLAGS: return out.value(h->flags);
  case UR_QUEUE_INFO_REFERENCE_COUNT: return out.value<uint32_t>(h->count());
  case UR_QUEUE_INFO_EMPTY: return out.boolean(true);
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urQueueGetNativeHandle(ur_queue_handle_t h, ur_queue_native_desc_t *,
                                              ur_native_handle_t *phNative) {
  if (ur_result_t r = check(h)) return r;
  if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNative = reinterpret_cast<ur_native_handle_t>(h);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t h) { return check(h); }
ur_result_t UR_APICALL urQueueFlush(ur_queue_handle_t h) { return check(h); }

} // namespace

void fill_queue(ur_dditable_t &t) {
  t.Queue.pfnCreate = urQueueCreate;
  t.Queue.pfnRetain = urQueueRetain;
  t.Queue.pfnRelease = urQueueRelease;
  t.Queue.pfnGetInfo = urQueueGetInfo;
  t.Queue.pfnGetNativeHandle = urQueueGetNativeHandle;
  t.Queue.pfnFinish = urQueueFinish;
  t.Queue.pfnFlush = urQueueFlush;
}

} // namespace mock
