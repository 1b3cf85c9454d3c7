// SPDX-License-Identifier: Apache-2.0
// Devices: the primary context, the event pool, the profiling clock and the info
// queries (from the facts each adapter reads at discovery).
#include <chrono>
#include <cstring>

#include "backend.hpp"
#include "ur_common/device.hpp"
#include "ordo/device_info.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "ur_common/device_info.hpp"

namespace ordo::stream_backend {

uint64_t host_now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// ---- EventPool -------------------------------------------------------------------------

status EventPool::get(bool timing, event_t *out) {
  if (!timing && (*out = untimed_slots_.take())) return status{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto &list = timing ? timed_ : untimed_;
    if (!list.empty()) {
      *out = list.back();
      list.pop_back();
      return status{};
    }
  }
  // Only the first commands of a run get here; afterwards events come back.
  return drv::event_create(out, timing);
}

void EventPool::put(event_t ev, bool timing) {
  if (!timing && untimed_slots_.put(ev)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  (timing ? timed_ : untimed_).push_back(ev);
}

// ---- Device ---------------------------------------------------------------------------

dctx_t Device::context() {
  dctx_t ctx = primary_.load(std::memory_order_acquire);
  if (ctx) return ctx;
  std::call_once(context_once_, [this] {
    dctx_t c = nullptr;
    context_error = drv::primary_context(native, &c);
    if (!context_error)
      primary_.store(c, std::memory_order_release);
    else
      ORDO_LOG(logger(), error, "primary context of device %d: %s", ordinal, drv::error_text(context_error).c_str());
  });
  return primary_.load(std::memory_order_acquire);
}

status Device::make_current() {
  dctx_t want = context();
  if (!want) return context_error;
  dctx_t current = nullptr;
  drv::get_current(&current);
  return current == want ? status{} : drv::set_current(want);
}

status Device::internal_stream(stream_t *out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!internal_stream_) {
    if (status r = make_current()) return r;
    if (status r = drv::stream_create(&internal_stream_, false, 0)) return r;
  }
  *out = internal_stream_;
  return status{};
}

status Device::time_base(event_t *event, uint64_t *host_ns) {
  stream_t stream = nullptr;
  if (status r = internal_stream(&stream)) return r;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!base_event_) {
    event_t ev = nullptr;
    if (status r = drv::event_create(&ev, true)) return r;
    status r = drv::event_record(ev, stream);
    if (!r) r = drv::event_synchronize(ev);
    if (r) {
      drv::event_destroy(ev);
      return r;
    }
    // Read after the event completed: device times map to host times no earlier
    // than they happened, so a command never appears to start before its enqueue.
    base_host_ns_ = host_now_ns();
    base_event_ = ev;
  }
  *event = base_event_;
  *host_ns = base_host_ns_;
  return status{};
}

// ---- entry points ------------------------------------------------------------------

ur_result_t UR_APICALL urDeviceWaitExp(ur_device_handle_t hDevice) {
  ORDO_UNWRAP(Device, d, hDevice);
  ORDO_DRV(d->make_current());
  ORDO_DRV(drv::synchronize_current());
  return UR_RESULT_SUCCESS;
}

