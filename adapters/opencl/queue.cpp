// SPDX-License-Identifier: Apache-2.0
// urQueue*: in-order and out-of-order queues on cl_command_queue.
#include "ordo/queue_rules.hpp"
#include "queue.hpp"

#include <algorithm>
#include <utility>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "tables.hpp"
#include "ur_common/queue.hpp"

ur_queue_handle_t_::ur_queue_handle_t_() : identity(ordo::stream_ordered::new_queue_identity()) {}

ur_queue_handle_t_::~ur_queue_handle_t_() {
  using namespace ordo::opencl;
  keep_event(last_cl, nullptr);
  keep_event(last_barrier_cl, nullptr);
  if (ctx) {
    std::lock_guard<std::mutex> lock(ctx->queues_mutex);
    auto &qs = ctx->queues;
    qs.erase(std::remove(qs.begin(), qs.end(), this), qs.end());
  }
  if (cl) ordo::opencl::release_queue(cl);
  if (ctx) context_unhold(ctx);
}

namespace ordo::opencl {

uint64_t record_command(ur_queue_handle_t q, bool barrier, const ClWaitList &waits,
                        const std::vector<ur_event_handle_t> *extra, uint64_t *seq) {
  constexpr size_t kMax = 16; // more only loses reuse
  uint64_t nodes[kMax];
  size_t n = 0;
  auto add = [&](ur_event_handle_t e) {
    if (n < kMax && e->order_node && e->ctx == q->ctx) nodes[n++] = e->order_node;
  };
  for (uint32_t i = 0; i < waits.ur_count(); ++i) add(waits.ur_list()[i]);
  if (extra)
    for (ur_event_handle_t e : *extra) add(e);
  const uint64_t at = q->commands.fetch_add(1, std::memory_order_relaxed) + 1;
  if (barrier) q->last_barrier_at = at;
  if (seq) *seq = at;
  const bool has_wait_list = waits.ur_count() > 0 || (extra && !extra->empty());
  return q->ctx->pools->order().record(q->identity, q->in_order, barrier, nodes, n, has_wait_list);
}

cl_int finish_known(ur_queue_handle_t q) {
  if (q->on_device) return CL_SUCCESS; // its work is its parent kernel's
  // A command counts once it is in the cl_command_queue, so the marker a finish
  // enqueues after reading `at` follows every command up to it.
  const uint64_t at = q->commands.load(std::memory_order_acquire);
  if (!q->native_shared.load(std::memory_order_relaxed) && q->finished_at.load(std::memory_order_acquire) >= at)
    return CL_SUCCESS;
  bool clean = true;
  const cl_int err = finish_queue(q->cl, &q->submit_mutex, &clean);
  // After a failed command the marker may have ended before the queue's other commands
  // (Intel's CPU runtime, out-of-order): nothing is known complete then.
  if (err != CL_SUCCESS || !clean) return err;
  uint64_t seen = q->finished_at.load(std::memory_order_relaxed);
  while (seen < at && !q->finished_at.compare_exchange_weak(seen, at, std::memory_order_release)) {
  }
  return CL_SUCCESS;
}

void note_last(ur_queue_handle_t q, cl_event ev, uint64_t seq) {
  q->track_last = q->track_left != 0 && --q->track_left != 0; // else no plain free for a while: stop
  keep_event(q->last_cl, q->track_last ? ev : nullptr);
  q->last_cl_at = seq;
}

cl_int enqueue_marker(ur_queue_handle_t q, cl_uint n, const cl_event *waits, cl_event *ev) {
  if (q->in_order || n == 0 || !q->last_barrier_cl) return cl.clEnqueueMarkerWithWaitList(q->cl, n, waits, ev);
  std::vector<cl_event> list(waits, waits + n);
  list.push_back(q->last_barrier_cl);
  return cl.clEnqueueMarkerWithWaitList(q->cl, n + 1, list.data(), ev);
}

void keep_event(cl_event &slot, cl_event ev) {
  if (slot == ev) return;
  if (ev) cl.clRetainEvent(ev);
  if (slot) cl.clReleaseEvent(slot);
  slot = ev;
}

void track_newest(ur_queue_handle_t q) {
  q->track_last = true;
  q->track_left = ur_queue_handle_t_::kTrackWindow;
}

namespace {

// The queue flags that are OpenCL queue properties, both ways.
constexpr std::pair<ur_queue_flags_t, cl_command_queue_properties> kFlagProperties[] = {
    {UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE},
    {UR_QUEUE_FLAG_PROFILING_ENABLE, CL_QUEUE_PROFILING_ENABLE},
    {UR_QUEUE_FLAG_ON_DEVICE, CL_QUEUE_ON_DEVICE},
    {UR_QUEUE_FLAG_ON_DEVICE_DEFAULT, CL_QUEUE_ON_DEVICE_DEFAULT},
};

// Wraps `native` (the caller's reference), whose OpenCL properties are `props`, as a
// queue of `c` on `d` that answers `flags`; `native_shared`: the user has the native queue.
ur_result_t wrap_queue(ur_context_handle_t c, ur_device_handle_t d, cl_command_queue native, ur_queue_flags_t flags,
                       cl_command_queue_properties props, ur_queue_handle_t *out, bool native_shared = false) {
  auto *q = ur_common::new_queue<ur_queue_handle_t_>(c, d, flags);
  q->cl = native;
  q->native_shared.store(native_shared, std::memory_order_relaxed); // before the context lists it
  q->in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);  // not flags: an in-order queue may stand in
  q->on_device = props & CL_QUEUE_ON_DEVICE;
  c->hold();
  {
    std::lock_guard<std::mutex> lock(c->queues_mutex);
    c->queues.push_back(q);
  }
  *out = q;
  return UR_RESULT_SUCCESS;
}

// The queues' hooks of ur_common/queue.hpp: urQueue* over cl_command_queue.
struct queue_hooks {
  using Context = ur_context_handle_t_;
  using Device = ur_device_handle_t_;
  using Queue = ur_queue_handle_t_;

