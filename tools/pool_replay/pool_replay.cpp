// SPDX-License-Identifier: Apache-2.0
// ordo-pool-replay: the random workload of ordo-bench's AsyncAlloc_Random rows on an
// ordered pool core alone, for cache simulation (docs/ordered-pool.md, "Bookkeeping
// memory"). The backend hands out address space and never touches it, so the run maps
// nothing and valgrind can follow it:
//
//   valgrind --tool=cachegrind --cache-sim=yes --LL=4194304,16,64 ordo-pool-replay 100000 6
//
// Frees carry no release event, as the native CPU adapter's do on an in-order queue with
// nothing unfinished (its fast_free); allocs name one of two in-order queues. Each round
// runs the sequence, frees what is left, and trims the pool to nothing, as the benchmark
// does between iterations. Arguments: allocations (100000), rounds (1).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ordo_pool/ordered_pool.hpp"
#include "random_sequence.hpp"

namespace {

using namespace ordo::pool;

class address_space_backend : public backend {
public:
  void *get_chunk(std::size_t size) override {
    void *p = reinterpret_cast<void *>(next_);
    next_ += (size + 4095) & ~std::size_t{4095};
    return p;
  }
  void put_chunk(void *, std::size_t) override {}
  bool event_complete(event_handle) override { return true; }
  bool add_dependency(command_context, event_handle) override { return true; }
  void retain_event(event_handle) override {}
  void release_event(event_handle) override {}

private:
  std::uintptr_t next_ = std::uintptr_t{1} << 44; // never dereferenced
};

} // namespace

int main(int argc, char **argv) {
  const int allocations = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
  if (allocations <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: %s [allocations > 0] [rounds > 0]\n", argv[0]);
    return 2;
  }
  const std::vector<ordo_bench::Step> steps = ordo_bench::random_sequence(allocations);
  address_space_backend be;
  ordered_pool pool(be, pool_config{});
  int queues[2];
  std::vector<void *> live;
  live.reserve(steps.size());
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) {
    live.clear();
    for (const ordo_bench::Step &s : steps) {
      if (s.alloc) {
        alloc_request rq;
        rq.size = s.size_or_victim;
        rq.queue = &queues[s.queue];
        rq.in_order = true;
        alloc_result r{};
        if (pool.alloc(rq, r) != status::success) {
          std::fprintf(stderr, "alloc of %zu bytes failed\n", s.size_or_victim);
          return 1;
        }
        live.push_back(r.ptr);
      } else {
        void *p = live[s.size_or_victim];
        live[s.size_or_victim] = live.back();
        live.pop_back();
        if (pool.free_now(p) != status::success) {
          std::fprintf(stderr, "free failed\n");
          return 1;
        }
      }
    }
    for (void *p : live) pool.free_now(p);
    pool.trim_to(0);
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu operations x %d rounds: %.1f ns per operation\n", steps.size(), rounds,
              ns / (double(steps.size()) * rounds));
  return 0;
}