namespace {

uint32_t usm_flags(bool access, bool atomic, bool concurrent, bool atomic_concurrent) {
  uint32_t f = 0;
  if (access) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS;
  if (atomic) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS;
  if (concurrent) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS;
  if (atomic_concurrent) f |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
  return f;
}

} // namespace

ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t hDevice, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Device, d, hDevice);
  // No device here is composite, so its component list is empty: a caller that sizes
  // its array by that (empty) answer asks with no buffer and no size pointer, and
  // there is nothing to write (UR's conformance suite does; docs/cuda.md).
  if (propName == UR_DEVICE_INFO_COMPONENT_DEVICES && propSize == 0 && !pPropValue && !pPropSizeRet)
    return UR_RESULT_SUCCESS;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  const device_facts &f = d->facts;
  const uint32_t fp_config = ordo::ur_common::kFullFpConfig;
  const uint32_t order_caps = ordo::ur_common::kAllMemoryOrders;
  ur_result_t shared = UR_RESULT_SUCCESS;
  if (ordo::ur_common::gpu_device_info(d, propName, out, shared)) return shared;

  switch (propName) {
  case UR_DEVICE_INFO_TYPE: return out.value(UR_DEVICE_TYPE_GPU);
  case UR_DEVICE_INFO_VENDOR_ID: return out.value(f.vendor_id);
  case UR_DEVICE_INFO_DEVICE_ID: return out.value(f.pci_device_id);
  case UR_DEVICE_INFO_MAX_COMPUTE_UNITS:
  case UR_DEVICE_INFO_NUM_COMPUTE_UNITS: return out.value(static_cast<uint32_t>(f.sm_count));
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    size_t sizes[3] = {size_t(f.block_dim[0]), size_t(f.block_dim[1]), size_t(f.block_dim[2])};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return out.value(size_t(f.max_threads_per_block));
  case UR_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    size_t sizes[3] = {size_t(f.grid_dim[0]), size_t(f.grid_dim[1]), size_t(f.grid_dim[2])};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUPS: return out.value(size_t(f.grid_dim[0]));
  case UR_DEVICE_INFO_SINGLE_FP_CONFIG:
  case UR_DEVICE_INFO_DOUBLE_FP_CONFIG: return out.value(fp_config);
  case UR_DEVICE_INFO_HALF_FP_CONFIG: return out.value(f.fp16 ? fp_config : 0u);
  case UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY: return out.value(uint32_t(f.clock_khz / 1000));
  case UR_DEVICE_INFO_MEMORY_CLOCK_RATE: return out.value(uint32_t(f.mem_clock_khz / 1000));
  case UR_DEVICE_INFO_MEMORY_BUS_WIDTH: return out.value(uint32_t(f.bus_width));
  case UR_DEVICE_INFO_MAX_MEMORY_BANDWIDTH:
    // Double data rate: two transfers per memory clock over the whole bus.
    return out.value(uint64_t(f.mem_clock_khz) * 1000 * 2 * uint64_t(f.bus_width / 8));
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case UR_DEVICE_INFO_GLOBAL_MEM_SIZE: return out.value(uint64_t(f.total_mem));
  case UR_DEVICE_INFO_GLOBAL_MEM_FREE: {
    ORDO_DRV(d->make_current());
    size_t free_bytes = 0, total = 0;
    ORDO_DRV(drv::mem_get_info(&free_bytes, &total));
    return out.value(uint64_t(free_bytes));
  }
  case UR_DEVICE_INFO_MAX_PARAMETER_SIZE:
    // Volta and newer take up to 32764 bytes of kernel parameters (CUDA 12.1+); 4 KiB elsewhere.
    return out.value(size_t(f.vendor_id == 0x10de && f.arch_major >= 7 ? 32764 : 4096));
  case UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN: return out.value(uint32_t{256 * 8}); // in bits
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value(uint32_t{128});
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE: return out.value(uint64_t(f.l2_size));
  case UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE: return out.value(uint64_t(f.const_mem));
  case UR_DEVICE_INFO_LOCAL_MEM_SIZE:
    return out.value(uint64_t(f.shared_per_block_optin ? f.shared_per_block_optin : f.shared_per_block));
  case UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT: return out.boolean(f.ecc != 0);
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY:
  case UR_DEVICE_INFO_IS_INTEGRATED_GPU: return out.boolean(f.integrated != 0);
  case UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: return out.value(size_t{500}); // event timing: ~0.5 us
  case UR_DEVICE_INFO_ATOMIC_64:
  case UR_DEVICE_INFO_DEVICE_WAIT_SUPPORT_EXP:
  case UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP: // pinned by the layer's hooks (pool_hooks.cpp)
  case UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS: return out.boolean(f.independent_forward_progress);
  case UR_DEVICE_INFO_BFLOAT16:
  case UR_DEVICE_INFO_BFLOAT16_CONVERSIONS_NATIVE: return out.boolean(f.bf16);
  case UR_DEVICE_INFO_ASYNC_BARRIER: return out.boolean(f.async_barrier);
  case UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT: return out.boolean(info().virtual_memory && f.virtual_memory);
  // Physical memory exported as file descriptors (virtual_mem.cpp).
  case UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP: return out.boolean(info().virtual_memory && f.virtual_memory);
  // Command buffers are the shared recorder's (source/command_buffer), replayed
  // through this adapter's own entry points.
  case UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP:
    return out.boolean(true);                                                // source/command_buffer/graph_capture.cpp
  case UR_DEVICE_INFO_IPC_MEMORY_SUPPORT_EXP: return out.boolean(true);      // ipc.cpp
  case UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP: return out.boolean(true); // source/command_buffer/bound_events.cpp
  case UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP: return out.boolean(ordo::command_buffer::kEventSupport);
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP: return out.boolean(true);            // peer.cpp
  case UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP: return out.boolean(true); // usm.cpp
  case UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP:
    return out.value(ordo::command_buffer::kUpdateCapabilities);
  case UR_DEVICE_INFO_IL_VERSION: return out.string(info().il_version);
  case UR_DEVICE_INFO_NAME: return out.string(f.name);
  case UR_DEVICE_INFO_VENDOR: return out.string(info().vendor_name);
  case UR_DEVICE_INFO_DRIVER_VERSION:
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION: return out.string(info().runtime_version);
  case UR_DEVICE_INFO_PROFILE: return out.string(info().profile);
  case UR_DEVICE_INFO_VERSION: return out.string(f.version);
  case UR_DEVICE_INFO_EXTENSIONS:
    return out.string(std::string("cl_khr_fp64 cl_khr_subgroups cl_khr_int64_base_atomics "
                                  "cl_khr_int64_extended_atomics") +
                      (f.fp16 ? " cl_khr_fp16" : ""));
  case UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS:
    return out.value(uint32_t(f.max_threads_per_block / (f.warp_size ? f.warp_size : 32)));
  case UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: return out.value(uint32_t(f.warp_size));
  case UR_DEVICE_INFO_USM_HOST_SUPPORT:
    return out.value(usm_flags(true, f.host_native_atomics != 0, true, f.host_native_atomics != 0));
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT: return out.value(usm_flags(true, true, true, true));
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
    return out.value(f.managed ? usm_flags(true, true, f.concurrent_managed != 0, f.concurrent_managed != 0) : 0u);
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
    return out.value(f.managed ? usm_flags(true, f.concurrent_managed != 0, f.concurrent_managed != 0, false) : 0u);
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT:
    return out.value(f.pageable_access ? usm_flags(true, f.host_native_atomics != 0, true, false) : 0u);
  case UR_DEVICE_INFO_UUID: return out.array(f.uuid, 16);
  case UR_DEVICE_INFO_PCI_ADDRESS: return out.string(f.pci_address);
  case UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return out.value(f.seq_cst_atomics ? order_caps : uint32_t(UR_MEMORY_ORDER_CAPABILITY_FLAG_RELAXED));
  case UR_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP: return out.value(uint32_t(f.regs_per_block));
  case UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES: // work-group memory: dynamic shared memory (launch.cpp)
    return out.value(uint32_t(UR_KERNEL_LAUNCH_PROPERTIES_FLAG_WORK_GROUP_MEMORY) |
                     (f.cooperative ? uint32_t(UR_KERNEL_LAUNCH_PROPERTIES_FLAG_COOPERATIVE) : 0u));
  // Intel layouts, NVML readings, Windows-only identifiers: the shared default.
  default: return ordo::device_info_default(propName, out);
  }
}

