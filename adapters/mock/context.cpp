// SPDX-License-Identifier: Apache-2.0
// Mock contexts: over the one mock device, reference counted, with an extended deleter.
#include "mock.hpp"

namespace mock {
namespace {

ur_result_t check(ur_context_handle_t h) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_context_handle_t_>(h)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextCreate(uint32_t DeviceCount, const ur_device_handle_t *phDevices,
                                       const ur_context_properties_t *, ur_context_handle_t *phContext) {
  if (!phDevices || !phContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (DeviceCount == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < DeviceCount; ++i)
    if (!live<ur_device_handle_t_>(phDevices[i])) return UR_RESULT_ERROR_INVALID_DEVICE;
  *phContext = registry().create<ur_context_handle_t_>();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextRetain(ur_context_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  h->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextRelease(ur_context_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  return release_context(h);
}

} // namespace

ur_result_t release_context(ur_context_handle_t h) {
  if (!h->release()) return UR_RESULT_SUCCESS;
  h->alive.store(false, std::memory_order_release);
  ur_context_extended_deleter_t deleter;
  void *data;
  {
    std::lock_guard<std::mutex> lock(h->mutex);
    deleter = h->deleter;
    data = h->deleter_data;
  }
  if (deleter) deleter(data);
  return UR_RESULT_SUCCESS;
}

namespace {

ur_result_t UR_APICALL urContextGetInfo(ur_context_handle_t h, ur_context_info_t propName, size_t propSize,
                                        void *pPropValue, size_t *pPropSizeRet) {
  if (ur_result_t r = check(h)) return r;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_CONTEXT_INFO_NUM_DEVICES: return out.value<uint32_t>(1);
  case UR_CONTEXT_INFO_DEVICES: {
    ur_device_handle_t d = the_device();
    return out.array(&d, 1);
  }
  case UR_CONTEXT_INFO_REFERENCE_COUNT: return out.value<uint32_t>(h->count());
  case UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT: return out.boolean(false);
  case UR_CONTEXT_INFO_USM_FILL2D_SUPPORT: return out.boolean(false);
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urContextGetNativeHandle(ur_context_handle_t h, ur_native_handle_t *phNative) {
  if (ur_result_t r = check(h)) return r;
  if (!phNative) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNative = reinterpret_cast<ur_native_handle_t>(h);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextSetExtendedDeleter(ur_context_handle_t h, ur_context_extended_deleter_t fn,
                                                   void *data) {
  if (ur_result_t r = check(h)) return r;
  if (!fn) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  std::lock_guard<std::mutex> lock(h->mutex);
  h->deleter = fn;
  h->deleter_data = data;
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_context(ur_dditable_t &t) {
  t.Context.pfnCreate = urContextCreate;
  t.Context.pfnRetain = urContextRetain;
  t.Context.pfnRelease = urContextRelease;
  t.Context.pfnGetInfo = urContextGetInfo;
  t.Context.pfnGetNativeHandle = urContextGetNativeHandle;
  t.Context.pfnSetExtendedDeleter = urContextSetExtendedDeleter;
}

} // namespace mock
