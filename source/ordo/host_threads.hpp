// SPDX-License-Identifier: Apache-2.0
// Threads an adapter starts for work that outlives the call that started it (the thread
// behind a host task). Such a thread releases handles after the program already saw its
// command complete, so the program may be exiting, or the loader unloading the adapter,
// while it still runs: a detached thread then runs into freed statics or unmapped code
// (a crash after the last test passed, about once in 100,000 checker programs on PoCL
// and on the Level Zero test driver). So every thread is kept, joined once it is done,
// and the adapter's teardown (this object's destructor, a static of the adapter's
// library: at exit or when the loader unloads it) joins the rest.
#pragma once
#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

namespace ordo {

class host_threads {
public:
  host_threads() = default;
  host_threads(const host_threads &) = delete;
  host_threads &operator=(const host_threads &) = delete;
  ~host_threads() { join_all(std::chrono::seconds(5)); }

  // Runs `work` on a new thread. False (and `work` not run) when no thread can be made.
  template <class F> bool start(F &&work) noexcept {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      reap_done();
      running &r = threads_.emplace_back();
      try {
        r.thread = std::thread([&r, w = std::forward<F>(work)]() mutable {
          w();
          r.done.store(true, std::memory_order_release);
        });
      } catch (...) {
        threads_.pop_back();
        return false;
      }
      return true;
    } catch (...) {
      return false;
    }
  }

  // Joins every thread, waiting up to `limit` for those still running; one that does not
  // finish by then (a host task that never returns) is left detached, as is the calling
  // thread itself (a host task's function that exits the program).
  void join_all(std::chrono::milliseconds limit) noexcept {
    std::list<running> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      all.swap(threads_);
    }
    const auto until = std::chrono::steady_clock::now() + limit;
    bool left_running = false;
    for (running &r : all) {
      if (!r.thread.joinable()) continue;
      if (r.thread.get_id() == std::this_thread::get_id()) {
        r.thread.detach();
        left_running = true;
        continue;
      }
      while (!r.done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (r.done.load(std::memory_order_acquire))
        r.thread.join(); // past its last use of the adapter: this returns at once
      else {
        r.thread.detach();
        left_running = true;
      }
    }
    // A thread left running still writes its entry's `done`: its entry is never freed.
    if (left_running) new (std::nothrow) std::list<running>(std::move(all));
  }

private:
  struct running {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  // Under mu_: joins the threads that finished (each is past its last use of any object).
  void reap_done() {
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->done.load(std::memory_order_acquire)) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mu_;
  std::list<running> threads_; // a list: each thread keeps a reference to its own entry
};

// The adapter's own (adapters link with a version script, so each library has one).
inline host_threads &adapter_host_threads() {
  static host_threads threads;
  return threads;
}

} // namespace ordo
