// Contexts: a Level Zero context over a set of devices of one platform.
#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::l0 {

void context_hold(Context *ctx) { ctx->life.hold(); }

// The context goes: its default and host pools go with it (user pools are gone
// already, each held the context), then any USM memory the user never freed (a
// fixed pool may lie in a plain allocation, so the pools first).
void context_drop(Context *ctx) {
  if (!ctx->life.drop()) return;
  ctx->pools->shutdown();
  for (auto &a : ctx->pools->plain_allocations()) free_memory(ctx, a.base);
  ctx->pools.reset();
  ctx->events.clear(); // its Level Zero events go before the context
  ze().zeContextDestroy(ctx->ze);
  if (ctx->deleter) ctx->deleter(ctx->deleter_data);
  ctx->tag = Tag::dead;
  delete ctx;
}

ur_result_t UR_APICALL urContextCreate(uint32_t DeviceCount, const ur_device_handle_t *phDevices,
                                       const ur_context_properties_t *pProperties,
                                       ur_context_handle_t *phContext) {
  if (!phDevices || !phContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (DeviceCount == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (pProperties && (pProperties->flags & UR_CONTEXT_FLAGS_MASK))
    return UR_RESULT_ERROR_INVALID_ENUMERATION;
  std::vector<Device *> devices;
  for (uint32_t i = 0; i < DeviceCount; ++i) {
    ORDO_UNWRAP(Device, d, phDevices[i]);
    if (!devices.empty() && d->platform != devices[0]->platform) return UR_RESULT_ERROR_INVALID_DEVICE;
    bool seen = false;
    for (Device *e : devices) seen = seen || e == d;
    if (!seen) devices.push_back(d);
  }
  std::vector<ze_device_handle_t> ze_devices;
  for (Device *d : devices) ze_devices.push_back(d->ze);
  ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t zc = nullptr;
  ORDO_ZE(ze().zeContextCreateEx(devices[0]->platform->driver, &desc, uint32_t(ze_devices.size()),
                                 ze_devices.data(), &zc));
  auto *ctx = new Context();
  ctx->platform = devices[0]->platform;
  ctx->ze = zc;
  ctx->devices = std::move(devices);
  ctx->pools = std::make_unique<ordo::so::context_pools>(ctx->pool_hooks);
  *phContext = reinterpret_cast<ur_context_handle_t>(ctx);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextRetain(ur_context_handle_t hContext) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ctx->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextRelease(ur_context_handle_t hContext) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (ctx->release()) {
    // Completed frees let their events go (events hold queues, queues the context).
    ctx->pools->collect();
    context_drop(ctx);
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextGetInfo(ur_context_handle_t hContext, ur_context_info_t propName,
                                        size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Context, ctx, hContext);
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

ur_result_t UR_APICALL urContextGetNativeHandle(ur_context_handle_t hContext,
                                                ur_native_handle_t *phNativeContext) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!phNativeContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeContext = reinterpret_cast<ur_native_handle_t>(ctx->ze);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextSetExtendedDeleter(ur_context_handle_t hContext,
                                                   ur_context_extended_deleter_t pfnDeleter,
                                                   void *pUserData) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pfnDeleter) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ctx->deleter = pfnDeleter;
  ctx->deleter_data = pUserData;
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::l0
