#include "usm_registry.hpp"

#include <mutex>

namespace ordo::ocl {

void UsmRegistry::insert(const UsmAllocation &a) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  by_base_[reinterpret_cast<uintptr_t>(a.base)] = a;
}

bool UsmRegistry::find(const void *p, UsmAllocation &out) const {
  uintptr_t key = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = by_base_.upper_bound(key);
  if (it == by_base_.begin()) return false;
  --it;
  if (key >= it->first + it->second.size) return false;
  out = it->second;
  return true;
}

bool UsmRegistry::erase(const void *base, UsmAllocation *out) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = by_base_.find(reinterpret_cast<uintptr_t>(base));
  if (it == by_base_.end()) return false;
  if (out) *out = it->second;
  by_base_.erase(it);
  return true;
}

std::vector<UsmAllocation> UsmRegistry::take_all() {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  std::vector<UsmAllocation> all;
  all.reserve(by_base_.size());
  for (auto &kv : by_base_) all.push_back(kv.second);
  by_base_.clear();
  return all;
}

size_t UsmRegistry::size() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return by_base_.size();
}

} // namespace ordo::ocl
