// SPDX-License-Identifier: Apache-2.0
// Modules and kernels of the CPU test driver: ZE_MODULE_FORMAT_NATIVE binaries are
// native-CPU kernel programs (include/ur_native_cpu_kernel.h), loaded by the native
// CPU adapter's ELF loader; a launch runs run_group once per group of the group count.
#include <cstdlib>
#include <cstring>

#include "driver.hpp"
#include "tables.hpp"

namespace zecpu {

ze_result_t append_command(ze_command_list_handle_t h, ze_event_handle_t signal, uint32_t n, ze_event_handle_t *waits,
                           std::function<void()> work);

namespace {

ze_module_build_log_handle_t make_log(const std::string &text) {
  auto *l = new BuildLog();
  l->text = text;
  return reinterpret_cast<ze_module_build_log_handle_t>(l);
}

ze_result_t ZE_APICALL ModuleCreate(ze_context_handle_t hc, ze_device_handle_t hd, const ze_module_desc_t *desc,
                                    ze_module_handle_t *out, ze_module_build_log_handle_t *log) {
  Context *c = as<Context>(hc);
  Device *d = as<Device>(hd);
  if (log) *log = nullptr;
  if (!c || !d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || !desc->pInputModule) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  if (desc->format == ZE_MODULE_FORMAT_IL_SPIRV) {
    if (log)
      *log = make_log("the Ordo CPU test driver runs native-CPU kernel binaries only (ZE_MODULE_FORMAT_NATIVE); "
                      "it cannot compile SPIR-V");
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  if (desc->format != ZE_MODULE_FORMAT_NATIVE) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  ur_result_t error = UR_RESULT_SUCCESS;
  std::string message;
  auto elf = ordo::native_cpu::ElfModule::load(desc->pInputModule, desc->inputSize, &error, &message);
  if (!elf) {
    if (log) *log = make_log(message);
    return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
  }
  auto *m = new Module();
  m->context = c;
  m->device = d;
  m->elf = std::move(elf);
  if (log) *log = make_log("");
  *out = reinterpret_cast<ze_module_handle_t>(m);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleDestroy(ze_module_handle_t h) {
  Module *m = as<Module>(h);
  if (!m) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  m->magic = 0;
  delete m;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleGetNativeBinary(ze_module_handle_t h, size_t *size, uint8_t *bytes) {
  Module *m = as<Module>(h);
  if (!m) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const auto &bin = m->elf->binary();
  if (bytes) std::memcpy(bytes, bin.data(), std::min(*size, bin.size()));
  *size = bin.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleGetKernelNames(ze_module_handle_t h, uint32_t *count, const char **names) {
  Module *m = as<Module>(h);
  if (!m) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const auto &ks = m->elf->kernels();
  if (*count == 0 || !names) {
    *count = uint32_t(ks.size());
    return ZE_RESULT_SUCCESS;
  }
  *count = std::min(*count, uint32_t(ks.size()));
  for (uint32_t i = 0; i < *count; ++i) names[i] = ks[i]->name;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleGetProperties(ze_module_handle_t h, ze_module_properties_t *p) {
  if (!as<Module>(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->flags = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleGetFunctionPointer(ze_module_handle_t h, const char *name, void **out) {
  Module *m = as<Module>(h);
  if (!m) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!name || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const ordo_nc_kernel_desc *k = m->elf->find_kernel(name);
  if (!k) return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
  *out = reinterpret_cast<void *>(k->run_group);
  return ZE_RESULT_SUCCESS;
}

// A global of the module's ELF image (the native CPU kernel ABI exports them by name).
ze_result_t ZE_APICALL ModuleGetGlobalPointer(ze_module_handle_t h, const char *name, size_t *size, void **out) {
  Module *m = as<Module>(h);
  if (!m) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!name) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t bytes = 0;
  void *at = m->elf->symbol(name, &bytes);
  if (!at) return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
  if (size) *size = bytes;
  if (out) *out = at;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL BuildLogDestroy(ze_module_build_log_handle_t h) {
  BuildLog *l = as<BuildLog>(h);
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  l->magic = 0;
  delete l;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL BuildLogGetString(ze_module_build_log_handle_t h, size_t *size, char *out) {
  BuildLog *l = as<BuildLog>(h);
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (out && *size) {
    size_t n = std::min(*size - 1, l->text.size());
    std::memcpy(out, l->text.data(), n);
    out[n] = '\0';
  }
  *size = l->text.size() + 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL KernelCreate(ze_module_handle_t h, const ze_kernel_desc_t *desc, ze_kernel_handle_t *out) {
  Module *m = as<Module>(h);
  if (!m) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || !desc->pKernelName) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const ordo_nc_kernel_desc *k = m->elf->find_kernel(desc->pKernelName);
  if (!k) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  auto *kernel = new Kernel();
  kernel->module = m;
  kernel->desc = k;
  kernel->args.resize(k->num_args);
  for (int d = 0; d < 3; ++d)
    if (k->reqd_local_size[d]) kernel->group_size[d] = uint32_t(k->reqd_local_size[d]);
  *out = reinterpret_cast<ze_kernel_handle_t>(kernel);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL KernelDestroy(ze_kernel_handle_t h) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  k->magic = 0;
  delete k;
  return ZE_RESULT_SUCCESS;
}

constexpr uint32_t kMaxGroupSize = 1024;

ze_result_t ZE_APICALL KernelSetGroupSize(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!x || !y || !z || uint64_t(x) * y * z > kMaxGroupSize) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  const size_t *req = k->desc->reqd_local_size;
  if (req[0] && (req[0] != x || req[1] != y || req[2] != z)) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  std::lock_guard<std::mutex> lock(k->mutex);
  k->group_size[0] = x;
  k->group_size[1] = y;
  k->group_size[2] = z;
  return ZE_RESULT_SUCCESS;
}

// Per dimension the largest divisor of the global size within the group limit.
ze_result_t ZE_APICALL KernelSuggestGroupSize(ze_kernel_handle_t h, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t *x,
                                              uint32_t *y, uint32_t *z) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!x || !y || !z) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const size_t *req = k->desc->reqd_local_size;
  if (req[0]) {
    *x = uint32_t(req[0]), *y = uint32_t(req[1]), *z = uint32_t(req[2]);
    return ZE_RESULT_SUCCESS;
  }
  uint32_t budget = kMaxGroupSize;
  auto pick = [&budget](uint32_t g) {
    uint32_t best = 1;
    for (uint32_t v = 1; v <= budget && v <= g && v <= 256; ++v)
      if (g % v == 0) best = v;
    budget /= best;
    return best;
  };
  *x = pick(gx ? gx : 1);
  *y = pick(gy ? gy : 1);
  *z = pick(gz ? gz : 1);
  return ZE_RESULT_SUCCESS;
}

// A null value is local memory of `size` bytes per group (the Level Zero convention).
ze_result_t ZE_APICALL KernelSetArgumentValue(ze_kernel_handle_t h, uint32_t index, size_t size, const void *value) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (index >= k->args.size()) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  const ordo_nc_arg_desc *d = k->desc->args ? &k->desc->args[index] : nullptr;
  if (d && d->kind == ORDO_NC_ARG_VALUE && d->size && d->size != size)
    return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  if (d && d->kind == ORDO_NC_ARG_POINTER && size != sizeof(void *))
    return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  if (d && d->kind == ORDO_NC_ARG_LOCAL && value) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> lock(k->mutex);
  Kernel::Arg &a = k->args[index];
  a.set = true;
  a.is_local = value == nullptr;
  a.local_size = a.is_local ? size : 0;
  if (value)
    a.bytes.assign(static_cast<const uint8_t *>(value), static_cast<const uint8_t *>(value) + size);
  else
    a.bytes.clear();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL KernelSetIndirectAccess(ze_kernel_handle_t h, ze_kernel_indirect_access_flags_t) {
  return as<Kernel>(h) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE; // one address space
}

ze_result_t ZE_APICALL KernelGetProperties(ze_kernel_handle_t h, ze_kernel_properties_t *p) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->numKernelArgs = k->desc->num_args;
  p->requiredGroupSizeX = uint32_t(k->desc->reqd_local_size[0]);
  p->requiredGroupSizeY = uint32_t(k->desc->reqd_local_size[1]);
  p->requiredGroupSizeZ = uint32_t(k->desc->reqd_local_size[2]);
  p->requiredNumSubGroups = 0;
  p->requiredSubgroupSize = 0;
  p->maxSubgroupSize = 1;
  p->maxNumSubgroups = kMaxGroupSize;
  p->localMemSize = 0;
  p->privateMemSize = 0;
  p->spillMemSize = 0;
  std::memset(p->uuid.kid, 0, sizeof(p->uuid.kid));
  std::memset(p->uuid.mid, 0, sizeof(p->uuid.mid));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL KernelGetName(ze_kernel_handle_t h, size_t *size, char *out) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t n = std::strlen(k->desc->name) + 1;
  if (out) {
    if (*size < n) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::memcpy(out, k->desc->name, n);
  }
  *size = n;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL KernelSetGlobalOffsetExp(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z) {
  Kernel *k = as<Kernel>(h);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard<std::mutex> lock(k->mutex);
  k->offset[0] = x;
  k->offset[1] = y;
  k->offset[2] = z;
  return ZE_RESULT_SUCCESS;
}

// What a launch captured at append time: later argument changes do not affect it.
struct Launch {
  const ordo_nc_kernel_desc *desc;
  std::shared_ptr<ordo::native_cpu::ElfModule> module; // keeps the code loaded while the launch is pending
  ordo_nc_range range{};
  std::vector<std::vector<uint8_t>> values;
  std::vector<size_t> local_sizes; // per argument; 0: not local
};

void run_launch(const Launch &l) {
  const size_t n = l.values.size();
  std::vector<void *> args(n);
  std::vector<void *> local_ptrs(n, nullptr);
  std::vector<void *> blocks;
  for (size_t i = 0; i < n; ++i) {
    if (l.local_sizes[i]) {
      void *b = nullptr;
      size_t sz = (l.local_sizes[i] + ORDO_NC_LOCAL_ALIGN - 1) / ORDO_NC_LOCAL_ALIGN * ORDO_NC_LOCAL_ALIGN;
      if (posix_memalign(&b, ORDO_NC_LOCAL_ALIGN, sz) != 0) b = nullptr;
      blocks.push_back(b);
      local_ptrs[i] = b;
      args[i] = &local_ptrs[i];
    } else {
      args[i] = const_cast<uint8_t *>(l.values[i].data());
    }
  }
  ordo_nc_group g{};
  g.range = &l.range;
  const size_t *ng = l.range.num_groups;
  for (size_t z = 0; z < ng[2]; ++z)
    for (size_t y = 0; y < ng[1]; ++y)
      for (size_t x = 0; x < ng[0]; ++x) {
        g.group_id[0] = x;
        g.group_id[1] = y;
        g.group_id[2] = z;
        if (l.desc->run_group(&g, args.data()) != 0) goto done; // a failed kernel stops its launch
      }
done:
  for (void *b : blocks) std::free(b);
}

} // namespace

ze_result_t ZE_APICALL AppendLaunchKernel(ze_command_list_handle_t hl, ze_kernel_handle_t hk,
                                          const ze_group_count_t *gc, ze_event_handle_t signal, uint32_t n,
                                          ze_event_handle_t *waits) {
  Kernel *k = as<Kernel>(hk);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!gc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto l = std::make_shared<Launch>();
  l->desc = k->desc;
  l->module = k->module->elf;
  {
    std::lock_guard<std::mutex> lock(k->mutex);
    for (const Kernel::Arg &a : k->args)
      if (!a.set) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const uint32_t counts[3] = {gc->groupCountX, gc->groupCountY, gc->groupCountZ};
    uint32_t dims = counts[2] > 1 || k->group_size[2] > 1 ? 3 : counts[1] > 1 || k->group_size[1] > 1 ? 2 : 1;
    l->range.work_dim = dims;
    for (int d = 0; d < 3; ++d) {
      l->range.local_size[d] = k->group_size[d];
      l->range.num_groups[d] = counts[d];
      l->range.global_size[d] = size_t(counts[d]) * k->group_size[d];
      l->range.global_offset[d] = k->offset[d];
    }
    for (const Kernel::Arg &a : k->args) {
      l->values.push_back(a.bytes);
      l->local_sizes.push_back(a.is_local ? std::max<size_t>(a.local_size, 1) : 0);
    }
  }
  return append_command(hl, signal, n, waits, [l] { run_launch(*l); });
}

void install(ze_module_dditable_t &t) {
  t.pfnCreate = ModuleCreate;
  t.pfnDestroy = ModuleDestroy;
  t.pfnGetNativeBinary = ModuleGetNativeBinary;
  t.pfnGetKernelNames = ModuleGetKernelNames;
  t.pfnGetProperties = ModuleGetProperties;
  t.pfnGetFunctionPointer = ModuleGetFunctionPointer;
  t.pfnGetGlobalPointer = ModuleGetGlobalPointer;
}

void install(ze_module_build_log_dditable_t &t) {
  t.pfnDestroy = BuildLogDestroy;
  t.pfnGetString = BuildLogGetString;
}

void install(ze_kernel_dditable_t &t) {
  t.pfnCreate = KernelCreate;
  t.pfnDestroy = KernelDestroy;
  t.pfnSetGroupSize = KernelSetGroupSize;
  t.pfnSuggestGroupSize = KernelSuggestGroupSize;
  t.pfnSetArgumentValue = KernelSetArgumentValue;
  t.pfnSetIndirectAccess = KernelSetIndirectAccess;
  t.pfnGetProperties = KernelGetProperties;
  t.pfnGetName = KernelGetName;
}

void install(ze_kernel_exp_dditable_t &t) { t.pfnSetGlobalOffsetExp = KernelSetGlobalOffsetExp; }

} // namespace zecpu
