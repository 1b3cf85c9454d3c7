// SPDX-License-Identifier: Apache-2.0
// USM commands: fill, copy (1-D and 2-D), prefetch and advice.
#include <cstring>
#include <vector>

#include "ordo/checked_math.hpp"
#include "ordo/usm_2d_rules.hpp"
#include "backend.hpp"
#include "ur_common/usm_commands.hpp"

namespace ordo::stream_backend {

namespace {

// The smallest period (1, 2 or 4 bytes: the memset widths) a pattern repeats with, or
// its own size.
size_t pattern_period(const uint8_t *p, size_t size) { return ordo::ur_common::pattern_period(p, size, 4); }

bool aligned(const uint8_t *p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

} // namespace

// Fills `count` back-to-back copies of a `size`-byte pattern at `dst`. The
// memset engines write 1, 2 or 4 bytes; longer patterns become one strided 2-D
// memset per 4-, 2- or 1-byte word of the pattern (pitch = pattern size); a driver
// without 2- and 4-byte 2-D memsets gets one per byte.
status fill_patterns(uint8_t *dst, const uint8_t *pattern, size_t size, size_t count, stream_t s) {
  if (count == 0) return status{};
  size_t period = pattern_period(pattern, size);
  size_t words = count * (size / period);
  if (period == 1) return drv::memset_8(dst, pattern[0], words, s);
  if (period == 2 && aligned(dst, 2)) {
    uint16_t v;
    std::memcpy(&v, pattern, 2);
    return drv::memset_16(dst, v, words, s);
  }
  if (period == 4 && aligned(dst, 4)) {
    uint32_t v;
    std::memcpy(&v, pattern, 4);
    return drv::memset_32(dst, v, words, s);
  }
  const bool wide = info().wide_2d_memset;
  size_t step = !wide ? 1 : (size % 4 == 0 && aligned(dst, 4)) ? 4 : (size % 2 == 0 && aligned(dst, 2)) ? 2 : 1;
  for (size_t off = 0; off < size; off += step) {
    status r;
    if (step == 4) {
      uint32_t v;
      std::memcpy(&v, pattern + off, 4);
      r = drv::memset_2d32(dst + off, size, v, 1, count, s);
    } else if (step == 2) {
      uint16_t v;
      std::memcpy(&v, pattern + off, 2);
      r = drv::memset_2d16(dst + off, size, v, 1, count, s);
    } else {
      r = drv::memset_2d8(dst + off, size, pattern[off], 1, count, s);
    }
    if (r) return r;
  }
  return status{};
}

namespace {

// Fills `len` bytes at `dst` with the pattern, starting `phase` bytes into it.
status fill_run(uint8_t *dst, const uint8_t *pattern, size_t size, size_t phase, size_t len, stream_t s) {
  if (phase == 0 && len % size == 0) return fill_patterns(dst, pattern, size, len / size, s);
  std::vector<uint8_t> rotated(size);
  for (size_t i = 0; i < size; ++i) rotated[i] = pattern[(phase + i) % size];
  size_t full = len / size;
  if (status r = fill_patterns(dst, rotated.data(), size, full, s)) return r;
  for (size_t j = 0; j < len % size; ++j)
    if (status r = drv::memset_8(dst + full * size + j, rotated[j], 1, s)) return r;
  return status{};
}

} // namespace

namespace {

// What ur_common's USM commands leave to the backend (ur_common/usm_commands.hpp). A
// range stays inside the allocation or pool block it starts in, prefetch's and
// advice's too (the spec's INVALID_SIZE, as on every other adapter).
struct usm_command_hooks {
  using Queue = stream_backend::Queue;
  using Command = stream_backend::Command;
  static ur_result_t check_usm(Queue *q, const void *p, size_t bytes) {
    return q->ctx->pools->check_usm_region(p, bytes);
  }
  static ur_result_t check_hint_range(Queue *q, const void *p, size_t bytes) { return check_usm(q, p, bytes); }

  static ur_result_t fill(Command &cmd, Queue *, void *pMem, const uint8_t *pattern, size_t patternSize, size_t size) {
    return to_ur(fill_patterns(static_cast<uint8_t *>(pMem), pattern, patternSize, size / patternSize, cmd.stream()));
  }

  static ur_result_t fill_2d(Command &cmd, Queue *, uint8_t *dst, size_t pitch, const uint8_t *pattern,
                             size_t patternSize, size_t width, size_t height) {
    status r{};
    size_t period = pattern_period(pattern, patternSize);
    const bool one_memset = period == 1 || info().wide_2d_memset;
    if (one_memset && width % patternSize == 0 && period <= 4 && aligned(dst, period) && pitch % period == 0) {
      // One 2-D memset covers the whole region.
      size_t w = width / period;
      if (period == 1)
        r = drv::memset_2d8(dst, pitch, pattern[0], w, height, cmd.stream());
      else if (period == 2) {
        uint16_t v;
        std::memcpy(&v, pattern, 2);
        r = drv::memset_2d16(dst, pitch, v, w, height, cmd.stream());
      } else {
        uint32_t v;
        std::memcpy(&v, pattern, 4);
        r = drv::memset_2d32(dst, pitch, v, w, height, cmd.stream());
      }
    } else {
      // Row by row; the pattern runs on across rows as over one flat range.
      for (size_t row = 0; row < height && !r; ++row)
        r = fill_run(dst + row * pitch, pattern, patternSize, (row * width) % patternSize, width, cmd.stream());
    }
    return to_ur(r);
  }

