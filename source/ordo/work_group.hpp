// SPDX-License-Identifier: Apache-2.0
// Work-group sizes an adapter chooses (urKernelGetSuggestedLocalWorkSize, launches
// without a local size): divisors of the global size, so no group is partial.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ur_api.h"

namespace ordo {

// The shape a launch is refused for, checked the same way by urKernelGetSuggestedLocalWorkSize:
// dimensions outside 1..3 or an empty one are INVALID_WORK_DIMENSION, the code UR gives a
// launch with a global size of 0, so a suggestion is refused exactly when its launch would be.
inline ur_result_t check_global_work_size(uint32_t dims, const size_t *global) {
  if (dims < 1 || dims > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  for (uint32_t d = 0; d < dims; ++d)
    if (global[d] == 0) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  return UR_RESULT_SUCCESS;
}

// The largest divisor of n that is at most cap; 1 for n = 0 (no work). It takes at most
// min(cap, sqrt(n)) steps: callers pass a work-group limit as cap, so a global size near
// SIZE_MAX answers as fast as a small one.
inline size_t largest_divisor_at_most(size_t n, size_t cap) {
  if (n == 0) return 1;
  if (cap == 0) cap = 1;
  if (n <= cap) return n;
  if (cap <= n / cap) { // cap below sqrt(n): the first divisor counting down is the answer
    for (size_t c = cap; c > 1; --c)
      if (n % c == 0) return c;
    return 1;
  }
  // cap above sqrt(n): every divisor pairs with one at most sqrt(n) (d <= n / d cannot overflow).
  size_t best = 1;
  for (size_t d = 1; d <= n / d; ++d) {
    if (n % d) continue;
    if (d <= cap && d > best) best = d;
    if (n / d <= cap && n / d > best) best = n / d;
  }
  return best;
}

} // namespace ordo
