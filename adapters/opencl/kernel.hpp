// SPDX-License-Identifier: Apache-2.0
// A UR kernel: one cl_kernel. Setting arguments and enqueuing are one step under the
// kernel's lock, because a cl_kernel's arguments are shared state.
#pragma once
#include <mutex>
#include <string>

#include "common.hpp"

struct ur_kernel_handle_t_ : ordo::opencl::handle_object<ordo::handle_kind::kernel, UR_RESULT_ERROR_INVALID_KERNEL> {
  cl_kernel cl = nullptr;
  ur_program_handle_t program = nullptr; // held; its context is the kernel's
  std::string name;
  cl_uint num_args = 0;
  std::mutex launch_mutex;
  ~ur_kernel_handle_t_();
};
ORDO_HANDLE_CHECK(ur_kernel_handle_t_);

namespace ordo::opencl {
// Sets one argument of a launch (the caller holds the kernel's launch_mutex).
ur_result_t set_kernel_arg(ur_kernel_handle_t k, const ur_exp_kernel_arg_properties_t &arg);
} // namespace ordo::opencl
