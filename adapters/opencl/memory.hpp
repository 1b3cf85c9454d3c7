// SPDX-License-Identifier: Apache-2.0
// A UR memory object: a cl_mem buffer (images are not implemented).
#pragma once
#include "common.hpp"

struct ur_mem_handle_t_ : ordo::opencl::handle_object<ordo::handle_kind::mem, UR_RESULT_ERROR_INVALID_MEM_OBJECT> {
  cl_mem cl = nullptr;
  ur_context_handle_t ctx = nullptr; // the name ur_common/memory.hpp reads
  size_t size = 0;
  ur_mem_handle_t parent = nullptr; // sub-buffers hold their parent
  size_t origin = 0;                // a sub-buffer's first byte in its parent
  ~ur_mem_handle_t_();
};
ORDO_HANDLE_CHECK(ur_mem_handle_t_);
