// SPDX-License-Identifier: Apache-2.0
// The handle types of the adapters whose queues are in-order lanes on one device (Level
// Zero, the stream backend): the fields each has alike, written once. Each adapter
// derives its Device, Queue, Event, Program and Kernel from these and adds what its
// driver keeps (their Platform, Device and Context derive from handles.hpp's). Every handle is an ordo::object
// (ordo/object.hpp): the dispatch table first, its kind, the user's count and its holders; ORDO_UNWRAP refuses a handle
// of another kind or adapter.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ordo/object.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_api.h"
#include "ur_common/handles.hpp"
#include "ur_common/memory.hpp"
#include "ur_common/pool_hooks.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// A queue of one or more in-order lanes (`Lane`: a command list, a stream); an in-order
// queue has one.
template <class Context, class Device, class Lane> struct queue_object : object {
  static constexpr handle_kind kKind = handle_kind::queue;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_QUEUE;
  queue_object() : object(kKind) {}
  Context *ctx = nullptr;
  Device *dev = nullptr;
  ur_queue_flags_t flags = 0;
  bool in_order = true;
  bool profiling = false;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::atomic<uint32_t> next_lane{0};
  alloc_affinity affinity; // which lane a stream-ordered alloc goes to

  // The lane a command goes to: on an in-order queue the only one; on an out-of-order
  // queue the lane of a wait-list event of this queue whose command ran there
  // (`ran_on_lane(const Event *)`), otherwise the next in turn (dependency affinity).
  template <class Event, class RanOnLane>
  uint32_t lane_for(uint32_t n, const ur_event_handle_t *waits, RanOnLane ran_on_lane) {
    if (lanes.size() == 1) return 0;
    for (uint32_t i = 0; i < n; ++i) {
      auto *e = reinterpret_cast<Event *>(waits[i]);
      if (e->queue == this && ran_on_lane(e)) return e->lane;
    }
    return next_lane.fetch_add(1, std::memory_order_relaxed) % uint32_t(lanes.size());
  }

  // Takes the submission lock of `lane`, or of every lane (`all`) in index order, so
  // that no two commands deadlock; returns how many locks are held.
  size_t lock_lanes(uint32_t lane, bool all) {
    if (!all) {
      lanes[lane]->mutex.lock();
      return 1;
    }
    for (auto &l : lanes) l->mutex.lock();
    return lanes.size();
  }
  // Lets go of what lock_lanes took (`held`: its result, or 0).
  void unlock_lanes(uint32_t lane, size_t held) {
    if (held == 1)
      lanes[lane]->mutex.unlock();
    else
      for (size_t i = held; i-- > 0;) lanes[i]->mutex.unlock();
  }
};

template <class Queue, class Context> struct event_object : object {
  static constexpr handle_kind kKind = handle_kind::event;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_EVENT;
  event_object() : object(kKind) {}
  Queue *queue = nullptr; // null for events made from a native handle
  Context *ctx = nullptr;
  ur_command_t command = UR_COMMAND_EVENTS_WAIT;
  uint32_t lane = 0; // the queue's lane the command ran on
};

// What a program keeps per device (ur_common/program.hpp's PerDevice); `Module` is the
// driver's loaded module.
template <class Device, class Module> struct program_device {
  Device *dev = nullptr;
  std::vector<uint8_t> image; // as given
  Module module = nullptr;
  ur_program_build_status_t status = UR_PROGRAM_BUILD_STATUS_NONE;
  std::string log;
  std::string options;
  bool owned = true;     // false: the caller's module (urProgramCreateWithNativeHandle), never unloaded here
  bool compiled = false; // made by urProgramCompile: a compiled object
};

template <class Context, class PerDevice> struct program_object : object {
  static constexpr handle_kind kKind = handle_kind::program;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_PROGRAM;
  program_object() : object(kKind) {}
  Context *ctx = nullptr;
  bool from_il = false;
  std::mutex mutex;
  std::vector<PerDevice> per_device;
  std::atomic<bool> built{false};
};

template <class Program> struct kernel_object : object {
  static constexpr handle_kind kKind = handle_kind::kernel;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_KERNEL;
  kernel_object() : object(kKind) {}
  Program *program = nullptr;
  std::string name;
};

} // namespace ordo::ur_common
