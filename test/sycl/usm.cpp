// SPDX-License-Identifier: Apache-2.0
// Unified shared memory of all three kinds: allocation and pointer queries, memset,
// fill with patterns of several sizes, memcpy and copy between every pair of kinds (and
// plain host memory), prefetch and mem_advise, usm_allocator.
#include "sycl_check.hpp"

#include <array>
#include <cstdint>
#include <cstring>

using namespace ordo_sycl;

namespace {

const char *kind_name(sycl::usm::alloc k) {
  switch (k) {
  case sycl::usm::alloc::host: return "host";
  case sycl::usm::alloc::device: return "device";
  case sycl::usm::alloc::shared: return "shared";
  default: return "unknown";
  }
}

struct Pattern12 { // a 12-byte pattern: not a power of two
  uint32_t a, b, c;
  bool operator==(const Pattern12 &o) const { return a == o.a && b == o.b && c == o.c; }
};

// Fills `count` elements of device memory with `value` and reads them back.
template <class T> void check_fill(Checker &c, sycl::queue &q, T value, const std::string &name) {
  constexpr size_t count = 4099; // odd on purpose
  T *d = sycl::malloc_device<T>(count + 2, q);
  std::vector<T> back(count + 2);
  T zero{};
  q.fill(d, zero, count + 2).wait();
  q.fill(d + 1, value, count).wait();
  q.memcpy(back.data(), d, (count + 2) * sizeof(T)).wait();
  bool ok = back[0] == zero && back[count + 1] == zero;
  size_t bad = 0;
  for (size_t i = 1; i <= count; ++i)
    if (!(back[i] == value)) {
      ok = false;
      bad = i;
      break;
    }
  c.check(ok, name, bad ? "element " + std::to_string(bad) + " differs" : "fill wrote outside its range");
  sycl::free(d, q);
}

} // namespace

