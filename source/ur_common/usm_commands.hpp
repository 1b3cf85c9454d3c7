// SPDX-License-Identifier: Apache-2.0
// The USM commands (urEnqueueUSMFill/Memcpy[2D], Prefetch, Advise) of Level Zero, the
// stream backend, native CPU and OpenCL: argument checks in their order, written once;
// the adapter's hooks make each command and issue its work. A hooks
// struct `H` gives:
//
//   using Queue = ...; using Command = ...;  // Command(q, type, n, waits, out), status(), finish(r)
//   // The range [p, p + bytes) of a command: inside the USM allocation (or pool block)
//   // it starts in; `check_hint_range` the same for prefetch and advice.
//   static ur_result_t check_usm(Queue *, const void *p, size_t bytes);
//   static ur_result_t check_hint_range(Queue *, const void *p, size_t bytes);
//   // The work of a command already made; its result goes to cmd.finish().
//   static ur_result_t fill(Command &, Queue *, void *dst, const uint8_t *pattern, size_t patternSize, size_t size);
//   static ur_result_t fill_2d(Command &, Queue *, uint8_t *dst, size_t pitch, const uint8_t *pattern,
//                              size_t patternSize, size_t width, size_t height);
//   static ur_result_t prefetch(Command &, Queue *, const void *, size_t, ur_usm_migration_flags_t);
//   static ur_result_t advise(Command &, Queue *, const void *, size_t, ur_usm_advice_flags_t);
//   // Copies, blocking ones waited for (the hook makes the command).
//   static ur_result_t memcpy(Queue *, bool blocking, void *dst, const void *src, size_t size, uint32_t,
//                             const ur_event_handle_t *, ur_event_handle_t *);
//   static ur_result_t memcpy_2d(Queue *, bool blocking, void *dst, size_t dstPitch, const void *src,
//                                size_t srcPitch, size_t width, size_t height, uint32_t,
//                                const ur_event_handle_t *, ur_event_handle_t *);
//   // Optional: `static constexpr bool copies_overlapping = true;` where a copy is a
//   // memmove (native CPU): overlapping ranges are copied, not refused.
//   // Optional: `static ur_result_t check_wait_list(Queue *, uint32_t, const ur_event_handle_t *);`
//   // checked right after the queue, before any pointer or size (OpenCL's order).
//   // Optional: `static constexpr bool memcpy_as_2d = true;` where urEnqueueUSMMemcpy is
//   // checked as urEnqueueUSMMemcpy2D's one row (no overlap refusal: OpenCL's copies).
//
// Handles are checked by `unwrap(handle, T *&)` found by argument-dependent lookup
// (ordo::unwrap, or the adapter's stricter overload: native CPU's registry).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ordo/checked_math.hpp"
#include "ordo/usm_2d_rules.hpp"
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo::ur_common {

// The smallest period, a power of two no larger than `max_period` and smaller than the
// pattern, that a pattern of `size` bytes repeats with; else its own size.
inline size_t pattern_period(const uint8_t *p, size_t size, size_t max_period) {
  for (size_t period = 1; period < size && period <= max_period; period *= 2) {
    if (size % period) continue;
    bool repeats = true;
    for (size_t i = period; i < size && repeats; ++i) repeats = p[i] == p[i - period];
    if (repeats) return period;
  }
  return size;
}

// Whether [a, a + n) and [b, b + n) share a byte.
inline bool ranges_overlap(const void *a, const void *b, size_t n) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + n && y < x + n;
}

template <class H, class = void> struct copies_overlapping : std::false_type {};
template <class H>
struct copies_overlapping<H, std::void_t<decltype(H::copies_overlapping)>>
    : std::integral_constant<bool, H::copies_overlapping> {};

template <class H, class = void> struct has_check_wait_list : std::false_type {};
template <class H>
struct has_check_wait_list<H, std::void_t<decltype(H::check_wait_list(nullptr, 0u, nullptr))>> : std::true_type {};

template <class H, class = void> struct memcpy_as_2d : std::false_type {};
template <class H>
struct memcpy_as_2d<H, std::void_t<decltype(H::memcpy_as_2d)>> : std::integral_constant<bool, H::memcpy_as_2d> {};

