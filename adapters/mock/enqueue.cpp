// SPDX-License-Identifier: Apache-2.0
// Mock enqueue: each command runs on the calling thread before the call returns and
// yields a completed event.
#include <cstring>

#include "mock.hpp"

namespace mock {
namespace {

// The checks every enqueue shares: a live queue and a consistent wait list.
ur_result_t check_enqueue(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list) {
  if (!q) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_queue_handle_t_>(q)) return UR_RESULT_ERROR_INVALID_QUEUE;
  if ((n == 0) != (list == nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  for (uint32_t i = 0; i < n; ++i)
    if (!live<ur_event_handle_t_>(list[i])) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  return UR_RESULT_SUCCESS;
}

void signal(ur_queue_handle_t q, ur_command_t command, ur_event_handle_t *phEvent) {
  if (phEvent) *phEvent = completed_event(q, command);
}

ur_result_t UR_APICALL urEnqueueEventsWait(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list,
                                           ur_event_handle_t *phEvent) {
  if (ur_result_t r = check_enqueue(q, n, list)) return r;
  signal(q, UR_COMMAND_EVENTS_WAIT, phEvent);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEnqueueEventsWaitWithBarrier(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *list,
                                                      ur_event_handle_t *phEvent) {
  if (ur_result_t r = check_enqueue(q, n, list)) return r;
  signal(q, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, phEvent);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t q, void *pMem, size_t patternSize, const void *pPattern,
                                        size_t size, uint32_t n, const ur_event_handle_t *list,
                                        ur_event_handle_t *phEvent) {
  if (ur_result_t r = check_enqueue(q, n, list)) return r;
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize) return UR_RESULT_ERROR_INVALID_SIZE;
  for (size_t off = 0; off < size; off += patternSize)
    std::memcpy(static_cast<char *>(pMem) + off, pPattern, patternSize);
  signal(q, UR_COMMAND_USM_FILL, phEvent);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t q, bool, void *pDst, const void *pSrc, size_t size,
                                          uint32_t n, const ur_event_handle_t *list, ur_event_handle_t *phEvent) {
  if (ur_result_t r = check_enqueue(q, n, list)) return r;
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  std::memmove(pDst, pSrc, size);
  signal(q, UR_COMMAND_USM_MEMCPY, phEvent);
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_enqueue(ur_dditable_t &t) {
  t.Enqueue.pfnEventsWait = urEnqueueEventsWait;
  t.Enqueue.pfnEventsWaitWithBarrier = urEnqueueEventsWaitWithBarrier;
  t.Enqueue.pfnUSMFill = urEnqueueUSMFill;
  t.Enqueue.pfnUSMMemcpy = urEnqueueUSMMemcpy;
}

} // namespace mock