int main() {
  Checker c("ordo-sycl-usm");
  sycl::device dev = pick_device(c);
  sycl::context ctx(dev);
  sycl::queue q(ctx, dev, sycl::property::queue::in_order{});
  constexpr size_t n = 1 << 20;

  c.section("alloc", [&] {
    for (auto kind : {sycl::usm::alloc::host, sycl::usm::alloc::device, sycl::usm::alloc::shared}) {
      const std::string p = std::string("alloc.") + kind_name(kind);
      void *ptr = sycl::malloc(n, dev, ctx, kind);
      if (!c.check(ptr != nullptr, p + " returns memory")) continue;
      c.check(sycl::get_pointer_type(ptr, ctx) == kind, p + " get_pointer_type",
              kind_name(sycl::get_pointer_type(ptr, ctx)));
      c.check(sycl::get_pointer_type(static_cast<char *>(ptr) + n / 2, ctx) == kind,
              p + " get_pointer_type of an interior pointer");
      if (kind != sycl::usm::alloc::host) c.check(sycl::get_pointer_device(ptr, ctx) == dev, p + " get_pointer_device");
      sycl::free(ptr, ctx);
    }
    int on_stack = 0;
    std::vector<int> on_heap(16);
    c.check(sycl::get_pointer_type(&on_stack, ctx) == sycl::usm::alloc::unknown,
            "get_pointer_type of a stack pointer is unknown");
    c.check(sycl::get_pointer_type(on_heap.data(), ctx) == sycl::usm::alloc::unknown,
            "get_pointer_type of a heap pointer is unknown");
    for (size_t align : {64, 256, 4096}) {
      void *a = sycl::aligned_alloc_device(align, 1000, q);
      c.check(a && reinterpret_cast<uintptr_t>(a) % align == 0, "aligned_alloc_device " + std::to_string(align));
      sycl::free(a, q);
    }
    void *h = sycl::aligned_alloc_host(4096, 1000, q);
    c.check(h && reinterpret_cast<uintptr_t>(h) % 4096 == 0, "aligned_alloc_host 4096");
    sycl::free(h, q);
    void *s = sycl::aligned_alloc_shared(4096, 1000, q);
    c.check(s && reinterpret_cast<uintptr_t>(s) % 4096 == 0, "aligned_alloc_shared 4096");
    sycl::free(s, q);
  });

  c.section("host_and_shared_are_host_accessible", [&] {
    auto *h = sycl::malloc_host<uint32_t>(n, q);
    auto *s = sycl::malloc_shared<uint32_t>(n, q);
    for (size_t i = 0; i < n; ++i) h[i] = static_cast<uint32_t>(i), s[i] = static_cast<uint32_t>(3 * i);
    q.memcpy(s, h, n / 2 * sizeof(uint32_t)).wait();
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && s[i] == (i < n / 2 ? i : 3 * i);
    c.check(ok, "memcpy host USM -> shared USM, read on the host");
    q.memset(h, 0, n * sizeof(uint32_t)).wait();
    ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && h[i] == 0;
    c.check(ok, "memset of host USM, read on the host");
    q.prefetch(s, n * sizeof(uint32_t)).wait();
    c.check(true, "prefetch of shared USM");
    c.section("mem_advise", [&] {
      q.mem_advise(s, n * sizeof(uint32_t), 0).wait();
      c.check(true, "mem_advise(0) of shared USM");
    });
    sycl::free(h, q);
    sycl::free(s, q);
  });

  c.section("memset", [&] {
    auto *d = sycl::malloc_device<uint8_t>(n, q);
    std::vector<uint8_t> back(n);
    q.memset(d, 0xab, n);
    q.memset(d + 1000, 0x01, 333);
    q.memcpy(back.data(), d, n).wait();
    std::vector<uint8_t> want(n, 0xab);
    std::fill(want.begin() + 1000, want.begin() + 1333, 0x01);
    c.check(back == want, "memset of device memory, then a smaller one at an offset", first_mismatch(back, want));
    sycl::free(d, q);
  });

  c.section("fill", [&] {
    if (usm_fill_is_a_kernel(q.get_device())) return c.skip("fill", kUsmFillKernelWhy);
    check_fill<uint8_t>(c, q, 0x5c, "fill 1-byte pattern");
    check_fill<uint16_t>(c, q, 0xbeef, "fill 2-byte pattern");
    check_fill<uint32_t>(c, q, 0xdeadbeefu, "fill 4-byte pattern");
    check_fill<uint64_t>(c, q, 0x0123456789abcdefull, "fill 8-byte pattern");
    check_fill<std::array<uint64_t, 2>>(c, q, {0x1111222233334444ull, 0x5555666677778888ull}, "fill 16-byte pattern");
    std::array<uint64_t, 16> big{};
    for (size_t i = 0; i < big.size(); ++i) big[i] = 0x0101010101010101ull * (i + 1);
    check_fill<std::array<uint64_t, 16>>(c, q, big, "fill 128-byte pattern");
    check_fill<Pattern12>(c, q, Pattern12{1, 2, 3}, "fill 12-byte pattern");
  });

  c.section("memcpy_matrix", [&] {
    // Every pair of (plain host memory, host USM, device USM, shared USM), via a pattern
    // written to the source and read back through a host-readable copy.
    constexpr size_t m = 1 << 18;
    const char *names[] = {"malloc", "host", "device", "shared"};
    auto make = [&](int k) -> uint32_t * {
      switch (k) {
      case 0: return static_cast<uint32_t *>(std::malloc(m * sizeof(uint32_t)));
      case 1: return sycl::malloc_host<uint32_t>(m, q);
      case 2: return sycl::malloc_device<uint32_t>(m, q);
      default: return sycl::malloc_shared<uint32_t>(m, q);
      }
    };
    auto release = [&](int k, uint32_t *p) {
      if (k == 0)
        std::free(p);
      else
        sycl::free(p, q);
    };
    std::vector<uint32_t> pattern(m);
    for (size_t i = 0; i < m; ++i) pattern[i] = static_cast<uint32_t>(i * 2654435761u);
    for (int from = 0; from < 4; ++from)
      for (int to = 0; to < 4; ++to) {
        const std::string name = std::string((from + to) % 2 ? "memcpy " : "copy ") + names[from] + " -> " + names[to];
        uint32_t *src = make(from);
        uint32_t *dst = make(to);
        c.section(name, [&] {
          // The source is written with a memcpy from a std::vector (plain host memory),
          // the destination cleared with a memcpy from a zeroed one (memset needs USM).
          std::vector<uint32_t> zeros(m, 0), back(m, 1);
          q.memcpy(src, pattern.data(), m * sizeof(uint32_t));
          q.memcpy(dst, zeros.data(), m * sizeof(uint32_t));
          if ((from + to) % 2)
            q.memcpy(dst, src, m * sizeof(uint32_t));
          else
            q.copy(src, dst, m);
          q.memcpy(back.data(), dst, m * sizeof(uint32_t));
          q.wait_and_throw();
          c.check(back == pattern, name, first_mismatch(back, pattern));
        });
        q.wait();
        release(from, src);
        release(to, dst);
      }
  });

  c.section("memcpy_offsets", [&] {
    auto *d = sycl::malloc_device<uint8_t>(4096, q);
    std::vector<uint8_t> src(4096), back(4096, 0xee);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
    q.memset(d, 0, 4096);
    q.memcpy(d + 3, src.data() + 5, 1001);
    q.memcpy(back.data() + 11, d, 1010).wait();
    bool ok = true;
    for (size_t i = 0; i < 1010; ++i) {
      uint8_t want = (i >= 3 && i < 1004) ? src[i - 3 + 5] : 0;
      ok = ok && back[11 + i] == want;
    }
    ok = ok && back[10] == 0xee && back[1021] == 0xee;
    c.check(ok, "memcpy at unaligned offsets in and out of device memory");
    sycl::free(d, q);
  });

  c.section("usm_allocator", [&] {
    sycl::usm_allocator<int, sycl::usm::alloc::shared> alloc(q);
    std::vector<int, decltype(alloc)> v(alloc);
    for (int i = 0; i < 10000; ++i) v.push_back(i);
    c.check(sycl::get_pointer_type(v.data(), ctx) == sycl::usm::alloc::shared,
            "usm_allocator<shared> memory is shared");
    int *d = sycl::malloc_device<int>(v.size(), q);
    q.copy(v.data(), d, v.size());
    q.memset(v.data(), 0, v.size() * sizeof(int));
    q.copy(d, v.data(), v.size()).wait();
    bool ok = true;
    for (int i = 0; i < 10000; ++i) ok = ok && v[i] == i;
    c.check(ok, "std::vector with usm_allocator<shared>: round trip through device memory");
    sycl::free(d, q);
  });

  return c.finish();
}
