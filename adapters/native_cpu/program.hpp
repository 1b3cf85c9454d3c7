// SPDX-License-Identifier: Apache-2.0
// A program: one or more loaded ELF modules (several after urProgramLink) and its
// build state. Kernels are looked up by name across its modules.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.hpp"
#include "ordo_elf/elf_module.hpp"

namespace ordo::native_cpu {

struct Context;

struct Program : Object<Program> {
  using handle_type = ur_program_handle_t;
  static constexpr handle_kind kKind = handle_kind::program;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_PROGRAM;

  Program(Context *ctx, std::vector<std::shared_ptr<ElfModule>> mods);
  ~Program();

  const ordo_nc_kernel_desc *find_kernel(const char *name) const;

  Context *const ctx; // internal reference
  const std::vector<std::shared_ptr<ElfModule>> modules;

  std::mutex mu; // guards the build state below
  ur_program_build_status_t status = UR_PROGRAM_BUILD_STATUS_NONE;
  ur_program_binary_type_t binary_type = UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
  std::string options;
  std::string log;
};
ORDO_HANDLE_CHECK(Program);

inline ur_program_handle_t to_handle(Program *p) { return reinterpret_cast<ur_program_handle_t>(p); }

} // namespace ordo::native_cpu
