// SPDX-License-Identifier: Apache-2.0
// Entry points built from the adapter's own others (ordo_derived/derived.hpp), called
// through ordo::adapter_ddi() so they see exactly what the adapter does.
#include "ordo/guarded.hpp"
#include "ordo_derived/derived.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "ordo/ddi_fill.hpp"

namespace ordo::derived {

namespace {

const ur_dditable_t &table() { return ordo::adapter_ddi(); }

using ordo::guarded;

// ---- pitched USM ----

// Rows start at a multiple of the element size and of 128 bytes (a cache-line pair), so
// a row never shares a line with the next one.
ur_result_t UR_APICALL urUSMPitchedAllocExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                            const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool,
                                            size_t widthInBytes, size_t height, size_t elementSizeBytes, void **ppMem,
                                            size_t *pResultPitch) {
  if (!hContext || !hDevice) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!ppMem || !pResultPitch) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (widthInBytes == 0 || height == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (elementSizeBytes != 1 && elementSizeBytes != 2 && elementSizeBytes != 4 && elementSizeBytes != 8 &&
      elementSizeBytes != 16)
    return UR_RESULT_ERROR_INVALID_VALUE;
  const size_t step = std::max<size_t>(128, elementSizeBytes);
  if (widthInBytes > SIZE_MAX - step) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  const size_t pitch = (widthInBytes + step - 1) / step * step;
  size_t bytes;
  if (__builtin_mul_overflow(pitch, height, &bytes)) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  void *p = nullptr;
  if (ur_result_t r = table().USM.pfnDeviceAlloc(hContext, hDevice, pUSMDesc, pool, bytes, &p)) return r;
  *ppMem = p;
  *pResultPitch = pitch;
  return UR_RESULT_SUCCESS;
}

// ---- programs for a list of devices ----

// Every device must be one of the context's. The build covers all of the program's
// devices: a superset of those asked for, whose results are the same.
ur_result_t devices_in_context(ur_context_handle_t ctx, uint32_t n, const ur_device_handle_t *devices) {
  if (n == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (!devices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  uint32_t count = 0;
  if (table().Context.pfnGetInfo(ctx, UR_CONTEXT_INFO_NUM_DEVICES, sizeof count, &count, nullptr))
    return UR_RESULT_ERROR_INVALID_CONTEXT;
  std::vector<ur_device_handle_t> all(count);
  if (table().Context.pfnGetInfo(ctx, UR_CONTEXT_INFO_DEVICES, count * sizeof(ur_device_handle_t), all.data(), nullptr))
    return UR_RESULT_ERROR_INVALID_CONTEXT;
  for (uint32_t i = 0; i < n; ++i) {
    if (!devices[i]) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (std::find(all.begin(), all.end(), devices[i]) == all.end()) return UR_RESULT_ERROR_INVALID_DEVICE;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t program_context(ur_program_handle_t p, ur_context_handle_t &ctx) {
  if (!p) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (table().Program.pfnGetInfo(p, UR_PROGRAM_INFO_CONTEXT, sizeof ctx, &ctx, nullptr))
    return UR_RESULT_ERROR_INVALID_PROGRAM;
  return UR_RESULT_SUCCESS;
}

template <bool kCompile>
ur_result_t build_for(ur_program_handle_t hProgram, uint32_t numDevices, ur_device_handle_t *phDevices,
                      ur_exp_program_flags_t flags, const char *pOptions) {
  ur_context_handle_t ctx = nullptr;
  if (ur_result_t r = program_context(hProgram, ctx)) return r;
  if (flags & UR_EXP_PROGRAM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return guarded([&] {
    if (ur_result_t r = devices_in_context(ctx, numDevices, phDevices)) return r;
    return kCompile ? table().Program.pfnCompile(ctx, hProgram, pOptions)
                    : table().Program.pfnBuild(ctx, hProgram, pOptions);
  });
}

ur_result_t UR_APICALL urProgramBuildExp(ur_program_handle_t hProgram, uint32_t numDevices,
                                         ur_device_handle_t *phDevices, ur_exp_program_flags_t flags,
                                         const char *pOptions) {
  return build_for<false>(hProgram, numDevices, phDevices, flags, pOptions);
}

ur_result_t UR_APICALL urProgramCompileExp(ur_program_handle_t hProgram, uint32_t numDevices,
                                           ur_device_handle_t *phDevices, ur_exp_program_flags_t flags,
                                           const char *pOptions) {
  return build_for<true>(hProgram, numDevices, phDevices, flags, pOptions);
}

ur_result_t UR_APICALL urProgramLinkExp(ur_context_handle_t hContext, uint32_t numDevices,
                                        ur_device_handle_t *phDevices, ur_exp_program_flags_t flags, uint32_t count,
                                        const ur_program_handle_t *phPrograms, const char *pOptions,
                                        ur_program_handle_t *phProgram) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!phProgram || !phPrograms) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_EXP_PROGRAM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return guarded([&] {
    if (ur_result_t r = devices_in_context(hContext, numDevices, phDevices)) return r;
    return table().Program.pfnLink(hContext, count, phPrograms, pOptions, phProgram);
  });
}

// ---- native commands ----

struct NativeCall {
  ur_exp_enqueue_native_command_function_t fn;
  ur_queue_handle_t queue;
  void *data;
};

void run_native_call(void *p) {
  NativeCall *call = static_cast<NativeCall *>(p);
  call->fn(call->queue, call->data);
  delete call;
}

ur_result_t check_native_args(ur_queue_handle_t q, ur_exp_enqueue_native_command_function_t fn, uint32_t numMems,
                              const ur_mem_handle_t *mems, const ur_exp_enqueue_native_command_properties_t *props,
                              uint32_t numEvents, const ur_event_handle_t *events) {
  if (!q) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!fn) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numMems > 0 && !mems) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (props && props->flags & UR_EXP_ENQUEUE_NATIVE_COMMAND_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if ((numEvents > 0) != (events != nullptr)) return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;
  return UR_RESULT_SUCCESS;
}

// Where the adapter runs host tasks, the function is one: it runs on the adapter's own
// threads once the wait list (and the queue's order) allows.
ur_result_t UR_APICALL enqueueNativeAsHostTask(ur_queue_handle_t hQueue, ur_exp_enqueue_native_command_function_t fn,
                                               void *pData, uint32_t numMems, const ur_mem_handle_t *phMems,
                                               const ur_exp_enqueue_native_command_properties_t *pProps,
                                               uint32_t numEvents, const ur_event_handle_t *phEvents,
                                               ur_event_handle_t *phEvent) {
  if (ur_result_t r = check_native_args(hQueue, fn, numMems, phMems, pProps, numEvents, phEvents)) return r;
  return guarded([&] {
    auto *call = new NativeCall{fn, hQueue, pData};
    ur_result_t r =
        table().EnqueueExp.pfnHostTaskExp(hQueue, run_native_call, call, nullptr, numEvents, phEvents, phEvent);
    if (r != UR_RESULT_SUCCESS) delete call;
    return r;
  });
}

// Otherwise the function is called now, between a barrier that follows the wait list
// and a marker after what it enqueued on the native queue (it submits native commands).
ur_result_t UR_APICALL enqueueNativeInline(ur_queue_handle_t hQueue, ur_exp_enqueue_native_command_function_t fn,
                                           void *pData, uint32_t numMems, const ur_mem_handle_t *phMems,
                                           const ur_exp_enqueue_native_command_properties_t *pProps, uint32_t numEvents,
                                           const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  if (ur_result_t r = check_native_args(hQueue, fn, numMems, phMems, pProps, numEvents, phEvents)) return r;
  ur_event_handle_t before = nullptr;
  if (ur_result_t r = table().Enqueue.pfnEventsWaitWithBarrier(hQueue, numEvents, phEvents, &before)) return r;
  table().Event.pfnRelease(before);
  fn(hQueue, pData);
  return table().Enqueue.pfnEventsWaitWithBarrier(hQueue, 0, nullptr, phEvent);
}

// ---- device globals, copied through the pointer the program gives ----

template <bool kRead>
ur_result_t device_global_copy(ur_queue_handle_t hQueue, ur_program_handle_t hProgram, const char *name, bool blocking,
                               size_t count, size_t offset, void *host, uint32_t numEvents,
                               const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  if (!hQueue || !hProgram) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!name || !host) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ur_device_handle_t device = nullptr;
  if (table().Queue.pfnGetInfo(hQueue, UR_QUEUE_INFO_DEVICE, sizeof device, &device, nullptr))
    return UR_RESULT_ERROR_INVALID_QUEUE;
  size_t size = 0;
  void *global = nullptr;
  if (ur_result_t r = table().Program.pfnGetGlobalVariablePointer(device, hProgram, name, &size, &global)) return r;
  if (count == 0 || offset > size || count > size - offset) return UR_RESULT_ERROR_INVALID_SIZE;
  char *at = static_cast<char *>(global) + offset;
  return kRead ? table().Enqueue.pfnUSMMemcpy(hQueue, blocking, host, at, count, numEvents, phEvents, phEvent)
               : table().Enqueue.pfnUSMMemcpy(hQueue, blocking, at, host, count, numEvents, phEvents, phEvent);
}

ur_result_t UR_APICALL urEnqueueDeviceGlobalVariableRead(ur_queue_handle_t hQueue, ur_program_handle_t hProgram,
                                                         const char *name, bool blocking, size_t count, size_t offset,
                                                         void *pDst, uint32_t numEvents,
                                                         const ur_event_handle_t *phEvents,
                                                         ur_event_handle_t *phEvent) {
  return device_global_copy<true>(hQueue, hProgram, name, blocking, count, offset, pDst, numEvents, phEvents, phEvent);
}

ur_result_t UR_APICALL urEnqueueDeviceGlobalVariableWrite(ur_queue_handle_t hQueue, ur_program_handle_t hProgram,
                                                          const char *name, bool blocking, size_t count, size_t offset,
                                                          const void *pSrc, uint32_t numEvents,
                                                          const ur_event_handle_t *phEvents,
                                                          ur_event_handle_t *phEvent) {
  return device_global_copy<false>(hQueue, hProgram, name, blocking, count, offset, const_cast<void *>(pSrc), numEvents,
                                   phEvents, phEvent);
}

// ---- a copy without a queue: one made for it on the context's first device ----

ur_result_t UR_APICALL urUSMContextMemcpyExp(ur_context_handle_t hContext, void *pDst, const void *pSrc, size_t size) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  ur_device_handle_t device = nullptr;
  if (table().Context.pfnGetInfo(hContext, UR_CONTEXT_INFO_DEVICES, sizeof device, &device, nullptr))
    return UR_RESULT_ERROR_INVALID_CONTEXT;
  ur_queue_handle_t q = nullptr;
  if (ur_result_t r = table().Queue.pfnCreate(hContext, device, nullptr, &q)) return r;
  ur_result_t r = table().Enqueue.pfnUSMMemcpy(q, true, pDst, pSrc, size, 0, nullptr, nullptr);
  table().Queue.pfnRelease(q);
  return r;
}

// ---- importing host memory: its pages locked in memory (mlock) ----

// Imported ranges, by first byte: the locked pages [lock_start, lock_end), the bytes'
// end and the context. Imports never overlap in bytes but may share a page: a release
// leaves locked the pages its neighbours still hold (mlock does not count).
struct Imported {
  ur_context_handle_t context;
  uintptr_t lock_start, lock_end;
  uintptr_t end; // of the bytes asked for
};
struct ImportTable {
  std::mutex mu;
  std::map<uintptr_t, Imported> by_start;
};
ImportTable &imports() {
  static ImportTable *t = new ImportTable; // never destroyed: imports may outlive statics
  return *t;
}

bool context_valid(ur_context_handle_t c) {
  uint32_t n = 0;
  return c &&
         table().Context.pfnGetInfo(c, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr) == UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMImportExp(ur_context_handle_t hContext, void *pMem, size_t size) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!context_valid(hContext)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pMem);
  if (size == 0 || p > UINTPTR_MAX - size) return UR_RESULT_ERROR_INVALID_SIZE;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = p / page * page, hi = (p + size + page - 1) / page * page;
  return guarded([&] {
    ImportTable &it = imports();
    std::lock_guard<std::mutex> lock(it.mu);
    auto next = it.by_start.lower_bound(p);
    if (next != it.by_start.end() && next->first < p + size) return UR_RESULT_ERROR_INVALID_VALUE; // overlaps
    if (next != it.by_start.begin() && std::prev(next)->second.end > p) return UR_RESULT_ERROR_INVALID_VALUE;
    if (mlock(reinterpret_cast<void *>(lo), hi - lo) != 0) return UR_RESULT_ERROR_OUT_OF_RESOURCES; // RLIMIT_MEMLOCK
    try {
      it.by_start.emplace(p, Imported{hContext, lo, hi, p + size});
    } catch (...) {
      munlock(reinterpret_cast<void *>(lo), hi - lo);
      throw;
    }
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL urUSMReleaseExp(ur_context_handle_t hContext, void *pMem) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!context_valid(hContext)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ImportTable &it = imports();
  std::lock_guard<std::mutex> lock(it.mu);
  auto found = it.by_start.find(reinterpret_cast<uintptr_t>(pMem));
  if (found == it.by_start.end() || found->second.context != hContext) return UR_RESULT_ERROR_INVALID_VALUE;
  uintptr_t lo = found->second.lock_start, hi = found->second.lock_end;
  if (found != it.by_start.begin()) lo = std::max(lo, std::prev(found)->second.lock_end);
  if (std::next(found) != it.by_start.end()) hi = std::min(hi, std::next(found)->second.lock_start);
  if (lo < hi) munlock(reinterpret_cast<void *>(lo), hi - lo);
  it.by_start.erase(found);
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_entry_points(ur_dditable_t &t) {
  if (!t.USMExp.pfnPitchedAllocExp && t.USM.pfnDeviceAlloc) t.USMExp.pfnPitchedAllocExp = urUSMPitchedAllocExp;
  if (!t.ProgramExp.pfnBuildExp && t.Program.pfnBuild) t.ProgramExp.pfnBuildExp = urProgramBuildExp;
  if (!t.ProgramExp.pfnCompileExp && t.Program.pfnCompile) t.ProgramExp.pfnCompileExp = urProgramCompileExp;
  if (!t.ProgramExp.pfnLinkExp && t.Program.pfnLink) t.ProgramExp.pfnLinkExp = urProgramLinkExp;
  if (!t.EnqueueExp.pfnNativeCommandExp)
    t.EnqueueExp.pfnNativeCommandExp = t.EnqueueExp.pfnHostTaskExp ? enqueueNativeAsHostTask : enqueueNativeInline;
  if (!t.Enqueue.pfnDeviceGlobalVariableRead && t.Program.pfnGetGlobalVariablePointer) {
    t.Enqueue.pfnDeviceGlobalVariableRead = urEnqueueDeviceGlobalVariableRead;
    t.Enqueue.pfnDeviceGlobalVariableWrite = urEnqueueDeviceGlobalVariableWrite;
  }
  if (!t.USMExp.pfnContextMemcpyExp) t.USMExp.pfnContextMemcpyExp = urUSMContextMemcpyExp;
  if (!t.USMExp.pfnImportExp && !t.USMExp.pfnReleaseExp) {
    t.USMExp.pfnImportExp = urUSMImportExp;
    t.USMExp.pfnReleaseExp = urUSMReleaseExp;
  }
}

} // namespace ordo::derived
