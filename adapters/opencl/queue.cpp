// SPDX-License-Identifier: Apache-2.0
// urQueue*: in-order and out-of-order queues on cl_command_queue.
#include "ordo/queue_rules.hpp"
#include "queue.hpp"

#include <algorithm>
#include <utility>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "handle_entry_points.hpp"
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
  if (cl) ordo::opencl::cl.clReleaseCommandQueue(cl);
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
// queue of `c` on `d` that answers `flags`.
ur_result_t wrap_queue(ur_context_handle_t c, ur_device_handle_t d, cl_command_queue native, ur_queue_flags_t flags,
                       cl_command_queue_properties props, ur_queue_handle_t *out) {
  auto *q = new ur_queue_handle_t_();
  q->cl = native;
  q->ctx = c;
  q->dev = d;
  q->flags = flags;
  q->in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  q->profiling = props & CL_QUEUE_PROFILING_ENABLE;
  q->on_device = props & CL_QUEUE_ON_DEVICE;
  c->hold();
  {
    std::lock_guard<std::mutex> lock(c->queues_mutex);
    c->queues.push_back(q);
  }
  *out = q;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueCreate(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                     const ur_queue_properties_t *pProperties, ur_queue_handle_t *phQueue) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_HANDLE(hDevice);
  if (!hContext->has_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  ordo::queue_capabilities caps;
  caps.on_device = true; // OpenCL 2.0 device-side queues, under OpenCL's rules below
  if (ur_result_t r = ordo::check_queue_properties(pProperties, caps)) return r;
  ur_queue_flags_t flags = pProperties ? pProperties->flags : 0;
  // A queue on the device is out of order, and only a device queue can be the device's
  // default one (OpenCL's rules).
  const bool on_device = flags & UR_QUEUE_FLAG_ON_DEVICE;
  if ((flags & UR_QUEUE_FLAG_ON_DEVICE_DEFAULT) && !on_device) return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
  if (on_device && (!(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE) || hDevice->cl_major < 2))
    return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;

  // Out of order only where the device has it (an in-order queue stands in).
  ur_queue_flags_t native_flags = flags;
  if (!hDevice->out_of_order() && !on_device) native_flags &= ~UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  cl_command_queue_properties props = 0;
  for (auto [ur, cl_prop] : kFlagProperties)
    if (native_flags & ur) props |= cl_prop;

  cl_int err = CL_SUCCESS;
  cl_command_queue native = nullptr;
  if (hDevice->cl_major >= 2) {
    cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
    native = cl.clCreateCommandQueueWithProperties(hContext->cl, hDevice->cl, list, &err);
  } else if (cl.clCreateCommandQueue) {
    native = cl.clCreateCommandQueue(hContext->cl, hDevice->cl, props, &err);
  } else {
    err = CL_INVALID_OPERATION;
  }
  if (!native) return to_ur(err);
  return wrap_queue(hContext, hDevice, native, flags, props, phQueue);
}

// The user's last reference: finish the queue's work (its pending frees included)
// before letting go; the object itself lives on while events refer to it.
ur_result_t UR_APICALL urQueueRelease(ur_queue_handle_t hQueue) {
  ORDO_CHECK_HANDLE(hQueue);
  bool last_ = false;
  if (!hQueue->release_user(last_)) return ordo::invalid_of(hQueue);
  if (!last_) return UR_RESULT_SUCCESS;
  cl_int err = hQueue->on_device ? CL_SUCCESS : cl.clFinish(hQueue->cl);
  {
    // The queue's hold on its last free marker would keep the queue alive.
    std::lock_guard<std::mutex> lock(hQueue->submit_mutex);
    if (hQueue->last_free) event_unhold_deferred(hQueue->last_free);
    hQueue->last_free = nullptr;
    keep_event(hQueue->last_cl, nullptr);
    hQueue->track_last = false;
  }
  hQueue->ctx->pools->sync_point(); // its frees have completed
  hQueue->ctx->pools->queue_released(hQueue->identity);
  unhold(hQueue);
  reap_deferred_events();
  return to_ur(err);
}

ur_result_t UR_APICALL urQueueGetInfo(ur_queue_handle_t hQueue, ur_queue_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hQueue);
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  // DEVICE_DEFAULT and SIZE describe device queues; a host queue has neither.
  case UR_QUEUE_INFO_DEVICE_DEFAULT: {
    if (!hQueue->on_device) return UR_RESULT_ERROR_INVALID_QUEUE;
    cl_command_queue native_default = nullptr;
    ORDO_CL_CHECK(
        cl.clGetCommandQueueInfo(hQueue->cl, CL_QUEUE_DEVICE_DEFAULT, sizeof native_default, &native_default, nullptr));
    // The UR queue of the context over that cl_command_queue; null when it is not one
    // made through this adapter.
    ur_queue_handle_t found = nullptr;
    {
      std::lock_guard<std::mutex> lock(hQueue->ctx->queues_mutex);
      for (ur_queue_handle_t q : hQueue->ctx->queues)
        if (q->cl == native_default && q->count() > 0) found = q; // not one the user released
    }
    return w.value(found);
  }
  case UR_QUEUE_INFO_SIZE: {
    if (!hQueue->on_device) return UR_RESULT_ERROR_INVALID_QUEUE;
    cl_uint size = 0;
    ORDO_CL_CHECK(cl.clGetCommandQueueInfo(hQueue->cl, CL_QUEUE_SIZE, sizeof size, &size, nullptr));
    return w.value<uint32_t>(size);
  }
  default: // EMPTY (optional): OpenCL cannot tell without making every command report back.
    return ordo::ur_common::queue_info(hQueue, propName, propSize, pPropValue, pPropSizeRet,
                                       [](bool &) { return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION; });
  }
}

