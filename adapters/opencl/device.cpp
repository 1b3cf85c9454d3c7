// SPDX-License-Identifier: Apache-2.0
// urDevice* (all but GetInfo, in device_info.cpp): every OpenCL device is a UR device,
// and every OpenCL sub-device one made by urDevicePartition.
#include "device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "platform.hpp"
#include "tables.hpp"
#include "ur_common/device.hpp"

ur_device_handle_t_::~ur_device_handle_t_() {
  // Sub-devices first: each holds an OpenCL reference of its own.
  partitions.clear();
  if (parent && ordo::opencl::cl.clReleaseDevice) ordo::opencl::cl.clReleaseDevice(cl);
}

bool ur_device_handle_t_::has_extension(const char *ext) const {
  size_t n = std::strlen(ext);
  for (size_t pos = extensions.find(ext); pos != std::string::npos; pos = extensions.find(ext, pos + 1)) {
    bool starts = pos == 0 || extensions[pos - 1] == ' ';
    bool ends = pos + n == extensions.size() || extensions[pos + n] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

namespace {

using Caps = ur_device_usm_access_capability_flags_t;

// What fine-grain SVM of kind `bit` gives, where the device has it: host and device may
// touch it at once; atomics across both when the device has SVM atomics.
Caps fine_grain_caps(cl_device_svm_capabilities svm, cl_device_svm_capabilities bit) {
  if (!(svm & bit)) return 0;
  Caps c = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS;
  if (svm & CL_DEVICE_SVM_ATOMICS)
    c |= UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS |
         UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS;
  return c;
}

} // namespace

Caps ur_device_handle_t_::usm_caps(ordo::opencl::usm_kind k) const {
  if (intel_usm) return static_cast<Caps>(intel_caps[k] & 0xF); // Intel's bits are UR's, in the same places
  switch (k) {
  case ordo::opencl::usm_device: // coarse-grain buffer SVM: the device reads, writes and does atomics on it
    return (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)
               ? Caps(UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS)
               : 0;
  case ordo::opencl::usm_system: return fine_grain_caps(svm, CL_DEVICE_SVM_FINE_GRAIN_SYSTEM);
  default: return fine_grain_caps(svm, CL_DEVICE_SVM_FINE_GRAIN_BUFFER); // alike for every device of the context
  }
}

namespace ordo::opencl {

bool probe_device(ur_device_handle_t_ &d) {
  if (cl.clGetDeviceInfo(d.cl, CL_DEVICE_TYPE, sizeof(d.type), &d.type, nullptr) != CL_SUCCESS) return false;
  d.name = cl_string(cl.clGetDeviceInfo, d.cl, CL_DEVICE_NAME);
  d.extensions = cl_string(cl.clGetDeviceInfo, d.cl, CL_DEVICE_EXTENSIONS);
  unsigned major = 1, minor = 0; // from "OpenCL <major>.<minor> <vendor text>"
  if (std::sscanf(cl_string(cl.clGetDeviceInfo, d.cl, CL_DEVICE_VERSION).c_str(), "OpenCL %u.%u", &major, &minor) ==
      2) {
    d.cl_major = major;
    d.cl_minor = minor;
  }
  d.max_alloc = device_query<cl_ulong>(&d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  d.local_mem = device_query<cl_ulong>(&d, CL_DEVICE_LOCAL_MEM_SIZE);
  if (cl_uint align = device_query<cl_uint>(&d, CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE)) d.largest_type_align = align;
  if (d.cl_major >= 2) {
    d.svm = device_query<cl_device_svm_capabilities>(&d, CL_DEVICE_SVM_CAPABILITIES);
    d.host_queue_props = device_query<cl_command_queue_properties>(&d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
  } else {
    d.host_queue_props = device_query<cl_command_queue_properties>(&d, CL_DEVICE_QUEUE_PROPERTIES);
  }
  // SVM needs its entry points too, whatever the device says.
  if (!cl.clSVMAlloc || !cl.clSVMFree || !cl.clEnqueueSVMMemcpy || !cl.clEnqueueSVMMemFill ||
      !cl.clSetKernelArgSVMPointer)
    d.svm = 0;
  if (d.cl_at_least(2, 1) || d.has_extension("cl_khr_il_program"))
    d.il_version = cl_string(cl.clGetDeviceInfo, d.cl, CL_DEVICE_IL_VERSION);
  if (!cl.clCreateProgramWithIL) d.il_version.clear();

  d.intel_usm = d.platform->intel_usm.complete() && d.has_extension("cl_intel_unified_shared_memory");
  const cl_device_info usm_queries[5] = {CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL, CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL,
                                         CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
                                         CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
                                         CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL};
  for (int i = 0; d.intel_usm && i < 5; ++i)
    d.intel_caps[i] = device_query<cl_device_unified_shared_memory_capabilities_intel>(&d, usm_queries[i]);
  return true;
}

namespace {

bool same_properties(const std::vector<ur_device_partition_property_t> &a, const ur_device_partition_property_t *b,
                     size_t n) {
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (a[i].type != b[i].type || a[i].value.count != b[i].value.count) return false;
  return true;
}

// The OpenCL property list for a UR one: the type once, then each value, then 0.
// OpenCL has no list of mixed types, and EQUALLY and BY_AFFINITY_DOMAIN take one value.
ur_result_t to_cl_partition(const ur_device_partition_property_t *props, size_t n,
                            std::vector<cl_device_partition_property> &out) {
  if (n == 0) return UR_RESULT_ERROR_INVALID_VALUE;
  const ur_device_partition_t type = props[0].type;
  switch (type) {
  case UR_DEVICE_PARTITION_EQUALLY:
  case UR_DEVICE_PARTITION_BY_COUNTS:
  case UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN: break;
  case UR_DEVICE_PARTITION_BY_CSLICE: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // no OpenCL equivalent
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (type != UR_DEVICE_PARTITION_BY_COUNTS && n != 1) return UR_RESULT_ERROR_INVALID_VALUE;
  out.assign(1, static_cast<cl_device_partition_property>(type));
  for (size_t i = 0; i < n; ++i) {
    if (props[i].type != type) return UR_RESULT_ERROR_INVALID_VALUE;
    if (type == UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN) {
      if (props[i].value.affinity_domain & UR_DEVICE_AFFINITY_DOMAIN_FLAGS_MASK)
        return UR_RESULT_ERROR_INVALID_ENUMERATION;
    } else if (props[i].value.count == 0) {
      return UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT;
    }
    // The UR affinity-domain bits and partition types are OpenCL's own values.
    out.push_back(static_cast<cl_device_partition_property>(props[i].value.count));
  }
  if (type == UR_DEVICE_PARTITION_BY_COUNTS) out.push_back(CL_DEVICE_PARTITION_BY_COUNTS_LIST_END);
  out.push_back(0);
  return UR_RESULT_SUCCESS;
}

// The sub-devices of `d` for one partitioning, made on first request (under the
// device's partitions lock). Null with *result set when OpenCL refuses.
ur_device_handle_t_::Partition *find_or_make_partition(ur_device_handle_t d,
                                                       const ur_device_partition_property_t *props, size_t n,
                                                       ur_result_t *result) {
  for (auto &p : d->partitions)
    if (same_properties(p.properties, props, n)) return &p;
  std::vector<cl_device_partition_property> list;
  if ((*result = to_cl_partition(props, n, list))) return nullptr;
  if (!cl.clCreateSubDevices) {
    *result = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return nullptr;
  }
  cl_uint count = 0;
  cl_int err = cl.clCreateSubDevices(d->cl, list.data(), 0, nullptr, &count);
  std::vector<cl_device_id> ids(count);
  if (err == CL_SUCCESS) err = cl.clCreateSubDevices(d->cl, list.data(), count, ids.data(), nullptr);
  if (err != CL_SUCCESS) {
    *result = to_ur(err); // a type the device does not offer: CL_INVALID_VALUE
    return nullptr;
  }
  ur_device_handle_t_::Partition part;
  part.properties.assign(props, props + n);
  for (cl_device_id id : ids) {
    auto sub = std::make_unique<ur_device_handle_t_>(id, d->platform);
    sub->parent = d;
    sub->partition_type = part.properties;
    sub->ref_count.store(0); // counted as handed out
    const bool usable = probe_device(*sub);
    part.devices.push_back(std::move(sub)); // owns the OpenCL reference either way
    if (!usable) {
      *result = UR_RESULT_ERROR_DEVICE_PARTITION_FAILED;
      return nullptr;
    }
  }
  d->partitions.push_back(std::move(part));
  return &d->partitions.back();
}

// Repeated requests answer the same sub-devices in the same order (UR); each one
// handed out is one more reference of it.
ur_result_t UR_APICALL urDevicePartition(ur_device_handle_t hDevice,
                                         const ur_device_partition_properties_t *pProperties, uint32_t NumDevices,
                                         ur_device_handle_t *phSubDevices, uint32_t *pNumDevicesRet) {
  ORDO_CHECK_HANDLE(hDevice);
  if (NumDevices > 0 && !phSubDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  // bad_alloc: OUT_OF_HOST_MEMORY at the exception boundary, with nothing changed.
  std::lock_guard<std::mutex> lock(hDevice->partitions_mutex);
  ur_result_t r = UR_RESULT_SUCCESS;
  ur_device_handle_t_::Partition *p =
      find_or_make_partition(hDevice, pProperties->pProperties, pProperties->PropCount, &r);
  if (!p) return r;
  const size_t n = std::min<size_t>(NumDevices, p->devices.size());
  for (size_t i = 0; phSubDevices && i < n; ++i) {
    p->devices[i]->retain();
    phSubDevices[i] = p->devices[i].get();
  }
  if (pNumDevicesRet) *pNumDevicesRet = static_cast<uint32_t>(p->devices.size());
  return UR_RESULT_SUCCESS;
}

// The sub-device made from `d` (at any depth) whose OpenCL device is `id`, or null.
// Each partitions lock is held only while its own list is searched.
ur_device_handle_t find_sub_device(ur_device_handle_t d, cl_device_id id) {
  std::lock_guard<std::mutex> lock(d->partitions_mutex);
  for (auto &p : d->partitions)
    for (auto &sub : p.devices) {
      if (sub->cl == id) return sub.get();
      if (ur_device_handle_t deeper = find_sub_device(sub.get(), id)) return deeper;
    }
  return nullptr;
}

// The host's CLOCK_MONOTONIC_RAW in nanoseconds: the clock PoCL stamps profiling
// events with (measured: within tens of microseconds), and a steady clock anyway.
uint64_t host_raw_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// A device without clGetDeviceAndHostTimer (PoCL: CL_INVALID_OPERATION) still gets
// timestamps, both from host_raw_ns(), so that profiling queues and runtimes that
// correlate clocks work (docs/opencl.md, "Timestamps").
ur_result_t UR_APICALL urDeviceGetGlobalTimestamps(ur_device_handle_t hDevice, uint64_t *pDeviceTimestamp,
                                                   uint64_t *pHostTimestamp) {
  ORDO_CHECK_HANDLE(hDevice);
  cl_ulong dev = 0, host = 0;
  cl_int err = CL_INVALID_OPERATION;
  if (pDeviceTimestamp && cl.clGetDeviceAndHostTimer)
    err = cl.clGetDeviceAndHostTimer(hDevice->cl, &dev, &host);
  else if (!pDeviceTimestamp && pHostTimestamp && cl.clGetHostTimer)
    err = cl.clGetHostTimer(hDevice->cl, &host);
  if (err == CL_INVALID_OPERATION) {
    dev = host = host_raw_ns();
    err = CL_SUCCESS;
  }
  ORDO_CL_CHECK(err);
  if (pDeviceTimestamp) *pDeviceTimestamp = dev;
  if (pHostTimestamp) *pHostTimestamp = host;
  return UR_RESULT_SUCCESS;
}

// What ur_common's urDevice* entry points leave to the adapter (ur_common/device.hpp).
struct device_hooks {
  using Platform = ur_platform_handle_t_;
  using Device = ur_device_handle_t_;
  static bool has_type(const Device *d, ur_device_type_t want) {
    switch (want) {
    case UR_DEVICE_TYPE_GPU: return d->type & CL_DEVICE_TYPE_GPU;
    case UR_DEVICE_TYPE_CPU: return d->type & CL_DEVICE_TYPE_CPU;
    case UR_DEVICE_TYPE_FPGA: return d->type & CL_DEVICE_TYPE_ACCELERATOR;
    case UR_DEVICE_TYPE_CUSTOM: return d->type & CL_DEVICE_TYPE_CUSTOM;
    default: return false; // MCA, VPU: OpenCL has no such devices
    }
  }
  static constexpr bool default_is_first = true;
  // An ahead-of-time image for this kind of device first, then SPIR-V if the device takes IL.
  static void binary_targets(const Device *d, const char *(&targets)[2]) {
    targets[0] = (d->type & CL_DEVICE_TYPE_CPU)           ? UR_DEVICE_BINARY_TARGET_SPIRV64_X86_64
                 : (d->type & CL_DEVICE_TYPE_GPU)         ? UR_DEVICE_BINARY_TARGET_SPIRV64_GEN
                 : (d->type & CL_DEVICE_TYPE_ACCELERATOR) ? UR_DEVICE_BINARY_TARGET_SPIRV64_FPGA
                                                          : nullptr;
    targets[1] = d->accepts_il() ? UR_DEVICE_BINARY_TARGET_SPIRV64 : nullptr;
  }
  static bool is_root(const Device *d) { return d->is_root(); }
  static ur_native_handle_t native_handle(const Device *d) { return reinterpret_cast<ur_native_handle_t>(d->cl); }
  // A sub-device's native handle answers that same sub-device (UR's suite:
  // urDeviceCreateWithNativeHandleTest.SubDeviceHandleEquality).
  using Adapter = ur_adapter_handle_t_;
  static const std::vector<Platform *> &platforms() { return opencl::platforms(); }
  static Device *sub_device(Device *root, ur_native_handle_t n) {
    return find_sub_device(root, reinterpret_cast<cl_device_id>(n));
  }
};

} // namespace

ur_result_t urDeviceGetInfo(ur_device_handle_t, ur_device_info_t, size_t, void *, size_t *);

void install_device_entry_points(ur_dditable_t &t) {
  ordo::ur_common::device_entry_points<device_hooks>::install(t);
  t.Device.pfnGetInfo = urDeviceGetInfo;
  t.Device.pfnPartition = urDevicePartition;
  t.Device.pfnGetGlobalTimestamps = urDeviceGetGlobalTimestamps;
}

} // namespace ordo::opencl
