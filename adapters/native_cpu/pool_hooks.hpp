// The native CPU adapter's hooks into the stream-ordered layer (docs/async-alloc.md,
// docs/adapter-guide.md): every USM kind is host memory here, so one memory class
// serves them all; events are the scheduler's; an internal dependency is one more
// order-only edge of the alloc command.
#pragma once
#include "common.hpp"
#include "ordo_so/layer.hpp"

namespace nc {

struct Context;

class PoolHooks final : public ordo::so::context_hooks {
public:
  explicit PoolHooks(Context &ctx) : ctx_(ctx) {}
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device, ordo::so::mem_class &out) override;
  ur_usm_type_t primary_kind(const ordo::so::mem_class &) override { return UR_USM_TYPE_DEVICE; }
  void *get_chunk(const ordo::so::mem_class &c, size_t size) override;
  void put_chunk(const ordo::so::mem_class &c, void *base, size_t size) override;
  bool event_complete(ur_event_handle_t ev) override;
  void retain_event(ur_event_handle_t ev) override;
  void release_event(ur_event_handle_t ev) override;
  uint64_t event_node(ur_event_handle_t ev) override;
  bool add_dependency(void *adapter_command, ur_event_handle_t ev) override;
  bool has_device(ur_device_handle_t d) override;
  ur_context_handle_t handle() override;
  void retain_context() override;
  void release_context() override;
  ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) override;
  // The device is the host: registered pages need no pinning or mapping.
  ur_result_t pin_host(void *, size_t, bool) override { return UR_RESULT_SUCCESS; }

private:
  Context &ctx_;
};

// The layer's entry points, with this adapter's context lookup.
void install_pool_entry_points(ur_dditable_t &t);

} // namespace nc
