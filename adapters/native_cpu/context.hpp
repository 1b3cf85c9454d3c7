// SPDX-License-Identifier: Apache-2.0
// A context: the device it holds (always the host CPU), its USM allocations and
// its USM pools with their hooks into the stream-ordered layer. urContext* are
// ur_common/context.hpp's (context.cpp).
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "common.hpp"
#include "platform.hpp"
#include "ur_common/pool_hooks.hpp"

namespace ordo::native_cpu {

struct Context;
struct Event;
class AsyncCommand;
void context_drop(Context *ctx); // the last holder tears the context down (context.cpp)

// The stream-ordered layer's hooks (docs/async-alloc.md): every USM kind is host memory,
// one memory class; an internal dependency is an order-only edge (AsyncCommand).
class PoolHooks final : public ordo::ur_common::pool_hooks_base<Context, Device, Event, AsyncCommand> {
public:
  explicit PoolHooks(Context *ctx); // out of line: the base's members need Event and AsyncCommand
  ~PoolHooks() override;
  ORDO_POOL_HOOKS_OVERRIDES;
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  // The device is the host: registered pages need no pinning or mapping.
  ur_result_t pin_host(void *, size_t, bool) override { return UR_RESULT_SUCCESS; }
};

struct Context : Object<Context> {
  using handle_type = ur_context_handle_t;
  static constexpr handle_kind kKind = handle_kind::context;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_CONTEXT;

  // The user's count reached zero: the handle leaves the registry at once, while
  // queues, events and memory objects may still hold the context.
  bool release_user(bool &last) {
    if (!Object<Context>::release_user(last)) return false;
    if (last) registry().remove(this);
    return true;
  }
  // Hides Object's: ur_common's teardown (pools, plain allocations, deleter).
  void drop_hold() noexcept { context_drop(this); }
  int index_of(const Device *d) const { return d == &the_device() ? 0 : -1; }

  // Unfinished commands of every queue of the context, released queues included:
  // urUSMFree waits for them (docs/native-cpu.md, "USM").
  void command_started() noexcept { unfinished.fetch_add(1, std::memory_order_seq_cst); }
  void command_finished() noexcept;
  // Blocks until no command of the context is unfinished. Not on a worker thread.
  void wait_idle();

  std::vector<Device *> devices; // the one device
  PoolHooks pool_hooks{this};
  // Its pools, plain USM allocations and ordering knowledge (the stream-ordered layer).
  std::unique_ptr<ordo::stream_ordered::context_pools> pools;
  ur_context_extended_deleter_t deleter = nullptr;
  void *deleter_data = nullptr;

private:
  std::atomic<uint64_t> unfinished{0};
  std::atomic<uint32_t> idle_waiters{0}; // finishers notify only when someone waits
  std::mutex idle_mu;
  std::condition_variable idle_cv;
};
ORDO_HANDLE_CHECK(Context);

inline ur_context_handle_t to_handle(Context *c) { return reinterpret_cast<ur_context_handle_t>(c); }
inline void context_hold(Context *c) { c->hold(); } // for ur_common/pool_hooks.hpp

// A USM range a command of `ctx` uses (usm.cpp; docs/native-cpu.md, "USM"): INVALID_SIZE
// past its allocation or the address space, INVALID_MEM_OBJECT in another context's USM
// memory; system memory is accessible too.
ur_result_t check_usm_range(Context &ctx, const void *p, size_t bytes);

// Every context's USM memory (plain allocations and pool chunks), for telling another
// context's pointer from system memory. Callers keep it in step with the memory.
void note_usm_memory(const void *base, size_t size, const Context &owner); // may throw
void free_usm_memory(void *base);                                          // forgets it, then frees it

inline ur_result_t unwrap(ur_context_handle_t h, Context *&out) { return registry_unwrap(h, out); } // common.hpp

} // namespace ordo::native_cpu
