// SPDX-License-Identifier: Apache-2.0
#include "ordo/logger.hpp"
#include "ordo/secure_env.hpp"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace ordo {

namespace {
bool parse_level(const std::string &s, LogLevel &out) {
  static const char *names[] = {"debug", "info", "warning", "error", "quiet"};
  for (int i = 0; i < 5; ++i)
    if (s == names[i]) {
      out = static_cast<LogLevel>(i);
      return true;
    }
  return false;
}
const char *level_name(LogLevel l) {
  static const char *names[] = {"DEBUG", "INFO", "WARNING", "ERROR", "QUIET"};
  return names[static_cast<int>(l)];
}
} // namespace

Logger::Logger(const std::string &name) : name_(name) {
  std::string var = "UR_LOG_";
  for (char c : name) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char *cfg = secure_env(var.c_str())) {
    if (!configure(cfg))
      std::fprintf(stderr, "<%s>[WARNING]: ignoring malformed %s=\"%s\"\n", name_.c_str(), var.c_str(), cfg);
  }
}

Logger::~Logger() {
  if (own_file_) std::fclose(out_);
}

bool Logger::configure(const std::string &config) {
  LogLevel level = level_.load(), flush = flush_;
  FILE *out = out_;
  bool own = false;
  std::stringstream ss(config);
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    auto colon = item.find(':');
    if (colon == std::string::npos) return false;
    std::string key = item.substr(0, colon), val = item.substr(colon + 1);
    if (key == "level") {
      if (!parse_level(val, level)) return false;
    } else if (key == "flush") {
      if (!parse_level(val, flush)) return false;
    } else if (key == "output") {
      if (val == "stdout")
        out = stdout;
      else if (val == "stderr")
        out = stderr;
      else if (val.rfind("file,", 0) == 0) {
        FILE *f = std::fopen(val.substr(5).c_str(), "a");
        if (!f) return false;
        out = f;
        own = true;
      } else
        return false;
    } else {
      return false;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (own_file_ && out_ != out) std::fclose(out_);
  level_ = level;
  flush_ = flush;
  out_ = out;
  own_file_ = own || (own_file_ && out == out_);
  return true;
}

void Logger::log(LogLevel level, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vlog(level, fmt, args);
  va_end(args);
}

void Logger::vlog(LogLevel level, const char *fmt, va_list args) {
  if (!enabled(level)) return;
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  ur_logger_callback_t fn = nullptr;
  void *user = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (level >= level_.load(std::memory_order_relaxed)) {
      std::fprintf(out_, "<%s>[%s]: %s\n", name_.c_str(), level_name(level), buf);
      if (level >= flush_) std::fflush(out_);
    }
    if (static_cast<int>(level) >= callback_level_.load(std::memory_order_relaxed)) {
      fn = callback_;
      user = callback_user_;
    }
  }
  if (fn) fn(static_cast<ur_logger_level_t>(level), buf, user); // outside the lock: it may log
}

void Logger::to_callback(LogLevel level, const char *message) {
  ur_logger_callback_t fn = nullptr;
  void *user = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int>(level) >= callback_level_.load(std::memory_order_relaxed)) {
      fn = callback_;
      user = callback_user_;
    }
  }
  if (fn) fn(static_cast<ur_logger_level_t>(level), message, user);
}

void Logger::set_callback(ur_logger_callback_t fn, void *user, ur_logger_level_t level) {
  std::lock_guard<std::mutex> lock(mutex_);
  callback_ = fn;
  callback_user_ = user;
  callback_level_.store(fn ? static_cast<int>(level) : static_cast<int>(UR_LOGGER_LEVEL_QUIET) + 1,
                        std::memory_order_relaxed);
}

void Logger::set_callback_level(ur_logger_level_t level) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (callback_) callback_level_.store(static_cast<int>(level), std::memory_order_relaxed);
}

} // namespace ordo
