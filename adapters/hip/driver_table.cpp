// SPDX-License-Identifier: Apache-2.0
// The stream backend's driver interface (source/stream_backend/driver_api.hpp) on the
// HIP runtime API: each function one runtime call, its result translated. What HIP 5.2
// lacks answers err::not_supported (listing a module's kernels or a function's
// parameters: the backend reads the image instead; cooperative launches; 2-D memsets of
// 2- and 4-byte words: the backend uses bytes).
#include <cstring>

#include "driver.hpp"

namespace ordo::stream_backend::drv {

namespace {
using hip::status_of;
hip::Driver &rt() { return hip::drv(); }
hip::hipStream_t hs(stream_t s) { return reinterpret_cast<hip::hipStream_t>(s); }
hip::hipEvent_t he(event_t e) { return reinterpret_cast<hip::hipEvent_t>(e); }
hip::hipFunction_t hf(function_t f) { return reinterpret_cast<hip::hipFunction_t>(f); }
status unsupported() { return status{err::not_supported, hip::hipErrorNotSupported}; }

} // namespace

backend_info describe() {
  backend_info i;
  i.log_name = "hip";
  i.display_name = "HIP";
  i.backend = UR_BACKEND_HIP;
  i.platform_name = "AMD HIP BACKEND";
  i.vendor_name = "AMD Corporation";
  i.binary_target = UR_DEVICE_BINARY_TARGET_AMDGCN;
  i.il_version = ""; // no intermediate language on AMD; PTX on NVIDIA comes as a binary
  i.profile = "HIP";
  i.ooo_streams_env = "ORDO_HIP_OOO_STREAMS";
  i.wide_2d_memset = false; // hipMemset2DAsync writes bytes only
  i.virtual_memory = false; // HIP 5.2 has no virtual memory management
  i.linking = false;        // nor a linker in libamdhip64 (hiprtc's is another library)
  // Code objects and offload bundles on AMD; PTX, cubin and fatbinaries on NVIDIA.
  i.image_kinds = image_bit(image_kind::elf) | image_bit(image_kind::offload_bundle) | image_bit(image_kind::ptx) |
                  image_bit(image_kind::fatbin);
  return i;
}

bool load(std::string &why, std::string &runtime_version) {
  if (!rt().load()) {
    why = rt().why();
    return false;
  }
  // HIP encodes major * 10^7 + minor * 10^5 + patch; on NVIDIA it reports CUDA's 1000 * major + 10 * minor.
  int v = rt().runtime_version;
  runtime_version = v >= 10000000 ? std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100)
                                  : std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  return true;
}

bool not_installed() { return rt().not_installed; }

std::string error_text(status s) { return hip::error_text(s.code); }

status device_count(int *count) { return status_of(rt().hipGetDeviceCount(count)); }
status device_get(int ordinal, int *native) { return status_of(rt().hipDeviceGet(native, ordinal)); }

