// SPDX-License-Identifier: Apache-2.0
// Loads Ordo's test-kernel program (test/kernels/README.md) for a device: the right
// file for its backend from the build tree, created the way that backend takes it.
// Used by the demo and the conformance suite.
#pragma once
#include <string>
#include <vector>

#include "discovery.hpp"

namespace urinfo {

struct TestProgram {
  ur_program_handle_t program = nullptr;  // built, or nullptr
  std::string path;                       // the file used (or looked for)
  std::string how;                        // "urProgramCreateWithBinary", "urProgramCreateWithIL"
  std::string skip_reason;                // set when there is nothing to load: no file, no variant
  ur_result_t result = UR_RESULT_SUCCESS; // of create or build, when one failed
  std::string build_log;                  // when the build failed

  bool ok() const { return program != nullptr; }
  // One line for a skip or failure message.
  std::string problem() const;
};

// kernel_dir: the build tree's kernels folder (ORDO_KERNEL_DIR), holding <backend>/.
// The file chosen per backend:
//   native_cpu  native_cpu/ordo_test_kernels.so   urProgramCreateWithBinary
//   opencl      opencl/ordo_test_kernels.spv      urProgramCreateWithIL when the device
//               has an IL version, else opencl/ordo_test_kernels.bc (SPIR bitcode) as binary
//   cuda        cuda/ordo_test_kernels.ptx        urProgramCreateWithBinary
//   level_zero  level_zero/ordo_test_kernels.spv  urProgramCreateWithIL
// `build` false stops after creating the program (for tests of urProgramBuild itself).
TestProgram load_test_program(const std::string &kernel_dir, ur_context_handle_t context, const FoundDevice &device,
                              bool build = true);
// The same for several devices of one backend in the context: a binary is given to each
// of `devices` (an IL program is for every device of the context anyway).
TestProgram load_test_program(const std::string &kernel_dir, ur_context_handle_t context, const FoundDevice &device,
                              const std::vector<ur_device_handle_t> &devices, bool build = true);

// The file load_test_program would use and how, or a reason there is none.
bool test_program_file(const std::string &kernel_dir, const FoundDevice &device, std::string &path, bool &as_il,
                       std::string &why_not);

} // namespace urinfo
