// SPDX-License-Identifier: Apache-2.0
// Work-group sizes an adapter chooses (urKernelGetSuggestedLocalWorkSize, launches
// without a local size): divisors of the global size, so no group is partial.
#pragma once
#include <cstddef>

namespace ordo {

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
