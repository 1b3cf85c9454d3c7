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

// The hooks into the stream-ordered layer (docs/async-alloc.md, docs/adapter-guide.md) on
// ur_common's pool_hooks_base: every USM kind is host memory here, so one memory class
// serves them all; events are the scheduler's; an internal dependency is one more
// order-only edge of the alloc command (AsyncCommand).
class PoolHooks final : public ordo::ur_common::pool_hooks_base<Context, Device, Event, AsyncCommand> {
public:
  // Out of line, so the base's members are made where Event and Context are complete.
  explicit PoolHooks(Context *ctx);
  ~PoolHooks() override;
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  void *get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) override;
  void put_chunk(const ordo::stream_ordered::mem_class &c, void *base, size_t size) override;
  bool event_complete(ur_event_handle_t ev) override;
  ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) override;
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

// USM memory facts (usm.cpp). The check of a USM range [p, p + bytes) that a command
// of `ctx` uses: SUCCESS for a range inside one plain allocation of `ctx`, in its pool
// memory, or in memory that is no context's (system memory is accessible too);
// INVALID_SIZE for a range that runs past its allocation or the address space;
// INVALID_MEM_OBJECT when p lies in another context's USM memory (docs/native-cpu.md, "USM").
ur_result_t check_usm_range(Context &ctx, const void *p, size_t bytes);

// Every context's USM memory (plain allocations and pool chunks), for telling another
// context's pointer from system memory. Callers keep it in step with the memory.
void note_usm_memory(const void *base, size_t size, const Context &owner); // may throw
void forget_usm_memory(const void *base);

inline ur_result_t unwrap(ur_context_handle_t h, Context *&out) { return registry_unwrap(h, out); } // common.hpp

} // namespace ordo::native_cpu
