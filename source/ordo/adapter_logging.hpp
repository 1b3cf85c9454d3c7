// SPDX-License-Identifier: Apache-2.0
// urAdapterSetLoggerCallback and urAdapterSetLoggerCallbackLevel, once for every
// adapter: the callback becomes a second sink of the adapter's Logger, so every line
// the adapter logs (UR_LOG_<NAME>) also reaches the caller's function at or above the
// level it asked for (docs/environment.md). Also the one way an adapter says why it has
// no platform (log_no_platform), so that a backend that is simply not installed stays
// quiet (docs/loader.md, "Logging").
#pragma once
#include <string>

#include "ordo/logger.hpp"
#include "ur_ddi.h"

namespace ordo {

struct adapter_logging {
  Logger &(*logger)() = nullptr;                       // the adapter's log
  bool (*is_adapter)(ur_adapter_handle_t h) = nullptr; // a live adapter handle of this library
};

void install_logger_entry_points(ur_dditable_t &t, const adapter_logging &how);

// Why an adapter found no platform.
enum class no_platform_cause {
  not_installed, // the backend is absent: its runtime library not found, a stub, no driver, no device
  failed,        // it is installed but unusable: a symbol missing, an init error, a driver too old
};

// Says once why the adapter has no platform. not_installed: one info line on logger
// `loader` (UR_LOG_LOADER), also handed to the adapter's urAdapterSetLoggerCallback
// sink, and nothing on the adapter's own stderr; failed: a warning on the adapter's log.
//   <loader>[INFO]: adapter cuda: no CUDA platform, CUDA is not installed: libcuda.so.1 not found (...)
//   <hip>[WARNING]: no HIP platform: libz.so.1 lacks hipInit, ...
void log_no_platform(Logger &adapter_log, const char *backend, no_platform_cause cause, const std::string &why);

} // namespace ordo
