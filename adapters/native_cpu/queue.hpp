// SPDX-License-Identifier: Apache-2.0
// A queue orders the commands enqueued on it: an in-order queue chains each
// command after the previous one; an out-of-order queue only follows wait lists
// and barriers. An out-of-order queue keeps the list of its unfinished commands for
// urQueueFinish and barriers; an in-order one needs only its newest command.
#pragma once
#include <memory>
#include <mutex>
#include <thread>

#include "common.hpp"
#include "event.hpp"
#include "ur_common/handles.hpp"

namespace ordo::native_cpu {

struct Context;

struct Queue : Object<Queue> {
  using handle_type = ur_queue_handle_t;
  static constexpr handle_kind kKind = handle_kind::queue;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_QUEUE;

  Queue(Context *ctx, ur_queue_flags_t flags);
  ~Queue();
  // No more commands can come: drop the links to the newest ones (they would keep
  // this queue alive through their own reference to it). Pending commands still run.
  void on_user_released();

  // Removes a finished command from the unfinished list (called by graph::finish).
  void command_finished(Event &ev);
  // Blocks until every command enqueued before the call has finished (urQueueFinish).
  void wait_unfinished();

  // Recycled events (docs/native-cpu.md, "The scheduler"): an event whose last internal
  // reference went (the user's included) is kept for a later command of this queue, so
  // that a command costs no allocation and no cross-thread free. Any thread gives back
  // (a lock-free push); takers hold `mu` and take the whole given-back list at once, so
  // no pop races another pop (no ABA). False: enough are kept, delete it.
  bool give_back_event(Event &ev) noexcept;
  Event *take_free_event(); // under mu; null when none
  // The ordering node of the newest command `ev` (queue.mu held), recording it now if
  // its record was skipped (CommandBuilder::record_order).
  uint64_t order_node_locked(Event &ev);

  Context *const context; // internal reference
  const ur_queue_flags_t flags;
  const bool in_order;
  const bool profiling;

  std::mutex mu;
  Event *last = nullptr; // in-order: the newest command (internal reference)
  // in-order: last's work when it is a batch of launches that later launches may still
  // join (launch.hpp); replaced when another command comes, cleared when the queue is
  // waited for. Guarded by batch_lock, not mu: a joining launch takes only that
  // (docs/native-cpu.md, "The scheduler"); changed under both.
  Work *open_batch = nullptr;
  std::atomic<bool> batch_lock{false};
  void lock_batch() noexcept {
    for (uint32_t i = 1; batch_lock.exchange(true, std::memory_order_acquire); ++i)
      while (batch_lock.load(std::memory_order_relaxed)) // held a few hundred instructions at most
        if (++i % 64 == 0) std::this_thread::yield();    // unless its holder was preempted
  }
  void unlock_batch() noexcept { batch_lock.store(false, std::memory_order_release); }
  void set_open_batch(Work *batch) { // under mu, before the newest command's hold is dropped
    lock_batch();
    Work *old = std::exchange(open_batch, batch);
    unlock_batch();
    if (old) old->close();
  }
  void close_batch() { set_open_batch(nullptr); }
  Event *last_barrier = nullptr; // out-of-order: the newest barrier (internal reference)
  Event *pending_head = nullptr; // out-of-order: unfinished commands, oldest first
  Event *pending_tail = nullptr;
  std::atomic<uint32_t> pending_count{0}; // unfinished commands (either kind)

  Event *free_taken = nullptr;              // under mu
  std::atomic<Event *> free_given{nullptr}; // given back, not yet taken
  std::atomic<uint32_t> free_count{0};      // in both lists

  // A stream-ordered free enqueued here may still be pending in a pool: releasing the
  // queue completes it. (The allocator's pool calls happen under `mu`, with the
  // linking of their commands: async_alloc.cpp.)
  std::atomic<bool> has_async_frees{false};
  // This queue for the stream-ordered layer: never the identity of another queue.
  const void *const identity;
};
ORDO_HANDLE_CHECK(Queue);

inline ur_queue_handle_t to_handle(Queue *q) { return reinterpret_cast<ur_queue_handle_t>(q); }

// How a new command joins its queue's order.
enum class Ordering {
  Normal,      // after the wait list (+ in-order predecessor / last barrier)
  AllPrevious, // an empty wait list means every earlier command (urEnqueueEventsWait)
  Barrier,     // like AllPrevious, and every later command waits for it
};

// Builds one command: validates the wait list, creates its event, links it into
// the graph and the queue, and hands it to the scheduler. Nothing changes unless
// submit() succeeds.
class CommandBuilder {
public:
  CommandBuilder(Queue &queue, ur_command_t type);
  ~CommandBuilder();

