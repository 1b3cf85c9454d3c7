// SPDX-License-Identifier: Apache-2.0
// Workers, command queues and command lists of the CPU test driver: commands run in
// order on a worker thread; each waits for its wait events, does its work, and then
// signals its event.
#include <algorithm>
#include <cstring>

#include "driver.hpp"
#include "tables.hpp"

namespace zecpu {

// ---- Worker ---------------------------------------------------------------------------

Worker::Worker() : thread_([this] { run(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Worker::push(Task t) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(t));
    ++pushed_;
  }
  wake_.notify_all();
}

bool Worker::drain(uint64_t timeout_ns) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    target = pushed_;
  }
  return signals().wait(timeout_ns, [&] { return done_.load(std::memory_order_acquire) >= target; });
}

void Worker::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return; // stopping, nothing left
    Task t = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    t();
    done_.fetch_add(1, std::memory_order_acq_rel);
    signals().notify();
    lock.lock();
  }
}

// ---- commands -------------------------------------------------------------------------

void run_command(const Command &c) {
  for (Event *e : c.waits)
    if (!e->is_signalled()) signals().wait(UINT64_MAX, [e] { return e->is_signalled(); });
  uint64_t start = now_ns();
  if (c.work) c.work();
  if (c.signal) c.signal->signal(start, now_ns());
}

