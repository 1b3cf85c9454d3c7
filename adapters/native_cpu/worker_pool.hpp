// SPDX-License-Identifier: Apache-2.0
// The fixed pool of worker threads that runs every ready task (docs/native-cpu.md,
// "The scheduler").
// Workers sleep on a condition variable when there is nothing to do; one idle worker at a
// time first watches the queue for ORDO_NATIVE_CPU_SPIN_US (default 50 µs), so that a
// command submitted just after needs no wake-up.
#pragma once
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace ordo::native_cpu {

class WorkerPool {
public:
  using TaskFn = void (*)(void *ctx, uint32_t arg);

  static WorkerPool &instance();

  // Starts the threads on the first call; later calls only count users.
  void acquire();
  // The last release runs every queued task to completion, then joins the threads.
  void release();

  // Queues fn(ctx, arg) for one worker.
  void push(TaskFn fn, void *ctx, uint32_t arg = 0);
  // Queues fn(ctx, first) ... fn(ctx, first + count - 1).
  void push_range(TaskFn fn, void *ctx, uint32_t first, uint32_t count);
  // On a worker: runs fn(ctx, arg) on this same worker as soon as its current task
  // returns (a command made ready by the one that just finished continues where the
  // data is, with no hand-off); one such slot per worker, further ones are queued.
  // Elsewhere: push().
  void push_continuation(TaskFn fn, void *ctx, uint32_t arg = 0);

  // Marks user code (a host task, an event callback) running on this thread. It may
  // wait for any command, by any means, polling included: on a worker, the command kept
  // for it to run next goes to the shared queue, and none is kept while it runs.
  class UserCode {
  public:
    UserCode();
    ~UserCode();
    UserCode(const UserCode &) = delete;
    UserCode &operator=(const UserCode &) = delete;
  };

  // Number of worker threads (fixed for the life of the pool).
  uint32_t size() const { return size_; }
  // True on one of this pool's threads.
  static bool on_worker_thread();

private:
  WorkerPool();
  void run_worker();

  struct Task {
    TaskFn fn;
    void *ctx;
    uint32_t arg;
  };

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  std::vector<std::thread> threads_;
  uint32_t users_ = 0;
  uint32_t idle_ = 0;             // workers asleep on wake_
  bool spinning_ = false;         // a worker is watching for tasks (under mu_)
  std::atomic<size_t> queued_{0}; // tasks_.size(), for the watching worker
  uint32_t running_ = 0;
  bool stopping_ = false;
  uint32_t size_;
};

// The number of hardware threads this process may run on (its CPU affinity), or
// ORDO_NATIVE_CPU_WORKERS when set.
uint32_t hardware_threads();
// How long an idle worker watches for new tasks, and a waiting thread for its event,
// before it sleeps, in microseconds (ORDO_NATIVE_CPU_SPIN_US, default 50; 0: sleep at once).
uint32_t spin_microseconds();

// One step of a watching loop: lets the sibling hardware thread run.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Watches `done()` for up to `us` microseconds (spin_microseconds()); true once it holds.
// Between looks it offers the core to any other thread ready to run there (sched_yield):
// on an idle machine that costs a system call and keeps the core from halting, whose
// wake-up is the expensive part on a virtual machine; on a machine whose cores are all
// busy it keeps a watcher from holding the core that the thread it waits for, or another
// program, needs (docs/native-cpu.md, "The scheduler").
template <class F> bool watch_for(uint32_t us, F done) {
  if (done()) return true;
  if (us == 0) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  for (uint32_t i = 1;; ++i) {
    if (done()) return true;
    if (i % 8 != 0) {
      cpu_relax();
      continue;
    }
    if (std::chrono::steady_clock::now() >= until) return done();
    sched_yield();
  }
}

// Watches `done()` for about 2 µs with pauses only: for what another thread is a few
// hundred nanoseconds from doing (shorter than a sched_yield is worth); true once it holds.
template <class F> bool watch_briefly(F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
  for (uint32_t i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 16 == 0 && std::chrono::steady_clock::now() >= until) return done();
  }
}

// Takes a mutex that is only ever held briefly, watching it a moment first: blocking on
// it costs a sleep and a wake-up, tens of microseconds on a virtual machine.
inline void lock_briefly(std::unique_lock<std::mutex> &lock) {
  for (int i = 0; i < 100; ++i) {
    if (lock.try_lock()) return;
    cpu_relax();
  }
  lock.lock();
}

} // namespace ordo::native_cpu
