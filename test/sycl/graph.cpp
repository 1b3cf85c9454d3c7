// SPDX-License-Identifier: Apache-2.0
// SYCL graphs (sycl_ext_oneapi_graph) of copies and fills, which the runtime turns into
// UR command buffers: a graph built node by node with dependencies, one recorded from
// an in-order queue, buffer copies through accessors, and each executed more than once
// with the data checked every time. Host-only: no kernels.
#include "sycl_check.hpp"

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <cstdint>

using namespace ordo_sycl;
namespace sycl_exp = sycl::ext::oneapi::experimental;

namespace {

std::vector<uint32_t> read_back(sycl::queue &q, const uint32_t *p, size_t n) {
  std::vector<uint32_t> v(n);
  q.memcpy(v.data(), p, n * sizeof(uint32_t)).wait();
  return v;
}

} // namespace

int main() {
  Checker c("ordo-sycl-graph");
  sycl::device dev = pick_device(c);
  const bool limited = dev.has(sycl::aspect::ext_oneapi_limited_graph);
  const bool full = dev.has(sycl::aspect::ext_oneapi_graph);
  c.info("aspect.ext_oneapi_limited_graph", limited);
  c.info("aspect.ext_oneapi_graph", full);
  if (!limited && !full) {
    c.skip("graph", "the device offers neither ext_oneapi_graph nor ext_oneapi_limited_graph");
    return c.finish();
  }
  sycl::context ctx(dev);
  sycl::queue q(ctx, dev, sycl::property::queue::in_order{});
  constexpr size_t n = 1 << 16;

  c.section("explicit", [&] {
    if (usm_fill_is_a_kernel(dev)) return c.skip("explicit", kUsmFillKernelWhy);
    uint32_t *a = sycl::malloc_device<uint32_t>(n, q);
    uint32_t *b = sycl::malloc_device<uint32_t>(n, q);
    uint32_t *d = sycl::malloc_device<uint32_t>(n, q);
    sycl_exp::command_graph<sycl_exp::graph_state::modifiable> g(ctx, dev);
    auto fill_a = g.add([&](sycl::handler &h) { h.fill(a, 0xA5A5A5A5u, n); });
    auto copy_b = g.add([&](sycl::handler &h) { h.memcpy(b, a, n * sizeof(uint32_t)); },
                        {sycl_exp::property::node::depends_on(fill_a)});
    auto zero_d = g.add([&](sycl::handler &h) { h.memset(d, 0, n * sizeof(uint32_t)); });
    // The second half of d from b: after both the copy and the memset.
    g.add([&](sycl::handler &h) { h.memcpy(d + n / 2, b + n / 2, n / 2 * sizeof(uint32_t)); },
          {sycl_exp::property::node::depends_on(copy_b, zero_d)});
    auto exec = g.finalize();
    for (int run = 0; run < 3; ++run) {
      q.fill(b, 1u, n).wait();
      q.fill(d, 2u, n).wait();
      q.ext_oneapi_graph(exec).wait();
      std::vector<uint32_t> got = read_back(q, d, n), want(n, 0);
      for (size_t i = n / 2; i < n; ++i) want[i] = 0xA5A5A5A5u;
      std::string bad = first_mismatch(got, want);
      c.check(bad.empty(), "explicit.run" + std::to_string(run), bad);
    }
    sycl::free(a, q);
    sycl::free(b, q);
    sycl::free(d, q);
  });

  c.section("record", [&] {
    if (usm_fill_is_a_kernel(dev)) return c.skip("record", kUsmFillKernelWhy);
    uint32_t *a = sycl::malloc_device<uint32_t>(n, q);
    uint32_t *b = sycl::malloc_device<uint32_t>(n, q);
    std::vector<uint32_t> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint32_t>(i * 2654435761u);
    sycl_exp::command_graph g(q.get_context(), q.get_device());
    g.begin_recording(q);
    q.memcpy(a, host.data(), n * sizeof(uint32_t));
    q.memcpy(b, a, n * sizeof(uint32_t));
    q.fill(a, 7u, n / 4);
    g.end_recording();
    auto exec = g.finalize();
    for (int run = 0; run < 2; ++run) {
      q.fill(a, 0u, n).wait();
      q.fill(b, 0u, n).wait();
      q.ext_oneapi_graph(exec).wait();
      std::string bad = first_mismatch(read_back(q, b, n), host);
      c.check(bad.empty(), "record.copy.run" + std::to_string(run), bad);
      std::vector<uint32_t> want_a = host;
      std::fill(want_a.begin(), want_a.begin() + n / 4, 7u);
      bad = first_mismatch(read_back(q, a, n), want_a);
      c.check(bad.empty(), "record.fill.run" + std::to_string(run), bad);
    }
    // Host data read at each execution, not when recorded.
    for (auto &v : host) v ^= 0xFFFFFFFFu;
    q.ext_oneapi_graph(exec).wait();
    std::string bad = first_mismatch(read_back(q, b, n), host);
    c.check(bad.empty(), "record.host_data_read_per_run", bad);
    sycl::free(a, q);
    sycl::free(b, q);
  });

  c.section("buffers", [&] {
    std::vector<uint32_t> src(n), dst(n, 0);
    for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i + 11);
    {
      sycl::buffer<uint32_t> bs(src.data(), sycl::range<1>(n));
      bs.set_write_back(false); // a graph takes no accessor to a buffer that writes back
      sycl::buffer<uint32_t> bd{sycl::range<1>(n)};
      sycl_exp::command_graph g(ctx, dev, {sycl_exp::property::graph::assume_buffer_outlives_graph{}});
      g.add([&](sycl::handler &h) {
        auto from = bs.get_access<sycl::access::mode::read>(h);
        auto to = bd.get_access<sycl::access::mode::write>(h);
        h.copy(from, to);
      });
      auto exec = g.finalize();
      q.ext_oneapi_graph(exec).wait();
      q.submit([&](sycl::handler &h) {
         auto from = bd.get_access<sycl::access::mode::read>(h);
         h.copy(from, dst.data());
       }).wait();
    }
    std::string bad = first_mismatch(dst, src);
    c.check(bad.empty(), "buffers.copy", bad);
  });

  return c.finish();
}
