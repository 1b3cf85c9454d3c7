// SPDX-License-Identifier: Apache-2.0
// Buffers and accessors without kernels: handler::fill, handler::copy between accessors,
// host pointers, shared_ptrs and USM, ranged 2-D accessors (rectangular copies),
// sub-buffers, update_host, host accessors and the write-back when a buffer with a host
// pointer goes away. (handler::fill of a ranged multi-dimensional accessor is left out:
// the runtime implements it with a kernel, which a host-only program cannot have.)
#include "sycl_check.hpp"

#include <cstdint>
#include <memory>
#include <numeric>

using namespace ordo_sycl;

int main() {
  Checker c("ordo-sycl-buffer");
  sycl::device dev = pick_device(c);
  sycl::context ctx(dev);
  sycl::queue q(ctx, dev);
  constexpr size_t n = 1 << 16;

  c.section("fill_and_host_accessor", [&] {
    sycl::buffer<int, 1> b{sycl::range<1>(n)};
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::write_only, sycl::no_init);
      h.fill(acc, 42);
    });
    sycl::host_accessor ha(b, sycl::read_only);
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && ha[i] == 42;
    c.check(ok, "handler::fill of a buffer, read with a host_accessor");
  });

  c.section("write_back", [&] {
    std::vector<int> host(n, -1);
    {
      sycl::buffer<int, 1> b(host.data(), sycl::range<1>(n));
      q.submit([&](sycl::handler &h) {
        sycl::accessor acc(b, h, sycl::write_only);
        h.fill(acc, 9);
      });
    } // the buffer's destructor waits and writes back
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && host[i] == 9;
    c.check(ok, "a buffer over host memory writes back when destroyed");
  });

  c.section("copy_host_to_buffer_to_host", [&] {
    std::vector<int> src(n), dst(n, 0);
    std::iota(src.begin(), src.end(), 100);
    sycl::buffer<int, 1> b{sycl::range<1>(n)};
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::write_only, sycl::no_init);
      h.copy(src.data(), acc);
    });
    q.submit([&](sycl::handler &h) {
       sycl::accessor acc(b, h, sycl::read_only);
       h.copy(acc, dst.data());
     }).wait();
    c.check(dst == src, "handler::copy host pointer -> accessor -> host pointer", first_mismatch(dst, src));

    auto shared_src = std::shared_ptr<int>(new int[n], std::default_delete<int[]>());
    for (size_t i = 0; i < n; ++i) shared_src.get()[i] = static_cast<int>(n - i);
    auto shared_dst = std::shared_ptr<int>(new int[n], std::default_delete<int[]>());
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::write_only);
      h.copy(shared_src, acc);
    });
    q.submit([&](sycl::handler &h) {
       sycl::accessor acc(b, h, sycl::read_only);
       h.copy(acc, shared_dst);
     }).wait();
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && shared_dst.get()[i] == static_cast<int>(n - i);
    c.check(ok, "handler::copy shared_ptr -> accessor -> shared_ptr");
  });

  c.section("copy_accessor_to_accessor", [&] {
    std::vector<uint64_t> init(n);
    for (size_t i = 0; i < n; ++i) init[i] = i * i;
    sycl::buffer<uint64_t, 1> a(init.data(), sycl::range<1>(n));
    sycl::buffer<uint64_t, 1> b{sycl::range<1>(n)};
    q.submit([&](sycl::handler &h) {
      sycl::accessor from(a, h, sycl::read_only);
      sycl::accessor to(b, h, sycl::write_only, sycl::no_init);
      h.copy(from, to);
    });
    sycl::host_accessor hb(b, sycl::read_only);
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && hb[i] == i * i;
    c.check(ok, "handler::copy accessor -> accessor");
  });

  c.section("ranged_accessors_2d", [&] {
    // handler::fill of a whole 2-D buffer is a fill command; a ranged one would need a
    // kernel (the runtime builds one), so the window is written with handler::copy.
    constexpr size_t rows = 64, cols = 48;
    sycl::buffer<int, 2> b{sycl::range<2>(rows, cols)};
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::write_only, sycl::no_init);
      h.fill(acc, 0);
    });
    // A 16x8 window at (10, 20) written from host memory: value 1000 * row + col.
    std::vector<int> win(16 * 8);
    for (size_t r = 0; r < 16; ++r)
      for (size_t col = 0; col < 8; ++col) win[r * 8 + col] = int(1000 * (10 + r) + 20 + col);
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::range<2>(16, 8), sycl::id<2>(10, 20), sycl::write_only);
      h.copy(win.data(), acc);
    });
    // A 4x4 window at (12, 22) read back into host memory.
    std::vector<int> small(16, -1);
    q.submit([&](sycl::handler &h) {
       sycl::accessor acc(b, h, sycl::range<2>(4, 4), sycl::id<2>(12, 22), sycl::read_only);
       h.copy(acc, small.data());
     }).wait();
    bool ok = true;
    for (size_t r = 0; r < 4; ++r)
      for (size_t col = 0; col < 4; ++col) ok = ok && small[r * 4 + col] == int(1000 * (12 + r) + 22 + col);
    c.check(ok, "handler::copy out of a 4x4 ranged accessor at (12, 22)");
    sycl::host_accessor ha(b, sycl::read_only);
    ok = true;
    for (size_t r = 0; r < rows; ++r)
      for (size_t col = 0; col < cols; ++col) {
        const bool in = r >= 10 && r < 26 && col >= 20 && col < 28;
        ok = ok && ha[r][col] == (in ? int(1000 * r + col) : 0);
      }
    c.check(ok, "handler::fill of a 64x48 buffer, handler::copy into a 16x8 ranged accessor at (10, 20)");
  });

  c.section("usm_and_buffers", [&] {
    std::vector<float> init(n);
    for (size_t i = 0; i < n; ++i) init[i] = 0.5f * i;
    sycl::buffer<float, 1> b(init.data(), sycl::range<1>(n));
    float *d = sycl::malloc_device<float>(n, q);
    q.submit([&](sycl::handler &h) {
       sycl::accessor acc(b, h, sycl::read_only);
       h.copy(acc, d);
     }).wait();
    std::vector<float> back(n);
    q.memcpy(back.data(), d, n * sizeof(float)).wait();
    c.check(back == init, "handler::copy accessor -> device USM");
    q.memset(d, 0, n * sizeof(float)).wait();
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::write_only);
      h.copy(d, acc);
    });
    sycl::host_accessor ha(b, sycl::read_only);
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && ha[i] == 0.0f;
    c.check(ok, "handler::copy device USM -> accessor");
    sycl::free(d, q);
  });

  c.section("sub_buffer", [&] {
    // The whole buffer has no host pointer: a buffer over host memory would need that
    // memory aligned to mem_base_addr_align for its sub-buffers (Intel's CPU OpenCL
    // refuses them otherwise, through any adapter).
    sycl::buffer<int, 1> whole{sycl::range<1>(n)};
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(whole, h, sycl::write_only, sycl::no_init);
      h.fill(acc, 0);
    });
    const size_t align = dev.get_info<sycl::info::device::mem_base_addr_align>() / 8;
    const size_t off = align >= sizeof(int) ? align / sizeof(int) : 1;
    sycl::buffer<int, 1> part(whole, sycl::id<1>(off), sycl::range<1>(256));
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(part, h, sycl::write_only);
      h.fill(acc, 3);
    });
    std::vector<int> host(n, -1);
    q.submit([&](sycl::handler &h) {
       sycl::accessor acc(whole, h, sycl::read_only);
       h.copy(acc, host.data());
     }).wait();
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && host[i] == ((i >= off && i < off + 256) ? 3 : 0);
    c.check(ok, "handler::fill of a sub-buffer at element " + std::to_string(off) + ", seen in the whole buffer");
  });

  c.section("update_host", [&] {
    std::vector<int> host(n, 0);
    sycl::buffer<int, 1> b(host.data(), sycl::range<1>(n));
    q.submit([&](sycl::handler &h) {
      sycl::accessor acc(b, h, sycl::write_only);
      h.fill(acc, 5);
    });
    q.submit([&](sycl::handler &h) {
       sycl::accessor acc(b, h, sycl::read_only);
       h.update_host(acc);
     }).wait();
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && host[i] == 5;
    c.check(ok, "handler::update_host brings a buffer's contents to its host memory while it lives");
  });

  return c.finish();
}
