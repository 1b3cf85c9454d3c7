#include "logging.hpp"

#include <cstdarg>

namespace nc {

ordo::Logger &logger() {
  static ordo::Logger *logger = new ordo::Logger("native_cpu"); // outlives static destructors
  return *logger;
}

bool log_enabled(ordo::LogLevel level) { return logger().enabled(level); }

void log(ordo::LogLevel level, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  logger().vlog(level, fmt, args);
  va_end(args);
}

} // namespace nc
