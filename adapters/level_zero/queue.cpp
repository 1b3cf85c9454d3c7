// SPDX-License-Identifier: Apache-2.0
// Queues and the command helper every enqueue uses.
//
// An in-order queue is one immediate command list. An out-of-order queue is a few
// lists: a command whose wait list holds an event of this queue goes to that event's
// list (the dependency then costs nothing), any other command to the next list in
// turn. Each list is an in-order queue of its own for the stream-ordered layer
// (common.hpp, Lane).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <unordered_map>

#include "common.hpp"
#include "ordo/host_threads.hpp"
#include "ordo/info.hpp"
#include "ordo/queue_rules.hpp"
#include "ur_common/queue.hpp"

namespace ordo::level_zero {

namespace {
// Lists behind an out-of-order queue (ORDO_L0_OOO_LISTS overrides, 1..16).
size_t ooo_list_count() {
  static size_t n = [] {
    const char *env = std::getenv("ORDO_L0_OOO_LISTS");
    long v = env ? std::strtol(env, nullptr, 10) : 3;
    return static_cast<size_t>(v < 1 ? 1 : v > 16 ? 16 : v);
  }();
  return n;
}

// The adapter's immediate lists by handle: the lock every lane over a list shares, and
// the context and device of a list one of our queues made (a list from elsewhere is
// registered by the first queue made over it). Entries whose lanes are all gone expire.
struct ListEntry {
  std::weak_ptr<std::mutex> lock;
  Context *ctx = nullptr; // null: not made here (its context cannot be asked before API 1.9)
  Device *dev = nullptr;
};
std::mutex lists_mutex;
std::unordered_map<ze_command_list_handle_t, ListEntry> &lists() {
  static auto *m = new std::unordered_map<ze_command_list_handle_t, ListEntry>(); // outlives teardown
  return *m;
}

void register_list(ze_command_list_handle_t list, const std::shared_ptr<std::mutex> &lock, Context *ctx, Device *dev) {
  std::lock_guard<std::mutex> guard(lists_mutex);
  for (auto it = lists().begin(); it != lists().end();) // drop expired entries: handles are reused
    it = it->second.lock.expired() ? lists().erase(it) : std::next(it);
  lists()[list] = ListEntry{lock, ctx, dev};
}

// The registered entry of a live list, if any: its lock, context and device.
bool find_list(ze_command_list_handle_t list, std::shared_ptr<std::mutex> &lock, Context *&ctx, Device *&dev) {
  std::lock_guard<std::mutex> guard(lists_mutex);
  auto it = lists().find(list);
  if (it == lists().end()) return false;
  lock = it->second.lock.lock();
  ctx = it->second.ctx;
  dev = it->second.dev;
  return lock != nullptr;
}

// A queue made: known to its context (urUSMFree waits for its commands), holding it.
ur_result_t publish_queue(Context *ctx, Queue *q, ur_queue_handle_t *phQueue) {
  try {
    std::lock_guard<std::mutex> lock(ctx->queues_mutex);
    ctx->queues.push_back(q);
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  context_hold(ctx);
  *phQueue = reinterpret_cast<ur_queue_handle_t>(q);
  return UR_RESULT_SUCCESS;
}
} // namespace

void queue_hold(Queue *q) { q->hold(); }

void queue_drop(Queue *q) { ordo::ur_common::drop_queue(q); }

uint32_t Queue::pick_lane(uint32_t n, const ur_event_handle_t *waits) {
  return lane_for<Event>(n, waits, [](const Event *) { return true; });
}

void Lane::sweep() {
  while (!inflight.empty() && inflight.front().own->complete()) {
    InFlight f = std::move(inflight.front());
    inflight.pop_front();
    for (Event *e : f.held) event_drop(e);
    for (Mem *m : f.mems) mem_drop(m);
    event_drop(f.own);
  }
}

ur_result_t Queue::finish_all() {
  ur_result_t result = UR_RESULT_SUCCESS;
  for (auto &l : lanes) {
    Event *last = nullptr;
    {
      std::lock_guard<std::mutex> lock(l->mutex);
      if ((last = l->last)) last->hold();
    }
    if (last) {
      ze_result_t r = ze().zeEventHostSynchronize(last->ze.ev, UINT64_MAX);
      if (r != ZE_RESULT_SUCCESS && result == UR_RESULT_SUCCESS) result = map_error(r);
      event_drop(last);
    }
    std::lock_guard<std::mutex> lock(l->mutex);
    l->sweep();
  }
  return result;
}

ur_result_t wait_for_queues(Context *ctx) {
  // Each list runs in order, so its newest command completing means all of its
  // commands have. Taken under the lists' locks; waited for without any lock held.
  std::vector<Event *> newest;
  {
    std::lock_guard<std::mutex> queues_lock(ctx->queues_mutex);
    for (Queue *q : ctx->queues)
      for (auto &l : q->lanes) {
        std::lock_guard<std::mutex> lock(l->mutex);
        if (l->last && !l->last->complete()) {
          l->last->hold();
          newest.push_back(l->last);
        }
      }
  }
  ur_result_t result = UR_RESULT_SUCCESS;
  for (Event *e : newest) {
    ze_result_t r = ze().zeEventHostSynchronize(e->ze.ev, UINT64_MAX);
    if (r != ZE_RESULT_SUCCESS && result == UR_RESULT_SUCCESS) result = map_error(r);
    event_drop(e);
  }
  return result;
}

ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *list) {
  if ((n > 0) != (list != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  for (uint32_t i = 0; i < n; ++i) {
    // A foreign adapter's event (another first word) is refused too (ordo/object.hpp),
    // and so is one the program has released while a list still holds it.
    Event *e = nullptr;
    if (unwrap_event(list[i], e) != UR_RESULT_SUCCESS) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  }
  return UR_RESULT_SUCCESS;
}

// ---- Command ------------------------------------------------------------------------

namespace {
// An event of the queue's context signalled from a host thread once `foreign` (an event
// of another context) has completed: what a list of this context may wait for.
ur_result_t proxy_event(Context *ctx, Event *foreign, Event **out) {
  auto *proxy = new (std::nothrow) Event();
  if (!proxy) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  proxy->ctx = ctx;
  proxy->command = UR_COMMAND_EVENTS_WAIT;
  if (ur_result_t r = ctx->events.get(false, proxy->ze)) {
    delete proxy;
    return r;
  }
  context_hold(ctx); // a queue-less event holds its context (event_destroy drops it)
  proxy->hold();
  foreign->hold(); // both the thread's until it has signalled
  const bool started = ordo::adapter_host_threads().start([proxy, foreign] {
    ze().zeEventHostSynchronize(foreign->ze.ev, UINT64_MAX);
    ze().zeEventHostSignal(proxy->ze.ev);
    event_drop(foreign);
    event_drop(proxy);
  });
  if (!started) {
    // No thread: wait here (the enqueue blocks, the order is kept).
    ze().zeEventHostSynchronize(foreign->ze.ev, UINT64_MAX);
    ze().zeEventHostSignal(proxy->ze.ev);
    event_drop(foreign);
    event_drop(proxy);
  }
  *out = proxy;
  return UR_RESULT_SUCCESS;
}
} // namespace

ur_result_t Command::proxy_event(Event *foreign, Event **out) {
  return level_zero::proxy_event(queue_->ctx, foreign, out);
}

Command::Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out_event,
                 bool all_lanes, ordo::ur_common::lane_hint hint)
    : queue_(q), type_(type), out_(out_event), all_lanes_(all_lanes && q->lanes.size() > 1) {
  status_ = check_wait_list(n, waits);
  if (status_ != UR_RESULT_SUCCESS) return;
  lane_ = hint.lane < q->lanes.size() ? hint.lane : q->pick_lane(n, waits);
  locked_ = q->lock_lanes(lane_, all_lanes_);
  Lane &lane = *q->lanes[lane_];
  lane.sweep();
  elided_ = n == 0 && !out_event && !all_lanes_ &&
            (type == UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP || type == UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP ||
             type == UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP);
  if (elided_) return;
  status_ = event_create(q, type_, q->profiling, &event_);
  if (status_ != UR_RESULT_SUCCESS) return;
  event_->lane = lane_;
  if (lane.last) add_wait(lane.last); // in order on the list
  for (uint32_t i = 0; i < n; ++i) add_wait(reinterpret_cast<Event *>(waits[i]));
}

ur_result_t Command::issue_as_command() {
  if (!elided_) return status_;
  elided_ = false;
  if ((status_ = event_create(queue_, type_, queue_->profiling, &event_)) != UR_RESULT_SUCCESS) return status_;
  event_->lane = lane_;
  Lane &lane = *queue_->lanes[lane_];
  if (lane.last) add_wait(lane.last);
  return status_;
}

Command::~Command() {
  unlock();
  for (Event *e : held_) event_drop(e); // a command never issued
  for (Mem *m : mems_) mem_drop(m);
  if (event_) event_release(event_);
}

void Command::unlock() {
  queue_->unlock_lanes(lane_, locked_);
  locked_ = 0;
}

ze_command_list_handle_t Command::list() const { return queue_->lanes[lane_]->list; }
const void *Command::identity() const { return queue_->lanes[lane_]->identity; }

// The command waits for `e` (already complete ones too: cheap, and never wrong) and
// holds it until the command has completed, so its Level Zero event is not recycled
// under the wait. Only nodes of this context's ordering knowledge are predecessors.
void Command::add_wait(Event *e) {
  if (std::find(held_.begin(), held_.end(), e) != held_.end()) return;
  e->hold();
  held_.push_back(e);
  if (e->ze.ev && e->ctx->ze != queue_->ctx->ze) {
    // Level Zero lets a list wait only for events of its own context: an event of this
    // context stands in, signalled from a host thread once `e` has completed.
    Event *proxy = nullptr;
    if (ur_result_t r = proxy_event(e, &proxy)) {
      if (status_ == UR_RESULT_SUCCESS) status_ = r;
      return;
    }
    held_.push_back(proxy); // its creation holder, dropped when the command completes
    ze_waits_.push_back(proxy->ze.ev);
    return;
  }
  ze_waits_.push_back(e->ze.ev);
  if (e->order_node && e->ctx == queue_->ctx && npreds_ < kMaxPreds) preds_[npreds_++] = e->order_node;
}

void Command::hold(Mem *m) {
  mems_.reserve(mems_.size() + 1); // may throw: before the holder is taken
  m->hold();
  mems_.push_back(m);
}

bool Command::wait_for(Event *e) {
  if (issue_as_command() != UR_RESULT_SUCCESS) return false;
  add_wait(e);
  return true;
}

void Command::join_other_lanes() {
  if (!all_lanes_) return;
  for (size_t i = 0; i < queue_->lanes.size(); ++i) {
    Lane &l = *queue_->lanes[i];
    if (i == lane_) continue;
    l.sweep();
    if (l.last) add_wait(l.last);
    if (l.last_node && npreds_ < kMaxPreds) preds_[npreds_++] = l.last_node;
  }
}

void Command::order_other_lanes() { barrier_ = all_lanes_; }

ur_result_t Command::append_barrier() {
  if (elided_) return UR_RESULT_SUCCESS; // nothing to order, nothing to signal
  return check(ze().zeCommandListAppendBarrier(list(), signal(), num_waits(), waits()));
}

ur_result_t Command::finish(ur_result_t result, bool keep_lock) {
  if (result != UR_RESULT_SUCCESS) return result;
  if (elided_) { // no node either: nothing can name it
    if (!keep_lock) unlock();
    return UR_RESULT_SUCCESS;
  }
  ordo::stream_ordered::order_graph &order = queue_->ctx->pools->order();
  Lane &lane = *queue_->lanes[lane_];
  const uint64_t node = order.record(lane.identity, true, false, preds_, npreds_, npreds_ > 0);
  event_->order_node = node;
  lane.last_node = node;
  // The list keeps the command's event and what it waits for until it completes.
  event_->hold();
  if (lane.last) event_drop(lane.last);
  lane.last = event_;
  event_->hold();
  lane.inflight.push_back({event_, std::move(held_), std::move(mems_)});
  held_.clear();
  mems_.clear();
  if (barrier_) {
    // Every other list waits for the barrier before its next command: a marker on each.
    for (size_t i = 0; i < queue_->lanes.size(); ++i) {
      if (i == lane_) continue;
      Lane &other = *queue_->lanes[i];
      Event *marker = nullptr;
      if (ur_result_t r = event_create(queue_, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, false, &marker)) return r;
      marker->lane = uint32_t(i);
      ze_event_handle_t wait = event_->ze.ev;
      ze_result_t zr = ze().zeCommandListAppendBarrier(other.list, marker->ze.ev, 1, &wait);
      if (zr != ZE_RESULT_SUCCESS) {
        event_release(marker);
        return map_error(zr);
      }
      marker->order_node = other.last_node = order.record(other.identity, true, false, &node, 1, true);
      event_->hold();
      std::vector<Event *> held{event_};
      if (other.last) held.push_back(other.last); // the marker's reference to it moves here
      other.last = marker;                        // its creation holder
      marker->hold();
      other.inflight.push_back({marker, std::move(held), {}});
    }
  }
  if (out_) {
    *out_ = reinterpret_cast<ur_event_handle_t>(event_);
  } else {
    event_release(event_);
  }
  event_ = nullptr;
  if (!keep_lock) unlock();
  return UR_RESULT_SUCCESS;
}

// ---- entry points ------------------------------------------------------------------

namespace {

// What ur_common's urQueue* entry points leave to the adapter (ur_common/queue.hpp).
struct queue_hooks {
  using Context = level_zero::Context;
  using Device = level_zero::Device;
  using Queue = level_zero::Queue;

  // One immediate list per lane.
  static ur_result_t create(Context *ctx, Device *dev, ur_queue_flags_t flags, ur_queue_handle_t *phQueue) {
    auto *q = ordo::ur_common::new_queue<Queue>(ctx, dev, flags);
    ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                 nullptr,
                                 dev->facts.compute_ordinal,
                                 0,
                                 0,
                                 ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                 ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    if (flags & UR_QUEUE_FLAG_PRIORITY_LOW) desc.priority = ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW;
    if (flags & UR_QUEUE_FLAG_PRIORITY_HIGH) desc.priority = ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
    size_t n = q->in_order ? 1 : ooo_list_count();
    ur_result_t result = UR_RESULT_SUCCESS;
    for (size_t i = 0; i < n && result == UR_RESULT_SUCCESS; ++i) {
      ze_command_list_handle_t list = nullptr;
      result = check(ze().zeCommandListCreateImmediate(ctx->ze, dev->ze, &desc, &list));
      if (result != UR_RESULT_SUCCESS) break;
      q->lanes.push_back(std::make_unique<Lane>());
      q->lanes.back()->list = list;
      q->lanes.back()->identity = ordo::stream_ordered::new_queue_identity();
    }
    if (result == UR_RESULT_SUCCESS) {
      try {
        for (auto &l : q->lanes) register_list(l->list, l->list_lock, ctx, dev);
      } catch (const std::bad_alloc &) {
        result = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
      }
    }
    if (result == UR_RESULT_SUCCESS) result = publish_queue(ctx, q, phQueue);
    if (result != UR_RESULT_SUCCESS) {
      for (auto &l : q->lanes) ze().zeCommandListDestroy(l->list);
      delete q;
    }
    return result;
  }

  // A queue over an immediate command list (the only kind of native queue this adapter
  // makes or takes): urQueueGetNativeHandle's list, or one the program made. It has that
  // one list, shares its lock with every other lane over it, and destroys it only when
  // handed over (isNativeHandleOwned). pProperties->pNext may chain ur_queue_properties_t
  // (the queue's flags) and ur_queue_native_desc_t, whose pNativeData (int32_t) is 1 for
  // an immediate list and 0 for a Level Zero command queue, which is not taken.
  static ur_result_t create_with_native_handle(Context *ctx, ur_native_handle_t hNativeQueue, Device *dev,
                                               const ur_queue_native_properties_t *pProperties,
                                               ur_queue_handle_t *phQueue) {
    if (dev && ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    auto list = reinterpret_cast<ze_command_list_handle_t>(hNativeQueue);
    if (!list) return UR_RESULT_ERROR_INVALID_NULL_HANDLE; // no Level Zero list is null
    const bool owned = pProperties && pProperties->isNativeHandleOwned;
    ur_queue_flags_t flags = 0;
    for (auto *ext = pProperties ? static_cast<const ur_base_properties_t *>(pProperties->pNext) : nullptr; ext;
         ext = static_cast<const ur_base_properties_t *>(ext->pNext)) {
      if (ext->stype == UR_STRUCTURE_TYPE_QUEUE_PROPERTIES) {
        flags = reinterpret_cast<const ur_queue_properties_t *>(ext)->flags;
      } else if (ext->stype == UR_STRUCTURE_TYPE_QUEUE_NATIVE_DESC) {
        const void *data = reinterpret_cast<const ur_queue_native_desc_t *>(ext)->pNativeData;
        if (data && *static_cast<const int32_t *>(data) != 1) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
      }
    }
    if (flags & UR_QUEUE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (flags & (UR_QUEUE_FLAG_ON_DEVICE | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT))
      return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
    std::shared_ptr<std::mutex> lock;
    Context *list_ctx = nullptr;
    Device *list_dev = nullptr;
    const bool ours = find_list(list, lock, list_ctx, list_dev);
    if (ours && list_ctx) {
      if (list_ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT; // a list of another context
      if (dev && dev != list_dev) return UR_RESULT_ERROR_INVALID_DEVICE;
      // A queue of ours owns the list: it cannot be handed over a second time.
      if (owned) return UR_RESULT_ERROR_INVALID_VALUE;
      dev = list_dev;
    }
    if (!dev) {
      // A list from elsewhere names no device we could ask for (API 1.9's
      // zeCommandListGetDeviceHandle): the context's only device, if it has one.
      if (ctx->devices.size() != 1) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
      dev = ctx->devices[0];
    }
    auto *q = new (std::nothrow) Queue();
    if (!q) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    try {
      if (!lock) lock = std::make_shared<std::mutex>();
      q->ctx = ctx;
      q->dev = dev;
      q->flags = flags;
      q->in_order = !(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE); // one list: in order regardless
      q->profiling = (flags & UR_QUEUE_FLAG_PROFILING_ENABLE) != 0;
      q->lanes.push_back(std::make_unique<Lane>(lock));
      Lane &lane = *q->lanes.back();
      lane.list = list;
      lane.owns_list = owned;
      lane.identity = ordo::stream_ordered::new_queue_identity();
      if (!ours) register_list(list, lock, nullptr, nullptr);
    } catch (const std::bad_alloc &) {
      delete q;
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (ur_result_t r = publish_queue(ctx, q, phQueue)) {
      delete q;
      return r;
    }
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t release_last(Queue *q) {
    // The last reference: finish the work (pending frees included), let go of every
    // event the lists hold, then of the lists. Events of the queue keep the object.
    ur_result_t result = q->finish_all();
    {
      // Before its lists go: wait_for_queues reads them under this lock.
      std::lock_guard<std::mutex> lock(q->ctx->queues_mutex);
      auto &queues = q->ctx->queues;
      queues.erase(std::find(queues.begin(), queues.end(), q));
    }
    ordo::stream_ordered::context_pools &pools = *q->ctx->pools;
    for (auto &l : q->lanes) pools.queue_released(l->identity);
    pools.collect();
    std::vector<std::unique_ptr<Lane>> lanes = std::move(q->lanes);
    for (auto &l : lanes) {
      std::deque<Lane::InFlight> rest;
      Event *last = nullptr;
      {
        std::lock_guard<std::mutex> lock(l->mutex);
        rest.swap(l->inflight);
        std::swap(last, l->last);
      }
      for (auto &f : rest) {
        for (Event *e : f.held) event_drop(e);
        event_drop(f.own);
      }
      if (last) event_drop(last);
      if (l->owns_list) ze().zeCommandListDestroy(l->list);
    }
    queue_drop(q);
    return result;
  }

  static ur_result_t is_empty(Queue *q, bool &empty) {
    for (auto &l : q->lanes) {
      std::lock_guard<std::mutex> lock(l->mutex);
      if (l->last && !l->last->complete()) empty = false;
    }
    return UR_RESULT_SUCCESS;
  }

  // The first list. It is an immediate list: pNativeData (an int32_t) says so with 1, as
  // urQueueCreateWithNativeHandle reads it.
  static ur_native_handle_t native_handle(Queue *q, ur_queue_native_desc_t *pDesc) {
    if (pDesc && pDesc->pNativeData) *static_cast<int32_t *>(pDesc->pNativeData) = 1;
    return reinterpret_cast<ur_native_handle_t>(q->lanes.empty() ? nullptr : q->lanes[0]->list);
  }

  static ur_result_t finish(Queue *q) { return q->finish_all(); }
};

} // namespace

void install_queue_entry_points(ur_dditable_t &t) { ordo::ur_common::queue_entry_points<queue_hooks>::install(t); }

} // namespace ordo::level_zero
