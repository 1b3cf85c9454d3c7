// SPDX-License-Identifier: Apache-2.0
// Checked size arithmetic for sizes that come from the C API (docs/conformance.md):
// a product or sum that does not fit a size_t is the caller's bad input, answered
// with INVALID_SIZE by the entry point, never a wrapped bound that lets a command
// write outside its memory. Header-only, so every adapter can use it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ordo::checked {

// out = a * b; false when it does not fit.
inline bool mul(size_t a, size_t b, size_t &out) { return !__builtin_mul_overflow(a, b, &out); }

// out = a + b; false when it does not fit.
inline bool add(size_t a, size_t b, size_t &out) { return !__builtin_add_overflow(a, b, &out); }

// The bytes a 2-D region of `height` rows of `width` bytes, `pitch` bytes apart,
// touches from its first byte: (height - 1) * pitch + width. False on overflow or
// for height 0 (no region).
inline bool span_2d(size_t pitch, size_t width, size_t height, size_t &out) {
  if (height == 0) return false;
  size_t rows_before_last;
  return mul(height - 1, pitch, rows_before_last) && add(rows_before_last, width, out);
}

// [p, p + bytes) does not run past the end of the address space: a range that
// wraps cannot be memory of any kind.
inline bool fits_address_space(const void *p, size_t bytes) {
  return bytes <= UINTPTR_MAX - reinterpret_cast<uintptr_t>(p);
}

} // namespace ordo::checked
