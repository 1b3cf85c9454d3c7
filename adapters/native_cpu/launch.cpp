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

} // namespace

ur_result_t capture_args(const ordo_nc_kernel_desc &desc, uint32_t numArgs, const ur_exp_kernel_arg_properties_t *pArgs,
                         LaunchArgs &out) {
  const uint32_t n = desc.num_args;
  std::vector<int> chosen(n, -1); // the entry of pArgs that sets each argument (the last one wins)
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
  size_t value_bytes = 0;
  out.offsets.assign(n, 0);
  for (uint32_t idx = 0; idx < n; ++idx) {
    if (chosen[idx] < 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS; // never set
    const ur_exp_kernel_arg_properties_t &a = pArgs[chosen[idx]];
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_LOCAL) {
      out.locals.push_back({idx, out.local_block});
      out.local_block += align_up(a.size, ORDO_NC_LOCAL_ALIGN);
      continue;
    }
    size_t bytes = a.type == UR_EXP_KERNEL_ARG_TYPE_VALUE ? a.size : sizeof(void *);
    out.offsets[idx] = align_up(value_bytes, alignof(std::max_align_t));
    value_bytes = out.offsets[idx] + bytes;
  }
  if (value_bytes > kMaxParameterSize) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  if (value_bytes) out.storage.assign(value_bytes, 0);
  for (uint32_t idx = 0; idx < n; ++idx) {
    const ur_exp_kernel_arg_properties_t &a = pArgs[chosen[idx]];
    if (a.type == UR_EXP_KERNEL_ARG_TYPE_POINTER) {
      std::memcpy(&out.storage[out.offsets[idx]], &a.value.pointer, sizeof(void *));
    } else if (a.type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ) {
      Mem *m = lookup<Mem>(a.value.memObjTuple.hMem);
      void *bytes = m ? m->data : nullptr;
      std::memcpy(&out.storage[out.offsets[idx]], &bytes, sizeof(void *));
    } else if (a.type == UR_EXP_KERNEL_ARG_TYPE_VALUE)
      std::memcpy(&out.storage[out.offsets[idx]], a.value.value, a.size);
  }
  return UR_RESULT_SUCCESS;
}

LaunchWork::LaunchWork(Kernel &kernel, const ordo_nc_range &range, LaunchArgs args, size_t work_group_memory)
    : kernel_(&kernel), desc_(kernel.desc), range_(range), args_(std::move(args)),
      work_group_memory_(work_group_memory) {
  setup();
}

void LaunchWork::reset(Kernel &kernel, const ordo_nc_range &range, LaunchArgs &&args, size_t work_group_memory) {
  kernel_ = Ref<Kernel>(&kernel);
  desc_ = kernel.desc;
  range_ = range;
  // Swapped, not moved: the old buffers go with the caller's (empty, for most kernels)
  // LaunchArgs, and this launch keeps the new ones with no allocation here.
  args_.storage.swap(args.storage);
  args_.offsets.swap(args.offsets);
  args_.locals.swap(args.locals);
  args_.local_block = args.local_block;
  work_group_memory_ = work_group_memory;
  event_ = nullptr;
  next_group_.store(0, std::memory_order_relaxed);
  failure_.store(0, std::memory_order_relaxed);
  failed_group_.store(0, std::memory_order_relaxed);
  setup();
}

bool LaunchWork::recycle() {
  kernel_ = Ref<Kernel>(); // the kernel (and its program) may go now
  arg_ptrs_.clear();
  return true;
}

void LaunchWork::setup() {
  if (desc_->num_args) {
    arg_ptrs_.assign(desc_->num_args, nullptr);
    if (!args_.storage.empty())
      for (uint32_t i = 0; i < desc_->num_args; ++i) arg_ptrs_[i] = &args_.storage[args_.offsets[i]];
  }
  total_groups_ = range_.num_groups[0] * range_.num_groups[1] * range_.num_groups[2];
  // Small grabs balance the load; enough of them per grab to keep the shared counter cool.
  static const size_t workers = WorkerPool::instance().size();
  grain_ = std::max<size_t>(1, total_groups_ / (workers * 16));
}

void LaunchWork::execute(Event &ev) {
  event_ = &ev;
  size_t grabs = (total_groups_ + grain_ - 1) / grain_;
  uint32_t chunks = static_cast<uint32_t>(std::min<size_t>(WorkerPool::instance().size(), grabs));
  active_chunks_.store(chunks, std::memory_order_relaxed);
  if (chunks > 1) WorkerPool::instance().push_range(chunk_task, this, 0, chunks - 1);
  run_chunk(); // this worker takes a share too
}

void LaunchWork::chunk_task(void *self, uint32_t) { static_cast<LaunchWork *>(self)->run_chunk(); }

