// SPDX-License-Identifier: Apache-2.0
// A kernel launch as a command: the ND-range, a copy of the arguments, and the
// split of its work-groups over the worker pool.
#pragma once
#include <atomic>
#include <vector>

#include "kernel.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

// Arguments captured at enqueue: values and pointers copied into `storage`;
// local-memory arguments get a slice of each group's local block.
struct LaunchArgs {
  std::vector<unsigned char> storage;
  std::vector<size_t> offsets; // per argument: offset in storage (unused for local ones)
  struct Local {
    uint32_t index;
    size_t offset; // within the group's local block
  };
  std::vector<Local> locals;
  size_t local_block = 0; // bytes of local memory per group (aligned slices)
};

// Checks the arguments against the kernel's table entry and copies them.
ur_result_t capture_args(const ordo_nc_kernel_desc &desc, uint32_t numArgs, const ur_exp_kernel_arg_properties_t *pArgs,
                         LaunchArgs &out);

class LaunchWork final : public Work {
public:
  static constexpr int kReuseKind = 1;
  LaunchWork(Kernel &kernel, const ordo_nc_range &range, LaunchArgs args, size_t work_group_memory);
  void execute(Event &ev) override;
  // Kept by a recycled event: drops the kernel, keeps the vectors' memory.
  bool recycle() override;
  int reuse_kind() const override { return kReuseKind; }
  // A recycled launch as a new one (what the constructor does).
  void reset(Kernel &kernel, const ordo_nc_range &range, LaunchArgs &&args, size_t work_group_memory);

private:
  void setup();
  static void chunk_task(void *self, uint32_t);
  void run_chunk();

  Ref<Kernel> kernel_;
  const ordo_nc_kernel_desc *desc_;
  ordo_nc_range range_;
  LaunchArgs args_;
  std::vector<void *> arg_ptrs_; // args[i] for the kernel; local slots are filled per chunk
  size_t work_group_memory_;
  size_t total_groups_;
  size_t grain_; // groups taken per grab
  Event *event_ = nullptr;
  std::atomic<size_t> next_group_{0};
  std::atomic<uint32_t> active_chunks_{0};
  std::atomic<int32_t> failure_{0};
  std::atomic<size_t> failed_group_{0};
};

} // namespace ordo::native_cpu
