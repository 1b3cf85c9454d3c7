// SPDX-License-Identifier: Apache-2.0
// The adapter (one per process) and its platforms: one per OpenCL platform.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "device.hpp"

// cl_intel_unified_shared_memory entry points of one platform (member, OpenCL name);
// all null when the platform does not have the extension.
// clang-format off
#define ORDO_INTEL_USM(X) \
  X(host_alloc, clHostMemAllocINTEL) X(device_alloc, clDeviceMemAllocINTEL) X(shared_alloc, clSharedMemAllocINTEL) \
  X(blocking_free, clMemBlockingFreeINTEL) X(get_alloc_info, clGetMemAllocInfoINTEL) \
  X(set_kernel_arg, clSetKernelArgMemPointerINTEL) X(memcpy, clEnqueueMemcpyINTEL) X(fill, clEnqueueMemFillINTEL)
// clang-format on
struct IntelUsmFunctions {
#define ORDO_INTEL_USM_MEMBER(member, name) name##_fn member = nullptr;
  ORDO_INTEL_USM(ORDO_INTEL_USM_MEMBER)
#undef ORDO_INTEL_USM_MEMBER
  bool complete() const {
#define ORDO_INTEL_USM_PRESENT(member, name) &&member
    return true ORDO_INTEL_USM(ORDO_INTEL_USM_PRESENT);
#undef ORDO_INTEL_USM_PRESENT
  }
};

struct ur_platform_handle_t_
    : ordo::opencl::handle_object<ordo::handle_kind::platform, UR_RESULT_ERROR_INVALID_PLATFORM> {
  explicit ur_platform_handle_t_(cl_platform_id id) : cl(id) {}

  cl_platform_id cl;
  std::string name, vendor, version, extensions, profile;
  IntelUsmFunctions intel_usm;
  // Root devices, in clGetDeviceIDs order; owned by the platform for the process.
  std::vector<std::unique_ptr<ur_device_handle_t_>> devices;
};
ORDO_HANDLE_CHECK(ur_platform_handle_t_);

struct ur_adapter_handle_t_
    : ordo::opencl::handle_object<ordo::handle_kind::adapter, UR_RESULT_ERROR_INVALID_NULL_HANDLE> {
  ur_adapter_handle_t_() { ref_count.store(0); }
};
ORDO_HANDLE_CHECK(ur_adapter_handle_t_);

namespace ordo::opencl {
ur_adapter_handle_t_ &the_adapter();
// Every OpenCL platform, found at the first call. They live for the process: every
// urPlatformGet hands out the same handles, also after the adapter was released.
const std::vector<ur_platform_handle_t_ *> &platforms();
// Puts a polled clWaitForEvents into the loaded table, and makes finish_queue poll, when
// one of the platforms is Intel's CPU runtime or ORDO_OPENCL_WAITS=poll
// (polled_waits.cpp); true when it did. Called once, by the discovery, before any
// handle exists.
bool choose_waits(const std::vector<ur_platform_handle_t_ *> &platforms);
} // namespace ordo::opencl