ze_result_t CommandList::append(Command c) {
  if (immediate) {
    worker->push([c = std::move(c)] { run_command(c); });
    if (synchronous) worker->drain(UINT64_MAX); // ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: done on return
    return ZE_RESULT_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  recorded.push_back(std::move(c));
  return ZE_RESULT_SUCCESS;
}

namespace {

// The wait list of an append: every handle must be an event.
ze_result_t wait_list(uint32_t n, ze_event_handle_t *list, std::vector<Event *> &out) {
  if (n && !list) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < n; ++i) {
    Event *e = as<Event>(list[i]);
    if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    out.push_back(e);
  }
  return ZE_RESULT_SUCCESS;
}

// The common shape of an append: list, signal event, wait list, work.
ze_result_t append(ze_command_list_handle_t hl, ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits,
                   std::function<void()> work) {
  CommandList *l = as<CommandList>(hl);
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command c;
  if (signal && !(c.signal = as<Event>(signal))) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (ze_result_t r = wait_list(n, waits, c.waits)) return r;
  c.work = std::move(work);
  return l->append(std::move(c));
}

ze_result_t ZE_APICALL CommandQueueCreate(ze_context_handle_t hc, ze_device_handle_t hd,
                                          const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out) {
  Context *c = as<Context>(hc);
  Device *d = as<Device>(hd);
  if (!c || !d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->ordinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto *q = new CommandQueue();
  q->context = c;
  q->device = d;
  q->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  *out = reinterpret_cast<ze_command_queue_handle_t>(q);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandQueueDestroy(ze_command_queue_handle_t h) {
  CommandQueue *q = as<CommandQueue>(h);
  if (!q) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  q->magic = 0;
  delete q; // the worker finishes what it was given first
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandQueueExecuteCommandLists(ze_command_queue_handle_t h, uint32_t n,
                                                       ze_command_list_handle_t *lists, ze_fence_handle_t hf) {
  CommandQueue *q = as<CommandQueue>(h);
  if (!q) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!lists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  Fence *f = hf ? as<Fence>(hf) : nullptr;
  if (hf && !f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::vector<CommandList *> ls;
  for (uint32_t i = 0; i < n; ++i) {
    CommandList *l = as<CommandList>(lists[i]);
    if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    std::lock_guard<std::mutex> lock(l->mutex);
    if (l->immediate || !l->closed) return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
    ls.push_back(l);
  }
  // The commands are copied now: a list may be reset and rerecorded once this returns
  // only after the queue has run it, as on any driver, but a copy costs nothing here.
  for (CommandList *l : ls) {
    std::vector<Command> cmds;
    {
      std::lock_guard<std::mutex> lock(l->mutex);
      cmds = l->recorded;
    }
    q->worker.push([cmds = std::move(cmds)] {
      for (const Command &c : cmds) run_command(c);
    });
  }
  if (f)
    q->worker.push([f] {
      f->signalled.store(1, std::memory_order_release);
      signals().notify();
    });
  if (q->synchronous) q->worker.drain(UINT64_MAX);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandQueueSynchronize(ze_command_queue_handle_t h, uint64_t timeout) {
  CommandQueue *q = as<CommandQueue>(h);
  if (!q) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return q->worker.drain(timeout) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL CommandListCreate(ze_context_handle_t hc, ze_device_handle_t hd,
                                         const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
  Context *c = as<Context>(hc);
  Device *d = as<Device>(hd);
  if (!c || !d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->commandQueueGroupOrdinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto *l = new CommandList();
  l->context = c;
  l->device = d;
  *out = reinterpret_cast<ze_command_list_handle_t>(l);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandListCreateImmediate(ze_context_handle_t hc, ze_device_handle_t hd,
                                                  const ze_command_queue_desc_t *desc, ze_command_list_handle_t *out) {
  Context *c = as<Context>(hc);
  Device *d = as<Device>(hd);
  if (!c || !d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->ordinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto *l = new CommandList();
  l->context = c;
  l->device = d;
  l->immediate = true;
  l->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  l->worker = std::make_unique<Worker>();
  *out = reinterpret_cast<ze_command_list_handle_t>(l);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandListDestroy(ze_command_list_handle_t h) {
  CommandList *l = as<CommandList>(h);
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  l->magic = 0;
  delete l;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandListClose(ze_command_list_handle_t h) {
  CommandList *l = as<CommandList>(h);
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard<std::mutex> lock(l->mutex);
  l->closed = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandListReset(ze_command_list_handle_t h) {
  CommandList *l = as<CommandList>(h);
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (l->immediate) {
    l->worker->drain(UINT64_MAX);
    return ZE_RESULT_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(l->mutex);
  l->recorded.clear();
  l->closed = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL AppendBarrier(ze_command_list_handle_t h, ze_event_handle_t signal, uint32_t n,
                                     ze_event_handle_t *waits) {
  // Commands of a list already run one after another: a barrier only waits and signals.
  return append(h, signal, n, waits, nullptr);
}

ze_result_t ZE_APICALL AppendMemoryRangesBarrier(ze_command_list_handle_t h, uint32_t, const size_t *, const void **,
                                                 ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits) {
  return append(h, signal, n, waits, nullptr);
}

ze_result_t ZE_APICALL AppendMemoryCopy(ze_command_list_handle_t h, void *dst, const void *src, size_t size,
                                        ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits) {
  if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return append(h, signal, n, waits, [=] { std::memmove(dst, src, size); });
}

ze_result_t ZE_APICALL AppendMemoryFill(ze_command_list_handle_t h, void *ptr, const void *pattern, size_t psize,
                                        size_t size, ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits) {
  if (!ptr || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (psize == 0 || psize > 128 || (psize & (psize - 1))) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::vector<uint8_t> bytes(static_cast<const uint8_t *>(pattern), static_cast<const uint8_t *>(pattern) + psize);
  return append(h, signal, n, waits, [=] {
    auto *out = static_cast<uint8_t *>(ptr);
    if (psize == 1) {
      std::memset(out, bytes[0], size);
      return;
    }
    // One pattern, then copies of what is written so far, doubling each time.
    size_t done = std::min(size, psize);
    std::memcpy(out, bytes.data(), done);
    while (done < size) {
      size_t n = std::min(done, size - done);
      std::memcpy(out + done, out, n);
      done += n;
    }
  });
}

ze_result_t ZE_APICALL AppendMemoryCopyRegion(ze_command_list_handle_t h, void *dst, const ze_copy_region_t *dr,
                                              uint32_t dpitch, uint32_t dslice, const void *src,
                                              const ze_copy_region_t *sr, uint32_t spitch, uint32_t sslice,
                                              ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits) {
  if (!dst || !src || !dr || !sr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (dr->width != sr->width || dr->height != sr->height || dr->depth != sr->depth)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const ze_copy_region_t d = *dr, s = *sr;
  return append(h, signal, n, waits, [=] {
    uint32_t depth = d.depth ? d.depth : 1;
    for (uint32_t z = 0; z < depth; ++z)
      for (uint32_t y = 0; y < d.height; ++y)
        std::memmove(static_cast<uint8_t *>(dst) + size_t(d.originZ + z) * dslice + size_t(d.originY + y) * dpitch +
                         d.originX,
                     static_cast<const uint8_t *>(src) + size_t(s.originZ + z) * sslice +
                         size_t(s.originY + y) * spitch + s.originX,
                     d.width);
  });
}

ze_result_t ZE_APICALL AppendMemoryPrefetch(ze_command_list_handle_t h, const void *p, size_t) {
  if (!as<CommandList>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return p ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER; // one memory: nothing to move
}

ze_result_t ZE_APICALL AppendMemAdvise(ze_command_list_handle_t h, ze_device_handle_t d, const void *p, size_t,
                                       ze_memory_advice_t) {
  if (!as<CommandList>(h) || !as<Device>(d)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return p ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
}

ze_result_t ZE_APICALL AppendSignalEvent(ze_command_list_handle_t h, ze_event_handle_t e) {
  if (!as<Event>(e)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append(h, e, 0, nullptr, nullptr);
}

ze_result_t ZE_APICALL AppendWaitOnEvents(ze_command_list_handle_t h, uint32_t n, ze_event_handle_t *waits) {
  return append(h, nullptr, n, waits, nullptr);
}

ze_result_t ZE_APICALL AppendEventReset(ze_command_list_handle_t h, ze_event_handle_t he) {
  Event *e = as<Event>(he);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return append(h, nullptr, 0, nullptr, [e] { e->signalled.store(0, std::memory_order_release); });
}

ze_result_t ZE_APICALL AppendWriteGlobalTimestamp(ze_command_list_handle_t h, uint64_t *dst, ze_event_handle_t signal,
                                                  uint32_t n, ze_event_handle_t *waits) {
  if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return append(h, signal, n, waits, [dst] { *dst = now_ns(); });
}

} // namespace

void install(ze_command_queue_dditable_t &t) {
  t.pfnCreate = CommandQueueCreate;
  t.pfnDestroy = CommandQueueDestroy;
  t.pfnExecuteCommandLists = CommandQueueExecuteCommandLists;
  t.pfnSynchronize = CommandQueueSynchronize;
}

ze_result_t ZE_APICALL AppendLaunchKernel(ze_command_list_handle_t, ze_kernel_handle_t, const ze_group_count_t *,
                                          ze_event_handle_t, uint32_t, ze_event_handle_t *);

void install(ze_command_list_dditable_t &t) {
  t.pfnCreate = CommandListCreate;
  t.pfnCreateImmediate = CommandListCreateImmediate;
  t.pfnDestroy = CommandListDestroy;
  t.pfnClose = CommandListClose;
  t.pfnReset = CommandListReset;
  t.pfnAppendWriteGlobalTimestamp = AppendWriteGlobalTimestamp;
  t.pfnAppendBarrier = AppendBarrier;
  t.pfnAppendMemoryRangesBarrier = AppendMemoryRangesBarrier;
  t.pfnAppendMemoryCopy = AppendMemoryCopy;
  t.pfnAppendMemoryFill = AppendMemoryFill;
  t.pfnAppendMemoryCopyRegion = AppendMemoryCopyRegion;
  t.pfnAppendMemoryPrefetch = AppendMemoryPrefetch;
  t.pfnAppendMemAdvise = AppendMemAdvise;
  t.pfnAppendSignalEvent = AppendSignalEvent;
  t.pfnAppendWaitOnEvents = AppendWaitOnEvents;
  t.pfnAppendEventReset = AppendEventReset;
  t.pfnAppendLaunchKernel = AppendLaunchKernel;
}

// Shared with module.cpp, which launches kernels through the same path.
ze_result_t append_command(ze_command_list_handle_t h, ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits,
                           std::function<void()> work) {
  return append(h, signal, n, waits, std::move(work));
}

} // namespace zecpu
