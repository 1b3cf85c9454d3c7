// The adapter's log: UR_LOG_NATIVE_CPU (ordo::Logger) plus the callback a user sets
// with urAdapterSetLoggerCallback.
#pragma once
#include "ordo/logger.hpp"
#include "ur_api.h"

namespace nc {

bool log_enabled(ordo::LogLevel level);
void log(ordo::LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// The adapter's Logger (the callback is its second sink: ordo/adapter_logging.hpp).
ordo::Logger &logger();

} // namespace nc

#define NC_LOG(lvl, ...)                                                                   \
  do {                                                                                     \
    if (::nc::log_enabled(::ordo::LogLevel::lvl)) ::nc::log(::ordo::LogLevel::lvl, __VA_ARGS__); \
  } while (0)
