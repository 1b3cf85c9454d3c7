// SPDX-License-Identifier: Apache-2.0
// Mock events: every one is complete from the moment it exists.
#include "mock.hpp"

namespace mock {

ur_event_handle_t completed_event(ur_queue_handle_t q, ur_command_t command) {
  return registry().create<ur_event_handle_t_>(q, q ? q->context : nullptr, command);
}

namespace {

ur_result_t check(ur_event_handle_t h) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_event_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_EVENT;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventGetInfo(ur_event_handle_t h, ur_event_info_t propName, size_t propSize, void *pPropValue,
                                      size_t *pPropSizeRet) {
  if (ur_result_t r = check(h)) return r;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_EVENT_INFO_COMMAND_QUEUE: return out.value(h->queue);
  case UR_EVENT_INFO_CONTEXT: return out.value(h->context);
  case UR_EVENT_INFO_COMMAND_TYPE: return out.value(h->command);
  case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS: return out.value(UR_EVENT_STATUS_COMPLETE);
  case UR_EVENT_INFO_REFERENCE_COUNT: return out.value<uint32_t>(h->count());
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urEventGetProfilingInfo(ur_event_handle_t h, ur_profiling_info_t propName, size_t propSize,
                                               void *pPropValue, size_t *pPropSizeRet) {
  if (ur_result_t r = check(h)) return r;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!h->queue || !(h->queue->flags & UR_QUEUE_FLAG_PROFILING_ENABLE))
    return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  // Queued, submitted, started and ended at once.
  return ordo::InfoWriter(propSize, pPropValue, pPropSizeRet).value<uint64_t>(h->queued);
}

ur_result_t UR_APICALL urEventWait(uint32_t numEvents, const ur_event_handle_t *phEventWaitList) {
  if (!phEventWaitList) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numEvents == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i < numEvents; ++i)
    if (ur_result_t r = check(phEventWaitList[i])) return r;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventRetain(ur_event_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  h->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventRelease(ur_event_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  if (h->release()) h->alive.store(false, std::memory_order_release);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEventGetNativeHandle(ur_event_handle_t h, ur_native_handle_t *phNative) {
  if (ur_result_t r = check(h)) return r;
  if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNative = reinterpret_cast<ur_native_handle_t>(h);
  return UR_RESULT_SUCCESS;
}

// The event is already complete: a callback for completion runs now, on this thread.
ur_result_t UR_APICALL urEventSetCallback(ur_event_handle_t h, ur_execution_info_t execStatus,
                                          ur_event_callback_t pfnNotify, void *pUserData) {
  if (ur_result_t r = check(h)) return r;
  if (!pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (execStatus == UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  if (execStatus > UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  pfnNotify(h, execStatus, pUserData);
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_event(ur_dditable_t &t) {
  t.Event.pfnGetInfo = urEventGetInfo;
  t.Event.pfnGetProfilingInfo = urEventGetProfilingInfo;
  t.Event.pfnWait = urEventWait;
  t.Event.pfnRetain = urEventRetain;
  t.Event.pfnRelease = urEventRelease;
  t.Event.pfnGetNativeHandle = urEventGetNativeHandle;
  t.Event.pfnSetCallback = urEventSetCallback;
}

} // namespace mock
