// SPDX-License-Identifier: Apache-2.0
// Physical memory (urPhysicalMem*): pages of a memory file (memfd) that virtual ranges
// map (virtual_mem.cpp). The same pages can be mapped at several addresses.
#pragma once
#include "common.hpp"

namespace ordo::native_cpu {

struct Context;

struct PhysicalMem : Object<PhysicalMem> {
  using handle_type = ur_physical_mem_handle_t;
  static constexpr handle_kind kKind = handle_kind::physical_mem;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_VALUE;

  PhysicalMem(Context *ctx, int fd, size_t size, ur_physical_mem_flags_t flags);
  ~PhysicalMem();
  void on_user_released() {}

  Context *const context; // internal reference
  const int fd;           // the memory file; mappings keep the pages alive
  const size_t size;
  const ur_physical_mem_flags_t flags;
};
ORDO_HANDLE_CHECK(PhysicalMem);

// The page size: the granularity of every virtual and physical range.
size_t page_size();

void install_physical_mem_entry_points(ur_dditable_t &t); // physical_mem.cpp
void install_virtual_mem_entry_points(ur_dditable_t &t);  // virtual_mem.cpp

} // namespace ordo::native_cpu
