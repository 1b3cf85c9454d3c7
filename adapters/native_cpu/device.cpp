// SPDX-License-Identifier: Apache-2.0
// urDevice*: the host CPU as one root device, its answers read once from /proc/cpuinfo,
// sysfs and sysconf.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "entry_points.hpp"
#include "memory.hpp"
#include "ordo/device_info.hpp"
#include "ordo/info.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "platform.hpp"
#include "ur_common/device.hpp"
#include "ur_common/device_info.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

struct CpuInfo {
  std::string model_name, vendor_name; // "model name"; a readable vendor, e.g. "Intel(R) Corporation"
  uint32_t pci_vendor_id = 0;
  uint32_t device_id = 0;     // family << 16 | model << 8 | stepping
  uint32_t max_clock_mhz = 0; // cpufreq maximum, else "cpu MHz"
  uint32_t hardware_threads = 1;
  uint32_t cacheline = 64;
  uint64_t l1d_size = 0, l2_size = 0, l3_size = 0;
  uint64_t memory_size = 0;   // physical memory, bytes
  uint32_t vector_bits = 128; // widest SIMD register the kernels may use: 128, 256 or 512
  bool has_fma = false;
};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

uint64_t sysconf_or(int name, uint64_t fallback) {
  long v = sysconf(name);
  return v > 0 ? static_cast<uint64_t>(v) : fallback;
}

CpuInfo read_cpu_info() {
  std::map<std::string, std::string> field; // of the first processor block, which describes them all
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line) && !line.empty();) {
    auto colon = line.find(':');
    if (colon != std::string::npos) field[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }
  auto number = [&](const char *key) { return static_cast<uint32_t>(std::strtoul(field[key].c_str(), nullptr, 10)); };
  CpuInfo info;
  info.model_name = field["model name"].empty() ? "Host CPU" : field["model name"];
  const std::string vendor = field["vendor_id"];
  if (vendor == "GenuineIntel") {
    info.vendor_name = "Intel(R) Corporation";
    info.pci_vendor_id = 0x8086;
  } else if (vendor == "AuthenticAMD") {
    info.vendor_name = "Advanced Micro Devices, Inc.";
    info.pci_vendor_id = 0x1022;
  } else {
    info.vendor_name = vendor.empty() ? "Unknown" : vendor;
  }
  info.device_id =
      (number("cpu family") & 0xffffu) << 16 | (number("model") & 0xffu) << 8 | (number("stepping") & 0xffu);

  std::ifstream fmax("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  uint64_t khz = 0;
  if (fmax >> khz && khz > 0)
    info.max_clock_mhz = static_cast<uint32_t>(khz / 1000);
  else
    info.max_clock_mhz = static_cast<uint32_t>(std::strtod(field["cpu MHz"].c_str(), nullptr) + 0.5);

  std::istringstream flag_words(field["flags"]);
  const std::set<std::string> flags{std::istream_iterator<std::string>(flag_words), {}};
  info.vector_bits = flags.count("avx512f") ? 512 : flags.count("avx2") ? 256 : 128;
  info.has_fma = flags.count("fma") != 0;

  info.hardware_threads = hardware_threads();
  info.cacheline = static_cast<uint32_t>(sysconf_or(_SC_LEVEL1_DCACHE_LINESIZE, 64));
  info.l1d_size = sysconf_or(_SC_LEVEL1_DCACHE_SIZE, 0);
  info.l2_size = sysconf_or(_SC_LEVEL2_CACHE_SIZE, 0);
  info.l3_size = sysconf_or(_SC_LEVEL3_CACHE_SIZE, 0);
  info.memory_size = sysconf_or(_SC_PHYS_PAGES, 0) * sysconf_or(_SC_PAGESIZE, 4096);
  return info;
}

const CpuInfo &cpu_info() {
  static const CpuInfo *info = new CpuInfo(read_cpu_info());
  return *info;
}

uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kb;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return sysconf_or(_SC_AVPHYS_PAGES, 0) * sysconf_or(_SC_PAGESIZE, 4096);
}

constexpr ur_device_usm_access_capability_flags_t kUsmAccess =
    UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS |
    UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS |
    UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;

ur_device_fp_capability_flags_t fp_config() {
  constexpr ur_device_fp_capability_flags_t kFma = UR_DEVICE_FP_CAPABILITY_FLAG_FMA;
  return cpu_info().has_fma ? ordo::ur_common::kFullFpConfig : ordo::ur_common::kFullFpConfig & ~kFma;
}

uint32_t vector_width(uint32_t bytes) { return cpu_info().vector_bits / 8 / bytes; }

size_t timer_resolution_ns() {
  timespec ts{};
  if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 1;
  size_t ns = static_cast<size_t>(ts.tv_sec) * 1000000000u + static_cast<size_t>(ts.tv_nsec);
  return ns ? ns : 1;
}

