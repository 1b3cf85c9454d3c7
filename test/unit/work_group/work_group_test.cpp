// SPDX-License-Identifier: Apache-2.0
// ordo::largest_divisor_at_most: the answer against a brute-force search for small sizes,
// and global sizes near SIZE_MAX (urKernelGetSuggestedLocalWorkSize once looped for
// minutes on them: the search then grew with sqrt(n), and d * d overflowed).
#include <gtest/gtest.h>

#include <cstdint>

#include "ordo/work_group.hpp"

namespace {

size_t brute_force(size_t n, size_t cap) {
  if (n == 0) return 1;
  for (size_t c = cap < n ? cap : n; c > 1; --c)
    if (n % c == 0) return c;
  return 1;
}

TEST(WorkGroup, MatchesBruteForceForSmallSizes) {
  for (size_t n = 0; n <= 2000; ++n)
    for (size_t cap : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{100}, size_t{1024}, size_t{5000}})
      ASSERT_EQ(ordo::largest_divisor_at_most(n, cap), brute_force(n, cap)) << "n " << n << " cap " << cap;
}

TEST(WorkGroup, ZeroCapIsOne) { EXPECT_EQ(ordo::largest_divisor_at_most(12, 0), 1u); }

TEST(WorkGroup, HugeGlobalSizesAnswerAtOnce) {
  EXPECT_EQ(ordo::largest_divisor_at_most(SIZE_MAX, 4096), brute_force(SIZE_MAX, 4096));
  EXPECT_EQ(ordo::largest_divisor_at_most(SIZE_MAX - 58, 4096), 1u); // 2^64 - 59 is prime
  EXPECT_EQ(ordo::largest_divisor_at_most(size_t{1} << 60, 4096), 4096u);
  EXPECT_EQ(ordo::largest_divisor_at_most(size_t{1} << 60, 1000), 512u);
  // A cap above sqrt(n) takes the divisor-pair walk: still bounded (sqrt(2^40) = 2^20).
  const size_t n = (size_t{1} << 40) + 1, cap = size_t{1} << 30;
  const size_t got = ordo::largest_divisor_at_most(n, cap);
  EXPECT_EQ(n % got, 0u);
  EXPECT_LE(got, cap);
  EXPECT_EQ(got, n / 4278255361u); // 2^40 + 1 = 257 * 4278255361, and the cofactor is above cap
}

} // namespace
