// urUSM{Host,Device,Shared}Alloc, urUSMFree, urUSMGetMemAllocInfo, and the USM
// flavours of memcpy, fill and kernel arguments.
#include "ordo/usm_owners.hpp"
#include "usm.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <new>
#include <shared_mutex>
#include <vector>

#include "context.hpp"
#include "ordo/checked_math.hpp"
#include "device.hpp"
#include "event.hpp"
#include "platform.hpp"
#include "queue.hpp"
#include "tables.hpp"

namespace ordo::ocl {

namespace {

bool svm_atomics(ur_context_handle_t c) {
  for (ur_device_handle_t d : c->devices)
    if (!(d->svm & CL_DEVICE_SVM_ATOMICS)) return false;
  return true;
}

ur_result_t out_of_memory(ur_usm_type_t kind) {
  return kind == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
}

ur_result_t intel_error(cl_int err, ur_usm_type_t kind) {
  switch (err) {
  case CL_INVALID_BUFFER_SIZE: return UR_RESULT_ERROR_INVALID_USM_SIZE;
  case CL_INVALID_VALUE: return UR_RESULT_ERROR_INVALID_VALUE;
  case CL_OUT_OF_HOST_MEMORY: return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  case CL_OUT_OF_RESOURCES:
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return out_of_memory(kind);
  default: return to_ur(err);
  }
}

} // namespace

bool usm_kind_supported(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device) {
  switch (kind) {
  case UR_USM_TYPE_HOST:
    for (ur_device_handle_t d : c->devices)
      if (!d->usm_host_caps()) return false;
    return true;
  case UR_USM_TYPE_DEVICE: return device && device->usm_device_caps();
  case UR_USM_TYPE_SHARED: return device && device->usm_shared_caps();
  default: return false;
  }
}

namespace {

// The memory every context got from OpenCL, so that another context's pointer is told
// from system memory (check_usm_range).
ordo::usm_owners<ur_context_handle_t> &usm_owners() { return ordo::usm_owners<ur_context_handle_t>::instance(); }

void *usm_get_memory_unrecorded(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                                size_t alignment, ur_result_t &err);

} // namespace

void *usm_get_memory(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
                     size_t alignment, ur_result_t &err) {
  void *p = usm_get_memory_unrecorded(c, kind, device, size, alignment, err);
  if (!p) return nullptr;
  try {
    usm_owners().note(p, size, c);
  } catch (...) {
    usm_release_memory(c, p);
    err = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return nullptr;
  }
  return p;
}

ur_result_t check_usm_range(ur_context_handle_t c, const void *p, size_t size) {
  if (!ordo::checked::fits_address_space(p, size)) return UR_RESULT_ERROR_INVALID_SIZE;
  ordo::so::context_pools::block_facts a;
  if (c->pools->block_info(p, a) || c->pools->find_plain(p, a))
    return size <= a.size - size_t(static_cast<const char *>(p) - static_cast<const char *>(a.base))
               ? UR_RESULT_SUCCESS
               : UR_RESULT_ERROR_INVALID_SIZE;
  ur_context_handle_t owner = usm_owners().owner_of(p);
  return owner && owner != c ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_SUCCESS;
}

namespace {
void *usm_get_memory_unrecorded(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device, size_t size,
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
    err = p ? UR_RESULT_SUCCESS : intel_error(e == CL_SUCCESS ? CL_OUT_OF_RESOURCES : e, kind);
    return p;
  }
  // Host and shared memory must be reachable from host and device at any time: fine
  // grain. Device memory need not be: coarse grain.
  cl_svm_mem_flags flags = CL_MEM_READ_WRITE;
  if (kind != UR_USM_TYPE_DEVICE) {
    flags |= CL_MEM_SVM_FINE_GRAIN_BUFFER;
    if (svm_atomics(c)) flags |= CL_MEM_SVM_ATOMICS;
  }
  p = cl.clSVMAlloc(c->cl, flags, size, static_cast<cl_uint>(alignment));
  if (!p) {
    err = out_of_memory(kind); // clSVMAlloc gives no reason
    return nullptr;
  }
  err = UR_RESULT_SUCCESS;
  return p;
}

} // namespace

void usm_release_memory(ur_context_handle_t c, void *p) {
  usm_owners().forget(p);
  if (c->intel_usm)
    c->platform->intel_usm.blocking_free(c->cl, p);
  else
    cl.clSVMFree(c->cl, p);
}

cl_int usm_enqueue_memcpy(ur_queue_handle_t q, bool blocking, void *dst, const void *src, size_t size, cl_uint n,
                          const cl_event *waits, cl_event *ev) {
  if (q->context->intel_usm)
    return q->context->platform->intel_usm.memcpy(q->cl, blocking, dst, src, size, n, waits, ev);
  return cl.clEnqueueSVMMemcpy(q->cl, blocking, dst, src, size, n, waits, ev);
}

