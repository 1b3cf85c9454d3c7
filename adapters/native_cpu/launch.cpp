// SPDX-License-Identifier: Apache-2.0
// urEnqueueKernelLaunchWithArgsExp: validates the ND-range and arguments, then runs
// the work-groups as a command whose chunks spread over the worker pool.
#include "entry_points.hpp"
#include "launch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "context.hpp"
#include "logging.hpp"
#include "memory.hpp"
#include "platform.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Scratch local memory of one worker, reused by every group it runs.
struct LocalScratch {
  void *block = nullptr;
  size_t size = 0;
  ~LocalScratch() { std::free(block); }
  void *get(size_t bytes) {
    if (bytes > size) {
      void *p = nullptr;
      if (posix_memalign(&p, ORDO_NC_LOCAL_ALIGN, bytes) != 0) return nullptr;
      std::free(block);
      block = p;
      size = bytes;
    }
    return block;
  }
};
thread_local LocalScratch t_scratch;

// Accepts an argument for a parameter the kernel described (kind ANY checks nothing).
ur_result_t check_arg(const ordo_nc_arg_desc &want, const ur_exp_kernel_arg_properties_t &arg) {
  bool pointer_sized = arg.size == sizeof(void *);
  switch (want.kind) {
  case ORDO_NC_ARG_VALUE:
    if (arg.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
    if (arg.type == UR_EXP_KERNEL_ARG_TYPE_POINTER || arg.type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ)
      // a pointer (a buffer's is its bytes) into a pointer-sized value
      return want.size == 0 || want.size == sizeof(void *) ? UR_RESULT_SUCCESS
                                                           : UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    return want.size == 0 || want.size == arg.size ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  case ORDO_NC_ARG_POINTER:
    if (arg.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
    if (arg.type == UR_EXP_KERNEL_ARG_TYPE_VALUE && !pointer_sized) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    return UR_RESULT_SUCCESS;
  case ORDO_NC_ARG_LOCAL:
    return arg.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
  default: return UR_RESULT_SUCCESS;
  }
}

constexpr size_t kAlign = alignof(std::max_align_t);
// A batch's room: launches, and bytes of their arguments (docs/native-cpu.md, "The scheduler").
constexpr uint32_t kBatchLaunches = 64;
constexpr size_t kBatchArena = 4096;

// Checks the arguments against the kernel's table entry: fills `chosen` (the entry of pArgs
// that sets each argument, the last one wins) and the sizes of `s`.
ur_result_t check_args(const ordo_nc_kernel_desc &desc, uint32_t numArgs, const ur_exp_kernel_arg_properties_t *pArgs,
                       int *chosen, LaunchSpec &s) {
  const uint32_t n = desc.num_args;
  if (n == 0 && numArgs == 0) return UR_RESULT_SUCCESS; // nothing to check or copy
  std::fill(chosen, chosen + n, -1);
  for (uint32_t i = 0; i < numArgs; ++i) {
    const ur_exp_kernel_arg_properties_t &a = pArgs[i];
    switch (a.type) {
    case UR_EXP_KERNEL_ARG_TYPE_VALUE:
      if (a.size == 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
      if (!a.value.value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
      break;
    case UR_EXP_KERNEL_ARG_TYPE_POINTER: break; // a null pointer is a valid argument
    case UR_EXP_KERNEL_ARG_TYPE_LOCAL:
      if (a.size == 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
      break;
    case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: // the kernel gets the buffer's bytes, a pointer (see hold_kernel_mem_arg)
      if (a.value.memObjTuple.hMem && !lookup<Mem>(a.value.memObjTuple.hMem)) return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
      break;
    case UR_EXP_KERNEL_ARG_TYPE_SAMPLER: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // no samplers here
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
    if (a.index >= n) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (desc.args)
      if (ur_result_t r = check_arg(desc.args[a.index], a)) return r;
    chosen[a.index] = static_cast<int>(i);
  }
  for (uint32_t idx = 0; idx < n; ++idx) {
    if (chosen[idx] < 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS; // never set
    const ur_exp_kernel_arg_properties_t &a = pArgs[chosen[idx]];
    // Both sums saturate: sizes near SIZE_MAX must not wrap to a small block (refused below
    // and by the local memory check, not run with too little room).
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL) {
      ++s.num_locals;
      const size_t slice = a.size > SIZE_MAX - ORDO_NC_LOCAL_ALIGN ? SIZE_MAX : align_up(a.size, ORDO_NC_LOCAL_ALIGN);
      s.local_block = slice > SIZE_MAX - s.local_block ? SIZE_MAX : s.local_block + slice;
    } else {
      const size_t bytes = a.type == UR_EXP_KERNEL_ARG_TYPE_VALUE ? a.size : sizeof(void *);
      s.value_bytes = bytes > kMaxParameterSize || s.value_bytes > kMaxParameterSize
                          ? kMaxParameterSize + 1
                          : align_up(s.value_bytes, kAlign) + bytes;
    }
  }
  if (s.value_bytes > kMaxParameterSize) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  s.args = pArgs;
  s.chosen = chosen;
  return UR_RESULT_SUCCESS;
}

} // namespace

size_t LaunchWork::bytes_for(const LaunchSpec &s) {
  return align_up(s.kernel->desc->num_args * sizeof(size_t) + s.num_locals * sizeof(Local), kAlign) +
         align_up(s.value_bytes, kAlign);
}

LaunchWork::~LaunchWork() { recycle(); }

// Copies the launch's argument values and local slots to the arena's free room.
void LaunchWork::write_args(const LaunchSpec &s) {
  const uint32_t n = s.kernel->desc->num_args;
  unsigned char *base = arena_.get() + arena_used_;
  auto *offsets = reinterpret_cast<size_t *>(base);
  auto *locals = reinterpret_cast<Local *>(base + n * sizeof(size_t));
  size_t at = arena_used_ + align_up(n * sizeof(size_t) + s.num_locals * sizeof(Local), kAlign), local_at = 0;
  uint32_t num_locals = 0;
  for (uint32_t idx = 0; idx < n; ++idx) {
    const ur_exp_kernel_arg_properties_t &a = s.args[s.chosen[idx]];
    offsets[idx] = 0;
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL) {
      locals[num_locals++] = {idx, local_at};
      local_at += align_up(a.size, ORDO_NC_LOCAL_ALIGN);
      continue;
    }
    at = align_up(at, kAlign);
    offsets[idx] = at;
    void *dst = arena_.get() + at;
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_VALUE) {
      std::memcpy(dst, a.value.value, a.size);
      at += a.size;
      continue;
    }
    void *pointer = const_cast<void *>(a.value.pointer);
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ) {
      Mem *m = lookup<Mem>(a.value.memObjTuple.hMem);
      pointer = m ? m->data : nullptr;
    }
    std::memcpy(dst, &pointer, sizeof(void *));
    at += sizeof(void *);
  }
}

// Copies the launch into slot `slot` and the arena's free room (the worker reads only
// published slots and their bytes, never these yet).
inline bool LaunchWork::write(uint32_t slot, const LaunchSpec &s) {
  const uint32_t n = s.kernel->desc->num_args;
  const size_t need = n > 0 ? bytes_for(s) : 0; // no arguments: no bytes
  if (slot >= capacity_ || arena_used_ + need > arena_size_) return false;
  if (n > 0) write_args(s);
  // A run of launches of one kernel holds it once (its first record).
  const bool holds = slot == 0 || records_[slot - 1].kernel != s.kernel;
  Record &rec = records_[slot];
  rec.kernel = s.kernel;
  rec.desc = s.kernel->desc;
  rec.holds = holds;
  rec.local_given = s.local_given;
  rec.num_locals = s.num_locals;
  if (s.same_range) {
    rec.range = s.same_range;
  } else {
    ranges_[slot] = s.range;
    rec.range = &ranges_[slot];
  }
  rec.args_at = arena_used_;
  rec.local_block = s.local_block;
  rec.wg_memory = s.wg_memory;
  if (holds) s.kernel->hold();
  arena_used_ += need;
  return true;
}

void LaunchWork::start(Queue &queue, const LaunchSpec &s, bool batch) {
  queue_ = &queue;
  const uint32_t launches = batch ? kBatchLaunches : 1;
  if (capacity_ < launches) {
    records_.reset(new Record[launches]); // none published
    ranges_.reset(new ordo_nc_range[launches]);
    capacity_ = launches;
  }
  if (++epoch_ == 0) { // wrapped: a slot's old epoch could match again
    for (uint32_t i = 0; i < capacity_; ++i) records_[i].published.store(0, std::memory_order_relaxed);
    epoch_ = 1;
  }
  const size_t bytes = std::max(bytes_for(s), batch ? kBatchArena : 0);
  if (arena_size_ < bytes) {
    arena_.reset(new unsigned char[bytes]);
    arena_size_ = bytes;
  }
  arena_used_ = 0;
  event_ = nullptr;
  write(0, s); // fits: made room above
  records_[0].published.store(epoch_, std::memory_order_relaxed);
  count_.store(1, std::memory_order_relaxed);
  closed_.store(!batch, std::memory_order_relaxed);
}

inline const ordo_nc_range *LaunchWork::same_range(const Record &last, const Kernel &k, uint32_t dim,
                                                   const size_t *offset, const size_t *global, const size_t *local) {
  // The range is a function of the kernel's code (its required local size) and of these
  // sizes only; the newest record's kernel is held, so its code is k's when desc matches.
  const ordo_nc_range &r = *last.range;
  if (last.desc != k.desc || r.work_dim != dim || last.local_given != (local != nullptr) || dim < 1 || dim > 3)
    return nullptr;
  for (uint32_t d = 0; d < dim; ++d)
    if (r.global_size[d] != global[d] || r.global_offset[d] != (offset ? offset[d] : 0) ||
        (local && r.local_size[d] != local[d]))
      return nullptr;
  return &r;
}

bool LaunchWork::recycle() {
  // Closed for good (a command that never ran, after a failed dependency, may still be
  // open), and the kernels (and their programs) may go.
  if (!closed_.load(std::memory_order_acquire)) close_now();
  const uint32_t n = count_.exchange(0, std::memory_order_acq_rel);
  for (uint32_t i = 0; i < n; ++i)
    if (records_[i].holds) records_[i].kernel->drop_hold();
  return true;
}

void LaunchWork::execute(Event &ev) {
  event_ = &ev;
  current_ = 0;
  running_epoch_ = epoch_;
  start_record();
  run_from_here();
}

void LaunchWork::start_record() {
  const ordo_nc_range &range = *records_[current_].range;
  total_groups_ = range.num_groups[0] * range.num_groups[1] * range.num_groups[2];
  failure_.store(0, std::memory_order_relaxed);
  if (total_groups_ == 1) return; // run_chunk runs it alone
  // Small grabs balance the load; enough of them per grab to keep the shared counter cool.
  static const size_t workers = WorkerPool::instance().size();
  grain_ = std::max<size_t>(1, total_groups_ / (workers * 16));
  next_group_.store(0, std::memory_order_relaxed);
  const uint32_t chunks = static_cast<uint32_t>(std::min(workers, (total_groups_ + grain_ - 1) / grain_));
  active_chunks_.store(chunks, std::memory_order_relaxed);
  if (chunks > 1) WorkerPool::instance().push_range(chunk_task, this, 0, chunks - 1);
}

void LaunchWork::chunk_task(void *self, uint32_t) { static_cast<LaunchWork *>(self)->run_from_here(); }

void LaunchWork::run_from_here() {
  while (run_chunk()) {
    // This thread ended the record: on to the next one, else the command is done.
    if (int32_t failure = failure_.load(std::memory_order_relaxed)) {
      NC_LOG(warning, "kernel '%s' failed with status %d (work-group %zu%s)", records_[current_].kernel->desc->name,
             failure, failed_group_.load(std::memory_order_relaxed), failure == -1 ? ", no local memory" : "");
      close_now(); // the rest of the batch does not run
      graph::finish(*event_, UR_RESULT_ERROR_UNKNOWN);
      return;
    }
    if (!next_published(current_ + 1)) {
      // A batch that has had a second launch is in a burst: watch for the next one.
      if (current_ > 0 && !closed_.load(std::memory_order_relaxed)) watch_for_more();
      if (!next_published(current_ + 1) && try_close()) {
        graph::finish(*event_, UR_RESULT_SUCCESS); // `this` may be reused from here on
        return;
      }
    }
    ++current_;
    start_record();
  }
}

// The enqueuer of a burst of launches is usually a few hundred nanoseconds behind: a
// moment's watch for the next one saves closing the batch, and so a new command and a
// worker wake-up for that launch (docs/performance.md). Ends early when the queue closes
// the batch (urQueueFinish) or another command follows it.
void LaunchWork::watch_for_more() {
  // Full: the next launch makes a new command after this one, which closes this one; seen
  // closed, the new command follows on this worker when this one finishes, not woken.
  const bool full = current_ + 1 >= capacity_;
  const std::atomic<uint32_t> &next = records_[full ? current_ : current_ + 1].published;
  watch_briefly([&] {
    return (!full && next.load(std::memory_order_relaxed) == running_epoch_) || closed_.load(std::memory_order_relaxed);
  });
}

bool LaunchWork::try_close() {
  // Closed by the queue, which let go of the batch under its batch lock after the last
  // launch joined: what is published is final.
  if (closed_.load(std::memory_order_acquire)) return !next_published(current_ + 1);
  queue_->lock_batch();
  const bool done = !next_published(current_ + 1);
  if (done) closed_.store(true, std::memory_order_relaxed);
  queue_->unlock_batch();
  return done;
}

void LaunchWork::close_now() {
  queue_->lock_batch();
  closed_.store(true, std::memory_order_relaxed);
  queue_->unlock_batch();
}

// The queue let go of this batch (queue.batch_lock no longer leads to it): no launch joins.
void LaunchWork::close() { closed_.store(true, std::memory_order_release); }

bool LaunchWork::run_chunk() {
  const Record &rec = records_[current_];
  const ordo_nc_kernel_desc *desc = rec.kernel->desc;
  const uint32_t n_args = desc->num_args;
  // This chunk's argument array: pointers into the arena, local slots pointing at this
  // worker's scratch block.
  void *stack_args[16];
  void *stack_slots[16];
  std::unique_ptr<void *[]> heap_args, heap_slots;
  void **args = nullptr;
  if (n_args > 0) {
    args = n_args <= 16 ? stack_args : (heap_args.reset(new void *[n_args]), heap_args.get());
    unsigned char *base = arena_.get();
    const auto *offsets = reinterpret_cast<const size_t *>(base + rec.args_at);
    for (uint32_t i = 0; i < n_args; ++i) args[i] = offsets[i] ? base + offsets[i] : nullptr;
  }
  int32_t status = 0;
  ordo_nc_group group{};
  group.range = rec.range;
  size_t local_bytes = rec.local_block + align_up(rec.wg_memory, ORDO_NC_LOCAL_ALIGN);
  if (local_bytes > 0) {
    char *block = static_cast<char *>(t_scratch.get(local_bytes));
    if (!block) status = -1;
    const auto *locals = reinterpret_cast<const Local *>(arena_.get() + rec.args_at + n_args * sizeof(size_t));
    void **slots =
        rec.num_locals <= 16 ? stack_slots : (heap_slots.reset(new void *[rec.num_locals]), heap_slots.get());
    for (uint32_t i = 0; i < rec.num_locals; ++i) {
      slots[i] = block ? block + locals[i].offset : nullptr;
      args[locals[i].index] = &slots[i];
    }
    if (rec.wg_memory && block) {
      group.work_group_memory = block + rec.local_block;
      group.work_group_memory_size = rec.wg_memory;
    }
  }

  if (total_groups_ == 1) { // alone: no counters shared with other chunks
    if (status == 0) status = desc->run_group(&group, args);
    if (status != 0) {
      failed_group_.store(0, std::memory_order_relaxed);
      failure_.store(status, std::memory_order_relaxed);
    }
    return true;
  }
  const size_t nx = rec.range->num_groups[0], ny = rec.range->num_groups[1];
  while (status == 0) {
    size_t first = next_group_.fetch_add(grain_, std::memory_order_relaxed);
    if (first >= total_groups_) break;
    size_t last = std::min(first + grain_, total_groups_);
    for (size_t g = first; g < last; ++g) {
      group.group_id[0] = g % nx;
      group.group_id[1] = (g / nx) % ny;
      group.group_id[2] = g / (nx * ny);
      status = desc->run_group(&group, args);
      if (status != 0) {
        failed_group_.store(g, std::memory_order_relaxed);
        break;
      }
    }
  }
  if (status != 0) {
    int32_t expected = 0;
    failure_.compare_exchange_strong(expected, status);
    next_group_.store(total_groups_, std::memory_order_relaxed); // the other chunks stop early
  }
  return active_chunks_.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

namespace {

// A launch with buffer arguments: the buffers stay alive until the launch has run
// (finish() destroys the command's work, this included, after the last chunk).
class HoldingWork final : public Work {
public:
  HoldingWork(std::unique_ptr<Work> inner, std::vector<Ref<Mem>> held)
      : inner_(std::move(inner)), held_(std::move(held)) {}
  void execute(Event &ev) override { inner_->execute(ev); }

private:
  std::unique_ptr<Work> inner_;
  std::vector<Ref<Mem>> held_;
};

// Reads the launch property chain: dynamic work-group memory is supported, the
// opportunistic-serialisation flag is a hint, anything else is refused.
ur_result_t read_launch_properties(const ur_kernel_launch_ext_properties_t *props, size_t *wg_memory) {
  ur_result_t result = UR_RESULT_SUCCESS;
  for_each_in_chain(props, [&](const ur_base_desc_t *p) {
    if (result) return;
    switch (p->stype) {
    case UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES: {
      auto flags = reinterpret_cast<const ur_kernel_launch_ext_properties_t *>(p)->flags;
      if (flags & UR_KERNEL_LAUNCH_FLAGS_MASK)
        result = UR_RESULT_ERROR_INVALID_ENUMERATION;
      else if (flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE)
        result = UR_RESULT_ERROR_INVALID_OPERATION;
      break;
    }
    case UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY:
      *wg_memory = reinterpret_cast<const ur_kernel_launch_workgroup_property_t *>(p)->workgroup_mem_size;
      break;
    default: result = UR_RESULT_ERROR_INVALID_OPERATION; // clusters and unknown properties
    }
  });
  return result;
}

ur_result_t make_range(const Kernel &k, uint32_t workDim, const size_t *offset, const size_t *global,
                       const size_t *local, ordo_nc_range &r) {
  if (workDim < 1 || workDim > 3) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
  r = {};
  r.work_dim = workDim;
  for (uint32_t d = 0; d < 3; ++d) {
    r.global_size[d] = d < workDim ? global[d] : 1;
    r.global_offset[d] = d < workDim && offset ? offset[d] : 0;
    if (r.global_size[d] == 0) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
    if (r.global_offset[d] > SIZE_MAX - r.global_size[d]) return UR_RESULT_ERROR_INVALID_VALUE;
  }
  if (local) {
    size_t items = 1;
    for (uint32_t d = 0; d < workDim; ++d) {
      if (local[d] == 0) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
      if (local[d] > kMaxWorkGroupSize) return UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE;
      items *= local[d];
    }
    if (items > kMaxWorkGroupSize) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
    for (uint32_t d = 0; d < 3; ++d) r.local_size[d] = d < workDim ? local[d] : 1;
    if (k.has_required_size())
      for (uint32_t d = 0; d < 3; ++d)
        if (r.local_size[d] != k.desc->reqd_local_size[d]) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
  } else {
    size_t chosen[3] = {1, 1, 1};
    choose_local_size(k, workDim, r.global_size, chosen);
    for (uint32_t d = 0; d < 3; ++d) r.local_size[d] = d < workDim ? chosen[d] : 1;
  }
  size_t total = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    if (r.global_size[d] % r.local_size[d] != 0) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
    r.num_groups[d] = r.global_size[d] / r.local_size[d];
    if (r.num_groups[d] > kMaxGroupsPerDimension) return UR_RESULT_ERROR_INVALID_VALUE;
    if (total > SIZE_MAX / r.num_groups[d]) return UR_RESULT_ERROR_INVALID_VALUE;
    total *= r.num_groups[d];
  }
  return UR_RESULT_SUCCESS;
}

} // namespace

bool LaunchWork::join(Kernel &k, uint32_t dim, const size_t *offset, const size_t *global, const size_t *local,
                      uint32_t num_args, const ur_exp_kernel_arg_properties_t *args) {
  const uint32_t slot = count_.load(std::memory_order_relaxed); // only enqueuers write it
  if (closed_.load(std::memory_order_relaxed) || slot == 0 || slot >= capacity_) return false;
  int chosen[16]; // try_join refuses kernels with more arguments
  LaunchSpec spec;
  spec.kernel = &k;
  spec.local_given = local != nullptr;
  spec.same_range = same_range(records_[slot - 1], k, dim, offset, global, local);
  if (!spec.same_range && make_range(k, dim, offset, global, local, spec.range) != UR_RESULT_SUCCESS) return false;
  if ((k.desc->num_args > 0 || num_args > 0) && check_args(*k.desc, num_args, args, chosen, spec) != UR_RESULT_SUCCESS)
    return false;
  if (spec.local_block > 0 && spec.local_block > local_memory_size()) return false;
  if (!write(slot, spec)) return false;
  // Open, under the batch lock: the worker cannot close it before this is published.
  count_.store(slot + 1, std::memory_order_relaxed);
  records_[slot].published.store(epoch_, std::memory_order_release);
  return true;
}

namespace {

// The common case, a plain launch on an in-order queue that waits for nothing and whose
// event nobody asked for: it joins the queue's newest command when that is an open batch
// of such launches (docs/native-cpu.md, "The scheduler"), in one short hold of the
// queue's batch lock, not its mutex. False: it takes the full path, which reports any error.
inline bool try_join(Queue &q, Kernel &k, uint32_t workDim, const size_t *offset, const size_t *global,
                     const size_t *local, uint32_t numArgs, const ur_exp_kernel_arg_properties_t *pArgs) {
  if (k.desc->num_args > 16) return false;
  for (uint32_t i = 0; i < numArgs; ++i)
    if (pArgs[i].type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ) return false; // the full path holds buffers
  q.lock_batch();
  auto *open = static_cast<LaunchWork *>(q.open_batch);
  const bool joined = open && open->join(k, workDim, offset, global, local, numArgs, pArgs);
  q.unlock_batch();
  return joined;
}

// Every launch that does not join an open batch: checks everything, in the order the
// errors are reported, and submits a command.
[[gnu::noinline]] ur_result_t launch_command(Queue *q, Kernel *k, uint32_t workDim, const size_t *pGlobalWorkOffset,
                                             const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize,
                                             uint32_t numArgs, const ur_exp_kernel_arg_properties_t *pArgs,
                                             const ur_kernel_launch_ext_properties_t *launchPropList,
                                             uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList,
                                             ur_event_handle_t *phEvent) {
  if (!pGlobalWorkSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numArgs > 0 && !pArgs) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (k->program->ctx != q->context) return UR_RESULT_ERROR_INVALID_KERNEL;
  const bool batch = q->in_order && !phEvent && numEventsInWaitList == 0 && !phEventWaitList;
  LaunchSpec spec;
  spec.kernel = k;
  spec.local_given = pLocalWorkSize != nullptr;
  if (ur_result_t r = make_range(*k, workDim, pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, spec.range)) return r;
  if (ur_result_t r = read_launch_properties(launchPropList, &spec.wg_memory)) return r;
  // Buffers given as arguments, held by the command until it has run.
  std::vector<Ref<Mem>> buffers;
  for (uint32_t i = 0; i < numArgs; ++i)
    if (pArgs[i].type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ)
      if (ur_result_t r = hold_kernel_mem_arg(pArgs[i].value.memObjTuple.hMem, pArgs[i].value.memObjTuple.flags,
                                              q->context, buffers))
        return r;
  int chosen_here[16];
  std::vector<int> chosen_more;
  const uint32_t num_kernel_args = k->desc->num_args;
  int *chosen = num_kernel_args <= 16 ? chosen_here : (chosen_more.resize(num_kernel_args), chosen_more.data());
  if (ur_result_t r = check_args(*k->desc, numArgs, pArgs, chosen, spec)) return r;
  const uint64_t local_limit = local_memory_size(); // the sum of the two, without wrapping
  if (spec.local_block > local_limit || spec.wg_memory > local_limit - spec.local_block)
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  CommandBuilder cmd(*q, UR_COMMAND_KERNEL_LAUNCH);
  if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  if (!buffers.empty()) {
    auto launch = std::make_unique<LaunchWork>();
    launch->start(*q, spec, false);
    cmd.set_work(std::make_unique<HoldingWork>(std::move(launch), std::move(buffers)));
    return cmd.submit(phEvent);
  }
  // Built in the event under the queue's mutex: a recycled event brings its last
  // launch's LaunchWork, rebuilt in place.
  struct Maker {
    const LaunchSpec &spec;
    bool batch;
  } maker{spec, batch && buffers.empty()};
  cmd.set_work_maker(
      [](Event &ev, void *ctx) -> std::unique_ptr<Work> {
        const Maker &m = *static_cast<const Maker *>(ctx);
        std::unique_ptr<Work> w = ev.spare && ev.spare->reuse_kind() == LaunchWork::kReuseKind
                                      ? std::move(ev.spare)
                                      : std::make_unique<LaunchWork>();
        static_cast<LaunchWork &>(*w).start(*ev.queue, m.spec, m.batch);
        return w;
      },
      &maker);
  if (maker.batch) cmd.open_batch();
  return cmd.submit(phEvent);
}

ur_result_t UR_APICALL urEnqueueKernelLaunchWithArgsExp(
    ur_queue_handle_t hQueue, ur_kernel_handle_t hKernel, uint32_t workDim, const size_t *pGlobalWorkOffset,
    const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize, uint32_t numArgs,
    const ur_exp_kernel_arg_properties_t *pArgs, const ur_kernel_launch_ext_properties_t *launchPropList,
    uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  ORDO_LOOKUP(Kernel, k, hKernel);
  // The joining launch's checks here, the rest (and every error) on the full path.
  if (q->in_order && !phEvent && numEventsInWaitList == 0 && !phEventWaitList && !launchPropList && pGlobalWorkSize &&
      (numArgs == 0 || pArgs) && k->program->ctx == q->context &&
      try_join(*q, *k, workDim, pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, numArgs, pArgs))
    return UR_RESULT_SUCCESS;
  return launch_command(q, k, workDim, pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, numArgs, pArgs,
                        launchPropList, numEventsInWaitList, phEventWaitList, phEvent);
}

} // namespace

void install_launch_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = urEnqueueKernelLaunchWithArgsExp;
}

} // namespace ordo::native_cpu