// What the device info queries need, read once through hipDeviceGetAttribute.
void read_facts(int native, device_facts &f) {
  using namespace hip;
  char name[256] = {};
  if (rt().hipDeviceGetName(name, sizeof(name), native) == hipSuccess) f.name = name;
  rt().hipDeviceTotalMem(&f.total_mem, native);
  hipUUID uuid{};
  if (rt().hipDeviceGetUuid(&uuid, native) == hipSuccess) std::memcpy(f.uuid, uuid.bytes, 16);
  char pci[64] = {};
  if (rt().hipDeviceGetPCIBusId(pci, sizeof(pci), native) == hipSuccess) f.pci_address = pci;
  auto attr = [&](hipDeviceAttribute_t a) {
    int v = 0;
    return rt().hipDeviceGetAttribute(&v, a, native) == hipSuccess ? v : 0;
  };
  const int major = attr(hipDeviceAttributeComputeCapabilityMajor);
  const int minor = attr(hipDeviceAttributeComputeCapabilityMinor);
  f.version = std::to_string(major) + "." + std::to_string(minor);
  // HIP's NVIDIA platform reports the GPU's own name and compute capability.
  const bool nvidia = f.name.rfind("NVIDIA", 0) == 0;
  f.vendor_id = nvidia ? 0x10de : 0x1002;
  f.arch_major = nvidia ? major : 0;
  f.pci_device_id = static_cast<uint32_t>(attr(hipDeviceAttributePciDeviceId));
  f.sm_count = attr(hipDeviceAttributeMultiprocessorCount);
  f.warp_size = attr(hipDeviceAttributeWarpSize);
  f.max_threads_per_block = attr(hipDeviceAttributeMaxThreadsPerBlock);
  f.block_dim[0] = attr(hipDeviceAttributeMaxBlockDimX);
  f.block_dim[1] = attr(hipDeviceAttributeMaxBlockDimY);
  f.block_dim[2] = attr(hipDeviceAttributeMaxBlockDimZ);
  f.grid_dim[0] = attr(hipDeviceAttributeMaxGridDimX);
  f.grid_dim[1] = attr(hipDeviceAttributeMaxGridDimY);
  f.grid_dim[2] = attr(hipDeviceAttributeMaxGridDimZ);
  f.shared_per_block = attr(hipDeviceAttributeMaxSharedMemoryPerBlock);
  f.shared_per_block_optin = attr(hipDeviceAttributeSharedMemPerBlockOptin);
  f.regs_per_block = attr(hipDeviceAttributeMaxRegistersPerBlock);
  f.clock_khz = attr(hipDeviceAttributeClockRate);
  f.mem_clock_khz = attr(hipDeviceAttributeMemoryClockRate);
  f.bus_width = attr(hipDeviceAttributeMemoryBusWidth);
  f.l2_size = attr(hipDeviceAttributeL2CacheSize);
  f.const_mem = attr(hipDeviceAttributeTotalConstantMemory);
  f.ecc = attr(hipDeviceAttributeEccEnabled);
  f.integrated = attr(hipDeviceAttributeIntegrated);
  f.managed = attr(hipDeviceAttributeManagedMemory);
  f.concurrent_managed = attr(hipDeviceAttributeConcurrentManagedAccess);
  f.pageable_access = attr(hipDeviceAttributePageableMemoryAccess);
  f.host_native_atomics = attr(hipDeviceAttributeHostNativeAtomicSupported);
  f.cooperative = 0; // HIP 5.2 has no cooperative launch of a module function
  f.fp16 = true;
  f.bf16 = f.async_barrier = nvidia && major >= 8;
  f.independent_forward_progress = nvidia && major >= 7;
  f.seq_cst_atomics = !nvidia || major >= 7;
}

status primary_context(int native, dctx_t *out) {
  hip::hipCtx_t c = nullptr;
  status r = status_of(rt().hipDevicePrimaryCtxRetain(&c, native));
  *out = reinterpret_cast<dctx_t>(c);
  return r;
}
status get_current(dctx_t *out) {
  hip::hipCtx_t c = nullptr;
  status r = status_of(rt().hipCtxGetCurrent(&c));
  *out = reinterpret_cast<dctx_t>(c);
  return r;
}
status set_current(dctx_t ctx) { return status_of(rt().hipCtxSetCurrent(reinterpret_cast<hip::hipCtx_t>(ctx))); }
status synchronize_current() { return status_of(rt().hipDeviceSynchronize()); }
status mem_get_info(size_t *free_bytes, size_t *total) { return status_of(rt().hipMemGetInfo(free_bytes, total)); }

