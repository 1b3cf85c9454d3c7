// SPDX-License-Identifier: Apache-2.0
#include "tracing.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "enum_names.gen.hpp"
#include "loader_state.hpp"
#include "ordo/secure_env.hpp"

namespace ordo {
namespace loader {
namespace {

// Tracing is asked for explicitly, so by default it goes to stdout at info level;
// UR_LOG_TRACING still overrides any part of that.
Logger &trace_log() {
  static Logger *l = [] {
    Logger *logger = &immortal<Logger>("tracing");
    logger->configure("level:info;output:stdout;flush:info");
    if (const char *cfg = secure_env("UR_LOG_TRACING")) logger->configure(cfg);
    return logger;
  }();
  return *l;
}

std::atomic<ur_code_location_callback_t> g_codeloc{nullptr};
std::atomic<void *> g_codeloc_data{nullptr};

} // namespace

bool tracing_enabled() { return trace_log().enabled(LogLevel::info); }

void set_code_location_callback(ur_code_location_callback_t cb, void *data) {
  g_codeloc_data.store(data, std::memory_order_relaxed);
  g_codeloc.store(cb, std::memory_order_release);
}

TracedCall::TracedCall() {
  if (auto cb = g_codeloc.load(std::memory_order_acquire)) {
    where_ = cb(g_codeloc_data.load(std::memory_order_relaxed));
    have_where_ = true;
  }
  start_ = clock::now();
}

void put_string(std::string &a, const char *s) {
  if (!s) {
    a += "nullptr";
    return;
  }
  a += '"';
  size_t n = 0;
  for (; s[n] && n < 200; ++n) a += s[n];
  if (s[n]) a += "...";
  a += '"';
}

void TracedCall::emit(const char *function, const std::string &args, ur_result_t result) const {
  const char *name = enum_name(result);
  std::string where;
  if (have_where_ && where_.sourceFile) {
    where = std::string(" at ") + where_.sourceFile + ":" + std::to_string(where_.lineNumber);
    if (where_.functionName) where += std::string(" in ") + where_.functionName;
  }
  if (name)
    trace_log().log(LogLevel::info, "%s(%s) -> %s (%" PRIu64 " ns)%s", function, args.c_str(), name, ns_,
                    where.c_str());
  else
    trace_log().log(LogLevel::info, "%s(%s) -> %d (%" PRIu64 " ns)%s", function, args.c_str(), static_cast<int>(result),
                    ns_, where.c_str());
}

} // namespace loader
} // namespace ordo
