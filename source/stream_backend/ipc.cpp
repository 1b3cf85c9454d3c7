// SPDX-License-Identifier: Apache-2.0
// Inter-process USM (urIPC*MemHandleExp, docs/cuda.md "Inter-process memory"): a handle
// names the driver allocation holding a device USM pointer (a pool's chunk or a plain
// allocation) and the pointer's offset in it; another process opens it into its own
// address space. Handle data are blocks of this library, refused when unknown.
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "backend.hpp"

namespace ordo::stream_backend {

namespace {

constexpr uint32_t kMagic = 0x0bd0195c;

// What one process hands another. Plain bytes: it crosses a process boundary.
struct HandleData {
  uint32_t magic;
  uint32_t device_native; // the driver ordinal it was made on
  uint64_t offset;        // of the pointer in the driver allocation
  uint64_t size;          // bytes from the pointer to the end of its USM allocation
  unsigned char handle[drv::kIpcHandleBytes];
};

struct Opened {
  Context *ctx;
  Device *dev;
  void *base; // what the driver mapped
};

struct Registry {
  std::mutex mu;
  std::unordered_set<const void *> given;    // handle data not yet put back
  std::unordered_map<void *, Opened> opened; // by the pointer handed out
};
Registry &registry() {
  static Registry *r = new Registry; // never destroyed: handles may outlive statics
  return *r;
}

ur_result_t UR_APICALL urIPCGetMemHandleExp(ur_context_handle_t hContext, void *pMem, void **ppData, size_t *pSizeRet) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pMem || !ppData) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  ordo::stream_ordered::context_pools::block_facts a;
  if (!ctx->pools->block_info(pMem, a) && !ctx->pools->find_plain(pMem, a)) return UR_RESULT_ERROR_INVALID_VALUE;
  if (a.kind != UR_USM_TYPE_DEVICE) return UR_RESULT_ERROR_INVALID_VALUE; // only device memory is shared
  Device *dev = reinterpret_cast<Device *>(a.device);
  ORDO_DRV(dev->make_current());
  void *base = nullptr;
  size_t range = 0;
  ORDO_DRV(drv::address_range(pMem, &base, &range));
  auto *d = new (std::nothrow) HandleData();
  if (!d) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  d->magic = kMagic;
  d->device_native = static_cast<uint32_t>(dev->native);
  d->offset = static_cast<uint64_t>(static_cast<char *>(pMem) - static_cast<char *>(base));
  d->size = a.size - static_cast<size_t>(static_cast<char *>(pMem) - static_cast<char *>(a.base));
  if (status r = drv::ipc_get(base, d->handle)) {
    delete d;
    return to_ur(r);
  }
  try {
    Registry &reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.given.insert(d);
  } catch (...) {
    delete d;
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  *ppData = d;
  if (pSizeRet) *pSizeRet = sizeof(HandleData);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCPutMemHandleExp(ur_context_handle_t hContext, void *pData) {
  ORDO_UNWRAP(Context, ctx, hContext);
  (void)ctx;
  if (!pData) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Registry &reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    if (reg.given.erase(pData) == 0) return UR_RESULT_ERROR_INVALID_VALUE; // not ours, or put back already
  }
  delete static_cast<HandleData *>(pData);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCOpenMemHandleExp(ur_context_handle_t hContext, ur_device_handle_t hDevice, void *pData,
                                             size_t size, void **ppMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Device, dev, hDevice);
  if (!pData || !ppMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ctx->index_of(dev) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
  HandleData d;
  if (size != sizeof d) return UR_RESULT_ERROR_INVALID_VALUE;
  std::memcpy(&d, pData, sizeof d);
  if (d.magic != kMagic) return UR_RESULT_ERROR_INVALID_VALUE;
  ORDO_DRV(dev->make_current());
  void *base = nullptr;
  ORDO_DRV(drv::ipc_open(&base, d.handle));
  void *p = static_cast<char *>(base) + d.offset;
  try {
    Registry &reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.opened.emplace(p, Opened{ctx, dev, base});
  } catch (...) {
    drv::ipc_close(base);
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  context_hold(ctx); // the mapping lives in the context's devices
  *ppMem = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urIPCCloseMemHandleExp(ur_context_handle_t hContext, void *pMem) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Opened o{};
  {
    Registry &reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.opened.find(pMem);
    if (it == reg.opened.end() || it->second.ctx != ctx) return UR_RESULT_ERROR_INVALID_VALUE;
    o = it->second;
    reg.opened.erase(it);
  }
  ur_result_t r = to_ur(o.dev->make_current());
  if (r == UR_RESULT_SUCCESS) r = to_ur(drv::ipc_close(o.base));
  context_drop(ctx);
  return r;
}

} // namespace

void install_ipc_entry_points(ur_dditable_t &t) {
  t.IPCExp.pfnGetMemHandleExp = urIPCGetMemHandleExp;
  t.IPCExp.pfnPutMemHandleExp = urIPCPutMemHandleExp;
  t.IPCExp.pfnOpenMemHandleExp = urIPCOpenMemHandleExp;
  t.IPCExp.pfnCloseMemHandleExp = urIPCCloseMemHandleExp;
}

} // namespace ordo::stream_backend
