// SPDX-License-Identifier: Apache-2.0
// The OpenCL adapter's hooks into the stream-ordered layer (source/stream_ordered,
// docs/async-alloc.md): the layer owns pools, limits, the pointer registry and the
// ordering knowledge; the adapter gives it chunks of SVM / Intel USM memory, its
// events, and the wait list of the alloc command being enqueued.
#pragma once
#include <vector>

#include "common.hpp"
#include "ordo_so/layer.hpp"

namespace ordo::opencl {

// The alloc command being enqueued, as add_dependency() extends it (rule 3): the
// events it must also wait for, held until the command exists.
struct AllocDeps {
  ClWaitList *waits = nullptr;
  std::vector<ur_event_handle_t> held;
};

// One per context. Memory classes: host memory is one class; device and shared
// memory of a device share one class (shared chunks) where the device has shared
// USM (fine-grain SVM), else the class is device memory only.
class PoolHooks final : public ordo::stream_ordered::context_hooks {
public:
  explicit PoolHooks(ur_context_handle_t c) : ctx_(c) {}
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  ur_usm_type_t primary_kind(const ordo::stream_ordered::mem_class &c) override;
  void *get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) override;
  void put_chunk(const ordo::stream_ordered::mem_class &c, void *base, size_t size) override;
  bool event_complete(ur_event_handle_t ev) override;
  void retain_event(ur_event_handle_t ev) override;
  void release_event(ur_event_handle_t ev) override;
  uint64_t event_node(ur_event_handle_t ev) override;
  bool add_dependency(void *adapter_command, ur_event_handle_t ev) override;
  bool has_device(ur_device_handle_t d) override;
  ur_context_handle_t handle() override { return ctx_; }
  void retain_context() override;
  void release_context() override;
  ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) override;

private:
  ur_context_handle_t ctx_;
};

} // namespace ordo::opencl
