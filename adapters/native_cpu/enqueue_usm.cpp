// SPDX-License-Identifier: Apache-2.0
// USM commands: urEnqueueUSM{Fill,Memcpy,Fill2D,Memcpy2D,Prefetch,Advise}. Sizes are
// checked against the allocations the pointers fall in (system memory is not checked).
#include <algorithm>
#include <cstring>
#include <vector>

#include "entry_points.hpp"
#include "ordo/checked_math.hpp"
#include "context.hpp"
#include "memory.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

void fill_pattern(char *dst, size_t bytes, const std::vector<char> &pattern, size_t phase) {
  size_t n = pattern.size();
  if (n == 1) {
    std::memset(dst, pattern[0], bytes);
    return;
  }
  size_t first = std::min(bytes, n);
  for (size_t i = 0; i < first; ++i) dst[i] = pattern[(phase + i) % n];
  if (bytes <= n) return;
  // Doubling copies: each pass copies what is already filled.
  for (size_t done = n; done < bytes;) {
    size_t chunk = std::min(done, bytes - done);
    std::memcpy(dst + done, dst, chunk);
    done += chunk;
  }
}

namespace {

// A 2-D region at `p` of `height` rows, `pitch` apart: its span (full pitches for all
// rows but the last) must be a size_t, lie in the address space and stay inside the
// allocation p is in, when it is one of the context's (docs/native-cpu.md).
ur_result_t check_region_2d(Context &ctx, const void *p, size_t pitch, size_t width, size_t height) {
  size_t span;
  if (!ordo::checked::span_2d(pitch, width, height, span)) return UR_RESULT_ERROR_INVALID_SIZE;
  return check_usm_range(ctx, p, span);
}

ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize, const void *pPattern,
                                        size_t size, uint32_t numEventsInWaitList,
                                        const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(*q->context, pMem, size)) return r;
  std::vector<char> pattern(static_cast<const char *>(pPattern), static_cast<const char *>(pPattern) + patternSize);
  char *dst = static_cast<char *>(pMem);
  return submit_work(*q, UR_COMMAND_USM_FILL, numEventsInWaitList, phEventWaitList, phEvent, false,
                     [dst, size, pattern = std::move(pattern)] { fill_pattern(dst, size, pattern); });
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst, const void *pSrc,
                                          size_t size, uint32_t numEventsInWaitList,
                                          const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(*q->context, pDst, size)) return r;
  if (ur_result_t r = check_usm_range(*q->context, pSrc, size)) return r;
  return submit_work(*q, UR_COMMAND_USM_MEMCPY, numEventsInWaitList, phEventWaitList, phEvent, blocking,
                     [pDst, pSrc, size] {
                       std::memmove(pDst, pSrc, size); // overlapping ranges copy as if through a buffer
                     });
}

ur_result_t UR_APICALL urEnqueueUSMFill2D(ur_queue_handle_t hQueue, void *pMem, size_t pitch, size_t patternSize,
                                          const void *pPattern, size_t width, size_t height,
                                          uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                          ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pitch == 0 || width == 0 || height == 0 || pitch < width || patternSize == 0 ||
      (patternSize & (patternSize - 1)) != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  // The span check comes first: it also bounds width * height (pitch >= width).
  if (ur_result_t r = check_region_2d(*q->context, pMem, pitch, width, height)) return r;
  if (patternSize > width * height || (width * height) % patternSize != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<char> pattern(static_cast<const char *>(pPattern), static_cast<const char *>(pPattern) + patternSize);
  char *dst = static_cast<char *>(pMem);
  return submit_work(*q, UR_COMMAND_USM_FILL_2D, numEventsInWaitList, phEventWaitList, phEvent, false,
                     [dst, pitch, width, height, pattern = std::move(pattern)] {
                       // The pattern runs on across rows, as if the rows were contiguous.
                       for (size_t row = 0; row < height; ++row)
                         fill_pattern(dst + row * pitch, width, pattern, (row * width) % pattern.size());
                     });
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy2D(ur_queue_handle_t hQueue, bool blocking, void *pDst, size_t dstPitch,
                                            const void *pSrc, size_t srcPitch, size_t width, size_t height,
                                            uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                            ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (srcPitch == 0 || dstPitch == 0 || srcPitch < width || dstPitch < width || height == 0 || width == 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_region_2d(*q->context, pDst, dstPitch, width, height)) return r;
  if (ur_result_t r = check_region_2d(*q->context, pSrc, srcPitch, width, height)) return r;
  char *dst = static_cast<char *>(pDst);
  const char *src = static_cast<const char *>(pSrc);
  return submit_work(*q, UR_COMMAND_USM_MEMCPY_2D, numEventsInWaitList, phEventWaitList, phEvent, blocking,
                     [dst, dstPitch, src, srcPitch, width, height] {
                       for (size_t row = 0; row < height; ++row)
                         std::memmove(dst + row * dstPitch, src + row * srcPitch, width);
                     });
}

// Memory is already where the CPU reads it: prefetch and advice (`flags`, of which only
// `known` are defined) order the queue and complete without moving anything.
ur_result_t no_move(ur_queue_handle_t hQueue, ur_command_t type, const void *pMem, size_t size, uint32_t flags,
                    uint32_t known, uint32_t numEvents, const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & ~known) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(*q->context, pMem, size)) return r;
  CommandBuilder cmd(*q, type);
  if (ur_result_t r = cmd.set_wait_list(numEvents, phEvents)) return r;
  return cmd.submit(phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMPrefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                            ur_usm_migration_flags_t flags, uint32_t numEventsInWaitList,
                                            const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  return no_move(hQueue, UR_COMMAND_USM_PREFETCH, pMem, size, flags, ~UR_USM_MIGRATION_FLAGS_MASK, numEventsInWaitList,
                 phEventWaitList, phEvent);
}

ur_result_t UR_APICALL urEnqueueUSMAdvise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                          ur_usm_advice_flags_t advice, ur_event_handle_t *phEvent) {
  return no_move(hQueue, UR_COMMAND_USM_ADVISE, pMem, size, advice, ~UR_USM_ADVICE_FLAGS_MASK, 0, nullptr, phEvent);
}

} // namespace

void install_enqueue_usm_entry_points(ur_dditable_t &t) {
  t.Enqueue.pfnUSMFill = urEnqueueUSMFill;
  t.Enqueue.pfnUSMMemcpy = urEnqueueUSMMemcpy;
  t.Enqueue.pfnUSMFill2D = urEnqueueUSMFill2D;
  t.Enqueue.pfnUSMMemcpy2D = urEnqueueUSMMemcpy2D;
  t.Enqueue.pfnUSMPrefetch = urEnqueueUSMPrefetch;
  t.Enqueue.pfnUSMAdvise = urEnqueueUSMAdvise;
}

} // namespace ordo::native_cpu
