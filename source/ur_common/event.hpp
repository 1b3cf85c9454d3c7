// SPDX-License-Identifier: Apache-2.0
// The urEvent* entry points of the adapters whose events stand for one command on a
// lane (Level Zero, the stream backend): argument checks in their order, reference
// counts, the answers every such event gives alike and the synchronisation points,
// written once. A hooks struct `H` gives:
//
//   using Context = ...; using Event = ...;  // Event: an event_object (objects.hpp) with queued_ns
//   // An event the program may still name (ordo::unwrap, or stricter).
//   static ur_result_t unwrap_event(ur_event_handle_t, Event *&);
//   static ur_result_t execution_status(Event *, ur_event_status_t &);
//   // Whether the event has profiling timestamps; then, once its command is complete,
//   // its start and end in host nanoseconds (PROFILING_INFO_NOT_AVAILABLE before).
//   static bool timed(const Event *);
//   static ur_result_t command_times(Event *, uint64_t &start_ns, uint64_t &end_ns);
//   static ur_result_t wait(Event *);            // a host wait for the command
//   static void destroy(Event *);                // the last holder went
//   static ur_result_t native_handle(Event *, ur_native_handle_t &);
//   // An event made from a native handle (ctx set, the user's reference): what the
//   // adapter knows of the handle, and its holder of the queue or context.
//   static void adopt_native(Event *, Context *, ur_native_handle_t, const ur_event_native_properties_t *);
//   // A callback that holds the event: to the adapter's callback thread.
//   static void add_callback(Event *, ur_execution_info_t, ur_event_callback_t, void *);
#pragma once

#include <cstddef>
#include <cstdint>

#include "ordo/info.hpp"
#include "ordo/object.hpp"
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo::ur_common {

template <class H> struct event_entry_points {
  using Context = typename H::Context;
  using Event = typename H::Event;

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
      ur_event_status_t status = UR_EVENT_STATUS_SUBMITTED;
      if (ur_result_t r = H::execution_status(e, status)) return r;
      return out.value(status);
    }
    case UR_EVENT_INFO_REFERENCE_COUNT: return out.value(e->count());
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  // Queued and submitted are the enqueue call's host time; start and end the device's,
  // mapped to host nanoseconds.
  static ur_result_t UR_APICALL get_profiling_info(ur_event_handle_t hEvent, ur_profiling_info_t propName,
                                                   size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (pPropValue && propSize == 0) return UR_RESULT_ERROR_INVALID_VALUE;
    if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!H::timed(e)) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    if (propName == UR_PROFILING_INFO_COMMAND_QUEUED || propName == UR_PROFILING_INFO_COMMAND_SUBMIT)
      return out.value(e->queued_ns);
    uint64_t start_ns = 0, end_ns = 0;
    if (ur_result_t r = H::command_times(e, start_ns, end_ns)) return r;
    // The clocks are mapped, not shared: keep queued <= start <= end despite rounding.
    if (start_ns < e->queued_ns) start_ns = e->queued_ns;
    if (end_ns < start_ns) end_ns = start_ns;
    return out.value(propName == UR_PROFILING_INFO_COMMAND_START ? start_ns : end_ns);
  }

  static ur_result_t UR_APICALL wait(uint32_t numEvents, const ur_event_handle_t *phEventWaitList) {
    if (!phEventWaitList) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (numEvents == 0) return UR_RESULT_ERROR_INVALID_VALUE;
    for (uint32_t i = 0; i < numEvents; ++i) {
      Event *e = nullptr;
      if (ur_result_t r = H::unwrap_event(phEventWaitList[i], e)) return r;
    }
    for (uint32_t i = 0; i < numEvents; ++i)
      if (ur_result_t r = H::wait(reinterpret_cast<Event *>(phEventWaitList[i]))) return r;
    // A synchronisation point of each context named: pools collect completed frees
    // and give back memory above their release thresholds.
    Context *done = nullptr;
    for (uint32_t i = 0; i < numEvents; ++i) {
      Context *ctx = reinterpret_cast<Event *>(phEventWaitList[i])->ctx;
      if (ctx && ctx != done) (done = ctx)->pools->sync_point();
    }
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL retain(ur_event_handle_t hEvent) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (!e->retain_user()) return ordo::invalid_of(e);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL release(ur_event_handle_t hEvent) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    switch (ordo::release_reference(e)) {
    case ordo::released::none_left: return UR_RESULT_ERROR_INVALID_EVENT;
    case ordo::released::last_holder: H::destroy(e); break;
    case ordo::released::kept: break;
    }
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL get_native_handle(ur_event_handle_t hEvent, ur_native_handle_t *phNativeEvent) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (!phNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    ur_native_handle_t native = 0;
    if (ur_result_t r = H::native_handle(e, native)) return r;
    *phNativeEvent = native;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL create_with_native_handle(ur_native_handle_t hNativeEvent, ur_context_handle_t hContext,
                                                          const ur_event_native_properties_t *pProperties,
                                                          ur_event_handle_t *phEvent) {
    ORDO_UNWRAP(Context, ctx, hContext);
    if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!hNativeEvent) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
    auto *e = new Event();
    e->ctx = ctx;
    e->pooled = false;
    H::adopt_native(e, ctx, hNativeEvent, pProperties);
    *phEvent = reinterpret_cast<ur_event_handle_t>(e);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL set_callback(ur_event_handle_t hEvent, ur_execution_info_t execStatus,
                                             ur_event_callback_t pfnNotify, void *pUserData) {
    Event *e = nullptr;
    if (ur_result_t r = H::unwrap_event(hEvent, e)) return r;
    if (execStatus > UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (execStatus == UR_EXECUTION_INFO_QUEUED) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    if (!pfnNotify) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    e->hold(); // the callback thread drops it after the call
    H::add_callback(e, execStatus, pfnNotify, pUserData);
    return UR_RESULT_SUCCESS;
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
