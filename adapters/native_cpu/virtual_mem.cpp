// SPDX-License-Identifier: Apache-2.0
// Virtual and physical memory (docs/native-cpu.md, "Virtual and physical memory"):
// physical memory is a memory file (memfd), so its pages can be mapped at several
// addresses; virtual ranges are reserved with mmap (no access, no backing) and physical
// memory is mapped into them with MAP_FIXED, in pages. urIPC*PhysMemHandleExp: another
// process of the same user opens the memory file through /proc/<pid>/fd/<fd> (the handle
// data names the process, a descriptor of the handle's own until the put, and the size)
// and gets a physical memory object of its context over the same pages.
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
#include "ur_common/virtual_mem.hpp"

namespace ordo::native_cpu {

struct PhysicalMem : Object<PhysicalMem> {
  using handle_type = ur_physical_mem_handle_t;
  static constexpr handle_kind kKind = handle_kind::physical_mem;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_VALUE;

  PhysicalMem(Context *c, int f, size_t s, ur_physical_mem_flags_t fl) : ctx(c), fd(f), size(s), flags(fl) {
    ctx->hold();
  }
  ~PhysicalMem() {
    close(fd);
    ctx->drop_hold();
  }

  Context *const ctx; // internal reference
  const int fd;       // the memory file; mappings keep the pages alive
  const size_t size;
  const ur_physical_mem_flags_t flags;
};
ORDO_HANDLE_CHECK(PhysicalMem);
inline ur_result_t unwrap(ur_physical_mem_handle_t h, PhysicalMem *&out) { return registry_unwrap(h, out); }

namespace {

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

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

int protection(ur_virtual_mem_access_flags_t flags) {
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE) return PROT_READ | PROT_WRITE;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY) return PROT_READ;
  return PROT_NONE;
}

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

ur_result_t ipc_export(PhysicalMem *p, void **ppData, size_t *pSize) {
  struct stat st {};
  if (fstat(p->fd, &st) != 0) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  auto *d = static_cast<IpcData *>(std::malloc(sizeof(IpcData)));
  if (!d) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    std::free(d);
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  *d = IpcData{kMagic, getpid(), fd, p->size, p->flags, st.st_dev, st.st_ino};
  *ppData = d;
  *pSize = sizeof(IpcData);
  return UR_RESULT_SUCCESS;
}

ur_result_t ipc_put(const void *pData) {
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

// The checks and the table of ranges are shared (ur_common/virtual_mem.hpp); these
// hooks touch the address space.
struct VirtualMemHooks {
  using Context = native_cpu::Context;
  using Device = native_cpu::Device;
  using PhysicalMem = native_cpu::PhysicalMem;
  using PhysRef = Ref<PhysicalMem>;
  using Ranges = ordo::virtual_ranges<Context, PhysRef>;
  static Ranges &ranges() {
    static Ranges *r = new Ranges; // never destroyed: ranges may outlive statics
    return *r;
  }
  static ur_result_t context_of(ur_context_handle_t h, Context *&ctx) { return registry_unwrap(h, ctx); }
  static ur_result_t context_device(Context *, ur_device_handle_t h, Device *&d) { return unwrap(h, d); }
  static ur_result_t granularity(Context *, bool, size_t &g) {
    g = page_size();
    return UR_RESULT_SUCCESS;
  }
  static void hold_context(Context *ctx) { ctx->hold(); }
  static void drop_context(Context *ctx) { ctx->drop_hold(); }
  static ur_result_t reserve(Context *, const void *hint, size_t size, void *&p) {
    p = mmap(const_cast<void *>(hint), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_SUCCESS;
  }
  static void unreserve(void *p, size_t size) { munmap(p, size); }
  static ur_result_t free_reservation(Context *, void *p, size_t size, size_t, Ranges::mapping_map &) {
    munmap(p, size); // the mappings in it go too
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t map(Context *, PhysicalMem *phys, uintptr_t p, size_t size, size_t offset,
                         ur_virtual_mem_access_flags_t flags, size_t) {
    return mmap(reinterpret_cast<void *>(p), size, protection(flags), MAP_SHARED | MAP_FIXED, phys->fd,
                static_cast<off_t>(offset)) == MAP_FAILED
               ? UR_RESULT_ERROR_OUT_OF_RESOURCES
               : UR_RESULT_SUCCESS;
  }
  // The pages go back to reserved, inaccessible address space.
  static ur_result_t unmap(uintptr_t p, size_t size, size_t) {
    return mmap(reinterpret_cast<void *>(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                -1, 0) != MAP_FAILED
               ? UR_RESULT_SUCCESS
               : UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  static ur_result_t set_access(Context *, const Ranges::mapping &, uintptr_t p, size_t size, size_t,
                                ur_virtual_mem_access_flags_t flags) {
    return mprotect(reinterpret_cast<void *>(p), size, protection(flags)) == 0 ? UR_RESULT_SUCCESS
                                                                               : UR_RESULT_ERROR_OUT_OF_RESOURCES;
  }
  // ENABLE_IPC needs nothing more: a memory file can be shared as it is.
  static ur_result_t create_physical(Context *ctx, Device *, size_t size, ur_physical_mem_flags_t flags, size_t,
                                     ur_physical_mem_handle_t *out) {
    int fd = memfd_create("ordo-physical-mem", MFD_CLOEXEC);
    if (fd < 0) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
      close(fd);
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return publish_physical(ctx, fd, size, flags, out);
  }
  static ur_device_handle_t device_of(const PhysicalMem *) { return device_handle(); }
  static ur_result_t UR_APICALL physical_retain(ur_physical_mem_handle_t h) { return user_retain<PhysicalMem>(h); }
  // Mappings hold the pages: they stay valid after the user's last release.
  static ur_result_t UR_APICALL physical_release(ur_physical_mem_handle_t h) { return user_release<PhysicalMem>(h); }
  static constexpr auto ipc_export = native_cpu::ipc_export;
  static constexpr auto ipc_put = native_cpu::ipc_put;
  static constexpr auto ipc_open = urIPCOpenPhysMemHandleExp;
};

} // namespace

// urPhysicalMem*, urVirtualMem* and urIPC*PhysMemHandleExp.
void install_virtual_mem_entry_points(ur_dditable_t &t) {
  ordo::ur_common::virtual_mem_entry_points<VirtualMemHooks>::install(t);
}

} // namespace ordo::native_cpu
