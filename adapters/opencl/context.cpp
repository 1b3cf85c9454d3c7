// urContext*: a UR context wraps one cl_context.
#include "ordo/retired_handles.hpp"
#include "context.hpp"

#include "device.hpp"
#include "event.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "usm.hpp"

ur_context_handle_t_::~ur_context_handle_t_() {
  // Pools first (they hand their chunks back through the context; a fixed pool may
  // lie in a plain allocation), then whatever USM memory the user never freed: the
  // cl_context is going away with it.
  if (pools) {
    pools->shutdown();
    for (auto &a : pools->plain_allocations()) {
      auto it = padded.find(a.base);
      ordo::ocl::usm_release_memory(this, it != padded.end() ? it->second : a.base);
    }
    pools.reset();
  }
  if (deleter) deleter(deleter_data);
  if (cl) ordo::ocl::cl.clReleaseContext(cl);
}

namespace ordo::ocl {

void context_unhold(ur_context_handle_t c) {
  if (c->drop()) ordo::retire(c);
}

ur_result_t context_wait_all_queues(ur_context_handle_t c) {
  std::lock_guard<std::mutex> lock(c->queues_mutex);
  for (ur_queue_handle_t q : c->queues) ORDO_CL_CHECK(cl.clFinish(q->cl));
  return UR_RESULT_SUCCESS;
}

namespace {

// Wraps an existing cl_context (retaining it unless we take ownership).
ur_result_t wrap_context(cl_context native, std::vector<ur_device_handle_t> devices, bool owned,
                         ur_context_handle_t *out) {
  auto ctx = std::make_unique<ur_context_handle_t_>();
  ctx->cl = native;
  ctx->platform = devices.front()->platform;
  ctx->intel_usm = true;
  for (ur_device_handle_t d : devices) ctx->intel_usm = ctx->intel_usm && d->intel_usm;
  ctx->devices = std::move(devices);
  ctx->pools = std::make_unique<ordo::so::context_pools>(ctx->pool_hooks);
  if (!owned) cl.clRetainContext(native);
  *out = ctx.release();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL ContextCreate(uint32_t DeviceCount, const ur_device_handle_t *phDevices,
                                     const ur_context_properties_t *pProperties, ur_context_handle_t *phContext) {
  ORDO_CHECK_PTR(phDevices);
  ORDO_CHECK_PTR(phContext);
  if (pProperties && (pProperties->flags & UR_CONTEXT_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (DeviceCount == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<ur_device_handle_t> devices(phDevices, phDevices + DeviceCount);
  std::vector<cl_device_id> ids;
  for (ur_device_handle_t d : devices) {
    ORDO_CHECK_HANDLE(d);
    if (d->platform != devices.front()->platform) return UR_RESULT_ERROR_INVALID_DEVICE;
    ids.push_back(d->cl);
  }
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(devices.front()->platform->cl), 0};
  cl_int err = CL_SUCCESS;
  cl_context native = cl.clCreateContext(props, static_cast<cl_uint>(ids.size()), ids.data(), nullptr, nullptr, &err);
  if (!native) return to_ur(err);
  return wrap_context(native, std::move(devices), true, phContext);
}

ur_result_t UR_APICALL ContextRetain(ur_context_handle_t hContext) {
  ORDO_CHECK_HANDLE(hContext);
  hContext->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL ContextRelease(ur_context_handle_t hContext) {
  ORDO_CHECK_HANDLE(hContext);
  if (hContext->release()) {
    // Pools let go of events (which hold queues, and queues the context) they no longer need.
    hContext->pools->user_released_context();
    context_unhold(hContext);
    reap_deferred_events();
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL ContextGetInfo(ur_context_handle_t hContext, ur_context_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hContext);
  if (propName > UR_CONTEXT_INFO_USM_FILL2D_SUPPORT) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_CONTEXT_INFO_NUM_DEVICES: return w.value<uint32_t>(static_cast<uint32_t>(hContext->devices.size()));
  case UR_CONTEXT_INFO_DEVICES: return w.array(hContext->devices);
  case UR_CONTEXT_INFO_REFERENCE_COUNT: return w.value<uint32_t>(hContext->count());
  // 2-D copies and fills: one command per row (enqueue.cpp).
  case UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
  case UR_CONTEXT_INFO_USM_FILL2D_SUPPORT: return w.boolean(true);
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL ContextGetNativeHandle(ur_context_handle_t hContext, ur_native_handle_t *phNativeContext) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(phNativeContext);
  *phNativeContext = reinterpret_cast<ur_native_handle_t>(hContext->cl);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL ContextCreateWithNativeHandle(ur_native_handle_t hNativeContext, ur_adapter_handle_t hAdapter,
                                                     uint32_t numDevices, const ur_device_handle_t *phDevices,
                                                     const ur_context_native_properties_t *pProperties,
                                                     ur_context_handle_t *phContext) {
  ORDO_CHECK_HANDLE(hAdapter);
  ORDO_CHECK_PTR(phContext);
  if (numDevices && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  cl_context native = reinterpret_cast<cl_context>(hNativeContext);
  std::vector<ur_device_handle_t> devices;
  if (numDevices) {
    for (uint32_t i = 0; i < numDevices; ++i) {
      ORDO_CHECK_HANDLE(phDevices[i]);
      devices.push_back(phDevices[i]);
    }
  } else {
    // Take the devices the cl_context was made with.
    size_t n = 0;
    ORDO_CL_CHECK(cl.clGetContextInfo(native, CL_CONTEXT_DEVICES, 0, nullptr, &n));
    std::vector<cl_device_id> ids(n / sizeof(cl_device_id));
    ORDO_CL_CHECK(cl.clGetContextInfo(native, CL_CONTEXT_DEVICES, n, ids.data(), nullptr));
    discover_platforms();
    for (cl_device_id id : ids)
      for (auto &p : the_adapter().platforms)
        for (auto &d : p->devices)
          if (d->cl == id) devices.push_back(d.get());
    if (devices.size() != ids.size()) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  if (devices.empty()) return UR_RESULT_ERROR_INVALID_CONTEXT;
  bool owned = pProperties && pProperties->isNativeHandleOwned;
  return wrap_context(native, std::move(devices), owned, phContext);
}

ur_result_t UR_APICALL ContextSetExtendedDeleter(ur_context_handle_t hContext, ur_context_extended_deleter_t pfnDeleter,
                                                 void *pUserData) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(pfnDeleter);
  std::lock_guard<std::mutex> lock(hContext->deleter_mutex);
  hContext->deleter = pfnDeleter;
  hContext->deleter_data = pUserData;
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_context_table(ur_dditable_t &t) {
  t.Context.pfnCreate = ContextCreate;
  t.Context.pfnRetain = ContextRetain;
  t.Context.pfnRelease = ContextRelease;
  t.Context.pfnGetInfo = ContextGetInfo;
  t.Context.pfnGetNativeHandle = ContextGetNativeHandle;
  t.Context.pfnCreateWithNativeHandle = ContextCreateWithNativeHandle;
  t.Context.pfnSetExtendedDeleter = ContextSetExtendedDeleter;
}

} // namespace ordo::ocl