  // A blocking copy waits for its stream.
  static ur_result_t memcpy(Queue *q, bool blocking, void *pDst, const void *pSrc, size_t size, uint32_t n,
                            const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    Command cmd(q, UR_COMMAND_USM_MEMCPY, n, waits, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    stream_t stream = cmd.stream();
    ur_result_t r = cmd.finish(to_ur(drv::memcpy_async(pDst, pSrc, size, stream)));
    if (r == UR_RESULT_SUCCESS && blocking) r = to_ur(drv::stream_synchronize(stream));
    return r;
  }

  static ur_result_t memcpy_2d(Queue *q, bool blocking, void *pDst, size_t dstPitch, const void *pSrc, size_t srcPitch,
                               size_t width, size_t height, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    Command cmd(q, UR_COMMAND_USM_MEMCPY_2D, n, waits, phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    stream_t stream = cmd.stream();
    status cr{};
    if (width > 0) cr = drv::memcpy_2d_async(pDst, dstPitch, pSrc, srcPitch, width, height, stream);
    ur_result_t r = cmd.finish(to_ur(cr));
    if (r == UR_RESULT_SUCCESS && blocking) r = to_ur(drv::stream_synchronize(stream));
    return r;
  }

  // Only managed memory migrates; for anything else the hint has nothing to do.
  static ur_result_t prefetch(Command &cmd, Queue *q, const void *pMem, size_t size, ur_usm_migration_flags_t flags) {
    status r{};
    if (q->dev->facts.concurrent_managed && drv::is_managed(pMem))
      r = drv::prefetch(pMem, size, (flags & UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST) != 0, q->dev->ordinal, cmd.stream());
    return to_ur(r);
  }

  static ur_result_t advise(Command &, Queue *q, const void *pMem, size_t size, ur_usm_advice_flags_t advice) {
    if (!drv::is_managed(pMem)) return UR_RESULT_SUCCESS; // advice concerns managed memory only

    struct Mapping {
      ur_usm_advice_flags_t flag;
      mem_advice advice;
      bool host;
    };
    const Mapping table[] = {
        {UR_USM_ADVICE_FLAG_SET_READ_MOSTLY, mem_advice::set_read_mostly, false},
        {UR_USM_ADVICE_FLAG_CLEAR_READ_MOSTLY, mem_advice::unset_read_mostly, false},
        {UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION, mem_advice::set_preferred_location, false},
        {UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION, mem_advice::unset_preferred_location, false},
        {UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION_HOST, mem_advice::set_preferred_location, true},
        {UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION_HOST, mem_advice::unset_preferred_location, true},
        {UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_DEVICE, mem_advice::set_accessed_by, false},
        {UR_USM_ADVICE_FLAG_CLEAR_ACCESSED_BY_DEVICE, mem_advice::unset_accessed_by, false},
        {UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_HOST, mem_advice::set_accessed_by, true},
        {UR_USM_ADVICE_FLAG_CLEAR_ACCESSED_BY_HOST, mem_advice::unset_accessed_by, true},
    };
    const int ordinal = q->dev->ordinal;
    if (advice & UR_USM_ADVICE_FLAG_DEFAULT) {
      // Back to no advice at all.
      drv::advise(pMem, size, mem_advice::unset_read_mostly, false, ordinal);
      drv::advise(pMem, size, mem_advice::unset_preferred_location, false, ordinal);
      drv::advise(pMem, size, mem_advice::unset_accessed_by, false, ordinal);
      drv::advise(pMem, size, mem_advice::unset_accessed_by, true, ordinal);
    }
    for (const Mapping &m : table) {
      if (!(advice & m.flag)) continue;
      // One the driver declines for this device is not an error.
      if (status r = drv::advise(pMem, size, m.advice, m.host, ordinal))
        ORDO_LOG(logger(), debug, "advice %d declined: %s", int(m.advice), drv::error_text(r).c_str());
    }
    // Non-atomic-mostly, cache bias and coherence hints have no driver counterpart.
    return UR_RESULT_SUCCESS;
  }
};

} // namespace

void install_enqueue_usm_entry_points(ur_dditable_t &t) {
  ordo::ur_common::usm_commands<usm_command_hooks>::install(t);
}

} // namespace ordo::stream_backend