void LaunchWork::run_chunk() {
  const size_t n_args = arg_ptrs_.size();
  // This chunk's argument array: the shared one, with local slots pointing at this
  // worker's scratch block.
  void *stack_args[16];
  void *stack_slots[16];
  std::unique_ptr<void *[]> heap_args, heap_slots;
  void **args = arg_ptrs_.data();
  int32_t status = 0;
  ordo_nc_group group{};
  group.range = &range_;
  size_t local_bytes = args_.local_block + align_up(work_group_memory_, ORDO_NC_LOCAL_ALIGN);
  if (local_bytes > 0) {
    char *block = static_cast<char *>(t_scratch.get(local_bytes));
    if (!block) status = -1;
    if (!args_.locals.empty()) {
      args = n_args <= 16 ? stack_args : (heap_args.reset(new void *[n_args]), heap_args.get());
      void **slots = args_.locals.size() <= 16 ? stack_slots
                                               : (heap_slots.reset(new void *[args_.locals.size()]), heap_slots.get());
      std::copy(arg_ptrs_.begin(), arg_ptrs_.end(), args);
      for (size_t i = 0; i < args_.locals.size(); ++i) {
        slots[i] = block ? block + args_.locals[i].offset : nullptr;
        args[args_.locals[i].index] = &slots[i];
      }
    }
    if (work_group_memory_ && block) {
      group.work_group_memory = block + args_.local_block;
      group.work_group_memory_size = work_group_memory_;
    }
  }

  const size_t nx = range_.num_groups[0], ny = range_.num_groups[1];
  while (status == 0) {
    size_t first = next_group_.fetch_add(grain_, std::memory_order_relaxed);
    if (first >= total_groups_) break;
    size_t last = std::min(first + grain_, total_groups_);
    for (size_t g = first; g < last; ++g) {
      group.group_id[0] = g % nx;
      group.group_id[1] = (g / nx) % ny;
      group.group_id[2] = g / (nx * ny);
      status = desc_->run_group(&group, args);
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
  if (active_chunks_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last chunk out completes the command; `this` is destroyed by finish().
  int32_t failure = failure_.load(std::memory_order_relaxed);
  if (failure != 0)
    NC_LOG(warning, "kernel '%s' failed with status %d (work-group %zu%s)", desc_->name, failure,
           failed_group_.load(std::memory_order_relaxed), failure == -1 ? ", no local memory" : "");
  graph::finish(*event_, failure == 0 ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_UNKNOWN);
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

ur_result_t UR_APICALL urEnqueueKernelLaunchWithArgsExp(
    ur_queue_handle_t hQueue, ur_kernel_handle_t hKernel, uint32_t workDim, const size_t *pGlobalWorkOffset,
    const size_t *pGlobalWorkSize, const size_t *pLocalWorkSize, uint32_t numArgs,
    const ur_exp_kernel_arg_properties_t *pArgs, const ur_kernel_launch_ext_properties_t *launchPropList,
    uint32_t numEventsInWaitList, const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_LOOKUP(Queue, q, hQueue);
  ORDO_LOOKUP(Kernel, k, hKernel);
  if (!pGlobalWorkSize) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numArgs > 0 && !pArgs) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (k->program->ctx != q->context) return UR_RESULT_ERROR_INVALID_KERNEL;
  ordo_nc_range range;
  if (ur_result_t r = make_range(*k, workDim, pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, range)) return r;
  size_t wg_memory = 0;
  if (ur_result_t r = read_launch_properties(launchPropList, &wg_memory)) return r;
  // Buffers given as arguments, held by the command until it has run.
  std::vector<Ref<Mem>> buffers;
  for (uint32_t i = 0; i < numArgs; ++i)
    if (pArgs[i].type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ)
      if (ur_result_t r = hold_kernel_mem_arg(pArgs[i].value.memObjTuple.hMem, pArgs[i].value.memObjTuple.flags,
                                              q->context, buffers))
        return r;
  LaunchArgs args;
  if (ur_result_t r = capture_args(*k->desc, numArgs, pArgs, args)) return r;
  if (args.local_block + wg_memory > 0 && args.local_block + wg_memory > local_memory_size())
    return UR_RESULT_ERROR_OUT_OF_RESOURCES;
  CommandBuilder cmd(*q, UR_COMMAND_KERNEL_LAUNCH);
  if (ur_result_t r = cmd.set_wait_list(numEventsInWaitList, phEventWaitList)) return r;
  struct Spec {
    Kernel &k;
    const ordo_nc_range &range;
    LaunchArgs &args;
    size_t wg_memory;
  } spec{*k, range, args, wg_memory}; // lives until submit() returns
  if (buffers.empty()) {
    // Built in the event under the queue's mutex: a recycled event brings its last
    // launch's LaunchWork, rebuilt in place (docs/native-cpu.md, "The scheduler").
    cmd.set_work_maker(
        [](Event &ev, void *ctx) -> std::unique_ptr<Work> {
          Spec &s = *static_cast<Spec *>(ctx);
          if (ev.spare && ev.spare->reuse_kind() == LaunchWork::kReuseKind) {
            std::unique_ptr<Work> w = std::move(ev.spare);
            static_cast<LaunchWork &>(*w).reset(s.k, s.range, std::move(s.args), s.wg_memory);
            return w;
          }
          return std::make_unique<LaunchWork>(s.k, s.range, std::move(s.args), s.wg_memory);
        },
        &spec);
  } else {
    auto launch = std::make_unique<LaunchWork>(*k, range, std::move(args), wg_memory);
    cmd.set_work(std::make_unique<HoldingWork>(std::move(launch), std::move(buffers)));
  }
  return cmd.submit(phEvent);
}

} // namespace

void install_launch_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = urEnqueueKernelLaunchWithArgsExp;
}

} // namespace ordo::native_cpu