namespace {

// What ur_common's urDevice* entry points leave to the backend (ur_common/device.hpp).
// Every device is a GPU and takes the driver's one binary target.
struct device_hooks {
  using Platform = stream_backend::Platform;
  using Device = stream_backend::Device;
  static ur_device_type_t type_of(const Device *) { return UR_DEVICE_TYPE_GPU; }
  static const char *binary_target(const Device *) { return info().binary_target; }
  // A timed event recorded now, measured from the device's time base.
  static ur_result_t device_time_ns(Device *d, uint64_t &ns) {
    event_t base = nullptr, now = nullptr;
    uint64_t base_ns = 0;
    stream_t stream = nullptr;
    ORDO_DRV(d->time_base(&base, &base_ns));
    ORDO_DRV(d->internal_stream(&stream));
    ORDO_DRV(d->make_current());
    ORDO_DRV(d->events.get(true, &now));
    status r = drv::event_record(now, stream);
    if (!r) r = drv::event_synchronize(now);
    float ms = 0;
    if (!r) r = drv::event_elapsed_ms(&ms, base, now);
    d->events.put(now, true);
    ORDO_DRV(r);
    ns = base_ns + static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
    return UR_RESULT_SUCCESS;
  }
  static uint64_t host_time_ns() { return host_now_ns(); }
  static ur_native_handle_t native_handle(const Device *d) { return static_cast<ur_native_handle_t>(d->native); }
  // urDeviceCreateWithNativeHandle: the root device of that driver handle (root devices
  // are never made twice).
  using Adapter = stream_backend::Adapter;
  static const std::vector<Platform *> &platforms() { return stream_backend::platforms(); }
};

} // namespace

void install_device_entry_points(ur_dditable_t &t) {
  ordo::ur_common::device_entry_points<device_hooks>::install(t);
  t.Device.pfnGetInfo = urDeviceGetInfo;
  t.DeviceExp.pfnWaitExp = urDeviceWaitExp;
}

} // namespace ordo::stream_backend
