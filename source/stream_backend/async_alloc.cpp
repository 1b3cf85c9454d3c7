// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation: urEnqueueUSM{Device,Shared,Host}AllocExp and
// urEnqueueUSMFreeExp on the stream-ordered layer (docs/async-alloc.md, docs/cuda.md),
// through the shared entry points of ur_common/async_alloc.hpp.
//
// Each driver stream is an in-order queue for the layer. Reuse rule 3 becomes a stream
// wait of the alloc's stream on the free's event; a zero-initialising pool's alloc
// zeroes the block on its stream (a byte memset).
#include "backend.hpp"
#include "ur_common/async_alloc.hpp"

namespace ordo::stream_backend {

namespace {

struct async_hooks : handle_types {
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *w) {
    return stream_backend::check_wait_list(n, w);
  }
  static ur_result_t alloc_work(Command &cmd, const ordo::stream_ordered::allocation &block) {
    if (!block.needs_zero) return UR_RESULT_SUCCESS;
    return to_ur(drv::memset_8(block.ptr, 0, block.size, cmd.stream()));
  }
  // The free's place in its stream orders it: nothing to issue. Its event is deferred
  // (backend.hpp, Lane): a driver event is recorded only if another stream or a host
  // query needs one.
  static ur_result_t free_work(Command &) { return UR_RESULT_SUCCESS; }
  // The bound urUSM*Alloc keeps (usm.cpp), so both forms refuse one size alike.
  static size_t max_alloc(const Device *d) { return d->facts.total_mem; }
  // Called for a free's event the caller did not ask for (or never got): no handle of
  // it went out, so its storage can be reused when the pool lets it go.
  static void release_event(ur_event_handle_t h) {
    auto *ev = reinterpret_cast<Event *>(h);
    ev->internal = true;
    if (ordo::release_reference(ev) == ordo::released::last_holder) event_destroy(ev);
  }
};

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) { ordo::ur_common::async_alloc<async_hooks>::install(t); }

} // namespace ordo::stream_backend
