// SPDX-License-Identifier: Apache-2.0
// The OpenCL adapter's own tests: they dlopen the built adapter and call it through the
// tables its 26 getters hand out, as a loader would (no loader involved).
#pragma once
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ur_ddi.h"

namespace ocltest {

// The adapter library and its complete table, loaded once per process.
struct Adapter {
  void *lib = nullptr;
  ur_dditable_t t{};
  std::string error;

  static Adapter &get();
};

#define OCL_ASSERT_OK(expr) ASSERT_EQ(UR_RESULT_SUCCESS, (expr))
#define OCL_EXPECT_OK(expr) EXPECT_EQ(UR_RESULT_SUCCESS, (expr))

std::vector<uint8_t> read_file(const std::string &path);
std::string kernel_path(const char *ext); // ordo_test_kernels.<ext> in the build tree

// A context and queues on the first OpenCL device; skips the test when none exists.
class OpenCLTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  ur_dditable_t &t() { return Adapter::get().t; }
  // Builds ordo_test_kernels for the device (SPIR-V if it takes IL, else SPIR bitcode).
  ur_program_handle_t build_test_program();
  uint32_t device_caps(ur_device_info_t what);
  ur_result_t launch(ur_queue_handle_t q, ur_kernel_handle_t k, uint32_t dims, const size_t *global,
                     const size_t *local, std::vector<ur_exp_kernel_arg_properties_t> args, uint32_t nwait = 0,
                     const ur_event_handle_t *wait = nullptr, ur_event_handle_t *ev = nullptr);

  static ur_exp_kernel_arg_properties_t value_arg(uint32_t index, size_t size, const void *v);
  static ur_exp_kernel_arg_properties_t pointer_arg(uint32_t index, const void *p);
  static ur_exp_kernel_arg_properties_t local_arg(uint32_t index, size_t size);

  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;     // in order
  ur_queue_handle_t ooo_queue = nullptr; // out of order (native where the device has it)
};

} // namespace ocltest
