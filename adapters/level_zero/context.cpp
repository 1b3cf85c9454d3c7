// SPDX-License-Identifier: Apache-2.0
// Contexts: a Level Zero context over a set of devices of one platform. urContext*
// are ur_common/context.hpp's; this file says what Level Zero adds.
#include "common.hpp"
#include "ur_common/context.hpp"

namespace ordo::level_zero {

namespace {

struct context_hooks : handle_types {
  static ur_result_t check_device(const std::vector<Device *> &taken, Device *d) {
    return !taken.empty() && d->platform != taken[0]->platform ? UR_RESULT_ERROR_INVALID_DEVICE : UR_RESULT_SUCCESS;
  }
  static ur_result_t create(const std::vector<Device *> &devices, Context *&out) {
    std::vector<ze_device_handle_t> ze_devices;
    for (Device *d : devices) ze_devices.push_back(d->ze);
    ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t zc = nullptr;
    ORDO_ZE(ze().zeContextCreateEx(devices[0]->platform->driver, &desc, uint32_t(ze_devices.size()), ze_devices.data(),
                                   &zc));
    out = new Context();
    out->platform = devices[0]->platform;
    out->ze = zc;
    return UR_RESULT_SUCCESS;
  }
  static void destroy(Context *ctx) {
    if (ctx->copy_list) ze().zeCommandListDestroy(ctx->copy_list);
    ctx->events.clear(); // its Level Zero events go before the context
    ze().zeContextDestroy(ctx->ze);
  }
  static ur_result_t native_handle(Context *ctx, ur_native_handle_t *out) {
    *out = reinterpret_cast<ur_native_handle_t>(ctx->ze);
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::ur_common::context_entry_points<context_hooks>;

} // namespace

void context_hold(Context *ctx) { ctx->hold(); }
void context_drop(Context *ctx) { entry_points::drop(ctx); }
void install_context_entry_points(ur_dditable_t &t) { entry_points::install(t); }

} // namespace ordo::level_zero
