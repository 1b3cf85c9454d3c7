// SPDX-License-Identifier: Apache-2.0
#include "ordo/adapter_logging.hpp"

#include <cstdio>

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

// This library's view of logger `loader`: the same UR_LOG_LOADER settings and line
// format as the loader's own; the loader's instance is not reachable from an adapter.
Logger &loader_log() {
  static Logger *log = new Logger("loader"); // never destroyed: adapters may log at exit
  return *log;
}

} // namespace

void log_no_platform(Logger &adapter_log, const char *backend, no_platform_cause cause, const std::string &why) {
  if (cause == no_platform_cause::failed) {
    ORDO_LOG(adapter_log, warning, "no %s platform: %s", backend, why.c_str());
    return;
  }
  char line[1024];
  std::snprintf(line, sizeof line, "adapter %s: no %s platform, %s is not installed: %s", adapter_log.name().c_str(),
                backend, backend, why.c_str());
  ORDO_LOG(loader_log(), info, "%s", line);
  adapter_log.to_callback(LogLevel::info, line);
}

void install_logger_entry_points(ur_dditable_t &t, const adapter_logging &how) {
  g_how = how;
  t.Adapter.pfnSetLoggerCallback = set_logger_callback;
  t.Adapter.pfnSetLoggerCallbackLevel = set_logger_callback_level;
}

} // namespace ordo
