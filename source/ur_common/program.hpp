// SPDX-License-Identifier: Apache-2.0
// urProgram* written once for adapters whose program keeps one image, module, build
// status, options and log per device. The adapter says how images are judged and
// built and what its modules answer:
//
//   struct hooks {  // handle types are ordo::object (ordo/object.hpp, unwrap)
//     using Program = ...;  // ordo::object with ctx, from_il, mutex, per_device, built,
//                           // module_for(dev); PerDevice: dev, image, module, status, options, log
//     using Context = ...; using Device = ...;
//     static constexpr bool flags_before_size;  // which refusal BuildExp/CompileExp give first
//     static ur_result_t check_binary(const uint8_t *, size_t);  // a device's native binary?
//     static bool check_il(const uint8_t *, size_t);
//     static void prepare(PerDevice &);                      // after the image is copied
//     static ur_result_t build_one(Program *, PerDevice &, const std::string &options);
//     static void unload(PerDevice &);                       // the module, at the end
//     static void context_hold(Context *), context_drop(Context *);
//     static ur_result_t function_pointer(Device *, module, const char *, void **);
//     static ur_result_t global_variable(Device *, module, const char *, size_t *, void **);
//                                     // INVALID_VALUE where the module has no such global
//     static size_t image_size(const PerDevice &);           // as the user gave it
//     static ur_result_t kernel_names(PerDevice &built, std::string &names, size_t &count);
//     static bool links();                                   // urProgramLink is offered
//     static ur_result_t link(Device *, const std::vector<const PerDevice *> &parts,
//                             const std::string &options, std::vector<uint8_t> &image, std::string &log);
//   };
// PerDevice also has `owned` (the module is unloaded with the program) and `compiled`
// (urProgramCompile made it: a compiled object, for linking).
#pragma once

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ordo/info.hpp"
#include "ordo/retired_handles.hpp"
#include "ur_common/handles.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

