#include "usm_registry.hpp"

#include <cstdlib>
#include <mutex>

namespace nc {

void UsmRegistry::add(const UsmAllocation &a) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  by_base_[reinterpret_cast<uintptr_t>(a.base)] = a;
}

bool UsmRegistry::take(const Context *ctx, const void *base, UsmAllocation *out) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = by_base_.find(reinterpret_cast<uintptr_t>(base));
  if (it == by_base_.end() || it->second.context != ctx) return false;
  *out = it->second;
  by_base_.erase(it);
  return true;
}

bool UsmRegistry::find(const void *p, UsmAllocation *out) const {
  auto addr = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = by_base_.upper_bound(addr); // first allocation starting after p
  if (it == by_base_.begin()) return false;
  --it;
  if (addr - it->first >= it->second.size) return false;
  *out = it->second;
  return true;
}

size_t UsmRegistry::free_all(const Context *ctx) {
  size_t n = 0;
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (auto it = by_base_.begin(); it != by_base_.end();) {
    if (it->second.context == ctx) {
      std::free(it->second.base);
      it = by_base_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

size_t UsmRegistry::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return by_base_.size();
}

UsmRegistry &usm_registry() {
  static UsmRegistry *r = new UsmRegistry; // outlives static destructors
  return *r;
}

bool usm_range_ok(const void *p, size_t bytes) {
  UsmAllocation a;
  if (!usm_registry().find(p, &a)) return true;
  size_t offset = static_cast<const char *>(p) - static_cast<const char *>(a.base);
  return bytes <= a.size - offset;
}

} // namespace nc
