// A UR queue: one cl_command_queue. Out-of-order queues are native where the device
// has them; elsewhere an in-order queue stands in (a valid execution of any order).
#pragma once
#include <atomic>
#include <mutex>

#include "common.hpp"

struct ur_queue_handle_t_ : ordo::ocl::ObjectHead {
  ur_queue_handle_t_() : ObjectHead(ordo::ocl::Tag::queue) {}

  cl_command_queue cl = nullptr;
  ur_context_handle_t context = nullptr;
  ur_device_handle_t device = nullptr;
  ur_queue_flags_t flags = 0;  // as the user asked
  bool in_order = true;        // what the cl_command_queue really does
  bool profiling = false;
  // Stream-ordered allocs and frees on an in-order queue reach the pool in the order
  // their commands enter the queue (docs/ordered-pool.md, "ordering contract").
  std::mutex submit_mutex;
  // Counts commands enqueued through the adapter. A free with no wait list enqueued
  // when nothing else was since the last such free shares that free's marker: both
  // complete once everything before them has (guarded by submit_mutex).
  std::atomic<uint64_t> commands{0};
  ur_event_handle_t last_free = nullptr;
  uint64_t last_free_at = 0;
  ~ur_queue_handle_t_();
};
ORDO_HANDLE_CHECK(ur_queue_handle_t_);

namespace ordo::ocl {
void queue_unhold(ur_queue_handle_t q);
} // namespace ordo::ocl
