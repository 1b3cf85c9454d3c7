// SPDX-License-Identifier: Apache-2.0
// The mock adapter's objects (adapters/mock/README in docs/loader.md, "Mock adapter").
//
// Every object is a mock::Object: an ordo::object (ordo/object.hpp: the dispatch table
// first, its kind) that also says whether it is still alive. Released objects are kept, marked dead,
// until the adapter's last reference goes, so a second release or a use after release
// is answered with an error instead of touching freed memory.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ur_api.h"

namespace mock {

using ordo::handle_kind;

struct Object : ordo::object {
  std::atomic<bool> alive{true};
  explicit Object(handle_kind k) : ordo::object(k) {}
};
ORDO_HANDLE_CHECK(Object);

// The object behind `handle` if it is a live mock object of T's kind, else null (a
// foreign adapter's handle included: ordo::is_a reads only its first word).
template <class T> T *live(const void *handle) {
  if (!ordo::is_a<T>(handle)) return nullptr;
  auto *o = static_cast<T *>(const_cast<void *>(handle));
  return o->alive.load(std::memory_order_acquire) ? o : nullptr;
}

// Owns every object created after the adapter's first reference; frees the dead ones
// when the adapter's last reference is released.
class Registry {
public:
  template <class T, class... A> T *create(A &&...args) {
    // Handles have no virtual destructor: each is deleted as its own type.
    Owned obj(new T(std::forward<A>(args)...), [](Object *o) { delete static_cast<T *>(o); });
    T *raw = static_cast<T *>(obj.get());
    std::lock_guard<std::mutex> lock(mutex_);
    objects_.push_back(std::move(obj));
    return raw;
  }
  void purge_dead();

private:
  using Owned = std::unique_ptr<Object, void (*)(Object *)>;
  std::mutex mutex_;
  std::vector<Owned> objects_;
};
Registry &registry();

// Nanoseconds on the steady clock: the mock's device and host timestamps.
inline uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Each file fills its part of the table.
void fill_adapter(ur_dditable_t &t);
void fill_platform(ur_dditable_t &t);
void fill_device(ur_dditable_t &t);
void fill_context(ur_dditable_t &t);
void fill_queue(ur_dditable_t &t);
void fill_event(ur_dditable_t &t);
void fill_enqueue(ur_dditable_t &t);
void fill_usm(ur_dditable_t &t);

} // namespace mock

struct ur_adapter_handle_t_ : mock::Object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::adapter;
  ur_adapter_handle_t_() : Object(kKind) { ref_count.store(0); }
  std::mutex logger_mutex;
  ur_logger_callback_t logger = nullptr;
  void *logger_data = nullptr;
  ur_logger_level_t logger_level = UR_LOGGER_LEVEL_QUIET;
};

struct ur_platform_handle_t_ : mock::Object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::platform;
  ur_platform_handle_t_() : Object(kKind) {}
};

struct ur_device_handle_t_ : mock::Object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::device;
  ur_device_handle_t_() : Object(kKind) {}
};

struct ur_context_handle_t_ : mock::Object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::context;
  ur_context_handle_t_() : Object(kKind) {}
  std::mutex mutex; // guards the deleter
  ur_context_extended_deleter_t deleter = nullptr;
  void *deleter_data = nullptr;
};

struct ur_queue_handle_t_ : mock::Object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::queue;
  ur_queue_handle_t_(ur_context_handle_t c, ur_device_handle_t d, ur_queue_flags_t f)
      : Object(kKind), context(c), device(d), flags(f) {}
  ur_context_handle_t context;
  ur_device_handle_t device;
  ur_queue_flags_t flags;
};

struct ur_event_handle_t_ : mock::Object {
  static constexpr ordo::handle_kind kKind = ordo::handle_kind::event;
  ur_event_handle_t_(ur_queue_handle_t q, ur_context_handle_t c, ur_command_t cmd)
      : Object(kKind), queue(q), context(c), command(cmd), queued(mock::now_ns()) {}
  ur_queue_handle_t queue; // null for a user event
  ur_context_handle_t context;
  ur_command_t command;
  uint64_t queued; // every mock command completes when enqueued: one timestamp
};

namespace mock {
// The singletons: one adapter, one platform, one device.
ur_adapter_handle_t the_adapter();
ur_platform_handle_t the_platform();
ur_device_handle_t the_device();
// Drops one reference of a context (a queue's reference when the queue goes).
ur_result_t release_context(ur_context_handle_t c);
// A completed event for a command of `q` (what every mock enqueue produces).
ur_event_handle_t completed_event(ur_queue_handle_t q, ur_command_t command);
// The mock USM allocator's view of a pointer (false when the mock did not allocate it).
bool usm_lookup(const void *ptr, ur_usm_type_t &type, void *&base, size_t &size);
} // namespace mock
