// Programs from the images the driver loads (PTX, cubin, fatbinary; HIP code objects),
// with what the driver's loader or JIT reports kept as the build log.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "backend.hpp"
#include "image.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::sb {

void program_hold(Program *p) { p->life.hold(); }

void program_drop(Program *p) {
  if (!p->life.drop()) return;
  for (auto &pd : p->per_device) {
    if (pd.module && !pd.dev->make_current()) drv::module_unload(pd.module);
  }
  Context *ctx = p->ctx;
  p->tag = Tag::dead;
  delete p;
  context_drop(ctx);
}

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

ur_result_t check_properties(const ur_program_properties_t *props) {
  if (!props) return UR_RESULT_SUCCESS;
  if (props->count > 0 && !props->pMetadatas) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (props->pMetadatas && props->count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  return UR_RESULT_SUCCESS;
}

ur_result_t make_program(Context *ctx, const std::vector<Device *> &devices,
                         const std::vector<std::pair<const uint8_t *, size_t>> &images, bool from_il,
                         ur_program_handle_t *out) {
  auto *p = new Program();
  p->ctx = ctx;
  p->from_il = from_il;
  for (size_t i = 0; i < devices.size(); ++i) {
    Program::PerDevice pd;
    pd.dev = devices[i];
    const uint8_t *data = images[i].first;
    size_t size = images[i].second;
    pd.is_ptx = classify_image(data, size) == image_kind::ptx;
    pd.image.assign(data, data + size);
    // The JIT reads PTX as a C string.
    if (pd.is_ptx && (pd.image.empty() || pd.image.back() != 0)) pd.image.push_back(0);
    p->per_device.push_back(std::move(pd));
  }
  context_hold(ctx);
  *out = reinterpret_cast<ur_program_handle_t>(p);
  return UR_RESULT_SUCCESS;
}

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
    pd.log = kind == image_kind::spirv ? std::string("SPIR-V cannot be loaded by the ") + info().display_name +
                                             " driver"
                                       : std::string("not an image the ") + info().display_name + " driver loads";
    return UR_RESULT_ERROR_INVALID_BINARY;
  }
  ORDO_DRV(pd.dev->make_current());
  constexpr size_t kLog = 16 * 1024;
  std::vector<char> info_log(kLog, 0), error_log(kLog, 0);
  jit_request jit;
  jit.info_log = info_log.data();
  jit.error_log = error_log.data();
  jit.log_size = kLog;
  const std::string ignored = parse_options(options, jit);
  status r = drv::module_load(&pd.module, pd.image, jit);
  info_log.back() = error_log.back() = 0;
  pd.log = info_log.data();
  if (error_log[0]) pd.log += (pd.log.empty() ? "" : "\n") + std::string(error_log.data());
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

ur_result_t build(Program *p, const std::vector<Device *> *only, const char *options) {
  std::lock_guard<std::mutex> lock(p->mutex);
  if (p->life.holders.load() > 1)
    return UR_RESULT_ERROR_INVALID_OPERATION; // kernels still use the loaded modules
  std::string opts = options ? options : "";
  ur_result_t result = UR_RESULT_SUCCESS;
  bool any = false;
  for (auto &pd : p->per_device) {
    if (only) {
      bool listed = false;
      for (Device *d : *only) listed = listed || d == pd.dev;
      if (!listed) continue;
    }
    ur_result_t r = build_one(pd, opts);
    if (r != UR_RESULT_SUCCESS && result == UR_RESULT_SUCCESS) result = r;
    any = any || r == UR_RESULT_SUCCESS;
  }
  p->built.store(any);
  return result;
}

} // namespace

ur_result_t UR_APICALL urProgramCreateWithBinary(ur_context_handle_t hContext, uint32_t numDevices,
                                                 ur_device_handle_t *phDevices, size_t *pLengths,
                                                 const uint8_t **ppBinaries,
                                                 const ur_program_properties_t *pProperties,
                                                 ur_program_handle_t *phProgram) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!phDevices || !pLengths || !ppBinaries || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_properties(pProperties)) return r;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  std::vector<Device *> devices;
  std::vector<std::pair<const uint8_t *, size_t>> images;
  for (uint32_t i = 0; i < numDevices; ++i) {
    ORDO_UNWRAP(Device, d, phDevices[i]);
    if (ctx->index_of(d) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
    if (!ppBinaries[i]) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pLengths[i] == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    // Not an image the driver loads: no native binary for this device.
    image_kind kind = classify_image(ppBinaries[i], pLengths[i]);
    if (!loadable(kind)) return UR_RESULT_ERROR_INVALID_NATIVE_BINARY;
    devices.push_back(d);
    images.emplace_back(ppBinaries[i], pLengths[i]);
  }
  return make_program(ctx, devices, images, false, phProgram);
}

