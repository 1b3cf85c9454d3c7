// SPDX-License-Identifier: Apache-2.0
// The size rules of urEnqueueUSMFill2D and urEnqueueUSMMemcpy2D that need nothing but
// the arguments, with checked arithmetic (checked_math.hpp), so that every adapter
// answers the same input the same way: INVALID_SIZE for a zero or too-small pitch, an
// empty region, a pattern size that is not a power of two or does not divide the
// region, and a region whose span overflows or runs past the end of the address space
// (issue 22: a wrapped span let a command write before its allocation). An adapter that
// knows its allocations checks more after these: `pitch * height` bytes inside the
// allocation (ur_common/usm_commands.hpp, check_region_2d).
#pragma once
#include <cstddef>

#include "ordo/checked_math.hpp"
#include "ur_api.h"

namespace ordo::usm_2d {

inline bool region_fits(const void *p, size_t pitch, size_t width, size_t height) {
  size_t span = 0;
  return checked::span_2d(pitch, width, height, span) && checked::fits_address_space(p, span);
}

inline ur_result_t fill_sizes(const void *mem, size_t pitch, size_t pattern_size, size_t width, size_t height) {
  if (pitch == 0 || width == 0 || height == 0 || pitch < width || pattern_size == 0 ||
      (pattern_size & (pattern_size - 1)) != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (!region_fits(mem, pitch, width, height)) return UR_RESULT_ERROR_INVALID_SIZE;
  const size_t bytes = width * height; // bounded by the span: pitch >= width
  if (pattern_size > bytes || bytes % pattern_size != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

inline ur_result_t memcpy_sizes(const void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t width,
                                size_t height) {
  if (dst_pitch == 0 || src_pitch == 0 || width == 0 || height == 0 || dst_pitch < width || src_pitch < width)
    return UR_RESULT_ERROR_INVALID_SIZE;
  if (!region_fits(dst, dst_pitch, width, height) || !region_fits(src, src_pitch, width, height))
    return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::usm_2d
