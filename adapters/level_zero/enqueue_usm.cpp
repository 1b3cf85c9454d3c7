// SPDX-License-Identifier: Apache-2.0
// USM commands: fill, copy (1-D and 2-D), prefetch and advice.
#include <cstring>
#include <vector>

#include "ordo/usm_2d_rules.hpp"
#include "common.hpp"
#include "ordo/checked_math.hpp"
#include "entry_points.hpp"

namespace ordo::level_zero {

namespace {

// The smallest period (a power of two no larger than the pattern) the pattern
// repeats with, or its own size.
size_t pattern_period(const uint8_t *p, size_t size) {
  for (size_t period = 1; period < size; period *= 2) {
    if (size % period) continue;
    bool repeats = true;
    for (size_t i = period; i < size && repeats; ++i) repeats = p[i] == p[i - period];
    if (repeats) return period;
  }
  return size;
}

bool power_of_two(size_t v) { return v && !(v & (v - 1)); }

bool overlap(const void *a, const void *b, size_t n) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + n && y < x + n;
}

// Waits for a blocking command's event.
ur_result_t wait_blocking(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  return check(ze().zeEventHostSynchronize(e->ze.ev, UINT64_MAX));
}

// A 2-D region's span (full pitches for all rows but the last) stays inside the
// allocation it starts in, when that is one of the context's.
ur_result_t check_region_2d(Queue *q, const void *p, size_t pitch, size_t width, size_t height) {
  size_t span = 0;
  if (!ordo::checked::span_2d(pitch, width, height, span)) return UR_RESULT_ERROR_INVALID_SIZE;
  return check_usm(q->ctx, p, span);
}

} // namespace

// One zeCommandListAppendMemoryFill where the device takes the pattern's period;
// otherwise a copy from host memory holding the bytes spelled out, kept with the
// command's event. Appends without a signal (the caller's barrier signals).
ur_result_t append_fill(Command &cmd, void *dst, const uint8_t *pattern, size_t size, size_t phase, size_t len,
                        size_t max_pattern) {
  if (len == 0) return UR_RESULT_SUCCESS;
  size_t period = pattern_period(pattern, size);
  if (power_of_two(period) && period <= max_pattern && phase % period == 0 && len % period == 0)
    return check(ze().zeCommandListAppendMemoryFill(cmd.list(), dst, pattern, period, len, nullptr, cmd.num_waits(),
                                                    cmd.waits()));
  Event *ev = cmd.event();
  Context *ctx = ev->ctx;
  if (ev->staging) return UR_RESULT_ERROR_INVALID_OPERATION; // one spelled-out run per command
  void *host = nullptr;
  ORDO_ZE(alloc_memory(ctx, UR_USM_TYPE_HOST, nullptr, len, 0, &host));
  auto *bytes = static_cast<uint8_t *>(host);
  for (size_t i = 0; i < len; ++i) bytes[i] = pattern[(phase + i) % size];
  ev->staging = host;
  return check(ze().zeCommandListAppendMemoryCopy(cmd.list(), dst, host, len, nullptr, cmd.num_waits(), cmd.waits()));
}

ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize, const void *pPattern,
                                        size_t size, uint32_t numEventsInWaitList,
                                        const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm(q->ctx, pMem, size)) return r;
  Command cmd(q, UR_COMMAND_USM_FILL, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  ur_result_t r = append_fill(cmd, pMem, static_cast<const uint8_t *>(pPattern), patternSize, 0, size,
                              q->dev->facts.fill_pattern_max);
  return cmd.finish(r ? r : cmd.append_barrier());
}

