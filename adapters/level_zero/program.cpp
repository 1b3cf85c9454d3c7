// Programs: SPIR-V (urProgramCreateWithIL, ZE_MODULE_FORMAT_IL_SPIRV) or a device's
// native binary (urProgramCreateWithBinary, ZE_MODULE_FORMAT_NATIVE), built with
// zeModuleCreate; the driver's build log is kept as the program's.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "common.hpp"
#include "entry_points.hpp"
#include "ordo/info.hpp"

namespace ordo::l0 {

void program_hold(Program *p) { p->life.hold(); }

void program_drop(Program *p) {
  if (!p->life.drop()) return;
  for (auto &pd : p->per_device)
    if (pd.module) ze().zeModuleDestroy(pd.module);
  Context *ctx = p->ctx;
  p->tag = Tag::dead;
  delete p;
  context_drop(ctx);
}

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
    pd.image.assign(data, data + size);
    p->per_device.push_back(std::move(pd));
  }
  context_hold(ctx);
  *out = reinterpret_cast<ur_program_handle_t>(p);
  return UR_RESULT_SUCCESS;
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
    ur_result_t r = build_one(p, pd, opts);
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
    // SPIR-V is no device's native binary (the driver judges everything else).
    if (is_spirv(ppBinaries[i], pLengths[i])) return UR_RESULT_ERROR_INVALID_NATIVE_BINARY;
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
  if (!is_spirv(static_cast<const uint8_t *>(pIL), length)) return UR_RESULT_ERROR_INVALID_BINARY;
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
  if (flags & UR_EXP_PROGRAM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
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

// Modules are built whole (zeModuleCreate); a separate compile step, and the link
// after it, are not offered. The arguments are checked all the same.
ur_result_t UR_APICALL urProgramCompileExp(ur_program_handle_t hProgram, uint32_t numDevices,
                                           ur_device_handle_t *phDevices, ur_exp_program_flags_t flags,
                                           const char *pOptions) {
  ORDO_UNWRAP(Program, p, hProgram);
  (void)pOptions;
  if (!phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_EXP_PROGRAM_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < numDevices; ++i) {
    ORDO_UNWRAP(Device, d, phDevices[i]);
    bool mine = false;
    for (auto &pd : p->per_device) mine = mine || pd.dev == d;
    if (!mine) return UR_RESULT_ERROR_INVALID_DEVICE;
  }
  return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
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
  ze_module_handle_t m = p->module_for(d);
  if (!m) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
  ze_result_t r = ze().zeModuleGetFunctionPointer(m, pFunctionName, ppFunctionPointer);
  if (r == ZE_RESULT_ERROR_INVALID_FUNCTION_NAME) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  ORDO_ZE(r);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramGetInfo(ur_program_handle_t hProgram, ur_program_info_t propName,
                                        size_t propSize, void *pPropValue, size_t *pPropSizeRet) {
  ORDO_UNWRAP(Program, p, hProgram);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  std::lock_guard<std::mutex> lock(p->mutex);
  auto image_size = [](const Program::PerDevice &pd) { return pd.image.size(); };
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
    uint32_t count = 0;
    ORDO_ZE(ze().zeModuleGetKernelNames(built->module, &count, nullptr));
    std::vector<const char *> list(count);
    ORDO_ZE(ze().zeModuleGetKernelNames(built->module, &count, list.data()));
    std::string names;
    size_t kernels = count;
    for (uint32_t i = 0; i < count; ++i) names += (i ? ";" : "") + std::string(list[i]);
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
      // Modules are whole programs: nothing is left to link.
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

} // namespace ordo::l0
