#include "ordo/adapter_logging.hpp"

namespace ordo {

namespace {

adapter_logging g_how; // set once per adapter library, before its table is used

ur_result_t check(ur_adapter_handle_t h, ur_logger_level_t level) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (g_how.is_adapter && !g_how.is_adapter(h)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  if (level > UR_LOGGER_LEVEL_QUIET) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL set_logger_callback(ur_adapter_handle_t hAdapter, ur_logger_callback_t pfnLoggerCallback,
                                           void *pUserData, ur_logger_level_t level) {
  if (ur_result_t r = check(hAdapter, level)) return r;
  g_how.logger().set_callback(pfnLoggerCallback, pUserData, level);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL set_logger_callback_level(ur_adapter_handle_t hAdapter, ur_logger_level_t level) {
  if (ur_result_t r = check(hAdapter, level)) return r;
  g_how.logger().set_callback_level(level);
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_logger_entry_points(ur_dditable_t &t, const adapter_logging &how) {
  g_how = how;
  t.Adapter.pfnSetLoggerCallback = set_logger_callback;
  t.Adapter.pfnSetLoggerCallbackLevel = set_logger_callback_level;
}

} // namespace ordo
