// SPDX-License-Identifier: Apache-2.0
// The mock's adapter handle: one, reference-counted; its last release frees the
// objects released meanwhile. It counts its cycles (0 -> 1 reference: "init", 1 -> 0:
// "teardown") for tests (ordoMockAdapterCycles, ordo_mock.h).
#include <atomic>
#include <cstring>

#include "mock.hpp"

namespace mock {
namespace {
std::atomic<uint32_t> g_inits{0};
std::atomic<uint32_t> g_teardowns{0};

void take_reference(ur_adapter_handle_t h) {
  if (h->ref_count.fetch_add(1, std::memory_order_acq_rel) == 0) g_inits.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

ur_adapter_handle_t the_adapter() {
  static ur_adapter_handle_t_ adapter; // destroyed when the library is unloaded
  return &adapter;
}

void Registry::purge_dead() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Owned> keep;
  for (auto &o : objects_)
    if (o->alive.load(std::memory_order_acquire)) keep.push_back(std::move(o));
  objects_.swap(keep);
}

Registry &registry() {
  static Registry r;
  return r;
}

namespace {

ur_result_t UR_APICALL urAdapterGet(uint32_t NumEntries, ur_adapter_handle_t *phAdapters, uint32_t *pNumAdapters) {
  if (NumEntries == 0 && phAdapters) return UR_RESULT_ERROR_INVALID_SIZE;
  if (phAdapters) {
    take_reference(the_adapter());
    phAdapters[0] = the_adapter();
  }
  if (pNumAdapters) *pNumAdapters = 1;
  return UR_RESULT_SUCCESS;
}

ur_result_t check(ur_adapter_handle_t h) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (h != the_adapter()) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterRetain(ur_adapter_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  take_reference(h);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterRelease(ur_adapter_handle_t h) {
  if (ur_result_t r = check(h)) return r;
  // Refuse to go below zero rather than wrap.
  uint32_t n = h->ref_count.load(std::memory_order_relaxed);
  do {
    if (n == 0) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  } while (!h->ref_count.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel));
  if (n == 1) {
    g_teardowns.fetch_add(1, std::memory_order_relaxed);
    registry().purge_dead();
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterGetLastError(ur_adapter_handle_t h, const char **ppMessage, int32_t *pError) {
  if (ur_result_t r = check(h)) return r;
  if (!ppMessage || !pError) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // The mock never returns UR_RESULT_ERROR_ADAPTER_SPECIFIC, so there is nothing to tell.
  *ppMessage = "";
  *pError = 0;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterGetInfo(ur_adapter_handle_t h, ur_adapter_info_t propName, size_t propSize,
                                        void *pPropValue, size_t *pPropSizeRet) {
  if (ur_result_t r = check(h)) return r;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_ADAPTER_INFO_BACKEND: return out.value(UR_BACKEND_UNKNOWN);
  case UR_ADAPTER_INFO_REFERENCE_COUNT: return out.value<uint32_t>(h->count());
  case UR_ADAPTER_INFO_VERSION: return out.value<uint32_t>(1);
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

ur_result_t UR_APICALL urAdapterSetLoggerCallback(ur_adapter_handle_t h, ur_logger_callback_t cb, void *data,
                                                  ur_logger_level_t level) {
  if (ur_result_t r = check(h)) return r;
  if (!cb) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (level > UR_LOGGER_LEVEL_QUIET) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  std::lock_guard<std::mutex> lock(h->logger_mutex);
  h->logger = cb;
  h->logger_data = data;
  h->logger_level = level;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urAdapterSetLoggerCallbackLevel(ur_adapter_handle_t h, ur_logger_level_t level) {
  if (ur_result_t r = check(h)) return r;
  if (level > UR_LOGGER_LEVEL_QUIET) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  std::lock_guard<std::mutex> lock(h->logger_mutex);
  h->logger_level = level;
  return UR_RESULT_SUCCESS;
}

} // namespace

void fill_adapter(ur_dditable_t &t) {
  t.Adapter.pfnGet = urAdapterGet;
  t.Adapter.pfnRetain = urAdapterRetain;
  t.Adapter.pfnRelease = urAdapterRelease;
  t.Adapter.pfnGetLastError = urAdapterGetLastError;
  t.Adapter.pfnGetInfo = urAdapterGetInfo;
  t.Adapter.pfnSetLoggerCallback = urAdapterSetLoggerCallback;
  t.Adapter.pfnSetLoggerCallbackLevel = urAdapterSetLoggerCallbackLevel;
}

} // namespace mock

extern "C" UR_DLLEXPORT void ordoMockAdapterCycles(uint32_t *pInits, uint32_t *pTeardowns) {
  if (pInits) *pInits = mock::g_inits.load(std::memory_order_relaxed);
  if (pTeardowns) *pTeardowns = mock::g_teardowns.load(std::memory_order_relaxed);
}
