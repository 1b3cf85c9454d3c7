// SPDX-License-Identifier: Apache-2.0
// Programs: SPIR-V (urProgramCreateWithIL, ZE_MODULE_FORMAT_IL_SPIRV) or a device's
// native binary (urProgramCreateWithBinary, ZE_MODULE_FORMAT_NATIVE), built with
// zeModuleCreate; the driver's build log is kept as the program's. urProgram* are
// ur_common/program.hpp's; this file says what Level Zero does.
#include <string>

#include "common.hpp"
#include "ur_common/program.hpp"

namespace ordo::level_zero {

ze_module_handle_t Program::module_for(const Device *dev) {
  for (auto &pd : per_device)
    if (pd.dev == dev) return pd.module;
  return nullptr;
}

namespace {

bool is_spirv(const uint8_t *data, size_t size) {
  uint32_t magic = 0;
  if (size >= 4) std::memcpy(&magic, data, 4);
  return magic == 0x07230203u;
}

// Builds one device's module; the program mutex is held.
ur_result_t build_one(Program *p, Program::PerDevice &pd, const std::string &options) {
  if (pd.module) {
    ze().zeModuleDestroy(pd.module);
    pd.module = nullptr;
  }
  pd.options = options;
  pd.log.clear();
  ze_module_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.format = p->from_il ? ZE_MODULE_FORMAT_IL_SPIRV : ZE_MODULE_FORMAT_NATIVE;
  desc.inputSize = pd.image.size();
  desc.pInputModule = pd.image.data();
  desc.pBuildFlags = options.c_str();
  ze_module_build_log_handle_t log = nullptr;
  ze_result_t r = ze().zeModuleCreate(p->ctx->ze, pd.dev->ze, &desc, &pd.module, &log);
  if (log) {
    size_t size = 0;
    if (ze().zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 1) {
      std::string text(size, '\0');
      if (ze().zeModuleBuildLogGetString(log, &size, &text[0]) == ZE_RESULT_SUCCESS) {
        text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
        pd.log = text;
      }
    }
    ze().zeModuleBuildLogDestroy(log);
  }
  if (r != ZE_RESULT_SUCCESS) {
    pd.module = nullptr;
    pd.status = UR_PROGRAM_BUILD_STATUS_ERROR;
    if (pd.log.empty()) pd.log = "zeModuleCreate returned " + error_text(r);
    return r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ? UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                                                     : UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  }
  pd.status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
  return UR_RESULT_SUCCESS;
}

struct program_hooks : handle_types {
  static constexpr bool flags_before_size = true;
  // Linking modules (zeModuleDynamicLink) is not offered: urProgramLink stays unsupported.
  static bool links() { return false; }
  static ur_result_t link(Device *, const std::vector<const Program::PerDevice *> &, const std::string &,
                          std::vector<uint8_t> &, std::string &) {
    return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  }
  // SPIR-V is no device's native binary (the driver judges everything else).
  static ur_result_t check_binary(const uint8_t *data, size_t size) {
    return is_spirv(data, size) ? UR_RESULT_ERROR_INVALID_NATIVE_BINARY : UR_RESULT_SUCCESS;
  }
  static bool check_il(const uint8_t *data, size_t size) { return is_spirv(data, size); }
  static void prepare(Program::PerDevice &) {}
  static ur_result_t build_one(Program *p, Program::PerDevice &pd, const std::string &options) {
    return level_zero::build_one(p, pd, options);
  }
  static void unload(Program::PerDevice &pd) { ze().zeModuleDestroy(pd.module); }
  static void context_hold(Context *c) { level_zero::context_hold(c); }
  static void context_drop(Context *c) { level_zero::context_drop(c); }
  static ur_result_t function_pointer(Device *, ze_module_handle_t m, const char *name, void **out) {
    ze_result_t r = ze().zeModuleGetFunctionPointer(m, name, out);
    if (r == ZE_RESULT_ERROR_INVALID_FUNCTION_NAME) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
    ORDO_ZE(r);
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t global_variable(Device *, ze_module_handle_t m, const char *name, size_t *size, void **out) {
    ze_result_t r = ze().zeModuleGetGlobalPointer(m, name, size, out);
    if (r == ZE_RESULT_ERROR_INVALID_GLOBAL_NAME) return UR_RESULT_ERROR_INVALID_VALUE;
    ORDO_ZE(r);
    return UR_RESULT_SUCCESS;
  }
  static size_t image_size(const Program::PerDevice &pd) { return pd.image.size(); }
  static ur_result_t kernel_names(Program::PerDevice &built, std::string &names, size_t &kernels) {
    uint32_t count = 0;
    ORDO_ZE(ze().zeModuleGetKernelNames(built.module, &count, nullptr));
    std::vector<const char *> list(count);
    ORDO_ZE(ze().zeModuleGetKernelNames(built.module, &count, list.data()));
    kernels = count;
    for (uint32_t i = 0; i < count; ++i) names += (i ? ";" : "") + std::string(list[i]);
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::ur_common::program_entry_points<program_hooks>;

} // namespace

void program_drop(Program *p) { entry_points::drop(p); }
void install_program_entry_points(ur_dditable_t &t) { entry_points::install(t); }

} // namespace ordo::level_zero
