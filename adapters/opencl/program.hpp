// SPDX-License-Identifier: Apache-2.0
// A UR program: one cl_program (from IL, from binaries or SPIR bitcode, or linked).
#pragma once
#include <vector>

#include "common.hpp"

struct ur_program_handle_t_ : ordo::opencl::handle_object<ordo::handle_kind::program, UR_RESULT_ERROR_INVALID_PROGRAM> {
  cl_program cl = nullptr;
  ur_context_handle_t ctx = nullptr;       // held (the name ur_common/kernel.hpp reads)
  std::vector<ur_device_handle_t> devices; // the devices it is (to be) built for
  ~ur_program_handle_t_();
};
ORDO_HANDLE_CHECK(ur_program_handle_t_);

namespace ordo::opencl {
// Wraps `native` (taking over its reference) for the devices it was made for.
ur_result_t wrap_program(ur_context_handle_t c, cl_program native, ur_program_handle_t *out);
} // namespace ordo::opencl
