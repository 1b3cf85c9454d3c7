// SPDX-License-Identifier: Apache-2.0
// The registry option of the one object model (ordo/object.hpp): the set of live user
// handles, for an adapter that must refuse a handle the user has released while internal
// holders keep its object (native CPU: docs/native-cpu.md), never reading an unknown
// pointer. Header-only; one registry per adapter library. publish() makes an object a
// user handle, lookup() / registry_unwrap() check one, user_retain() / user_release()
// are urXRetain / urXRelease over it. T has handle_type, kKind, kInvalid, count(),
// retain(), release() (the user's count), on_user_released() and drop_hold().
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "ordo/object.hpp"

namespace ordo::ur_common {

// The kinds the registry keeps, each in the three alignment bits of a handle word.
constexpr bool registry_tracks(handle_kind k) {
  return k == handle_kind::context || k == handle_kind::queue || k == handle_kind::event || k == handle_kind::program ||
         k == handle_kind::kernel || k == handle_kind::mem || k == handle_kind::physical_mem ||
         k == handle_kind::usm_pool;
}

class HandleRegistry {
public:
  void add(const void *h, handle_kind kind);
  void remove(const void *h);
  // Inline: a live handle in its home slot (nearly every look-up) costs a probe, no call.
  bool contains(const void *h, handle_kind kind) const;

private:
  bool contains_slow(const void *h, handle_kind kind) const;
};

// Every entry point checks its handles here, so lookups take no lock: each shard is
// an open-addressing table of atomic words (handle | kind), written under the shard's
// mutex and read without it. Removal shifts later entries back towards their home
// slot, so a reader racing with it can pass over an entry that is present: a miss
// (or a handle seen with another kind) is therefore confirmed under the mutex. Tables
// only grow; an outgrown table stays allocated because a reader may still be in it,
// which costs at most as much again as the largest table.
namespace registry_detail {

constexpr size_t kShards = 16;
constexpr uintptr_t kKindBits = 7; // handles are at least 8-byte aligned

struct Table {
  explicit Table(size_t capacity) : mask(capacity - 1), slots(new std::atomic<uintptr_t>[capacity]) {
    for (size_t i = 0; i < capacity; ++i) slots[i].store(0, std::memory_order_relaxed);
  }
  size_t home(uintptr_t handle) const {
    return static_cast<size_t>((handle >> 3) * 0x9E3779B97F4A7C15ull >> 20) & mask;
  }

  const size_t mask;
  std::unique_ptr<std::atomic<uintptr_t>[]> slots;
};

struct Shard {
  std::mutex mu;
  std::atomic<Table *> table{new Table(64)};
  size_t count = 0;             // under mu
  std::vector<Table *> retired; // under mu; never freed (readers)

  // Under mu: the slot holding `handle`, or the empty slot ending its probe.
  static size_t find_slot(const Table &t, uintptr_t handle) {
    size_t i = t.home(handle);
    for (;;) {
      uintptr_t w = t.slots[i].load(std::memory_order_relaxed);
      if (w == 0 || (w & ~kKindBits) == handle) return i;
      i = (i + 1) & t.mask;
    }
  }

