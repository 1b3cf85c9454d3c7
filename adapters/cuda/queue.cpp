// Queues and the command helper every enqueue uses.
//
// An in-order queue is one stream. An out-of-order queue is a few streams: a
// command whose wait list holds an event of this queue goes to that event's
// stream (the dependency then costs nothing), any other command to the next
// stream in turn; events of other streams become cuStreamWaitEvent calls.
#include <cstdlib>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::cuda {

namespace {
// Streams behind an out-of-order queue (ORDO_CUDA_OOO_STREAMS overrides, 1..32).
size_t ooo_stream_count() {
  static size_t n = [] {
    const char *env = std::getenv("ORDO_CUDA_OOO_STREAMS");
    long v = env ? std::strtol(env, nullptr, 10) : 4;
    return static_cast<size_t>(v < 1 ? 1 : v > 32 ? 32 : v);
  }();
  return n;
}
} // namespace

void queue_hold(Queue *q) { q->life.hold(); }

void queue_drop(Queue *q) {
  if (!q->life.drop()) return;
  Context *ctx = q->ctx;
  q->tag = Tag::dead;
  delete q;
  context_drop(ctx);
}

CUstream Queue::pick_stream(uint32_t n, const ur_event_handle_t *waits) {
  if (streams.size() == 1) return streams[0];
  for (uint32_t i = 0; i < n; ++i) {
    auto *e = reinterpret_cast<Event *>(waits[i]);
    if (e->queue == this && e->stream) return e->stream;
  }
  uint32_t k = next_stream.fetch_add(1, std::memory_order_relaxed);
  return streams[k % streams.size()];
}

