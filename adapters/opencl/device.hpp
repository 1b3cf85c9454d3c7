// SPDX-License-Identifier: Apache-2.0
// A UR device: one OpenCL device, with the facts the adapter decides on read once.
// Root devices belong to their platform; sub-devices (urDevicePartition) to their parent.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.hpp"

namespace ordo::opencl {
enum usm_kind { usm_host, usm_device, usm_shared, usm_cross_shared, usm_system }; // intel_caps' order
}

struct ur_device_handle_t_ : ordo::opencl::handle_object<ordo::handle_kind::device, UR_RESULT_ERROR_INVALID_DEVICE> {
  ur_device_handle_t_(cl_device_id id, ur_platform_handle_t p) : cl(id), platform(p) {}

  cl_device_id cl;
  ur_platform_handle_t platform;

  cl_device_type type = 0;
  cl_uint cl_major = 1, cl_minor = 2; // OpenCL version of the device
  std::string name, extensions, il_version;
  cl_ulong max_alloc = 0;
  cl_ulong local_mem = 0;           // CL_DEVICE_LOCAL_MEM_SIZE
  cl_uint largest_type_align = 128; // bytes: the most alignment OpenCL allocations take
  cl_device_svm_capabilities svm = 0;
  cl_command_queue_properties host_queue_props = 0;
  bool intel_usm = false; // cl_intel_unified_shared_memory, with the platform's entry points
  cl_device_unified_shared_memory_capabilities_intel intel_caps[5] = {}; // host, device, single, cross, system

  // A sub-device: the device it was made from and the properties that made it
  // (UR_DEVICE_INFO_PARTITION_TYPE). Null and empty on a root device.
  ur_device_handle_t parent = nullptr;
  std::vector<ur_device_partition_property_t> partition_type;

  // Sub-devices made from this one, one set per distinct partitioning: the same
  // request answers the same handles in the same order. Kept for the process, as the
  // platform keeps its root devices; a sub-device's count only tracks references.
  struct Partition {
    std::vector<ur_device_partition_property_t> properties;
    std::vector<std::unique_ptr<ur_device_handle_t_>> devices;
  };
  std::mutex partitions_mutex;
  std::vector<Partition> partitions;

  bool is_root() const { return parent == nullptr; }
  bool cl_at_least(cl_uint major, cl_uint minor) const {
    return cl_major > major || (cl_major == major && cl_minor >= minor);
  }
  bool has_extension(const char *ext) const;
  bool accepts_il() const { return !il_version.empty(); }
  bool accepts_spir() const { return has_extension("cl_khr_spir"); }
  bool out_of_order() const { return host_queue_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE; }

  // USM of kind `k` through Intel USM or SVM, as UR capability flags (0: unsupported).
  ur_device_usm_access_capability_flags_t usm_caps(ordo::opencl::usm_kind k) const;
  // Stream-ordered allocation works: chunks of device USM and marker commands (OpenCL 1.2+).
  bool async_alloc_supported() const { return usm_caps(ordo::opencl::usm_device) != 0; }
  ~ur_device_handle_t_();
};
ORDO_HANDLE_CHECK(ur_device_handle_t_);

namespace ordo::opencl {
// Reads the facts above from OpenCL; false if the device cannot be used at all.
bool probe_device(ur_device_handle_t_ &d);
// One clGetDeviceInfo answer, or `fallback` where OpenCL gives none.
template <class T> T device_query(const ur_device_handle_t_ *d, cl_device_info what, T fallback = T{}) {
  T v{};
  return cl.clGetDeviceInfo(d->cl, what, sizeof(T), &v, nullptr) == CL_SUCCESS ? v : fallback;
}
} // namespace ordo::opencl
