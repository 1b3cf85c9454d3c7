// SPDX-License-Identifier: Apache-2.0
// Which context's USM memory an address lies in, across every context of one adapter
// library (an adapter's context_pools knows only its own context): lets a CPU adapter
// tell another context's allocation from system memory and refuse a command on it
// (INVALID_MEM_OBJECT) instead of writing there. Never destroyed: contexts may outlive
// static destructors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace ordo {

template <class Owner> class usm_owners {
public:
  static usm_owners &instance() {
    static usm_owners *all = new usm_owners;
    return *all;
  }
  void note(const void *base, size_t size, Owner owner) { // may throw
    std::unique_lock<std::shared_mutex> lock(mu_);
    ranges_[reinterpret_cast<uintptr_t>(base)] = {size, owner};
  }
  void forget(const void *base) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    ranges_.erase(reinterpret_cast<uintptr_t>(base));
  }
  // The owner of the memory holding `p`, or Owner{}.
  Owner owner_of(const void *p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = ranges_.upper_bound(a);
    if (it == ranges_.begin()) return Owner{};
    --it;
    return a - it->first < it->second.first ? it->second.second : Owner{};
  }

private:
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, std::pair<size_t, Owner>> ranges_;
};

} // namespace ordo
