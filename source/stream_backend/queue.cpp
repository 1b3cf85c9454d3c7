// SPDX-License-Identifier: Apache-2.0
// Queues and the command helper every enqueue uses.
//
// An in-order queue is one stream. An out-of-order queue is a few streams: a
// command whose wait list holds an event of this queue goes to that event's
// stream (the dependency then costs nothing), any other command to the next
// stream in turn; events of other streams become stream waits on their events.
// Each stream is an in-order queue of its own for the stream-ordered layer, with
// a lock that serialises submission to it (common.hpp, Lane).
#include <cstdlib>

#include "backend.hpp"
#include "ordo/info.hpp"
#include "ordo/queue_rules.hpp"
#include "ur_common/queue.hpp"

namespace ordo::stream_backend {

namespace {
// Streams behind an out-of-order queue (ORDO_CUDA_OOO_STREAMS / ORDO_HIP_OOO_STREAMS
// override, 1..32).
size_t ooo_stream_count() {
  static size_t n = [] {
    const char *env = std::getenv(info().ooo_streams_env);
    long v = env ? std::strtol(env, nullptr, 10) : 4;
    return static_cast<size_t>(v < 1 ? 1 : v > 32 ? 32 : v);
  }();
  return n;
}

// Stream-ordered allocs and frees record no driver event (backend.hpp, Lane): what
// follows them on their stream needs nothing from the driver, and a free's event is
// mostly the pool's, used only there. A profiling queue records as for any command.
bool defers_event(ur_command_t type) {
  switch (type) {
  case UR_COMMAND_ENQUEUE_USM_FREE_EXP:
  case UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP:
  case UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP:
  case UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP: return true;
  default: return false;
  }
}
} // namespace

void queue_hold(Queue *q) { q->hold(); }

void queue_drop(Queue *q) { ordo::ur_common::drop_queue(q); }

uint32_t Queue::pick_lane(uint32_t n, const ur_event_handle_t *waits) {
  return lane_for<Event>(n, waits, [](const Event *e) { return e->has_work(); });
}

ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *list) {
  if ((n > 0) != (list != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  for (uint32_t i = 0; i < n; ++i) {
    // A foreign adapter's event (another first word) is refused too (ordo/object.hpp).
    if (!is_a<Event>(list[i])) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  }
  return UR_RESULT_SUCCESS;
}

// ---- Command ------------------------------------------------------------------------

Command::Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out_event,
                 bool timed, bool all_lanes, ordo::ur_common::lane_hint hint)
    : queue_(q), type_(type), out_(out_event), all_lanes_(all_lanes && q->lanes.size() > 1) {
  // A stream-ordered alloc or free often needs no driver call at all (a block from the
  // lane's cache, a deferred event): it makes the context current only before one.
  // Its entry point (ur_common/async_alloc.hpp, the only maker of these commands)
  // checked the wait list already, before any pool lookup.
  const bool stream_ordered = defers_event(type);
  if (!stream_ordered && (status_ = check_wait_list(n, waits)) != UR_RESULT_SUCCESS) return;
  if (!stream_ordered && (status_ = make_current()) != UR_RESULT_SUCCESS) return;
  const size_t lanes = q->lanes.size();
  lane_ = hint.lane < lanes ? hint.lane : lanes == 1 ? 0 : q->pick_lane(n, waits);
  stream_ = q->lanes[lane_]->stream;
  locked_ = q->lock_lanes(lane_, all_lanes_);
  for (uint32_t i = 0; i < n; ++i) {
    auto *e = reinterpret_cast<Event *>(waits[i]);
    add_pred(e);
    if (!e->has_work()) continue;
    if (e->queue == q && e->lane == lane_) continue; // same stream: already ordered
    if ((status_ = make_current()) != UR_RESULT_SUCCESS) return;
    event_t ev = nullptr;
    stream_backend::status r = wait_event_of(e, &ev);
    if (!r && ev) r = drv::stream_wait_event(stream(), ev);
    if (r) {
      status_ = to_ur(r);
      return;
    }
  }
  if (out_) {
    const bool timed_event = q->profiling || timed;
    const bool deferred = !timed_event && defers_event(type_);
    // A recorded event may come new from the driver, in the current context.
    if (!deferred && (status_ = make_current()) != UR_RESULT_SUCCESS) return;
    status_ = event_create(q, type_, timed_event, &event_, deferred);
    if (status_ != UR_RESULT_SUCCESS) return;
    event_->stream = stream_;
    event_->lane = lane_;
    if (event_->start) {
      if ((status_ = make_current()) != UR_RESULT_SUCCESS) return;
      if (stream_backend::status r = drv::event_record(event_->start, stream())) status_ = to_ur(r);
    }
  }
}

Command::~Command() {
  if (locked_) unlock();
  if (event_) event_destroy(event_);
}

ur_result_t Command::make_current() {
  if (current_) return UR_RESULT_SUCCESS;
  if (stream_backend::status r = queue_->dev->make_current()) return to_ur(r);
  current_ = true;
  return UR_RESULT_SUCCESS;
}

void Command::flush_pending() {
  flushed_ = true;
  ++queue_->lanes[lane_]->work_epoch; // work or a wait follows: later frees need a new place
  if (stream_backend::status r = record_pending(*queue_->lanes[lane_], queue_->dev))
    ORDO_LOG(logger(), warning, "a late event record failed: %s", drv::error_text(r).c_str());
}

status record_pending(Lane &l, Device *dev) {
  if (!l.unrecorded.load(std::memory_order_acquire)) return status{};
  std::lock_guard<std::mutex> lock(l.mark_mutex);
  Event *e = l.unrecorded.load(std::memory_order_acquire); // published by finish() under the lane's lock, not ours
  if (!e) return status{};
  // Cleared only after the record: whoever reads null may use the driver event.
  status r{err::invalid_context, 0};
  {
    CurrentFor current(dev);
    if (current.ok())
      r = drv::event_record(e->done, l.stream);
    else if (dev->context_error)
      r = dev->context_error;
  }
  l.unrecorded.store(nullptr, std::memory_order_release);
  return r;
}

void Command::unlock() {
  queue_->unlock_lanes(lane_, locked_);
  locked_ = 0;
}

const void *Command::identity() const { return queue_->lanes[lane_]->identity; }

// Only nodes of this context's ordering knowledge mean anything to it.
void Command::add_pred(const Event *e) {
  if (e->order_node && e->ctx == queue_->ctx && npreds_ < kMaxPreds) preds_[npreds_++] = e->order_node;
}

bool Command::wait_for(Event *e) {
  if (!e->has_work()) return true; // nothing can be pending behind it
  if (!(e->queue == queue_ && e->lane == lane_)) {
    // Another stream: its deferred free gets a driver event now (the other stream's
    // mark lock is a leaf, so taking it under this stream's lock and the pool's is safe).
    if (make_current() != UR_RESULT_SUCCESS) return false;
    event_t ev = nullptr;
    if (wait_event_of(e, &ev)) return false;
    if (ev && drv::stream_wait_event(stream(), ev)) return false;
  }
  add_pred(e);
  return true;
}

ur_result_t Command::join_other_lanes() {
  Device *dev = queue_->dev;
  for (size_t i = 0; i < queue_->lanes.size(); ++i) {
    if (i == lane_) continue;
    Lane &l = *queue_->lanes[i]; // locked by this command (all_lanes)
    event_t marker = nullptr;
    ORDO_DRV(dev->events.get(false, &marker));
    stream_backend::status r = drv::event_record(marker, l.stream);
    if (!r) r = drv::stream_wait_event(stream(), marker);
    // The wait has captured the record, so the event can serve again at once.
    dev->events.put(marker, false);
    ORDO_DRV(r);
    if (l.last_node && npreds_ < kMaxPreds) preds_[npreds_++] = l.last_node;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t Command::order_other_lanes() {
  if (queue_->lanes.size() == 1) return UR_RESULT_SUCCESS;
  Device *dev = queue_->dev;
  event_t marker = nullptr;
  ORDO_DRV(dev->events.get(false, &marker));
  stream_backend::status r = drv::event_record(marker, stream());
  for (size_t i = 0; i < queue_->lanes.size(); ++i) {
    if (r || i == lane_) continue;
    // The other stream's put-off record first: it must not wait for this command.
    r = record_pending(*queue_->lanes[i], dev);
    ++queue_->lanes[i]->work_epoch;
    if (!r) r = drv::stream_wait_event(queue_->lanes[i]->stream, marker);
  }
  dev->events.put(marker, false);
  ORDO_DRV(r);
  barrier_ = true;
  return UR_RESULT_SUCCESS;
}

ur_result_t Command::finish(ur_result_t result, bool keep_lock) {
  if (result != UR_RESULT_SUCCESS) return result;
  Lane &lane = *queue_->lanes[lane_];
  if (event_) {
    if (event_->deferred) {
      // Its number on the stream, published after its stream operations were issued.
      event_->seq = lane.issued.load(std::memory_order_relaxed) + 1;
      lane.issued.store(event_->seq, std::memory_order_release);
    } else {
      if (ur_result_t r = make_current()) return r;
      stream_t s = stream(); // an earlier put-off record first
      if (queue_->streams_private && !queue_->profiling && !event_->start) {
        // Recorded before the stream's next work or when someone asks (Lane::unrecorded):
        // nothing goes onto the stream between the command and its record either way.
        event_->late = true;
        lane.unrecorded.store(event_, std::memory_order_release);
      } else {
        ORDO_DRV(drv::event_record(event_->done, s));
      }
      event_->seq = lane.issued.load(std::memory_order_relaxed);
    }
  }
  // The command's node: after the stream's previous command (in order) and after
  // its predecessors. After a barrier each other stream's next command follows it.
  // A command with no event, no predecessor and no barrier gets no node: nothing can
  // name it, and the stream's next command follows its previous one all the same.
  if (!event_ && npreds_ == 0 && !barrier_) {
    if (!keep_lock) unlock();
    return UR_RESULT_SUCCESS;
  }
  ordo::stream_ordered::order_graph &order = queue_->ctx->pools->order();
  const uint64_t node = order.record(lane.identity, true, false, preds_, npreds_, npreds_ > 0);
  lane.last_node = node;
  if (barrier_)
    for (size_t i = 0; i < queue_->lanes.size(); ++i)
      if (i != lane_)
        queue_->lanes[i]->last_node = order.record(queue_->lanes[i]->identity, true, false, &node, 1, true);
  if (event_) {
    event_->order_node = node;
    *out_ = reinterpret_cast<ur_event_handle_t>(event_);
    event_ = nullptr;
  }
  if (!keep_lock) unlock();
  return UR_RESULT_SUCCESS;
}

// ---- entry points ------------------------------------------------------------------

namespace {

// What ur_common's urQueue* entry points leave to the backend (ur_common/queue.hpp).
// Device-side enqueue exists on neither CUDA nor HIP.
struct queue_hooks {
  using Context = stream_backend::Context;
  using Device = stream_backend::Device;
  using Queue = stream_backend::Queue;

  // One driver stream per lane.
  static ur_result_t create(Context *ctx, Device *dev, ur_queue_flags_t flags, ur_queue_handle_t *phQueue) {
    ORDO_DRV(dev->make_current());
    auto *q = ordo::ur_common::new_queue<Queue>(ctx, dev, flags);
    ur_result_t result = UR_RESULT_SUCCESS;
    auto add_lane = [q](stream_t s) {
      q->lanes.push_back(std::make_unique<Lane>());
      q->lanes.back()->stream = s;
      q->lanes.back()->identity = ordo::stream_ordered::new_queue_identity();
    };
    if (flags & UR_QUEUE_FLAG_USE_DEFAULT_STREAM) {
      add_lane(drv::default_stream());
      q->owns_streams = false;
      q->in_order = true;
    } else {
      int least = 0, greatest = 0, priority = 0;
      if (flags & (UR_QUEUE_FLAG_PRIORITY_LOW | UR_QUEUE_FLAG_PRIORITY_HIGH)) {
        drv::stream_priority_range(&least, &greatest);
        priority = (flags & UR_QUEUE_FLAG_PRIORITY_LOW) ? least : greatest;
      }
      const bool sync_with_default = (flags & UR_QUEUE_FLAG_SYNC_WITH_DEFAULT_STREAM) != 0;
      q->streams_private = !sync_with_default;
      size_t n = q->in_order ? 1 : ooo_stream_count();
      for (size_t i = 0; i < n && result == UR_RESULT_SUCCESS; ++i) {
        stream_t s = nullptr;
        result = to_ur(drv::stream_create(&s, sync_with_default, priority));
        if (result == UR_RESULT_SUCCESS) add_lane(s);
      }
    }
    if (result == UR_RESULT_SUCCESS && q->profiling) {
      // Fix the device clock now rather than on the first timed command.
      event_t base = nullptr;
      uint64_t base_ns = 0;
      result = to_ur(dev->time_base(&base, &base_ns));
    }
    if (result != UR_RESULT_SUCCESS) {
      if (q->owns_streams)
        for (auto &l : q->lanes) drv::stream_destroy(l->stream);
      delete q;
      return result;
    }
    context_hold(ctx);
    *phQueue = reinterpret_cast<ur_queue_handle_t>(q);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t release_last(Queue *q) {
    // The last reference: finish the work (pending frees included), then let the
    // streams go. Events of the queue keep the object, not the streams.
    q->dev->make_current();
    ur_result_t result = UR_RESULT_SUCCESS;
    for (auto &l : q->lanes) {
      if (l->free_event) event_release_internal(l->free_event); // it holds the queue
      l->free_event = nullptr;
      stream_backend::status r = drv::stream_synchronize(l->stream);
      if (r && result == UR_RESULT_SUCCESS) result = to_ur(r);
      // Its deferred commands are complete, and the stream goes: their events (which
      // keep the queue object, lanes included) answer from the count from now on.
      std::lock_guard<std::mutex> lock(l->mark_mutex);
      lane_complete_to(*l, l->issued.load(std::memory_order_acquire));
      // A put-off record is made on the idle stream: its event reads complete.
      if (Event *e = l->unrecorded.load(std::memory_order_acquire)) {
        stream_backend::status r = drv::event_record(e->done, l->stream);
        if (r && result == UR_RESULT_SUCCESS) result = to_ur(r);
        l->unrecorded.store(nullptr, std::memory_order_release);
      }
      l->gone = true;
      if (l->mark) mark_drop(l->mark);
      l->mark = nullptr;
    }
    // Its frees have completed: the pools let their events go and forget the
    // streams' order (identities are never reused). The queue still holds the context.
    ordo::stream_ordered::context_pools &pools = *q->ctx->pools;
    for (auto &l : q->lanes) pools.queue_released(l->identity);
    pools.collect();
    for (auto &l : q->lanes) {
      if (q->owns_streams) drv::stream_destroy(l->stream);
      l->stream = nullptr;
    }
    queue_drop(q);
    return result;
  }

  static ur_result_t is_empty(Queue *q, bool &empty) {
    ORDO_DRV(q->dev->make_current());
    for (auto &l : q->lanes) {
      stream_backend::status r = drv::stream_query(l->stream);
      if (r.kind == err::not_ready)
        empty = false;
      else if (r)
        return to_ur(r);
    }
    return UR_RESULT_SUCCESS;
  }

  // The first stream. The caller may submit to it from now on, so no event of the
  // queue is recorded late any more (Lane::unrecorded).
  static ur_native_handle_t native_handle(Queue *q, ur_queue_native_desc_t *) {
    if (q->lanes.empty()) return 0;
    const size_t held = q->lock_lanes(0, true);
    q->streams_private = false;
    for (auto &l : q->lanes)
      if (stream_backend::status r = record_pending(*l, q->dev))
        ORDO_LOG(logger(), warning, "a late event record failed: %s", drv::error_text(r).c_str());
    q->unlock_lanes(0, held);
    return reinterpret_cast<ur_native_handle_t>(q->lanes[0]->stream);
  }

  // A queue over the caller's stream: in order, one lane; the stream is destroyed with
  // the queue only when the caller hands it over (isNativeHandleOwned).
  static ur_result_t create_with_native_handle(Context *ctx, ur_native_handle_t hNativeQueue, Device *dev,
                                               const ur_queue_native_properties_t *pProperties,
                                               ur_queue_handle_t *phQueue) {
    if (!dev && ctx->devices.size() == 1) dev = ctx->devices[0];
    if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!dev) return UR_RESULT_ERROR_INVALID_NULL_HANDLE; // which device's stream: several in the context
    if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    auto *q = new Queue();
    q->ctx = ctx;
    q->dev = dev;
    q->owns_streams = pProperties && pProperties->isNativeHandleOwned;
    q->lanes.push_back(std::make_unique<Lane>());
    q->lanes.back()->stream = reinterpret_cast<stream_t>(hNativeQueue); // null: the default stream
    q->lanes.back()->identity = ordo::stream_ordered::new_queue_identity();
    context_hold(ctx);
    *phQueue = reinterpret_cast<ur_queue_handle_t>(q);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t finish(Queue *q) {
    ORDO_DRV(q->dev->make_current());
    for (auto &l : q->lanes) {
      // Numbered before the wait: everything up to here is in the stream, so complete after it.
      const uint64_t covers = l->issued.load(std::memory_order_acquire);
      ORDO_DRV(drv::stream_synchronize(l->stream));
      lane_complete_to(*l, covers);
    }
    return UR_RESULT_SUCCESS;
  }
};

} // namespace

void install_queue_entry_points(ur_dditable_t &t) { ordo::ur_common::queue_entry_points<queue_hooks>::install(t); }

} // namespace ordo::stream_backend