status stream_priority_range(int *least, int *greatest) {
  return status_of(rt().hipDeviceGetStreamPriorityRange(least, greatest));
}
status stream_create(stream_t *out, bool sync_with_default, int priority) {
  hip::hipStream_t s = nullptr;
  status r = status_of(rt().hipStreamCreateWithPriority(
      &s, sync_with_default ? hip::hipStreamDefault : hip::hipStreamNonBlocking, priority));
  *out = reinterpret_cast<stream_t>(s);
  return r;
}
stream_t default_stream() { return nullptr; } // HIP's null stream
status stream_destroy(stream_t s) { return status_of(rt().hipStreamDestroy(hs(s))); }
status stream_synchronize(stream_t s) { return status_of(rt().hipStreamSynchronize(hs(s))); }
status stream_query(stream_t s) { return status_of(rt().hipStreamQuery(hs(s))); }
status stream_wait_event(stream_t s, event_t e) { return status_of(rt().hipStreamWaitEvent(hs(s), he(e), 0)); }

status event_create(event_t *out, bool timing) {
  hip::hipEvent_t e = nullptr;
  status r = status_of(rt().hipEventCreateWithFlags(&e, timing ? hip::hipEventDefault : hip::hipEventDisableTiming));
  *out = reinterpret_cast<event_t>(e);
  return r;
}
status event_destroy(event_t e) { return status_of(rt().hipEventDestroy(he(e))); }
status event_record(event_t e, stream_t s) { return status_of(rt().hipEventRecord(he(e), hs(s))); }
status event_query(event_t e) { return status_of(rt().hipEventQuery(he(e))); }
status event_synchronize(event_t e) { return status_of(rt().hipEventSynchronize(he(e))); }
status event_elapsed_ms(float *ms, event_t from, event_t to) {
  return status_of(rt().hipEventElapsedTime(ms, he(from), he(to)));
}

status alloc_device(void **out, size_t size) { return status_of(rt().hipMalloc(out, size)); }
status alloc_host(void **out, size_t size) {
  return status_of(rt().hipHostMalloc(out, size, hip::hipHostMallocPortable | hip::hipHostMallocMapped));
}
status alloc_managed(void **out, size_t size) {
  return status_of(rt().hipMallocManaged(out, size, hip::hipMemAttachGlobal));
}
status free_device(void *p) { return status_of(rt().hipFree(p)); }
status free_host(void *p) { return status_of(rt().hipHostFree(p)); }
status host_register(void *p, size_t size, bool read_only) {
  // HIP 5.2 has no read-only registration flag; the pages are registered read-write.
  (void)read_only;
  const unsigned flags = hip::hipHostRegisterPortable | hip::hipHostRegisterMapped;
  return status_of(rt().hipHostRegister(p, size, flags));
}
status host_unregister(void *p) { return status_of(rt().hipHostUnregister(p)); }
status address_range(const void *p, void **base, size_t *size) {
  return status_of(rt().hipMemGetAddressRange(base, size, const_cast<void *>(p)));
}
status ipc_get(void *base, unsigned char (&handle)[kIpcHandleBytes]) {
  hip::hipIpcMemHandle_t h;
  status r = status_of(rt().hipIpcGetMemHandle(&h, base));
  std::memcpy(handle, h.reserved, kIpcHandleBytes);
  return r;
}
status ipc_open(void **base, const unsigned char (&handle)[kIpcHandleBytes]) {
  hip::hipIpcMemHandle_t h;
  std::memcpy(h.reserved, handle, kIpcHandleBytes);
  return status_of(rt().hipIpcOpenMemHandle(base, h, hip::hipIpcMemLazyEnablePeerAccess));
}
status ipc_close(void *base) { return status_of(rt().hipIpcCloseMemHandle(base)); }
bool is_managed(const void *p) {
  int managed = 0;
  return rt().hipPointerGetAttribute(&managed, hip::HIP_POINTER_ATTRIBUTE_IS_MANAGED, const_cast<void *>(p)) ==
             hip::hipSuccess &&
         managed;
}

