// SPDX-License-Identifier: Apache-2.0
// Every command, whether or not the user asked for its event, is one Event: the
// scheduler's node, with its work, unfinished dependencies and waiting commands
// (docs/native-cpu.md, "The scheduler").
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "common.hpp"

namespace ordo::native_cpu {

struct Context;
struct Queue;
struct Event;

// What a command does. execute() ends with graph::finish(ev, result) exactly once, on any
// thread, now or later (a launch finishes from its last work-group chunk).
struct Work {
  virtual ~Work() = default;
  virtual void execute(Event &ev) = 0;
  // The command has finished: drop what it held; true to be kept (Event::spare).
  virtual bool recycle() { return false; }
  // Non-zero for a kind of work that a later command may rebuild in place.
  virtual int reuse_kind() const { return 0; }
  // A batch of launches that later launches may join: no more may (launch.hpp).
  virtual void close() {}
};

struct Event : Object<Event> {
  using handle_type = ur_event_handle_t;
  static constexpr handle_kind kKind = handle_kind::event;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_EVENT;

  // Starts QUEUED, not visible to the user (user count 0), with one internal
  // reference that the scheduler holds until the command has finished. A null queue:
  // an event with no command (from a null native handle), which holds its context.
  Event(Context *ctx, Queue *q, ur_command_t cmd, bool profiled);
  // The last holder is gone: back to its queue for a later command, or retired.
  static void destroy(Event *ev) noexcept;
  // A recycled event as a new command of its queue, as if constructed.
  void reuse(ur_command_t cmd);

  Context *const ctx;   // the queue's: the event holds its queue, which holds it
  Queue *const queue;   // internal reference; null: no command (held ctx instead)
  ur_command_t command; // changes only when recycled
  const bool profiling;

  // ---- scheduling state (task_graph.cpp) ----
  std::mutex mu;
  std::condition_variable done_cv;
  uint32_t sleepers = 0;                           // threads asleep on done_cv (under mu): finish() notifies only then
  std::atomic<int> status{UR_EVENT_STATUS_QUEUED}; // ur_event_status_t; terminal values set under mu
  ur_result_t result = UR_RESULT_SUCCESS;          // set under mu when status turns terminal
  // Unfinished dependencies, plus one guard held while the command is being built.
  std::atomic<uint32_t> waiting_on{1};
  std::atomic<bool> dependency_failed{false};
  // Commands waiting for this one (not owning: they wait for us, so they live). The
  // first is set without the lock (one CAS: a chain of commands takes no lock and
  // allocates nothing per edge) and closed by finish(); the others are under mu. An
  // entry's low bit marks an order-only edge (graph::add_dependency).
  std::atomic<Event *> first_successor{nullptr};
  std::vector<Event *> more_successors;
  struct Callback {
    ur_execution_info_t when;
    ur_event_callback_t fn;
    void *user;
  };
  std::vector<Callback> callbacks; // under mu
  // Callbacks taken from `callbacks` and not yet returned from (under mu): while any
  // is, the user's last release leaves the handle registered for them to query
  // (docs/native-cpu.md, "Callbacks") and sets `unregister_after_callbacks`.
  uint32_t callbacks_running = 0;
  bool unregister_after_callbacks = false;
  // Set (before the status is read) by the first urEventSetCallback, so that status
  // steps of events without callbacks need no lock.
  std::atomic<bool> has_callbacks{false};
  std::unique_ptr<Work> work;
  // The finished command's work, for the next command that reuses this event (a
  // launch rebuilds a LaunchWork in place: no allocation per launch).
  std::unique_ptr<Work> spare;
  Event *free_next = nullptr; // in its queue's list of free events

  std::atomic<uint64_t> t_queued{0}, t_submit{0}, t_start{0}, t_end{0}; // profiling: now_ns()
  std::atomic<uint64_t> order_node{0}; // in the context's ordering knowledge (0: none yet)
  // Off its queue's count of unfinished commands (Queue::command_finished), just after
  // the status turned terminal: urQueueFinish waits for this too, so UR_QUEUE_INFO_EMPTY
  // answers true once it returns.
  std::atomic<bool> counted_out{false};
  Event *queue_prev = nullptr, *queue_next = nullptr; // out-of-order queue's unfinished list (its mu)

  bool terminal() const {
    int s = status.load(std::memory_order_acquire);
    return s == UR_EVENT_STATUS_COMPLETE || s == UR_EVENT_STATUS_ERROR;
  }
  bool failed() const { return status.load(std::memory_order_acquire) == UR_EVENT_STATUS_ERROR; }
};
ORDO_HANDLE_CHECK(Event);

inline ur_event_handle_t to_handle(Event *e) { return reinterpret_cast<ur_event_handle_t>(e); }
inline void event_drop(Event *e) { e->drop_hold(); } // for ur_common/pool_hooks.hpp

// ---- the task graph (task_graph.cpp) ----
namespace graph {

// Makes `ev` wait for `dep` (before submit(ev)). If dep fails, ev fails without running,
// unless `inherit_failure` is false: an edge that only orders (the stream-ordered
// allocator's internal dependencies).
void add_dependency(Event &ev, Event &dep, bool inherit_failure = true);
// Ends construction: ev runs once its dependencies have finished (a command with no work
// that is ready at once completes on this thread).
void submit(Event &ev);
// Completes ev with `result`, releases the commands waiting for it, runs callbacks and
// drops the scheduler's reference.
void finish(Event &ev, ur_result_t result);
// Blocks until ev has finished; true when it completed without error.
bool wait(Event &ev);
// Registers fn for when ev reaches `when` (or calls it now if it already has).
void add_callback(Event &ev, ur_execution_info_t when, ur_event_callback_t fn, void *user);
// The user's last release, after any callbacks due: unregistered, its holder dropped.
void unregister(Event &ev);
// On a thread running an event callback (whose command finishes only after it).
bool in_callback();

} // namespace graph

} // namespace ordo::native_cpu