  static ordo::queue_capabilities capabilities() {
    ordo::queue_capabilities caps;
    caps.on_device = true; // OpenCL 2.0 device-side queues, under OpenCL's rules in create
    return caps;
  }

  static ur_result_t create(Context *c, Device *d, ur_queue_flags_t flags, ur_queue_handle_t *phQueue) {
    // A queue on the device is out of order, and only a device queue can be the device's
    // default one (OpenCL's rules).
    const bool on_device = flags & UR_QUEUE_FLAG_ON_DEVICE;
    if ((flags & UR_QUEUE_FLAG_ON_DEVICE_DEFAULT) && !on_device) return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
    if (on_device && (!(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE) || d->cl_major < 2))
      return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;

    // Out of order only where the device has it (an in-order queue stands in).
    ur_queue_flags_t native_flags = flags;
    if (!d->out_of_order() && !on_device) native_flags &= ~UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    cl_command_queue_properties props = 0;
    for (auto [ur, cl_prop] : kFlagProperties)
      if (native_flags & ur) props |= cl_prop;

    cl_int err = CL_SUCCESS;
    cl_command_queue native = nullptr;
    if (d->cl_major >= 2) {
      cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
      native = cl.clCreateCommandQueueWithProperties(c->cl, d->cl, list, &err);
    } else if (cl.clCreateCommandQueue) {
      native = cl.clCreateCommandQueue(c->cl, d->cl, props, &err);
    } else {
      err = CL_INVALID_OPERATION;
    }
    if (!native) return to_ur(err);
    return wrap_queue(c, d, native, flags, props, phQueue);
  }

