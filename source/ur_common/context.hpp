// SPDX-License-Identifier: Apache-2.0
// urContext* written once for adapters whose context is a set of devices with the
// stream-ordered layer's state (context_pools) and a user deleter. The adapter says
// what its backend adds:
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Context = ...;  // ordo::object with devices, pools, pool_hooks,
//                           // deleter, deleter_data; count(), retain(), release()
//     using Device = ...;
//     static ur_result_t check_device(const std::vector<Device *> &taken, Device *d);
//     static ur_result_t create(const std::vector<Device *> &devices, Context *&out);  // new Context
//     static void destroy(Context *);        // the backend's part, after the pools
//     static ur_result_t native_handle(Context *, ur_native_handle_t *out);
//     static void reap();  // optional: after urContextRelease (ur_common/handles.hpp)
//   };
#pragma once

#include <memory>
#include <vector>

#include "ordo/info.hpp"
#include "ordo_so/layer.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

template <class H> struct context_entry_points {
  using Context = typename H::Context;
  using Device = typename H::Device;

  // The last holder is gone: the default and host pools go (user pools are gone
  // already, each held the context), then any USM memory the user never freed (a
  // fixed pool may lie in a plain allocation, so the pools first).
  static void drop(Context *ctx) {
    if (!ctx->drop()) return;
    ctx->pools->shutdown();
    ctx->pools->give_back(ctx->pools->plain_allocations());
    ctx->pools.reset();
    H::destroy(ctx);
    if (ctx->deleter) ctx->deleter(ctx->deleter_data);
    ordo::retire(ctx); // its handle is refused from now on (docs/adapter-guide.md)
  }

  static ur_result_t UR_APICALL create(uint32_t DeviceCount, const ur_device_handle_t *phDevices,
                                       const ur_context_properties_t *pProperties, ur_context_handle_t *phContext) {
    if (!phDevices || !phContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (DeviceCount == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    if (pProperties && (pProperties->flags & UR_CONTEXT_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    std::vector<Device *> devices;
    for (uint32_t i = 0; i < DeviceCount; ++i) {
      Device *d = nullptr;
      if (ur_result_t r = unwrap(phDevices[i], d)) return r;
      if (ur_result_t r = H::check_device(devices, d)) return r;
      bool seen = false;
      for (Device *e : devices) seen = seen || e == d;
      if (!seen) devices.push_back(d);
    }
    Context *ctx = nullptr;
    if (ur_result_t r = H::create(devices, ctx)) return r;
    ctx->devices = std::move(devices);
    ctx->pools = std::make_unique<ordo::stream_ordered::context_pools>(ctx->pool_hooks);
    *phContext = reinterpret_cast<ur_context_handle_t>(ctx);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL retain(ur_context_handle_t hContext) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!ctx->retain_user()) return ordo::invalid_of(ctx);
    return UR_RESULT_SUCCESS;
  }

  // The user's last release lets the pools drop what the adapter then parks (reap).
  static ur_result_t UR_APICALL release(ur_context_handle_t hContext) {
    ur_result_t r = release_unreaped(hContext);
    reap_parked<H>();
    return r;
  }
  static ur_result_t release_unreaped(ur_context_handle_t hContext) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    bool last_ = false;
    if (!ctx->release_user(last_)) return ordo::invalid_of(ctx);
    if (last_) {
      // Pools let go of events (which hold queues, and queues the context) they no longer need.
      ctx->pools->user_released_context();
      drop(ctx);
    }
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_info(ur_context_handle_t hContext, ur_context_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    switch (propName) {
    case UR_CONTEXT_INFO_NUM_DEVICES: return out.value(static_cast<uint32_t>(ctx->devices.size()));
    case UR_CONTEXT_INFO_DEVICES: {
      std::vector<ur_device_handle_t> list;
      for (Device *d : ctx->devices) list.push_back(reinterpret_cast<ur_device_handle_t>(d));
      return out.array(list);
    }
    case UR_CONTEXT_INFO_REFERENCE_COUNT: return out.value(ctx->count());
    case UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
    case UR_CONTEXT_INFO_USM_FILL2D_SUPPORT: return out.boolean(true);
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  static ur_result_t UR_APICALL native_handle(ur_context_handle_t hContext, ur_native_handle_t *phNativeContext) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!phNativeContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    return H::native_handle(ctx, phNativeContext);
  }

  static ur_result_t UR_APICALL set_extended_deleter(ur_context_handle_t hContext,
                                                     ur_context_extended_deleter_t pfnDeleter, void *pUserData) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!pfnDeleter) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    ctx->deleter = pfnDeleter;
    ctx->deleter_data = pUserData;
    return UR_RESULT_SUCCESS;
  }

  static void install(ur_dditable_t &t) {
    t.Context.pfnCreate = create;
    t.Context.pfnRetain = retain;
    t.Context.pfnRelease = release;
    t.Context.pfnGetInfo = get_info;
    t.Context.pfnGetNativeHandle = native_handle;
    t.Context.pfnSetExtendedDeleter = set_extended_deleter;
  }
};

} // namespace ordo::ur_common
