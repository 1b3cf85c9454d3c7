// SPDX-License-Identifier: Apache-2.0
// urVirtualMem* and urPhysicalMem* over the driver's virtual memory management
// (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), offered only where the
// driver has it (backend_info::virtual_memory and the device's attribute). The table of
// reservations and mappings is ordo::virtual_ranges, shared with native CPU.
//
// Physical memory is one driver allocation per granule, and a mapping is made one
// granule at a time: the driver maps an allocation only from its start (cuMemMap's
// offset must be 0) and unmaps and sets access only on whole mappings it made, while UR
// maps from any granule-aligned offset, lets urVirtualMemSetAccess split a mapping and
// urVirtualMemUnmap then take one piece.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend.hpp"
#include "ordo/info.hpp"
#include "ordo/virtual_ranges.hpp"
#include "ur_common/virtual_mem.hpp"

namespace ordo::stream_backend {

namespace {

struct PhysicalMem : object {
  static constexpr handle_kind kKind = handle_kind::physical_mem;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_VALUE;
  PhysicalMem() : object(kKind) {}
  Context *ctx = nullptr; // held
  Device *dev = nullptr;
  std::vector<phys_t> granules; // one driver allocation per granule, in order
  size_t size = 0;
  ur_physical_mem_flags_t flags = 0;
  // holders (ordo::object): the user's references are one, each mapping one more
};
ORDO_HANDLE_CHECK(PhysicalMem);

void drop(PhysicalMem *p) {
  if (!p->drop()) return;
  if (!p->dev->make_current())
    for (phys_t h : p->granules) drv::phys_release(h); // the driver frees each once unmapped
  context_drop(p->ctx);
  ordo::retire(p);
}

// A physical memory object over `granules` (taken over on success), holding its context.
bool publish(Context *ctx, Device *d, std::vector<phys_t> &granules, size_t size, ur_physical_mem_flags_t flags,
             ur_physical_mem_handle_t *out) {
  PhysicalMem *p = new (std::nothrow) PhysicalMem();
  if (!p) return false;
  p->ctx = ctx;
  p->dev = d;
  p->granules = std::move(granules);
  p->size = size;
  p->flags = flags;
  context_hold(ctx);
  *out = reinterpret_cast<ur_physical_mem_handle_t>(p);
  return true;
}

// A mapping's reference to its physical memory.
class PhysRef {
public:
  PhysRef() = default;
  explicit PhysRef(PhysicalMem *p) : p_(p) { p_->hold(); }
  PhysRef(const PhysRef &o) : p_(o.p_) {
    if (p_) p_->hold();
  }
  PhysRef(PhysRef &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  PhysRef &operator=(PhysRef o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~PhysRef() {
    if (p_) drop(p_);
  }
  PhysicalMem *get() const { return p_; }

private:
  PhysicalMem *p_ = nullptr;
};

using Ranges = ordo::virtual_ranges<Context, PhysRef>;
Ranges &ranges() {
  static Ranges *r = new Ranges; // never destroyed: ranges may outlive statics
  return *r;
}

bool supported(const Device *d) { return info().virtual_memory && d->facts.virtual_memory; }

// The granularity every range of the context follows: the largest of its devices'.
ur_result_t granularity(Context *ctx, bool recommended, size_t *out) {
  *out = 1;
  for (Device *d : ctx->devices) {
    size_t g = 0;
    ORDO_DRV(drv::vm_granularity(d->native, recommended, &g));
    *out = std::max(*out, g);
  }
  return UR_RESULT_SUCCESS;
}

int access_of(ur_virtual_mem_access_flags_t flags) {
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_WRITE) return 3;
  if (flags & UR_VIRTUAL_MEM_ACCESS_FLAG_READ_ONLY) return 1;
  return 0;
}

// Gives [p, p + size) `access` for every device of the context that reaches `owner`'s
// memory; granule by granule, as the pieces were mapped.
ur_result_t set_access(Context *ctx, Device *owner, uintptr_t p, size_t size, size_t gran, int access) {
  for (Device *d : ctx->devices) {
    if (d != owner) {
      bool reach = false, atomics = false;
      if (drv::peer_query(d->native, owner->native, &reach, &atomics) || !reach) continue;
    }
    for (size_t done = 0; done < size; done += gran)
      ORDO_DRV(drv::vm_set_access(reinterpret_cast<void *>(p + done), gran, d->native, access));
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t unmap_granules(uintptr_t p, size_t size, size_t gran) {
  ur_result_t first = UR_RESULT_SUCCESS;
  for (size_t done = 0; done < size; done += gran)
    if (status s = drv::vm_unmap(reinterpret_cast<void *>(p + done), gran))
      if (!first) first = to_ur(s);
  return first;
}

ur_result_t context_of(ur_context_handle_t h, Context *&ctx) {
  if (ur_result_t r = unwrap(h, ctx)) return r;
  if (ctx->devices.empty() || !supported(ctx->devices.front())) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  ORDO_DRV(ctx->devices.front()->make_current());
  return UR_RESULT_SUCCESS;
}

// One driver allocation per granule.
ur_result_t create_physical(Context *ctx, Device *d, size_t size, ur_physical_mem_flags_t flags, size_t gran,
                            ur_physical_mem_handle_t *phPhysicalMem) {
  ORDO_DRV(d->make_current());
  std::vector<phys_t> granules;
  auto undo = [&] {
    for (phys_t h : granules) drv::phys_release(h);
  };
  try {
    granules.reserve(size / gran);
  } catch (...) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t done = 0; done < size; done += gran) {
    phys_t h = nullptr;
    if (status s = drv::phys_create(&h, gran, d->native, flags & UR_PHYSICAL_MEM_FLAG_ENABLE_IPC)) {
      undo();
      return s.kind == err::out_of_memory ? UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : to_ur(s);
    }
    granules.push_back(h);
  }
  if (!publish(ctx, d, granules, size, flags, phPhysicalMem)) {
    undo();
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urPhysicalMemRetain(ur_physical_mem_handle_t h) {
  ORDO_UNWRAP(PhysicalMem, p, h);
  if (!p->retain_user()) return ordo::invalid_of(p);
  return UR_RESULT_SUCCESS;
}

// Mappings hold the memory: it stays mapped after the user's last release.
ur_result_t UR_APICALL urPhysicalMemRelease(ur_physical_mem_handle_t h) {
  ORDO_UNWRAP(PhysicalMem, p, h);
  bool last_ = false;
  if (!p->release_user(last_)) return ordo::invalid_of(p);
  if (last_) drop(p);
  return UR_RESULT_SUCCESS;
}

// ---- inter-process handles of physical memory (urIPC*PhysMemHandleExp) ----
// Memory made with UR_PHYSICAL_MEM_FLAG_ENABLE_IPC is exportable: the handle data name
// the creating process and one file descriptor per granule (cuMemExportToShareableHandle).
// The opener takes its own copies of those descriptors (the same process: dup; another:
// pidfd_getfd, which needs the right to trace it) and imports them as a physical memory
// object of its context: mappings of both share the bytes (docs/cuda.md).

constexpr uint64_t kIpcMagic = 0x4f52444f43504d31ull;

struct IpcPhysData {
  uint64_t magic;
  int64_t pid;
  uint64_t granule;
  uint32_t flags;
  uint32_t count;
  int32_t fds[1]; // `count` of them
};
size_t ipc_data_size(uint32_t count) { return offsetof(IpcPhysData, fds) + sizeof(int32_t) * (count ? count : 1); }

// A descriptor of this process for the creator's `fd`.
int take_fd(int64_t pid, int fd) {
  if (pid == static_cast<int64_t>(getpid())) return fcntl(fd, F_DUPFD_CLOEXEC, 0);
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0) return -1;
  int mine = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  close(pidfd);
  return mine;
#else
  return -1;
#endif
}

ur_result_t ipc_export(PhysicalMem *p, void **ppData, size_t *pSize) {
  const uint32_t count = static_cast<uint32_t>(p->granules.size());
  auto *d = static_cast<IpcPhysData *>(std::calloc(1, ipc_data_size(count)));
  if (!d) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  ORDO_DRV(p->dev->make_current());
  for (uint32_t i = 0; i < count; ++i) {
    int fd = -1;
    if (status s = drv::phys_export_fd(p->granules[i], &fd)) {
      for (uint32_t j = 0; j < i; ++j) close(d->fds[j]);
      std::free(d);
      return to_ur(s);
    }
    d->fds[i] = fd;
  }
  d->magic = kIpcMagic;
  d->pid = static_cast<int64_t>(getpid());
  d->granule = count ? p->size / count : 0;
  d->flags = p->flags;
  d->count = count;
  *ppData = d;
  *pSize = ipc_data_size(count);
  return UR_RESULT_SUCCESS;
}

// The creator's descriptors go with the data.
ur_result_t ipc_put(const void *pData) {
  auto *d = static_cast<const IpcPhysData *>(pData);
  if (d->magic != kIpcMagic || d->pid != static_cast<int64_t>(getpid())) return UR_RESULT_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i < d->count; ++i) close(d->fds[i]);
  std::free(const_cast<void *>(pData));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCOpenPhysMemHandleExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                                 const void *pData, size_t size, ur_physical_mem_handle_t *phPhysMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, d, hDevice);
  if (!pData || !phPhysMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ctx->index_of(d) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  if (size < offsetof(IpcPhysData, fds)) return UR_RESULT_ERROR_INVALID_VALUE;
  IpcPhysData head;
  std::memcpy(&head, pData, offsetof(IpcPhysData, fds));
  if (head.magic != kIpcMagic || head.pid <= 0 || head.count == 0 || size != ipc_data_size(head.count))
    return UR_RESULT_ERROR_INVALID_VALUE;
  size_t gran = 0;
  if (ur_result_t r = granularity(ctx, false, &gran)) return r;
  if (head.granule != gran) return UR_RESULT_ERROR_INVALID_VALUE;
  std::vector<int32_t> fds(head.count);
  std::memcpy(fds.data(), static_cast<const char *>(pData) + offsetof(IpcPhysData, fds), sizeof(int32_t) * head.count);
  ORDO_DRV(d->make_current());
  std::vector<phys_t> granules;
  auto undo = [&] {
    for (phys_t h : granules) drv::phys_release(h);
  };
  for (int32_t theirs : fds) {
    int mine = take_fd(head.pid, theirs);
    if (mine < 0) {
      undo();
      return UR_RESULT_ERROR_INVALID_VALUE; // the process is gone, or not ours to take from
    }
    phys_t h = nullptr;
    status s = drv::phys_import_fd(&h, mine);
    close(mine);
    if (s) {
      undo();
      return to_ur(s);
    }
    granules.push_back(h);
  }
  if (!publish(ctx, d, granules, size_t(head.count) * gran, head.flags, phPhysMem)) {
    undo();
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return UR_RESULT_SUCCESS;
}

// The checks and the table of ranges are shared (ur_common/virtual_mem.hpp).
struct VirtualMemHooks {
  using Context = stream_backend::Context;
  using Device = stream_backend::Device;
  using PhysicalMem = stream_backend::PhysicalMem;
  using PhysRef = stream_backend::PhysRef;
  static Ranges &ranges() { return stream_backend::ranges(); }
  static ur_result_t context_of(ur_context_handle_t h, Context *&ctx) { return stream_backend::context_of(h, ctx); }
  static ur_result_t context_device(Context *ctx, ur_device_handle_t h, Device *&d) {
    if (ur_result_t r = unwrap(h, d)) return r;
    return ctx->index_of(d) < 0 ? UR_RESULT_ERROR_INVALID_DEVICE : UR_RESULT_SUCCESS;
  }
  static ur_result_t granularity(Context *ctx, bool recommended, size_t &g) {
    return stream_backend::granularity(ctx, recommended, &g);
  }
  static void hold_context(Context *ctx) { context_hold(ctx); }
  static void drop_context(Context *ctx) { context_drop(ctx); }
  static ur_result_t reserve(Context *, const void *hint, size_t size, void *&p) {
    ORDO_DRV(drv::vm_reserve(&p, size, hint));
    return UR_RESULT_SUCCESS;
  }
  static void unreserve(void *p, size_t size) { drv::vm_free(p, size); }
  static ur_result_t free_reservation(Context *, void *p, size_t size, size_t gran, Ranges::mapping_map &mappings) {
    for (auto &m : mappings) unmap_granules(m.first, m.second.size, gran);
    return to_ur(drv::vm_free(p, size));
  }
  static ur_result_t map(Context *ctx, PhysicalMem *phys, uintptr_t p, size_t size, size_t offset,
                         ur_virtual_mem_access_flags_t flags, size_t gran) {
    for (size_t done = 0; done < size; done += gran)
      if (status s = drv::vm_map(reinterpret_cast<void *>(p + done), gran, phys->granules[(offset + done) / gran], 0)) {
        unmap_granules(p, done, gran);
        return to_ur(s);
      }
    if (ur_result_t r = stream_backend::set_access(ctx, phys->dev, p, size, gran, access_of(flags))) {
      unmap_granules(p, size, gran);
      return r;
    }
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t unmap(uintptr_t p, size_t size, size_t gran) { return unmap_granules(p, size, gran); }
  static ur_result_t set_access(Context *ctx, const Ranges::mapping &m, uintptr_t p, size_t size, size_t gran,
                                ur_virtual_mem_access_flags_t flags) {
    return stream_backend::set_access(ctx, m.phys.get()->dev, p, size, gran, access_of(flags));
  }
  static ur_result_t create_physical(Context *ctx, Device *d, size_t size, ur_physical_mem_flags_t flags, size_t gran,
                                     ur_physical_mem_handle_t *out) {
    return stream_backend::create_physical(ctx, d, size, flags, gran, out);
  }
  static ur_device_handle_t device_of(const PhysicalMem *p) { return reinterpret_cast<ur_device_handle_t>(p->dev); }
  static constexpr auto physical_retain = stream_backend::urPhysicalMemRetain;
  static constexpr auto physical_release = stream_backend::urPhysicalMemRelease;
  static ur_result_t ipc_export(PhysicalMem *p, void **ppData, size_t *pSize) {
    return stream_backend::ipc_export(p, ppData, pSize);
  }
  static ur_result_t ipc_put(const void *pData) { return stream_backend::ipc_put(pData); }
  static constexpr auto ipc_open = urIPCOpenPhysMemHandleExp;
};

} // namespace

void install_virtual_mem_entry_points(ur_dditable_t &t) {
  if (!info().virtual_memory) return;
  ordo::ur_common::virtual_mem_entry_points<VirtualMemHooks>::install(t);
}

} // namespace ordo::stream_backend
