// SPDX-License-Identifier: Apache-2.0
// Mock USM: host, device and shared allocations are all host memory, tracked so that a
// pointer the mock did not hand out, or a second free, is refused.
#include <cstdlib>
#include <cstring>
#include <map>

#include "mock.hpp"

namespace mock {
namespace {

struct Allocation {
  size_t size;
  ur_usm_type_t type;
  ur_device_handle_t device;
};

std::mutex g_mutex;
std::map<const char *, Allocation> &allocations() {
  static std::map<const char *, Allocation> a;
  return a;
}

ur_result_t allocate(ur_context_handle_t hContext, ur_device_handle_t hDevice, const ur_usm_desc_t *pUSMDesc,
                     ur_usm_pool_handle_t pool, size_t size, void **ppMem, ur_usm_type_t type) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_context_handle_t_>(hContext)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (hDevice && !live<ur_device_handle_t_>(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (!ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pool) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // the mock has no pools
  if (size == 0) return UR_RESULT_ERROR_INVALID_USM_SIZE;
  size_t align = pUSMDesc && pUSMDesc->align ? pUSMDesc->align : 64;
  if (align & (align - 1)) return UR_RESULT_ERROR_INVALID_VALUE;
  if (align < sizeof(void *)) align = sizeof(void *);
  void *p = nullptr;
  if (posix_memalign(&p, align, size) != 0) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    allocations()[static_cast<char *>(p)] = Allocation{size, type, hDevice};
  }
  *ppMem = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMHostAlloc(ur_context_handle_t c, const ur_usm_desc_t *d, ur_usm_pool_handle_t pool,
                                      size_t size, void **pp) {
  return allocate(c, nullptr, d, pool, size, pp, UR_USM_TYPE_HOST);
}

ur_result_t UR_APICALL urUSMDeviceAlloc(ur_context_handle_t c, ur_device_handle_t dev, const ur_usm_desc_t *d,
                                        ur_usm_pool_handle_t pool, size_t size, void **pp) {
  if (!dev) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(c, dev, d, pool, size, pp, UR_USM_TYPE_DEVICE);
}

ur_result_t UR_APICALL urUSMSharedAlloc(ur_context_handle_t c, ur_device_handle_t dev, const ur_usm_desc_t *d,
                                        ur_usm_pool_handle_t pool, size_t size, void **pp) {
  if (!dev) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(c, dev, d, pool, size, pp, UR_USM_TYPE_SHARED);
}

ur_result_t UR_APICALL urUSMFree(ur_context_handle_t hContext, void *pMem) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_context_handle_t_>(hContext)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = allocations().find(static_cast<char *>(pMem));
    if (it == allocations().end()) return UR_RESULT_ERROR_INVALID_MEM_OBJECT; // unknown or freed
    allocations().erase(it);
  }
  std::free(pMem);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUSMGetMemAllocInfo(ur_context_handle_t hContext, const void *pMem,
                                            ur_usm_alloc_info_t propName, size_t propSize, void *pPropValue,
                                            size_t *pPropSizeRet) {
  if (!hContext) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!live<ur_context_handle_t_>(hContext)) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  void *base = nullptr;
  size_t size = 0;
  const bool known = usm_lookup(pMem, type, base, size);
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_USM_ALLOC_INFO_TYPE: return out.value(type);
  case UR_USM_ALLOC_INFO_BASE_PTR: return known ? out.value(base) : UR_RESULT_ERROR_INVALID_VALUE;
  case UR_USM_ALLOC_INFO_SIZE: return known ? out.value(size) : UR_RESULT_ERROR_INVALID_VALUE;
  case UR_USM_ALLOC_INFO_DEVICE:
    return known ? out.value(type == UR_USM_TYPE_HOST ? nullptr : the_device()) : UR_RESULT_ERROR_INVALID_VALUE;
  case UR_USM_ALLOC_INFO_POOL: return known ? out.value<ur_usm_pool_handle_t>(nullptr) : UR_RESULT_ERROR_INVALID_VALUE;
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

} // namespace

bool usm_lookup(const void *ptr, ur_usm_type_t &type, void *&base, size_t &size) {
  const char *p = static_cast<const char *>(ptr);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = allocations().upper_bound(p);
  if (it == allocations().begin()) return false;
  --it;
  if (p >= it->first + it->second.size) return false;
  type = it->second.type;
  base = const_cast<char *>(it->first);
  size = it->second.size;
  return true;
}

void fill_usm(ur_dditable_t &t) {
  t.USM.pfnHostAlloc = urUSMHostAlloc;
  t.USM.pfnDeviceAlloc = urUSMDeviceAlloc;
  t.USM.pfnSharedAlloc = urUSMSharedAlloc;
  t.USM.pfnFree = urUSMFree;
  t.USM.pfnGetMemAllocInfo = urUSMGetMemAllocInfo;
}

} // namespace mock
