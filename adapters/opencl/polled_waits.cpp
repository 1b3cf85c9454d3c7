// SPDX-License-Identifier: Apache-2.0
// Waits that poll instead of blocking in the runtime, for Intel's CPU OpenCL runtime.
//
// On that runtime a host thread in clWaitForEvents or clFinish joins the runtime's TBB
// arena and can run another waiting thread's nested wait there, which then never
// returns (docs/opencl.md, "The hang in clWaitForEvents"). Flushing the events' queues
// and polling CL_EVENT_COMMAND_EXECUTION_STATUS keeps host threads out of the arena.
// The adapter calls cl.clWaitForEvents everywhere; on such a platform that entry of its
// table is replaced by the polled version here, once, while the platforms are discovered
// (before any handle exists). Queues are finished through finish_queue, which polls a
// marker there.
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "cl_api.hpp"
#include "platform.hpp"

namespace ordo::opencl {

namespace {

bool polled = false; // written once, by the discovery, before any handle exists

// Sleeps after the first looks grow from 2 µs to this; a wait lasting longer than that
// notices completion at most this late.
constexpr long max_sleep_ns = 200'000;
constexpr int yielding_looks = 64;

void pause_before_next_look(int look, long &sleep_ns) {
  if (look < yielding_looks) {
    sched_yield(); // the runtime's worker may need this core
    return;
  }
  timespec ts{0, sleep_ns};
  nanosleep(&ts, nullptr);
  if (sleep_ns < max_sleep_ns) sleep_ns *= 2;
}

// clWaitForEvents' contract: every event final, then CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
// when one of them ended in error.
cl_int CL_API_CALL polled_wait_for_events(cl_uint n, const cl_event *list) {
  if (n == 0 || !list) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < n; ++i) {
    cl_command_queue q = nullptr; // null for a user event
    if (cl.clGetEventInfo(list[i], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr) != CL_SUCCESS)
      return CL_INVALID_EVENT;
    if (q) cl.clFlush(q); // what clWaitForEvents does implicitly
  }
  bool failed = false;
  long sleep_ns = 2'000;
  cl_uint done = 0; // list[0, done) are final
  for (int look = 0;; ++look) {
    for (; done < n; ++done) {
      cl_int status = CL_QUEUED;
      cl_int err = cl.clGetEventInfo(list[done], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
      if (err != CL_SUCCESS) return err;
      if (status > CL_COMPLETE) break;
      failed = failed || status < CL_COMPLETE;
    }
    if (done == n) return failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
    pause_before_next_look(look, sleep_ns);
  }
}

// Intel's CPU runtime and its FPGA emulator share the TBB executor.
bool runs_waits_in_tbb_arena(const ur_platform_handle_t_ &p) {
  return p.name == "Intel(R) OpenCL" || p.name.rfind("Intel(R) FPGA Emulation", 0) == 0;
}

} // namespace

bool choose_waits(const std::vector<ur_platform_handle_t_ *> &platforms) {
  const char *chosen = std::getenv("ORDO_OPENCL_WAITS"); // "poll" or "block" (docs/environment.md)
  bool poll = false;
  if (chosen && std::strcmp(chosen, "poll") == 0)
    poll = true;
  else if (!chosen || std::strcmp(chosen, "block") != 0)
    for (const ur_platform_handle_t_ *p : platforms) poll = poll || runs_waits_in_tbb_arena(*p);
  if (poll) cl.clWaitForEvents = polled_wait_for_events;
  return polled = poll;
}

// A marker with no wait list completes after every command enqueued before it, on
// in-order and out-of-order queues alike: waiting for it is clFinish. The marker enters
// the queue under its submission lock: Intel's CPU runtime can crash (SIGSEGV in
// OclEvent::AddDependentOn) when commands enter one out-of-order queue from two threads
// at once.
cl_int finish_queue(cl_command_queue q, std::mutex *submit_mutex, bool *clean) {
  if (clean) *clean = true;
  if (!polled) return cl.clFinish(q);
  cl_event marker = nullptr;
  cl_int err;
  {
    std::unique_lock<std::mutex> lock;
    if (submit_mutex) lock = std::unique_lock<std::mutex>(*submit_mutex);
    err = cl.clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker);
  }
  if (err != CL_SUCCESS) return err;
  err = polled_wait_for_events(1, &marker);
  cl.clReleaseEvent(marker);
  if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    if (clean) *clean = false;
    return CL_SUCCESS; // clFinish reports no command's error
  }
  return err;
}

// A polled wait can see a command CL_COMPLETE while the runtime's worker is still inside
// the command's task, holding a reference to the queue. Were the host's release then not
// the last, the worker would destroy the out-of-order queue inside that task, and the
// destructor waits for the queue's tasks, its own included, forever. So on such a
// platform one blocking clFinish comes first: it returns once the queue's tasks have
// ended. The queue's commands are complete by then (the user's last release finished
// it), so the wait is short; one thread at a time keeps two host threads from ever
// waiting inside the runtime's TBB arena together, which is what hung before.
void release_queue(cl_command_queue q) {
  if (polled) {
    static std::mutex *const one_at_a_time = new std::mutex(); // lives past static teardown
    std::lock_guard<std::mutex> lock(*one_at_a_time);
    cl.clFinish(q);
  }
  cl.clReleaseCommandQueue(q);
}

} // namespace ordo::opencl