ur_result_t UR_APICALL urEnqueueUSMFill2D(ur_queue_handle_t hQueue, void *pMem, size_t pitch, size_t patternSize,
                                          const void *pPattern, size_t width, size_t height,
                                          uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                          ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = ordo::usm_2d::fill_sizes(pMem, pitch, patternSize, width, height)) return r;
  if (ur_result_t r = check_region_2d(q, pMem, pitch, width, height)) return r;
  Command cmd(q, UR_COMMAND_USM_FILL_2D, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  auto pattern = static_cast<const uint8_t *>(pPattern);
  ur_result_t r = UR_RESULT_SUCCESS;
  if (width % patternSize == 0 && patternSize <= q->dev->facts.fill_pattern_max) {
    // Row by row, each a fill of its own.
    for (size_t row = 0; row < height && r == UR_RESULT_SUCCESS; ++row)
      r = check(ze().zeCommandListAppendMemoryFill(cmd.list(), static_cast<uint8_t *>(pMem) + row * pitch, pattern,
                                                   patternSize, width, nullptr, cmd.num_waits(), cmd.waits()));
  } else {
    // The pattern runs on across rows as over one flat range: spell it out once on
    // the host and copy the rows from it.
    Event *ev = cmd.event();
    void *host = nullptr;
    r = check(alloc_memory(q->ctx, UR_USM_TYPE_HOST, nullptr, width * height, 0, &host));
    if (r == UR_RESULT_SUCCESS) {
      ev->staging = host;
      auto *bytes = static_cast<uint8_t *>(host);
      for (size_t i = 0; i < width * height; ++i) bytes[i] = pattern[i % patternSize];
      ze_copy_region_t dr{0, 0, 0, uint32_t(width), uint32_t(height), 1}, sr = dr;
      r = check(ze().zeCommandListAppendMemoryCopyRegion(
          cmd.list(), pMem, &dr, uint32_t(pitch), uint32_t(pitch * height), host, &sr, uint32_t(width),
          uint32_t(width * height), nullptr, cmd.num_waits(), cmd.waits()));
    }
  }
  return cmd.finish(r ? r : cmd.append_barrier());
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst, const void *pSrc,
                                          size_t size, uint32_t numEventsInWaitList,
                                          const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm(q->ctx, pDst, size)) return r;
  if (ur_result_t r = check_usm(q->ctx, pSrc, size)) return r;
  if (overlap(pDst, pSrc, size)) return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
  ur_event_handle_t own = nullptr;
  ur_event_handle_t *out = phEvent ? phEvent : blocking ? &own : nullptr;
  {
    Command cmd(q, UR_COMMAND_USM_MEMCPY, numEventsInWaitList, phEventWaitList, out);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    if (ur_result_t r = cmd.finish(check(ze().zeCommandListAppendMemoryCopy(cmd.list(), pDst, pSrc, size, cmd.signal(),
                                                                            cmd.num_waits(), cmd.waits()))))
      return r;
  }
  ur_result_t r = blocking ? wait_blocking(*out) : UR_RESULT_SUCCESS;
  if (own) event_release(reinterpret_cast<Event *>(own));
  return r;
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy2D(ur_queue_handle_t hQueue, bool blocking, void *pDst, size_t dstPitch,
                                            const void *pSrc, size_t srcPitch, size_t width, size_t height,
                                            uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                            ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = ordo::usm_2d::memcpy_sizes(pDst, dstPitch, pSrc, srcPitch, width, height)) return r;
  if (ur_result_t r = check_region_2d(q, pDst, dstPitch, width, height)) return r;
  if (ur_result_t r = check_region_2d(q, pSrc, srcPitch, width, height)) return r;
  if (dstPitch > UINT32_MAX || srcPitch > UINT32_MAX || width > UINT32_MAX || height > UINT32_MAX)
    return UR_RESULT_ERROR_INVALID_SIZE; // Level Zero regions are 32-bit
  ur_event_handle_t own = nullptr;
  ur_event_handle_t *out = phEvent ? phEvent : blocking ? &own : nullptr;
  {
    Command cmd(q, UR_COMMAND_USM_MEMCPY_2D, numEventsInWaitList, phEventWaitList, out);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    ur_result_t r = UR_RESULT_SUCCESS;
    if (width > 0) {
      ze_copy_region_t region{0, 0, 0, uint32_t(width), uint32_t(height), 1};
      r = check(ze().zeCommandListAppendMemoryCopyRegion(cmd.list(), pDst, &region, uint32_t(dstPitch), 0, pSrc,
                                                         &region, uint32_t(srcPitch), 0, cmd.signal(), cmd.num_waits(),
                                                         cmd.waits()));
    } else {
      r = cmd.append_barrier();
    }
    if ((r = cmd.finish(r))) return r;
  }
  ur_result_t r = blocking ? wait_blocking(*out) : UR_RESULT_SUCCESS;
  if (own) event_release(reinterpret_cast<Event *>(own));
  return r;
}

ur_result_t UR_APICALL urEnqueueUSMPrefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                            ur_usm_migration_flags_t flags, uint32_t numEventsInWaitList,
                                            const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_USM_MIGRATION_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm(q->ctx, pMem, size)) return r;
  Command cmd(q, UR_COMMAND_USM_PREFETCH, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  // Level Zero prefetches towards the device only; to the host it is a hint with nothing to do.
  ur_result_t r = UR_RESULT_SUCCESS;
  if (!(flags & UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST)) {
    ze_result_t zr = ze().zeCommandListAppendMemoryPrefetch(cmd.list(), pMem, size);
    if (zr != ZE_RESULT_SUCCESS) ORDO_LOG(logger(), debug, "prefetch declined: %s", error_text(zr).c_str());
  }
  return cmd.finish(r ? r : cmd.append_barrier());
}

ur_result_t UR_APICALL urEnqueueUSMAdvise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                          ur_usm_advice_flags_t advice, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (advice & UR_USM_ADVICE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm(q->ctx, pMem, size)) return r;
  Command cmd(q, UR_COMMAND_USM_ADVISE, 0, nullptr, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  struct Mapping {
    ur_usm_advice_flags_t flag;
    ze_memory_advice_t advice;
  };
  const Mapping table[] = {
      {UR_USM_ADVICE_FLAG_SET_READ_MOSTLY, ZE_MEMORY_ADVICE_SET_READ_MOSTLY},
      {UR_USM_ADVICE_FLAG_CLEAR_READ_MOSTLY, ZE_MEMORY_ADVICE_CLEAR_READ_MOSTLY},
      {UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION, ZE_MEMORY_ADVICE_SET_PREFERRED_LOCATION},
      {UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION, ZE_MEMORY_ADVICE_CLEAR_PREFERRED_LOCATION},
      {UR_USM_ADVICE_FLAG_SET_NON_ATOMIC_MOSTLY, ZE_MEMORY_ADVICE_SET_NON_ATOMIC_MOSTLY},
      {UR_USM_ADVICE_FLAG_CLEAR_NON_ATOMIC_MOSTLY, ZE_MEMORY_ADVICE_CLEAR_NON_ATOMIC_MOSTLY},
      {UR_USM_ADVICE_FLAG_BIAS_CACHED, ZE_MEMORY_ADVICE_BIAS_CACHED},
      {UR_USM_ADVICE_FLAG_BIAS_UNCACHED, ZE_MEMORY_ADVICE_BIAS_UNCACHED},
  };
  for (const Mapping &m : table) {
    if (!(advice & m.flag)) continue;
    // Advice is a hint: one the driver declines is not an error.
    if (ze_result_t r = ze().zeCommandListAppendMemAdvise(cmd.list(), q->dev->ze, pMem, size, m.advice))
      ORDO_LOG(logger(), debug, "advice %d declined: %s", int(m.advice), error_text(r).c_str());
  }
  return cmd.finish(cmd.append_barrier());
}

} // namespace ordo::level_zero