  // Checks the (numEvents, phEvents) pair and every event in it.
  ur_result_t set_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents);
  void set_checked_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents) {
    num_waits_ = numEvents;
    waits_ = phEvents;
  }
  // An extra dependency the runtime adds on its own: a stream-ordered alloc waiting
  // for the free that released the memory it reuses. It orders only: a failure of
  // `dep` (an unrelated command's) does not fail this command.
  void add_dependency(Event &dep) { extra_.push_back(Ref<Event>(&dep)); }
  void set_work(std::unique_ptr<Work> work) { work_ = std::move(work); }
  void set_ordering(Ordering o) { ordering_ = o; }
  // The work is a batch of launches that later launches may join (in-order queue).
  void open_batch() { open_batch_ = true; }

  // Links and starts the command. phEvent (optional) receives a new user event.
  // With `blocking`, returns only once the command has finished, with its result.
  ur_result_t submit(ur_event_handle_t *phEvent, bool blocking = false);

  // submit() in three steps, for a caller that must do something in the same hold of
  // the queue's mutex as the linking (the stream-ordered allocator's pool calls):
  // make_event() creates the event and its wait-list edges (may throw; nothing is in
  // the queue yet), link_locked() puts it in the queue's order (queue.mu held), and
  // start() lets it run (queue.mu not held). A linked command must be started.
  Event *make_event(bool user_event);
  void link_locked(Event &ev);
  // The work of a command built under queue.mu into its event (submit() only), so that a
  // recycled event's spare work can be rebuilt in place. Replaces set_work.
  using WorkMaker = std::unique_ptr<Work> (*)(Event &ev, void *ctx);
  void set_work_maker(WorkMaker f, void *ctx) {
    maker_ = f;
    maker_ctx_ = ctx;
  }
  // Stream-ordered commands: the pool call sees the command being built.
  uint32_t num_waits() const { return num_waits_; }
  const ur_event_handle_t *waits() const { return waits_; }
  void start(Event &ev, ur_event_handle_t *phEvent);

private:
  // The command's place in the context's ordering knowledge (queue.mu held).
  void record_order(Event &ev);
  // The user's reference (when asked for) and the edges of the wait list and of the
  // runtime's own dependencies.
  void add_edges(Event &ev, bool user_event);

  Queue &queue_;
  ur_command_t type_;
  Ordering ordering_ = Ordering::Normal;
  uint32_t num_waits_ = 0;
  const ur_event_handle_t *waits_ = nullptr;
  std::vector<Ref<Event>> extra_;
  std::unique_ptr<Work> work_;
  WorkMaker maker_ = nullptr;
  void *maker_ctx_ = nullptr;
  bool no_user_event_ = false; // submit() without phEvent: nobody can name the event
  bool open_batch_ = false;
};

// A command whose work is a function run on a worker.
template <class F> class FunctionWork final : public Work {
public:
  explicit FunctionWork(F f) : f_(std::move(f)) {}
  void execute(Event &ev) override { graph::finish(ev, f_()); }

private:
  F f_;
};
template <class F> std::unique_ptr<Work> make_work(F f) { return std::make_unique<FunctionWork<F>>(std::move(f)); }

// A command of `type` whose work is `f` (void), after the wait list: most enqueues.
template <class F>
ur_result_t submit_work(Queue &q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits,
                        ur_event_handle_t *phEvent, bool blocking, F f) {
  CommandBuilder cmd(q, type);
  if (ur_result_t r = cmd.set_wait_list(n, waits)) return r;
  cmd.set_work(make_work([f = std::move(f)]() mutable {
    f();
    return UR_RESULT_SUCCESS;
  }));
  return cmd.submit(phEvent, blocking);
}

// A stream-ordered alloc's or free's command for ur_common/async_alloc.hpp: holds the
// queue's mutex from construction, except for an alloc that waits for nothing and whose
// event nobody asked for, which usually needs no command at all (async_alloc.cpp).
class AsyncCommand {
public:
  // The wait list is checked already (async_hooks::check_wait_list).
  AsyncCommand(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent,
               ordo::ur_common::lane_hint = {})
      : queue_(*q), builder_(*q, type), ph_event_(phEvent), lock_(q->mu, std::defer_lock), deferred_(!phEvent && !n) {
    builder_.set_checked_wait_list(n, waits);
    if (!deferred_) lock_.lock();
  }
  ~AsyncCommand() {
    if (to_start_) start_kept();
  }
  ur_result_t status() const { return UR_RESULT_SUCCESS; }
  const void *identity() const { return queue_.identity; }
  bool in_order() const { return queue_.in_order; }
  // The pool's internal dependency (reuse rule 3): an order-only edge.
  bool wait_for(Event *dep);
  // alloc_work: the block must be zeroed (`zero`), or needs a command for its edges.
  ur_result_t set_block(void *p, size_t size, bool zero, bool needs_command) {
    needed_ = needs_command || zero;
    return zero ? set_zero_work(p, size) : UR_RESULT_SUCCESS;
  }
  ur_result_t finish(ur_result_t r, bool keep_lock = false) {
    if (r != UR_RESULT_SUCCESS || (deferred_ && !needed_)) return r; // no command at all
    return make_command(keep_lock);
  }
  void freed() { queue_.has_async_frees.store(true, std::memory_order_release); }

private:
  ur_result_t set_zero_work(void *p, size_t size);
  ur_result_t make_command(bool keep_lock);
  void start_kept(); // lets go of the mutex, then starts what make_command kept locked

  Queue &queue_;
  CommandBuilder builder_;
  ur_event_handle_t *ph_event_;
  std::unique_lock<std::mutex> lock_;
  const bool deferred_;
  bool needed_ = true;
  Event *to_start_ = nullptr;
};

// Checks a wait list the way every enqueue does (also used by urEventWait).
ur_result_t check_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents);

inline ur_result_t unwrap(ur_queue_handle_t h, Queue *&out) { return registry_unwrap(h, out); } // common.hpp

} // namespace ordo::native_cpu
