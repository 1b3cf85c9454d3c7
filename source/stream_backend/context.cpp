// SPDX-License-Identifier: Apache-2.0
// Contexts: a set of devices, each used through its primary context. urContext* are
// ur_common/context.hpp's; this file says what the driver adds.
#include "backend.hpp"
#include "ur_common/context.hpp"

namespace ordo::stream_backend {

namespace {

struct context_hooks : handle_types {
  static ur_result_t check_device(const std::vector<Device *> &, Device *d) {
    return d->context() ? UR_RESULT_SUCCESS : to_ur(d->context_error);
  }
  static ur_result_t create(const std::vector<Device *> &, Context *&out) {
    out = new Context();
    return UR_RESULT_SUCCESS;
  }
  static void destroy(Context *) {}
  static ur_result_t native_handle(Context *ctx, ur_native_handle_t *out) {
    // One dctx_t stands for one device: only a single-device context has one.
    if (ctx->devices.size() != 1) return UR_RESULT_ERROR_INVALID_CONTEXT;
    *out = reinterpret_cast<ur_native_handle_t>(ctx->devices[0]->context());
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::ur_common::context_entry_points<context_hooks>;

} // namespace

namespace {

// A driver context this adapter can use is a device's primary context (the only kind
// it makes or hands out): the new context holds that device, and any others listed.
ur_result_t UR_APICALL urContextCreateWithNativeHandle(ur_native_handle_t hNativeContext, ur_adapter_handle_t hAdapter,
                                                       uint32_t numDevices, const ur_device_handle_t *phDevices,
                                                       const ur_context_native_properties_t *pProperties,
                                                       ur_context_handle_t *phContext) {
  ORDO_UNWRAP(Adapter, a, hAdapter);
  (void)a, (void)pProperties; // a primary context is never the caller's to hand over
  if (!phContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numDevices && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Device *owner = nullptr;
  for (Platform *p : platforms())
    for (Device *d : p->devices)
      if (hNativeContext && reinterpret_cast<ur_native_handle_t>(d->context()) == hNativeContext) owner = d;
  if (!owner) return UR_RESULT_ERROR_INVALID_CONTEXT; // not a primary context of this adapter's devices
  if (numDevices == 0) {
    ur_device_handle_t only = reinterpret_cast<ur_device_handle_t>(owner);
    return entry_points::create(1, &only, nullptr, phContext);
  }
  bool listed = false;
  for (uint32_t i = 0; i < numDevices; ++i)
    listed = listed || phDevices[i] == reinterpret_cast<ur_device_handle_t>(owner);
  if (!listed) return UR_RESULT_ERROR_INVALID_DEVICE;
  return entry_points::create(numDevices, phDevices, nullptr, phContext);
}

} // namespace

void context_hold(Context *ctx) { ctx->hold(); }
void context_drop(Context *ctx) { entry_points::drop(ctx); }
void install_context_entry_points(ur_dditable_t &t) {
  entry_points::install(t);
  t.Context.pfnCreateWithNativeHandle = urContextCreateWithNativeHandle;
}

} // namespace ordo::stream_backend
