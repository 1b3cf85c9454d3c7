// urAdapter*: one adapter handle, reference counted; the first reference starts the
// worker pool and the last one stops it.
#include <string>

#include "entry_points.hpp"
#include "ordo/adapter_logging.hpp"
#include "logging.hpp"
#include "ordo/info.hpp"
#include "platform.hpp"
#include "worker_pool.hpp"

namespace nc {

namespace {

thread_local std::string t_last_error;
thread_local int32_t t_last_error_code = 0;

ur_result_t UR_APICALL adapterGet(uint32_t NumEntries, ur_adapter_handle_t *phAdapters, uint32_t *pNumAdapters) {
  if (NumEntries == 0 && phAdapters) return UR_RESULT_ERROR_INVALID_SIZE;
  return guarded([&] {
    if (phAdapters) {
      Adapter &a = the_adapter();
      std::lock_guard<std::mutex> lock(a.mu);
      if (a.ref_count.fetch_add(1) == 0) WorkerPool::instance().acquire();
      phAdapters[0] = adapter_handle();
    }
    if (pNumAdapters) *pNumAdapters = 1;
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL adapterRetain(ur_adapter_handle_t hAdapter) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  Adapter &a = the_adapter();
  std::lock_guard<std::mutex> lock(a.mu);
  if (a.ref_count.load() == 0) return UR_RESULT_ERROR_UNINITIALIZED; // never obtained from urAdapterGet
  a.ref_count.fetch_add(1);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL adapterRelease(ur_adapter_handle_t hAdapter) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  Adapter &a = the_adapter();
  std::lock_guard<std::mutex> lock(a.mu);
  if (a.ref_count.load() == 0) return UR_RESULT_ERROR_UNINITIALIZED;
  if (a.ref_count.fetch_sub(1) == 1) WorkerPool::instance().release(); // runs what is queued, then joins
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL adapterGetLastError(ur_adapter_handle_t hAdapter, const char **ppMessage, int32_t *pError) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (!ppMessage || !pError) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *ppMessage = t_last_error.c_str();
  *pError = t_last_error_code;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL adapterGetInfo(ur_adapter_handle_t hAdapter, ur_adapter_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_ADAPTER_INFO_BACKEND: return out.value(UR_BACKEND_NATIVE_CPU);
  case UR_ADAPTER_INFO_REFERENCE_COUNT: return out.value(the_adapter().count());
  case UR_ADAPTER_INFO_VERSION: return out.value(uint32_t{1});
  case UR_ADAPTER_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

} // namespace

Adapter::Adapter() : ordo::object(kKind) { ref_count.store(0); }

Adapter &the_adapter() {
  static Adapter *a = new Adapter;
  return *a;
}

void set_last_error(const std::string &message, int32_t code) {
  t_last_error = message;
  t_last_error_code = code;
}

void install_adapter_entry_points(ur_dditable_t &t) {
  t.Adapter.pfnGet = adapterGet;
  t.Adapter.pfnRetain = adapterRetain;
  t.Adapter.pfnRelease = adapterRelease;
  t.Adapter.pfnGetLastError = adapterGetLastError;
  t.Adapter.pfnGetInfo = adapterGetInfo;
  ordo::adapter_logging how;
  how.logger = logger;
  how.is_adapter = is_adapter;
  ordo::install_logger_entry_points(t, how);
}

} // namespace nc
