// SPDX-License-Identifier: Apache-2.0
// sycl_ext_oneapi_async_memory_alloc: async_malloc / async_free in their queue and
// handler forms, async_malloc_from_pool, memory_pool with maximum_size, zero_init and
// initial_threshold, the default pools and pool statistics.
//
// Device memory only: the runtime itself refuses async_malloc of host and shared memory
// ("Only device backed asynchronous allocations are supported!") whatever the adapter;
// the program checks that it does, which is not a failure of the adapter.
#include "sycl_check.hpp"

#include <sycl/ext/oneapi/experimental/async_alloc/async_alloc.hpp>
#include <sycl/ext/oneapi/experimental/async_alloc/memory_pool.hpp>

#include <cstdint>

using namespace ordo_sycl;
namespace syclex = sycl::ext::oneapi::experimental;
using sycl::usm::alloc;

namespace {

constexpr size_t MiB = size_t(1) << 20;

bool all_equal(const std::vector<uint8_t> &v, uint8_t x) {
  for (uint8_t b : v)
    if (b != x) return false;
  return true;
}

std::string sizes(const syclex::memory_pool &p) {
  return "reserved " + std::to_string(p.get_reserved_size_current()) + ", used " +
         std::to_string(p.get_used_size_current());
}

} // namespace