  void grow() { // under mu
    Table *old = table.load(std::memory_order_relaxed);
    auto *bigger = new Table((old->mask + 1) * 2);
    for (size_t i = 0; i <= old->mask; ++i) {
      uintptr_t w = old->slots[i].load(std::memory_order_relaxed);
      if (w) bigger->slots[find_slot(*bigger, w & ~kKindBits)].store(w, std::memory_order_relaxed);
    }
    retired.push_back(old);
    table.store(bigger, std::memory_order_release);
  }
};

// Never destroyed: entry points may still run during process exit. Made when the
// library is loaded (no initialisation guard on every look-up, so shard_of inlines);
// no static initialiser of this library registers a handle.
inline Shard *const g_shards = new Shard[kShards];

inline Shard &shard_of(const void *h) {
  auto v = reinterpret_cast<uintptr_t>(h);
  return g_shards[((v >> 4) ^ (v >> 12)) % kShards];
}

// A tracked kind's code in the alignment bits (registry_tracks() lists them).
constexpr uintptr_t code(handle_kind kind) {
  switch (kind) {
  case handle_kind::context: return 0;
  case handle_kind::queue: return 1;
  case handle_kind::event: return 2;
  case handle_kind::program: return 3;
  case handle_kind::kernel: return 4;
  case handle_kind::usm_pool: return 5;
  case handle_kind::mem: return 6;
  case handle_kind::physical_mem: return 7;
  default: return 0;
  }
}

inline uintptr_t word(const void *h, handle_kind kind) { return reinterpret_cast<uintptr_t>(h) | code(kind); }

} // namespace registry_detail

inline void HandleRegistry::add(const void *h, handle_kind kind) {
  using namespace registry_detail;
  if (!registry_tracks(kind)) std::abort(); // publish() checks this at compile time
  Shard &s = shard_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  if ((s.count + 1) * 2 > s.table.load(std::memory_order_relaxed)->mask + 1) {
    s.retired.reserve(s.retired.size() + 1); // may throw before anything changed
    s.grow();
  }
  Table &t = *s.table.load(std::memory_order_relaxed);
  size_t i = Shard::find_slot(t, reinterpret_cast<uintptr_t>(h));
  if (t.slots[i].load(std::memory_order_relaxed) == 0) ++s.count;
  t.slots[i].store(word(h, kind), std::memory_order_release);
}

inline void HandleRegistry::remove(const void *h) {
  using namespace registry_detail;
  Shard &s = shard_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  Table &t = *s.table.load(std::memory_order_relaxed);
  size_t i = Shard::find_slot(t, reinterpret_cast<uintptr_t>(h));
  if (t.slots[i].load(std::memory_order_relaxed) == 0) return;
  --s.count;
  // Backward shift: move each later entry of the cluster into the hole unless its
  // home lies cyclically in (hole, its slot].
  for (size_t j = i;;) {
    j = (j + 1) & t.mask;
    uintptr_t w = t.slots[j].load(std::memory_order_relaxed);
    if (w == 0) break;
    size_t k = t.home(w & ~kKindBits);
    bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    t.slots[i].store(w, std::memory_order_release);
    i = j;
  }
  t.slots[i].store(0, std::memory_order_release);
}

inline bool HandleRegistry::contains(const void *h, handle_kind kind) const {
  using namespace registry_detail;
  if (!registry_tracks(kind)) return false;
  const auto handle = reinterpret_cast<uintptr_t>(h);
  const Table &t = *shard_of(h).table.load(std::memory_order_acquire);
  if (t.slots[t.home(handle)].load(std::memory_order_acquire) == word(h, kind)) return true;
  return contains_slow(h, kind);
}

// The rest of the probe, out of line (the lock makes it a call anyway).
[[gnu::noinline]] inline bool HandleRegistry::contains_slow(const void *h, handle_kind kind) const {
  using namespace registry_detail;
  Shard &s = shard_of(h);
  const auto handle = reinterpret_cast<uintptr_t>(h);
  const Table &t = *s.table.load(std::memory_order_acquire);
  for (size_t i = t.home(handle);; i = (i + 1) & t.mask) {
    uintptr_t w = t.slots[i].load(std::memory_order_acquire);
    if (w == 0) break;
    if ((w & ~kKindBits) == handle) {
      if (w == word(h, kind)) return true;
      break;
    }
  }
  // Not seen, or seen as another kind: make sure under the lock.
  std::lock_guard<std::mutex> lock(s.mu);
  const Table &stable = *s.table.load(std::memory_order_relaxed);
  return stable.slots[Shard::find_slot(stable, handle)].load(std::memory_order_relaxed) == word(h, kind);
}

inline HandleRegistry &registry() {
  static HandleRegistry r; // stateless: the shards above hold the data
  return r;
}

// Makes a new object visible to the user: registered, user count 1.
template <class T> typename T::handle_type publish(T *obj) {
  static_assert(registry_tracks(T::kKind), "the registry has no room for this kind");
  registry().add(obj, T::kKind);
  return reinterpret_cast<typename T::handle_type>(obj);
}

// The object behind a user handle, or nullptr when the handle is not a live
// handle of this kind (never dereferences an unknown pointer).
template <class T> T *lookup(typename T::handle_type h) {
  if (!h || !registry().contains(h, T::kKind)) return nullptr;
  return reinterpret_cast<T *>(h);
}

// unwrap (ordo/object.hpp) with the registry on top: an adapter's `unwrap(handle, T *&)`
// overloads call this, and ur_common's entry points find them by argument-dependent lookup.
template <class T> ur_result_t registry_unwrap(typename T::handle_type h, T *&out) {
  out = lookup<T>(h);
  return out ? UR_RESULT_SUCCESS : h ? T::kInvalid : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// urXRetain / urXRelease for registry-tracked handles.
template <class T> ur_result_t UR_APICALL user_retain(typename T::handle_type h) {
  T *obj = nullptr;
  if (ur_result_t r = registry_unwrap(h, obj)) return r;
  if (!obj->retain_user()) return ordo::invalid_of(obj);
  return UR_RESULT_SUCCESS;
}
template <class T> ur_result_t UR_APICALL user_release(typename T::handle_type h) {
  T *obj = nullptr;
  if (ur_result_t r = registry_unwrap(h, obj)) return r;
  bool last_ = false;
  if (!obj->release_user(last_)) return ordo::invalid_of(obj);
  if (last_) {
    registry().remove(obj);
    obj->on_user_released();
    obj->drop_hold();
  }
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::ur_common

// `Type *var` from a registry-tracked `handle`, or return the refusal from the entry point.
#define ORDO_LOOKUP(Type, var, handle)                                                                                 \
  Type *var = nullptr;                                                                                                 \
  do {                                                                                                                 \
    if (ur_result_t lookup_result_ = ::ordo::ur_common::registry_unwrap(handle, var)) return lookup_result_;           \
  } while (0)
