// SPDX-License-Identifier: Apache-2.0
// urEnqueueUSM{Device,Shared,Host}AllocExp and urEnqueueUSMFreeExp: ur_common's
// (ur_common/async_alloc.hpp) over the task graph. An alloc is a command that waits for
// its wait list and the frees the pool made it depend on (rule 3), zeroing the block when
// asked; a free is a command with no work, its event the block's release event. Neither
// is made when nothing can observe it: an alloc that waits for nothing and whose event
// nobody asked for, and a plain free on an in-order queue (fast_free). Each pool call is
// in the same hold of the queue's mutex as the linking of its command (docs/ordered-pool.md,
// "ordering contract"), except in those two cases (docs/native-cpu.md, "Performance").
#include <cstring>

#include "context.hpp"
#include "entry_points.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "ur_common/async_alloc.hpp"

namespace ordo::native_cpu {

bool AsyncCommand::wait_for(Event *dep) {
  if (dep->terminal()) return true; // the free has run: nothing to wait for
  return ordo::guarded([&] {
           builder_.add_dependency(*dep);
           return UR_RESULT_SUCCESS;
         }) == UR_RESULT_SUCCESS;
}

ur_result_t AsyncCommand::set_zero_work(void *p, size_t size) {
  return ordo::guarded([&] {
    builder_.set_work(make_work([p, size] {
      std::memset(p, 0, size);
      return UR_RESULT_SUCCESS;
    }));
    return UR_RESULT_SUCCESS;
  });
}

// An alloc that waits for nothing and whose event nobody asked for took its block with
// no lock: any command that uses the block is enqueued after the alloc returns, so a
// command the pool made necessary is linked in time here.
ur_result_t AsyncCommand::make_command(bool keep_lock) {
  Event *ev = nullptr;
  if (ur_result_t r = ordo::guarded([&] {
        ev = builder_.make_event(ph_event_ != nullptr);
        return UR_RESULT_SUCCESS;
      }))
    return r; // nothing is in the queue yet
  if (!lock_.owns_lock()) lock_.lock();
  builder_.link_locked(*ev);
  if (keep_lock) { // the caller's pool call joins this hold of the mutex
    if (ph_event_) *ph_event_ = to_handle(ev);
    to_start_ = ev;
    return UR_RESULT_SUCCESS;
  }
  lock_.unlock();
  builder_.start(*ev, ph_event_);
  return UR_RESULT_SUCCESS;
}

void AsyncCommand::start_kept() {
  lock_.unlock();
  builder_.start(*to_start_, nullptr);
}

namespace {

struct async_hooks {
  using Queue = ordo::native_cpu::Queue;
  using Command = AsyncCommand;
  static size_t max_alloc(const Device *) { return ordo::native_cpu::max_alloc_size(); }
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *w) {
    return n == 0 && !w ? UR_RESULT_SUCCESS : ordo::native_cpu::check_wait_list(n, w);
  }
  static ur_result_t alloc_work(Command &cmd, const ordo::stream_ordered::allocation &block) {
    return cmd.set_block(block.ptr, block.size, block.needs_zero, block.result.dependencies_added);
  }
  static ur_result_t free_work(Command &) { return UR_RESULT_SUCCESS; } // it only orders
  static void release_event(ur_event_handle_t h) { user_release<Event>(h); }
  // A plain free on an in-order queue needs no command: with nothing unfinished the
  // block is free at once; otherwise the queue's newest command's event releases it.
  static bool fast_free(Queue *q, ur_usm_pool_handle_t hPool, void *p, uint32_t n, ur_event_handle_t *phEvent,
                        ur_result_t &r) {
    if (!q->in_order || n || phEvent) return false;
    ordo::stream_ordered::context_pools &pools = *q->context->pools;
    if (q->pending_count.load(std::memory_order_acquire) == 0) {
      r = pools.free_unused(hPool, p);
      return true;
    }
    std::lock_guard<std::mutex> lock(q->mu);
    Event *last = q->last && !q->last->terminal() ? q->last : nullptr;
    if (last) q->order_node_locked(*last); // a launch without an event may have none yet
    r = pools.check_and_free(hPool, p, last ? to_handle(last) : nullptr, q->identity, true);
    if (r == UR_RESULT_SUCCESS && last) q->has_async_frees.store(true, std::memory_order_release);
    return true;
  }
};

} // namespace

inline Context *queue_context(Queue *q) { return q->context; } // for ur_common/async_alloc.hpp
inline Device *queue_device(Queue *) { return &the_device(); }

void install_async_alloc_entry_points(ur_dditable_t &t) { ordo::ur_common::async_alloc<async_hooks>::install(t); }

} // namespace ordo::native_cpu
