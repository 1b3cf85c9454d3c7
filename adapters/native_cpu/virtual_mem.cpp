// SPDX-License-Identifier: Apache-2.0
// Virtual and physical memory (docs/native-cpu.md, "Virtual and physical memory").
//  - urPhysicalMem*: a memory file (memfd) per allocation, so its pages can be mapped at
//    several addresses and stay shared between those mappings.
//  - urVirtualMem*: address ranges reserved with mmap (no access, no backing), into which
//    physical memory is mapped with MAP_FIXED and given back to the reservation on
//    unmap. Every range is in pages. Kernels and commands use mapped addresses as any
//    host memory.
//  - urIPC*PhysMemHandleExp: another process of the same user opens a memory file through
//    /proc/<pid>/fd/<fd>. The handle data names the creating process, its file
//    descriptor and the size; opening it opens that path (a file descriptor of the
//    opener's own on the same pages) and makes a physical memory object of the opener's
//    context over it: mappings of it and of the original share the bytes. Only memory
//    created with UR_PHYSICAL_MEM_FLAG_ENABLE_IPC is exported. Each handle holds a
//    descriptor of its own until urIPCPutPhysMemHandleExp.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "context.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"
#include "ordo/virtual_ranges.hpp"
#include "platform.hpp"

namespace ordo::native_cpu {

struct PhysicalMem : Object<PhysicalMem> {
  using handle_type = ur_physical_mem_handle_t;
  static constexpr handle_kind kKind = handle_kind::physical_mem;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_VALUE;

  PhysicalMem(Context *ctx, int f, size_t s, ur_physical_mem_flags_t fl) : context(ctx), fd(f), size(s), flags(fl) {
    context->hold();
  }
  ~PhysicalMem() {
    close(fd);
    context->drop_hold();
  }
  void on_user_released() {}

  Context *const context; // internal reference
  const int fd;           // the memory file; mappings keep the pages alive
  const size_t size;
  const ur_physical_mem_flags_t flags;
};
ORDO_HANDLE_CHECK(PhysicalMem);

namespace {

// The page size: the granularity of every virtual and physical range.
size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// ---- physical memory ----

// A physical memory object over the memory file `fd`, which it owns from here on.
ur_result_t publish_physical(Context *ctx, int fd, size_t size, ur_physical_mem_flags_t flags,
                             ur_physical_mem_handle_t *out) {
  PhysicalMem *p = nullptr;
  try {
    p = new PhysicalMem(ctx, fd, size, flags);
  } catch (...) {
    close(fd);
    throw;
  }
  *out = publish(p);
  return UR_RESULT_SUCCESS;
}

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
  return publish_physical(ctx, fd, size, flags, phPhysicalMem);
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

// ---- virtual memory ----

using Ranges = ordo::virtual_ranges<Context, Ref<PhysicalMem>>;
Ranges &ranges() {
  static Ranges *r = new Ranges; // never destroyed: ranges may outlive statics
  return *r;
}

int protection(ur_virtual_mem_access_flags_t flags) {
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE) return PROT_READ | PROT_WRITE;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY) return PROT_READ;
  return PROT_NONE;
}

bool page_aligned(uintptr_t p, size_t size) { return size != 0 && p % page_size() == 0 && size % page_size() == 0; }