template <class H> struct program_entry_points {
  using Program = typename H::Program;
  using PerDevice = typename Program::PerDevice;
  using Context = typename H::Context;
  using Device = typename H::Device;
  using images_t = std::vector<std::pair<const uint8_t *, size_t>>;

  static void drop(Program *p) {
    if (!p->drop()) return;
    for (auto &pd : p->per_device)
      if (pd.module && pd.owned) H::unload(pd);
    Context *ctx = p->ctx;
    ordo::retire(p);
    H::context_drop(ctx);
  }

  // A program over the caller's loaded module: built, for the context's one device (a
  // module belongs to one device); unloaded with the program only when handed over.
  static ur_result_t UR_APICALL create_with_native(ur_native_handle_t hNative, ur_context_handle_t hContext,
                                                   const ur_program_native_properties_t *pProperties,
                                                   ur_program_handle_t *phProgram) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!hNative) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (ctx->devices.size() != 1) return UR_RESULT_ERROR_INVALID_CONTEXT; // which device's module
    auto *p = new Program();
    p->ctx = ctx;
    PerDevice pd;
    pd.dev = ctx->devices[0];
    pd.module = reinterpret_cast<decltype(pd.module)>(hNative);
    pd.status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
    pd.owned = pProperties && pProperties->isNativeHandleOwned;
    p->per_device.push_back(std::move(pd));
    p->built.store(true);
    H::context_hold(ctx);
    *phProgram = reinterpret_cast<ur_program_handle_t>(p);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t check_properties(const ur_program_properties_t *props) {
    if (!props) return UR_RESULT_SUCCESS;
    if (props->count > 0 && !props->pMetadatas) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (props->pMetadatas && props->count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t make(Context *ctx, const std::vector<Device *> &devices, const images_t &images, bool from_il,
                          ur_program_handle_t *out) {
    auto *p = new Program();
    p->ctx = ctx;
    p->from_il = from_il;
    for (size_t i = 0; i < devices.size(); ++i) {
      PerDevice pd;
      pd.dev = devices[i];
      pd.image.assign(images[i].first, images[i].first + images[i].second);
      H::prepare(pd);
      p->per_device.push_back(std::move(pd));
    }
    H::context_hold(ctx);
    *out = reinterpret_cast<ur_program_handle_t>(p);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t build(Program *p, const std::vector<Device *> *only, const char *options) {
    std::lock_guard<std::mutex> lock(p->mutex);
    if (p->holders.load() > 1) return UR_RESULT_ERROR_INVALID_OPERATION; // kernels still use the loaded modules
    std::string opts = options ? options : "";
    ur_result_t result = UR_RESULT_SUCCESS;
    bool any = false;
    for (auto &pd : p->per_device) {
      if (only) {
        bool listed = false;
        for (Device *d : *only) listed = listed || d == pd.dev;
        if (!listed) continue;
      }
      ur_result_t r = H::build_one(p, pd, opts);
      pd.compiled = false; // a build makes an executable
      if (r != UR_RESULT_SUCCESS && result == UR_RESULT_SUCCESS) result = r;
      any = any || r == UR_RESULT_SUCCESS;
    }
    p->built.store(any);
    return result;
  }

  // A driver finishes a module in one step, so a compile is a build; what it made is a
  // compiled object (BUILD_INFO_BINARY_TYPE) that runs as it is or is linked with others.
  static ur_result_t compile(Program *p, const std::vector<Device *> *only, const char *options) {
    ur_result_t r = build(p, only, options);
    std::lock_guard<std::mutex> lock(p->mutex);
    for (auto &pd : p->per_device) {
      bool named = !only;
      for (Device *d : only ? *only : std::vector<Device *>{}) named = named || d == pd.dev;
      if (named) pd.compiled = pd.status == UR_PROGRAM_BUILD_STATUS_SUCCESS;
    }
    return r;
  }

  // urProgramBuild / urProgramCompile: a program of the context, every device.
  template <ur_result_t (*Step)(Program *, const std::vector<Device *> *, const char *)>
  static ur_result_t UR_APICALL whole_program(ur_context_handle_t hContext, ur_program_handle_t hProgram,
                                              const char *pOptions) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
    return Step(p, nullptr, pOptions);
  }

  // A new program: per device of the context, the backend's link of every input's image
  // for that device, loaded as a build would.
  static ur_result_t UR_APICALL link(ur_context_handle_t hContext, uint32_t count,
                                     const ur_program_handle_t *phPrograms, const char *pOptions,
                                     ur_program_handle_t *phProgram) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!phPrograms || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (count == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    std::vector<Program *> inputs;
    for (uint32_t i = 0; i < count; ++i) {
      Program *p = nullptr;
      if (ur_result_t r = unwrap(phPrograms[i], p)) return r;
      if (p->ctx != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
      inputs.push_back(p);
    }
    const std::string options = pOptions ? pOptions : "";
    std::vector<std::vector<uint8_t>> linked(ctx->devices.size());
    for (size_t i = 0; i < ctx->devices.size(); ++i) {
      Device *d = ctx->devices[i];
      std::vector<const PerDevice *> parts;
      for (Program *p : inputs) {
        const PerDevice *found = nullptr;
        for (auto &pd : p->per_device)
          if (pd.dev == d && !pd.image.empty()) found = &pd;
        if (!found) return UR_RESULT_ERROR_INVALID_PROGRAM; // nothing to link for this device
        parts.push_back(found);
      }
      std::string log;
      if (ur_result_t r = H::link(d, parts, options, linked[i], log)) return r;
    }
    images_t images;
    for (auto &img : linked) images.emplace_back(img.data(), img.size());
    ur_program_handle_t out = nullptr;
    if (ur_result_t r = make(ctx, ctx->devices, images, false, &out)) return r;
    Program *made = nullptr;
    unwrap(out, made);
    if (ur_result_t r = build(made, nullptr, pOptions)) {
      drop(made);
      return r;
    }
    *phProgram = out;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL create_with_binary(ur_context_handle_t hContext, uint32_t numDevices,
                                                   ur_device_handle_t *phDevices, size_t *pLengths,
                                                   const uint8_t **ppBinaries,
                                                   const ur_program_properties_t *pProperties,
                                                   ur_program_handle_t *phProgram) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!phDevices || !pLengths || !ppBinaries || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = check_properties(pProperties)) return r;
    if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    std::vector<Device *> devices;
    images_t images;
    for (uint32_t i = 0; i < numDevices; ++i) {
      Device *d = nullptr;
      if (ur_result_t r = unwrap(phDevices[i], d)) return r;
      if (ctx->index_of(d) < 0) return UR_RESULT_ERROR_INVALID_DEVICE;
      if (!ppBinaries[i]) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
      if (pLengths[i] == 0) return UR_RESULT_ERROR_INVALID_SIZE;
      if (ur_result_t r = H::check_binary(ppBinaries[i], pLengths[i])) return r;
      devices.push_back(d);
      images.emplace_back(ppBinaries[i], pLengths[i]);
    }
    return make(ctx, devices, images, false, phProgram);
  }

  static ur_result_t UR_APICALL create_with_il(ur_context_handle_t hContext, const void *pIL, size_t length,
                                               const ur_program_properties_t *pProperties,
                                               ur_program_handle_t *phProgram) {
    Context *ctx = nullptr;
    if (ur_result_t r = unwrap(hContext, ctx)) return r;
    if (!pIL || !phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ur_result_t r = check_properties(pProperties)) return r;
    if (length == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    if (!H::check_il(static_cast<const uint8_t *>(pIL), length)) return UR_RESULT_ERROR_INVALID_BINARY;
    images_t images(ctx->devices.size(), {static_cast<const uint8_t *>(pIL), length});
    return make(ctx, ctx->devices, images, true, phProgram);
  }

  // The checks BuildExp and CompileExp share; `only` gets the devices named.
  static ur_result_t check_exp(Program *p, uint32_t numDevices, ur_device_handle_t *phDevices,
                               ur_exp_program_flags_t flags, std::vector<Device *> &only) {
    if (!phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    const bool bad_flags = (flags & UR_EXP_PROGRAM_FLAGS_MASK) != 0;
    if (H::flags_before_size && bad_flags) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    if (numDevices == 0) return UR_RESULT_ERROR_INVALID_SIZE;
    if (bad_flags) return UR_RESULT_ERROR_INVALID_ENUMERATION;
    for (uint32_t i = 0; i < numDevices; ++i) {
      Device *d = nullptr;
      if (ur_result_t r = unwrap(phDevices[i], d)) return r;
      bool mine = false;
      for (auto &pd : p->per_device) mine = mine || pd.dev == d;
      if (!mine) return UR_RESULT_ERROR_INVALID_DEVICE;
      only.push_back(d);
    }
    return UR_RESULT_SUCCESS;
  }

  // urProgramBuildExp and urProgramCompileExp: `Step` (build or compile) on the devices
  // named.
  template <ur_result_t (*Step)(Program *, const std::vector<Device *> *, const char *)>
  static ur_result_t UR_APICALL step_exp(ur_program_handle_t hProgram, uint32_t numDevices,
                                         ur_device_handle_t *phDevices, ur_exp_program_flags_t flags,
                                         const char *pOptions) {
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    std::vector<Device *> only;
    if (ur_result_t r = check_exp(p, numDevices, phDevices, flags, only)) return r;
    return Step(p, &only, pOptions);
  }

  static ur_result_t UR_APICALL retain(ur_program_handle_t hProgram) {
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    if (!p->retain_user()) return ordo::invalid_of(p);
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t UR_APICALL release(ur_program_handle_t hProgram) {
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    bool last_ = false;
    if (!p->release_user(last_)) return ordo::invalid_of(p);
    if (last_) drop(p);
    return UR_RESULT_SUCCESS;
  }

  // The checks of a lookup by name in the device's module, then `find(device, module)`
  // under the program's mutex.
  template <class Find>
  static ur_result_t in_module(ur_device_handle_t hDevice, ur_program_handle_t hProgram, bool pointers_given,
                               Find &&find) {
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    if (!pointers_given) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
    std::lock_guard<std::mutex> lock(p->mutex);
    auto m = p->module_for(d);
    if (!m) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
    return find(d, m);
  }

  static ur_result_t UR_APICALL function_pointer(ur_device_handle_t hDevice, ur_program_handle_t hProgram,
                                                 const char *pFunctionName, void **ppFunctionPointer) {
    return in_module(hDevice, hProgram, pFunctionName && ppFunctionPointer,
                     [&](Device *d, auto m) { return H::function_pointer(d, m, pFunctionName, ppFunctionPointer); });
  }

  static ur_result_t UR_APICALL global_variable(ur_device_handle_t hDevice, ur_program_handle_t hProgram,
                                                const char *pName, size_t *pSizeRet, void **ppPointerRet) {
    return in_module(hDevice, hProgram, pName && ppPointerRet, [&](Device *d, auto m) {
      size_t size = 0;
      void *at = nullptr;
      if (ur_result_t r = H::global_variable(d, m, pName, &size, &at)) return r;
      if (pSizeRet) *pSizeRet = size;
      *ppPointerRet = at;
      return UR_RESULT_SUCCESS;
    });
  }

  static ur_result_t UR_APICALL get_info(ur_program_handle_t hProgram, ur_program_info_t propName, size_t propSize,
                                         void *pPropValue, size_t *pPropSizeRet) {
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
    InfoWriter out(propSize, pPropValue, pPropSizeRet);
    std::lock_guard<std::mutex> lock(p->mutex);
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
      return out.bytes(p->per_device[0].image.data(), H::image_size(p->per_device[0]));
    case UR_PROGRAM_INFO_BINARY_SIZES: {
      std::vector<size_t> sizes;
      for (auto &pd : p->per_device) sizes.push_back(H::image_size(pd));
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
        if (buffers[i]) std::memcpy(buffers[i], p->per_device[i].image.data(), H::image_size(p->per_device[i]));
      return UR_RESULT_SUCCESS;
    }
    case UR_PROGRAM_INFO_NUM_KERNELS:
    case UR_PROGRAM_INFO_KERNEL_NAMES: {
      PerDevice *built = nullptr;
      for (auto &pd : p->per_device)
        if (pd.module && !built) built = &pd;
      if (!built) return UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE;
      std::string names;
      size_t kernels = 0;
      if (ur_result_t r = H::kernel_names(*built, names, kernels)) return r;
      if (propName == UR_PROGRAM_INFO_NUM_KERNELS) return out.value(kernels);
      return out.string(names);
    }
    default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
    }
  }

  static ur_result_t UR_APICALL build_info(ur_program_handle_t hProgram, ur_device_handle_t hDevice,
                                           ur_program_build_info_t propName, size_t propSize, void *pPropValue,
                                           size_t *pPropSizeRet) {
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
    Device *d = nullptr;
    if (ur_result_t r = unwrap(hDevice, d)) return r;
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
        if (pd.image.empty()) return out.value(UR_PROGRAM_BINARY_TYPE_NONE);
        return out.value(pd.compiled ? UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT : UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
      default: return UR_RESULT_ERROR_INVALID_ENUMERATION;
      }
    }
    return UR_RESULT_ERROR_INVALID_DEVICE;
  }

  static ur_result_t UR_APICALL native_handle(ur_program_handle_t hProgram, ur_native_handle_t *phNativeProgram) {
    Program *p = nullptr;
    if (ur_result_t r = unwrap(hProgram, p)) return r;
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

  static void install(ur_dditable_t &t) {
    t.Program.pfnCreateWithIL = create_with_il;
    t.Program.pfnCreateWithBinary = create_with_binary;
    t.Program.pfnBuild = whole_program<build>;
    t.ProgramExp.pfnBuildExp = step_exp<build>;
    t.ProgramExp.pfnCompileExp = step_exp<compile>;
    t.Program.pfnCompile = whole_program<compile>;
    if (H::links()) t.Program.pfnLink = link;
    t.Program.pfnRetain = retain;
    t.Program.pfnRelease = release;
    t.Program.pfnGetFunctionPointer = function_pointer;
    t.Program.pfnGetGlobalVariablePointer = global_variable;
    t.Program.pfnGetInfo = get_info;
    t.Program.pfnGetBuildInfo = build_info;
    t.Program.pfnGetNativeHandle = native_handle;
    t.Program.pfnCreateWithNativeHandle = create_with_native;
  }
};

} // namespace ordo::ur_common
