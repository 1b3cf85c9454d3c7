// A context: the device it holds (always the host CPU), its USM allocations and
// its USM pools.
#pragma once
#include <memory>
#include <mutex>

#include "common.hpp"
#include "pool_hooks.hpp"

namespace nc {

struct Context : Object<Context> {
  using handle_type = ur_context_handle_t;
  static constexpr Kind kKind = Kind::Context;
  static ur_result_t invalid_handle(ur_context_handle_t h) {
    return bad_handle(h, UR_RESULT_ERROR_INVALID_CONTEXT);
  }

  Context();
  // Destroys its default pools, frees the USM allocations still made in this context
  // and calls the extended deleter.
  ~Context();
  // Pools drop the events of frees that have completed (they hold the context).
  void on_user_released();

  PoolHooks pool_hooks{*this};
  // Its pools, plain USM allocations and ordering knowledge (the stream-ordered layer).
  const std::unique_ptr<ordo::so::context_pools> pools;
  std::mutex mu;
  ur_context_extended_deleter_t deleter = nullptr; // under mu
  void *deleter_data = nullptr;
};
ORDO_HANDLE_CHECK(Context);

inline ur_context_handle_t to_handle(Context *c) { return reinterpret_cast<ur_context_handle_t>(c); }

} // namespace nc
