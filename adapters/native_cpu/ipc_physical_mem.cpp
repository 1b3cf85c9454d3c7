// SPDX-License-Identifier: Apache-2.0
// urIPC*PhysMemHandleExp: physical memory is a memory file (physical_mem.cpp), which
// another process of the same user can open through /proc/<pid>/fd/<fd>. The handle data
// names the creating process, its file descriptor and the size; opening it opens that
// path (a file descriptor of the opener's own on the same pages) and makes a physical
// memory object of the opener's context over it: mappings of it and of the original
// share the bytes. Only memory created with UR_PHYSICAL_MEM_FLAG_ENABLE_IPC is exported
// (docs/native-cpu.md, "Virtual and physical memory"). Each handle holds a descriptor
// of its own until urIPCPutPhysMemHandleExp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "context.hpp"
#include "entry_points.hpp"
#include "physical_mem.hpp"
#include "platform.hpp"

namespace ordo::native_cpu {

namespace {

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
  PhysicalMem *p = nullptr;
  try {
    p = new PhysicalMem(ctx, fd, static_cast<size_t>(d.size), d.flags);
  } catch (...) {
    close(fd);
    throw;
  }
  *phPhysMem = publish(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCClosePhysMemHandleExp(ur_context_handle_t hContext, ur_physical_mem_handle_t hPhysMem) {
  ORDO_LOOKUP(Context, ctx, hContext);
  ORDO_LOOKUP(PhysicalMem, p, hPhysMem);
  if (p->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return user_release<PhysicalMem>(hPhysMem);
}

} // namespace

void install_ipc_physical_mem_entry_points(ur_dditable_t &t) {
  t.IPCExp.pfnGetPhysMemHandleExp = urIPCGetPhysMemHandleExp;
  t.IPCExp.pfnPutPhysMemHandleExp = urIPCPutPhysMemHandleExp;
  t.IPCExp.pfnOpenPhysMemHandleExp = urIPCOpenPhysMemHandleExp;
  t.IPCExp.pfnClosePhysMemHandleExp = urIPCClosePhysMemHandleExp;
}

} // namespace ordo::native_cpu
