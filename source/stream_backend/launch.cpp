// SPDX-License-Identifier: Apache-2.0
// urEnqueueKernelLaunchWithArgsExp: arguments checked against the kernel's
// parameter layout, local memory as offsets into dynamic shared memory, then
// the driver's launch on the stream the queue picks.
//
// Local-memory arguments: the kernel parameter is a size_t byte offset into the
// launch's dynamic shared memory (`extern __shared__`), and the launch reserves
// the sum of all local sizes, each aligned to its natural power of two (<= 128).
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend.hpp"
#include "ur_common/kernel.hpp"

namespace ordo::stream_backend {

namespace {

constexpr size_t kInlineArgs = 32; // arguments kept on the stack; more go to the heap

size_t local_alignment(size_t size) {
  size_t a = 1;
  while (a < 128 && size % (a * 2) == 0) a *= 2;
  return a < 8 ? 8 : a;
}

// The parameter size an argument implies, for a kernel whose layout is unknown.
size_t implied_size(const ur_exp_kernel_arg_properties_t &arg) {
  switch (arg.type) {
  case UR_EXP_KERNEL_ARG_TYPE_VALUE: return arg.size;
  case UR_EXP_KERNEL_ARG_TYPE_POINTER:
  case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: return sizeof(void *);
  default: return sizeof(size_t); // local memory: an offset
  }
}

} // namespace

namespace {

// What ur_common's urEnqueueKernelLaunchWithArgsExp leaves to the backend (ur_common/kernel.hpp).
struct launch_hooks {
  using Queue = stream_backend::Queue;
  using Kernel = stream_backend::Kernel;
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *waits) {
    return stream_backend::check_wait_list(n, waits);
  }
  static ur_result_t launch(Queue *q, Kernel *k, const ordo::ur_common::launch_args &args) {
    function_t f = k->function_for(q->dev);
    if (!f) return UR_RESULT_ERROR_INVALID_KERNEL; // not built for the queue's device
    // CUDA and HIP have no global offset: a launch with one runs the kernel's offset variant.
    size_t offset[3] = {0, 0, 0};
    bool with_offset = false;
    if (args.pGlobalWorkOffset)
      for (uint32_t i = 0; i < args.workDim; ++i) {
        offset[i] = args.pGlobalWorkOffset[i];
        with_offset = with_offset || offset[i] != 0;
      }
    if (with_offset) {
      f = k->offset_function_for(q->dev);
      if (!f) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // the program has no <name>_with_offset
    }

    bool cooperative = false;
    size_t extra_shared = 0;
    if (args.launchPropList) {
      if (args.launchPropList->flags & UR_KERNEL_LAUNCH_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
      cooperative = args.launchPropList->flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE;
      for (auto *ext = static_cast<const ur_base_properties_t *>(args.launchPropList->pNext); ext;
           ext = static_cast<const ur_base_properties_t *>(ext->pNext)) {
        if (ext->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY) {
          const size_t wg = reinterpret_cast<const ur_kernel_launch_workgroup_property_t *>(ext)->workgroup_mem_size;
          extra_shared = wg > SIZE_MAX - extra_shared ? SIZE_MAX : extra_shared + wg; // saturating, as below
        } else if (ext->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_CLUSTER_PROPERTY)
          return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
      }
    }

    // Arguments: params[i] points at the bytes of parameter i.
    // Where neither the driver nor the image told the parameter layout, the arguments
    // define it (no index or size check is possible then; docs/hip.md).
    size_t nparams = k->param_sizes.size();
    if (!k->params_known) {
      nparams = 0;
      for (uint32_t a = 0; a < args.numArgs; ++a) nparams = std::max<size_t>(nparams, size_t(args.pArgs[a].index) + 1);
    }
    void *inline_params[kInlineArgs + 1];
    uint64_t inline_storage[kInlineArgs];
    std::vector<void *> heap_params;
    std::vector<uint64_t> heap_storage;
    void **params = inline_params;
    uint64_t *storage = inline_storage;
    if (nparams > kInlineArgs) {
      heap_params.resize(nparams + 1);
      heap_storage.resize(nparams);
      params = heap_params.data();
      storage = heap_storage.data();
    }
    for (size_t i = 0; i < nparams; ++i) params[i] = nullptr;
    size_t shared = 0;
    for (uint32_t a = 0; a < args.numArgs; ++a) {
      const ur_exp_kernel_arg_properties_t &arg = args.pArgs[a];
      if (arg.index >= nparams) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
      size_t want = k->params_known ? k->param_sizes[arg.index] : implied_size(arg);
      switch (arg.type) {
      case UR_EXP_KERNEL_ARG_TYPE_VALUE:
        if (arg.size != want) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        if (!arg.value.value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
        params[arg.index] = const_cast<void *>(arg.value.value); // copied by the launch
        break;
      case UR_EXP_KERNEL_ARG_TYPE_POINTER:
        if (want != sizeof(void *)) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        std::memcpy(&storage[arg.index], &arg.value.pointer, sizeof(void *));
        params[arg.index] = &storage[arg.index];
        break;
      case UR_EXP_KERNEL_ARG_TYPE_LOCAL: {
        if (want != sizeof(size_t)) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        if (arg.size == 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        // Saturating: a size near SIZE_MAX must be refused below, not wrap to a small block.
        size_t align = local_alignment(arg.size);
        size_t offset = shared > SIZE_MAX - (align - 1) ? SIZE_MAX : (shared + align - 1) / align * align;
        shared = arg.size > SIZE_MAX - offset ? SIZE_MAX : offset + arg.size;
        storage[arg.index] = offset;
        params[arg.index] = &storage[arg.index];
        break;
      }
      case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: {
        // A buffer is passed as the device address of its first byte (memory.cpp).
        if (want != sizeof(void *)) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        void *p = nullptr;
        if (ur_result_t r = kernel_mem_arg(arg.value.memObjTuple.hMem, arg.value.memObjTuple.flags, q->ctx, &p))
          return r;
        std::memcpy(&storage[arg.index], &p, sizeof(void *));
        params[arg.index] = &storage[arg.index];
        break;
      }
      case UR_EXP_KERNEL_ARG_TYPE_SAMPLER: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // this adapter has no samplers
      default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
      }
    }
    for (size_t i = 0; i < nparams; ++i)
      if (!params[i]) return UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
    params[nparams] = offset; // read only by the offset variant
    shared = extra_shared > SIZE_MAX - shared ? SIZE_MAX : shared + extra_shared;

    // The launch shape.
    const device_facts &facts = q->dev->facts;
    size_t block[3] = {1, 1, 1}, grid[3] = {1, 1, 1};
    if (args.pLocalWorkSize) {
      size_t threads = 1;
      for (uint32_t i = 0; i < args.workDim; ++i) {
        block[i] = args.pLocalWorkSize[i];
        if (block[i] > size_t(facts.block_dim[i]) || args.pGlobalWorkSize[i] % block[i] != 0)
          return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
        threads *= block[i];
      }
      if (threads > size_t(facts.max_threads_per_block)) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
    } else {
      suggest_local_size(q->dev, f, args.workDim, args.pGlobalWorkSize, block);
    }
    for (uint32_t i = 0; i < args.workDim; ++i) {
      grid[i] = args.pGlobalWorkSize[i] / block[i];
      if (grid[i] > size_t(facts.grid_dim[i])) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
    }

    Command cmd(q, UR_COMMAND_KERNEL_LAUNCH, args.numEventsInWaitList, args.phEventWaitList, args.phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    if (shared > size_t(k->dynamic_shared_limit.load(std::memory_order_relaxed))) {
      // Past 48 KiB the kernel must opt in to more dynamic shared memory.
      size_t fixed = size_t(kernel_attr(f, func_attr::shared_size_bytes));
      const size_t optin = size_t(facts.shared_per_block_optin);
      if (shared > optin || fixed > optin - shared) return UR_RESULT_ERROR_OUT_OF_RESOURCES;
      ORDO_DRV(drv::function_set_max_dynamic_shared(f, int(shared)));
      k->dynamic_shared_limit.store(int(shared), std::memory_order_relaxed);
    }
    status r = drv::launch(f, grid, block, unsigned(shared), cmd.stream(),
                           (nparams || with_offset || cooperative) ? params : nullptr, cooperative);
    return cmd.finish(to_ur(r));
  }
};

} // namespace

void install_launch_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = ordo::ur_common::enqueue_kernel_launch_with_args<launch_hooks>;
}

} // namespace ordo::stream_backend
