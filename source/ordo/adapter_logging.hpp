// urAdapterSetLoggerCallback and urAdapterSetLoggerCallbackLevel, once for every
// adapter: the callback becomes a second sink of the adapter's Logger, so every line
// the adapter logs (UR_LOG_<NAME>) also reaches the caller's function at or above the
// level it asked for (docs/environment.md).
#pragma once
#include "ordo/logger.hpp"
#include "ur_ddi.h"

namespace ordo {

struct adapter_logging {
  Logger &(*logger)() = nullptr;                       // the adapter's log
  bool (*is_adapter)(ur_adapter_handle_t h) = nullptr; // a live adapter handle of this library
};

void install_logger_entry_points(ur_dditable_t &t, const adapter_logging &how);

} // namespace ordo
