// SPDX-License-Identifier: Apache-2.0
// A queue orders its commands: an in-order queue chains each after the previous one
// (and needs only its newest); an out-of-order queue follows wait lists and barriers
// and keeps its unfinished commands for urQueueFinish and barriers.
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
  // No more commands can come: drop the links to the newest ones (they hold this queue).
  void on_user_released();

  void command_finished(Event &ev); // graph::finish: off the unfinished list
  void wait_unfinished();           // until every command enqueued before has finished

  // Recycled events (docs/native-cpu.md, "The scheduler"): a command costs no allocation
  // and no cross-thread free. Any thread gives back (a lock-free push; false: enough are
  // kept); takers hold `mu` and take the whole given-back list at once (no ABA).
  bool give_back_event(Event &ev) noexcept;
  Event *take_free_event(); // under mu; null when none
  // The ordering node of the newest command `ev` (queue.mu held), recorded now if it was
  // skipped (CommandBuilder::record_order).
  uint64_t order_node_locked(Event &ev);

  Context *const context; // internal reference
  const ur_queue_flags_t flags;
  const bool in_order, profiling;

  std::mutex mu;
  Event *last = nullptr; // in-order: the newest command (internal reference)
  // in-order: last's work when it is a batch of launches later launches may join
  // (launch.hpp), until another command comes or the queue is waited for. Guarded by
  // batch_lock, which a joining launch takes alone; changed under both.
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
  Event *last_barrier = nullptr;                          // out-of-order: the newest barrier (internal reference)
  Event *pending_head = nullptr, *pending_tail = nullptr; // out-of-order: unfinished commands, oldest first
  std::atomic<uint32_t> pending_count{0};                 // unfinished commands (either kind)

  Event *free_taken = nullptr;              // under mu
  std::atomic<Event *> free_given{nullptr}; // given back, not yet taken
  std::atomic<uint32_t> free_count{0};      // in both lists

  // A stream-ordered free enqueued here may still be pending in a pool: releasing the
  // queue completes it (async_alloc.cpp).
  std::atomic<bool> has_async_frees{false};
  const void *const identity; // for the stream-ordered layer: never another queue's
};
ORDO_HANDLE_CHECK(Queue);

inline ur_queue_handle_t to_handle(Queue *q) { return reinterpret_cast<ur_queue_handle_t>(q); }

// How a new command joins its queue's order.
enum class Ordering {
  Normal,      // after the wait list (+ in-order predecessor / last barrier)
  AllPrevious, // an empty wait list means every earlier command (urEnqueueEventsWait)
  Barrier,     // like AllPrevious, and every later command waits for it
};

// Builds one command: checks the wait list, makes its event, links it into the graph
// and the queue, and hands it to the scheduler. Nothing changes unless submit() succeeds.
class CommandBuilder {
public:
  CommandBuilder(Queue &queue, ur_command_t type);
  ~CommandBuilder();

  ur_result_t set_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents);
  void set_checked_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents) {
    num_waits_ = numEvents;
    waits_ = phEvents;
  }
  // An order-only dependency the runtime adds (a stream-ordered alloc on the free whose
  // memory it reuses): a failure of `dep`, an unrelated command, does not fail this one.
  void add_dependency(Event &dep) { extra_.push_back(Ref<Event>(&dep)); }
  void set_work(std::unique_ptr<Work> work) { work_ = std::move(work); }
  void set_ordering(Ordering o) { ordering_ = o; }
  // The work is a batch of launches that later launches may join (in-order queue).
  void open_batch() { open_batch_ = true; }

  // Links and starts the command; phEvent (optional) gets a user event. `blocking`:
  // returns once the command has finished, with its result.
  ur_result_t submit(ur_event_handle_t *phEvent, bool blocking = false);

  // submit() in three steps, for a caller that must act in the same hold of queue.mu as
  // the linking (the stream-ordered allocator's pool calls): make_event() (may throw;
  // nothing is in the queue yet), link_locked() (queue.mu held), start() (not held).
  // A linked command must be started.
  Event *make_event(bool user_event);
  void link_locked(Event &ev);
  // Builds the work under queue.mu into its event (submit() only), so that a recycled
  // event's spare work can be rebuilt in place. Replaces set_work.
  using WorkMaker = std::unique_ptr<Work> (*)(Event &ev, void *ctx);
  void set_work_maker(WorkMaker f, void *ctx) {
    maker_ = f;
    maker_ctx_ = ctx;
  }
  void start(Event &ev, ur_event_handle_t *phEvent);

private:
  void record_order(Event &ev); // in the context's ordering knowledge (queue.mu held)
  // Registers a user event and gives it the user's reference; the wait list's and the
  // runtime's edges. On failure the (unlinked) event is destroyed.
  void prepare(Event &ev, bool user_event);

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

template <class F> class FunctionWork final : public Work {
public:
  explicit FunctionWork(F f) : f_(std::move(f)) {}
  void execute(Event &ev) override { graph::finish(ev, f_()); }

private:
  F f_;
};
template <class F> std::unique_ptr<Work> make_work(F f) { return std::make_unique<FunctionWork<F>>(std::move(f)); }

// A command of `type` whose work is `f` (void), after the wait list.
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

// A stream-ordered alloc's or free's command (ur_common/async_alloc.hpp): holds queue.mu
// from construction, except for an alloc that waits for nothing and whose event nobody
// asked for, which usually needs no command at all (async_alloc.cpp).
class AsyncCommand {
public:
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

ur_result_t check_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents);

inline ur_result_t unwrap(ur_queue_handle_t h, Queue *&out) { return registry_unwrap(h, out); } // common.hpp

} // namespace ordo::native_cpu
