// SPDX-License-Identifier: Apache-2.0
// The parts of the stream-ordered layer's context_hooks (docs/adapter-guide.md) that do
// not depend on the backend, for adapters whose commands are `Cmd` objects with
// wait_for(Ev *) and whose events are reference counted with an order_node: the
// adapter's PoolHooks derives from pool_hooks_base and writes get_chunk, put_chunk,
// free_plain, event_complete and zero_now (ORDO_POOL_HOOKS_OVERRIDES), and memory_class where its
// devices differ. context_hold, context_drop and event_drop are the adapter's functions,
// found in its namespace; so is event_context(const Ev *) where an event names its
// context otherwise than `ctx`. The layer's references to events are internal holders
// (ordo::object::hold), never the user's REFERENCE_COUNT.
#pragma once

#include <type_traits>

#include "ordo/usm_owners.hpp"
#include "ordo_so/layer.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// The context an event belongs to, unless the adapter's namespace says otherwise.
template <class Ev> auto event_context(const Ev *e) -> std::decay_t<decltype(e->ctx)> { return e->ctx; }

// The check of a USM range [p, p + bytes) a command of `ctx` uses, for an adapter that
// notes its backend's allocations in ordo::usm_owners<Owner>: the layer's rule first
// (plain allocations and pool blocks alike: INVALID_SIZE past the one it starts in),
// then INVALID_MEM_OBJECT in another context's memory. Memory of no context is system
// memory, the backend's to judge.
template <class Owner, class Context> ur_result_t check_usm_range(const Context *ctx, const void *p, size_t bytes) {
  if (ur_result_t r = ctx->pools->check_usm_region(p, bytes)) return r;
  const Owner owner = ordo::usm_owners<Owner>::instance().owner_of(p);
  return owner && owner != ctx ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_SUCCESS;
}

// context_hooks::memory_class for a context whose memory classes are device and shared
// memory per device and host memory once, so that a block keeps the kind and device it
// was made for. `check_device(ur_device_handle_t, ur_usm_type_t)` refuses a device the
// context does not have (INVALID_DEVICE) or a kind it cannot make.
template <class CheckDevice>
ur_result_t memory_class_per_device(ur_usm_type_t kind, ur_device_handle_t device, ordo::stream_ordered::mem_class &out,
                                    CheckDevice check_device) {
  if (kind == UR_USM_TYPE_HOST) {
    out = ordo::stream_ordered::mem_class{nullptr, UR_USM_TYPE_HOST};
    return UR_RESULT_SUCCESS;
  }
  if (kind != UR_USM_TYPE_DEVICE && kind != UR_USM_TYPE_SHARED) return UR_RESULT_ERROR_INVALID_VALUE;
  if (ur_result_t r = check_device(device, kind)) return r;
  out = ordo::stream_ordered::mem_class{device, unsigned(kind)};
  return UR_RESULT_SUCCESS;
}

template <class Ctx, class Dev, class Ev, class Cmd>
class pool_hooks_base : public ordo::stream_ordered::context_hooks {
public:
  explicit pool_hooks_base(Ctx *ctx) : ctx_(ctx) {}
  // Device and shared memory per device of the context, host memory once; an adapter
  // whose devices cannot make every kind overrides it.
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override {
    return memory_class_per_device(kind, device, out, [this](ur_device_handle_t d, ur_usm_type_t) {
      return d && ctx_->index_of(reinterpret_cast<Dev *>(d)) >= 0 ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_DEVICE;
    });
  }
  ur_usm_type_t primary_kind(const ordo::stream_ordered::mem_class &c) override { return ur_usm_type_t(c.id); }
  void retain_event(ur_event_handle_t ev) override { reinterpret_cast<Ev *>(ev)->hold(); }
  // The last reference may destroy the event and its queue, never the context: whoever
  // calls into the layer holds the context through a queue, an event or its handle.
  void release_event(ur_event_handle_t ev) override { event_drop(reinterpret_cast<Ev *>(ev)); }
  uint64_t event_node(ur_event_handle_t ev) override {
    auto *e = reinterpret_cast<Ev *>(ev);
    return event_context(e) == ctx_ ? uint64_t(e->order_node) : 0; // a plain or an atomic field
  }
  // Reuse rule 3: the alloc command also waits for the free's event.
  bool add_dependency(void *adapter_command, ur_event_handle_t ev) override {
    return static_cast<Cmd *>(adapter_command)->wait_for(reinterpret_cast<Ev *>(ev));
  }
  bool has_device(ur_device_handle_t d) override { return ctx_->index_of(reinterpret_cast<Dev *>(d)) >= 0; }
  ur_context_handle_t handle() override { return reinterpret_cast<ur_context_handle_t>(ctx_); }
  void retain_context() override { context_hold(ctx_); }
  void release_context() override { context_drop(ctx_); }

protected:
  Ctx *ctx_;
};

// The hooks every adapter's PoolHooks writes itself (pool_hooks_base leaves them open),
// declared in its class body as `ORDO_POOL_HOOKS_OVERRIDES;`.
#define ORDO_POOL_HOOKS_OVERRIDES                                                                                      \
  void *get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) override;                                     \
  void put_chunk(const ordo::stream_ordered::mem_class &c, void *base, size_t size) override;                          \
  void free_plain(void *base, ur_usm_type_t kind, ur_device_handle_t device) override;                                 \
  bool event_complete(ur_event_handle_t ev) override;                                                                  \
  ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) override

// The twelve urUSMPool* entry points of the layer, with this adapter's handle checks.
// `host_registration`: the adapter's hooks pin host memory (context_hooks::pin_host).
template <class Ctx, class Dev> void install_pool_entry_points(ur_dditable_t &t, bool host_registration = false) {
  ordo::stream_ordered::adapter_hooks hooks;
  hooks.host_registration = host_registration;
  hooks.pools_of = [](ur_context_handle_t h, ur_result_t *err) -> ordo::stream_ordered::context_pools * {
    Ctx *ctx = nullptr;
    if (ur_result_t r = unwrap(h, ctx)) {
      *err = r;
      return nullptr;
    }
    return ctx->pools.get();
  };
  hooks.is_device = [](ur_device_handle_t h) {
    Dev *d = nullptr;
    return unwrap(h, d) == UR_RESULT_SUCCESS;
  };
  ordo::stream_ordered::install_pool_entry_points(t, hooks);
}

} // namespace ordo::ur_common
