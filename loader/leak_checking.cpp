// SPDX-License-Identifier: Apache-2.0
// UR_LAYER_LEAK_CHECKING's registry: the reference count of every handle seen created,
// retained and released through the loader, reported at teardown.
#include <cinttypes>
#include <map>
#include <mutex>
#include <unordered_set>

#include "layers_internal.hpp"
#include "loader_state.hpp"

namespace ordo {
namespace loader {
namespace {

struct Tracked {
  const char *type;
  uint64_t references;
  uint64_t order; // creation order, so the report lists handles oldest first
  bool nameable_after_release = false;
};

struct Registry {
  std::mutex mutex;
  std::map<const void *, Tracked> handles;
  uint64_t next_order = 0;
  // Handles whose count reached zero, while released-handle checks are on. An address
  // leaves the set when a call hands it out again (the adapter reused the memory).
  std::unordered_set<const void *> released;
  bool checks_on = false;

  // Caller holds the mutex.
  void forget_released(const void *handle) {
    if (released.erase(handle)) g_released_handles.store(released.size(), std::memory_order_relaxed);
  }
};

Registry &registry() { return immortal<Registry>(); }
Logger &leak_log() { return immortal<Logger>("leak_checking"); }

} // namespace

std::atomic<size_t> g_released_handles{0};

void leak_created(const char *type, const void *handle) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  // Getters such as urAdapterGet hand out the same handle again with one more reference.
  r.forget_released(handle);
  auto it = r.handles.find(handle);
  if (it != r.handles.end())
    ++it->second.references;
  else
    r.handles.emplace(handle, Tracked{type, 1, r.next_order++});
}

void leak_adopted(const char *type, const void *handle) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  // An alive handle handed back is the caller's own reference, not a second one.
  r.forget_released(handle);
  if (!r.handles.count(handle)) r.handles.emplace(handle, Tracked{type, 1, r.next_order++});
}

void leak_retained(const char *type, const void *handle) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.handles.find(handle);
  if (it != r.handles.end()) {
    ++it->second.references;
    return;
  }
  ORDO_LOG(leak_log(), warning, "retain of %s %p, which was not created through the loader", type, handle);
}

void leak_released(const char *type, const void *handle) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.handles.find(handle);
  if (it == r.handles.end()) {
    ORDO_LOG(leak_log(), warning,
             "release of %s %p, which is not alive (released too often, or not created through "
             "the loader)",
             type, handle);
    return;
  }
  if (--it->second.references > 0) return;
  if (r.checks_on && !it->second.nameable_after_release) {
    r.released.insert(handle);
    g_released_handles.store(r.released.size(), std::memory_order_relaxed);
  }
  r.handles.erase(it);
}

void set_released_handle_checks(bool on) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.checks_on = on;
  if (!on) {
    r.released.clear();
    g_released_handles.store(0, std::memory_order_relaxed);
  }
}

bool handle_released(const void *handle) {
  if (!handle) return false;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.released.count(handle) != 0;
}

void handle_nameable_after_release(const void *handle) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.handles.find(handle);
  if (it != r.handles.end()) it->second.nameable_after_release = true;
}

size_t leak_report() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::multimap<uint64_t, std::pair<const void *, Tracked>> by_age;
  for (auto &h : r.handles) by_age.emplace(h.second.order, h);
  for (auto &entry : by_age) {
    const Tracked &t = entry.second.second;
    ORDO_LOG(leak_log(), error, "leak: %s %p still alive with reference count %" PRIu64, t.type, entry.second.first,
             t.references);
  }
  size_t n = r.handles.size();
  if (n) ORDO_LOG(leak_log(), error, "%zu handle%s leaked", n, n == 1 ? "" : "s");
  r.handles.clear();
  return n;
}

} // namespace loader
} // namespace ordo
