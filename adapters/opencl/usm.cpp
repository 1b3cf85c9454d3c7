// SPDX-License-Identifier: Apache-2.0
// USM memory underneath (SVM or Intel USM) and the USM flavours of memcpy, fill and
// kernel arguments. urUSM{Host,Device,Shared}Alloc, urUSMFree and urUSMGetMemAllocInfo
// are ur_common/usm.hpp's; the hooks below say how OpenCL makes and frees plain memory.
#include "ordo/usm_owners.hpp"
#include "usm.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "memory.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "tables.hpp"
#include "ur_common/usm.hpp"

namespace ordo::opencl {

namespace {

// The memory every context got from OpenCL, so that another context's pointer is told
// from system memory (ur_common::check_usm_range).
ordo::usm_owners<ur_context_handle_t> &usm_owners() { return ordo::usm_owners<ur_context_handle_t>::instance(); }

bool svm_atomics(ur_context_handle_t c) {
  return std::all_of(c->devices.begin(), c->devices.end(), [](auto d) { return d->svm & CL_DEVICE_SVM_ATOMICS; });
}

ur_result_t out_of_memory(ur_usm_type_t kind) {
  return kind == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
}

ur_result_t intel_error(cl_int err, ur_usm_type_t kind) {
  switch (err) {
  case CL_INVALID_BUFFER_SIZE: return UR_RESULT_ERROR_INVALID_USM_SIZE;
  case CL_OUT_OF_RESOURCES:
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return out_of_memory(kind);
  default: return to_ur(err);
  }
}

} // namespace

bool usm_kind_supported(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device) {
  switch (kind) {
  case UR_USM_TYPE_HOST:
    return std::all_of(c->devices.begin(), c->devices.end(), [](auto d) { return d->usm_caps(usm_host) != 0; });
  case UR_USM_TYPE_DEVICE: return device && device->usm_caps(usm_device);
  case UR_USM_TYPE_SHARED: return device && device->usm_caps(usm_shared);
  default: return false;
  }
}

void *usm_get_memory(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                     size_t alignment, ur_result_t &err) {
  void *p = nullptr;
  if (c->intel_usm) {
    const IntelUsmFunctions &f = c->platform->intel_usm;
    cl_int e = CL_SUCCESS;
    cl_uint align = static_cast<cl_uint>(alignment);
    switch (kind) {
    case UR_USM_TYPE_HOST: p = f.host_alloc(c->cl, nullptr, size, align, &e); break;
    case UR_USM_TYPE_DEVICE: p = f.device_alloc(c->cl, device->cl, nullptr, size, align, &e); break;
    case UR_USM_TYPE_SHARED: p = f.shared_alloc(c->cl, device->cl, nullptr, size, align, &e); break;
    default: e = CL_INVALID_VALUE;
    }
    if (!p) err = intel_error(e == CL_SUCCESS ? CL_OUT_OF_RESOURCES : e, kind);
  } else {
    // Host and shared memory must be reachable from host and device at any time: fine
    // grain. Device memory need not be: coarse grain.
    cl_svm_mem_flags flags = CL_MEM_READ_WRITE;
    if (kind != UR_USM_TYPE_DEVICE) {
      flags |= CL_MEM_SVM_FINE_GRAIN_BUFFER;
      if (svm_atomics(c)) flags |= CL_MEM_SVM_ATOMICS;
    }
    p = cl.clSVMAlloc(c->cl, flags, size, static_cast<cl_uint>(alignment));
    if (!p) err = out_of_memory(kind); // clSVMAlloc gives no reason
  }
  if (!p) return nullptr;
  err = UR_RESULT_SUCCESS;
  try {
    usm_owners().note(p, size, c);
  } catch (...) {
    usm_release_memory(c, p);
    err = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return nullptr;
  }
  return p;
}

void usm_release_memory(ur_context_handle_t c, void *p) {
  usm_owners().forget(p);
  if (c->intel_usm)
    c->platform->intel_usm.blocking_free(c->cl, p);
  else
    cl.clSVMFree(c->cl, p);
}

cl_int usm_enqueue_memcpy(ur_queue_handle_t q, bool blocking, void *dst, const void *src, size_t size, cl_uint n,
                          const cl_event *waits, cl_event *ev) {
  if (q->ctx->intel_usm) return q->ctx->platform->intel_usm.memcpy(q->cl, blocking, dst, src, size, n, waits, ev);
  return cl.clEnqueueSVMMemcpy(q->cl, blocking, dst, src, size, n, waits, ev);
}

namespace {

// Writes the pattern once, then copies what is already filled onto what is not,
// doubling each step: log2(size / pattern_size) copies, each after the previous one.
cl_int fill_by_copies(ur_queue_handle_t q, unsigned char *dst, const void *pattern, size_t pattern_size, size_t size,
                      cl_uint n, const cl_event *waits, cl_event *ev) {
  HostStaging *staging = spelled_out(static_cast<const unsigned char *>(pattern), pattern_size, pattern_size).release();
  if (!staging) return CL_OUT_OF_HOST_MEMORY;
  cl_event prev = nullptr;
  cl_int err = usm_enqueue_memcpy(q, false, dst, staging->data(), pattern_size, n, waits, &prev);
  if (err != CL_SUCCESS) {
    delete staging;
    return err;
  }
  err = copy_doubling(prev, pattern_size, size, [&](size_t at, size_t chunk, cl_event wait, cl_event *next) {
    return usm_enqueue_memcpy(q, false, dst + at, dst, chunk, 1, &wait, next);
  });
  free_after(prev, staging); // the staging copy lives until the last copy is done
  if (err == CL_SUCCESS && ev)
    *ev = prev;
  else
    cl.clReleaseEvent(prev);
  return err;
}

bool power_of_two(size_t x) { return x && !(x & (x - 1)); }

} // namespace

cl_int usm_enqueue_fill(ur_queue_handle_t q, void *dst, const void *pattern, size_t pattern_size, size_t size,
                        cl_uint n, const cl_event *waits, cl_event *ev) {
  // OpenCL fills take patterns of 1, 2, 4, ..., 128 bytes at an address aligned to them.
  bool direct =
      power_of_two(pattern_size) && pattern_size <= 128 && reinterpret_cast<uintptr_t>(dst) % pattern_size == 0;
  if (!direct) return fill_by_copies(q, static_cast<unsigned char *>(dst), pattern, pattern_size, size, n, waits, ev);
  if (q->ctx->intel_usm) return q->ctx->platform->intel_usm.fill(q->cl, dst, pattern, pattern_size, size, n, waits, ev);
  return cl.clEnqueueSVMMemFill(q->cl, dst, pattern, pattern_size, size, n, waits, ev);
}

void usm_free_plain(ur_context_handle_t c, void *p) {
  void *raw = p;
  {
    std::lock_guard<std::mutex> lock(c->padded_mutex);
    auto it = c->padded.find(p);
    if (it != c->padded.end()) {
      raw = it->second;
      c->padded.erase(it);
    }
  }
  usm_release_memory(c, raw);
}

namespace {

struct usm_hooks {
  using Context = ur_context_handle_t_;
  using Device = ur_device_handle_t_;
  static ur_result_t check_alloc(const ur_usm_desc_t *desc, size_t) {
    return ordo::ur_common::check_chained_flags(desc);
  }
  // Host memory must fit every device of the context; a kind the devices lack is
  // refused as an operation this context cannot do.
  static ur_result_t check_placement(Context *c, ur_usm_type_t kind, Device *device, size_t size) {
    for (ur_device_handle_t d : c->devices)
      if ((!device || d == device) && size > d->max_alloc) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    return usm_kind_supported(c, kind, device) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_OPERATION;
  }
  // OpenCL aligns allocations to at most the largest data type; a larger alignment
  // is met by allocating more and rounding the address up (usm_free_plain undoes it).
  static ur_result_t alloc_plain(Context *c, ur_usm_type_t kind, Device *device, size_t size, size_t align,
                                 void **out) {
    size_t native_align = SIZE_MAX;
    for (ur_device_handle_t d : c->devices)
      if (!device || d == device) native_align = std::min<size_t>(native_align, d->largest_type_align);
    const bool pad = align > native_align;
    ur_result_t err = UR_RESULT_SUCCESS;
    void *raw = usm_get_memory(c, kind, device, pad ? size + align : size, pad ? 0 : align, err);
    if (!raw) return err;
    if (!pad) {
      *out = raw;
      return UR_RESULT_SUCCESS;
    }
    void *p = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(raw) + align - 1) & ~uintptr_t(align - 1));
    try {
      std::lock_guard<std::mutex> lock(c->padded_mutex);
      c->padded[p] = raw;
    } catch (...) {
      usm_release_memory(c, raw);
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = p;
    return UR_RESULT_SUCCESS;
  }
  // Commands already enqueued may still use the memory: SVM frees do not wait, and
  // Intel's clMemBlockingFreeINTEL waits only for commands that name the allocation's
  // first byte, not an address inside it (tools/opencl_probes/blocking_free_pending.c).
  static ur_result_t wait_before_free(Context *c) { return context_wait_all_queues(c); }
  static void reap() { reap_deferred_events(); } // a pool block's free may let the pool drop events
};

} // namespace

void install_usm_entry_points(ur_dditable_t &t) { ordo::ur_common::usm_entry_points<usm_hooks>::install(t); }

} // namespace ordo::opencl
