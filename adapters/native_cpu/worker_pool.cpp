// SPDX-License-Identifier: Apache-2.0
#include "worker_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "logging.hpp"

namespace ordo::native_cpu {

namespace {
// The task this worker runs next, before taking one from the shared queue.
struct Continuation {
  WorkerPool::TaskFn fn = nullptr;
  void *ctx = nullptr;
  uint32_t arg = 0;
};
// One thread_local for all of a thread's state: in a dlopen'ed library each distinct
// thread_local costs a __tls_get_addr call per function that touches it.
struct ThreadState {
  bool is_worker = false;
  int chain = 0;     // continuations run back to back so far
  int user_code = 0; // WorkerPool::UserCode scopes open: no continuation is kept
  Continuation next;
};
thread_local ThreadState t_state;
// Continuations run back to back; past this many the next one goes to the shared
// queue, so that a long chain cannot keep this worker from other ready work.
constexpr int kMaxContinuations = 64;
} // namespace

uint32_t hardware_threads() {
  static const uint32_t n = [] {
    if (const char *env = std::getenv("ORDO_NATIVE_CPU_WORKERS")) {
      long v = std::strtol(env, nullptr, 10);
      if (v > 0 && v <= 4096) return static_cast<uint32_t>(v);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
      return static_cast<uint32_t>(CPU_COUNT(&set));
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? hw : 1u;
  }();
  return n;
}

uint32_t spin_microseconds() {
  static const uint32_t us = [] {
    if (const char *env = std::getenv("ORDO_NATIVE_CPU_SPIN_US")) {
      long v = std::strtol(env, nullptr, 10);
      if (v >= 0 && v <= 100000) return static_cast<uint32_t>(v);
    }
    // About what a sleep and a wake-up cost on a virtual machine: an idle worker or a
    // waiting thread that watches this long loses at most as much again (docs/native-cpu.md).
    return 50u;
  }();
  return us;
}

WorkerPool::WorkerPool() : size_(hardware_threads()) {}

WorkerPool &WorkerPool::instance() {
  static WorkerPool *pool = new WorkerPool; // never destroyed: threads are joined in release()
  return *pool;
}

bool WorkerPool::on_worker_thread() { return t_state.is_worker; }

void WorkerPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (users_++ > 0) return;
    stopping_ = false;
    threads_.reserve(size_);
    for (uint32_t i = 0; i < size_; ++i) threads_.emplace_back([this] { run_worker(); });
  }
  NC_LOG(info, "started %u worker threads", size_);
}

void WorkerPool::release() {
  std::vector<std::thread> joining;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (users_ == 0 || --users_ > 0) return;
    if (t_state.is_worker) { // a worker cannot join itself: keep the threads (they idle)
      users_ = 1;
      return;
    }
    stopping_ = true;
    joining.swap(threads_);
  }
  wake_.notify_all();
  for (auto &t : joining) t.join();
  NC_LOG(info, "stopped the worker threads");
}

// A watching worker takes the first queued task without being woken; a sleeper is
// woken for any task beyond what the watcher takes. With no watcher but a busy worker,
// which watches when its task returns (ORDO_NATIVE_CPU_SPIN_US), the task is watched a
// moment first: a command that just finished releases the thread that queues the next
// one before its worker is back.
void WorkerPool::push(TaskFn fn, void *ctx, uint32_t arg) {
  bool wake, worker_may_come = false;
  {
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    lock_briefly(lock);
    tasks_.push_back({fn, ctx, arg});
    queued_.store(tasks_.size(), std::memory_order_release);
    wake = idle_ > 0 && (!spinning_ || tasks_.size() > 1);
    worker_may_come =
        wake && !spinning_ && tasks_.size() == 1 && running_ > (t_state.is_worker ? 1u : 0u) && spin_microseconds() > 0;
  }
  if (worker_may_come) wake = !watch_briefly([&] { return queued_.load(std::memory_order_acquire) == 0; });
  if (wake) wake_.notify_one();
}

void WorkerPool::push_range(TaskFn fn, void *ctx, uint32_t first, uint32_t count) {
  if (count == 0) return;
  uint32_t sleepers_needed;
  {
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    lock_briefly(lock);
    for (uint32_t i = 0; i < count; ++i) tasks_.push_back({fn, ctx, first + i});
    queued_.store(tasks_.size(), std::memory_order_release);
    const size_t beyond_watcher = spinning_ ? tasks_.size() - 1 : tasks_.size();
    sleepers_needed = static_cast<uint32_t>(std::min<size_t>(idle_, beyond_watcher));
  }
  if (sleepers_needed == 1)
    wake_.notify_one();
  else if (sleepers_needed > 1)
    wake_.notify_all();
}

void WorkerPool::push_continuation(TaskFn fn, void *ctx, uint32_t arg) {
  ThreadState &me = t_state;
  if (me.is_worker && me.user_code == 0 && !me.next.fn && me.chain < kMaxContinuations) {
    me.next = {fn, ctx, arg};
    return;
  }
  push(fn, ctx, arg);
}

WorkerPool::UserCode::UserCode() {
  ThreadState &me = t_state;
  if (!me.is_worker) return;
  ++me.user_code;
  if (me.next.fn) {
    const Continuation next = std::exchange(me.next, {});
    instance().push(next.fn, next.ctx, next.arg);
  }
}

WorkerPool::UserCode::~UserCode() {
  if (t_state.is_worker) --t_state.user_code;
}

void WorkerPool::run_worker() {
  ThreadState &me = t_state;
  me.is_worker = true;
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  lock_briefly(lock);
  const uint32_t spin_us = spin_microseconds();
  for (;;) {
    if (tasks_.empty()) {
      // Stop only when nothing is queued and nothing running could queue more.
      if (stopping_ && running_ == 0) break;
      if (!spinning_ && !stopping_ && spin_us > 0) {
        // Watch briefly without the lock: waking a sleeping thread costs more than a
        // short command. One watcher at a time leaves the other cores to the rest.
        spinning_ = true;
        lock.unlock();
        watch_for(spin_us, [&] { return queued_.load(std::memory_order_acquire) > 0; });
        lock_briefly(lock);
        spinning_ = false;
        if (!tasks_.empty()) continue;
        if (stopping_ && running_ == 0) break;
      }
      ++idle_;
      wake_.wait(lock);
      --idle_;
      continue;
    }
    Task task = tasks_.front();
    tasks_.pop_front();
    queued_.store(tasks_.size(), std::memory_order_release);
    ++running_;
    lock.unlock();
    task.fn(task.ctx, task.arg);
    for (me.chain = 0; me.next.fn; ++me.chain) {
      Continuation next = me.next;
      me.next = {};
      next.fn(next.ctx, next.arg);
    }
    lock_briefly(lock);
    --running_;
    if (stopping_ && running_ == 0 && tasks_.empty()) wake_.notify_all();
  }
}

} // namespace ordo::native_cpu
