// SPDX-License-Identifier: Apache-2.0
// urEnqueueTimestampRecordingExp over an adapter's host tasks (ordo_derived/derived.hpp,
// docs/command-buffers.md "Derived entry points"): the command is a host task that reads
// the device's clock (urDeviceGetGlobalTimestamps) when it runs, i.e. once its wait list
// and, on an in-order queue, every earlier command have finished. Its event answers
// urEventGetProfilingInfo from those readings whether or not the queue profiles: QUEUED
// and SUBMIT are the clock at the enqueue, START, END and COMPLETE the clock when the
// command ran. Until then (or if the command failed) they are not available.
//
// The readings live in a table keyed by event handle. The table holds a reference to each
// of its events (so a handle is never reused while its entry exists) and lets go of it
// once the user's last reference is gone; urEventGetInfo's reference count leaves the
// table's own reference out.
#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

#include "ordo/ddi_fill.hpp"
#include "ordo/info.hpp"
#include "ordo_derived/derived.hpp"

namespace ordo::derived {

namespace {

struct Stamp {
  ur_device_handle_t device = nullptr;
  uint64_t queued = 0;
  std::atomic<uint64_t> ran{0}; // 0: not run (yet)
};

// The adapter's own entry points that these wrap.
ur_pfnEventGetProfilingInfo_t g_profiling = nullptr;
ur_pfnEventRelease_t g_release = nullptr;
ur_pfnEventGetInfo_t g_event_info = nullptr;

std::mutex g_mu;
std::unordered_map<ur_event_handle_t, std::shared_ptr<Stamp>> g_stamps; // under g_mu
std::atomic<size_t> g_count{0};                                         // g_stamps.size()

const ur_dditable_t &table() { return ordo::adapter_ddi(); }

std::shared_ptr<Stamp> find(ur_event_handle_t e) {
  if (g_count.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_stamps.find(e);
  return it == g_stamps.end() ? nullptr : it->second;
}

uint64_t device_clock(ur_device_handle_t d) {
  uint64_t t = 0;
  if (table().Device.pfnGetGlobalTimestamps(d, &t, nullptr) != UR_RESULT_SUCCESS) return 0;
  return t ? t : 1; // 0 means "not recorded"
}

void run_stamp(void *p) {
  auto *s = static_cast<std::shared_ptr<Stamp> *>(p);
  (*s)->ran.store(device_clock((*s)->device), std::memory_order_release);
  delete s;
}

ur_result_t UR_APICALL urEnqueueTimestampRecordingExp(ur_queue_handle_t hQueue, bool blocking, uint32_t numEvents,
                                                      const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  if (!hQueue) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if ((numEvents > 0) != (phEvents != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  try {
    auto stamp = std::make_shared<Stamp>();
    if (ur_result_t r =
            table().Queue.pfnGetInfo(hQueue, UR_QUEUE_INFO_DEVICE, sizeof stamp->device, &stamp->device, nullptr))
      return r;
    stamp->queued = device_clock(stamp->device);
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_stamps.reserve(g_stamps.size() + 1); // so that the emplace below cannot throw
    }
    auto *arg = new std::shared_ptr<Stamp>(stamp);
    // No lock held here: the enqueue may call back into the adapter. The entry is made
    // before the handle is given out, so nobody can ask about the event without it; no
    // entry can have this handle (each keeps its event, and so its handle, alive).
    ur_event_handle_t ev = nullptr;
    if (ur_result_t r = table().EnqueueExp.pfnHostTaskExp(hQueue, run_stamp, arg, nullptr, numEvents, phEvents, &ev)) {
      delete arg;
      return r;
    }
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_stamps.emplace(ev, stamp);
      g_count.fetch_add(1, std::memory_order_release);
    }
    *phEvent = ev; // the user's reference
    if (table().Event.pfnRetain(ev) != UR_RESULT_SUCCESS) {
      // Cannot hold the table's reference: the entry cannot stay safely.
      std::lock_guard<std::mutex> l(g_mu);
      g_stamps.erase(ev);
      g_count.fetch_sub(1, std::memory_order_release);
    }
    if (blocking) return table().Event.pfnWait(1, &ev);
    return UR_RESULT_SUCCESS;
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
}

ur_result_t UR_APICALL urEventGetProfilingInfo(ur_event_handle_t hEvent, ur_profiling_info_t propName, size_t propSize,
                                               void *pPropValue, size_t *pPropSizeRet) {
  std::shared_ptr<Stamp> s = find(hEvent);
  if (!s) return g_profiling(hEvent, propName, propSize, pPropValue, pPropSizeRet);
  if (propName > UR_PROFILING_INFO_COMMAND_COMPLETE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (pPropValue && propSize == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  uint64_t t = 0;
  switch (propName) {
  case UR_PROFILING_INFO_COMMAND_QUEUED:
  case UR_PROFILING_INFO_COMMAND_SUBMIT: t = s->queued; break;
  default: t = s->ran.load(std::memory_order_acquire); break;
  }
  if (t == 0) return UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(t);
}

ur_result_t UR_APICALL urEventGetInfo(ur_event_handle_t hEvent, ur_event_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  ur_result_t r = g_event_info(hEvent, propName, propSize, pPropValue, pPropSizeRet);
  if (r == UR_RESULT_SUCCESS && propName == UR_EVENT_INFO_REFERENCE_COUNT && pPropValue &&
      propSize >= sizeof(uint32_t) && find(hEvent))
    *static_cast<uint32_t *>(pPropValue) -= 1; // the table's own reference
  return r;
}

uint32_t adapter_count(ur_event_handle_t e) {
  uint32_t n = 0;
  return g_event_info(e, UR_EVENT_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr) == UR_RESULT_SUCCESS ? n : 0;
}

ur_result_t UR_APICALL urEventRelease(ur_event_handle_t hEvent) {
  if (g_count.load(std::memory_order_acquire) == 0) return g_release(hEvent);
  std::unique_lock<std::mutex> lock(g_mu);
  auto it = g_stamps.find(hEvent);
  if (it == g_stamps.end()) {
    lock.unlock();
    return g_release(hEvent);
  }
  // The table's reference stays until the user's are gone (count 1 left: ours).
  if (adapter_count(hEvent) <= 1) return UR_RESULT_ERROR_INVALID_EVENT; // the user holds none
  ur_result_t r = g_release(hEvent);
  if (r == UR_RESULT_SUCCESS && adapter_count(hEvent) == 1) {
    g_stamps.erase(it);
    g_count.fetch_sub(1, std::memory_order_release);
    lock.unlock();
    return g_release(hEvent);
  }
  return r;
}

} // namespace

void install_timestamp_recording(ur_dditable_t &t) {
  if (t.EnqueueExp.pfnTimestampRecordingExp || !t.EnqueueExp.pfnHostTaskExp || !t.Event.pfnGetProfilingInfo ||
      !t.Event.pfnRelease || !t.Event.pfnGetInfo || !t.Device.pfnGetGlobalTimestamps)
    return;
  g_profiling = t.Event.pfnGetProfilingInfo;
  g_release = t.Event.pfnRelease;
  g_event_info = t.Event.pfnGetInfo;
  t.Event.pfnGetProfilingInfo = urEventGetProfilingInfo;
  t.Event.pfnRelease = urEventRelease;
  t.Event.pfnGetInfo = urEventGetInfo;
  t.EnqueueExp.pfnTimestampRecordingExp = urEnqueueTimestampRecordingExp;
}

} // namespace ordo::derived
