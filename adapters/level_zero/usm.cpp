// SPDX-License-Identifier: Apache-2.0
// Synchronous USM: zeMemAllocDevice / zeMemAllocHost / zeMemAllocShared, registered in
// the stream-ordered layer's pointer registry (plain allocations); with a pool, a
// block of that pool (the layer); frees; pointer queries. The entry points are
// ur_common/usm.hpp's; this file says how Level Zero makes and frees plain memory.
#include "common.hpp"
#include "ur_common/usm.hpp"

namespace ordo::level_zero {

namespace {

struct usm_hooks : handle_types {
  static size_t max_alloc(const Device *d) { return d->facts.props.maxMemAllocSize; }
  static bool shared_supported(const Device *) { return true; }
  // The driver honours the alignment asked for.
  static ur_result_t alloc_plain(Context *ctx, ur_usm_type_t kind, Device *dev, size_t size, size_t align, void **p) {
    ORDO_ZE(alloc_memory(ctx, kind, dev, size, align, p));
    return UR_RESULT_SUCCESS;
  }
  // zeMemFree does not wait for commands that use the memory, and the driver may hand
  // it out again at once: the spec has urUSMFree wait for commands that may use it, so
  // it waits for every command enqueued so far on the context's queues. A host task or
  // callback would wait for its own command (or for what only it can let go): it frees
  // at once (docs/level-zero.md).
  static ur_result_t wait_before_free(Context *ctx) {
    return running_user_code ? UR_RESULT_SUCCESS : wait_for_queues(ctx);
  }
};

} // namespace

thread_local bool running_user_code = false;

void install_usm_entry_points(ur_dditable_t &t) { ordo::ur_common::usm_entry_points<usm_hooks>::install(t); }

} // namespace ordo::level_zero