template <class H> struct usm_commands {
  using Queue = typename H::Queue;
  using Command = typename H::Command;

  // The queue, then (where the adapter checks it first) the wait list.
  static ur_result_t unwrap_queue(ur_queue_handle_t hQueue, uint32_t numEvents, const ur_event_handle_t *events,
                                  Queue *&q) {
    if (ur_result_t r = unwrap(hQueue, q)) return r;
    if constexpr (has_check_wait_list<H>::value) return H::check_wait_list(q, numEvents, events);
    return UR_RESULT_SUCCESS;
  }

  // `pitch * height` bytes from the region's start lie in the allocation it starts in:
  // the spec's bound (INVALID_SIZE "if pitch * height is higher than the allocation
  // size"), though the last row touches only `width` of its pitch.
  static ur_result_t check_region_2d(Queue *q, const void *p, size_t pitch, size_t height) {
    size_t extent = 0;
    if (!ordo::checked::mul(pitch, height, extent)) return UR_RESULT_ERROR_INVALID_SIZE;
    return H::check_usm(q, p, extent);
  }

  static ur_result_t check_memcpy_2d(Queue *q, const void *pDst, size_t dstPitch, const void *pSrc, size_t srcPitch,
                                     size_t width, size_t height) {
    if (ur_result_t r = ordo::usm_2d::memcpy_sizes(pDst, dstPitch, pSrc, srcPitch, width, height)) return r;
    if (ur_result_t r = check_region_2d(q, pDst, dstPitch, height)) return r;
    return check_region_2d(q, pSrc, srcPitch, height);
  }

  static ur_result_t UR_APICALL fill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize, const void *pPattern,
                                     size_t size, uint32_t numEventsInWaitList,
                                     const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap_queue(hQueue, numEventsInWaitList, phEventWaitList, q)) return r;
    if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize != 0)
      return UR_RESULT_ERROR_INVALID_SIZE;
    // Past the end of a pool block or allocation: refused, not written into the next
    // block (the layer's rule, docs/bad-input.md).
    if (ur_result_t r = H::check_usm(q, pMem, size)) return r;
    Command cmd(q, UR_COMMAND_USM_FILL, numEventsInWaitList, phEventWaitList, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    return cmd.finish(H::fill(cmd, q, pMem, static_cast<const uint8_t *>(pPattern), patternSize, size));
  }

  static ur_result_t UR_APICALL fill_2d(ur_queue_handle_t hQueue, void *pMem, size_t pitch, size_t patternSize,
                                        const void *pPattern, size_t width, size_t height, uint32_t numEventsInWaitList,
                                        const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap_queue(hQueue, numEventsInWaitList, phEventWaitList, q)) return r;
    if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = ordo::usm_2d::fill_sizes(pMem, pitch, patternSize, width, height)) return r;
    if (ur_result_t r = check_region_2d(q, pMem, pitch, height)) return r;
    Command cmd(q, UR_COMMAND_USM_FILL_2D, numEventsInWaitList, phEventWaitList, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    return cmd.finish(H::fill_2d(cmd, q, static_cast<uint8_t *>(pMem), pitch, static_cast<const uint8_t *>(pPattern),
                                 patternSize, width, height));
  }

  static ur_result_t UR_APICALL memcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst, const void *pSrc,
                                       size_t size, uint32_t numEventsInWaitList,
                                       const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap_queue(hQueue, numEventsInWaitList, phEventWaitList, q)) return r;
    if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if constexpr (memcpy_as_2d<H>::value) {
      if (ur_result_t r = check_memcpy_2d(q, pDst, size, pSrc, size, size, 1)) return r;
    } else {
      if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
      if (ur_result_t r = H::check_usm(q, pDst, size)) return r;
      if (ur_result_t r = H::check_usm(q, pSrc, size)) return r;
      if (!copies_overlapping<H>::value && ranges_overlap(pDst, pSrc, size)) return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
    }
    return H::memcpy(q, blocking, pDst, pSrc, size, numEventsInWaitList, phEventWaitList, phEvent);
  }

  static ur_result_t UR_APICALL memcpy_2d(ur_queue_handle_t hQueue, bool blocking, void *pDst, size_t dstPitch,
                                          const void *pSrc, size_t srcPitch, size_t width, size_t height,
                                          uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                          ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap_queue(hQueue, numEventsInWaitList, phEventWaitList, q)) return r;
    if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = check_memcpy_2d(q, pDst, dstPitch, pSrc, srcPitch, width, height)) return r;
    return H::memcpy_2d(q, blocking, pDst, dstPitch, pSrc, srcPitch, width, height, numEventsInWaitList,
                        phEventWaitList, phEvent);
  }

  static ur_result_t UR_APICALL prefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                         ur_usm_migration_flags_t flags, uint32_t numEventsInWaitList,
                                         const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap_queue(hQueue, numEventsInWaitList, phEventWaitList, q)) return r;
    if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (flags & UR_USM_MIGRATION_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    if (ur_result_t r = H::check_hint_range(q, pMem, size)) return r;
    Command cmd(q, UR_COMMAND_USM_PREFETCH, numEventsInWaitList, phEventWaitList, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    return cmd.finish(H::prefetch(cmd, q, pMem, size, flags));
  }

  // Advice is a hint: one the driver declines is not an error.
  static ur_result_t UR_APICALL advise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                       ur_usm_advice_flags_t advice, ur_event_handle_t *phEvent) {
    Queue *q = nullptr;
    if (ur_result_t r = unwrap_queue(hQueue, 0, nullptr, q)) return r;
    if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (advice & UR_USM_ADVICE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    if (ur_result_t r = H::check_hint_range(q, pMem, size)) return r;
    Command cmd(q, UR_COMMAND_USM_ADVISE, 0, nullptr, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    return cmd.finish(H::advise(cmd, q, pMem, size, advice));
  }

  static void install(ur_dditable_t &t) {
    t.Enqueue.pfnUSMFill = fill;
    t.Enqueue.pfnUSMMemcpy = memcpy;
    t.Enqueue.pfnUSMPrefetch = prefetch;
    t.Enqueue.pfnUSMAdvise = advise;
    t.Enqueue.pfnUSMFill2D = fill_2d;
    t.Enqueue.pfnUSMMemcpy2D = memcpy_2d;
  }
};

} // namespace ordo::ur_common
