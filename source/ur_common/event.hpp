// SPDX-License-Identifier: Apache-2.0
// The urEvent* entry points, written once: argument checks in their order, reference
// counts, the answers every event gives alike and the synchronisation points. A hooks
// struct `H` gives:
//
//   using Context = ...; using Event = ...;  // Event: an ordo::object with ctx, queue, command
//   // An event the program may still name (ordo::unwrap, or stricter).
//   static ur_result_t unwrap_event(ur_event_handle_t, Event *&);
//   static ur_result_t execution_status(Event *, ur_event_status_t &);
//   static bool timed(const Event *);            // whether the event has profiling timestamps
//   // A host wait for the command; IN_EVENT_LIST_EXEC_STATUS when it failed (the others
//   // are still waited for).
//   static ur_result_t wait(Event *);
//   static ur_result_t native_handle(Event *, ur_native_handle_t &);
//   static void add_callback(Event *, ur_execution_info_t, ur_event_callback_t, void *);
//   // Whether the event was made from a null native handle (below).
//   static bool null_native(const Event *);
//
// urEventCreateWithNativeHandle of 0 makes an event of the context with no native
// object, complete from the start (docs/adapter-guide.md, "The contract"): adopt_native
// or from_native gets 0 and makes it, and the entry points here answer for it without
// the other hooks (status COMPLETE, a wait that returns at once, native handle 0,
// PROFILING_INFO_NOT_AVAILABLE, a callback called before urEventSetCallback returns).
// The adapter's wait lists take it as met, never reading its native object.
//
// Events that stand for one command on a lane (Level Zero, the stream backend) also give:
//
//   // Event: an event_object (objects.hpp), with queued_ns. Once its command is
//   // complete, its start and end in host nanoseconds (PROFILING_INFO_NOT_AVAILABLE before).
//   static ur_result_t command_times(Event *, uint64_t &start_ns, uint64_t &end_ns);
//   static void destroy(Event *);                // the last holder went
//   // An event made from a native handle (ctx set, the user's reference): what the
//   // adapter knows of the handle (0: none), and its holder of the queue or context;
//   // a refusal leaves nothing taken.
//   static ur_result_t adopt_native(Event *, Context *, ur_native_handle_t, const ur_event_native_properties_t *);
//   // add_callback: the event holds one more holder, which the callback thread drops.
//
// Events that are the nodes of a task graph (native CPU: docs/native-cpu.md, "The
// scheduler") say `static constexpr bool task_graph = true;` and give instead:
//
//   // The timestamp of one step (PROFILING_INFO_NOT_AVAILABLE where not reached).
//   static ur_result_t profiling_time(Event *, ur_profiling_info_t, uint64_t &ns);
//   static ur_result_t release(Event *);         // the user's release
//   // urEventCreateWithNativeHandle after the context and phEvent checks (0 included).
//   static ur_result_t from_native(Context *, ur_native_handle_t, const ur_event_native_properties_t *,
//                                  ur_event_handle_t *);
//   // add_callback: the graph keeps the node alive while callbacks are due; a null
//   // pfnNotify is refused before the execution status (the spec's order).
//
// Events that wrap a driver's event object (OpenCL's cl_event) give destroy, and
// profiling_time and from_native as a task graph does (each is found on its own), and
// may give:
//
//   // Waits for all the events at once (the driver's own wait) instead of wait(Event *)
//   // one by one; a failure is returned before any synchronisation point.
//   static ur_result_t wait_all(uint32_t, const ur_event_handle_t *);
//   // After a wait and after every release: destroys what callbacks parked.
//   static void reap();
//   // add_callback may return a ur_result_t: a refusal, after it dropped the holder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ur_api.h"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

template <class H, class = void> struct is_task_graph : std::false_type {};
template <class H> struct is_task_graph<H, std::void_t<decltype(H::task_graph)>> : std::bool_constant<H::task_graph> {};
template <class H, class = void> struct has_profiling_time : std::false_type {};
template <class H> struct has_profiling_time<H, std::void_t<decltype(&H::profiling_time)>> : std::true_type {};
template <class H, class = void> struct has_from_native : std::false_type {};
template <class H> struct has_from_native<H, std::void_t<decltype(&H::from_native)>> : std::true_type {};
template <class H, class = void> struct has_wait_all : std::false_type {};
template <class H> struct has_wait_all<H, std::void_t<decltype(&H::wait_all)>> : std::true_type {};

