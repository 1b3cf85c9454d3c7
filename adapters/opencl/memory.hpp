// SPDX-License-Identifier: Apache-2.0
// A UR memory object: a cl_mem buffer (images are not implemented).
#pragma once
#include <memory>
#include <vector>

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

namespace ordo::opencl {

// Fill patterns OpenCL's own fills take: 1, 2, 4, ..., 128 bytes.
constexpr size_t kClMaxFillPattern = 128;

// Host bytes that non-blocking commands read after their enqueue returned: a fill's
// pattern spelled out on the host (buffer fills above, 2-D USM fills whose rows do not
// hold whole patterns).
using HostStaging = std::vector<unsigned char>;
// Takes `staging` and deletes it once `ev` (the last command that reads it) completes
// or fails; where OpenCL refuses the callback, after waiting for `ev`. `ev` stays the
// caller's.
void free_after(cl_event ev, HostStaging *staging);
// The first `bytes` of the pattern repeated from its start; null when the host has no
// memory for them.
std::unique_ptr<HostStaging> spelled_out(const unsigned char *pattern, size_t pattern_size, size_t bytes);

// Copies the first `done` bytes onto the rest of `size` in doubling steps, each command
// after the one before: `copy(at, chunk, wait, &next)` copies [0, chunk) to at. `prev`
// (the command that wrote the first bytes) becomes the last command's event; stops at
// the first error, with `prev` the last command enqueued.
template <class Copy> cl_int copy_doubling(cl_event &prev, size_t done, size_t size, Copy copy) {
  cl_int err = CL_SUCCESS;
  while (done < size && err == CL_SUCCESS) {
    const size_t chunk = done < size - done ? done : size - done;
    cl_event next = nullptr;
    err = copy(done, chunk, prev, &next);
    if (err != CL_SUCCESS) break;
    cl.clReleaseEvent(prev);
    prev = next;
    done += chunk;
  }
  return err;
}

} // namespace ordo::opencl
