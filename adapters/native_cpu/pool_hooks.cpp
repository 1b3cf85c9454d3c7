// The native CPU adapter's stream-ordered layer hooks (pool_hooks.hpp).
#include "ordo/usm_owners.hpp"
#include "pool_hooks.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <shared_mutex>

#include "context.hpp"
#include "event.hpp"
#include "ordo/checked_math.hpp"
#include "platform.hpp"
#include "queue.hpp"

namespace nc {

namespace {

ordo::usm_owners<const Context *> &usm_owners() { return ordo::usm_owners<const Context *>::instance(); }

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

void note_usm_memory(const void *base, size_t size, const Context &owner) { usm_owners().note(base, size, &owner); }

void forget_usm_memory(const void *base) { usm_owners().forget(base); }

ur_result_t check_usm_range(Context &ctx, const void *p, size_t bytes) {
  if (!ordo::checked::fits_address_space(p, bytes)) return UR_RESULT_ERROR_INVALID_SIZE;
  ordo::so::context_pools::block_facts a;
  if (ctx.pools->find_plain(p, a)) {
    size_t offset = static_cast<const char *>(p) - static_cast<const char *>(a.base);
    return bytes <= a.size - offset ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_SIZE;
  }
  const Context *owner = usm_owners().owner_of(p);
  return owner && owner != &ctx ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_SUCCESS;
}

namespace {
ordo::so::context_pools *pools_of(ur_context_handle_t h, ur_result_t *err) {
  Context *ctx = lookup<Context>(h);
  if (!ctx) {
    *err = Context::invalid_handle(h);
    return nullptr;
  }
  return ctx->pools.get();
}
} // namespace

void install_pool_entry_points(ur_dditable_t &t) {
  ordo::so::adapter_hooks hooks;
  hooks.pools_of = pools_of;
  hooks.is_device = is_device;
  hooks.host_registration = true;
  ordo::so::install_pool_entry_points(t, hooks);
}

} // namespace nc
