// SPDX-License-Identifier: Apache-2.0
// urEventSetCallback's completion callbacks, run on one adapter thread, never inside an
// entry point and never inside a driver callback (they may call UR functions
// themselves), those of one event in status order (SUBMITTED, RUNNING, COMPLETE). The
// adapter says when a status is reached and how its reference goes:
//
//   struct hooks {
//     using Event = ...;
//     static bool reached(Event *, ur_execution_info_t);  // never blocking
//     static void release(Event *);                       // the reference add() was given
//   };
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "ur_api.h"

namespace ordo::ur_common {

template <class H> class callback_thread {
public:
  using Event = typename H::Event;
  struct Pending {
    Event *event;
    ur_execution_info_t status;
    ur_event_callback_t fn;
    void *data;
  };

  // One per adapter, never destroyed: it outlives exit-time destructors.
  static callback_thread &instance() {
    static auto *thread = new callback_thread();
    return *thread;
  }

  void add(const Pending &p) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(p);
      if (!started_) {
        started_ = true;
        std::thread([this] { run(); }).detach();
      }
    }
    wake_.notify_one();
  }

private:
  void run() {
    auto idle = std::chrono::microseconds(50);
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return !pending_.empty(); });
      std::deque<Pending> ready;
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (H::reached(it->event, it->status)) {
          ready.push_back(*it);
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      // An event that reached a status has passed every earlier one (statuses count
      // down: SUBMITTED 2, RUNNING 1, COMPLETE 0), even where the adapter can only tell
      // completion, or the event moved on between two `reached` calls of this pass.
      for (auto it = pending_.begin(); it != pending_.end();) {
        const bool passed = std::any_of(ready.begin(), ready.end(), [&](const Pending &r) {
          return r.event == it->event && it->status > r.status;
        });
        if (passed) {
          ready.push_back(*it);
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      // The callbacks of one event run SUBMITTED, RUNNING, COMPLETE, whatever order
      // they were registered in (registration order within one status).
      std::stable_sort(ready.begin(), ready.end(),
                       [](const Pending &a, const Pending &b) { return a.status > b.status; });
      lock.unlock();
      for (const Pending &p : ready) {
        p.fn(reinterpret_cast<ur_event_handle_t>(p.event), p.status, p.data);
        H::release(p.event);
      }
      // Poll with a growing pause while commands are still running.
      idle = ready.empty() ? std::min(idle * 2, std::chrono::microseconds(2000)) : std::chrono::microseconds(50);
      if (ready.empty()) std::this_thread::sleep_for(idle);
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> pending_;
  bool started_ = false;
};

} // namespace ordo::ur_common
