// SPDX-License-Identifier: Apache-2.0
// An event is also the scheduler's node for its command (docs/native-cpu.md, "The
// scheduler"): every command, whether or not the user asked for its event, is one
// Event holding its work, its unfinished dependencies and the commands waiting for it.
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

// What a command does when it runs. execute() must end with finish(ev, result)
// exactly once, on any thread, now or later (a kernel launch finishes from its
// last work-group chunk).
struct Work {
  virtual ~Work() = default;
  virtual void execute(Event &ev) = 0;
  // Called when the command has finished: drop what the command held and return true
  // to be kept in the event (Event::spare) for the next command that reuses it.
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
  // reference that the scheduler holds until the command has finished.
  Event(Context *ctx, Queue *q, ur_command_t cmd, bool profiled);
  ~Event();
  void on_user_released() {}
  // The last internal reference is gone: the event goes back to its queue for a later
  // command (Queue::take_free_event), or is deleted when the queue keeps enough.
  static void destroy(Event *ev) noexcept;
  // A recycled event as a new command of the same queue (as constructed: QUEUED, user
  // count 0, one internal reference, a reference to its queue).
  void reuse(ur_command_t cmd);

  Context *const context; // the queue's: the event holds its queue, which holds it
  Queue *const queue;     // internal reference
  ur_command_t command;   // changes only when recycled
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
  // first is kept inline and set without the lock (one CAS: a chain of commands takes
  // no lock and allocates nothing per edge); finish() closes it (graph::kClosed). The
  // others are under mu. An entry's low bit marks an order-only edge
  // (see graph::add_dependency).
  std::atomic<Event *> first_successor{nullptr};
  std::vector<Event *> more_successors;
  struct Callback {
    ur_execution_info_t when;
    ur_event_callback_t fn;
    void *user;
  };
  std::vector<Callback> callbacks; // under mu
  // Callbacks taken from `callbacks` and not yet returned from (under mu). While any
  // is waiting or running, the user's last release leaves the handle registered, so
  // a callback may still query it (docs/native-cpu.md, "Callbacks");
  // `unregister_after_callbacks` says that release happened.
  uint32_t callbacks_running = 0;
  bool unregister_after_callbacks = false;
  // Set (before the status is read) by the first urEventSetCallback, so that status
  // steps of events without callbacks need no lock.
  std::atomic<bool> has_callbacks{false};
  std::unique_ptr<Work> work;
  // The work of the finished command, kept for the next command that reuses this
  // event (a launch rebuilds a LaunchWork in place: no allocation per launch).
  std::unique_ptr<Work> spare;
  Event *free_next = nullptr; // in its queue's list of free events

  // ---- profiling, nanoseconds of now_ns() ----
  std::atomic<uint64_t> t_queued{0}, t_submit{0}, t_start{0}, t_end{0};

  // Its node in the context's ordering knowledge (set when linked; 0: none).
  std::atomic<uint64_t> order_node{0};

  // ---- an out-of-order queue's list of unfinished commands (under its mutex) ----
  Event *queue_prev = nullptr;
  Event *queue_next = nullptr;

  bool terminal() const {
    int s = status.load(std::memory_order_acquire);
    return s == UR_EVENT_STATUS_COMPLETE || s == UR_EVENT_STATUS_ERROR;
  }
  bool failed() const { return status.load(std::memory_order_acquire) == UR_EVENT_STATUS_ERROR; }
};
ORDO_HANDLE_CHECK(Event);

inline ur_event_handle_t to_handle(Event *e) { return reinterpret_cast<ur_event_handle_t>(e); }
// For ur_common/pool_hooks.hpp, found by argument-dependent lookup.
inline const Context *event_context(const Event *e) { return e->context; }
inline void event_drop(Event *e) { e->drop_hold(); }

// ---- the task graph (task_graph.cpp) ----
namespace graph {

// Makes `ev` wait for `dep`. Only before submit(ev). If dep has already failed (or
// fails later), ev will fail without running, unless `inherit_failure` is false: an
// edge that only orders (the stream-ordered allocator's internal dependencies).
void add_dependency(Event &ev, Event &dep, bool inherit_failure = true);
// True when `to` (one of `targets`) is known to wait, through a chain of at most
// `max_visits` commands, for `from`; or `from` has already finished. Never blocks.
bool reaches(Event &from, const Event *const *targets, size_t num_targets, size_t max_visits);
// Ends construction: ev runs once its dependencies have finished. A command with
// no work (a marker or barrier) that is ready at once completes on this thread.
void submit(Event &ev);
// Completes ev with `result` (success or the error that failed it), releases the
// commands waiting for it, runs callbacks and drops the scheduler's reference.
void finish(Event &ev, ur_result_t result);
// Blocks until ev has finished; true when it completed without error.
bool wait(Event &ev);
// Registers fn for when ev reaches `when` (or calls it now if it already has).
void add_callback(Event &ev, ur_execution_info_t when, ur_event_callback_t fn, void *user);
// True on a thread that is running an event callback (it must not wait for that
// event's command, which finishes only after its callbacks).
bool in_callback();

} // namespace graph

} // namespace ordo::native_cpu
