// SPDX-License-Identifier: Apache-2.0
// The demo's pipeline through SYCL (DPC++ runtime, a host-only program: no kernels):
// rounds of allocate -> fill -> copy -> copy back -> free on one in-order queue, once
// with sycl_ext_oneapi_async_memory_alloc (stream-ordered: no host wait between rounds)
// and once with malloc_device/free (synchronous: free waits for the queue), timed.
// scripts/demo runs it on each device through Ordo's adapters (UR_ADAPTERS_FORCE_LOAD).
#include <sycl/sycl.hpp>
#include <sycl/ext/oneapi/experimental/async_alloc/async_alloc.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

namespace syclex = sycl::ext::oneapi::experimental;

namespace {

constexpr size_t kBytes = 1 << 20;
constexpr int kRounds = 200;

// One round's work on `a` and `b`; the last round's data comes back to `host`.
void work(sycl::queue &q, void *a, void *b, std::vector<unsigned char> &host, int round) {
  q.memset(a, round & 0xff, kBytes);
  q.memcpy(b, a, kBytes);
  q.memcpy(host.data(), b, kBytes);
}

template <class F> double seconds(F &&f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main() {
  try {
    sycl::queue q{sycl::property::queue::in_order{}};
    sycl::device dev = q.get_device();
    std::printf("%s (%s)\n", dev.get_info<sycl::info::device::name>().c_str(),
                dev.get_platform().get_info<sycl::info::platform::name>().c_str());
    if (!dev.has(sycl::aspect::ext_oneapi_async_memory_alloc)) {
      std::printf("  no ext_oneapi_async_memory_alloc on this device: nothing to compare\n");
      return 0;
    }
    std::vector<unsigned char> host(kBytes);
    bool ok = true;
    auto check = [&](int round) {
      for (size_t i = 0; i < kBytes; i += 4096) ok = ok && host[i] == static_cast<unsigned char>(round & 0xff);
    };

    const double ordered = seconds([&] {
      for (int r = 0; r < kRounds; ++r) {
        void *a = syclex::async_malloc(q, sycl::usm::alloc::device, kBytes);
        void *b = syclex::async_malloc(q, sycl::usm::alloc::device, kBytes);
        work(q, a, b, host, r);
        syclex::async_free(q, a);
        syclex::async_free(q, b);
      }
      q.wait();
    });
    check(kRounds - 1);
    const double plain = seconds([&] {
      for (int r = 0; r < kRounds; ++r) {
        void *a = sycl::malloc_device(kBytes, q);
        void *b = sycl::malloc_device(kBytes, q);
        work(q, a, b, host, r);
        q.wait(); // sycl::free may not return memory a queued command still uses
        sycl::free(a, q);
        sycl::free(b, q);
      }
    });
    check(kRounds - 1);
    std::printf("  %d rounds of 2 x 1 MiB: stream-ordered (async_malloc/async_free) %.1f ms, "
                "synchronous (malloc_device/free) %.1f ms: %.2fx the time; data %s\n",
                kRounds, ordered * 1e3, plain * 1e3, ordered / plain, ok ? "checked" : "WRONG");
    return ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::printf("  failed: %s\n", e.what());
    return 1;
  }
}
