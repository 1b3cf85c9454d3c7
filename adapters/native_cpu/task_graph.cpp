// SPDX-License-Identifier: Apache-2.0
// The task graph: dependency counting, hand-off to the workers, completion, failure
// propagation and callbacks.
#include <utility>

#include "context.hpp"
#include "event.hpp"
#include "logging.hpp"
#include "queue.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {
namespace graph {

namespace {

ur_execution_info_t execution_info_of(int status) {
  switch (status) {
  case UR_EVENT_STATUS_RUNNING: return UR_EXECUTION_INFO_RUNNING;
  case UR_EVENT_STATUS_SUBMITTED: return UR_EXECUTION_INFO_SUBMITTED;
  case UR_EVENT_STATUS_QUEUED: return UR_EXECUTION_INFO_QUEUED;
  default: return UR_EXECUTION_INFO_COMPLETE;
  }
}

// Moves ev to a non-terminal `status` and collects the callbacks this step
// satisfies. The status store and the flag load pair with the flag store and the
// status load of add_callback (both sequentially consistent): at least one side
// sees the other, so a callback is either collected here or fired there.
std::vector<Event::Callback> advance(Event &ev, int status) {
  std::vector<Event::Callback> due;
  ev.status.store(status, std::memory_order_seq_cst);
  if (!ev.has_callbacks.load(std::memory_order_seq_cst)) return due;
  std::lock_guard<std::mutex> lock(ev.mu);
  if (!ev.callbacks.empty()) {
    ur_execution_info_t reached = execution_info_of(status);
    auto &cbs = ev.callbacks;
    for (size_t i = 0; i < cbs.size();) {
      // Execution states count down: COMPLETE(0) < RUNNING(1) < SUBMITTED(2).
      if (cbs[i].when >= reached) {
        due.push_back(cbs[i]);
        cbs.erase(cbs.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (!due.empty()) ++ev.callbacks_running; // fire() ends it
  }
  return due;
}

thread_local uint32_t callback_depth = 0;

// After the last due callback, the handle whose user released it meanwhile leaves the
// registry (unless a callback retained it again).
void callbacks_done(Event &ev) {
  bool unregister = false;
  {
    std::lock_guard<std::mutex> lock(ev.mu);
    if (--ev.callbacks_running == 0 && ev.callbacks.empty() && ev.unregister_after_callbacks) {
      ev.unregister_after_callbacks = false;
      unregister = ev.count() == 0;
    }
  }
  if (unregister) graph::unregister(ev);
}

// Runs the callbacks taken under ev.mu (which counted one callbacks_running).
void fire(Event &ev, const std::vector<Event::Callback> &due) {
  if (due.empty()) return;
  WorkerPool::UserCode user;
  ++callback_depth;
  for (const auto &cb : due) cb.fn(to_handle(&ev), cb.when, cb.user);
  --callback_depth;
  callbacks_done(ev);
}

void run_on_worker(void *ctx, uint32_t) {
  Event &ev = *static_cast<Event *>(ctx);
  if (ev.dependency_failed.load(std::memory_order_acquire)) {
    finish(ev, UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
    return;
  }
  if (ev.profiling) ev.t_start.store(now_ns(), std::memory_order_relaxed);
  fire(ev, advance(ev, UR_EVENT_STATUS_RUNNING));
  if (ev.work)
    ev.work->execute(ev);
  else
    finish(ev, UR_RESULT_SUCCESS);
}

// All dependencies are done: hand the command to a worker (or, for a command
// without work on the submitting thread, complete it here).
void make_ready(Event &ev, bool may_complete_inline) {
  if (ev.profiling) ev.t_submit.store(now_ns(), std::memory_order_relaxed);
  fire(ev, advance(ev, UR_EVENT_STATUS_SUBMITTED));
  if (!ev.work && may_complete_inline) {
    if (ev.profiling) ev.t_start.store(now_ns(), std::memory_order_relaxed);
    bool failed = ev.dependency_failed.load(std::memory_order_acquire);
    finish(ev, failed ? UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS : UR_RESULT_SUCCESS);
    return;
  }
  WorkerPool::instance().push_continuation(run_on_worker, &ev);
}

void dependency_done(Event &ev, bool may_complete_inline) {
  if (ev.waiting_on.fetch_sub(1, std::memory_order_acq_rel) == 1) make_ready(ev, may_complete_inline);
}

// Successor entries: the event, with the low bit set for an order-only edge.
constexpr uintptr_t kOrderOnly = 1;
Event *tag(Event *e, bool order_only) {
  return reinterpret_cast<Event *>(reinterpret_cast<uintptr_t>(e) | (order_only ? kOrderOnly : 0));
}
Event *untag(Event *e) { return reinterpret_cast<Event *>(reinterpret_cast<uintptr_t>(e) & ~kOrderOnly); }
bool order_only(Event *e) { return reinterpret_cast<uintptr_t>(e) & kOrderOnly; }
// first_successor once finish() has taken it: no more successors go there.
Event *const kClosed = reinterpret_cast<Event *>(uintptr_t{2});

} // namespace

void add_dependency(Event &ev, Event &dep, bool inherit_failure) {
  if (&ev == &dep) return;
  Event *entry = tag(&ev, !inherit_failure);
  // Counted before dep can see the entry: finish(dep) may release it at once (the
  // construction guard keeps the count above zero meanwhile).
  ev.waiting_on.fetch_add(1, std::memory_order_relaxed);
  Event *first = nullptr;
  if (dep.first_successor.compare_exchange_strong(first, entry, std::memory_order_acq_rel, std::memory_order_acquire))
    return; // finish(dep) takes it with its exchange, whenever that comes
  if (first != kClosed) {
    std::lock_guard<std::mutex> lock(dep.mu);
    if (!dep.terminal()) { // finish(dep) has not taken the list yet: it will take this entry
      try {
        dep.more_successors.push_back(entry);
      } catch (...) {
        ev.waiting_on.fetch_sub(1, std::memory_order_relaxed);
        throw;
      }
      return;
    }
  }
  // dep has finished (its status was set before first_successor was closed).
  ev.waiting_on.fetch_sub(1, std::memory_order_relaxed);
  if (inherit_failure && dep.failed()) ev.dependency_failed.store(true, std::memory_order_release);
}

void submit(Event &ev) { dependency_done(ev, /*may_complete_inline=*/true); }

void finish(Event &ev, ur_result_t result) {
  if (ev.profiling) {
    uint64_t t = now_ns();
    if (ev.t_start.load(std::memory_order_relaxed) == 0) ev.t_start.store(t, std::memory_order_relaxed);
    ev.t_end.store(t, std::memory_order_relaxed);
  }
  std::unique_ptr<Work> work = std::move(ev.work);
  Event *first = nullptr;
  std::vector<Event *> more;
  std::vector<Event::Callback> due;
  bool wake;
  {
    std::lock_guard<std::mutex> lock(ev.mu);
    wake = ev.sleepers > 0;
    ev.result = result;
    ev.status.store(result == UR_RESULT_SUCCESS ? UR_EVENT_STATUS_COMPLETE : UR_EVENT_STATUS_ERROR,
                    std::memory_order_release);
    more.swap(ev.more_successors);
    due.swap(ev.callbacks); // every remaining callback is due at completion
    if (!due.empty()) ++ev.callbacks_running;
  }
  // After the status: an add_dependency that finds it closed sees the status too.
  first = ev.first_successor.exchange(kClosed, std::memory_order_acq_rel);
  // Off the queue's count before anything else (no user code before it: urQueueFinish
  // waits for this after the status, docs/native-cpu.md "The scheduler").
  if (ev.queue) ev.queue->command_finished(ev);
  if (wake) ev.done_cv.notify_all();
  if (result != UR_RESULT_SUCCESS && result != UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS)
    NC_LOG(info, "command of type %d (ur_command_t) failed: ur_result_t %d", static_cast<int>(ev.command),
           static_cast<int>(result));

  bool failed = result != UR_RESULT_SUCCESS;
  auto release = [failed](Event *entry) {
    Event *s = untag(entry);
    if (failed && !order_only(entry)) s->dependency_failed.store(true, std::memory_order_release);
    dependency_done(*s, /*may_complete_inline=*/false);
  };
  if (first) release(first);
  for (Event *s : more) release(s);
  fire(ev, due);
  // Releases what the command held (a kernel, a program) before we let go; a launch's
  // work stays with the event for the next launch that reuses it.
  if (work && work->recycle())
    ev.spare = std::move(work);
  else
    work.reset();
  ev.drop_hold(); // the scheduler's reference
}

bool wait(Event &ev) {
  // A command about to finish is cheaper to watch for a moment than to sleep on:
  // the finishing worker then need not wake this thread.
  if (!watch_for(spin_microseconds(), [&] { return ev.terminal(); })) {
    std::unique_lock<std::mutex> lock(ev.mu);
    ++ev.sleepers; // seen by finish() under the same lock as the status change
    ev.done_cv.wait(lock, [&] { return ev.terminal(); });
    --ev.sleepers;
  }
  return !ev.failed();
}

void add_callback(Event &ev, ur_execution_info_t when, ur_event_callback_t fn, void *user) {
  {
    std::lock_guard<std::mutex> lock(ev.mu);
    ev.has_callbacks.store(true, std::memory_order_seq_cst);
    ur_execution_info_t reached = execution_info_of(ev.status.load(std::memory_order_seq_cst));
    if (when < reached) { // not yet reached: keep it
      ev.callbacks.push_back({when, fn, user});
      return;
    }
  }
  ++callback_depth;
  fn(to_handle(&ev), when, user); // the caller holds the handle: it stays registered
  --callback_depth;
}

void unregister(Event &ev) {
  registry().remove(&ev);
  ev.drop_hold(); // the user's handle
}

bool in_callback() { return callback_depth > 0; }

} // namespace graph
} // namespace ordo::native_cpu
