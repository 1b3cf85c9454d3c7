// Every USM allocation of a context, by address: answers urUSMGetMemAllocInfo and
// lets urUSMFree refuse pointers it never handed out (or already freed).
#pragma once
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <vector>

#include "ur_api.h"

namespace ordo::ocl {

struct UsmAllocation {
  void *base = nullptr;
  size_t size = 0;
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  ur_device_handle_t device = nullptr;  // null for host memory
  ur_usm_pool_handle_t pool = nullptr;  // the pool that served it, if any
  void *raw = nullptr;                   // what the backend gave (base rounded up from it)
};

class UsmRegistry {
public:
  void insert(const UsmAllocation &a);
  // The allocation that contains `p` (its first byte or any later one).
  bool find(const void *p, UsmAllocation &out) const;
  // Removes the allocation that starts exactly at `base`; false if there is none.
  bool erase(const void *base, UsmAllocation *out = nullptr);
  // Empties the registry, returning what was in it.
  std::vector<UsmAllocation> take_all();
  size_t size() const;

private:
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, UsmAllocation> by_base_;
};

} // namespace ordo::ocl
