#include "handle_registry.hpp"

#include <mutex>
#include <unordered_map>

namespace nc {

namespace {
// Sharded by pointer so that threads working on different handles rarely meet.
constexpr size_t kShards = 16;
struct Shard {
  mutable std::mutex mu;
  std::unordered_map<const void *, Kind> live;
};

// Never destroyed: entry points may still run during process exit.
Shard *shards() {
  static Shard *s = new Shard[kShards];
  return s;
}

Shard &shard_of(const void *h) {
  auto v = reinterpret_cast<uintptr_t>(h);
  return shards()[((v >> 4) ^ (v >> 12)) % kShards];
}
} // namespace

void HandleRegistry::add(const void *h, Kind kind) {
  Shard &s = shard_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  s.live[h] = kind;
}

void HandleRegistry::remove(const void *h) {
  Shard &s = shard_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  s.live.erase(h);
}

bool HandleRegistry::contains(const void *h, Kind kind) const {
  Shard &s = shard_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.live.find(h);
  return it != s.live.end() && it->second == kind;
}

HandleRegistry &registry() {
  static HandleRegistry r; // stateless: the shards above hold the data
  return r;
}

} // namespace nc
