// SPDX-License-Identifier: Apache-2.0
// Event pools, events and fences of the CPU test driver. Events are signalled by the
// commands that name them (with the command's start and end time, for kernel
// timestamps) or by the host; host waits really sleep until then.
#include "driver.hpp"
#include "tables.hpp"

namespace zecpu {

namespace {

ze_result_t ZE_APICALL EventPoolCreate(ze_context_handle_t hc, const ze_event_pool_desc_t *desc, uint32_t n,
                                       ze_device_handle_t *devices, ze_event_pool_handle_t *out) {
  Context *c = as<Context>(hc);
  if (!c) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || (n && !devices)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  auto *p = new EventPool();
  p->context = c;
  p->flags = desc->flags;
  p->count = desc->count;
  p->slots.resize(desc->count);
  *out = reinterpret_cast<ze_event_pool_handle_t>(p);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL EventPoolDestroy(ze_event_pool_handle_t h) {
  EventPool *p = as<EventPool>(h);
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  p->magic = 0;
  for (auto &e : p->slots)
    if (e) e->magic = 0;
  delete p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL EventCreate(ze_event_pool_handle_t h, const ze_event_desc_t *desc, ze_event_handle_t *out) {
  EventPool *p = as<EventPool>(h);
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->index >= p->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(p->mutex);
  auto &slot = p->slots[desc->index];
  if (slot) return ZE_RESULT_ERROR_INVALID_ARGUMENT; // already made
  slot = std::make_unique<Event>();
  slot->pool = p;
  slot->index = desc->index;
  *out = reinterpret_cast<ze_event_handle_t>(slot.get());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL EventDestroy(ze_event_handle_t h) {
  Event *e = as<Event>(h);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  EventPool *p = e->pool;
  std::lock_guard<std::mutex> lock(p->mutex);
  e->magic = 0;
  p->slots[e->index].reset();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL EventHostSignal(ze_event_handle_t h) {
  Event *e = as<Event>(h);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  uint64_t t = now_ns();
  e->signal(t, t);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL EventHostSynchronize(ze_event_handle_t h, uint64_t timeout) {
  Event *e = as<Event>(h);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (e->is_signalled()) return ZE_RESULT_SUCCESS;
  if (timeout == 0) return ZE_RESULT_NOT_READY;
  return signals().wait(timeout, [e] { return e->is_signalled(); }) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL EventQueryStatus(ze_event_handle_t h) {
  Event *e = as<Event>(h);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return e->is_signalled() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL EventHostReset(ze_event_handle_t h) {
  Event *e = as<Event>(h);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  e->signalled.store(0, std::memory_order_release);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL EventQueryKernelTimestamp(ze_event_handle_t h, ze_kernel_timestamp_result_t *out) {
  Event *e = as<Event>(h);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!(e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (!e->is_signalled()) return ZE_RESULT_NOT_READY;
  out->global.kernelStart = out->context.kernelStart = e->start_ns;
  out->global.kernelEnd = out->context.kernelEnd = e->end_ns;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL FenceCreate(ze_command_queue_handle_t hq, const ze_fence_desc_t *desc, ze_fence_handle_t *out) {
  CommandQueue *q = as<CommandQueue>(hq);
  if (!q) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto *f = new Fence();
  f->queue = q;
  f->signalled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) ? 1 : 0;
  *out = reinterpret_cast<ze_fence_handle_t>(f);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL FenceDestroy(ze_fence_handle_t h) {
  Fence *f = as<Fence>(h);
  if (!f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  f->magic = 0;
  delete f;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL FenceHostSynchronize(ze_fence_handle_t h, uint64_t timeout) {
  Fence *f = as<Fence>(h);
  if (!f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto done = [f] { return f->signalled.load(std::memory_order_acquire) != 0; };
  if (done()) return ZE_RESULT_SUCCESS;
  if (timeout == 0) return ZE_RESULT_NOT_READY;
  return signals().wait(timeout, done) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL FenceQueryStatus(ze_fence_handle_t h) {
  Fence *f = as<Fence>(h);
  if (!f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return f->signalled.load(std::memory_order_acquire) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL FenceReset(ze_fence_handle_t h) {
  Fence *f = as<Fence>(h);
  if (!f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  f->signalled.store(0, std::memory_order_release);
  return ZE_RESULT_SUCCESS;
}

} // namespace

void install(ze_event_pool_dditable_t &t) {
  t.pfnCreate = EventPoolCreate;
  t.pfnDestroy = EventPoolDestroy;
}

void install(ze_event_dditable_t &t) {
  t.pfnCreate = EventCreate;
  t.pfnDestroy = EventDestroy;
  t.pfnHostSignal = EventHostSignal;
  t.pfnHostSynchronize = EventHostSynchronize;
  t.pfnQueryStatus = EventQueryStatus;
  t.pfnHostReset = EventHostReset;
  t.pfnQueryKernelTimestamp = EventQueryKernelTimestamp;
}

void install(ze_fence_dditable_t &t) {
  t.pfnCreate = FenceCreate;
  t.pfnDestroy = FenceDestroy;
  t.pfnHostSynchronize = FenceHostSynchronize;
  t.pfnQueryStatus = FenceQueryStatus;
  t.pfnReset = FenceReset;
}

} // namespace zecpu
