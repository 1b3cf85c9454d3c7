// SPDX-License-Identifier: Apache-2.0
// What a SYCL program pays per command through a UR adapter (issue 11, "OpenCL under a
// SYCL runtime"; docs/performance.md): host-only workloads timed through the DPC++
// runtime, one [info] line each (nanoseconds per operation, the median of the rounds).
// scripts/sycl_bench.sh runs it through Ordo's adapters and through the runtime's own,
// interleaved, and prints the ratios. Not a test: nothing is asserted about time.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "sycl_check.hpp"

#include <sycl/ext/oneapi/experimental/async_alloc/async_alloc.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

// Nanoseconds per operation of `body` (which does `ops` operations), median of `rounds`.
template <class F> double per_op(int rounds, int ops, F &&body) {
  std::vector<double> t;
  body(); // warm up: first-use costs (pools, programs) are not what is measured
  for (int r = 0; r < rounds; ++r) {
    auto t0 = clock_type::now();
    body();
    t.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / ops);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int main() {
  ordo_sycl::Checker c("ordo-sycl-bench");
  sycl::device dev = ordo_sycl::pick_device(c); // exits 77 without one
  const int rounds = std::getenv("ORDO_SYCL_BENCH_ROUNDS") ? std::atoi(std::getenv("ORDO_SYCL_BENCH_ROUNDS")) : 15;
  sycl::queue q(dev, sycl::property::queue::in_order{});
  sycl::queue ooo(dev);
  const size_t bytes = 4096;
  char *p = sycl::malloc_device<char>(bytes, q);

  c.info("memset_wait_ns", per_op(rounds, 100, [&] {
           for (int i = 0; i < 100; ++i) q.memset(p, i, bytes).wait();
         }));
  c.info("memset_throughput_ns", per_op(rounds, 1000, [&] {
           for (int i = 0; i < 1000; ++i) q.memset(p, i, bytes);
           q.wait();
         }));
  c.info("usm_alloc_free_ns", per_op(rounds, 100, [&] {
           for (int i = 0; i < 100; ++i) sycl::free(sycl::malloc_device<char>(bytes, q), q);
         }));
  c.info("ooo_fill_chain_ns", per_op(rounds, 200, [&] {
           sycl::event e;
           for (int i = 0; i < 200; ++i) e = ooo.fill(p, char(i), bytes, e);
           e.wait();
         }));
  // The runtime's own OpenCL adapters have no stream-ordered allocation: this row then
  // says so instead of a time.
  if (!dev.has(sycl::aspect::ext_oneapi_async_memory_alloc)) {
    c.skip("async_alloc_memset_free_ns", "the device has no ext_oneapi_async_memory_alloc");
  } else {
    c.info("async_alloc_memset_free_ns", per_op(rounds, 100, [&] {
             namespace exp = sycl::ext::oneapi::experimental;
             for (int i = 0; i < 100; ++i) {
               void *a = exp::async_malloc(q, sycl::usm::alloc::device, bytes);
               q.memset(a, 0, bytes);
               exp::async_free(q, a);
             }
             q.wait();
           }));
  }
  sycl::free(p, q);
  return c.finish();
}