// Puts the pages of [p, p + size) back to reserved, inaccessible address space.
bool back_to_reserved(uintptr_t p, size_t size) {
  return mmap(reinterpret_cast<void *>(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
              0) != MAP_FAILED;
}

ur_result_t UR_APICALL urVirtualMemGranularityGetInfo(ur_context_handle_t hContext, ur_device_handle_t hDevice, size_t,
                                                      ur_virtual_mem_granularity_info_t propName, size_t propSize,
                                                      void *pPropValue, size_t *pPropSizeRet) {
  if (!lookup<Context>(hContext)) return Context::invalid_handle(hContext);
  if (hDevice && !is_device(hDevice)) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM:
  case UR_VIRTUAL_MEM_GRANULARITY_INFO_RECOMMENDED: return out.value(page_size());
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urVirtualMemReserve(ur_context_handle_t hContext, const void *pStart, size_t size,
                                           void **ppStart) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!ppStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0 || size % page_size() != 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (reinterpret_cast<uintptr_t>(pStart) % page_size() != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  // pStart is a hint: the kernel may place the range elsewhere.
  void *p = mmap(const_cast<void *>(pStart), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  try {
    ranges().add(ctx, reinterpret_cast<uintptr_t>(p), size);
  } catch (...) {
    munmap(p, size);
    throw;
  }
  ctx->hold(); // the reservation's; dropped by urVirtualMemFree
  *ppStart = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urVirtualMemFree(ur_context_handle_t hContext, const void *pStart, size_t size) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Ranges::mapping_map dropped; // released outside the lock
  ur_result_t r = ranges().remove(
      ctx, reinterpret_cast<uintptr_t>(pStart), size,
      [&](Ranges::mapping_map &) {
        munmap(const_cast<void *>(pStart), size);
        return UR_RESULT_SUCCESS;
      },
      dropped);
  if (r) return r; // only a whole reservation goes
  ctx->drop_hold();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urVirtualMemMap(ur_context_handle_t hContext, const void *pStart, size_t size,
                                       ur_physical_mem_handle_t hPhysicalMem, size_t offset,
                                       ur_virtual_mem_access_flags_t flags) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  PhysicalMem *phys = lookup<PhysicalMem>(hPhysicalMem);
  if (!phys) return hPhysicalMem ? UR_RESULT_ERROR_INVALID_VALUE : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  if (!page_aligned(p, size) || offset % page_size() != 0) return UR_RESULT_ERROR_INVALID_VALUE;
  if (offset > phys->size || size > phys->size - offset) return UR_RESULT_ERROR_INVALID_SIZE;
  if (phys->context != ctx) return UR_RESULT_ERROR_INVALID_VALUE;
  // Inside one reservation of this context, over no mapping.
  return ranges().map(ctx, p, size, Ref<PhysicalMem>(phys), offset, flags, [&] {
    return mmap(reinterpret_cast<void *>(p), size, protection(flags), MAP_SHARED | MAP_FIXED, phys->fd,
                static_cast<off_t>(offset)) == MAP_FAILED
               ? UR_RESULT_ERROR_OUT_OF_RESOURCES
               : UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL urVirtualMemUnmap(ur_context_handle_t hContext, const void *pStart, size_t size) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  Ref<PhysicalMem> released; // dropped outside the lock
  // One whole mapping, given back to reserved, inaccessible address space.
  return ranges().unmap(
      ctx, p, size,
      [&](const Ranges::mapping &) {
        return back_to_reserved(p, size) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_OUT_OF_RESOURCES;
      },
      released);
}

// Changes the access of mapped pages; a range inside one mapping splits it.
ur_result_t UR_APICALL urVirtualMemSetAccess(ur_context_handle_t hContext, const void *pStart, size_t size,
                                             ur_virtual_mem_access_flags_t flags) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  if (!page_aligned(p, size)) return UR_RESULT_ERROR_INVALID_VALUE;
  return ranges().set_access(ctx, p, size, flags, [&](const Ranges::mapping &) {
    return mprotect(reinterpret_cast<void *>(p), size, protection(flags)) == 0 ? UR_RESULT_SUCCESS
                                                                               : UR_RESULT_ERROR_OUT_OF_RESOURCES;
  });
}

ur_result_t UR_APICALL urVirtualMemGetInfo(ur_context_handle_t hContext, const void *pStart, size_t size,
                                           ur_virtual_mem_info_t propName, size_t propSize, void *pPropValue,
                                           size_t *pPropSizeRet) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pStart) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  if (propName != UR_VIRTUAL_MEM_INFO_ACCESS_MODE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  const uintptr_t p = reinterpret_cast<uintptr_t>(pStart);
  ur_virtual_mem_access_flags_t access = UR_VIRTUAL_MEM_ACCESS_FLAG_NONE; // reserved, not mapped
  if (ur_result_t r = ranges().access_at(ctx, p, size, &access)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(access);
}

// ---- inter-process physical memory ----

constexpr uint64_t kMagic = 0x4f52444f50484d31ull; // identifies this adapter's handle data

// Each handle names a descriptor of its own (a dup of the memory file's), closed by
// urIPCPutPhysMemHandleExp: a copy of the data kept past the put is stale and opens
// nothing. The file's identity (device and inode) guards against the descriptor's
// number being reused for another file by then.
struct IpcData {
  uint64_t magic;
  int64_t pid;
  int64_t fd;
  uint64_t size;
  uint32_t flags;
  uint64_t dev;
  uint64_t ino;
};

ur_result_t UR_APICALL urIPCGetPhysMemHandleExp(ur_context_handle_t hContext, ur_physical_mem_handle_t hPhysMem,
                                                void **ppData, size_t *pSize) {
  ORDO_LOOKUP(Context, ctx, hContext);
  ORDO_LOOKUP(PhysicalMem, p, hPhysMem);
  if (!ppData || !pSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (p->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  // The spec's code for memory made without the flag.
  if (!(p->flags & UR_PHYSICAL_MEM_FLAG_ENABLE_IPC)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  struct stat st {};
  if (fstat(p->fd, &st) != 0) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  auto *d = static_cast<IpcData *>(std::malloc(sizeof(IpcData)));
  if (!d) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    std::free(d);
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  *d = IpcData{kMagic,
               static_cast<int64_t>(getpid()),
               fd,
               p->size,
               p->flags,
               static_cast<uint64_t>(st.st_dev),
               static_cast<uint64_t>(st.st_ino)};
  *ppData = d;
  *pSize = sizeof(IpcData);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCPutPhysMemHandleExp(ur_context_handle_t hContext, const void *pData) {
  if (!lookup<Context>(hContext)) return Context::invalid_handle(hContext);
  if (!pData) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const auto *d = static_cast<const IpcData *>(pData);
  if (d->magic != kMagic || d->pid != static_cast<int64_t>(getpid())) return UR_RESULT_ERROR_INVALID_VALUE;
  close(static_cast<int>(d->fd)); // the handle's own descriptor (urIPCGetPhysMemHandleExp)
  std::free(const_cast<void *>(pData));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCOpenPhysMemHandleExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                 const void *pData, size_t size, ur_physical_mem_handle_t *phPhysMem) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!is_device(hDevice)) return device_error(hDevice);
  if (!pData || !phPhysMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size != sizeof(IpcData)) return UR_RESULT_ERROR_INVALID_VALUE;
  IpcData d;
  std::memcpy(&d, pData, sizeof d);
  if (d.magic != kMagic || d.pid <= 0 || d.fd < 0 || d.size == 0 || d.size % page_size() != 0)
    return UR_RESULT_ERROR_INVALID_VALUE;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/fd/%lld", static_cast<long long>(d.pid), static_cast<long long>(d.fd));
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return UR_RESULT_ERROR_INVALID_VALUE; // the process or its memory is gone, or not ours to open
  struct stat st {};
  // The file must be a memory file at least as large as the handle says.
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) < d.size ||
      static_cast<uint64_t>(st.st_dev) != d.dev || static_cast<uint64_t>(st.st_ino) != d.ino) {
    close(fd);
    return UR_RESULT_ERROR_INVALID_VALUE;
  }
  return publish_physical(ctx, fd, static_cast<size_t>(d.size), d.flags, phPhysMem);
}

ur_result_t UR_APICALL urIPCClosePhysMemHandleExp(ur_context_handle_t hContext, ur_physical_mem_handle_t hPhysMem) {
  ORDO_LOOKUP(Context, ctx, hContext);
  ORDO_LOOKUP(PhysicalMem, p, hPhysMem);
  if (p->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return user_release<PhysicalMem>(hPhysMem);
}

} // namespace

// urPhysicalMem*, urVirtualMem* and urIPC*PhysMemHandleExp.
void install_virtual_mem_entry_points(ur_dditable_t &t) {
  t.PhysicalMem.pfnCreate = urPhysicalMemCreate;
  t.PhysicalMem.pfnRetain = urPhysicalMemRetain;
  t.PhysicalMem.pfnRelease = urPhysicalMemRelease;
  t.PhysicalMem.pfnGetInfo = urPhysicalMemGetInfo;
  t.VirtualMem.pfnGranularityGetInfo = urVirtualMemGranularityGetInfo;
  t.VirtualMem.pfnReserve = urVirtualMemReserve;
  t.VirtualMem.pfnFree = urVirtualMemFree;
  t.VirtualMem.pfnMap = urVirtualMemMap;
  t.VirtualMem.pfnUnmap = urVirtualMemUnmap;
  t.VirtualMem.pfnSetAccess = urVirtualMemSetAccess;
  t.VirtualMem.pfnGetInfo = urVirtualMemGetInfo;
  t.IPCExp.pfnGetPhysMemHandleExp = urIPCGetPhysMemHandleExp;
  t.IPCExp.pfnPutPhysMemHandleExp = urIPCPutPhysMemHandleExp;
  t.IPCExp.pfnOpenPhysMemHandleExp = urIPCOpenPhysMemHandleExp;
  t.IPCExp.pfnClosePhysMemHandleExp = urIPCClosePhysMemHandleExp;
}

} // namespace ordo::native_cpu
