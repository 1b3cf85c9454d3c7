// SPDX-License-Identifier: Apache-2.0
// What the bench_*.cpp workloads share: where this binary and its test kernels lie,
// reading a file, and opening UR through libur_loader.so.0 (dlopen'ed, so ordo-bench
// links everywhere) down to the first device of one backend.
//
// Each bench_*.cpp is its own translation unit in one binary: everything here is
// inline (or a template), so nothing clashes at link time.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ur_api.h"

namespace ordo_bench {

// The folder holding this executable ("." if /proc/self/exe cannot be read).
inline std::string exe_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, size_t(n));
  return path.substr(0, path.rfind('/'));
}

// A built test kernel file, `relative` to $ORDO_KERNEL_DIR (default: <bin>/../kernels),
// e.g. "native_cpu/ordo_test_kernels.so".
inline std::string kernel_path(const std::string &relative) {
  const char *dir = std::getenv("ORDO_KERNEL_DIR");
  return (dir ? std::string(dir) : exe_dir() + "/../kernels") + "/" + relative;
}

// The whole file (empty if it cannot be read).
inline std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// dlopen `name` from <bin>/../lib, else through the system search.
inline void *open_library(const char *name) {
  void *lib = dlopen((exe_dir() + "/../lib/" + name).c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib ? lib : dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

// Sets fn to the symbol `name` of lib; on failure sets error to "loader lacks <name>".
template <class F> bool resolve(void *lib, F &fn, const char *name, std::string &error) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) error = std::string("loader lacks ") + name;
  return fn != nullptr;
}

// Inside a struct, ORDO_BENCH_UR_ENTRY_POINTS(LIST) declares one function pointer per
// entry point of the X-macro LIST (named as the entry point) and a member
// `bool resolve(void *lib)` that fills them in LIST order, stopping at the first one the
// library lacks (its `error` member then says which). LIST must start with
// urLoaderInit, urAdapterGet, urPlatformGet, urPlatformGetInfo, urDeviceGet, which
// open_device() calls.
#define ORDO_BENCH_UR_DECLARE(fn) decltype(&::fn) fn = nullptr;
#define ORDO_BENCH_UR_RESOLVE(fn) &&::ordo_bench::resolve(lib, fn, #fn, error)
#define ORDO_BENCH_UR_ENTRY_POINTS(LIST)                                                                               \
  LIST(ORDO_BENCH_UR_DECLARE)                                                                                          \
  bool resolve(void *lib) { return true LIST(ORDO_BENCH_UR_RESOLVE); }

// The one T of the process, made and init()ed at first use and never destroyed (a
// benchmark's state outlives the run).
template <class T> T &once() {
  static T *t = [] {
    auto *t = new T();
    t->init();
    return t;
  }();
  return *t;
}

// Opens libur_loader.so.0, resolves api's entry points, calls urLoaderInit and sets
// api.device to the first device of the first platform of `backend`. On failure sets
// api.error ("no <backend_name> device through the Ordo loader" when there is none) and
// returns false.
template <class Api> bool open_device(Api &api, ur_backend_t backend, const char *backend_name) {
  void *lib = open_library("libur_loader.so.0");
  if (!lib) {
    api.error = "libur_loader.so.0 not found";
    return false;
  }
  if (!api.resolve(lib)) return false;
  if (api.urLoaderInit(0, nullptr) != UR_RESULT_SUCCESS) {
    api.error = "urLoaderInit failed";
    return false;
  }
  uint32_t na = 0;
  api.urAdapterGet(0, nullptr, &na);
  std::vector<ur_adapter_handle_t> adapters(na);
  if (na) api.urAdapterGet(na, adapters.data(), nullptr);
  for (ur_adapter_handle_t a : adapters) {
    uint32_t np = 0;
    api.urPlatformGet(a, 0, nullptr, &np);
    std::vector<ur_platform_handle_t> platforms(np);
    if (np) api.urPlatformGet(a, np, platforms.data(), nullptr);
    for (ur_platform_handle_t p : platforms) {
      ur_backend_t b{};
      api.urPlatformGetInfo(p, UR_PLATFORM_INFO_BACKEND, sizeof b, &b, nullptr);
      if (b == backend && !api.device) api.urDeviceGet(p, UR_DEVICE_TYPE_ALL, 1, &api.device, nullptr);
    }
  }
  if (!api.device) {
    api.error = std::string("no ") + backend_name + " device through the Ordo loader";
    return false;
  }
  return true;
}

// Builds native_cpu/ordo_test_kernels.so (see kernel_path) for api.device in
// api.context. On failure sets api.error and returns nullptr.
template <class Api> ur_program_handle_t native_cpu_test_program(Api &api) {
  std::string path = kernel_path("native_cpu/ordo_test_kernels.so");
  std::vector<uint8_t> bin = read_file(path);
  if (bin.empty()) {
    api.error = "test kernels not built: " + path;
    return nullptr;
  }
  ur_program_handle_t program = nullptr;
  size_t len = bin.size();
  const uint8_t *data = bin.data();
  if (api.urProgramCreateWithBinary(api.context, 1, &api.device, &len, &data, nullptr, &program) ||
      api.urProgramBuild(api.context, program, nullptr)) {
    api.error = "building the native CPU test kernels failed";
    return nullptr;
  }
  return program;
}

} // namespace ordo_bench
