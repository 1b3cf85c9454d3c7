// Stream-ordered allocation pools of a context (DESIGN.md §3, §4): the default and
// current pool of each device and the context's host pool, on the ordered pool core.
#pragma once
#include <memory>

#include "common.hpp"
#include "usm_registry.hpp"

namespace ordo::ocl {

class ContextPools {
public:
  explicit ContextPools(ur_context_handle_t c);
  ~ContextPools();
  ContextPools(const ContextPools &) = delete;
  ContextPools &operator=(const ContextPools &) = delete;

  // At urQueueFinish / urEventWait: pools give back memory above their threshold.
  void sync_point();
  // Before a queue's address may be reused for another queue.
  void forget_queue(ur_queue_handle_t q);

  struct Impl;
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

// urUSM{Host,Device,Shared}Alloc with a pool: a block with no pending use.
ur_result_t pool_alloc_now(ur_context_handle_t c, ur_usm_pool_handle_t pool, ur_usm_type_t kind,
                           ur_device_handle_t device, size_t size, size_t alignment, void **out);
// urUSMFree of a pool block: back to its pool at once.
ur_result_t pool_free_now(ur_context_handle_t c, const UsmAllocation &a);

} // namespace ordo::ocl
