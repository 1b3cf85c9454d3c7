// SPDX-License-Identifier: Apache-2.0
// The native CPU adapter's hooks into the stream-ordered layer (docs/async-alloc.md,
// docs/adapter-guide.md) on ur_common's pool_hooks_base: every USM kind is host memory
// here, so one memory class serves them all; events are the scheduler's; an internal
// dependency is one more order-only edge of the alloc command (AsyncCommand).
#pragma once
#include "common.hpp"
#include "ur_common/pool_hooks.hpp"

namespace ordo::native_cpu {

struct Context;
struct Device;
struct Event;
class AsyncCommand;

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

// The layer's entry points, with this adapter's context lookup.
void install_pool_entry_points(ur_dditable_t &t);

} // namespace ordo::native_cpu
