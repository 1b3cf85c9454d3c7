// SPDX-License-Identifier: Apache-2.0
// Contexts over the one device: urContext* are ur_common/context.hpp's, with the handle
// registry, plain USM memory from the C heap, and the pools' hooks (PoolHooks).
#include <cstdlib>
#include <cstring>

#include "context.hpp"
#include "entry_points.hpp"
#include "event.hpp"
#include "queue.hpp"
#include "ur_common/context.hpp"

namespace ordo::native_cpu {

// seq_cst on both counters: a finisher that reads no waiter after its decrement is
// ordered before the waiter's own check of the count (no lost wake-up).
void Context::command_finished() noexcept {
  if (unfinished.fetch_sub(1, std::memory_order_seq_cst) == 1 && idle_waiters.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(idle_mu);
    idle_cv.notify_all();
  }
}

void Context::wait_idle() {
  std::unique_lock<std::mutex> lock(idle_mu);
  idle_waiters.fetch_add(1, std::memory_order_seq_cst);
  idle_cv.wait(lock, [&] { return unfinished.load(std::memory_order_seq_cst) == 0; });
  idle_waiters.fetch_sub(1, std::memory_order_seq_cst);
}

PoolHooks::PoolHooks(Context *ctx) : pool_hooks_base(ctx) {}
PoolHooks::~PoolHooks() = default;

// One class: all of it is host memory (primary kind DEVICE, as every kind is the same).
ur_result_t PoolHooks::memory_class(ur_usm_type_t, ur_device_handle_t, ordo::stream_ordered::mem_class &out) {
  out = ordo::stream_ordered::mem_class{device_handle(), UR_USM_TYPE_DEVICE};
  return UR_RESULT_SUCCESS;
}

// Chunks start on a page: big ones are mapped memory, and blocks never straddle
// another allocation's cache lines.
void *PoolHooks::get_chunk(const ordo::stream_ordered::mem_class &, size_t size) {
  void *p = nullptr;
  if (posix_memalign(&p, 4096, size) != 0) return nullptr;
  try {
    note_usm_memory(p, size, *ctx_);
  } catch (...) {
    std::free(p);
    return nullptr;
  }
  return p;
}

void PoolHooks::put_chunk(const ordo::stream_ordered::mem_class &, void *base, size_t) { free_usm_memory(base); }
void PoolHooks::free_plain(void *base, ur_usm_type_t, ur_device_handle_t) { free_usm_memory(base); }

bool PoolHooks::event_complete(ur_event_handle_t ev) { return reinterpret_cast<Event *>(ev)->terminal(); }

ur_result_t PoolHooks::zero_now(ur_usm_type_t, ur_device_handle_t, void *p, size_t size) {
  std::memset(p, 0, size);
  return UR_RESULT_SUCCESS;
}

namespace {

struct context_hooks {
  using Context = ordo::native_cpu::Context;
  using Device = ordo::native_cpu::Device;
  static ur_result_t check_device(const std::vector<Device *> &, Device *) { return UR_RESULT_SUCCESS; }
  static ur_result_t create(const std::vector<Device *> &, Context *&out) {
    out = new Context;
    publish(out);
    return UR_RESULT_SUCCESS;
  }
  static void destroy(Context *) {}
  static ur_result_t native_handle(Context *ctx, ur_native_handle_t *out) {
    *out = reinterpret_cast<ur_native_handle_t>(ctx);
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::ur_common::context_entry_points<context_hooks>;

} // namespace

void context_drop(Context *ctx) { entry_points::drop(ctx); }
// urContext*, and the stream-ordered layer's urUSMPool* with this adapter's context
// lookup; host registration is served, as the device is the host (PoolHooks::pin_host).
void install_context_entry_points(ur_dditable_t &t) {
  entry_points::install(t);
  ordo::ur_common::install_pool_entry_points<Context, Device>(t, true);
}

} // namespace ordo::native_cpu
