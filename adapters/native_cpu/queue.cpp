// SPDX-License-Identifier: Apache-2.0
// urQueue* and the command builder every enqueue goes through.
#include "queue.hpp"

#include <sched.h>

#include "context.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"
#include "ordo/queue_rules.hpp"
#include "ordo/retired_handles.hpp"
#include "platform.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

Queue::Queue(Context *ctx, ur_queue_flags_t f)
    : context(ctx), flags(f), in_order(!(f & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE)),
      profiling(f & UR_QUEUE_FLAG_PROFILING_ENABLE), identity(ordo::stream_ordered::new_queue_identity()) {
  context->hold();
}

Queue::~Queue() {
  if (last) last->drop_hold();
  if (last_barrier) last_barrier->drop_hold();
  for (Event *list : {free_taken, free_given.load(std::memory_order_acquire)})
    while (list) ordo::retire(std::exchange(list, list->free_next));
  context->drop_hold();
}

bool Queue::give_back_event(Event &ev) noexcept {
  constexpr uint32_t kMaxFreeEvents = 1024; // a burst of launches; little idle memory
  if (free_count.fetch_add(1, std::memory_order_relaxed) >= kMaxFreeEvents) {
    free_count.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  Event *head = free_given.load(std::memory_order_relaxed);
  do ev.free_next = head;
  while (!free_given.compare_exchange_weak(head, &ev, std::memory_order_release, std::memory_order_relaxed));
  return true;
}

Event *Queue::take_free_event() {
  if (!free_taken) free_taken = free_given.exchange(nullptr, std::memory_order_acquire);
  Event *ev = free_taken;
  if (ev) {
    free_taken = ev->free_next;
    free_count.fetch_sub(1, std::memory_order_relaxed);
  }
  return ev;
}

uint64_t Queue::order_node_locked(Event &ev) {
  uint64_t node = ev.order_node.load(std::memory_order_relaxed);
  if (&ev == last) close_batch(); // a launch joining later would complete after this node
  if (node == 0) {
    // Skipped when linked (record_order): it follows the queue's newest recorded node.
    node = context->pools->order().record(identity, in_order, false, nullptr, 0, false);
    ev.order_node.store(node, std::memory_order_relaxed);
  }
  return node;
}

void Queue::on_user_released() {
  // Stream-ordered frees enqueued here complete before the queue goes (docs/async-alloc.md,
  // "Lifetime"); then no pool keeps an event of this queue or its identity. A worker
  // (a host task or callback releasing its queue) must not wait for its own queue.
  if (has_async_frees.load(std::memory_order_acquire)) {
    if (!WorkerPool::on_worker_thread()) wait_unfinished();
    context->pools->collect();
  }
  context->pools->queue_released(identity);
  Event *a, *b;
  {
    std::lock_guard<std::mutex> lock(mu);
    a = std::exchange(last, nullptr);
    b = std::exchange(last_barrier, nullptr);
    close_batch();
  }
  if (a) a->drop_hold();
  if (b) b->drop_hold();
}

void Queue::command_finished(Event &ev) {
  if (!in_order) {
    std::lock_guard<std::mutex> lock(mu);
    (ev.queue_prev ? ev.queue_prev->queue_next : pending_head) = ev.queue_next;
    (ev.queue_next ? ev.queue_next->queue_prev : pending_tail) = ev.queue_prev;
    ev.queue_prev = ev.queue_next = nullptr;
  }
  pending_count.fetch_sub(1, std::memory_order_acq_rel);
  context->command_finished();
  ev.counted_out.store(true, std::memory_order_release);
}

// The newest command on an in-order queue (which finishes in order), else all unfinished.
void Queue::wait_unfinished() {
  std::vector<Ref<Event>> waiting;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (in_order) {
      close_batch(); // launches enqueued after this call do not make it wait longer
      if (last && !last->counted_out.load(std::memory_order_acquire)) waiting.emplace_back(last);
    } else {
      waiting.reserve(pending_count.load(std::memory_order_relaxed));
      for (Event *p = pending_head; p; p = p->queue_next) waiting.emplace_back(p);
    }
  }
  for (auto &e : waiting) {
    graph::wait(*e);
    // The status turns terminal a moment before the count drops (graph::finish): a
    // query of UR_QUEUE_INFO_EMPTY right after this call must find the queue empty.
    while (!e->counted_out.load(std::memory_order_acquire)) sched_yield();
  }
}