ur_result_t device_info(Device *, ur_device_info_t propName, ordo::InfoWriter &out) {
  const CpuInfo &cpu = cpu_info();
  switch (propName) {
  // ---- identity ----
  case UR_DEVICE_INFO_TYPE: return out.value(UR_DEVICE_TYPE_CPU);
  case UR_DEVICE_INFO_VENDOR_ID: return out.value(cpu.pci_vendor_id);
  case UR_DEVICE_INFO_DEVICE_ID: return out.value(cpu.device_id);
  case UR_DEVICE_INFO_NAME: return out.string(cpu.model_name);
  case UR_DEVICE_INFO_VENDOR: return out.string(cpu.vendor_name);
  case UR_DEVICE_INFO_DRIVER_VERSION:
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION: return out.string("0.12.0");
  case UR_DEVICE_INFO_PROFILE: return out.string("FULL_PROFILE");
  case UR_DEVICE_INFO_VERSION: return out.string("0.12");
  case UR_DEVICE_INFO_EXTENSIONS:
    return out.string("cl_khr_fp64 cl_khr_int64_base_atomics cl_khr_int64_extended_atomics");
  case UR_DEVICE_INFO_BUILT_IN_KERNELS:
  case UR_DEVICE_INFO_IL_VERSION: return out.string(""); // programs are machine code, no IL
  case UR_DEVICE_INFO_PLATFORM: return out.value(platform_handle());
  case UR_DEVICE_INFO_REFERENCE_COUNT: return out.value(uint32_t{1});
  case UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY: return out.value(cpu.max_clock_mhz);

  // ---- compute ----
  case UR_DEVICE_INFO_MAX_COMPUTE_UNITS:
  case UR_DEVICE_INFO_NUM_COMPUTE_UNITS: return out.value(cpu.hardware_threads);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    const size_t sizes[3] = {kMaxWorkGroupSize, kMaxWorkGroupSize, kMaxWorkGroupSize};
    return out.array(sizes, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return out.value(kMaxWorkGroupSize);
  case UR_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    const size_t groups[3] = {kMaxGroupsPerDimension, kMaxGroupsPerDimension, kMaxGroupsPerDimension};
    return out.array(groups, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUPS: return out.value(SIZE_MAX);
  case UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS: return out.value(static_cast<uint32_t>(kMaxWorkGroupSize));
  case UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: return out.value(uint32_t{1}); // one item per sub-group
  case UR_DEVICE_INFO_MAX_PARAMETER_SIZE: return out.value(kMaxParameterSize);
  case UR_DEVICE_INFO_MAX_CONSTANT_ARGS: return out.value(static_cast<uint32_t>(kMaxParameterSize / sizeof(void *)));
  case UR_DEVICE_INFO_EXECUTION_CAPABILITIES:
    return out.value(ur_device_exec_capability_flags_t{UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL});
  case UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES:
    return out.value(
        ur_kernel_launch_properties_flags_t{UR_KERNEL_LAUNCH_PROPERTIES_FLAG_WORK_GROUP_MEMORY |
                                            UR_KERNEL_LAUNCH_PROPERTIES_FLAG_OPPORTUNISTIC_QUEUE_SERIALIZE});
  case UR_DEVICE_INFO_PRINTF_BUFFER_SIZE:
    return out.value(SIZE_MAX); // kernels call the C library's printf

  // ---- floating point and vectors ----
  case UR_DEVICE_INFO_SINGLE_FP_CONFIG:
  case UR_DEVICE_INFO_DOUBLE_FP_CONFIG: return out.value(fp_config());
  case UR_DEVICE_INFO_HALF_FP_CONFIG: return out.value(ur_device_fp_capability_flags_t{0});
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR: return out.value(vector_width(1));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT: return out.value(vector_width(2));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT: return out.value(vector_width(4));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG:
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE: return out.value(vector_width(8));
  case UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF:
    return out.value(uint32_t{0}); // no half type

  // ---- memory ----
  case UR_DEVICE_INFO_GLOBAL_MEM_SIZE: return out.value(cpu.memory_size);
  case UR_DEVICE_INFO_GLOBAL_MEM_FREE: return out.value(available_memory());
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE: return out.value(max_alloc_size());
  case UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN: return out.value(static_cast<uint32_t>(mem_base_align_bytes() * 8)); // bits
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE: return out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE: return out.value(cpu.cacheline);
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE:
    return out.value(cpu.l3_size ? cpu.l3_size : cpu.l2_size ? cpu.l2_size : cpu.l1d_size);
  case UR_DEVICE_INFO_LOCAL_MEM_TYPE: return out.value(UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL);
  case UR_DEVICE_INFO_LOCAL_MEM_SIZE: return out.value(local_memory_size());
  case UR_DEVICE_INFO_USM_HOST_SUPPORT:
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: return out.value(kUsmAccess);
  case UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return out.value(ur_memory_order_capability_flags_t{ordo::ur_common::kAllMemoryOrders});
  case UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return out.value(ur_memory_scope_capability_flags_t{ordo::ur_common::kAllMemoryScopes});

  // ---- queues and timers (queue flags: the shared answer below) ----
  case UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: return out.value(uint32_t{1});
  case UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: return out.value(timer_resolution_ns());

  // ---- partitioning: a root device that cannot be split ----
  case UR_DEVICE_INFO_PARENT_DEVICE:
  case UR_DEVICE_INFO_COMPOSITE_DEVICE: return out.value(ur_device_handle_t{nullptr});
  case UR_DEVICE_INFO_SUPPORTED_PARTITIONS:
  case UR_DEVICE_INFO_PARTITION_TYPE:
  case UR_DEVICE_INFO_COMPONENT_DEVICES: return out.bytes("", 0); // empty, from a non-null source
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN: return out.value(ur_device_affinity_domain_flags_t{0});

  // ---- features (command buffers and graphs: source/command_buffer; timestamps and peer
  // access: source/derived); any other feature query is false (the shared default) ----
  case UR_DEVICE_INFO_AVAILABLE:
  case UR_DEVICE_INFO_LINKER_AVAILABLE:
  case UR_DEVICE_INFO_ENDIAN_LITTLE:
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY:
  case UR_DEVICE_INFO_ATOMIC_64:
  case UR_DEVICE_INFO_USM_POOL_SUPPORT:
  case UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP:
  case UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT:
  case UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP:
  case UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP:
  case UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP:
  case UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP:
  case UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP:
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP:
  case UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP:
  case UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP:
  case UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP: return out.boolean(true);
  case UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP: return out.boolean(ordo::command_buffer::kEventSupport);
  case UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP:
    return out.value(ordo::command_buffer::kUpdateCapabilities);
  default: break;
  }
  // Work-item dimensions, address bits, queue flags, no images: ur_common/device_info.hpp.
  ur_result_t result;
  if (ordo::ur_common::fixed_device_info(propName, out, result)) return result;
  // Queries meaningless for a CPU (memory clock, UUID, PCI address, GPU topology, ...):
  // UNSUPPORTED_ENUMERATION; the bindless-image limits zero; no ur_device_info_t at all:
  // INVALID_ENUMERATION (ordo/device_info.hpp).
  return ordo::device_info_default(propName, out);
}

// The component-device list is empty: a caller that sizes its array by it passes no
// buffer and no size pointer, and gets SUCCESS (docs/native-cpu.md).
ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t hDevice, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  if (propName == UR_DEVICE_INFO_COMPONENT_DEVICES && propSize == 0 && !pPropValue && !pPropSizeRet &&
      is_device(hDevice))
    return UR_RESULT_SUCCESS;
  return ordo::ur_common::device_get_info<Device, device_info>(hDevice, propName, propSize, pPropValue, pPropSizeRet);
}

// The shared bookkeeping (ur_common/device.hpp); both timestamps are the host's clock.
struct DeviceHooks {
  using Platform = native_cpu::Platform;
  using Device = native_cpu::Device;
  static ur_device_type_t type_of(const Device *) { return UR_DEVICE_TYPE_CPU; }
  static ur_native_handle_t native_handle(const Device *) {
    return reinterpret_cast<ur_native_handle_t>(device_handle());
  }
  static const char *binary_target(const Device *) { return UR_DEVICE_BINARY_TARGET_NATIVE_CPU; }
  static ur_result_t device_time_ns(Device *, uint64_t &ns) {
    ns = now_ns();
    return UR_RESULT_SUCCESS;
  }
  static uint64_t host_time_ns() { return now_ns(); }
};

} // namespace

uint64_t local_memory_size() {
  // Bounded by the per-core L2, so that a work-group's scratch stays in cache.
  uint64_t l2 = cpu_info().l2_size;
  if (l2 == 0) l2 = 256 * 1024;
  return std::min<uint64_t>(std::max<uint64_t>(l2, 64 * 1024), 16u * 1024 * 1024);
}

uint64_t max_alloc_size() { return cpu_info().memory_size; }

// A cache line, and at least the 128 bytes of OpenCL's largest built-in type (long16),
// the minimum UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN of a full-profile device.
size_t mem_base_align_bytes() {
  size_t align = 128;
  while (align < cpu_info().cacheline) align *= 2;
  return align;
}

void install_device_entry_points(ur_dditable_t &t) {
  ordo::ur_common::device_entry_points<DeviceHooks>::install(t);
  t.Device.pfnGetInfo = urDeviceGetInfo;
}

} // namespace ordo::native_cpu
