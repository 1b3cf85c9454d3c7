// Rectangular copies (urEnqueueMemBuffer{Read,Write,Copy}Rect, urEnqueueUSMMemcpy2D):
// the pitch rules and the extent of a region, once for every adapter. Offsets and
// widths are in bytes; heights and depths in rows and slices; a pitch of 0 is tight.
#pragma once
#include <cstddef>

#include "ur_api.h"

namespace ordo {

// The pitches a region uses (0 replaced by the tight value), or INVALID_SIZE for an
// empty region, a row pitch below the width, or a slice pitch below one slice's rows
// or not a whole number of rows.
inline ur_result_t rect_pitches(const ur_rect_region_t &region, size_t &row_pitch, size_t &slice_pitch) {
  if (region.width == 0 || region.height == 0 || region.depth == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (row_pitch == 0) row_pitch = region.width;
  if (row_pitch < region.width) return UR_RESULT_ERROR_INVALID_SIZE;
  if (slice_pitch == 0) slice_pitch = row_pitch * region.height;
  if (slice_pitch < row_pitch * region.height || slice_pitch % row_pitch != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

// One past the last byte the region touches, counted from the memory's start.
inline size_t rect_end(const ur_rect_offset_t &origin, const ur_rect_region_t &region, size_t row_pitch,
                       size_t slice_pitch) {
  return (origin.z + region.depth - 1) * slice_pitch + (origin.y + region.height - 1) * row_pitch + origin.x +
         region.width;
}

} // namespace ordo