template <class H> struct event_entry_points {
  using Context = typename H::Context;
  using Event = typename H::Event;
  static constexpr bool kTaskGraph = is_task_graph<H>::value;
  static constexpr bool kOwnTimes = has_profiling_time<H>::value;
  static constexpr bool kOwnFromNative = has_from_native<H>::value;
  static constexpr bool kWaitAll = has_wait_all<H>::value;
  static void reap() { reap_parked<H>(); }

  static ur_result_t UR_APICALL get_info(ur_event_handle_t hEvent, ur_event_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    switch (propName) {
    case UR_EVENT_INFO_COMMAND_QUEUE: return out.value(reinterpret_cast<ur_queue_handle_t>(e->queue));
    case UR_EVENT_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(e->ctx));
    case UR_EVENT_INFO_COMMAND_TYPE: return out.value(e->command);
    case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS: {
      ur_event_status_t status = UR_EVENT_STATUS_COMPLETE;
      if (!H::null_native(e))
        if (ur_result_t r = H::execution_status(e, status)) return r;
      return out.value(status);
    }
    case UR_EVENT_INFO_REFERENCE_COUNT: return out.value(e->count());
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  // Queued and submitted are the enqueue call's host time; start and end the device's,
  // mapped to host nanoseconds. Both pointers may be null (the spec's only value rule is
  // `pPropValue && propSize == 0`): the answer then says whether the time is available.
  static ur_result_t UR_APICALL get_profiling_info(ur_event_handle_t hEvent, ur_profiling_info_t propName,
                                                   size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (pPropValue && propSize == 0) return UR_RESULT_ERROR_INVALID_VALUE;
    if (H::null_native(e) || !H::timed(e)) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    if constexpr (kOwnTimes) {
      uint64_t ns = 0;
      if (ur_result_t r = H::profiling_time(e, propName, ns)) return r;
      return out.value(ns);
    } else {
      if (propName == UR_PROFILING_INFO_COMMAND_QUEUED || propName == UR_PROFILING_INFO_COMMAND_SUBMIT)
        return out.value(e->queued_ns);
      uint64_t start_ns = 0, end_ns = 0;
      if (ur_result_t r = H::command_times(e, start_ns, end_ns)) return r;
      // The clocks are mapped, not shared: keep queued <= start <= end despite rounding.
      if (start_ns < e->queued_ns) start_ns = e->queued_ns;
      if (end_ns < start_ns) end_ns = start_ns;
      return out.value(propName == UR_PROFILING_INFO_COMMAND_START ? start_ns : end_ns);
    }
  }

  static ur_result_t UR_APICALL wait(uint32_t numEvents, const ur_event_handle_t *phEventWaitList) {
    if (!phEventWaitList) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (numEvents == 0) return UR_RESULT_ERROR_INVALID_VALUE;
    for (uint32_t i = 0; i < numEvents; ++i) {
      Event *e = nullptr;
      if (ur_result_t r = H::unwrap_event(phEventWaitList[i], e)) return r;
    }
    ur_result_t failed = UR_RESULT_SUCCESS;
    if constexpr (kWaitAll) {
      // Events with no native object are complete: the driver waits for the others.
      uint32_t nulls = 0;
      for (uint32_t i = 0; i < numEvents; ++i) nulls += H::null_native(reinterpret_cast<Event *>(phEventWaitList[i]));
      if (nulls == 0) {
        if (ur_result_t r = H::wait_all(numEvents, phEventWaitList)) return r;
      } else if (nulls < numEvents) {
        std::vector<ur_event_handle_t> rest;
        rest.reserve(numEvents - nulls);
        for (uint32_t i = 0; i < numEvents; ++i)
          if (!H::null_native(reinterpret_cast<Event *>(phEventWaitList[i]))) rest.push_back(phEventWaitList[i]);
        if (ur_result_t r = H::wait_all(uint32_t(rest.size()), rest.data())) return r;
      }
    } else {
      for (uint32_t i = 0; i < numEvents; ++i) {
        auto *e = reinterpret_cast<Event *>(phEventWaitList[i]);
        if (H::null_native(e)) continue;
        ur_result_t r = H::wait(e);
        if (r == UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS)
          failed = r;
        else if (r)
          return r;
      }
    }
    // A synchronisation point of each context named: pools collect completed frees
    // and give back memory above their release thresholds.
    Context *done = nullptr;
    for (uint32_t i = 0; i < numEvents; ++i) {
      Context *ctx = reinterpret_cast<Event *>(phEventWaitList[i])->ctx;
      if (ctx && ctx != done) (done = ctx)->pools->sync_point();
    }
    reap();
    return failed;
  }

  static ur_result_t UR_APICALL retain(ur_event_handle_t hEvent) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (!e->retain_user()) return ordo::invalid_of(e);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL release(ur_event_handle_t hEvent) {
    ur_result_t r = release_event(hEvent);
    reap();
    return r;
  }
  static ur_result_t release_event(ur_event_handle_t hEvent) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if constexpr (kTaskGraph) {
      return H::release(e);
    } else {
      switch (ordo::release_reference(e)) {
      case ordo::released::none_left: return UR_RESULT_ERROR_INVALID_EVENT;
      case ordo::released::last_holder: H::destroy(e); break;
      case ordo::released::kept: break;
      }
      return UR_RESULT_SUCCESS;
    }
  }

  static ur_result_t UR_APICALL get_native_handle(ur_event_handle_t hEvent, ur_native_handle_t *phNativeEvent) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (!phNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    ur_native_handle_t native = 0;
    if (!H::null_native(e))
      if (ur_result_t r = H::native_handle(e, native)) return r;
    *phNativeEvent = native;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL create_with_native_handle(ur_native_handle_t hNativeEvent, ur_context_handle_t hContext,
                                                          const ur_event_native_properties_t *pProperties,
                                                          ur_event_handle_t *phEvent) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r; // the adapter's, found by argument-dependent lookup
    if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if constexpr (kOwnFromNative) {
      return H::from_native(ctx, hNativeEvent, pProperties, phEvent);
    } else {
      auto *e = new Event();
      e->ctx = ctx;
      e->pooled = false;
      // No native object, nothing to own: 0 gets no properties.
      if (ur_result_t r = H::adopt_native(e, ctx, hNativeEvent, hNativeEvent ? pProperties : nullptr)) {
        delete e; // never handed out
        return r;
      }
      *phEvent = reinterpret_cast<ur_event_handle_t>(e);
      return UR_RESULT_SUCCESS;
    }
  }

  static ur_result_t UR_APICALL set_callback(ur_event_handle_t hEvent, ur_execution_info_t execStatus,
                                             ur_event_callback_t pfnNotify, void *pUserData) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (kTaskGraph && !pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (execStatus > UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (execStatus == UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    if (!pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (H::null_native(e)) { // complete: every status is reached
      pfnNotify(hEvent, execStatus, pUserData);
      return UR_RESULT_SUCCESS;
    }
    if (!kTaskGraph) e->hold(); // the callback thread drops it after the call
    if constexpr (std::is_same_v<decltype(H::add_callback(e, execStatus, pfnNotify, pUserData)), ur_result_t>) {
      return H::add_callback(e, execStatus, pfnNotify, pUserData);
    } else {
      H::add_callback(e, execStatus, pfnNotify, pUserData);
      return UR_RESULT_SUCCESS;
    }
  }

  static void install(ur_dditable_t &t) {
    t.Event.pfnGetInfo = get_info;
    t.Event.pfnGetProfilingInfo = get_profiling_info;
    t.Event.pfnWait = wait;
    t.Event.pfnRetain = retain;
    t.Event.pfnRelease = release;
    t.Event.pfnGetNativeHandle = get_native_handle;
    t.Event.pfnCreateWithNativeHandle = create_with_native_handle;
    t.Event.pfnSetCallback = set_callback;
  }
};

} // namespace ordo::ur_common