ur_result_t UR_APICALL urProgramCreateWithIL(ur_context_handle_t hContext, const void *pIL, size_t length,
                                             const ur_program_properties_t *pProperties,
                                             ur_program_handle_t *phProgram) {
  ORDO_UNWRAP(Context, ctx, hContext);
  if (!pIL || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_properties(pProperties)) return r;
  if (length == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  // The intermediate language taken is PTX (CUDA, HIP on NVIDIA); SPIR-V has no consumer here.
  if (classify_image(static_cast<const uint8_t *>(pIL), length) != image_kind::ptx)
    return UR_RESULT_ERROR_INVALID_BINARY;
  std::vector<std::pair<const uint8_t *, size_t>> images(
      ctx->devices.size(), {static_cast<const uint8_t *>(pIL), length});
  return make_program(ctx, ctx->devices, images, true, phProgram);
}

ur_result_t UR_APICALL urProgramBuild(ur_context_handle_t hContext, ur_program_handle_t hProgram,
                                      const char *pOptions) {
  ORDO_UNWRAP(Context, ctx, hContext);
  ORDO_UNWRAP(Program, p, hProgram);
  if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return build(p, nullptr, pOptions);
}

ur_result_t UR_APICALL urProgramBuildExp(ur_program_handle_t hProgram, uint32_t numDevices,
                                         ur_device_handle_t *phDevices, ur_exp_program_flags_t flags,
                                         const char *pOptions) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (!phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (flags & UR_EXP_PROGRAM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  std::vector<Device *> only;
  for (uint32_t i = 0; i < numDevices; ++i) {
    ORDO_UNWRAP(Device, d, phDevices[i]);
    bool mine = false;
    for (auto &pd : p->per_device) mine = mine || pd.dev == d;
    if (!mine) return UR_RESULT_ERROR_INVALID_DEVICE;
    only.push_back(d);
  }
  return build(p, &only, pOptions);
}

ur_result_t UR_APICALL urProgramRetain(ur_program_handle_t hProgram) {
  ORDO_UNWRAP(Program, p, hProgram);
  p->retain();
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramRelease(ur_program_handle_t hProgram) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (p->release()) program_drop(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramGetFunctionPointer(ur_device_handle_t hDevice, ur_program_handle_t hProgram,
                                                   const char *pFunctionName, void **ppFunctionPointer) {
  ORDO_UNWRAP(Device, d, hDevice);
  ORDO_UNWRAP(Program, p, hProgram);
  if (!pFunctionName || !ppFunctionPointer) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  std::lock_guard<std::mutex> lock(p->mutex);
  module_t m = p->module_for(d);
  if (!m) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
  ORDO_DRV(d->make_current());
  function_t f = nullptr;
  status r = drv::module_get_function(&f, m, pFunctionName);
  if (r.kind == err::not_found) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  ORDO_DRV(r);
  // The drivers have no device function addresses to hand out; the function handle is
  // what identifies the kernel.
  *ppFunctionPointer = reinterpret_cast<void *>(f);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramGetInfo(ur_program_handle_t hProgram, ur_program_info_t propName,
                                        size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  std::lock_guard<std::mutex> lock(p->mutex);
  auto image_size = [](const Program::PerDevice &pd) {
    return pd.is_ptx ? pd.image.size() - 1 : pd.image.size(); // without the NUL we added
  };
  switch (propName) {
  case UR_PROGRAM_INFO_REFERENCE_COUNT: return out.value(p->count());
  case UR_PROGRAM_INFO_CONTEXT: return out.value(reinterpret_cast<ur_context_handle_t>(p->ctx));
  case UR_PROGRAM_INFO_NUM_DEVICES: return out.value(static_cast<uint32_t>(p->per_device.size()));
  case UR_PROGRAM_INFO_DEVICES: {
    std::vector<ur_device_handle_t> list;
    for (auto &pd : p->per_device) list.push_back(reinterpret_cast<ur_device_handle_t>(pd.dev));
    return out.array(list);
  }
  case UR_PROGRAM_INFO_IL:
    if (!p->from_il) return out.bytes(nullptr, 0);
    return out.bytes(p->per_device[0].image.data(), image_size(p->per_device[0]));
  case UR_PROGRAM_INFO_BINARY_SIZES: {
    std::vector<size_t> sizes;
    for (auto &pd : p->per_device) sizes.push_back(image_size(pd));
    return out.array(sizes);
  }
  case UR_PROGRAM_INFO_BINARIES: {
    // The caller passes one buffer pointer per device, each BINARY_SIZES long.
    size_t n = p->per_device.size();
    if (pPropSizeRet) *pPropSizeRet = n * sizeof(unsigned char *);
    if (!pPropValue) return UR_RESULT_SUCCESS;
    if (propSize < n * sizeof(unsigned char *)) return UR_RESULT_ERROR_INVALID_SIZE;
    auto **buffers = static_cast<unsigned char **>(pPropValue);
    for (size_t i = 0; i < n; ++i)
      if (buffers[i]) std::memcpy(buffers[i], p->per_device[i].image.data(), image_size(p->per_device[i]));
    return UR_RESULT_SUCCESS;
  }
  case UR_PROGRAM_INFO_NUM_KERNELS:
  case UR_PROGRAM_INFO_KERNEL_NAMES: {
    Program::PerDevice *built = nullptr;
    for (auto &pd : p->per_device)
      if (pd.module && !built) built = &pd;
    if (!built) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
    ORDO_DRV(built->dev->make_current());
    std::vector<std::string> all;
    status listed = drv::module_function_names(built->module, all);
    if (listed.kind == err::not_supported) {
      // The driver cannot list them: the image can.
      all.clear();
      bool read = built->is_ptx ? ptx_kernel_names(built->image, all) : elf_kernel_names(built->image, all);
      if (!read) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
    } else if (listed) {
      return to_ur(listed);
    }
    // A <name>_with_offset beside <name> is how <name> runs with a global offset,
    // not a kernel of its own.
    std::string names;
    size_t kernels = 0;
    const std::string suffix = kOffsetSuffix;
    for (const std::string &name : all) {
      bool variant = name.size() > suffix.size() &&
                     name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                     std::find(all.begin(), all.end(), name.substr(0, name.size() - suffix.size())) != all.end();
      if (variant) continue;
      ++kernels;
      names += (names.empty() ? "" : ";") + name;
    }
    if (propName == UR_PROGRAM_INFO_NUM_KERNELS) return out.value(kernels);
    return out.string(names);
  }
  default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
  }
}

ur_result_t UR_APICALL urProgramGetBuildInfo(ur_program_handle_t hProgram, ur_device_handle_t hDevice,
                                             ur_program_build_info_t propName, size_t propSize,
                                             void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Program, p, hProgram);
  ORDO_UNWRAP(Device, d, hDevice);
  if (propName > UR_PROGRAM_BUILD_INFO_BINARY_TYPE) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  std::lock_guard<std::mutex> lock(p->mutex);
  for (auto &pd : p->per_device) {
    if (pd.dev != d) continue;
    switch (propName) {
    case UR_PROGRAM_BUILD_INFO_STATUS: return out.value(pd.status);
    case UR_PROGRAM_BUILD_INFO_OPTIONS: return out.string(pd.options);
    case UR_PROGRAM_BUILD_INFO_LOG: return out.string(pd.log);
    case UR_PROGRAM_BUILD_INFO_BINARY_TYPE:
      // PTX and cubin images are whole programs: nothing is left to link.
      return out.value(pd.image.empty() ? UR_PROGRAM_BINARY_TYPE_NONE : UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }
  return UR_RESULT_ERROR_INVALID_DEVICE;
}

ur_result_t UR_APICALL urProgramGetNativeHandle(ur_program_handle_t hProgram,
                                                ur_native_handle_t *phNativeProgram) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (!phNativeProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  std::lock_guard<std::mutex> lock(p->mutex);
  for (auto &pd : p->per_device) {
    if (pd.module) {
      *phNativeProgram = reinterpret_cast<ur_native_handle_t>(pd.module);
      return UR_RESULT_SUCCESS;
    }
  }
  return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
}

// PTX, cubin and code objects are finished by the driver's loader in one step: there is
// no separate compile and link. The arguments are still checked, so that a bad call gets
// its own error rather than UNSUPPORTED_FEATURE.
ur_result_t UR_APICALL urProgramCompileExp(ur_program_handle_t hProgram, uint32_t numDevices,
                                           ur_device_handle_t *phDevices, ur_exp_program_flags_t flags,
                                           const char *) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (!phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (flags & UR_EXP_PROGRAM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  for (uint32_t i = 0; i < numDevices; ++i) {
    ORDO_UNWRAP(Device, d, phDevices[i]);
    bool mine = false;
    for (auto &pd : p->per_device) mine = mine || pd.dev == d;
    if (!mine) return UR_RESULT_ERROR_INVALID_DEVICE;
  }
  return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

} // namespace ordo::sb
