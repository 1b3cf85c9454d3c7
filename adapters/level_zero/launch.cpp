// SPDX-License-Identifier: Apache-2.0
// urEnqueueKernelLaunchWithArgsExp: the arguments, group size and global offset are
// set on the device's Level Zero kernel and the launch appended, under the kernel's
// lock (Level Zero captures a kernel's state when the launch is appended).
#include <new>
#include <vector>

#include "common.hpp"
#include "ur_common/kernel.hpp"

namespace ordo::level_zero {

namespace {

// What ur_common's urEnqueueKernelLaunchWithArgsExp leaves to the adapter (ur_common/kernel.hpp).
struct launch_hooks {
  using Queue = level_zero::Queue;
  using Kernel = level_zero::Kernel;
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *waits) {
    return level_zero::check_wait_list(n, waits);
  }
  static ur_result_t launch(Queue *q, Kernel *k, const ordo::ur_common::launch_args &args) {
    ze_kernel_handle_t zk = k->kernel_for(q->dev);
    if (!zk) return UR_RESULT_ERROR_INVALID_KERNEL; // not built for the queue's device
    if (args.launchPropList) {
      if (args.launchPropList->flags & UR_KERNEL_LAUNCH_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
      if (args.launchPropList->flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
      for (auto *ext = static_cast<const ur_base_properties_t *>(args.launchPropList->pNext); ext;
           ext = static_cast<const ur_base_properties_t *>(ext->pNext))
        if (ext->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY ||
            ext->stype == UR_STRUCTURE_TYPE_KERNEL_LAUNCH_CLUSTER_PROPERTY)
          return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    // Every argument of the kernel is named, once or more (the last one counts).
    const uint32_t nparams = k->props.numKernelArgs;
    for (uint32_t a = 0; a < args.numArgs; ++a) {
      const ur_exp_kernel_arg_properties_t &arg = args.pArgs[a];
      if (arg.index >= nparams) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
      switch (arg.type) {
      case UR_EXP_KERNEL_ARG_TYPE_VALUE:
        if (!arg.value.value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
        break;
      case UR_EXP_KERNEL_ARG_TYPE_POINTER: break;
      case UR_EXP_KERNEL_ARG_TYPE_LOCAL:
        if (arg.size == 0) return UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        break;
      case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: {
        Mem *m = nullptr;
        void *address = nullptr;
        if (ur_result_t r =
                kernel_mem_arg(arg.value.memObjTuple.hMem, arg.value.memObjTuple.flags, q->ctx, &m, &address))
          return r;
        break;
      }
      case UR_EXP_KERNEL_ARG_TYPE_SAMPLER: return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // no samplers
      default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
      }
    }
    if (ur_result_t r = ordo::ur_common::check_named_args(nparams, args.numArgs, args.pArgs,
                                                          q->dev->facts.compute.maxSharedLocalMemory))
      return r;

    // The launch shape: Level Zero takes a group size and a group count per dimension.
    const ze_device_compute_properties_t &c = q->dev->facts.compute;
    const uint32_t max_size[3] = {c.maxGroupSizeX, c.maxGroupSizeY, c.maxGroupSizeZ};
    const uint32_t max_count[3] = {c.maxGroupCountX, c.maxGroupCountY, c.maxGroupCountZ};
    size_t global[3] = {1, 1, 1};
    for (uint32_t i = 0; i < args.workDim; ++i) global[i] = args.pGlobalWorkSize[i];
    uint32_t group[3] = {1, 1, 1};
    if (args.pLocalWorkSize) {
      size_t threads = 1;
      for (uint32_t i = 0; i < args.workDim; ++i) {
        if (args.pLocalWorkSize[i] > max_size[i] || global[i] % args.pLocalWorkSize[i] != 0)
          return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
        group[i] = uint32_t(args.pLocalWorkSize[i]);
        threads *= group[i];
      }
      if (threads > c.maxTotalGroupSize) return UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
    } else {
      for (uint32_t i = 0; i < 3; ++i)
        if (global[i] > UINT32_MAX) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
      ORDO_ZE(ze().zeKernelSuggestGroupSize(zk, uint32_t(global[0]), uint32_t(global[1]), uint32_t(global[2]),
                                            &group[0], &group[1], &group[2]));
    }
    ze_group_count_t count{};
    uint32_t *counts[3] = {&count.groupCountX, &count.groupCountY, &count.groupCountZ};
    for (uint32_t i = 0; i < 3; ++i) {
      size_t n = global[i] / group[i];
      if (n > max_count[i] || n > UINT32_MAX) return UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
      *counts[i] = uint32_t(n);
    }
    uint32_t offset[3] = {0, 0, 0};
    if (args.pGlobalWorkOffset)
      for (uint32_t i = 0; i < args.workDim; ++i) {
        if (args.pGlobalWorkOffset[i] > UINT32_MAX) return UR_RESULT_ERROR_INVALID_VALUE;
        offset[i] = uint32_t(args.pGlobalWorkOffset[i]);
      }

    Command cmd(q, UR_COMMAND_KERNEL_LAUNCH, args.numEventsInWaitList, args.phEventWaitList, args.phEvent);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    std::lock_guard<std::mutex> lock(k->mutex);
    auto set = [&]() -> ze_result_t {
      for (uint32_t a = 0; a < args.numArgs; ++a) {
        const ur_exp_kernel_arg_properties_t &arg = args.pArgs[a];
        ze_result_t r = ZE_RESULT_SUCCESS;
        if (arg.type == UR_EXP_KERNEL_ARG_TYPE_VALUE)
          r = ze().zeKernelSetArgumentValue(zk, arg.index, arg.size, arg.value.value);
        else if (arg.type == UR_EXP_KERNEL_ARG_TYPE_POINTER)
          r = ze().zeKernelSetArgumentValue(zk, arg.index, sizeof(void *), &arg.value.pointer);
        else if (arg.type == UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ) {
          // The buffer's address; the command holds the buffer until it has run.
          Mem *m = nullptr;
          void *address = nullptr;
          kernel_mem_arg(arg.value.memObjTuple.hMem, arg.value.memObjTuple.flags, q->ctx, &m, &address);
          if (m) cmd.hold(m);
          r = ze().zeKernelSetArgumentValue(zk, arg.index, sizeof(void *), &address);
        } else
          r = ze().zeKernelSetArgumentValue(zk, arg.index, arg.size, nullptr); // local memory
        if (r != ZE_RESULT_SUCCESS) return r;
      }
      if (ze_result_t r = ze().zeKernelSetGroupSize(zk, group[0], group[1], group[2])) return r;
      if (ze_result_t r = ze().zeKernelSetGlobalOffsetExp(zk, offset[0], offset[1], offset[2])) return r;
      return ze().zeCommandListAppendLaunchKernel(cmd.list(), zk, &count, cmd.signal(), cmd.num_waits(), cmd.waits());
    };
    try {
      return cmd.finish(check(set()));
    } catch (const std::bad_alloc &) { // holding a buffer argument
      return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
  }
};

} // namespace

void install_launch_entry_points(ur_dditable_t &t) {
  t.EnqueueExp.pfnKernelLaunchWithArgsExp = ordo::ur_common::enqueue_kernel_launch_with_args<launch_hooks>;
}

} // namespace ordo::level_zero