namespace {

void CL_CALLBACK free_staging(cl_event, cl_int, void *data) { delete static_cast<std::vector<unsigned char> *>(data); }

// Writes the pattern once, then copies what is already filled onto what is not,
// doubling each step: log2(size / pattern_size) copies, each after the previous one.
cl_int fill_by_copies(ur_queue_handle_t q, unsigned char *dst, const void *pattern, size_t pattern_size, size_t size,
                      cl_uint n, const cl_event *waits, cl_event *ev) {
  auto *staging = new (std::nothrow) std::vector<unsigned char>(static_cast<const unsigned char *>(pattern),
                                                              static_cast<const unsigned char *>(pattern) + pattern_size);
  if (!staging) return CL_OUT_OF_HOST_MEMORY;
  cl_event prev = nullptr;
  cl_int err = usm_enqueue_memcpy(q, false, dst, staging->data(), pattern_size, n, waits, &prev);
  if (err != CL_SUCCESS) {
    delete staging;
    return err;
  }
  for (size_t done = pattern_size; done < size && err == CL_SUCCESS;) {
    size_t chunk = std::min(done, size - done);
    cl_event next = nullptr;
    err = usm_enqueue_memcpy(q, false, dst + done, dst, chunk, 1, &prev, &next);
    if (err == CL_SUCCESS) {
      cl.clReleaseEvent(prev);
      prev = next;
      done += chunk;
    }
  }
  // The staging copy of the pattern lives until the last copy is done.
  if (cl.clSetEventCallback(prev, CL_COMPLETE, free_staging, staging) != CL_SUCCESS) {
    cl.clWaitForEvents(1, &prev);
    delete staging;
  }
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
  bool direct = power_of_two(pattern_size) && pattern_size <= 128 &&
                reinterpret_cast<uintptr_t>(dst) % pattern_size == 0;
  if (!direct) return fill_by_copies(q, static_cast<unsigned char *>(dst), pattern, pattern_size, size, n, waits, ev);
  if (q->context->intel_usm)
    return q->context->platform->intel_usm.fill(q->cl, dst, pattern, pattern_size, size, n, waits, ev);
  return cl.clEnqueueSVMMemFill(q->cl, dst, pattern, pattern_size, size, n, waits, ev);
}

cl_int usm_set_kernel_arg(ur_context_handle_t c, cl_kernel k, cl_uint index, const void *ptr) {
  if (!ptr) return cl.clSetKernelArg(k, index, sizeof(cl_mem), nullptr); // a null global pointer
  if (c->intel_usm) return c->platform->intel_usm.set_kernel_arg(k, index, ptr);
  return cl.clSetKernelArgSVMPointer(k, index, ptr);
}

namespace {

// The checks every USM alloc entry point makes, then the allocation itself.
ur_result_t usm_alloc(ur_context_handle_t c, ur_usm_type_t kind, ur_device_handle_t device, const ur_usm_desc_t *desc,
                      ur_usm_pool_handle_t pool, size_t size, void **out) {
  ORDO_CHECK_PTR(out);
  if (desc && (desc->hints & UR_USM_ADVICE_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  size_t align = desc ? desc->align : 0;
  if (align & (align - 1)) return UR_RESULT_ERROR_INVALID_VALUE;
  for (auto *ext = desc ? static_cast<const ur_base_desc_t *>(desc->pNext) : nullptr; ext;
       ext = static_cast<const ur_base_desc_t *>(ext->pNext)) {
    if (ext->stype == UR_STRUCTURE_TYPE_USM_HOST_DESC &&
        (reinterpret_cast<const ur_usm_host_desc_t *>(ext)->flags & UR_USM_HOST_MEM_FLAGS_MASK))
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (ext->stype == UR_STRUCTURE_TYPE_USM_DEVICE_DESC &&
        (reinterpret_cast<const ur_usm_device_desc_t *>(ext)->flags & UR_USM_DEVICE_MEM_FLAGS_MASK))
      return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (device && !c->has_device(device)) return UR_RESULT_ERROR_INVALID_DEVICE;
  for (ur_device_handle_t d : c->devices)
    if ((!device || d == device) && size > d->max_alloc) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  if (!usm_kind_supported(c, kind, device)) return UR_RESULT_ERROR_INVALID_OPERATION;
  ur_device_handle_t dev = kind == UR_USM_TYPE_HOST ? nullptr : device;
  if (pool) return c->pools->alloc_now(pool, kind, dev, size, align, out);
  // OpenCL aligns allocations to at most the largest data type; a larger alignment
  // is met by allocating more and rounding the address up.
  size_t native_align = SIZE_MAX;
  for (ur_device_handle_t d : c->devices)
    if (!device || d == device) native_align = std::min<size_t>(native_align, d->largest_type_align);
  bool pad = align > native_align;
  ur_result_t err = UR_RESULT_SUCCESS;
  void *raw = usm_get_memory(c, kind, device, pad ? size + align : size, pad ? 0 : align, err);
  if (!raw) return err;
  void *p = pad ? reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(raw) + align - 1) & ~uintptr_t(align - 1)) : raw;
  try {
    if (pad) {
      std::lock_guard<std::mutex> lock(c->padded_mutex);
      c->padded[p] = raw;
    }
    c->pools->add_plain(p, size, kind, dev);
  } catch (...) {
    if (pad) {
      std::lock_guard<std::mutex> lock(c->padded_mutex);
      c->padded.erase(p);
    }
    usm_release_memory(c, raw);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  *out = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMHostAlloc(ur_context_handle_t hContext, const ur_usm_desc_t *pUSMDesc,
                                    ur_usm_pool_handle_t pool, size_t size, void **ppMem) {
  ORDO_CHECK_HANDLE(hContext);
  return usm_alloc(hContext, UR_USM_TYPE_HOST, nullptr, pUSMDesc, pool, size, ppMem);
}

ur_result_t UR_APICALL USMDeviceAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                      const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size,
                                      void **ppMem) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_HANDLE(hDevice);
  return usm_alloc(hContext, UR_USM_TYPE_DEVICE, hDevice, pUSMDesc, pool, size, ppMem);
}

ur_result_t UR_APICALL USMSharedAlloc(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                      const ur_usm_desc_t *pUSMDesc, ur_usm_pool_handle_t pool, size_t size,
                                      void **ppMem) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_HANDLE(hDevice);
  return usm_alloc(hContext, UR_USM_TYPE_SHARED, hDevice, pUSMDesc, pool, size, ppMem);
}

// Frees only what this context handed out, and only by its first byte: a pool's
// block goes back to its pool at once, a plain allocation to the backend.
ur_result_t UR_APICALL USMFree(ur_context_handle_t hContext, void *pMem) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(pMem);
  ur_result_t pooled = UR_RESULT_SUCCESS;
  if (hContext->pools->free_now(pMem, pooled)) {
    reap_deferred_events();
    return pooled;
  }
  ordo::so::context_pools::block_facts a;
  if (!hContext->pools->take_plain(pMem, &a)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  // Commands already enqueued may still use the memory (SVM frees do not wait).
  if (!hContext->intel_usm) {
    if (ur_result_t r = context_wait_all_queues(hContext)) {
      try {
        hContext->pools->add_plain(a.base, a.size, a.kind, a.device);
      } catch (...) {
      }
      return r;
    }
  }
  void *raw = pMem;
  {
    std::lock_guard<std::mutex> lock(hContext->padded_mutex);
    auto it = hContext->padded.find(pMem);
    if (it != hContext->padded.end()) {
      raw = it->second;
      hContext->padded.erase(it);
    }
  }
  usm_release_memory(hContext, raw);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL USMGetMemAllocInfo(ur_context_handle_t hContext, const void *pMem, ur_usm_alloc_info_t propName,
                                          size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(hContext);
  ORDO_CHECK_PTR(pMem);
  if (propName > UR_USM_ALLOC_INFO_POOL) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  ordo::so::context_pools::block_facts a;
  bool known = hContext->pools->block_info(pMem, a) || hContext->pools->find_plain(pMem, a);
  if (propName == UR_USM_ALLOC_INFO_TYPE) return w.value(known ? a.kind : UR_USM_TYPE_UNKNOWN);
  if (!known) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  switch (propName) {
  case UR_USM_ALLOC_INFO_BASE_PTR: return w.value<void *>(a.base);
  case UR_USM_ALLOC_INFO_SIZE: return w.value<size_t>(a.size);
  case UR_USM_ALLOC_INFO_DEVICE: return w.value<ur_device_handle_t>(a.device); // null: host memory
  case UR_USM_ALLOC_INFO_POOL: return w.value(a.pool);                         // null: not from a pool
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

} // namespace

void fill_usm_table(ur_dditable_t &t) {
  t.USM.pfnHostAlloc = USMHostAlloc;
  t.USM.pfnDeviceAlloc = USMDeviceAlloc;
  t.USM.pfnSharedAlloc = USMSharedAlloc;
  t.USM.pfnFree = USMFree;
  t.USM.pfnGetMemAllocInfo = USMGetMemAllocInfo;
}

} // namespace ordo::ocl
