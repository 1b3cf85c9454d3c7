// SPDX-License-Identifier: Apache-2.0
// urPhysicalMem*: a memory file per allocation, so its pages can be mapped into any
// reserved virtual range (virtual_mem.cpp) and stay shared between those mappings.
#include "physical_mem.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "context.hpp"
#include "ordo/info.hpp"
#include "ordo/virtual_ranges.hpp"
#include "platform.hpp"

namespace ordo::native_cpu {

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

PhysicalMem::PhysicalMem(Context *ctx, int f, size_t s, ur_physical_mem_flags_t fl)
    : context(ctx), fd(f), size(s), flags(fl) {
  context->hold();
}

PhysicalMem::~PhysicalMem() {
  close(fd);
  context->drop_hold();
}

namespace {

ur_result_t UR_APICALL urPhysicalMemCreate(ur_context_handle_t hContext, ur_device_handle_t hDevice, size_t size,
                                           const ur_physical_mem_properties_t *pProperties,
                                           ur_physical_mem_handle_t *phPhysicalMem) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!is_device(hDevice)) return device_error(hDevice);
  if (!phPhysicalMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ur_physical_mem_flags_t flags = pProperties ? pProperties->flags : 0;
  if (flags & UR_PHYSICAL_MEM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0 || size % page_size() != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  // ENABLE_IPC needs nothing more: a memory file can be shared as it is.
  int fd = memfd_create("ordo-physical-mem", MFD_CLOEXEC);
  if (fd < 0) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  PhysicalMem *p = nullptr;
  try {
    p = new PhysicalMem(ctx, fd, size, flags);
  } catch (...) {
    close(fd);
    throw;
  }
  *phPhysicalMem = publish(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPhysicalMemRetain(ur_physical_mem_handle_t h) { return user_retain<PhysicalMem>(h); }
// Mappings hold the pages: they stay valid after the user's last release.
ur_result_t UR_APICALL urPhysicalMemRelease(ur_physical_mem_handle_t h) { return user_release<PhysicalMem>(h); }

ur_result_t UR_APICALL urPhysicalMemGetInfo(ur_physical_mem_handle_t h, ur_physical_mem_info_t propName,
                                            size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_LOOKUP(PhysicalMem, p, h);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return ordo::physical_mem_info(out, propName, to_handle(p->context), device_handle(), p->size, p->flags, p->count());
}

} // namespace

void install_physical_mem_entry_points(ur_dditable_t &t) {
  t.PhysicalMem.pfnCreate = urPhysicalMemCreate;
  t.PhysicalMem.pfnRetain = urPhysicalMemRetain;
  t.PhysicalMem.pfnRelease = urPhysicalMemRelease;
  t.PhysicalMem.pfnGetInfo = urPhysicalMemGetInfo;
}

} // namespace ordo::native_cpu
