// SPDX-License-Identifier: Apache-2.0
// The native CPU adapter as a test sees it before a loader exists: dlopen the
// library, call its 26 getters into one ur_dditable_t, and call through the table
// read from each handle (handle-first dispatch, as a loader would).
#pragma once
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "ur_ddi.h"

namespace ncpu_test {

// The table a loader would read from the first word of any handle.
template <class H> const ur_dditable_t &T(H handle) { return **reinterpret_cast<const ur_dditable_t *const *>(handle); }

// The adapter's getters, loaded once per process.
const ur_dditable_t &adapter_table();
// Fills `out` from every getter; returns the first failure.
ur_result_t get_all_tables(void *lib, ur_api_version_t version, ur_dditable_t *out);
void *adapter_library();

std::vector<uint8_t> read_file(const std::string &path);
inline std::string test_kernels_path() { return NCPU_TEST_KERNELS; }
inline std::string extra_kernels_path() { return NCPU_EXTRA_KERNELS; }
inline std::string c_kernel_path() { return NCPU_C_KERNEL; }

// One adapter, platform, device and context for a test; released in TearDown.
class NativeCpu : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  // A built program from a kernel file, and kernels from it.
  ur_program_handle_t build_program(const std::string &path);
  ur_kernel_handle_t kernel(ur_program_handle_t program, const char *name);
  ur_queue_handle_t make_queue(ur_queue_flags_t flags = 0);
  void *shared_alloc(size_t bytes);

  // Arguments for urEnqueueKernelLaunchWithArgsExp.
  static ur_exp_kernel_arg_properties_t value_arg(uint32_t index, size_t size, const void *value);
  static ur_exp_kernel_arg_properties_t pointer_arg(uint32_t index, const void *ptr);
  static ur_exp_kernel_arg_properties_t local_arg(uint32_t index, size_t size);

  // Tests that hold n workers busy at once skip on smaller machines.
#define NCPU_REQUIRE_WORKERS(n)                                                                                        \
  do {                                                                                                                 \
    if (workers() < (n)) GTEST_SKIP() << "needs " << (n) << " worker threads, the adapter has " << workers();          \
  } while (0)

  ur_result_t launch(ur_queue_handle_t q, ur_kernel_handle_t k, uint32_t dim, const size_t *global, const size_t *local,
                     const std::vector<ur_exp_kernel_arg_properties_t> &args, uint32_t num_waits = 0,
                     const ur_event_handle_t *waits = nullptr, ur_event_handle_t *event = nullptr,
                     const size_t *offset = nullptr);

  const ur_dditable_t &ddi() { return adapter_table(); }
  // Worker threads of the adapter (UR_DEVICE_INFO_MAX_COMPUTE_UNITS).
  uint32_t workers();

  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  std::vector<ur_program_handle_t> programs;
  std::vector<ur_kernel_handle_t> kernels;
  std::vector<ur_queue_handle_t> queues;
  std::vector<void *> allocations;
};

// A host task that blocks until released: holds a command "running" for as long
// as a test needs.
class Gate {
public:
  Gate() = default;
  ~Gate(); // opens, and waits for the tasks already waiting (a failed test must not hang)
  void open();
  void wait();
  static void host_task(void *gate) { static_cast<Gate *>(gate)->wait(); }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiters_ = 0;
};

} // namespace ncpu_test
