// A context: the device it holds (always the host CPU) and its USM allocations.
#pragma once
#include <mutex>

#include "common.hpp"

namespace nc {

struct Context : Object<Context> {
  using handle_type = ur_context_handle_t;
  static constexpr Kind kKind = Kind::Context;
  static ur_result_t invalid_handle(ur_context_handle_t h) {
    return bad_handle(h, UR_RESULT_ERROR_INVALID_CONTEXT);
  }

  Context() = default;
  // Frees the USM allocations still made in this context and calls the extended deleter.
  ~Context();
  void on_user_released() {}

  std::mutex mu;
  ur_context_extended_deleter_t deleter = nullptr; // under mu
  void *deleter_data = nullptr;
};
ORDO_HANDLE_CHECK(Context);

inline ur_context_handle_t to_handle(Context *c) { return reinterpret_cast<ur_context_handle_t>(c); }

} // namespace nc
