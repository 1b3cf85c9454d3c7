// The adapter's log: UR_LOG_NATIVE_CPU (ordo::Logger) plus the callback a user sets
// with urAdapterSetLoggerCallback.
#pragma once
#include "ordo/logger.hpp"
#include "ur_api.h"

namespace nc {

bool log_enabled(ordo::LogLevel level);
void log(ordo::LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void set_log_callback(ur_logger_callback_t fn, void *user, ur_logger_level_t level);
void set_log_callback_level(ur_logger_level_t level);

} // namespace nc

#define NC_LOG(lvl, ...)                                                                   \
  do {                                                                                     \
    if (::nc::log_enabled(::ordo::LogLevel::lvl)) ::nc::log(::ordo::LogLevel::lvl, __VA_ARGS__); \
  } while (0)
