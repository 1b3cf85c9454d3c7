// Every USM allocation this adapter made: pointer -> (base, size, type, context,
// device). Answers interior pointers in O(log n).
#pragma once
#include <cstddef>
#include <map>
#include <shared_mutex>

#include "ur_api.h"

namespace nc {

struct Context;

struct UsmAllocation {
  void *base = nullptr;
  size_t size = 0;
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  Context *context = nullptr;
  ur_device_handle_t device = nullptr; // null for host allocations
  ur_usm_pool_handle_t pool = nullptr; // null: not from a pool
};

class UsmRegistry {
public:
  void add(const UsmAllocation &a);
  // Removes the allocation that starts exactly at `base` in `ctx`; false if none.
  bool take(const Context *ctx, const void *base, UsmAllocation *out);
  // The allocation containing `p` (any byte of it), in any context.
  bool find(const void *p, UsmAllocation *out) const;
  // Frees every allocation of `ctx` (context destruction); returns how many.
  size_t free_all(const Context *ctx);
  size_t size() const;

private:
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, UsmAllocation> by_base_;
};

UsmRegistry &usm_registry();

// True when [p, p + bytes) lies inside one allocation, or p is not ours at all
// (system memory is accessible too). False when it runs past a USM allocation.
bool usm_range_ok(const void *p, size_t bytes);

} // namespace nc