status memcpy_async(void *dst, const void *src, size_t size, stream_t s) {
  return status_of(rt().hipMemcpyAsync(dst, src, size, hip::hipMemcpyDefault, hs(s)));
}
status memcpy_2d_async(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t width, size_t height,
                       stream_t s) {
  return status_of(rt().hipMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, hip::hipMemcpyDefault, hs(s)));
}
status memset_8(void *dst, uint8_t v, size_t count, stream_t s) {
  return status_of(rt().hipMemsetD8Async(dst, v, count, hs(s)));
}
status memset_16(void *dst, uint16_t v, size_t count, stream_t s) {
  return status_of(rt().hipMemsetD16Async(dst, v, count, hs(s)));
}
status memset_32(void *dst, uint32_t v, size_t count, stream_t s) {
  return status_of(rt().hipMemsetD32Async(dst, static_cast<int>(v), count, hs(s)));
}
status memset_2d8(void *dst, size_t pitch, uint8_t v, size_t width, size_t height, stream_t s) {
  return status_of(rt().hipMemset2DAsync(dst, pitch, v, width, height, hs(s)));
}
status memset_2d16(void *, size_t, uint16_t, size_t, size_t, stream_t) { return unsupported(); }
status memset_2d32(void *, size_t, uint32_t, size_t, size_t, stream_t) { return unsupported(); }

status peer_query(int native, int peer, bool *access, bool *atomics) {
  int can = 0, atom = 0;
  if (status r = status_of(rt().hipDeviceCanAccessPeer(&can, native, peer))) return r;
  if (can)
    if (status r =
            status_of(rt().hipDeviceGetP2PAttribute(&atom, hip::hipDevP2PAttrNativeAtomicSupported, native, peer)))
      return r;
  *access = can != 0;
  *atomics = can && atom != 0;
  return status{};
}
status peer_enable(int peer, dctx_t) {
  hip::hipError_t r = rt().hipDeviceEnablePeerAccess(peer, 0);
  return status_of(r == hip::hipErrorPeerAccessAlreadyEnabled ? hip::hipSuccess : r);
}
status peer_disable(int peer, dctx_t) {
  hip::hipError_t r = rt().hipDeviceDisablePeerAccess(peer);
  return status_of(r == hip::hipErrorPeerAccessNotEnabled ? hip::hipSuccess : r);
}
status prefetch(const void *p, size_t size, bool to_host, int device_ordinal, stream_t s) {
  return status_of(rt().hipMemPrefetchAsync(p, size, to_host ? hip::hipCpuDeviceId : device_ordinal, hs(s)));
}
status advise(const void *p, size_t size, mem_advice a, bool host, int device_ordinal) {
  hip::hipMemoryAdvise advice = hip::hipMemAdviseSetReadMostly;
  switch (a) {
  case mem_advice::set_read_mostly: advice = hip::hipMemAdviseSetReadMostly; break;
  case mem_advice::unset_read_mostly: advice = hip::hipMemAdviseUnsetReadMostly; break;
  case mem_advice::set_preferred_location: advice = hip::hipMemAdviseSetPreferredLocation; break;
  case mem_advice::unset_preferred_location: advice = hip::hipMemAdviseUnsetPreferredLocation; break;
  case mem_advice::set_accessed_by: advice = hip::hipMemAdviseSetAccessedBy; break;
  case mem_advice::unset_accessed_by: advice = hip::hipMemAdviseUnsetAccessedBy; break;
  }
  return status_of(rt().hipMemAdvise(p, size, advice, host ? hip::hipCpuDeviceId : device_ordinal));
}

