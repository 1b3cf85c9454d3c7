// A context: the device it holds (always the host CPU), its USM allocations and
// its USM pools.
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "common.hpp"
#include "pool_hooks.hpp"

namespace nc {

struct Context : Object<Context> {
  using handle_type = ur_context_handle_t;
  static constexpr handle_kind kKind = handle_kind::context;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_CONTEXT;

  Context();
  // Destroys its default pools, frees the USM allocations still made in this context
  // and calls the extended deleter.
  ~Context();
  // Pools drop the events of frees that have completed (they hold the context).
  void on_user_released();

  // Unfinished commands of every queue of the context, released queues included:
  // urUSMFree waits for them (docs/native-cpu.md, "USM").
  void command_started() noexcept { unfinished.fetch_add(1, std::memory_order_seq_cst); }
  void command_finished() noexcept;
  // Blocks until no command of the context is unfinished. Not on a worker thread.
  void wait_idle();

  PoolHooks pool_hooks{*this};
  // Its pools, plain USM allocations and ordering knowledge (the stream-ordered layer).
  const std::unique_ptr<ordo::so::context_pools> pools;
  std::mutex mu;
  ur_context_extended_deleter_t deleter = nullptr; // under mu
  void *deleter_data = nullptr;

private:
  std::atomic<uint64_t> unfinished{0};
  std::atomic<uint32_t> idle_waiters{0}; // finishers notify only when someone waits
  std::mutex idle_mu;
  std::condition_variable idle_cv;
};
ORDO_HANDLE_CHECK(Context);

inline ur_context_handle_t to_handle(Context *c) { return reinterpret_cast<ur_context_handle_t>(c); }

} // namespace nc
