// SPDX-License-Identifier: Apache-2.0
// Rectangular copies (urEnqueueMemBuffer{Read,Write,Copy}Rect): the pitch rules and the
// bytes one side of a region touches, once for every adapter. Offsets and widths are in
// bytes; heights and depths in rows and slices; a pitch of 0 is tight.
#pragma once
#include <cstddef>

#include "ur_api.h"

namespace ordo {

// One side of a rectangular copy, resolved: the pitches it uses and the bytes it
// touches, [first, end), counted from the start of its memory.
struct rect_side {
  size_t first = 0;
  size_t row = 0;
  size_t slice = 0;
  size_t end = 0;
  // The origin as given (bytes, rows, slices), for a backend that takes origins and
  // pitches rather than offsets (OpenCL).
  size_t origin[3] = {};
};

namespace detail {
inline bool mul_add(size_t a, size_t b, size_t c, size_t &out) { // out = a * b + c, false on overflow
  size_t p;
  return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(p, c, &out);
}
} // namespace detail

// INVALID_SIZE for an empty region, a row pitch below the width, a slice pitch below
// one slice's rows or not a whole number of rows, or a side past the end of memory.
inline ur_result_t resolve_rect_side(const ur_rect_offset_t &origin, const ur_rect_region_t &region, size_t row_pitch,
                                     size_t slice_pitch, rect_side &s) {
  const size_t w = region.width, h = region.height, d = region.depth;
  if (w == 0 || h == 0 || d == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (row_pitch != 0 && row_pitch < w) return UR_RESULT_ERROR_INVALID_SIZE;
  s.row = row_pitch != 0 ? row_pitch : w;
  size_t min_slice;
  if (__builtin_mul_overflow(h, s.row, &min_slice)) return UR_RESULT_ERROR_INVALID_SIZE;
  if (slice_pitch != 0 && (slice_pitch < min_slice || slice_pitch % s.row != 0)) return UR_RESULT_ERROR_INVALID_SIZE;
  s.slice = slice_pitch != 0 ? slice_pitch : min_slice;
  size_t first, last_row, last;
  if (!detail::mul_add(origin.z, s.slice, 0, first) || !detail::mul_add(origin.y, s.row, first, first) ||
      __builtin_add_overflow(first, static_cast<size_t>(origin.x), &first))
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (!detail::mul_add(d - 1, s.slice, first, last_row) || !detail::mul_add(h - 1, s.row, last_row, last) ||
      __builtin_add_overflow(last, w, &s.end))
    return UR_RESULT_ERROR_INVALID_SIZE;
  s.first = first;
  s.origin[0] = origin.x;
  s.origin[1] = origin.y;
  s.origin[2] = origin.z;
  return UR_RESULT_SUCCESS;
}

// Whether [a, a + an) and [b, b + bn) share a byte (offsets inside one buffer: no overflow).
inline bool spans_overlap(size_t a, size_t an, size_t b, size_t bn) {
  return an != 0 && bn != 0 && a < b + bn && b < a + an;
}

// Whether two resolved sides of `region`, at `a` and `b` in one buffer, share a byte. Each
// side's rows are runs of `width` bytes in ascending order that do not touch (a row pitch
// is at least the width, a slice pitch at least a slice's rows: resolve_rect_side), so one walk
// over both lists finds any shared byte, in at most as many steps as the copy has rows.
inline bool rect_sides_overlap(size_t a, const rect_side &as, size_t b, const rect_side &bs,
                               const ur_rect_region_t &region) {
  if (!spans_overlap(a + as.first, as.end - as.first, b + bs.first, bs.end - bs.first)) return false;
  const size_t w = region.width, h = region.height, rows = h * region.depth; // fits: the rows lie in the buffer
  auto row_start = [h](size_t base, const rect_side &s, size_t k) {
    return base + s.first + (k / h) * s.slice + (k % h) * s.row;
  };
  for (size_t i = 0, j = 0; i < rows && j < rows;) {
    const size_t x = row_start(a, as, i), y = row_start(b, bs, j);
    if (spans_overlap(x, w, y, w)) return true;
    if (x < y)
      ++i;
    else
      ++j;
  }
  return false;
}

} // namespace ordo
