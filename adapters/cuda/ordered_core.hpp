// The ordered pool core (docs/ordered-pool.md) behind the CUDA adapter's user
// pools: chunks from cuMemAlloc / cuMemHostAlloc / cuMemAllocManaged, release
// events that are the free commands' UR events, internal dependencies as
// cuStreamWaitEvent. User pools need exact limits and statistics, which the
// driver's native pools (32 MiB reservation granularity) cannot give.
#pragma once
#include <memory>

#include <ordo_pool/ordered_pool.hpp>

#include "common.hpp"

namespace ordo::cuda {

// The command an allocation is enqueued as: internal dependencies go to its stream.
struct CoreCommand {
  CUstream stream = nullptr;
};

class CorePool final : public ordo::pool::backend {
public:
  // A growing core for `kind` memory of `dev` (null for host memory), or, with
  // `user_memory`, a fixed one carved from the caller's range.
  CorePool(Context *ctx, MemKind kind, Device *dev, const ordo::pool::pool_config &cfg,
           void *user_memory = nullptr, size_t user_size = 0);
  ~CorePool() override;
  CorePool(const CorePool &) = delete;
  CorePool &operator=(const CorePool &) = delete;

  ordo::pool::ordered_pool &pool() { return *pool_; }
  MemKind kind() const { return kind_; }

  void *get_chunk(std::size_t size) override;
  void put_chunk(void *base, std::size_t size) override;
  bool event_complete(ordo::pool::event_handle ev) override;
  bool add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) override;
  void retain_event(ordo::pool::event_handle ev) override;
  void release_event(ordo::pool::event_handle ev) override;

private:
  Context *ctx_;
  MemKind kind_;
  Device *dev_; // the device whose context the chunks are made in
  std::unique_ptr<ordo::pool::ordered_pool> pool_;
};

// The ur_result_t for a core status, per kind of memory.
ur_result_t core_result(ordo::pool::status s, MemKind kind);

// Registers a new core with its context / unregisters it (before deletion).
void core_register(Context *ctx, CorePool *core);
void core_unregister(Context *ctx, CorePool *core);

} // namespace ordo::cuda
