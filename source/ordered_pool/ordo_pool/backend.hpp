// SPDX-License-Identifier: Apache-2.0
// The seam between the ordered pool core and an adapter.
//
// The core knows nothing about any device API. An adapter implements this
// interface once per kind of memory it serves and hands it to every pool of
// that kind; the core then calls back into it (always with one of the pool's
// locks held, so no hook may call back into the same pool).
#pragma once

#include <cstddef>

namespace ordo::pool {

// An adapter's event, opaque to the core. The core only compares handles for
// identity and passes them back to the hooks below.
using event_handle = void *;

// Identity of a queue (usually the adapter's queue handle). Only compared for
// equality. A value must not be reused for another queue while blocks freed on
// the old queue may still be pending: call ordered_pool::forget_queue() when a
// queue is released, or use identities that are never reused.
using queue_id = const void *;

// Opaque per-command context: the adapter's description of the command being
// enqueued (its wait list, its internal-dependency list, ...). The pool passes
// it back verbatim to add_dependency() and is_ordered_before().
using command_context = void *;

class backend {
public:
  // --- memory --------------------------------------------------------------
  // Return `size` bytes of backend memory, or nullptr when there is none.
  // The pointer should be at least 64-byte aligned; the pool ignores whatever
  // slack a less aligned pointer leaves at either end.
  virtual void *get_chunk(std::size_t size) = 0;
  // Give back a chunk exactly as get_chunk() returned it.
  virtual void put_chunk(void *base, std::size_t size) = 0;

  // --- events --------------------------------------------------------------
  // True once `ev` has completed. Called only on events the pool holds a
  // reference to. Must be cheap and must not block.
  virtual bool event_complete(event_handle ev) = 0;
  // Make the command described by `cmd` wait for `ev` (an "internal
  // dependency"): the command may not start before `ev` completes. The hook
  // takes its own reference to `ev` if it keeps it beyond the call. Returning
  // false means it could not (e.g. out of memory); the pool then does not use
  // the block that needed it.
  virtual bool add_dependency(command_context cmd, event_handle ev) = 0;
  // Reference counting, so a release event outlives the adapter's own use.
  virtual void retain_event(event_handle ev) = 0;
  virtual void release_event(event_handle ev) = 0;

  // --- optional ------------------------------------------------------------
  // True when `ev` is known to be ordered before the command `cmd` through
  // some chain of dependencies (transitive reachability, barriers). The pool
  // itself already treats events in the wait list and the same in-order queue
  // as ordered; the default adds nothing to that.
  virtual bool is_ordered_before(command_context cmd, event_handle ev) {
    (void)cmd;
    (void)ev;
    return false;
  }

  virtual ~backend() = default;
};

} // namespace ordo::pool
