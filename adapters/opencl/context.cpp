// SPDX-License-Identifier: Apache-2.0
// Contexts: one cl_context over devices of one platform (urContext*: ur_common/context.hpp),
// and its native handle both ways.
#include "context.hpp"

#include <algorithm>
#include <vector>

#include "device.hpp"
#include "handle_entry_points.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/context.hpp"
#include "ur_common/memory.hpp"
#include "usm.hpp"

namespace ordo::opencl {

ur_result_t context_wait_all_queues(ur_context_handle_t c) {
  // Held, not listed under queues_mutex, while they finish: the thread whose work would
  // let them finish may need that lock meanwhile (urQueueCreate, a native event's queue).
  // A queue nobody holds is being destroyed, and its last release finished it.
  std::vector<ur_queue_handle_t> held;
  {
    std::lock_guard<std::mutex> lock(c->queues_mutex);
    for (ur_queue_handle_t q : c->queues)
      if (!q->on_device && ur_common::try_hold(q)) held.push_back(q); // the host never finishes a device queue
  }
  cl_int err = CL_SUCCESS;
  for (ur_queue_handle_t q : held) {
    if (err == CL_SUCCESS) err = finish_known(q);
    unhold(q);
  }
  return to_ur(err);
}

namespace {

// A context over `native` (its reference taken over) and devices of one platform.
ur_context_handle_t_ *wrap_context(cl_context native, const std::vector<ur_device_handle_t> &devices) {
  auto *ctx = new ur_context_handle_t_();
  ctx->cl = native;
  ctx->platform = devices.front()->platform;
  ctx->intel_usm = std::all_of(devices.begin(), devices.end(), [](ur_device_handle_t d) { return d->intel_usm; });
  return ctx;
}

struct context_hooks {
  using Context = ur_context_handle_t_;
  using Device = ur_device_handle_t_;
  static ur_result_t check_device(const std::vector<Device *> &taken, Device *d) {
    return !taken.empty() && d->platform != taken[0]->platform ? UR_RESULT_ERROR_INVALID_DEVICE : UR_RESULT_SUCCESS;
  }
  static ur_result_t create(const std::vector<Device *> &devices, Context *&out) {
    std::vector<cl_device_id> ids;
    for (Device *d : devices) ids.push_back(d->cl);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(devices.front()->platform->cl), 0};
    cl_int err = CL_SUCCESS;
    cl_context native = cl.clCreateContext(props, cl_uint(ids.size()), ids.data(), nullptr, nullptr, &err);
    if (!native) return to_ur(err);
    out = wrap_context(native, devices);
    return UR_RESULT_SUCCESS;
  }
  static void destroy(Context *ctx) { cl.clReleaseContext(ctx->cl); }
  static ur_result_t native_handle(Context *ctx, ur_native_handle_t *out) { return opencl::native_handle(ctx, out); }
  static void reap() { reap_deferred_events(); } // the user's last release lets the pools drop events
};

using entry_points = ordo::ur_common::context_entry_points<context_hooks>;

ur_result_t UR_APICALL urContextCreateWithNativeHandle(ur_native_handle_t hNativeContext, ur_adapter_handle_t hAdapter,
                                                       uint32_t numDevices, const ur_device_handle_t *phDevices,
                                                       const ur_context_native_properties_t *pProperties,
                                                       ur_context_handle_t *phContext) {
  ORDO_CHECK_HANDLE(hAdapter);
  if (numDevices && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  cl_context native = reinterpret_cast<cl_context>(hNativeContext);
  std::vector<ur_device_handle_t> devices(phDevices, phDevices + numDevices);
  for (ur_device_handle_t d : devices) ORDO_CHECK_HANDLE(d);
  if (devices.empty()) { // the devices the cl_context was made with
    std::vector<cl_device_id> ids;
    ORDO_CL_CHECK(cl_array(cl.clGetContextInfo, native, CL_CONTEXT_DEVICES, ids));
    for (cl_device_id id : ids)
      for (ur_platform_handle_t p : platforms())
        for (auto &d : p->devices)
          if (d->cl == id) devices.push_back(d.get());
    if (devices.size() != ids.size()) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  if (devices.empty()) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!(pProperties && pProperties->isNativeHandleOwned)) cl.clRetainContext(native);
  ur_context_handle_t_ *ctx = wrap_context(native, devices);
  ctx->devices = std::move(devices);
  ctx->pools = std::make_unique<ordo::stream_ordered::context_pools>(ctx->pool_hooks);
  *phContext = ctx;
  return UR_RESULT_SUCCESS;
}

} // namespace

void context_unhold(ur_context_handle_t c) { entry_points::drop(c); }

void install_context_entry_points(ur_dditable_t &t) {
  entry_points::install(t);
  t.Context.pfnCreateWithNativeHandle = urContextCreateWithNativeHandle;
}

} // namespace ordo::opencl

void context_hold(ur_context_handle_t_ *c) { c->hold(); }
void context_drop(ur_context_handle_t_ *c) { ordo::opencl::context_unhold(c); }
