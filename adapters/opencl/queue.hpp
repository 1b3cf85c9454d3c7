// A UR queue: one cl_command_queue. Out-of-order queues are native where the device
// has them; elsewhere an in-order queue stands in (a valid execution of any order).
#pragma once
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
  ~ur_queue_handle_t_();
};
ORDO_HANDLE_CHECK(ur_queue_handle_t_);

namespace ordo::ocl {
void queue_unhold(ur_queue_handle_t q);
} // namespace ordo::ocl