status module_load(module_t *out, const std::vector<uint8_t> &image, const jit_request &jit) {
  std::vector<hip::hipJitOption> keys = {hip::hipJitOptionInfoLogBuffer, hip::hipJitOptionInfoLogBufferSizeBytes,
                                         hip::hipJitOptionErrorLogBuffer, hip::hipJitOptionErrorLogBufferSizeBytes};
  std::vector<void *> values = {jit.info_log, reinterpret_cast<void *>(jit.log_size), jit.error_log,
                                reinterpret_cast<void *>(jit.log_size)};
  // The JIT (PTX on NVIDIA) takes these; a finished code object ignores them.
  if (jit.opt_level >= 0) {
    keys.push_back(hip::hipJitOptionOptimizationLevel);
    values.push_back(reinterpret_cast<void *>(static_cast<uintptr_t>(jit.opt_level)));
  }
  if (jit.max_registers) {
    keys.push_back(hip::hipJitOptionMaxRegisters);
    values.push_back(reinterpret_cast<void *>(static_cast<uintptr_t>(jit.max_registers)));
  }
  hip::hipModule_t m = nullptr;
  hip::hipError_t r =
      rt().hipModuleLoadDataEx(&m, image.data(), static_cast<unsigned>(keys.size()), keys.data(), values.data());
  *out = reinterpret_cast<module_t>(m);
  return status_of(r);
}
status module_unload(module_t m) { return status_of(rt().hipModuleUnload(reinterpret_cast<hip::hipModule_t>(m))); }
status module_get_function(function_t *out, module_t m, const char *name) {
  hip::hipFunction_t f = nullptr;
  status r = status_of(rt().hipModuleGetFunction(&f, reinterpret_cast<hip::hipModule_t>(m), name));
  *out = reinterpret_cast<function_t>(f);
  return r;
}
// No virtual memory: HIP 5.2 has none of hipMemAddressReserve, hipMemCreate, hipMemMap
// (backend_info::virtual_memory is false, so urVirtualMem* are not offered).
status vm_granularity(int, bool, size_t *) { return unsupported(); }
status vm_reserve(void **, size_t, const void *) { return unsupported(); }
status vm_free(void *, size_t) { return unsupported(); }
status phys_create(phys_t *, size_t, int, bool) { return unsupported(); }
status link(const std::vector<const std::vector<uint8_t> *> &, const jit_request &, std::vector<uint8_t> &) {
  return unsupported();
}
status phys_export_fd(phys_t, int *) { return unsupported(); }
status phys_import_fd(phys_t *, int) { return unsupported(); }
status phys_release(phys_t) { return unsupported(); }
status vm_map(void *, size_t, phys_t, size_t) { return unsupported(); }
status vm_unmap(void *, size_t) { return unsupported(); }
status vm_set_access(void *, size_t, int, int) { return unsupported(); }

status module_get_global(void **out, size_t *size, module_t m, const char *name) {
  return status_of(rt().hipModuleGetGlobal(out, size, reinterpret_cast<hip::hipModule_t>(m), name));
}
status module_function_names(module_t, std::vector<std::string> &) { return unsupported(); }
status function_param_sizes(function_t, std::vector<size_t> &) { return unsupported(); }
int function_attribute(function_t f, func_attr a) {
  hip::hipFunction_attribute attr = hip::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
  switch (a) {
  case func_attr::max_threads_per_block: attr = hip::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK; break;
  case func_attr::shared_size_bytes: attr = hip::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES; break;
  case func_attr::local_size_bytes: attr = hip::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES; break;
  case func_attr::num_regs: attr = hip::HIP_FUNC_ATTRIBUTE_NUM_REGS; break;
  }
  int v = 0;
  rt().hipFuncGetAttribute(&v, attr, hf(f));
  return v;
}
status function_set_max_dynamic_shared(function_t f, int bytes) {
  return status_of(rt().hipFuncSetAttribute(reinterpret_cast<const void *>(f),
                                            hip::hipFuncAttributeMaxDynamicSharedMemorySize, bytes));
}
status launch(function_t f, const size_t grid[3], const size_t block[3], unsigned shared, stream_t s, void **params,
              bool cooperative) {
  if (cooperative) return unsupported();
  return status_of(rt().hipModuleLaunchKernel(hf(f), unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                                              unsigned(block[0]), unsigned(block[1]), unsigned(block[2]), shared, hs(s),
                                              params, nullptr));
}
status occupancy_max_blocks(int *blocks, function_t f, int threads, size_t shared) {
  return status_of(rt().hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(blocks, hf(f), threads, shared));
}

} // namespace ordo::stream_backend::drv
