// SPDX-License-Identifier: Apache-2.0
// urProgram*: programs from native CPU binaries (ELF shared objects). There is
// nothing to compile: build, compile and link record their options and a log.
#include "program.hpp"

#include <cstring>
#include <set>

#include "context.hpp"
#include "entry_points.hpp"
#include "logging.hpp"
#include "ordo/info.hpp"
#include "platform.hpp"

namespace ordo::native_cpu {

Program::Program(Context *c, std::vector<std::shared_ptr<ElfModule>> mods) : ctx(c), modules(std::move(mods)) {
  ctx->hold();
}
Program::~Program() { ctx->drop_hold(); }

const ordo_nc_kernel_desc *Program::find_kernel(const char *name) const {
  for (const auto &m : modules)
    if (const ordo_nc_kernel_desc *k = m->find_kernel(name)) return k;
  return nullptr;
}

namespace {

size_t count_kernels(const Program &p) {
  size_t n = 0;
  for (const auto &m : p.modules) n += m->kernels().size();
  return n;
}

std::string describe(const Program &p) {
  size_t bytes = 0;
  for (const auto &m : p.modules) bytes += m->binary().size();
  return std::to_string(count_kernels(p)) + " kernel(s) in " + std::to_string(p.modules.size()) +
         " native CPU module(s), " + std::to_string(bytes) + " bytes of machine code; nothing to compile.";
}

ur_result_t UR_APICALL urProgramCreateWithBinary(ur_context_handle_t hContext, uint32_t numDevices,
                                                 ur_device_handle_t *phDevices, size_t *pLengths,
                                                 const uint8_t **ppBinaries, const ur_program_properties_t *pProperties,
                                                 ur_program_handle_t *phProgram) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!phDevices || !pLengths || !ppBinaries || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && pProperties->count > 0 && !pProperties->pMetadatas) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pProperties && pProperties->pMetadatas && pProperties->count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < numDevices; ++i)
    if (!is_device(phDevices[i])) return device_error(phDevices[i]);
  if (numDevices > 1) {
    NC_LOG(warning, "urProgramCreateWithBinary: one binary per device, and this platform has one device");
    return UR_RESULT_ERROR_INVALID_VALUE;
  }
  if (!ppBinaries[0]) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pLengths[0] == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  ur_result_t error;
  std::string message;
  auto module = ElfModule::load(ppBinaries[0], pLengths[0], &error, &message);
  if (!module) {
    NC_LOG(warning, "urProgramCreateWithBinary: %s", message.c_str());
    return error;
  }
  auto *p = new Program(ctx, {std::move(module)});
  p->log = "Loaded " + describe(*p);
  *phProgram = publish(p);
  return UR_RESULT_SUCCESS;
}

ur_result_t build_like(ur_context_handle_t hContext, ur_program_handle_t hProgram, const char *pOptions,
                       ur_program_binary_type_t result_type, const char *verb) {
  ORDO_LOOKUP(Context, ctx, hContext);
  ORDO_LOOKUP(Program, p, hProgram);
  if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lock(p->mu);
  p->options = pOptions ? pOptions : "";
  p->log = std::string(verb) + ": " + describe(*p);
  if (!p->options.empty()) p->log += " Options ignored: " + p->options;
  p->status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
  p->binary_type = result_type;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramBuild(ur_context_handle_t hContext, ur_program_handle_t hProgram,
                                      const char *pOptions) {
  return build_like(hContext, hProgram, pOptions, UR_PROGRAM_BINARY_TYPE_EXECUTABLE, "Built");
}

ur_result_t UR_APICALL urProgramCompile(ur_context_handle_t hContext, ur_program_handle_t hProgram,
                                        const char *pOptions) {
  return build_like(hContext, hProgram, pOptions, UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "Compiled");
}

// Linking gathers the modules of every input into one program; a kernel name
// defined twice is a link failure.
ur_result_t UR_APICALL urProgramLink(ur_context_handle_t hContext, uint32_t count,
                                     const ur_program_handle_t *phPrograms, const char *pOptions,
                                     ur_program_handle_t *phProgram) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!phPrograms || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < count; ++i) {
    Program *in = lookup<Program>(phPrograms[i]);
    if (!in) return UR_RESULT_ERROR_INVALID_PROGRAM;
    if (in->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  }
  *phProgram = nullptr;
  std::vector<std::shared_ptr<ElfModule>> modules;
  std::set<std::string> names;
  for (uint32_t i = 0; i < count; ++i) {
    for (const auto &m : reinterpret_cast<Program *>(phPrograms[i])->modules) {
      for (const ordo_nc_kernel_desc *k : m->kernels()) {
        if (!names.insert(k->name).second) {
          NC_LOG(warning, "urProgramLink: kernel '%s' is defined by more than one input", k->name);
          return UR_RESULT_ERROR_PROGRAM_LINK_FAILURE;
        }
      }
      modules.push_back(m);
    }
  }
  auto *p = new Program(ctx, std::move(modules));
  p->options = pOptions ? pOptions : "";
  p->log = "Linked " + std::to_string(count) + " program(s): " + describe(*p);
  p->status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
  p->binary_type = UR_PROGRAM_BINARY_TYPE_EXECUTABLE;
  *phProgram = publish(p);
  return UR_RESULT_SUCCESS;
}

void *find_symbol(const Program &p, const char *name, size_t *size) {
  for (const auto &m : p.modules)
    if (void *at = m->symbol(name, size)) return at;
  return nullptr;
}

