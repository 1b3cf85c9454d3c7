// SPDX-License-Identifier: Apache-2.0
// The native CPU adapter's stream-ordered layer hooks (pool_hooks.hpp).
#include "pool_hooks.hpp"

#include <cstdlib>
#include <cstring>

#include "context.hpp"
#include "event.hpp"
#include "platform.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

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

void PoolHooks::put_chunk(const ordo::stream_ordered::mem_class &, void *base, size_t) {
  forget_usm_memory(base);
  std::free(base);
}

bool PoolHooks::event_complete(ur_event_handle_t ev) { return reinterpret_cast<Event *>(ev)->terminal(); }

ur_result_t PoolHooks::zero_now(ur_usm_type_t, ur_device_handle_t, void *p, size_t size) {
  std::memset(p, 0, size);
  return UR_RESULT_SUCCESS;
}

// Host registration is served: the device is the host (PoolHooks::pin_host).
void install_pool_entry_points(ur_dditable_t &t) {
  ordo::ur_common::install_pool_entry_points<Context, Device>(t, true);
}

} // namespace ordo::native_cpu
