// SPDX-License-Identifier: Apache-2.0
// Programs from the images the driver loads (PTX, cubin, fatbinary; HIP code objects),
// with what the driver's loader or JIT reports kept as the build log. urProgram* are
// ur_common/program.hpp's; this file says what the driver does.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "backend.hpp"
#include "image.hpp"
#include "ur_common/program.hpp"

namespace ordo::stream_backend {

module_t Program::module_for(const Device *dev) {
  for (auto &pd : per_device)
    if (pd.dev == dev) return pd.module;
  return nullptr;
}

namespace {

// The kinds this driver loads (the driver itself decides whether the image fits the device).
bool loadable(image_kind kind) { return (info().image_kinds & (1u << unsigned(kind))) != 0; }

// The build options a driver's JIT takes (-O0..-O4, --maxrregcount=N); the others
// are returned, to be named in the build log.
std::string parse_options(const std::string &options, jit_request &jit) {
  std::string ignored;
  std::istringstream in(options);
  std::string opt;
  while (in >> opt) {
    if (opt.size() == 3 && opt[0] == '-' && opt[1] == 'O' && opt[2] >= '0' && opt[2] <= '4')
      jit.opt_level = opt[2] - '0';
    else if (opt.rfind("--maxrregcount=", 0) == 0 || opt.rfind("-maxrregcount=", 0) == 0)
      jit.max_registers = unsigned(std::strtoul(opt.c_str() + opt.find('=') + 1, nullptr, 10));
    else
      ignored += (ignored.empty() ? "" : " ") + opt;
  }
  return ignored;
}

// The driver's message buffers for one JIT or link, read back as one log.
struct JitLogs {
  static constexpr size_t kLog = 16 * 1024;
  std::vector<char> info = std::vector<char>(kLog, 0), error = std::vector<char>(kLog, 0);
  explicit JitLogs(jit_request &jit) {
    jit.info_log = info.data();
    jit.error_log = error.data();
    jit.log_size = kLog;
  }
  std::string text() {
    info.back() = error.back() = 0;
    std::string out = info.data();
    if (error[0]) out += (out.empty() ? "" : "\n") + std::string(error.data());
    return out;
  }
};

// Loads one device's image; the program mutex is held.
ur_result_t build_one(Program::PerDevice &pd, const std::string &options) {
  if (pd.module) {
    ORDO_DRV(pd.dev->make_current());
    drv::module_unload(pd.module);
    pd.module = nullptr;
  }
  image_kind kind = classify_image(pd.image.data(), pd.image.size());
  pd.options = options;
  pd.log.clear();
  if (!loadable(kind)) {
    pd.status = UR_PROGRAM_BUILD_STATUS_ERROR;
    pd.log = kind == image_kind::spirv
                 ? std::string("SPIR-V cannot be loaded by the ") + info().display_name + " driver"
                 : std::string("not an image the ") + info().display_name + " driver loads";
    return UR_RESULT_ERROR_INVALID_BINARY;
  }
  ORDO_DRV(pd.dev->make_current());
  jit_request jit;
  JitLogs logs(jit);
  const std::string ignored = parse_options(options, jit);
  status r = drv::module_load(&pd.module, pd.image, jit);
  pd.log = logs.text();
  if (!ignored.empty()) pd.log += (pd.log.empty() ? "" : "\n") + ("options not used by the JIT: " + ignored);
  if (r) {
    pd.module = nullptr;
    pd.status = UR_PROGRAM_BUILD_STATUS_ERROR;
    if (pd.log.empty()) pd.log = "loading the module: " + drv::error_text(r);
    return r.kind == err::out_of_memory ? UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE;
  }
  pd.status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t function_names(Program::PerDevice &pd, std::vector<std::string> &names) {
  ORDO_DRV(pd.dev->make_current());
  status listed = drv::module_function_names(pd.module, names);
  if (listed.kind == err::not_supported) {
    // The driver cannot list them: the image can.
    names.clear();
    bool read = pd.is_ptx ? ptx_kernel_names(pd.image, names) : elf_kernel_names(pd.image, names);
    return read ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  }
  return to_ur(listed);
}

namespace {

struct program_hooks : handle_types {
  static constexpr bool flags_before_size = false;
  static bool links() { return info().linking; }
  // The driver's linker over each part's image (PTX, cubin or fatbinary) for one device.
  static ur_result_t link(Device *d, const std::vector<const Program::PerDevice *> &parts, const std::string &options,
                          std::vector<uint8_t> &image, std::string &log) {
    ORDO_DRV(d->make_current());
    jit_request jit;
    JitLogs logs(jit);
    parse_options(options, jit);
    std::vector<const std::vector<uint8_t> *> images;
    for (const Program::PerDevice *pd : parts) images.push_back(&pd->image);
    status r = drv::link(images, jit, image);
    log = logs.text();
    if (r)
      return r.kind == err::out_of_memory ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_PROGRAM_LINK_FAILURE;
    return UR_RESULT_SUCCESS;
  }
  // Not an image the driver loads: no native binary for this device.
  static ur_result_t check_binary(const uint8_t *data, size_t size) {
    return loadable(classify_image(data, size)) ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_NATIVE_BINARY;
  }
  // The intermediate language taken is PTX (CUDA, HIP on NVIDIA); SPIR-V has no consumer here.
  static bool check_il(const uint8_t *data, size_t size) { return classify_image(data, size) == image_kind::ptx; }
  static void prepare(Program::PerDevice &pd) {
    pd.is_ptx = classify_image(pd.image.data(), pd.image.size()) == image_kind::ptx;
    // The JIT reads PTX as a C string.
    if (pd.is_ptx && (pd.image.empty() || pd.image.back() != 0)) pd.image.push_back(0);
  }
  static ur_result_t build_one(Program *, Program::PerDevice &pd, const std::string &options) {
    return stream_backend::build_one(pd, options);
  }
  static void unload(Program::PerDevice &pd) {
    if (!pd.dev->make_current()) drv::module_unload(pd.module);
  }
  static void context_hold(Context *c) { stream_backend::context_hold(c); }
  static void context_drop(Context *c) { stream_backend::context_drop(c); }
  static ur_result_t function_pointer(Device *d, module_t m, const char *name, void **out) {
    ORDO_DRV(d->make_current());
    function_t f = nullptr;
    status r = drv::module_get_function(&f, m, name);
    if (r.kind == err::not_found) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
    ORDO_DRV(r);
    // The drivers have no device function addresses to hand out; the function handle is
    // what identifies the kernel.
    *out = reinterpret_cast<void *>(f);
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t global_variable(Device *d, module_t m, const char *name, size_t *size, void **out) {
    ORDO_DRV(d->make_current());
    status r = drv::module_get_global(out, size, m, name);
    if (r.kind == err::not_found) return UR_RESULT_ERROR_INVALID_VALUE;
    return to_ur(r);
  }
  static size_t image_size(const Program::PerDevice &pd) {
    return pd.is_ptx ? pd.image.size() - 1 : pd.image.size(); // without the NUL we added
  }
  static ur_result_t kernel_names(Program::PerDevice &built, std::string &names, size_t &kernels) {
    std::vector<std::string> all;
    if (ur_result_t r = function_names(built, all)) return r;
    // A <name>_with_offset beside <name> is how <name> runs with a global offset,
    // not a kernel of its own.
    const std::string suffix = kOffsetSuffix;
    for (const std::string &name : all) {
      bool variant = name.size() > suffix.size() &&
                     name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                     std::find(all.begin(), all.end(), name.substr(0, name.size() - suffix.size())) != all.end();
      if (variant) continue;
      ++kernels;
      names += (names.empty() ? "" : ";") + name;
    }
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::ur_common::program_entry_points<program_hooks>;

} // namespace

void program_drop(Program *p) { entry_points::drop(p); }
void install_program_entry_points(ur_dditable_t &t) { entry_points::install(t); }

} // namespace ordo::stream_backend