// A kernel's name gives its work-group entry point; any other exported function
// of the program is found by its symbol name.
ur_result_t UR_APICALL urProgramGetFunctionPointer(ur_device_handle_t hDevice, ur_program_handle_t hProgram,
                                                   const char *pFunctionName, void **ppFunctionPointer) {
  if (!is_device(hDevice)) return device_error(hDevice);
  ORDO_LOOKUP(Program, p, hProgram);
  if (!pFunctionName || !ppFunctionPointer) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  const ordo_nc_kernel_desc *k = p->find_kernel(pFunctionName);
  void *f = k ? reinterpret_cast<void *>(k->run_group) : find_symbol(*p, pFunctionName, nullptr);
  if (!f) return UR_RESULT_ERROR_INVALID_KERNEL_NAME;
  *ppFunctionPointer = f;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramGetGlobalVariablePointer(ur_device_handle_t hDevice, ur_program_handle_t hProgram,
                                                         const char *pGlobalVariableName,
                                                         size_t *pGlobalVariableSizeRet,
                                                         void **ppGlobalVariablePointerRet) {
  if (!is_device(hDevice)) return device_error(hDevice);
  ORDO_LOOKUP(Program, p, hProgram);
  if (!pGlobalVariableName || !ppGlobalVariablePointerRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t size = 0;
  void *v = find_symbol(*p, pGlobalVariableName, &size);
  if (!v) return UR_RESULT_ERROR_INVALID_VALUE;
  if (pGlobalVariableSizeRet) *pGlobalVariableSizeRet = size;
  *ppGlobalVariablePointerRet = v;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urProgramGetInfo(ur_program_handle_t hProgram, ur_program_info_t propName, size_t propSize,
                                        void *pPropValue, size_t *pPropSizeRet) {
  ORDO_LOOKUP(Program, p, hProgram);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  // One binary to give back only when the program is one module.
  const std::vector<uint8_t> *binary = p->modules.size() == 1 ? &p->modules[0]->binary() : nullptr;
  bool executable;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    executable = p->status == UR_PROGRAM_BUILD_STATUS_SUCCESS && p->binary_type == UR_PROGRAM_BINARY_TYPE_EXECUTABLE;
  }
  switch (propName) {
  case UR_PROGRAM_INFO_REFERENCE_COUNT: return out.value(p->count());
  case UR_PROGRAM_INFO_CONTEXT: return out.value(to_handle(p->ctx));
  case UR_PROGRAM_INFO_NUM_DEVICES: return out.value(uint32_t{1});
  case UR_PROGRAM_INFO_DEVICES: {
    ur_device_handle_t dev = device_handle();
    return out.array(&dev, 1);
  }
  case UR_PROGRAM_INFO_IL: return out.bytes("", 0); // made from a binary, not from IL (a non-null empty source)
  case UR_PROGRAM_INFO_BINARY_SIZES: return out.value(binary ? binary->size() : size_t{0});
  case UR_PROGRAM_INFO_BINARIES: {
    // pPropValue is an array of one caller buffer to copy the binary into.
    if (pPropSizeRet) *pPropSizeRet = sizeof(unsigned char *);
    if (!pPropValue) return UR_RESULT_SUCCESS;
    if (propSize < sizeof(unsigned char *)) return UR_RESULT_ERROR_INVALID_SIZE;
    unsigned char *dst = static_cast<unsigned char **>(pPropValue)[0];
    if (dst && binary) std::memcpy(dst, binary->data(), binary->size());
    return UR_RESULT_SUCCESS;
  }
  case UR_PROGRAM_INFO_NUM_KERNELS:
    if (!executable) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
    return out.value(count_kernels(*p));
  case UR_PROGRAM_INFO_KERNEL_NAMES: {
    if (!executable) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
    std::string names;
    for (const auto &m : p->modules)
      for (const ordo_nc_kernel_desc *k : m->kernels()) names += (names.empty() ? "" : ";") + std::string(k->name);
    return out.string(names);
  }
  case UR_PROGRAM_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

ur_result_t UR_APICALL urProgramGetBuildInfo(ur_program_handle_t hProgram, ur_device_handle_t hDevice,
                                             ur_program_build_info_t propName, size_t propSize, void *pPropValue,
                                             size_t *pPropSizeRet) {
  ORDO_LOOKUP(Program, p, hProgram);
  if (!is_device(hDevice)) return device_error(hDevice);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  std::lock_guard<std::mutex> lock(p->mu);
  switch (propName) {
  case UR_PROGRAM_BUILD_INFO_STATUS: return out.value(p->status);
  case UR_PROGRAM_BUILD_INFO_OPTIONS: return out.string(p->options);
  case UR_PROGRAM_BUILD_INFO_LOG: return out.string(p->log);
  case UR_PROGRAM_BUILD_INFO_BINARY_TYPE: return out.value(p->binary_type);
  case UR_PROGRAM_BUILD_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

} // namespace

void install_program_entry_points(ur_dditable_t &t) {
  t.Program.pfnCreateWithBinary = urProgramCreateWithBinary;
  t.Program.pfnBuild = urProgramBuild;
  t.Program.pfnCompile = urProgramCompile;
  t.Program.pfnLink = urProgramLink;
  t.Program.pfnRetain = user_retain<Program>;
  t.Program.pfnRelease = user_release<Program>;
  t.Program.pfnGetFunctionPointer = urProgramGetFunctionPointer;
  t.Program.pfnGetGlobalVariablePointer = urProgramGetGlobalVariablePointer;
  t.Program.pfnGetInfo = urProgramGetInfo;
  t.Program.pfnGetBuildInfo = urProgramGetBuildInfo;
}

} // namespace ordo::native_cpu