ur_result_t Queue::join_all_into(CUstream stream) {
  for (CUstream s : streams) {
    if (s == stream) continue;
    CUevent marker = nullptr;
    ORDO_CU(dev->events.get(false, &marker));
    CUresult r = drv().cuEventRecord(marker, s);
    if (r == CUDA_SUCCESS) r = drv().cuStreamWaitEvent(stream, marker, 0);
    // The wait has captured the record, so the event can serve again at once.
    dev->events.put(marker, false);
    ORDO_CU(r);
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *list) {
  if ((n > 0) != (list != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  for (uint32_t i = 0; i < n; ++i) {
    auto *e = reinterpret_cast<const Event *>(list[i]);
    if (!e || e->tag != Tag::event) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  }
  return UR_RESULT_SUCCESS;
}

// ---- Command ------------------------------------------------------------------------

Command::Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits,
                 ur_event_handle_t *out_event, bool timed)
    : queue_(q), type_(type), out_(out_event) {
  status_ = check_wait_list(n, waits);
  if (status_ != UR_RESULT_SUCCESS) return;
  if (CUresult r = q->dev->make_current()) {
    status_ = map_error(r);
    return;
  }
  stream_ = q->pick_stream(n, waits);
  for (uint32_t i = 0; i < n; ++i) {
    auto *e = reinterpret_cast<Event *>(waits[i]);
    if (!e->done) continue;
    // Same stream: already ordered.
    if (e->queue == q && e->stream == stream_) continue;
    if (CUresult r = drv().cuStreamWaitEvent(stream_, e->done, 0)) {
      status_ = map_error(r);
      return;
    }
  }
  if (out_) {
    status_ = event_create(q, type_, q->profiling || timed, &event_);
    if (status_ != UR_RESULT_SUCCESS) return;
    event_->stream = stream_;
    if (event_->start) {
      if (CUresult r = drv().cuEventRecord(event_->start, stream_)) status_ = map_error(r);
    }
  }
}

Command::~Command() {
  if (event_) event_destroy(event_);
}

ur_result_t Command::finish(ur_result_t result) {
  if (result != UR_RESULT_SUCCESS) return result;
  if (event_) {
    if (CUresult r = drv().cuEventRecord(event_->done, stream_)) return map_error(r);
    *out_ = reinterpret_cast<ur_event_handle_t>(event_);
    event_ = nullptr;
  }
  return UR_RESULT_SUCCESS;
}

// ---- entry points ------------------------------------------------------------------

ur_result_t UR_APICALL urQueueCreate(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                     const ur_queue_properties_t *pProperties,
                                     ur_queue_handle_t *phQueue) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  ur_queue_flags_t flags = pProperties ? pProperties->flags : 0;
  if (flags & UR_QUEUE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if ((flags & UR_QUEUE_FLAG_PRIORITY_HIGH) && (flags & UR_QUEUE_FLAG_PRIORITY_LOW))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  if ((flags & UR_QUEUE_FLAG_SUBMISSION_BATCHED) && (flags & UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  // Device-side enqueue does not exist on CUDA.
  if (flags & (UR_QUEUE_FLAG_ON_DEVICE | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  for (auto *ext = pProperties ? static_cast<const ur_base_properties_t *>(pProperties->pNext) : nullptr;
       ext; ext = static_cast<const ur_base_properties_t *>(ext->pNext)) {
    if (ext->stype == UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES &&
        reinterpret_cast<const ur_queue_index_properties_t *>(ext)->computeIndex != 0)
      return UR_RESULT_ERROR_INVALID_VALUE;
  }
  ORDO_CU(dev->make_current());

  auto *q = new Queue();
  static std::atomic<uintptr_t> next_stream_id{1};
  q->stream_id_base = next_stream_id.fetch_add(64, std::memory_order_relaxed); // 32 streams at most
  q->ctx = ctx;
  q->dev = dev;
  q->flags = flags;
  q->in_order = !(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  q->profiling = (flags & UR_QUEUE_FLAG_PROFILING_ENABLE) != 0;
  ur_result_t result = UR_RESULT_SUCCESS;
  if (flags & UR_QUEUE_FLAG_USE_DEFAULT_STREAM) {
    q->streams.push_back(CU_STREAM_LEGACY);
    q->owns_streams = false;
    q->in_order = true;
  } else {
    int least = 0, greatest = 0, priority = 0;
    if (flags & (UR_QUEUE_FLAG_PRIORITY_LOW | UR_QUEUE_FLAG_PRIORITY_HIGH)) {
      drv().cuCtxGetStreamPriorityRange(&least, &greatest);
      priority = (flags & UR_QUEUE_FLAG_PRIORITY_LOW) ? least : greatest;
    }
    unsigned stream_flags =
        (flags & UR_QUEUE_FLAG_SYNC_WITH_DEFAULT_STREAM) ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
    size_t n = q->in_order ? 1 : ooo_stream_count();
    for (size_t i = 0; i < n && result == UR_RESULT_SUCCESS; ++i) {
      CUstream s = nullptr;
      result = check(drv().cuStreamCreateWithPriority(&s, stream_flags, priority));
      if (result == UR_RESULT_SUCCESS) q->streams.push_back(s);
    }
  }
  if (result == UR_RESULT_SUCCESS && q->profiling) {
    // Fix the device clock now rather than on the first timed command.
    CUevent base = nullptr;
    uint64_t base_ns = 0;
    result = check(dev->time_base(&base, &base_ns));
  }
  if (result != UR_RESULT_SUCCESS) {
    if (q->owns_streams)
      for (CUstream s : q->streams) drv().cuStreamDestroy(s);
    delete q;
    return result;
  }
  context_hold(ctx);
  *phQueue = reinterpret_cast<ur_queue_handle_t>(q);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueRetain(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  q->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueRelease(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!q->release()) return UR_RESULT_SUCCESS;
  // The last reference: finish the work (pending frees included), then let the
  // streams go. Events of the queue keep the object, not the streams.
  q->dev->make_current();
  ur_result_t result = UR_RESULT_SUCCESS;
  for (CUstream s : q->streams) {
    CUresult r = drv().cuStreamSynchronize(s);
    if (r != CUDA_SUCCESS && result == UR_RESULT_SUCCESS) result = map_error(r);
    if (q->owns_streams) drv().cuStreamDestroy(s);
  }
  q->streams.clear();
  queue_drop(q);
  return result;
}

ur_result_t UR_APICALL urQueueGetInfo(ur_queue_handle_t hQueue, ur_queue_info_t propName,
                                      size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_QUEUE_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(q->ctx));
  case UR_QUEUE_INFO_DEVICE: return out.value(reinterpret_cast<ur_device_handle_t>(q->dev));
  case UR_QUEUE_INFO_FLAGS: return out.value(q->flags);
  case UR_QUEUE_INFO_REFERENCE_COUNT: return out.value(q->count());
  case UR_QUEUE_INFO_EMPTY: {
    ORDO_CU(q->dev->make_current());
    bool empty = true;
    for (CUstream s : q->streams) {
      CUresult r = drv().cuStreamQuery(s);
      if (r == CUDA_ERROR_NOT_READY) empty = false;
      else if (r != CUDA_SUCCESS) return map_error(r);
    }
    return out.boolean(empty);
  }
  case UR_QUEUE_INFO_DEVICE_DEFAULT:
  case UR_QUEUE_INFO_SIZE: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; // device-side queues
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urQueueGetNativeHandle(ur_queue_handle_t hQueue, ur_queue_native_desc_t *pDesc,
                                              ur_native_handle_t *phNativeQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  (void)pDesc;
  if (!phNativeQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // An out-of-order queue has several streams; the first stands for the queue.
  *phNativeQueue = reinterpret_cast<ur_native_handle_t>(q->streams.empty() ? nullptr : q->streams[0]);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  ORDO_CU(q->dev->make_current());
  for (CUstream s : q->streams) ORDO_CU(drv().cuStreamSynchronize(s));
  // A synchronisation point: user pools give back memory above their threshold.
  release_cores_above_threshold(q->ctx);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueFlush(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  (void)q; // streams submit as they are fed
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::cuda
