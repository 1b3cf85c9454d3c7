// SPDX-License-Identifier: Apache-2.0
// Kernel launches as commands. One command runs one launch, or, on an in-order queue, a
// batch of launches nobody asked an event for: later such launches join the queue's
// newest command while it is still open (docs/native-cpu.md, "The scheduler").
#pragma once
#include <atomic>
#include <memory>

#include "kernel.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

// A launch as the enqueue checked it, before it is copied into a command.
struct LaunchSpec {
  Kernel *kernel = nullptr;
  ordo_nc_range range;                       // set by make_range, unless same_range is set
  const ordo_nc_range *same_range = nullptr; // the previous launch's, identical (same_range)
  size_t wg_memory = 0;
  const ur_exp_kernel_arg_properties_t *args = nullptr;
  const int *chosen = nullptr; // per kernel argument: the entry of args that sets it
  uint32_t num_locals = 0;
  size_t local_block = 0; // bytes of local memory per group (aligned slices)
  size_t value_bytes = 0; // bytes of argument values
  bool local_given = false;
};

class LaunchWork final : public Work {
public:
  static constexpr int kReuseKind = 1;
  LaunchWork() = default;
  ~LaunchWork() override;
  // A new command's first launch on `queue` (queue.mu held, nothing runs it yet).
  // `batch`: later launches may join (join()) until the command closes.
  void start(Queue &queue, const LaunchSpec &s, bool batch);
  // Adds a launch to this open command (queue.batch_lock held): checks its range and
  // arguments as the full path would, copies it into the next slot and publishes it. False
  // when it ran out of room, it is closed (its worker had run everything) or anything is
  // amiss: the launch then takes the full path, which reports any error.
  bool join(Kernel &k, uint32_t dim, const size_t *offset, const size_t *global, const size_t *local, uint32_t num_args,
            const ur_exp_kernel_arg_properties_t *args);
  void execute(Event &ev) override;
  // No more launches join (queue.mu held): the queue is waited for, or another command
  // follows. The worker ends the command after the launches it has.
  void close() override;
  // Kept by a recycled event: drops the kernels, keeps the memory.
  bool recycle() override;
  int reuse_kind() const override { return kReuseKind; }

private:
  // One cache line carries a launch and its publication: a watching worker reads the
  // next slot's line and the enqueuer writes it, one transfer between their cores per
  // launch (docs/native-cpu.md, "The scheduler").
  struct alignas(64) Record {
    std::atomic<uint32_t> published{0}; // the use (epoch_) it was published in
    uint32_t num_locals;
    Kernel *kernel;
    const ordo_nc_kernel_desc *desc; // kernel's
    const ordo_nc_range *range;      // ranges_[slot], or an earlier record's when identical
    size_t args_at;                  // arena: size_t offsets[num_args], then Local[num_locals]
    size_t local_block;
    size_t wg_memory;
    bool holds;       // holds kernel (dropped by recycle()); else the previous record does
    bool local_given; // range.local_size came from the caller
  };
  struct Local {
    uint32_t index;
    size_t offset; // within the group's local block
  };
  static size_t bytes_for(const LaunchSpec &s); // its room in the arena
  bool write(uint32_t slot, const LaunchSpec &s);
  void write_args(const LaunchSpec &s); // the argument bytes, at arena_used_
  // The range of record `last` when it was made from the same kernel code and sizes: a
  // launch descriptor checked once for a run of identical launches.
  static const ordo_nc_range *same_range(const Record &last, const Kernel &k, uint32_t dim, const size_t *offset,
                                         const size_t *global, const size_t *local);
  void start_record();  // splits records_[current_] over the workers
  bool run_chunk();     // true: this was the record's last chunk out
  void run_from_here(); // runs chunks, and the next records while this thread ends each
  bool next_published(uint32_t i) const {
    return i < capacity_ && records_[i].published.load(std::memory_order_acquire) == running_epoch_;
  }
  void watch_for_more();
  // Closes the batch if the records run so far are all there are: true when none can
  // come any more.
  bool try_close();
  void close_now(); // from the worker: the rest does not run
  static void chunk_task(void *self, uint32_t);

  // Set when a command starts; read by enqueuers and the worker alike.
  Queue *queue_ = nullptr;
  std::unique_ptr<Record[]> records_;
  std::unique_ptr<ordo_nc_range[]> ranges_; // per slot, for a launch whose range is new
  std::unique_ptr<unsigned char[]> arena_;
  uint32_t capacity_ = 0;
  uint32_t epoch_ = 0; // this use of the records: a slot is published when it has it
  size_t arena_size_ = 0;
  // No launch joins any more. Set under queue.batch_lock by the worker once it has run
  // every published record, or by close() once the queue has let go of the batch: a
  // launch either joins before the close (under the same lock) or finds it closed.
  std::atomic<bool> closed_{true};

  // The enqueuers' side (queue.batch_lock), written per launch, not read by a running worker.
  alignas(64) std::atomic<uint32_t> count_{0}; // records written
  size_t arena_used_ = 0;

  // The worker's side, written per record, never read by enqueuers.
  alignas(64) uint32_t current_ = 0; // the record running
  uint32_t running_epoch_ = 0;       // epoch_, as the worker runs it
  size_t total_groups_ = 0;
  size_t grain_ = 1; // groups taken per grab
  Event *event_ = nullptr;
  std::atomic<size_t> next_group_{0};
  std::atomic<uint32_t> active_chunks_{0};
  std::atomic<int32_t> failure_{0};
  std::atomic<size_t> failed_group_{0};
};

} // namespace ordo::native_cpu
