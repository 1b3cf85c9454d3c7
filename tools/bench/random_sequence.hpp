// SPDX-License-Identifier: Apache-2.0
// The random allocation workload of issue 26, shared by ordo-bench's AsyncAlloc_Random
// rows and ordo-pool-replay, so that both run the same sequence.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace ordo_bench {

struct Step {
  bool alloc;
  std::size_t size_or_victim; // bytes, or the index into the live list to free
  int queue;                  // 0 or 1: allocs alternate, frees pick at random
};

// One fixed sequence: alloc (73 %) of 1 KiB..64 MiB, log-uniform, or free (27 %) of a
// random live block, until `allocations` allocs; the caller then frees what is left.
inline std::vector<Step> random_sequence(int allocations) {
  std::vector<Step> s;
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double lo = std::log(1024.0), hi = std::log(64.0 * 1024 * 1024);
  std::size_t live = 0;
  for (int made_allocs = 0; made_allocs < allocations;) {
    const bool alloc = live == 0 || unit(rng) < 0.73;
    if (alloc) {
      s.push_back({true, static_cast<std::size_t>(std::exp(lo + (hi - lo) * unit(rng))), made_allocs % 2});
      ++live;
      ++made_allocs;
    } else {
      s.push_back({false, static_cast<std::size_t>(unit(rng) * double(live)) % live, int(rng() % 2)});
      --live;
    }
  }
  return s;
}

} // namespace ordo_bench
