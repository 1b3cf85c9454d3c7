// SPDX-License-Identifier: Apache-2.0
// Logging controlled by UR_LOG_<NAME> (docs/environment.md):
//   UR_LOG_LOADER="level:info;output:stderr"      levels: debug, info, warning, error, quiet
//   UR_LOG_NATIVE_CPU="level:debug;output:file,/tmp/ur.log;flush:debug"
// With no variable set, warnings and errors go to stderr. A second sink, the
// function a user sets with urAdapterSetLoggerCallback, gets every line at or above
// its own level.
#pragma once
#include <cstdarg>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "ur_api.h"

namespace ordo {

enum class LogLevel { debug = 0, info = 1, warning = 2, error = 3, quiet = 4 };

class Logger {
public:
  // name: "loader", "native_cpu", ... (upper-cased to find UR_LOG_<NAME>).
  explicit Logger(const std::string &name);
  ~Logger();
  Logger(const Logger &) = delete;
  Logger &operator=(const Logger &) = delete;

  bool enabled(LogLevel level) const {
    return level >= level_.load(std::memory_order_relaxed) ||
           static_cast<int>(level) >= callback_level_.load(std::memory_order_relaxed);
  }
  void log(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
  void vlog(LogLevel level, const char *fmt, va_list args);
  // Hands `message` to the callback sink alone (if its level lets it through): for a line
  // another logger prints, which a program's urAdapterSetLoggerCallback should still get.
  void to_callback(LogLevel level, const char *message);

  const std::string &name() const { return name_; }

  // Applies a UR_LOG_* style configuration string; returns false if it is malformed.
  bool configure(const std::string &config);

  // The callback sink (null: none). ur_logger_level_t and LogLevel share their order.
  void set_callback(ur_logger_callback_t fn, void *user, ur_logger_level_t level);
  void set_callback_level(ur_logger_level_t level);

private:
  std::string name_;
  std::atomic<LogLevel> level_{LogLevel::warning}; // read without the lock on every log call
  std::atomic<int> callback_level_{static_cast<int>(UR_LOGGER_LEVEL_QUIET) + 1}; // none: above every level
  ur_logger_callback_t callback_ = nullptr;                                      // under mutex_
  void *callback_user_ = nullptr;
  LogLevel flush_ = LogLevel::error;
  FILE *out_ = stderr;
  bool own_file_ = false;
  std::mutex mutex_;
};

} // namespace ordo

#define ORDO_LOG(logger, lvl, ...)                                                                                     \
  do {                                                                                                                 \
    if ((logger).enabled(::ordo::LogLevel::lvl)) (logger).log(::ordo::LogLevel::lvl, __VA_ARGS__);                     \
  } while (0)
