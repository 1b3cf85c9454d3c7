// SPDX-License-Identifier: Apache-2.0
// What the tools over the null driver (pair_cost.cpp, stream_stress.cpp,
// stream_attack.cpp) share: an adapter's own dispatch table read from its library, its
// first device in a context, and the one kernel the null driver accepts (`fill`: a
// pointer and a 4-byte value).
#pragma once
#include <dlfcn.h>

#include <cstdint>

#include "ur_ddi.h"

namespace ordo_tools {

// Fills `t` from the adapter library at `path`; false (with dlerror() to say why) when
// it cannot be opened.
inline bool load_tables(const char *path, ur_dditable_t &t) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
#define ORDO_GET_TABLE(name)                                                                                           \
  if (auto get = reinterpret_cast<ur_pfnGet##name##ProcAddrTable_t>(dlsym(lib, "urGet" #name "ProcAddrTable")))        \
    get(UR_API_VERSION_CURRENT, &t.name);
  ORDO_GET_TABLE(Adapter)
  ORDO_GET_TABLE(Platform)
  ORDO_GET_TABLE(Device)
  ORDO_GET_TABLE(Context)
  ORDO_GET_TABLE(Queue)
  ORDO_GET_TABLE(Enqueue)
  ORDO_GET_TABLE(EnqueueExp)
  ORDO_GET_TABLE(Event)
  ORDO_GET_TABLE(Program)
  ORDO_GET_TABLE(Kernel)
  ORDO_GET_TABLE(USM)
  ORDO_GET_TABLE(USMExp)
#undef ORDO_GET_TABLE
  return true;
}

// The first device of the first platform, and a context of it.
inline ur_result_t first_device(const ur_dditable_t &t, ur_device_handle_t &dev, ur_context_handle_t &ctx) {
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  uint32_t n = 0;
  if (ur_result_t r = t.Adapter.pfnGet(1, &adapter, nullptr)) return r;
  if (ur_result_t r = t.Platform.pfnGet(adapter, 1, &platform, &n)) return r;
  if (ur_result_t r = t.Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 1, &dev, nullptr)) return r;
  return t.Context.pfnCreate(1, &dev, nullptr, &ctx);
}

// A program with the kernel `fill` and the kernel itself.
inline ur_result_t make_fill_kernel(const ur_dditable_t &t, ur_context_handle_t ctx, ur_device_handle_t dev,
                                    ur_program_handle_t &program, ur_kernel_handle_t &kernel) {
  static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry fill(.param .u64 p, .param .u32 v)\n{\nret;\n}\n";
  const uint8_t *image = reinterpret_cast<const uint8_t *>(ptx);
  size_t length = sizeof ptx;
  if (ur_result_t r = t.Program.pfnCreateWithBinary(ctx, 1, &dev, &length, &image, nullptr, &program)) return r;
  if (ur_result_t r = t.Program.pfnBuild(ctx, program, nullptr)) return r;
  return t.Kernel.pfnCreate(program, "fill", &kernel);
}

// `fill` over `global` work-items (groups of 256) writing 1 at `p`.
inline ur_result_t launch_fill(const ur_dditable_t &t, ur_kernel_handle_t kernel, ur_queue_handle_t q, void *p,
                               size_t global, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *ev) {
  static const uint32_t value = 1;
  ur_exp_kernel_arg_properties_t args[2] = {};
  args[0].stype = args[1].stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  args[0].type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  args[0].index = 0;
  args[0].size = sizeof(void *);
  args[0].value.pointer = p;
  args[1].type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  args[1].index = 1;
  args[1].size = sizeof(uint32_t);
  args[1].value.value = &value;
  const size_t local = 256;
  return t.EnqueueExp.pfnKernelLaunchWithArgsExp(q, kernel, 1, nullptr, &global, &local, 2, args, nullptr, n, waits,
                                                 ev);
}

} // namespace ordo_tools
