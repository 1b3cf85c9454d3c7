// SPDX-License-Identifier: Apache-2.0
// Queues: made, counted, asked about, finished, released; they hold their context. No
// command can be enqueued yet (every urEnqueue* is UNSUPPORTED_FEATURE), so finish and
// flush have nothing to wait for. Replace: your driver's queue (a stream, a command
// list) in Queue, its creation and destruction, and finish()/flush(); then add events
// and commands (docs/adapter-guide.md, "Three ways in").
#include <new>

#include "common.hpp"
#include "ordo/info.hpp"
#include "ordo/queue_rules.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_common/queue.hpp"

namespace ordo::template_adapter {

namespace {

struct Queue : object {
  static constexpr handle_kind kKind = handle_kind::queue;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_QUEUE;
  Queue() : object(kKind) {}
  Context *ctx = nullptr; // held: a queue keeps its context alive
  Device *dev = nullptr;
  ur_queue_flags_t flags = 0;
};
ORDO_HANDLE_CHECK(Queue);

// What ur_common's urQueue* entry points leave to the backend (ur_common/queue.hpp).
// They check the handles and then the rules every adapter keeps (ordo/queue_rules.hpp:
// no device-side queues, one compute queue index; say what your backend has in
// ordo::queue_capabilities).
struct queue_hooks {
  using Context = template_adapter::Context;
  using Device = template_adapter::Device;
  using Queue = template_adapter::Queue;

  static ur_result_t create(Context *ctx, Device *dev, ur_queue_flags_t flags, ur_queue_handle_t *phQueue) {
    // Then this backend's own: only what UR_DEVICE_INFO_QUEUE_PROPERTIES offers (nothing
    // yet) beyond the hints any queue may ignore.
    if (flags & (UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE))
      return UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES;
    auto *q = new (std::nothrow) Queue();
    if (!q) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    q->ctx = ctx;
    q->dev = dev;
    q->flags = flags;
    ctx->hold();
    *phQueue = reinterpret_cast<ur_queue_handle_t>(q);
    return UR_RESULT_SUCCESS;
  }

  // The user's last release: the queue's work would be finished here, then its holders
  // let go (commands in flight would hold it too), and the handle retired.
  static ur_result_t release_last(Queue *q) {
    ordo::ur_common::drop_queue(q);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t is_empty(Queue *, bool &empty) {
    empty = true; // nothing can be enqueued yet
    return UR_RESULT_SUCCESS;
  }

  static ur_native_handle_t native_handle(Queue *q, ur_queue_native_desc_t *) {
    return reinterpret_cast<ur_native_handle_t>(q); // your driver's queue
  }
};

using entry_points = ordo::ur_common::queue_entry_points<queue_hooks>;

ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t hQueue) {
  ORDO_UNWRAP(Queue, q, hQueue);
  (void)q; // wait for the queue's commands here
  return UR_RESULT_SUCCESS;
}

} // namespace

// No urQueueCreateWithNativeHandle yet; urQueueFinish is this file's (nothing to wait
// for, no pool synchronisation point).
void install_queue_entry_points(ur_dditable_t &t) {
  t.Queue.pfnCreate = entry_points::create;
  t.Queue.pfnRetain = ordo::ur_common::retain_user_handle<Queue, ur_queue_handle_t>;
  t.Queue.pfnRelease = entry_points::release;
  t.Queue.pfnGetInfo = entry_points::get_info;
  t.Queue.pfnFinish = urQueueFinish;
  t.Queue.pfnFlush = entry_points::flush;
  t.Queue.pfnGetNativeHandle = entry_points::get_native_handle;
}

} // namespace ordo::template_adapter
