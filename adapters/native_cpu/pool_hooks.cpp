// The native CPU adapter's stream-ordered layer hooks (pool_hooks.hpp).
#include "pool_hooks.hpp"

#include <cstdlib>
#include <cstring>

#include "context.hpp"
#include "event.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "ur_common/pool_hooks.hpp"

namespace nc {

namespace {

// Chunks start on a page: big ones are mapped memory, and blocks never straddle
// another allocation's cache lines.
constexpr size_t kChunkAlign = 4096;
} // namespace

ur_result_t PoolHooks::memory_class(ur_usm_type_t, ur_device_handle_t, ordo::so::mem_class &out) {
  out = ordo::so::mem_class{device_handle(), 0}; // one class: all of it is host memory
  return UR_RESULT_SUCCESS;
}

void *PoolHooks::get_chunk(const ordo::so::mem_class &, size_t size) {
  void *p = nullptr;
  if (posix_memalign(&p, kChunkAlign, size) != 0) return nullptr;
  try {
    note_usm_memory(p, size, ctx_);
  } catch (...) {
    std::free(p);
    return nullptr;
  }
  return p;
}

void PoolHooks::put_chunk(const ordo::so::mem_class &, void *base, size_t) {
  forget_usm_memory(base);
  std::free(base);
}

bool PoolHooks::event_complete(ur_event_handle_t ev) { return reinterpret_cast<Event *>(ev)->terminal(); }

void PoolHooks::retain_event(ur_event_handle_t ev) { reinterpret_cast<Event *>(ev)->hold(); }

// May delete the event (and its queue, if it held the last reference); never its
// context: every caller of a pool function holds the context through a handle.
void PoolHooks::release_event(ur_event_handle_t ev) { reinterpret_cast<Event *>(ev)->drop_hold(); }

uint64_t PoolHooks::event_node(ur_event_handle_t ev) {
  auto *e = reinterpret_cast<Event *>(ev);
  return e->context == &ctx_ ? e->order_node.load(std::memory_order_relaxed) : 0;
}

bool PoolHooks::add_dependency(void *adapter_command, ur_event_handle_t ev) {
  auto *cmd = static_cast<CommandBuilder *>(adapter_command);
  auto *e = reinterpret_cast<Event *>(ev);
  if (e->terminal()) return true; // the free has run: nothing to wait for
  try {
    cmd->add_dependency(*e);
  } catch (...) {
    return false;
  }
  return true;
}

bool PoolHooks::has_device(ur_device_handle_t d) { return is_device(d); }
ur_context_handle_t PoolHooks::handle() { return to_handle(&ctx_); }
void PoolHooks::retain_context() { ctx_.hold(); }
void PoolHooks::release_context() { ctx_.drop_hold(); }

ur_result_t PoolHooks::zero_now(ur_usm_type_t, ur_device_handle_t, void *p, size_t size) {
  std::memset(p, 0, size);
  return UR_RESULT_SUCCESS;
}

// Host registration is served: the device is the host (PoolHooks::pin_host).
void install_pool_entry_points(ur_dditable_t &t) { ordo::uc::install_pool_entry_points<Context, Device>(t, true); }

} // namespace nc