ur_result_t UR_APICALL urQueueCreateWithNativeHandle(ur_native_handle_t hNativeQueue, ur_context_handle_t hContext,
                                                     ur_device_handle_t hDevice,
                                                     const ur_queue_native_properties_t *pProperties,
                                                     ur_queue_handle_t *phQueue) {
  ORDO_CHECK_HANDLE(hContext);
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
    for (ur_device_handle_t d : hContext->devices)
      if (d->cl == dev_id) hDevice = d;
  }
  if (!hDevice || !hContext->has_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainCommandQueue(native);
  ur_queue_flags_t flags = 0;
  for (auto [ur, cl_prop] : kFlagProperties)
    if (props & cl_prop) flags |= ur;
  return wrap_queue(hContext, hDevice, native, flags, props, phQueue);
}

ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t hQueue) {
  ORDO_CHECK_HANDLE(hQueue);
  // Work on a device queue is its parent kernel's, which completes only after it.
  if (!hQueue->on_device) ORDO_CL_CHECK(cl.clFinish(hQueue->cl));
  // A synchronisation point: pools give back what they hold above their threshold.
  hQueue->ctx->pools->sync_point();
  reap_deferred_events();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urQueueFlush(ur_queue_handle_t hQueue) {
  ORDO_CHECK_HANDLE(hQueue);
  if (!hQueue->on_device) ORDO_CL_CHECK(cl.clFlush(hQueue->cl));
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_queue_entry_points(ur_dditable_t &t) {
  t.Queue.pfnCreate = urQueueCreate;
  t.Queue.pfnRetain = ur_common::retain_user_handle<ur_queue_handle_t_>;
  t.Queue.pfnRelease = urQueueRelease;
  t.Queue.pfnGetInfo = urQueueGetInfo;
  t.Queue.pfnGetNativeHandle = native_handle<ur_queue_handle_t_, ur_queue_native_desc_t *>;
  t.Queue.pfnCreateWithNativeHandle = urQueueCreateWithNativeHandle;
  t.Queue.pfnFinish = urQueueFinish;
  t.Queue.pfnFlush = urQueueFlush;
}

} // namespace ordo::opencl
