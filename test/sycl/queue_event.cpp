// SPDX-License-Identifier: Apache-2.0
// Queues, events and host tasks: in-order and out-of-order queues, depends_on within a
// queue and across queues, barriers, event status and profiling info.
#include "sycl_check.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <thread>

using namespace ordo_sycl;
using namespace std::chrono_literals;

namespace {

// A log of host-task steps, in the order they ran.
struct Trace {
  std::mutex m;
  std::vector<int> steps;
  void add(int s) {
    std::lock_guard<std::mutex> l(m);
    steps.push_back(s);
  }
  std::vector<int> get() {
    std::lock_guard<std::mutex> l(m);
    return steps;
  }
};

std::vector<int> iota(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

} // namespace

int main() {
  Checker c("ordo-sycl-queue-event");
  sycl::device dev = pick_device(c);
  sycl::context ctx(dev);
  constexpr size_t n = 1 << 16;

  c.section("in_order", [&] {
    sycl::queue q(ctx, dev, sycl::property::queue::in_order{});
    c.check(q.is_in_order(), "in-order queue is_in_order");
    // Host tasks of an in-order queue run one after the other, even when earlier ones are slow.
    Trace t;
    for (int i = 0; i < 6; ++i)
      q.submit([&, i](sycl::handler &h) {
        h.host_task([&, i] {
          if (i % 2 == 0) std::this_thread::sleep_for(10ms);
          t.add(i);
        });
      });
    q.wait();
    c.check(t.get() == iota(6), "in-order host tasks ran in submission order", first_mismatch(t.get(), iota(6)));

    // memset -> memcpy -> memcpy -> host task, no events: the queue orders them.
    auto *d1 = sycl::malloc_device<uint8_t>(n, q);
    auto *d2 = sycl::malloc_device<uint8_t>(n, q);
    auto *h = sycl::malloc_host<uint8_t>(n, q);
    std::atomic<bool> seen_ok{false};
    q.memset(d1, 0x5a, n);
    q.memcpy(d2, d1, n);
    q.memcpy(h, d2, n);
    q.submit([&](sycl::handler &cgh) {
      cgh.host_task([&] {
        bool ok = true;
        for (size_t i = 0; i < n; ++i) ok = ok && h[i] == 0x5a;
        seen_ok = ok;
      });
    });
    q.wait_and_throw();
    c.check(seen_ok.load(), "in-order memset -> memcpy -> memcpy -> host task sees the data");
    sycl::free(d1, q);
    sycl::free(d2, q);
    sycl::free(h, q);
  });

  c.section("out_of_order", [&] {
    sycl::queue q(ctx, dev);
    c.check(!q.is_in_order(), "default queue is out of order");
    // A slow host task, then one that depends on it: the second sees the first's effect.
    std::atomic<int> stage{0};
    sycl::event slow = q.submit([&](sycl::handler &h) {
      h.host_task([&] {
        std::this_thread::sleep_for(30ms);
        stage = 1;
      });
    });
    std::atomic<int> seen{-1};
    sycl::event after = q.submit([&](sycl::handler &h) {
      h.depends_on(slow);
      h.host_task([&] { seen = stage.load(); });
    });
    after.wait();
    c.check(seen.load() == 1, "depends_on orders host tasks on an out-of-order queue",
            "saw stage " + std::to_string(seen.load()));
    c.check(slow.get_info<sycl::info::event::command_execution_status>() == sycl::info::event_command_status::complete,
            "event status complete after its dependant waited");

    // memset -> memcpy -> host task chained by events on an out-of-order queue.
    auto *d = sycl::malloc_device<uint32_t>(n, q);
    auto *h = sycl::malloc_host<uint32_t>(n, q);
    sycl::event set = q.memset(d, 0x11, n * sizeof(uint32_t));
    sycl::event copied = q.memcpy(h, d, n * sizeof(uint32_t), set);
    std::atomic<bool> ok{false};
    sycl::event checked = q.submit([&](sycl::handler &cgh) {
      cgh.depends_on(copied);
      cgh.host_task([&] {
        bool all = true;
        for (size_t i = 0; i < n; ++i) all = all && h[i] == 0x11111111u;
        ok = all;
      });
    });
    checked.wait();
    c.check(ok.load(), "out-of-order memset -> memcpy -> host task by events");

    // Several independent commands, then one waiting on all of them.
    std::vector<sycl::event> parts;
    for (int i = 0; i < 4; ++i) parts.push_back(q.memset(d + i * (n / 4), i + 1, n / 4 * sizeof(uint32_t)));
    sycl::event all = q.memcpy(h, d, n * sizeof(uint32_t), parts);
    all.wait();
    bool quarters = true;
    for (int i = 0; i < 4; ++i)
      quarters =
          quarters && h[i * (n / 4)] == 0x01010101u * (i + 1) && h[(i + 1) * (n / 4) - 1] == 0x01010101u * (i + 1);
    c.check(quarters, "memcpy depending on four memsets sees all four");

    // A barrier orders what comes after it after everything before it.
    std::atomic<int> before{0};
    for (int i = 0; i < 3; ++i)
      q.submit([&](sycl::handler &cgh) {
        cgh.host_task([&] {
          std::this_thread::sleep_for(10ms);
          ++before;
        });
      });
    q.ext_oneapi_submit_barrier();
    std::atomic<int> at_barrier{-1};
    q.submit([&](sycl::handler &cgh) { cgh.host_task([&] { at_barrier = before.load(); }); });
    q.wait();
    c.check(at_barrier.load() == 3, "ext_oneapi_submit_barrier orders later commands after earlier ones",
            "saw " + std::to_string(at_barrier.load()) + " of 3");

    // A barrier with a wait list.
    std::atomic<int> flag{0};
    sycl::event e1 = q.submit([&](sycl::handler &cgh) {
      cgh.host_task([&] {
        std::this_thread::sleep_for(20ms);
        flag = 7;
      });
    });
    sycl::event b = q.ext_oneapi_submit_barrier({e1});
    std::atomic<int> flag_seen{0};
    q.submit([&](sycl::handler &cgh) {
      cgh.depends_on(b);
      cgh.host_task([&] { flag_seen = flag.load(); });
    });
    q.wait();
    c.check(flag_seen.load() == 7, "barrier with a wait list, then a dependant");
    sycl::free(d, q);
    sycl::free(h, q);
  });

  c.section("two_queues", [&] {
    sycl::queue a(ctx, dev);
    sycl::queue b(ctx, dev, sycl::property::queue::in_order{});
    auto *d = sycl::malloc_device<uint8_t>(n, a);
    auto *h = sycl::malloc_host<uint8_t>(n, a);
    std::atomic<bool> released{false};
    sycl::event gate = a.submit([&](sycl::handler &cgh) {
      cgh.host_task([&] {
        std::this_thread::sleep_for(20ms);
        released = true;
      });
    });
    sycl::event set = a.memset(d, 0x77, n, gate);
    std::atomic<bool> gate_seen{false};
    b.submit([&](sycl::handler &cgh) {
      cgh.depends_on(set);
      cgh.host_task([&] { gate_seen = released.load(); });
    });
    b.memcpy(h, d, n);
    b.wait();
    c.check(gate_seen.load(), "a command of queue B waits for an event of queue A");
    bool all = true;
    for (size_t i = 0; i < n; ++i) all = all && h[i] == 0x77;
    c.check(all, "queue B's memcpy sees queue A's memset");
    a.wait();
    sycl::free(d, a);
    sycl::free(h, a);
  });

  c.section("events", [&] {
    sycl::event none;
    c.check(none.get_info<sycl::info::event::command_execution_status>() == sycl::info::event_command_status::complete,
            "default-constructed event is complete");
    none.wait();
    sycl::queue q(ctx, dev);
    std::vector<sycl::event> es;
    std::atomic<int> done{0};
    for (int i = 0; i < 5; ++i) es.push_back(q.submit([&](sycl::handler &cgh) { cgh.host_task([&] { ++done; }); }));
    sycl::event::wait(es);
    c.check(done.load() == 5, "event::wait(list) waits for every event");
    for (auto &e : es)
      c.check(e.get_info<sycl::info::event::command_execution_status>() == sycl::info::event_command_status::complete,
              "each waited event is complete");
  });

  c.section("profiling", [&] {
    if (!dev.has(sycl::aspect::queue_profiling)) {
      c.fail("profiling", "device lacks aspect::queue_profiling");
      return;
    }
    sycl::queue q(ctx, dev, sycl::property_list{sycl::property::queue::enable_profiling{}});
    c.check(q.has_property<sycl::property::queue::enable_profiling>(), "queue has enable_profiling");
    auto *d = sycl::malloc_device<uint8_t>(n * 16, q);
    auto *h = sycl::malloc_host<uint8_t>(n * 16, q);
    sycl::event set = q.memset(d, 1, n * 16);
    sycl::event cp = q.memcpy(h, d, n * 16, set);
    cp.wait();
    for (auto [name, e] : {std::pair<const char *, sycl::event *>{"memset", &set}, {"memcpy", &cp}}) {
      const std::string p = std::string("profiling.") + name;
      c.section(p, [&] {
        const uint64_t submit = e->get_profiling_info<sycl::info::event_profiling::command_submit>();
        const uint64_t start = e->get_profiling_info<sycl::info::event_profiling::command_start>();
        const uint64_t end = e->get_profiling_info<sycl::info::event_profiling::command_end>();
        c.check(start > 0 && end > 0, p + " start and end are set");
        c.check(start <= end, p + " start <= end", std::to_string(start) + " > " + std::to_string(end));
        c.check(submit <= start, p + " submit <= start", std::to_string(submit) + " > " + std::to_string(start));
        c.info(p + ".duration_ns", end - start);
      });
    }
    c.check(set.get_profiling_info<sycl::info::event_profiling::command_end>() <=
                cp.get_profiling_info<sycl::info::event_profiling::command_start>(),
            "profiling: a dependant starts after its dependency ended");
    sycl::event ht = q.submit([&](sycl::handler &cgh) { cgh.host_task([] { std::this_thread::sleep_for(5ms); }); });
    ht.wait();
    c.section("profiling.host_task", [&] {
      const uint64_t start = ht.get_profiling_info<sycl::info::event_profiling::command_start>();
      const uint64_t end = ht.get_profiling_info<sycl::info::event_profiling::command_end>();
      c.check(end >= start + 4000000, "profiling: a 5 ms host task lasts about 5 ms",
              std::to_string(end - start) + " ns");
    });
    sycl::queue plain(ctx, dev);
    sycl::event unprofiled = plain.memset(d, 2, 16);
    unprofiled.wait();
    c.expect_throw("profiling info of an event of a queue without profiling throws",
                   [&] { (void)unprofiled.get_profiling_info<sycl::info::event_profiling::command_start>(); });
    sycl::free(d, q);
    sycl::free(h, q);
  });

  return c.finish();
}
