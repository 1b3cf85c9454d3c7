// SPDX-License-Identifier: Apache-2.0
// The stream backend's driver interface (source/stream_backend/driver_api.hpp) on the
// CUDA driver API: each function one driver call, its result translated.
#include <algorithm>
#include <cstring>

#include "copy_2d.hpp"
#include "driver.hpp"

namespace ordo::stream_backend::drv {

namespace {
using cuda::status_of;
cuda::Driver &cu() { return cuda::drv(); }
CUdeviceptr dptr(const void *p) { return reinterpret_cast<CUdeviceptr>(p); }
CUstream cs(stream_t s) { return reinterpret_cast<CUstream>(s); }
CUevent ce(event_t e) { return reinterpret_cast<CUevent>(e); }
CUfunction cf(function_t f) { return reinterpret_cast<CUfunction>(f); }

} // namespace

backend_info describe() {
  backend_info i;
  i.log_name = "cuda";
  i.display_name = "CUDA";
  i.backend = UR_BACKEND_CUDA;
  i.platform_name = "NVIDIA CUDA BACKEND";
  i.vendor_name = "NVIDIA Corporation";
  i.binary_target = UR_DEVICE_BINARY_TARGET_NVPTX64;
  i.il_version = "nvptx64"; // urProgramCreateWithIL takes PTX
  i.profile = "CUDA";
  i.ooo_streams_env = "ORDO_CUDA_OOO_STREAMS";
  i.wide_2d_memset = true;
  i.virtual_memory = true;
  i.linking = true;
  i.image_kinds = image_bit(image_kind::ptx) | image_bit(image_kind::elf) | image_bit(image_kind::fatbin);
  return i;
}

bool load(std::string &why, std::string &runtime_version) {
  if (!cu().load()) {
    why = cu().why();
    return false;
  }
  int v = cu().driver_version;
  runtime_version = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  return true;
}

bool not_installed() { return cu().not_installed; }

std::string error_text(status s) { return cuda::error_text(static_cast<CUresult>(s.code)); }

status device_count(int *count) { return status_of(cu().cuDeviceGetCount(count)); }
status device_get(int ordinal, int *native) {
  CUdevice d = 0;
  status r = status_of(cu().cuDeviceGet(&d, ordinal));
  *native = d;
  return r;
}

// What the device info queries need, read once; none of these needs a context.
void read_facts(int native, device_facts &f) {
  const CUdevice d = native;
  char name[256] = {};
  if (cu().cuDeviceGetName(name, sizeof(name), d) == CUDA_SUCCESS) f.name = name;
  cu().cuDeviceTotalMem(&f.total_mem, d);
  CUuuid uuid{};
  if (cu().cuDeviceGetUuid(&uuid, d) == CUDA_SUCCESS) std::memcpy(f.uuid, uuid.bytes, 16);
  char pci[64] = {};
  if (cu().cuDeviceGetPCIBusId(pci, sizeof(pci), d) == CUDA_SUCCESS) f.pci_address = pci;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    return cu().cuDeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
  };
  const int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  f.version = std::to_string(major) + "." + std::to_string(minor);
  f.arch_major = major;
  f.vendor_id = 0x10de;
  // The attribute packs the 16-bit PCI device and vendor ids together.
  const uint32_t ids = static_cast<uint32_t>(attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID));
  f.pci_device_id = (ids & 0xffff) == 0x10de ? ids >> 16 : ids & 0xffff;
  f.virtual_memory = attr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != 0;
  f.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  f.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  f.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  f.block_dim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  f.block_dim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  f.block_dim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  f.grid_dim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  f.grid_dim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  f.grid_dim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  f.shared_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  f.shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  f.regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  f.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  f.mem_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  f.bus_width = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  f.l2_size = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  f.const_mem = attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  f.ecc = attr(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
  f.integrated = attr(CU_DEVICE_ATTRIBUTE_INTEGRATED);
  f.managed = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  f.concurrent_managed = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
  f.pageable_access = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
  f.host_native_atomics = attr(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
  f.cooperative = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
  f.fp16 = major >= 6;
  f.bf16 = f.async_barrier = major >= 8;
  f.independent_forward_progress = f.seq_cst_atomics = major >= 7;
}

status primary_context(int native, dctx_t *out) {
  CUcontext c = nullptr;
  status r = status_of(cu().cuDevicePrimaryCtxRetain(&c, native));
  *out = reinterpret_cast<dctx_t>(c);
  return r;
}
status get_current(dctx_t *out) {
  CUcontext c = nullptr;
  status r = status_of(cu().cuCtxGetCurrent(&c));
  *out = reinterpret_cast<dctx_t>(c);
  return r;
}
status set_current(dctx_t ctx) { return status_of(cu().cuCtxSetCurrent(reinterpret_cast<CUcontext>(ctx))); }
status synchronize_current() { return status_of(cu().cuCtxSynchronize()); }
status mem_get_info(size_t *free_bytes, size_t *total) { return status_of(cu().cuMemGetInfo(free_bytes, total)); }

status stream_priority_range(int *least, int *greatest) {
  return status_of(cu().cuCtxGetStreamPriorityRange(least, greatest));
}
status stream_create(stream_t *out, bool sync_with_default, int priority) {
  CUstream s = nullptr;
  status r = status_of(
      cu().cuStreamCreateWithPriority(&s, sync_with_default ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING, priority));
  *out = reinterpret_cast<stream_t>(s);
  return r;
}
stream_t default_stream() { return reinterpret_cast<stream_t>(CU_STREAM_LEGACY); }
status stream_destroy(stream_t s) { return status_of(cu().cuStreamDestroy(cs(s))); }
status stream_synchronize(stream_t s) { return status_of(cu().cuStreamSynchronize(cs(s))); }
status stream_query(stream_t s) { return status_of(cu().cuStreamQuery(cs(s))); }
status stream_wait_event(stream_t s, event_t e) { return status_of(cu().cuStreamWaitEvent(cs(s), ce(e), 0)); }

status event_create(event_t *out, bool timing) {
  CUevent e = nullptr;
  status r = status_of(cu().cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
  *out = reinterpret_cast<event_t>(e);
  return r;
}
status event_destroy(event_t e) { return status_of(cu().cuEventDestroy(ce(e))); }
status event_record(event_t e, stream_t s) { return status_of(cu().cuEventRecord(ce(e), cs(s))); }
status event_query(event_t e) { return status_of(cu().cuEventQuery(ce(e))); }
status event_synchronize(event_t e) { return status_of(cu().cuEventSynchronize(ce(e))); }
status event_elapsed_ms(float *ms, event_t from, event_t to) {
  return status_of(cu().cuEventElapsedTime(ms, ce(from), ce(to)));
}

status alloc_device(void **out, size_t size) {
  CUdeviceptr p = 0;
  status r = status_of(cu().cuMemAlloc(&p, size));
  *out = reinterpret_cast<void *>(p);
  return r;
}
status alloc_host(void **out, size_t size) {
  return status_of(cu().cuMemHostAlloc(out, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
}
status alloc_managed(void **out, size_t size) {
  CUdeviceptr p = 0;
  status r = status_of(cu().cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL));
  *out = reinterpret_cast<void *>(p);
  return r;
}
status free_device(void *p) { return status_of(cu().cuMemFree(dptr(p))); }
status free_host(void *p) { return status_of(cu().cuMemFreeHost(p)); }
status host_register(void *p, size_t size, bool read_only) {
  unsigned flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;
  if (read_only) flags |= CU_MEMHOSTREGISTER_READ_ONLY;
  return status_of(cu().cuMemHostRegister(p, size, flags));
}
status host_unregister(void *p) { return status_of(cu().cuMemHostUnregister(p)); }
status address_range(const void *p, void **base, size_t *size) {
  CUdeviceptr b = 0;
  status r = status_of(cu().cuMemGetAddressRange(&b, size, dptr(p)));
  *base = reinterpret_cast<void *>(b);
  return r;
}
status ipc_get(void *base, unsigned char (&handle)[kIpcHandleBytes]) {
  static_assert(sizeof(CUipcMemHandle) == kIpcHandleBytes, "CUDA's IPC handle is 64 bytes");
  CUipcMemHandle h;
  status r = status_of(cu().cuIpcGetMemHandle(&h, dptr(base)));
  std::memcpy(handle, &h, kIpcHandleBytes);
  return r;
}
status ipc_open(void **base, const unsigned char (&handle)[kIpcHandleBytes]) {
  CUipcMemHandle h;
  std::memcpy(&h, handle, kIpcHandleBytes);
  CUdeviceptr b = 0;
  status r = status_of(cu().cuIpcOpenMemHandle(&b, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  *base = reinterpret_cast<void *>(b);
  return r;
}
status ipc_close(void *base) { return status_of(cu().cuIpcCloseMemHandle(dptr(base))); }
bool is_managed(const void *p) {
  unsigned managed = 0;
  return cu().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, dptr(p)) == CUDA_SUCCESS && managed;
}

status memcpy_async(void *dst, const void *src, size_t size, stream_t s) {
  return status_of(cu().cuMemcpyAsync(dptr(dst), dptr(src), size, cs(s)));
}

status memcpy_2d_async(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t width, size_t height,
                       stream_t s) {
  auto known = [](const void *p) {
    unsigned type = 0;
    return cu().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p)) == CUDA_SUCCESS;
  };
  CUDA_MEMCPY2D c = cuda::copy_2d(known, dst, dst_pitch, src, src_pitch, width, height);
  return status_of(cu().cuMemcpy2DAsync(&c, cs(s)));
}
status memset_8(void *dst, uint8_t v, size_t count, stream_t s) {
  return status_of(cu().cuMemsetD8Async(dptr(dst), v, count, cs(s)));
}
status memset_16(void *dst, uint16_t v, size_t count, stream_t s) {
  return status_of(cu().cuMemsetD16Async(dptr(dst), v, count, cs(s)));
}
status memset_32(void *dst, uint32_t v, size_t count, stream_t s) {
  return status_of(cu().cuMemsetD32Async(dptr(dst), v, count, cs(s)));
}
status memset_2d8(void *dst, size_t pitch, uint8_t v, size_t width, size_t height, stream_t s) {
  return status_of(cu().cuMemsetD2D8Async(dptr(dst), pitch, v, width, height, cs(s)));
}
status memset_2d16(void *dst, size_t pitch, uint16_t v, size_t width, size_t height, stream_t s) {
  return status_of(cu().cuMemsetD2D16Async(dptr(dst), pitch, v, width, height, cs(s)));
}
status memset_2d32(void *dst, size_t pitch, uint32_t v, size_t width, size_t height, stream_t s) {
  return status_of(cu().cuMemsetD2D32Async(dptr(dst), pitch, v, width, height, cs(s)));
}

namespace {
CUmemLocation location(bool host, int device_ordinal) {
  CUmemLocation loc{};
  loc.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = host ? 0 : device_ordinal;
  return loc;
}
} // namespace

status peer_query(int native, int peer, bool *access, bool *atomics) {
  int can = 0, atom = 0;
  if (status r = status_of(cu().cuDeviceCanAccessPeer(&can, native, peer))) return r;
  if (can)
    if (status r = status_of(
            cu().cuDeviceGetP2PAttribute(&atom, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, native, peer)))
      return r;
  *access = can != 0;
  *atomics = can && atom != 0;
  return status{};
}
status peer_enable(int, dctx_t peer_ctx) {
  CUresult r = cu().cuCtxEnablePeerAccess(reinterpret_cast<CUcontext>(peer_ctx), 0);
  return status_of(r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ? CUDA_SUCCESS : r);
}
status peer_disable(int, dctx_t peer_ctx) {
  CUresult r = cu().cuCtxDisablePeerAccess(reinterpret_cast<CUcontext>(peer_ctx));
  return status_of(r == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED ? CUDA_SUCCESS : r);
}
status prefetch(const void *p, size_t size, bool to_host, int device_ordinal, stream_t s) {
  return status_of(cu().cuMemPrefetchAsync(dptr(p), size, location(to_host, device_ordinal), 0, cs(s)));
}
status advise(const void *p, size_t size, mem_advice a, bool host, int device_ordinal) {
  CUmem_advise advice = CU_MEM_ADVISE_SET_READ_MOSTLY;
  switch (a) {
  case mem_advice::set_read_mostly: advice = CU_MEM_ADVISE_SET_READ_MOSTLY; break;
  case mem_advice::unset_read_mostly: advice = CU_MEM_ADVISE_UNSET_READ_MOSTLY; break;
  case mem_advice::set_preferred_location: advice = CU_MEM_ADVISE_SET_PREFERRED_LOCATION; break;
  case mem_advice::unset_preferred_location: advice = CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION; break;
  case mem_advice::set_accessed_by: advice = CU_MEM_ADVISE_SET_ACCESSED_BY; break;
  case mem_advice::unset_accessed_by: advice = CU_MEM_ADVISE_UNSET_ACCESSED_BY; break;
  }
  return status_of(cu().cuMemAdvise(dptr(p), size, advice, location(host, device_ordinal)));
}

status module_load(module_t *out, const std::vector<uint8_t> &image, const jit_request &jit) {
  std::vector<CUjit_option> keys = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                                    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  std::vector<void *> values = {jit.info_log, reinterpret_cast<void *>(jit.log_size), jit.error_log,
                                reinterpret_cast<void *>(jit.log_size), reinterpret_cast<void *>(uintptr_t{1})};
  if (jit.opt_level >= 0) {
    keys.push_back(CU_JIT_OPTIMIZATION_LEVEL);
    values.push_back(reinterpret_cast<void *>(static_cast<uintptr_t>(jit.opt_level)));
  }
  if (jit.max_registers) {
    keys.push_back(CU_JIT_MAX_REGISTERS);
    values.push_back(reinterpret_cast<void *>(static_cast<uintptr_t>(jit.max_registers)));
  }
  CUmodule m = nullptr;
  CUresult r =
      cu().cuModuleLoadDataEx(&m, image.data(), static_cast<unsigned>(keys.size()), keys.data(), values.data());
  *out = reinterpret_cast<module_t>(m);
  return status_of(r);
}
status module_unload(module_t m) { return status_of(cu().cuModuleUnload(reinterpret_cast<CUmodule>(m))); }
status link(const std::vector<const std::vector<uint8_t> *> &parts, const jit_request &jit, std::vector<uint8_t> &out) {
  CUjit_option keys[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {jit.info_log, reinterpret_cast<void *>(jit.log_size), jit.error_log,
                    reinterpret_cast<void *>(jit.log_size)};
  CUlinkState state = nullptr;
  if (CUresult r = cu().cuLinkCreate(4, keys, values, &state)) return status_of(r);
  CUresult r = CUDA_SUCCESS;
  for (const std::vector<uint8_t> *p : parts) {
    image_kind kind = classify_image(p->data(), p->size());
    CUjitInputType type = kind == image_kind::ptx      ? CU_JIT_INPUT_PTX
                          : kind == image_kind::fatbin ? CU_JIT_INPUT_FATBINARY
                                                       : CU_JIT_INPUT_CUBIN;
    r = cu().cuLinkAddData(state, type, const_cast<uint8_t *>(p->data()), p->size(), "ordo", 0, nullptr, nullptr);
    if (r) break;
  }
  void *cubin = nullptr;
  size_t size = 0;
  if (!r) r = cu().cuLinkComplete(state, &cubin, &size);
  if (!r) out.assign(static_cast<uint8_t *>(cubin), static_cast<uint8_t *>(cubin) + size); // the state owns it
  cu().cuLinkDestroy(state);
  return status_of(r);
}
status module_get_function(function_t *out, module_t m, const char *name) {
  CUfunction f = nullptr;
  status r = status_of(cu().cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(m), name));
  *out = reinterpret_cast<function_t>(f);
  return r;
}
// ---- virtual memory ----

namespace {
CUmemAllocationProp device_memory(int native) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = native;
  return prop;
}
} // namespace

status vm_granularity(int native, bool recommended, size_t *out) {
  CUmemAllocationProp prop = device_memory(native);
  return status_of(cu().cuMemGetAllocationGranularity(
      out, &prop, recommended ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED : CU_MEM_ALLOC_GRANULARITY_MINIMUM));
}
status vm_reserve(void **out, size_t size, const void *hint) {
  CUdeviceptr p = 0;
  status r = status_of(cu().cuMemAddressReserve(&p, size, 0, dptr(hint), 0));
  *out = reinterpret_cast<void *>(p);
  return r;
}
status vm_free(void *p, size_t size) { return status_of(cu().cuMemAddressFree(dptr(p), size)); }
status phys_create(phys_t *out, size_t size, int native, bool shareable) {
  CUmemAllocationProp prop = device_memory(native);
  if (shareable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = 0;
  status r = status_of(cu().cuMemCreate(&h, size, &prop, 0));
  *out = reinterpret_cast<phys_t>(h);
  return r;
}
status phys_export_fd(phys_t h, int *fd) {
  return status_of(cu().cuMemExportToShareableHandle(fd, reinterpret_cast<CUmemGenericAllocationHandle>(h),
                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
}
status phys_import_fd(phys_t *out, int fd) {
  CUmemGenericAllocationHandle h = 0;
  status r = status_of(cu().cuMemImportFromShareableHandle(&h, reinterpret_cast<void *>(static_cast<uintptr_t>(fd)),
                                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  *out = reinterpret_cast<phys_t>(h);
  return r;
}
status phys_release(phys_t h) {
  return status_of(cu().cuMemRelease(reinterpret_cast<CUmemGenericAllocationHandle>(h)));
}
status vm_map(void *p, size_t size, phys_t h, size_t offset) {
  return status_of(cu().cuMemMap(dptr(p), size, offset, reinterpret_cast<CUmemGenericAllocationHandle>(h), 0));
}
status vm_unmap(void *p, size_t size) { return status_of(cu().cuMemUnmap(dptr(p), size)); }
status vm_set_access(void *p, size_t size, int native, int access) {
  CUmemAccessDesc desc{};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = native;
  desc.flags = access == 3   ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
               : access == 1 ? CU_MEM_ACCESS_FLAGS_PROT_READ
                             : CU_MEM_ACCESS_FLAGS_PROT_NONE;
  return status_of(cu().cuMemSetAccess(dptr(p), size, &desc, 1));
}

status module_get_global(void **out, size_t *size, module_t m, const char *name) {
  CUdeviceptr at = 0;
  status r = status_of(cu().cuModuleGetGlobal(&at, size, reinterpret_cast<CUmodule>(m), name));
  *out = reinterpret_cast<void *>(at);
  return r;
}
status module_function_names(module_t m, std::vector<std::string> &names) {
  CUmodule mod = reinterpret_cast<CUmodule>(m);
  unsigned count = 0;
  if (CUresult r = cu().cuModuleGetFunctionCount(&count, mod)) return status_of(r);
  std::vector<CUfunction> funcs(count);
  if (CUresult r = cu().cuModuleEnumerateFunctions(funcs.data(), count, mod)) return status_of(r);
  for (CUfunction f : funcs) {
    const char *name = nullptr;
    if (cu().cuFuncGetName(&name, f) == CUDA_SUCCESS && name) names.push_back(name);
  }
  return status{};
}
status function_param_sizes(function_t f, std::vector<size_t> &sizes) {
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    // Past the last parameter the driver answers an error: that is the count.
    if (cu().cuFuncGetParamInfo(cf(f), i, &offset, &size) != CUDA_SUCCESS) break;
    sizes.push_back(size);
  }
  return status{};
}
int function_attribute(function_t f, func_attr a) {
  CUfunction_attribute attr = CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
  switch (a) {
  case func_attr::max_threads_per_block: attr = CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK; break;
  case func_attr::shared_size_bytes: attr = CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES; break;
  case func_attr::local_size_bytes: attr = CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES; break;
  case func_attr::num_regs: attr = CU_FUNC_ATTRIBUTE_NUM_REGS; break;
  }
  int v = 0;
  cu().cuFuncGetAttribute(&v, attr, cf(f));
  return v;
}
status function_set_max_dynamic_shared(function_t f, int bytes) {
  return status_of(cu().cuFuncSetAttribute(cf(f), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}
status launch(function_t f, const size_t grid[3], const size_t block[3], unsigned shared, stream_t s, void **params,
              bool cooperative) {
  if (cooperative)
    return status_of(cu().cuLaunchCooperativeKernel(cf(f), unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                                                    unsigned(block[0]), unsigned(block[1]), unsigned(block[2]), shared,
                                                    cs(s), params));
  return status_of(cu().cuLaunchKernel(cf(f), unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                                       unsigned(block[0]), unsigned(block[1]), unsigned(block[2]), shared, cs(s),
                                       params, nullptr));
}
status occupancy_max_blocks(int *blocks, function_t f, int threads, size_t shared) {
  return status_of(cu().cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, cf(f), threads, shared));
}

} // namespace ordo::stream_backend::drv