int main() {
  Checker c("ordo-sycl-async-alloc");
  sycl::device dev = pick_device(c);
  sycl::context ctx(dev);
  sycl::queue q(ctx, dev, sycl::property::queue::in_order{});
  sycl::queue ooq(ctx, dev);

  if (!c.check(dev.has(sycl::aspect::ext_oneapi_async_memory_alloc), "aspect ext_oneapi_async_memory_alloc",
               "the device has no stream-ordered allocation")) {
    c.expect_throw("async_malloc without the aspect throws", [&] { (void)syclex::async_malloc(q, alloc::device, 64); });
    return c.finish();
  }

  c.section("runtime_refuses_host_and_shared", [&] {
    c.expect_throw("async_malloc of host memory is refused by the runtime",
                   [&] { (void)syclex::async_malloc(q, alloc::host, 4096); });
    c.expect_throw("async_malloc of shared memory is refused by the runtime",
                   [&] { (void)syclex::async_malloc(q, alloc::shared, 4096); });
  });

  c.section("queue_form_in_order", [&] {
    const size_t bytes = 3 * MiB + 5;
    void *p = syclex::async_malloc(q, alloc::device, bytes);
    c.check(p != nullptr, "async_malloc(queue, device) returns a pointer at once");
    c.check(sycl::get_pointer_type(p, ctx) == alloc::device, "get_pointer_type of an async allocation is device");
    c.check(sycl::get_pointer_device(p, ctx) == dev, "get_pointer_device of an async allocation");
    std::vector<uint8_t> back(bytes);
    q.memset(p, 0x3c, bytes);
    q.memcpy(back.data(), p, bytes);
    syclex::async_free(q, p);
    q.wait();
    c.check(all_equal(back, 0x3c), "in-order async_malloc -> memset -> memcpy -> async_free");

    if (usm_fill_is_a_kernel(q.get_device()))
      return c.skip("the block allocated again holds what was filled in", kUsmFillKernelWhy);
    void *again = syclex::async_malloc(q, alloc::device, bytes);
    c.info("in-order alloc after a free reuses the block", again == p);
    q.fill<uint32_t>(again, 0xa5a5a5a5u, bytes / 4);
    std::vector<uint32_t> words(bytes / 4);
    q.memcpy(words.data(), again, bytes / 4 * 4);
    syclex::async_free(q, again);
    q.wait();
    bool ok = true;
    for (uint32_t w : words) ok = ok && w == 0xa5a5a5a5u;
    c.check(ok, "the block allocated again holds what was filled in");
  });

  c.section("handler_form_out_of_order", [&] {
    const size_t bytes = MiB;
    void *p = nullptr;
    sycl::event allocated = ooq.submit([&](sycl::handler &h) { p = syclex::async_malloc(h, alloc::device, bytes); });
    c.check(p != nullptr, "async_malloc(handler, device) returns a pointer");
    sycl::event set = ooq.memset(p, 0x42, bytes, allocated);
    std::vector<uint8_t> back(bytes);
    sycl::event read = ooq.memcpy(back.data(), p, bytes, set);
    sycl::event freed = ooq.submit([&](sycl::handler &h) {
      h.depends_on(read);
      syclex::async_free(h, p);
    });
    freed.wait();
    c.check(all_equal(back, 0x42), "out-of-order alloc -> memset -> memcpy -> free chained by events");
    c.check(freed.get_info<sycl::info::event::command_execution_status>() == sycl::info::event_command_status::complete,
            "the free's event completes");
  });

  c.section("pipeline_rounds", [&] {
    // 24 rounds on an out-of-order queue, each round's allocations ordered after the
    // previous round's frees: the pool can hand the same memory round after round.
    constexpr int rounds = 24;
    const size_t bytes = 512 * 1024;
    sycl::event prev_free;
    std::vector<std::vector<uint8_t>> back(rounds, std::vector<uint8_t>(bytes));
    std::vector<void *> ptrs;
    for (int r = 0; r < rounds; ++r) {
      void *a = nullptr, *b = nullptr;
      sycl::event alloc_a = ooq.submit([&](sycl::handler &h) {
        h.depends_on(prev_free);
        a = syclex::async_malloc(h, alloc::device, bytes);
      });
      sycl::event alloc_b = ooq.submit([&](sycl::handler &h) {
        h.depends_on(prev_free);
        b = syclex::async_malloc(h, alloc::device, bytes);
      });
      sycl::event set = ooq.memset(a, r + 1, bytes, alloc_a);
      sycl::event copy = ooq.memcpy(b, a, bytes, {set, alloc_b});
      sycl::event read = ooq.memcpy(back[r].data(), b, bytes, copy);
      sycl::event free_a = ooq.submit([&](sycl::handler &h) {
        h.depends_on(copy);
        syclex::async_free(h, a);
      });
      sycl::event free_b = ooq.submit([&](sycl::handler &h) {
        h.depends_on(read);
        syclex::async_free(h, b);
      });
      prev_free = ooq.ext_oneapi_submit_barrier({free_a, free_b});
      ptrs.push_back(a);
      ptrs.push_back(b);
    }
    ooq.wait();
    bool ok = true;
    int bad = -1;
    for (int r = 0; r < rounds && ok; ++r)
      if (!all_equal(back[r], static_cast<uint8_t>(r + 1))) ok = false, bad = r;
    c.check(ok, "24 rounds of alloc -> memset -> copy -> read -> free, every round's data right",
            "round " + std::to_string(bad));
    std::sort(ptrs.begin(), ptrs.end());
    c.info("distinct addresses over 48 allocations", std::unique(ptrs.begin(), ptrs.end()) - ptrs.begin());
  });

  c.section("two_queues", [&] {
    sycl::queue other(ctx, dev, sycl::property::queue::in_order{});
    const size_t bytes = 2 * MiB;
    void *p = syclex::async_malloc(q, alloc::device, bytes);
    q.memset(p, 0x99, bytes);
    sycl::event freed = q.submit([&](sycl::handler &h) { syclex::async_free(h, p); });
    void *p2 = nullptr;
    other.submit([&](sycl::handler &h) {
      h.depends_on(freed);
      p2 = syclex::async_malloc(h, alloc::device, bytes);
    });
    c.info("alloc on queue B after a free on queue A reuses the block", p2 == p);
    other.memset(p2, 0x17, bytes);
    std::vector<uint8_t> back(bytes);
    other.memcpy(back.data(), p2, bytes);
    syclex::async_free(other, p2);
    other.wait();
    q.wait();
    c.check(all_equal(back, 0x17), "free on queue A, alloc ordered after it on queue B");
  });

  c.section("default_pool", [&] {
    syclex::memory_pool d1 = ctx.ext_oneapi_get_default_memory_pool(dev, alloc::device);
    syclex::memory_pool d2 = ctx.ext_oneapi_get_default_memory_pool(dev, alloc::device);
    c.check(d1 == d2, "the default device pool is the same pool each time");
    c.check(d1.get_alloc_kind() == alloc::device, "default pool kind is device");
    c.check(d1.get_device() == dev, "default pool device");
    c.check(d1.get_context() == ctx, "default pool context");
    c.info("default pool threshold", d1.get_threshold());
    q.wait();
    const size_t used_before = d1.get_used_size_current();
    const size_t bytes = 4 * MiB;
    void *p = syclex::async_malloc(q, alloc::device, bytes);
    q.wait();
    const size_t used_during = d1.get_used_size_current();
    c.check(used_during >= used_before + bytes, "async_malloc(queue) draws from the default pool",
            std::to_string(used_before) + " -> " + std::to_string(used_during));
    c.check(d1.get_reserved_size_current() >= used_during, "default pool reserved >= used", sizes(d1));
    syclex::async_free(q, p);
    q.wait();
    c.check(d1.get_used_size_current() == used_before, "async_free gives it back", sizes(d1));
    c.expect_throw("a default host pool is refused by the runtime",
                   [&] { (void)ctx.ext_oneapi_get_default_memory_pool(dev, alloc::host); });
    c.expect_throw("a memory_pool of shared memory is refused by the runtime",
                   [&] { syclex::memory_pool s(ctx, dev, alloc::shared); });
  });

  c.section("pool_from_pool", [&] {
    syclex::memory_pool pool(ctx, dev, alloc::device);
    c.check(pool.get_alloc_kind() == alloc::device && pool.get_device() == dev && pool.get_context() == ctx,
            "memory_pool(context, device, device) answers its kind, device and context");
    c.check(pool != ctx.ext_oneapi_get_default_memory_pool(dev, alloc::device), "a new pool is not the default pool");
    c.check(pool.get_used_size_current() == 0, "a new pool uses nothing", sizes(pool));
    const size_t bytes = 3 * MiB;
    void *a = syclex::async_malloc_from_pool(q, bytes, pool);
    void *b = nullptr;
    q.submit([&](sycl::handler &h) { b = syclex::async_malloc_from_pool(h, bytes, pool); });
    q.wait();
    c.check(a && b && a != b, "async_malloc_from_pool, queue and handler forms");
    c.check(pool.get_used_size_current() >= 2 * bytes, "used counts both blocks", sizes(pool));
    c.check(pool.get_reserved_size_current() >= pool.get_used_size_current(), "reserved >= used", sizes(pool));
    q.memset(a, 1, bytes);
    q.memcpy(b, a, bytes);
    std::vector<uint8_t> back(bytes);
    q.memcpy(back.data(), b, bytes);
    syclex::async_free(q, a);
    q.submit([&](sycl::handler &h) { syclex::async_free(h, b); });
    q.wait();
    c.check(all_equal(back, 1), "data through two pool blocks");
    c.check(pool.get_used_size_current() == 0, "used is 0 after both frees", sizes(pool));

    syclex::memory_pool from_queue(q, alloc::device);
    c.check(from_queue.get_device() == dev && from_queue.get_context() == ctx, "memory_pool(queue, device)");
  });

  c.section("maximum_size", [&] {
    syclex::memory_pool pool(ctx, dev, alloc::device, syclex::properties{syclex::maximum_size(4 * MiB)});
    void *a = syclex::async_malloc_from_pool(q, 2 * MiB, pool);
    q.wait();
    c.check(a != nullptr, "maximum_size 4 MiB: a 2 MiB block");
    c.expect_throw("maximum_size 4 MiB: 3 MiB more while 2 MiB are live throws",
                   [&] { (void)syclex::async_malloc_from_pool(q, 3 * MiB, pool); });
    c.check(pool.get_used_size_current() >= 2 * MiB && pool.get_used_size_current() < 4 * MiB,
            "the refused request changed nothing", sizes(pool));
    c.check(pool.get_reserved_size_current() <= 4 * MiB, "reserved stays within maximum_size", sizes(pool));
    syclex::async_free(q, a);
    c.info("maximum_size 4 MiB: after the free of the 2 MiB block", sizes(pool));
    // The in-order queue orders the next request after the free: nothing is live for it.
    // Room for 3 MiB means giving the 2 MiB chunk back first, which the pool does only
    // once that free has completed; until then a refusal keeps maximum_size, so either
    // answer is right and which one depends on timing: it is reported, not judged.
    c.section("maximum_size: 3 MiB ordered after the free of the 2 MiB block", [&] {
      void *b = nullptr;
      try {
        b = syclex::async_malloc_from_pool(q, 3 * MiB, pool);
      } catch (const sycl::exception &e) {
        c.info("maximum_size 4 MiB: 3 MiB ordered after the pending free", std::string("refused: ") + e.what());
        return;
      }
      c.check(b != nullptr, "maximum_size 4 MiB: 3 MiB ordered after the free of the 2 MiB block");
      c.info("maximum_size 4 MiB: 3 MiB ordered after the pending free", "granted");
      q.memset(b, 0, 3 * MiB);
      syclex::async_free(q, b);
    });
    q.wait();
    c.info("maximum_size 4 MiB: after q.wait()", sizes(pool));
    c.section("maximum_size: 3 MiB after q.wait()", [&] {
      void *b = syclex::async_malloc_from_pool(q, 3 * MiB, pool);
      c.check(b != nullptr, "maximum_size 4 MiB: 3 MiB after q.wait(), nothing live");
      syclex::async_free(q, b);
      q.wait();
    });
    c.check(pool.get_reserved_size_current() <= 4 * MiB, "reserved never beyond maximum_size", sizes(pool));
  });

  c.section("zero_init", [&] {
    syclex::memory_pool pool(ctx, dev, alloc::device, syclex::properties{syclex::zero_init{}});
    const size_t bytes = MiB;
    void *p = syclex::async_malloc_from_pool(q, bytes, pool);
    std::vector<uint8_t> back(bytes, 0xff);
    q.memcpy(back.data(), p, bytes);
    q.memset(p, 0xee, bytes); // dirty the block before giving it back
    syclex::async_free(q, p);
    q.wait();
    c.check(all_equal(back, 0), "zero_init: a fresh block reads zero");
    void *again = syclex::async_malloc_from_pool(q, bytes, pool);
    std::vector<uint8_t> back2(bytes, 0xff);
    q.memcpy(back2.data(), again, bytes);
    syclex::async_free(q, again);
    q.wait();
    c.info("zero_init: the second block is the first one", again == p);
    c.check(all_equal(back2, 0), "zero_init: a reused (dirtied) block reads zero again");
  });

  c.section("threshold", [&] {
    const size_t initial = 8 * MiB;
    syclex::memory_pool pool(ctx, dev, alloc::device, syclex::properties{syclex::initial_threshold(initial)});
    c.check(pool.get_threshold() == initial, "initial_threshold is the pool's threshold",
            std::to_string(pool.get_threshold()));
    void *p = syclex::async_malloc_from_pool(q, 4 * MiB, pool);
    syclex::async_free(q, p);
    q.wait();
    c.check(pool.get_used_size_current() == 0, "nothing used after the free", sizes(pool));
    c.check(pool.get_reserved_size_current() >= 4 * MiB, "memory within the threshold stays reserved across q.wait()",
            sizes(pool));
    pool.increase_threshold_to(16 * MiB);
    c.check(pool.get_threshold() == 16 * MiB, "increase_threshold_to(16 MiB)", std::to_string(pool.get_threshold()));
    pool.increase_threshold_to(1 * MiB);
    c.check(pool.get_threshold() == 16 * MiB, "increase_threshold_to a lower value changes nothing",
            std::to_string(pool.get_threshold()));

    syclex::memory_pool lean(ctx, dev, alloc::device);
    c.info("a pool without initial_threshold has threshold", lean.get_threshold());
    void *l = syclex::async_malloc_from_pool(q, 4 * MiB, lean);
    q.wait();
    c.check(lean.get_reserved_size_current() >= 4 * MiB, "threshold 0: reserved while in use", sizes(lean));
    syclex::async_free(q, l);
    q.wait();
    c.check(lean.get_reserved_size_current() == 0, "threshold 0: released at q.wait() after the free", sizes(lean));
  });

  return c.finish();
}
