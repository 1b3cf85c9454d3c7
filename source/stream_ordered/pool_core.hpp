// SPDX-License-Identifier: Apache-2.0
// Internal to the stream-ordered layer: the core of one memory class of a pool.
#pragma once
#include "ordo_so/layer.hpp"

namespace ordo::stream_ordered {

// ---- a core: one memory class of one pool ----------------------------------------

// The core's view of the adapter: chunks of one class, the context's events, and
// rule 1 decided by the context's ordering knowledge.
struct pool::core final : ordo::pool::backend {
  core(pool &p, const mem_class &c) : owner(p), cls(c) {}

  void *get_chunk(std::size_t size) override {
    context_pools &ctx = owner.context();
    void *p = ctx.hooks().get_chunk(cls, size);
    if (!p) return nullptr;
    try {
      ctx.add_range(p, size, &owner, this);
    } catch (...) {
      ctx.hooks().put_chunk(cls, p, size);
      return nullptr;
    }
    return p;
  }
  // Only chunks holding no live or pending block come back: nothing uses them.
  void put_chunk(void *base, std::size_t size) override {
    owner.context().remove_range(base);
    owner.context().hooks().put_chunk(cls, base, size);
  }
  bool event_complete(ordo::pool::event_handle ev) override {
    return owner.context().hooks().event_complete(static_cast<ur_event_handle_t>(ev));
  }
  bool add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) override {
    auto *c = static_cast<const alloc_command *>(cmd);
    if (!c || !c->adapter_command) return false; // urUSM*Alloc cannot wait for anything
    return owner.context().hooks().add_dependency(c->adapter_command, static_cast<ur_event_handle_t>(ev));
  }
  void retain_event(ordo::pool::event_handle ev) override {
    owner.context().hooks().retain_event(static_cast<ur_event_handle_t>(ev));
  }
  void release_event(ordo::pool::event_handle ev) override {
    owner.context().hooks().release_event(static_cast<ur_event_handle_t>(ev));
  }
  // Rule 1 beyond the wait list and the same in-order queue: is the free's command
  // a predecessor of the alloc through recorded commands (barriers, chains)?
  bool is_ordered_before(ordo::pool::command_context cmd, ordo::pool::event_handle ev) override {
    auto *c = static_cast<const alloc_command *>(cmd);
    if (!c) return false;
    context_hooks &h = owner.context().hooks();
    const uint64_t target = h.event_node(static_cast<ur_event_handle_t>(ev));
    if (!target) return false;
    constexpr size_t kMaxWaits = 16; // more only loses reuse
    uint64_t waits[kMaxWaits];
    size_t n = 0;
    for (uint32_t i = 0; i < c->num_waits && n < kMaxWaits; ++i)
      if (c->waits[i])
        if (uint64_t w = h.event_node(c->waits[i])) waits[n++] = w;
    return owner.context().order().ordered_after(target, c->queue, c->in_order, waits, n);
  }

  pool &owner;
  const mem_class cls;
  std::unique_ptr<ordo::pool::ordered_pool> op;
};

} // namespace ordo::stream_ordered
