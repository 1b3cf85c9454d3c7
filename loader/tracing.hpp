// SPDX-License-Identifier: Apache-2.0
// UR_LAYER_TRACING's printing helpers, used by the generated tracing_layer.gen.cpp.
// One line per call, after it returns:
//   <tracing>[INFO]: urQueueFlush(.hQueue = 0x5581c0e0) -> UR_RESULT_SUCCESS (84 ns)
#pragma once
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <type_traits>

#include "enum_names.gen.hpp"
#include "ur_api.h"

namespace ordo {
namespace loader {

// The logger named "tracing" is at info level or below.
bool tracing_enabled();
// Set when the layer chain is built (urLoaderConfigSetCodeLocationCallback).
void set_code_location_callback(ur_code_location_callback_t cb, void *data);

class TracedCall {
public:
  TracedCall();
  void stop() { ns_ = static_cast<uint64_t>((clock::now() - start_).count()); }
  void emit(const char *function, const std::string &args, ur_result_t result) const;

private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
  uint64_t ns_ = 0;
  ur_code_location_t where_{};
  bool have_where_ = false;
};

inline void arg(std::string &a, const char *name) {
  if (!a.empty()) a += ", ";
  a += '.';
  a += name;
  a += " = ";
}

inline void put_ptr(std::string &a, const void *p) {
  if (!p) {
    a += "nullptr";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  a += buf;
}

inline void put_hex(std::string &a, uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  a += buf;
}

template <class T> void put_int(std::string &a, T v) {
  static_assert(std::is_integral<T>::value, "integers only");
  a += std::to_string(v);
}

inline void put_bool(std::string &a, bool v) { a += v ? "true" : "false"; }

void put_string(std::string &a, const char *s);
inline void put_flags(std::string &a, const std::string &names) { a += names; }

template <class E> void put_enum(std::string &a, E v) {
  if (const char *n = enum_name(v))
    a += n;
  else
    a += std::to_string(static_cast<long long>(v));
}

// An input array of handles: the first few entries.
template <class H> void put_handles(std::string &a, const H *list, uint64_t count) {
  if (!list) {
    a += "nullptr";
    return;
  }
  a += '{';
  const uint64_t shown = count < 8 ? count : 8;
  for (uint64_t i = 0; i < shown; ++i) {
    if (i) a += ", ";
    put_ptr(a, list[i]);
  }
  if (count > shown) a += ", ...";
  a += '}';
}

// An out-handle: its address, then (on success) the handle written there.
template <class H> void put_out_ptr(std::string &a, H *p, ur_result_t r) {
  put_ptr(a, p);
  if (p && r == UR_RESULT_SUCCESS) {
    a += " (";
    put_ptr(a, *p);
    a += ')';
  }
}

// An out-integer: its address, then (on success) the value written there.
template <class T> void put_out_int(std::string &a, T *p, ur_result_t r) {
  put_ptr(a, p);
  if (p && r == UR_RESULT_SUCCESS) {
    a += " (";
    a += std::to_string(*p);
    a += ')';
  }
}

inline void put_rect(std::string &a, const ur_rect_offset_t &v) {
  a += "{.x = " + std::to_string(v.x) + ", .y = " + std::to_string(v.y) + ", .z = " + std::to_string(v.z) + "}";
}
inline void put_rect(std::string &a, const ur_rect_region_t &v) {
  a += "{.width = " + std::to_string(v.width) + ", .height = " + std::to_string(v.height) +
       ", .depth = " + std::to_string(v.depth) + "}";
}

} // namespace loader
} // namespace ordo
