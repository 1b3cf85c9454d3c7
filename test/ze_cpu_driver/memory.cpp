// SPDX-License-Identifier: Apache-2.0
// Memory of the three kinds: host memory, recorded with its kind, device and context
// so that zeMemGetAllocProperties answers as a GPU driver would. Device and shared
// allocations count against the device's reported memory size.
#include <cstdlib>
#include <cstring>

#include "driver.hpp"
#include "tables.hpp"

namespace zecpu {

namespace {

std::mutex registry_mutex;
std::map<uintptr_t, Allocation> &registry() {
  static auto *m = new std::map<uintptr_t, Allocation>();
  return *m;
}
uint64_t next_id = 1;

bool power_of_two(size_t v) { return v && !(v & (v - 1)); }

// Whether a device memory descriptor's chain lifts the maxMemAllocSize limit.
bool relaxed_max_size(const ze_device_mem_alloc_desc_t *desc) {
  for (auto *ext = static_cast<const ze_base_desc_t *>(desc->pNext); ext;
       ext = static_cast<const ze_base_desc_t *>(ext->pNext))
    if (ext->stype == ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC)
      return reinterpret_cast<const ze_relaxed_allocation_limits_exp_desc_t *>(ext)->flags &
             ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE;
  return false;
}

ze_result_t allocate(Context *c, ze_memory_type_t type, Device *d, size_t size, size_t align, void **out) {
  if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (align && !power_of_two(align)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  if (d && size > d->memory_size) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (d) {
    uint64_t used = d->memory_used.fetch_add(size);
    if (used + size > d->memory_size) {
      d->memory_used.fetch_sub(size);
      return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
  }
  size_t a = align < 64 ? 64 : align;
  void *p = nullptr;
  if (posix_memalign(&p, a, size) != 0 || !p) {
    if (d) d->memory_used.fetch_sub(size);
    return d ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[reinterpret_cast<uintptr_t>(p)] = Allocation{size, type, d, c, next_id++};
  *out = p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL MemAllocDevice(ze_context_handle_t hc, const ze_device_mem_alloc_desc_t *desc, size_t size,
                                      size_t align, ze_device_handle_t hd, void **out) {
  Context *c = as<Context>(hc);
  Device *d = as<Device>(hd);
  if (!c || !d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Past maxMemAllocSize only when the caller relaxes the limit, as on a GPU driver.
  if (size > d->max_alloc_size() && !relaxed_max_size(desc)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  return allocate(c, ZE_MEMORY_TYPE_DEVICE, d, size, align, out);
}

ze_result_t ZE_APICALL MemAllocShared(ze_context_handle_t hc, const ze_device_mem_alloc_desc_t *ddesc,
                                      const ze_host_mem_alloc_desc_t *hdesc, size_t size, size_t align,
                                      ze_device_handle_t hd, void **out) {
  Context *c = as<Context>(hc);
  if (!c) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!ddesc || !hdesc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Device *d = hd ? as<Device>(hd) : nullptr;
  if (hd && !d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (d && size > d->max_alloc_size() && !relaxed_max_size(ddesc)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  return allocate(c, ZE_MEMORY_TYPE_SHARED, d, size, align, out);
}

ze_result_t ZE_APICALL MemAllocHost(ze_context_handle_t hc, const ze_host_mem_alloc_desc_t *desc, size_t size,
                                    size_t align, void **out) {
  Context *c = as<Context>(hc);
  if (!c) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return allocate(c, ZE_MEMORY_TYPE_HOST, nullptr, size, align, out);
}

ze_result_t ZE_APICALL MemFree(ze_context_handle_t hc, void *p) {
  if (!as<Context>(hc)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto it = registry().find(reinterpret_cast<uintptr_t>(p));
    if (it == registry().end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    a = it->second;
    registry().erase(it);
  }
  if (a.device) a.device->memory_used.fetch_sub(a.size);
  std::free(p);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL MemGetAllocProperties(ze_context_handle_t hc, const void *p,
                                             ze_memory_allocation_properties_t *props, ze_device_handle_t *phDevice) {
  if (!as<Context>(hc)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!props) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  uintptr_t base = 0;
  const Allocation *a = find_allocation(p, &base);
  if (a && a->context != as<Context>(hc)) a = nullptr; // another context's memory is unknown here
  props->type = a ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
  props->id = a ? a->id : 0;
  props->pageSize = a ? 4096 : 0;
  if (phDevice) *phDevice = reinterpret_cast<ze_device_handle_t>(a ? a->device : nullptr);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL MemGetAddressRange(ze_context_handle_t hc, const void *p, void **pBase, size_t *pSize) {
  if (!as<Context>(hc)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  uintptr_t base = 0;
  const Allocation *a = find_allocation(p, &base);
  if (!a || a->context != as<Context>(hc)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (pBase) *pBase = reinterpret_cast<void *>(base);
  if (pSize) *pSize = a->size;
  return ZE_RESULT_SUCCESS;
}

// Host pointer import: the device may use the caller's host memory in place between
// an import and its release. Every host page is the device's already here, so an
// import records the range (imports of one pointer nest) and a release must name an
// imported pointer.
std::mutex imports_mutex;
std::multimap<uintptr_t, size_t> &imports() {
  static auto *m = new std::multimap<uintptr_t, size_t>();
  return *m;
}

ze_result_t ZE_APICALL DriverImportExternalPointer(ze_driver_handle_t h, void *ptr, size_t size) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::lock_guard<std::mutex> lock(imports_mutex);
  imports().emplace(reinterpret_cast<uintptr_t>(ptr), size);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverReleaseImportedPointer(ze_driver_handle_t h, void *ptr) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::lock_guard<std::mutex> lock(imports_mutex);
  auto it = imports().find(reinterpret_cast<uintptr_t>(ptr));
  if (it == imports().end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  imports().erase(it);
  return ZE_RESULT_SUCCESS;
}

} // namespace

ze_result_t ZE_APICALL DriverGetExtensionFunctionAddress(ze_driver_handle_t h, const char *name, void **out) {
  if (!as<DriverObj>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!name || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (std::strcmp(name, "zexDriverImportExternalPointer") == 0)
    *out = reinterpret_cast<void *>(&DriverImportExternalPointer);
  else if (std::strcmp(name, "zexDriverReleaseImportedPointer") == 0)
    *out = reinterpret_cast<void *>(&DriverReleaseImportedPointer);
  else
    return ZE_RESULT_ERROR_INVALID_ARGUMENT; // as the loader's spec names it: no such function
  return ZE_RESULT_SUCCESS;
}

// The returned pointer stays valid while the allocation lives (std::map nodes do not move).
const Allocation *find_allocation(const void *p, uintptr_t *base) {
  auto v = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto &m = registry();
  auto it = m.upper_bound(v);
  if (it == m.begin()) return nullptr;
  --it;
  if (v - it->first >= it->second.size) return nullptr;
  *base = it->first;
  return &it->second;
}

void install(ze_mem_dditable_t &t) {
  t.pfnAllocDevice = MemAllocDevice;
  t.pfnAllocShared = MemAllocShared;
  t.pfnAllocHost = MemAllocHost;
  t.pfnFree = MemFree;
  t.pfnGetAllocProperties = MemGetAllocProperties;
  t.pfnGetAddressRange = MemGetAddressRange;
}

} // namespace zecpu
