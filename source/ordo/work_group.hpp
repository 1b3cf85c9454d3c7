// SPDX-License-Identifier: Apache-2.0
// Work-group sizes an adapter chooses (urKernelGetSuggestedLocalWorkSize, launches
// without a local size): divisors of the global size, so no group is partial.
#pragma once
#include <algorithm>
#include <cstddef>

namespace ordo {

// The largest divisor of n that is at most cap (cap >= 1); 1 for n = 0 (no work).
inline size_t largest_divisor_at_most(size_t n, size_t cap) {
  if (n == 0) return 1;
  if (n <= cap) return n;
  size_t best = 1;
  for (size_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    if (d <= cap) best = std::max(best, d);
    if (n / d <= cap) best = std::max(best, n / d);
  }
  return best;
}

} // namespace ordo