  // The user's last reference: finish the queue's work (its pending frees included)
  // before letting go; the object itself lives on while events refer to it.
  static ur_result_t release_last(Queue *q) {
    cl_int err = finish_known(q);
    {
      // The queue's hold on its last free marker would keep the queue alive.
      std::lock_guard<std::mutex> lock(q->submit_mutex);
      if (q->last_free) event_unhold_deferred(q->last_free);
      q->last_free = nullptr;
      keep_event(q->last_cl, nullptr);
      q->track_last = false;
    }
    q->ctx->pools->sync_point(); // its frees have completed
    q->ctx->pools->queue_released(q->identity);
    unhold(q);
    reap_deferred_events();
    return to_ur(err);
  }

  // DEVICE_DEFAULT and SIZE describe device queues; a host queue has neither.
  static ur_result_t device_queue_info(Queue *q, ur_queue_info_t propName, InfoWriter &w) {
    if (!q->on_device) return UR_RESULT_ERROR_INVALID_QUEUE;
    if (propName == UR_QUEUE_INFO_SIZE) {
      cl_uint size = 0;
      ORDO_CL_CHECK(cl.clGetCommandQueueInfo(q->cl, CL_QUEUE_SIZE, sizeof size, &size, nullptr));
      return w.value<uint32_t>(size);
    }
    cl_command_queue native_default = nullptr;
    ORDO_CL_CHECK(
        cl.clGetCommandQueueInfo(q->cl, CL_QUEUE_DEVICE_DEFAULT, sizeof native_default, &native_default, nullptr));
    // The UR queue of the context over that cl_command_queue; null when it is not one
    // made through this adapter.
    ur_queue_handle_t found = nullptr;
    {
      std::lock_guard<std::mutex> lock(q->ctx->queues_mutex);
      for (ur_queue_handle_t other : q->ctx->queues)
        if (other->cl == native_default && other->count() > 0) found = other; // not one the user released
    }
    return w.value(found);
  }

  // EMPTY (optional): OpenCL cannot tell without making every command report back.
  static ur_result_t is_empty(Queue *, bool &) { return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; }

  static ur_native_handle_t native_handle(Queue *q, ur_queue_native_desc_t *) {
    q->native_shared.store(true, std::memory_order_relaxed);
    return reinterpret_cast<ur_native_handle_t>(q->cl);
  }

  // The device is the native queue's: read it before hDevice is checked against it.
  static ur_result_t from_native(Context *c, ur_native_handle_t hNativeQueue, ur_device_handle_t hDevice,
                                 const ur_queue_native_properties_t *pProperties, ur_queue_handle_t *phQueue) {
    cl_command_queue native = reinterpret_cast<cl_command_queue>(hNativeQueue);
    if (!native) return UR_RESULT_ERROR_INVALID_QUEUE;
    cl_device_id dev_id = nullptr;
    cl_command_queue_properties props = 0;
    ORDO_CL_CHECK(cl.clGetCommandQueueInfo(native, CL_QUEUE_DEVICE, sizeof dev_id, &dev_id, nullptr));
    ORDO_CL_CHECK(cl.clGetCommandQueueInfo(native, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr));
    if (hDevice) {
      ORDO_CHECK_HANDLE(hDevice);
      if (hDevice->cl != dev_id) return UR_RESULT_ERROR_INVALID_DEVICE;
    } else {
      for (ur_device_handle_t d : c->devices)
        if (d->cl == dev_id) hDevice = d;
    }
    if (!hDevice || !c->has_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainCommandQueue(native);
    ur_queue_flags_t flags = 0;
    for (auto [ur, cl_prop] : kFlagProperties)
      if (props & cl_prop) flags |= ur;
    return wrap_queue(c, hDevice, native, flags, props, phQueue, /*native_shared=*/true);
  }

  static ur_result_t finish(Queue *q) { return to_ur(finish_known(q)); }
  static ur_result_t flush(Queue *q) { return q->on_device ? UR_RESULT_SUCCESS : to_ur(cl.clFlush(q->cl)); }
  static void reap() { reap_deferred_events(); }
};

} // namespace

void install_queue_entry_points(ur_dditable_t &t) { ur_common::queue_entry_points<queue_hooks>::install(t); }

} // namespace ordo::opencl
