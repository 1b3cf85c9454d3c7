// SPDX-License-Identifier: Apache-2.0
// A kernel: one entry of a program's kernel table. Arguments are given at launch
// (urEnqueueKernelLaunchWithArgsExp), so a kernel holds no argument state.
#pragma once
#include <cstddef>

#include "common.hpp"
#include "program.hpp"

namespace ordo::native_cpu {

struct Kernel : Object<Kernel> {
  using handle_type = ur_kernel_handle_t;
  static constexpr handle_kind kKind = handle_kind::kernel;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_KERNEL;

  Kernel(Program *p, const ordo_nc_kernel_desc *d) : program(p), desc(d), name(d->name) { program->hold(); }
  ~Kernel() { program->drop_hold(); }

  bool has_required_size() const { return desc->reqd_local_size[0] != 0; }

  Program *const program; // internal reference: keeps the module loaded
  const ordo_nc_kernel_desc *const desc;
  const char *const name; // desc's
};
ORDO_HANDLE_CHECK(Kernel);
inline ur_result_t unwrap(ur_kernel_handle_t h, Kernel *&out) { return registry_unwrap(h, out); } // common.hpp

// The local size the adapter picks when the caller gives none: a divisor of the
// global size per dimension, large enough to amortise the per-group call and small
// enough to leave a few groups per worker.
void choose_local_size(const Kernel &k, uint32_t work_dim, const size_t *global, size_t *local);

} // namespace ordo::native_cpu