ur_result_t check_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents) {
  if ((numEvents > 0) != (phEvents != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  for (uint32_t i = 0; i < numEvents; ++i) {
    Event *e = lookup<Event>(phEvents[i]);
    if (!e) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
    if (e->failed()) return UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS;
  }
  return UR_RESULT_SUCCESS;
}

CommandBuilder::CommandBuilder(Queue &queue, ur_command_t type) : queue_(queue), type_(type) {}
CommandBuilder::~CommandBuilder() = default;

ur_result_t CommandBuilder::set_wait_list(uint32_t numEvents, const ur_event_handle_t *phEvents) {
  if (numEvents == 0 && !phEvents) return UR_RESULT_SUCCESS; // the common case, nothing to check
  if (ur_result_t r = check_wait_list(numEvents, phEvents)) return r;
  num_waits_ = numEvents;
  waits_ = phEvents;
  return UR_RESULT_SUCCESS;
}

// Everything that can fail (allocation) happens before the command is linked.
void CommandBuilder::prepare(Event &ev, bool user_event) {
  if (user_event) {
    try {
      registry().add(&ev, handle_kind::event);
    } catch (...) {
      Event::destroy(&ev); // not linked, not seen: back to the free list
      throw;
    }
    ev.ref_count.store(1, std::memory_order_relaxed); // the user's reference...
    ev.hold();                                        // ...keeps the memory too
  }
  for (uint32_t i = 0; i < num_waits_; ++i) graph::add_dependency(ev, *reinterpret_cast<Event *>(waits_[i]));
  for (auto &dep : extra_) graph::add_dependency(ev, *dep, /*inherit_failure=*/false);
}

Event *CommandBuilder::make_event(bool user_event) {
  Event *ev = new Event(queue_.context, &queue_, type_, queue_.profiling);
  ev->work = std::move(work_);
  prepare(*ev, user_event);
  return ev;
}

void CommandBuilder::link_locked(Event &ev) {
  record_order(ev);
  // Counted before a launch can join it (set_open_batch takes no queue mutex from the
  // joiner): a thread whose launch joined must find the queue and the context busy (a
  // plain stream-ordered free, urUSMFree, UR_QUEUE_INFO_EMPTY), not in this window.
  queue_.pending_count.fetch_add(1, std::memory_order_relaxed);
  queue_.context->command_started();
  if (queue_.in_order) {
    if (queue_.last) graph::add_dependency(ev, *queue_.last);
    ev.hold();
    queue_.set_open_batch(open_batch_ ? ev.work.get() : nullptr);
    if (queue_.last) queue_.last->drop_hold();
    queue_.last = &ev;
  } else {
    if (queue_.last_barrier) graph::add_dependency(ev, *queue_.last_barrier);
    if (ordering_ != Ordering::Normal && num_waits_ == 0 && extra_.empty()) // all previous commands
      for (Event *p = queue_.pending_head; p; p = p->queue_next) graph::add_dependency(ev, *p);
    if (ordering_ == Ordering::Barrier) {
      ev.hold();
      if (queue_.last_barrier) queue_.last_barrier->drop_hold();
      queue_.last_barrier = &ev;
    }
    ev.queue_prev = queue_.pending_tail;
    (queue_.pending_tail ? queue_.pending_tail->queue_next : queue_.pending_head) = &ev;
    queue_.pending_tail = &ev;
  }
}

void CommandBuilder::record_order(Event &ev) {
  if (no_user_event_ && queue_.in_order && ordering_ == Ordering::Normal && num_waits_ == 0 && extra_.empty()) {
    // Nobody can name this command's event and its only predecessor is the previous
    // command: a node would add nothing to the queue's newest recorded one. A later
    // plain free that needs it records it then (Queue::order_node_locked).
    ev.order_node.store(0, std::memory_order_relaxed);
    return;
  }
  constexpr size_t kMax = 8; // more only loses reuse
  uint64_t waits[kMax];
  size_t n = 0;
  for (uint32_t i = 0; i < num_waits_ && n < kMax; ++i)
    if (uint64_t w = reinterpret_cast<Event *>(waits_[i])->order_node.load(std::memory_order_relaxed)) waits[n++] = w;
  for (auto &dep : extra_)
    if (uint64_t w = dep->order_node.load(std::memory_order_relaxed); w && n < kMax) waits[n++] = w;
  ev.order_node.store(queue_.context->pools->order().record(queue_.identity, queue_.in_order,
                                                            ordering_ == Ordering::Barrier, waits, n,
                                                            num_waits_ > 0 || !extra_.empty()),
                      std::memory_order_relaxed);
}

void CommandBuilder::start(Event &ev, ur_event_handle_t *phEvent) {
  if (phEvent) *phEvent = to_handle(&ev);
  graph::submit(ev);
}

ur_result_t CommandBuilder::submit(ur_event_handle_t *phEvent, bool blocking) {
  const bool user_event = phEvent != nullptr;
  no_user_event_ = !user_event;
  Event *ev;
  {
    // One hold of the queue's mutex: a recycled (or new) event, its work, edges and link.
    std::lock_guard<std::mutex> lock(queue_.mu);
    ev = queue_.take_free_event();
    if (ev)
      ev->reuse(type_);
    else
      ev = new Event(queue_.context, &queue_, type_, queue_.profiling);
    try {
      ev->work = maker_ ? maker_(*ev, maker_ctx_) : std::move(work_);
    } catch (...) {
      Event::destroy(ev);
      throw;
    }
    prepare(*ev, user_event);
    link_locked(*ev);
  }
  Ref<Event> keep_for_wait(blocking ? ev : nullptr);
  start(*ev, phEvent);
  if (blocking && !graph::wait(*ev)) return ev->result;
  return UR_RESULT_SUCCESS;
}

namespace {

// Out-of-order and profiling change behaviour; discard-events, priorities, submission
// modes, default-stream and low-power flags are hints that need nothing here.
ur_result_t UR_APICALL urQueueCreate(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                     const ur_queue_properties_t *pProperties, ur_queue_handle_t *phQueue) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!is_device(hDevice)) return device_error(hDevice);
  if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // No device-side queues (QUEUE_ON_DEVICE_PROPERTIES 0), one compute queue index.
  if (ur_result_t r = ordo::check_queue_properties(pProperties)) return r;
  const ur_queue_flags_t flags = pProperties ? pProperties->flags : 0;
  *phQueue = publish(new Queue(ctx, flags));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueGetInfo(ur_queue_handle_t hQueue, ur_queue_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_LOOKUP(Queue, q, hQueue);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_QUEUE_INFO_CONTEXT: return out.value(to_handle(q->context));
  case UR_QUEUE_INFO_DEVICE: return out.value(device_handle());
  case UR_QUEUE_INFO_FLAGS: return out.value(q->flags);
  case UR_QUEUE_INFO_REFERENCE_COUNT: return out.value(q->count());
  case UR_QUEUE_INFO_EMPTY: return out.boolean(q->pending_count.load(std::memory_order_acquire) == 0);
  case UR_QUEUE_INFO_DEVICE_DEFAULT:
  case UR_QUEUE_INFO_SIZE: return UR_RESULT_ERROR_INVALID_QUEUE; // only for device-side queues
  case UR_QUEUE_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

// A synchronisation point: the context's pools give back memory above their thresholds.
ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t hQueue) {
  ORDO_LOOKUP(Queue, q, hQueue);
  q->wait_unfinished();
  q->context->pools->sync_point();
  return UR_RESULT_SUCCESS;
}

// Commands are handed to the workers as soon as they are ready: nothing to flush.
ur_result_t UR_APICALL urQueueFlush(ur_queue_handle_t hQueue) {
  Queue *q = nullptr;
  return registry_unwrap(hQueue, q);
}

} // namespace

void install_queue_entry_points(ur_dditable_t &t) {
  t.Queue.pfnCreate = urQueueCreate;
  t.Queue.pfnRetain = user_retain<Queue>;
  t.Queue.pfnRelease = user_release<Queue>; // its pending commands still run, and hold it
  t.Queue.pfnGetInfo = urQueueGetInfo;
  t.Queue.pfnFinish = urQueueFinish;
  t.Queue.pfnFlush = urQueueFlush;
}

} // namespace ordo::native_cpu
