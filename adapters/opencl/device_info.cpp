// SPDX-License-Identifier: Apache-2.0
// urDeviceGetInfo: UR device queries answered from the matching OpenCL queries.
#include <cstdio>
#include <limits>
#include <vector>

#include "ordo/device_info.hpp"
#include "device.hpp"
#include "ordo_cb/command_buffer.hpp"
#include "platform.hpp"
#include "ur_common/device_info.hpp"

namespace ordo::opencl {
namespace {

// How a UR query whose answer is OpenCL's query converts that answer.
enum class cl_kind { u32, u64, size, flag, string, fp_config, exec_caps };
struct direct_query {
  ur_device_info_t ur;
  cl_device_info cl;
  cl_kind kind;
};

// clang-format off
// UR queries answered by the OpenCL query of the same name (CL_DEVICE_<name>).
#define ORDO_SAME_QUERY(X) \
  X(u32, VENDOR_ID) X(u32, MAX_COMPUTE_UNITS) X(u32, MAX_WORK_ITEM_DIMENSIONS) X(size, MAX_WORK_GROUP_SIZE) \
  X(u32, PREFERRED_VECTOR_WIDTH_CHAR) X(u32, PREFERRED_VECTOR_WIDTH_SHORT) X(u32, PREFERRED_VECTOR_WIDTH_INT) \
  X(u32, PREFERRED_VECTOR_WIDTH_LONG) X(u32, PREFERRED_VECTOR_WIDTH_FLOAT) X(u32, PREFERRED_VECTOR_WIDTH_DOUBLE) \
  X(u32, PREFERRED_VECTOR_WIDTH_HALF) X(u32, NATIVE_VECTOR_WIDTH_CHAR) X(u32, NATIVE_VECTOR_WIDTH_SHORT) \
  X(u32, NATIVE_VECTOR_WIDTH_INT) X(u32, NATIVE_VECTOR_WIDTH_LONG) X(u32, NATIVE_VECTOR_WIDTH_FLOAT) \
  X(u32, NATIVE_VECTOR_WIDTH_DOUBLE) X(u32, NATIVE_VECTOR_WIDTH_HALF) X(u32, MAX_CLOCK_FREQUENCY) \
  X(u32, ADDRESS_BITS) X(u32, MAX_READ_IMAGE_ARGS) X(u32, MAX_WRITE_IMAGE_ARGS) X(size, IMAGE2D_MAX_WIDTH) \
  X(size, IMAGE2D_MAX_HEIGHT) X(size, IMAGE3D_MAX_WIDTH) X(size, IMAGE3D_MAX_HEIGHT) X(size, IMAGE3D_MAX_DEPTH) \
  X(size, IMAGE_MAX_BUFFER_SIZE) X(size, IMAGE_MAX_ARRAY_SIZE) X(u32, MAX_SAMPLERS) X(size, MAX_PARAMETER_SIZE) \
  X(u32, MEM_BASE_ADDR_ALIGN) X(u32, GLOBAL_MEM_CACHELINE_SIZE) X(u64, GLOBAL_MEM_CACHE_SIZE) \
  X(u64, GLOBAL_MEM_SIZE) X(u64, MAX_CONSTANT_BUFFER_SIZE) X(u32, MAX_CONSTANT_ARGS) X(u64, LOCAL_MEM_SIZE) \
  X(flag, ERROR_CORRECTION_SUPPORT) X(size, PROFILING_TIMER_RESOLUTION) X(flag, ENDIAN_LITTLE) X(flag, AVAILABLE) \
  X(flag, COMPILER_AVAILABLE) X(flag, LINKER_AVAILABLE) X(string, BUILT_IN_KERNELS) X(string, VENDOR) \
  X(string, PROFILE) X(size, PRINTF_BUFFER_SIZE) X(flag, PREFERRED_INTEROP_USER_SYNC) X(fp_config, SINGLE_FP_CONFIG) \
  X(fp_config, DOUBLE_FP_CONFIG) X(exec_caps, EXECUTION_CAPABILITIES)
#define ORDO_DIRECT(kind, name) {UR_DEVICE_INFO_##name, CL_DEVICE_##name, cl_kind::kind},
const direct_query kDirect[] = {ORDO_SAME_QUERY(ORDO_DIRECT)
  {UR_DEVICE_INFO_NUM_COMPUTE_UNITS, CL_DEVICE_MAX_COMPUTE_UNITS, cl_kind::u32},
  {UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG, CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, cl_kind::u32},
  {UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG, CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, cl_kind::u32},
  {UR_DEVICE_INFO_DRIVER_VERSION, CL_DRIVER_VERSION, cl_kind::string}};
#undef ORDO_DIRECT
#undef ORDO_SAME_QUERY

// OpenCL bits and the UR flags they stand for.
struct bit_pair {
  uint64_t cl;
  uint32_t ur;
};
const bit_pair kFpBits[] = {
  {CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT},
  {CL_FP_ROUND_TO_NEAREST, UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST},
  {CL_FP_ROUND_TO_ZERO, UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO},
  {CL_FP_ROUND_TO_INF, UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF}, {CL_FP_INF_NAN, UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN},
  {CL_FP_DENORM, UR_DEVICE_FP_CAPABILITY_FLAG_DENORM}, {CL_FP_FMA, UR_DEVICE_FP_CAPABILITY_FLAG_FMA},
  {CL_FP_SOFT_FLOAT, UR_DEVICE_FP_CAPABILITY_FLAG_SOFT_FLOAT}};
const bit_pair kQueueBits[] = {{CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE},
                               {CL_QUEUE_PROFILING_ENABLE, UR_QUEUE_FLAG_PROFILING_ENABLE}};
const bit_pair kExecBits[] = {{CL_EXEC_KERNEL, UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL},
                              {CL_EXEC_NATIVE_KERNEL, UR_DEVICE_EXEC_CAPABILITY_FLAG_NATIVE_KERNEL}};
const bit_pair kOrderBits[] = {
  {CL_DEVICE_ATOMIC_ORDER_RELAXED, UR_MEMORY_ORDER_CAPABILITY_FLAG_RELAXED},
  {CL_DEVICE_ATOMIC_ORDER_ACQ_REL, UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQUIRE | UR_MEMORY_ORDER_CAPABILITY_FLAG_RELEASE |
                                   UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQ_REL},
  {CL_DEVICE_ATOMIC_ORDER_SEQ_CST, UR_MEMORY_ORDER_CAPABILITY_FLAG_SEQ_CST}};
const bit_pair kScopeBits[] = {
  {CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM, UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_ITEM},
  {CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP, UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_GROUP},
  {CL_DEVICE_ATOMIC_SCOPE_DEVICE, UR_MEMORY_SCOPE_CAPABILITY_FLAG_DEVICE},
  {CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES, UR_MEMORY_SCOPE_CAPABILITY_FLAG_SYSTEM}};
// clang-format on

template <size_t N> uint32_t to_ur_bits(uint64_t v, const bit_pair (&pairs)[N]) {
  uint32_t f = 0;
  for (const bit_pair &p : pairs)
    if (v & p.cl) f |= p.ur;
  return f;
}

ur_result_t answer_direct(const ur_device_handle_t_ *d, const direct_query &q, InfoWriter &w) {
  switch (q.kind) {
  case cl_kind::u32: return w.value<uint32_t>(device_query<cl_uint>(d, q.cl));
  case cl_kind::u64: return w.value<uint64_t>(device_query<cl_ulong>(d, q.cl));
  case cl_kind::size: return w.value<size_t>(device_query<size_t>(d, q.cl));
  case cl_kind::flag: return w.boolean(device_query<cl_bool>(d, q.cl) != CL_FALSE);
  case cl_kind::string: return w.string(cl_string(cl.clGetDeviceInfo, d->cl, q.cl));
  case cl_kind::fp_config: return w.value(to_ur_bits(device_query<cl_device_fp_config>(d, q.cl), kFpBits));
  default: return w.value(to_ur_bits(device_query<cl_device_exec_capabilities>(d, q.cl), kExecBits));
  }
}

// OpenCL 3.0 atomic capabilities; older devices have relaxed work-group and device atomics.
cl_device_atomic_capabilities atomic_caps(const ur_device_handle_t_ *d, cl_device_info what) {
  if (d->cl_major < 3)
    return CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP | CL_DEVICE_ATOMIC_SCOPE_DEVICE;
  return device_query<cl_device_atomic_capabilities>(d, what);
}

// The partition types the device offers that UR has (not Intel's "by names").
std::vector<ur_device_partition_t> supported_partitions(const ur_device_handle_t_ *d) {
  std::vector<ur_device_partition_t> out;
  if (!cl.clCreateSubDevices) return out;
  std::vector<cl_device_partition_property> props;
  if (cl_array(cl.clGetDeviceInfo, d->cl, CL_DEVICE_PARTITION_PROPERTIES, props) != CL_SUCCESS) return out;
  for (cl_device_partition_property p : props)
    if (p == CL_DEVICE_PARTITION_EQUALLY || p == CL_DEVICE_PARTITION_BY_COUNTS ||
        p == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)
      out.push_back(static_cast<ur_device_partition_t>(p));
  return out;
}

} // namespace

ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t d, ur_device_info_t propName, size_t propSize,
                                       void *pPropValue, size_t *pPropSizeRet) {
  ORDO_CHECK_HANDLE(d);
  InfoWriter w(propSize, pPropValue, pPropSizeRet);
  for (const direct_query &q : kDirect)
    if (q.ur == propName) return answer_direct(d, q, w);
  // OpenCL sets no limit on the number of work-groups of a launch.
  constexpr size_t kMaxGroups = static_cast<size_t>(std::numeric_limits<int32_t>::max());

  switch (propName) {
  case UR_DEVICE_INFO_TYPE:
    if (d->type & CL_DEVICE_TYPE_GPU) return w.value(UR_DEVICE_TYPE_GPU);
    if (d->type & CL_DEVICE_TYPE_CPU) return w.value(UR_DEVICE_TYPE_CPU);
    if (d->type & CL_DEVICE_TYPE_ACCELERATOR) return w.value(UR_DEVICE_TYPE_FPGA);
    if (d->type & CL_DEVICE_TYPE_CUSTOM) return w.value(UR_DEVICE_TYPE_CUSTOM);
    return w.value(UR_DEVICE_TYPE_DEFAULT);
  case UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    std::vector<size_t> sizes(device_query<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 3));
    ORDO_CL_CHECK(
        cl.clGetDeviceInfo(d->cl, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes.size() * sizeof(size_t), sizes.data(), nullptr));
    return w.array(sizes);
  }
  case UR_DEVICE_INFO_HALF_FP_CONFIG:
    return w.value(d->has_extension("cl_khr_fp16")
                       ? to_ur_bits(device_query<cl_device_fp_config>(d, CL_DEVICE_HALF_FP_CONFIG), kFpBits)
                       : ur_device_fp_capability_flags_t{0});
  case UR_DEVICE_INFO_QUEUE_PROPERTIES:
  case UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES: return w.value(to_ur_bits(d->host_queue_props, kQueueBits));
  case UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES:
    return w.value(
        d->cl_at_least(2, 0)
            ? to_ur_bits(device_query<cl_command_queue_properties>(d, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES), kQueueBits)
            : ur_queue_flags_t{0});
  case UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE: return w.value<uint64_t>(d->max_alloc);
  // IMAGE_SUPPORT is false (device_info_default): this adapter has no urMemImage*,
  // whatever OpenCL says.
  case UR_DEVICE_INFO_MAX_READ_WRITE_IMAGE_ARGS:
    if (!d->cl_at_least(2, 0)) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    return w.value<uint32_t>(device_query<cl_uint>(d, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS));
  case UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE:
    switch (device_query<cl_device_mem_cache_type>(d, CL_DEVICE_GLOBAL_MEM_CACHE_TYPE)) {
    case CL_READ_ONLY_CACHE: return w.value(UR_DEVICE_MEM_CACHE_TYPE_READ_ONLY_CACHE);
    case CL_READ_WRITE_CACHE: return w.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
    default: return w.value(UR_DEVICE_MEM_CACHE_TYPE_NONE);
    }
  case UR_DEVICE_INFO_LOCAL_MEM_TYPE:
    switch (device_query<cl_device_local_mem_type>(d, CL_DEVICE_LOCAL_MEM_TYPE)) {
    case CL_LOCAL: return w.value(UR_DEVICE_LOCAL_MEM_TYPE_LOCAL);
    case CL_GLOBAL: return w.value(UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL);
    default: return w.value(UR_DEVICE_LOCAL_MEM_TYPE_NONE);
    }
  case UR_DEVICE_INFO_HOST_UNIFIED_MEMORY:
    // Deprecated in OpenCL 2.0; a CPU device shares the host's memory in any case.
    return w.boolean(device_query<cl_bool>(d, CL_DEVICE_HOST_UNIFIED_MEMORY, (d->type & CL_DEVICE_TYPE_CPU) != 0) !=
                     CL_FALSE);
  case UR_DEVICE_INFO_PLATFORM: return w.value(d->platform);
  case UR_DEVICE_INFO_REFERENCE_COUNT: return w.value<uint32_t>(d->count());
  case UR_DEVICE_INFO_IL_VERSION: return w.string(d->il_version); // empty: the device takes no IL
  case UR_DEVICE_INFO_NAME: return w.string(d->name);
  case UR_DEVICE_INFO_VERSION:
  case UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION: {
    char v[32];
    std::snprintf(v, sizeof v, "%u.%u", d->cl_major, d->cl_minor);
    return w.string(v);
  }
  case UR_DEVICE_INFO_EXTENSIONS: return w.string(d->extensions);
  case UR_DEVICE_INFO_PARENT_DEVICE: return w.value<ur_device_handle_t>(d->parent);
  case UR_DEVICE_INFO_SUPPORTED_PARTITIONS: return w.array(supported_partitions(d));
  case UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES:
    return w.value<uint32_t>(
        supported_partitions(d).empty() ? 0 : device_query<cl_uint>(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES));
  case UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN:
    // UR's affinity-domain bits are OpenCL's.
    return w.value<ur_device_affinity_domain_flags_t>(
        static_cast<ur_device_affinity_domain_flags_t>(
            device_query<cl_device_affinity_domain>(d, CL_DEVICE_PARTITION_AFFINITY_DOMAIN)) &
        ~UR_DEVICE_AFFINITY_DOMAIN_FLAGS_MASK);
  // Empty on a root device; on a sub-device, the properties urDevicePartition was given.
  case UR_DEVICE_INFO_PARTITION_TYPE: return w.array(d->partition_type);
  // A device without sub-groups runs every work-item as a sub-group of its own: one
  // sub-group of size 1 (what SYCL requires at least).
  case UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS: {
    cl_uint n = d->cl_at_least(2, 1) ? device_query<cl_uint>(d, CL_DEVICE_MAX_NUM_SUB_GROUPS) : 0;
    return w.value<uint32_t>(n ? n : 1);
  }
  case UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    return w.boolean(d->cl_at_least(2, 1) &&
                     device_query<cl_bool>(d, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS));
  case UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: {
    std::vector<uint32_t> sizes;
    if (d->has_extension("cl_intel_required_subgroup_size")) {
      std::vector<size_t> raw;
      cl_array(cl.clGetDeviceInfo, d->cl, CL_DEVICE_SUB_GROUP_SIZES_INTEL, raw);
      for (size_t s : raw) sizes.push_back(static_cast<uint32_t>(s));
    }
    if (sizes.empty()) sizes.push_back(1); // no sub-groups: each work-item is one of size 1
    return w.array(sizes);
  }
  case UR_DEVICE_INFO_USM_HOST_SUPPORT: return w.value(d->usm_caps(usm_host));
  case UR_DEVICE_INFO_USM_DEVICE_SUPPORT: return w.value(d->usm_caps(usm_device));
  case UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT: return w.value(d->usm_caps(usm_shared));
  case UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT: return w.value(d->usm_caps(usm_cross_shared));
  case UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: return w.value(d->usm_caps(usm_system));
  case UR_DEVICE_INFO_UUID: {
    if (!d->has_extension("cl_khr_device_uuid")) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    uint8_t uuid[CL_UUID_SIZE_KHR];
    ORDO_CL_CHECK(cl.clGetDeviceInfo(d->cl, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr));
    return w.array(uuid, CL_UUID_SIZE_KHR);
  }
  case UR_DEVICE_INFO_PCI_ADDRESS: {
    if (!d->has_extension("cl_khr_pci_bus_info")) return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    cl_device_pci_bus_info_khr pci{};
    ORDO_CL_CHECK(cl.clGetDeviceInfo(d->cl, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr));
    char s[32];
    std::snprintf(s, sizeof s, "%04x:%02x:%02x.%01x", pci.pci_domain, pci.pci_bus, pci.pci_device, pci.pci_function);
    return w.string(s);
  }
  case UR_DEVICE_INFO_ATOMIC_64:
    return w.boolean(d->has_extension("cl_khr_int64_base_atomics") &&
                     d->has_extension("cl_khr_int64_extended_atomics"));
  case UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
    return w.value(to_ur_bits(atomic_caps(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES), kOrderBits));
  case UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
    return w.value(to_ur_bits(atomic_caps(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES), kScopeBits));
  case UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return w.value(to_ur_bits(atomic_caps(d, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES), kOrderBits));
  case UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return w.value(to_ur_bits(atomic_caps(d, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES), kScopeBits));
  case UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: return w.value<uint32_t>(1);
  case UR_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    size_t groups[3] = {kMaxGroups, kMaxGroups, kMaxGroups};
    return w.array(groups, 3);
  }
  case UR_DEVICE_INFO_MAX_WORK_GROUPS: return w.value<size_t>(kMaxGroups);
  case UR_DEVICE_INFO_USM_POOL_SUPPORT:
  case UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP: return w.boolean(d->async_alloc_supported());
  case UR_DEVICE_INFO_IS_INTEGRATED_GPU:
    return w.boolean((d->type & CL_DEVICE_TYPE_GPU) && device_query<cl_bool>(d, CL_DEVICE_HOST_UNIFIED_MEMORY));
  case UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES: return w.value<ur_kernel_launch_properties_flags_t>(0);
  // Command buffers and graph capture are source/command_buffer's (installed in ddi.cpp),
  // host tasks host_task.cpp's, timestamps and peer access source/derived's.
  case UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP:
  case UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP:
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP:
  case UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP:
  case UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP:
  case UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP: return w.boolean(true);
  case UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP: return w.boolean(ordo::command_buffer::kEventSupport);
  case UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP: return w.value(ordo::command_buffer::kUpdateCapabilities);
  case UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP: return w.boolean(ordo::command_buffer::kSubgraphSupport);
  // OpenCL has no query for these.
  default: return ordo::device_info_default(propName, w);
  }
}

} // namespace ordo::opencl
