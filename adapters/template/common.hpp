// SPDX-License-Identifier: Apache-2.0
// The template adapter's handle types and what its files share (docs/adapter-guide.md,
// "The template"). Replace: the members that say what your backend keeps in each object
// (a driver handle, facts read at discovery); keep the object model (the bases of
// ur_common/handles.hpp: ordo::object with its kKind and kInvalid) and the handle_types
// list the ur_common templates read.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "ordo/logger.hpp"
#include "ordo/object.hpp"
#include "ur_common/handles.hpp"
#include "ordo_so/layer.hpp"
#include "ur_ddi.h"

namespace ordo::template_adapter {

Logger &logger(); // UR_LOG_TEMPLATE (rename with the adapter)

struct Adapter;
struct Platform;
struct Device;
struct Context;

using handle_types = ordo::ur_common::handle_types_of<Adapter, Platform, Device, Context>;

struct Adapter : ordo::ur_common::adapter_object {};
ORDO_HANDLE_CHECK(Adapter);

// What discovery learns about a device once; a vendor fills it from the driver.
struct DeviceFacts {
  uint64_t global_mem = 0;
  uint64_t max_alloc = 0;
  uint32_t compute_units = 0;
};

struct Device : ordo::ur_common::device_object<Platform> {
  DeviceFacts facts;
};
ORDO_HANDLE_CHECK(Device);

struct Platform : ordo::ur_common::platform_object<Device> {};
ORDO_HANDLE_CHECK(Platform);

// The stream-ordered layer's view of a context's memory (context.cpp). The template has
// no queues and no events yet, so every event question has its trivial answer; a backend
// with commands derives from ordo::ur_common::pool_hooks_base instead (ur_common/pool_hooks.hpp).
class PoolHooks final : public ordo::stream_ordered::context_hooks {
public:
  explicit PoolHooks(Context *ctx) : ctx_(ctx) {}
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  ur_usm_type_t primary_kind(const ordo::stream_ordered::mem_class &c) override { return ur_usm_type_t(c.id); }
  void *get_chunk(const ordo::stream_ordered::mem_class &c, size_t size) override;
  void put_chunk(const ordo::stream_ordered::mem_class &c, void *base, size_t size) override;
  void free_plain(void *base, ur_usm_type_t kind, ur_device_handle_t device) override;
  bool event_complete(ur_event_handle_t) override { return true; }
  void retain_event(ur_event_handle_t) override {}
  void release_event(ur_event_handle_t) override {}
  uint64_t event_node(ur_event_handle_t) override { return 0; }
  bool add_dependency(void *, ur_event_handle_t) override { return true; }
  bool has_device(ur_device_handle_t d) override;
  ur_context_handle_t handle() override;
  void retain_context() override;
  void release_context() override;
  ur_result_t zero_now(ur_usm_type_t kind, ur_device_handle_t device, void *p, size_t size) override;

private:
  Context *ctx_;
};

// The fields ur_common/context.hpp and ur_common/usm.hpp read; add your driver's context.
struct Context : ordo::ur_common::context_object<Device> {
  PoolHooks pool_hooks{this};
  std::unique_ptr<ordo::stream_ordered::context_pools> pools;
};
ORDO_HANDLE_CHECK(Context);

Adapter *the_adapter();                        // adapter.cpp
const std::vector<Platform *> &platforms();    // platform.cpp: discovery, once
void context_drop(Context *ctx);               // context.cpp
void *alloc_memory(size_t size, size_t align); // usm.cpp: your driver's allocation
void free_memory(void *p);

void install_adapter_entry_points(ur_dditable_t &t); // platform.cpp: urAdapter*, urPlatform*
void install_device_entry_points(ur_dditable_t &t);  // device.cpp
void install_context_entry_points(ur_dditable_t &t); // context.cpp
void install_usm_entry_points(ur_dditable_t &t);     // usm.cpp
void install_queue_entry_points(ur_dditable_t &t);   // queue.cpp

} // namespace ordo::template_adapter
