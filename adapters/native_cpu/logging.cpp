#include "logging.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

namespace nc {

namespace {
ordo::Logger &file_logger() {
  static ordo::Logger *logger = new ordo::Logger("native_cpu"); // outlives static destructors
  return *logger;
}

struct CallbackState {
  std::mutex mu;
  ur_logger_callback_t fn = nullptr;
  void *user = nullptr;
  std::atomic<int> level{static_cast<int>(UR_LOGGER_LEVEL_QUIET)};
};
CallbackState &callback_state() {
  static CallbackState *s = new CallbackState;
  return *s;
}
} // namespace

bool log_enabled(ordo::LogLevel level) {
  return file_logger().enabled(level) ||
         static_cast<int>(level) >= callback_state().level.load(std::memory_order_relaxed);
}

void log(ordo::LogLevel level, const char *fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  ordo::Logger &logger = file_logger();
  if (logger.enabled(level)) logger.log(level, "%s", buf);

  CallbackState &cb = callback_state();
  if (static_cast<int>(level) < cb.level.load(std::memory_order_relaxed)) return;
  ur_logger_callback_t fn;
  void *user;
  {
    std::lock_guard<std::mutex> lock(cb.mu);
    fn = cb.fn;
    user = cb.user;
  }
  if (fn) fn(static_cast<ur_logger_level_t>(level), buf, user);
}

void set_log_callback(ur_logger_callback_t fn, void *user, ur_logger_level_t level) {
  CallbackState &cb = callback_state();
  std::lock_guard<std::mutex> lock(cb.mu);
  cb.fn = fn;
  cb.user = user;
  cb.level.store(fn ? static_cast<int>(level) : static_cast<int>(UR_LOGGER_LEVEL_QUIET));
}

void set_log_callback_level(ur_logger_level_t level) {
  CallbackState &cb = callback_state();
  std::lock_guard<std::mutex> lock(cb.mu);
  if (cb.fn) cb.level.store(static_cast<int>(level));
}

} // namespace nc
