// SPDX-License-Identifier: Apache-2.0
// USM commands: fill, copy (1-D and 2-D), prefetch and advice.
#include <cstring>
#include <vector>

#include "ordo/usm_2d_rules.hpp"
#include "common.hpp"
#include "ur_common/usm_commands.hpp"
#include "ordo/checked_math.hpp"

namespace ordo::level_zero {

namespace {

bool power_of_two(size_t v) { return v && !(v & (v - 1)); }

// Waits for a blocking command's event.
ur_result_t wait_blocking(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  return check(ze().zeEventHostSynchronize(e->ze.ev, UINT64_MAX));
}

} // namespace

// One zeCommandListAppendMemoryFill where the device takes the pattern's period;
// otherwise a copy from host memory holding the bytes spelled out, kept with the
// command's event. Appends without a signal (the caller's barrier signals).
ur_result_t append_fill(Command &cmd, void *dst, const uint8_t *pattern, size_t size, size_t phase, size_t len,
                        size_t max_pattern) {
  if (len == 0) return UR_RESULT_SUCCESS;
  size_t period = ordo::ur_common::pattern_period(pattern, size, SIZE_MAX); // a power of two
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

namespace {

// What ur_common's USM commands leave to the adapter (ur_common/usm_commands.hpp). A
// range is checked when it lies in an allocation of the context's.
struct usm_command_hooks {
  using Queue = level_zero::Queue;
  using Command = level_zero::Command;
  static ur_result_t check_usm(Queue *q, const void *p, size_t bytes) {
    return level_zero::check_usm(q->ctx, p, bytes);
  }
  static ur_result_t check_hint_range(Queue *q, const void *p, size_t bytes) { return check_usm(q, p, bytes); }

  static ur_result_t fill(Command &cmd, Queue *q, void *pMem, const uint8_t *pattern, size_t patternSize, size_t size) {
    ur_result_t r = append_fill(cmd, pMem, pattern, patternSize, 0, size, q->dev->facts.fill_pattern_max);
    return r ? r : cmd.append_barrier();
  }

  static ur_result_t fill_2d(Command &cmd, Queue *q, uint8_t *dst, size_t pitch, const uint8_t *pattern,
                             size_t patternSize, size_t width, size_t height) {
    ur_result_t r = UR_RESULT_SUCCESS;
    if (width % patternSize == 0 && patternSize <= q->dev->facts.fill_pattern_max) {
      // Row by row, each a fill of its own.
      for (size_t row = 0; row < height && r == UR_RESULT_SUCCESS; ++row)
        r = check(ze().zeCommandListAppendMemoryFill(cmd.list(), dst + row * pitch, pattern, patternSize, width,
                                                     nullptr, cmd.num_waits(), cmd.waits()));
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
            cmd.list(), dst, &dr, uint32_t(pitch), uint32_t(pitch * height), host, &sr, uint32_t(width),
            uint32_t(width * height), nullptr, cmd.num_waits(), cmd.waits()));
      }
    }
    return r ? r : cmd.append_barrier();
  }

  // A blocking copy waits for its event (one of its own when the caller wants none).
  static ur_result_t memcpy(Queue *q, bool blocking, void *pDst, const void *pSrc, size_t size, uint32_t n,
                            const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    ur_event_handle_t own = nullptr;
    ur_event_handle_t *out = phEvent ? phEvent : blocking ? &own : nullptr;
    {
      Command cmd(q, UR_COMMAND_USM_MEMCPY, n, waits, out);
      if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
      if (ur_result_t r = cmd.finish(check(ze().zeCommandListAppendMemoryCopy(
              cmd.list(), pDst, pSrc, size, cmd.signal(), cmd.num_waits(), cmd.waits()))))
        return r;
    }
    ur_result_t r = blocking ? wait_blocking(*out) : UR_RESULT_SUCCESS;
    if (own) event_release(reinterpret_cast<Event *>(own));
    return r;
  }

  static ur_result_t memcpy_2d(Queue *q, bool blocking, void *pDst, size_t dstPitch, const void *pSrc, size_t srcPitch,
                               size_t width, size_t height, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    if (dstPitch > UINT32_MAX || srcPitch > UINT32_MAX || width > UINT32_MAX || height > UINT32_MAX)
      return UR_RESULT_ERROR_INVALID_SIZE; // Level Zero regions are 32-bit
    ur_event_handle_t own = nullptr;
    ur_event_handle_t *out = phEvent ? phEvent : blocking ? &own : nullptr;
    {
      Command cmd(q, UR_COMMAND_USM_MEMCPY_2D, n, waits, out);
      if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
      ur_result_t r = UR_RESULT_SUCCESS;
      if (width > 0) {
        ze_copy_region_t region{0, 0, 0, uint32_t(width), uint32_t(height), 1};
        r = check(ze().zeCommandListAppendMemoryCopyRegion(cmd.list(), pDst, &region, uint32_t(dstPitch), 0, pSrc,
                                                           &region, uint32_t(srcPitch), 0, cmd.signal(),
                                                           cmd.num_waits(), cmd.waits()));
      } else {
        r = cmd.append_barrier();
      }
      if ((r = cmd.finish(r))) return r;
    }
    ur_result_t r = blocking ? wait_blocking(*out) : UR_RESULT_SUCCESS;
    if (own) event_release(reinterpret_cast<Event *>(own));
    return r;
  }

  // Level Zero prefetches towards the device only; to the host it is a hint with nothing to do.
  static ur_result_t prefetch(Command &cmd, Queue *, const void *pMem, size_t size, ur_usm_migration_flags_t flags) {
    if (!(flags & UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST)) {
      ze_result_t zr = ze().zeCommandListAppendMemoryPrefetch(cmd.list(), pMem, size);
      if (zr != ZE_RESULT_SUCCESS) ORDO_LOG(logger(), debug, "prefetch declined: %s", error_text(zr).c_str());
    }
    return cmd.append_barrier();
  }

  static ur_result_t advise(Command &cmd, Queue *q, const void *pMem, size_t size, ur_usm_advice_flags_t advice) {
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
      if (ze_result_t r = ze().zeCommandListAppendMemAdvise(cmd.list(), q->dev->ze, pMem, size, m.advice))
        ORDO_LOG(logger(), debug, "advice %d declined: %s", int(m.advice), error_text(r).c_str());
    }
    return cmd.append_barrier();
  }
};

} // namespace

void install_enqueue_usm_entry_points(ur_dditable_t &t) {
  ordo::ur_common::usm_commands<usm_command_hooks>::install(t);
}

} // namespace ordo::level_zero
