// SPDX-License-Identifier: Apache-2.0
// Run by secure_env_test.cpp as a plain, a setuid and a setgid copy: says whether the
// kernel asked for secure execution, what ordo::secure_env answers for each variable
// Ordo reads to pick libraries, layers and log files, and which adapters a private copy
// of the loader (argv[1]) loaded under the environment it was given.
#include <dlfcn.h>

#include <cstdio>
#include <initializer_list>

#include "ordo/secure_env.hpp"
#include "ur_api.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <libur_loader.so.0>\n", argv[0]);
    return 2;
  }
  std::printf("secure=%d\n", ordo::secure_execution() ? 1 : 0);
  for (const char *name : {"UR_ADAPTERS_FORCE_LOAD", "UR_ADAPTERS_SEARCH_PATH", "UR_ENABLE_LAYERS", "UR_LOG_LOADER",
                           "UR_LOG_TRACING", "ONEAPI_DEVICE_SELECTOR", "ORDO_OPENCL_LIBRARY", "ORDO_HIP_LIBRARY"}) {
    const char *value = ordo::secure_env(name);
    std::printf("env %s=%s\n", name, value ? value : "(unset)");
  }
  std::fflush(stdout);
  void *loader = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    std::printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  using AdapterGet = ur_result_t (*)(uint32_t, ur_adapter_handle_t *, uint32_t *);
  using TearDown = ur_result_t (*)();
  auto adapter_get = reinterpret_cast<AdapterGet>(dlsym(loader, "urAdapterGet"));
  auto tear_down = reinterpret_cast<TearDown>(dlsym(loader, "urLoaderTearDown"));
  if (!adapter_get || !tear_down) return 1;
  ur_adapter_handle_t adapters[8] = {};
  uint32_t count = 0;
  if (adapter_get(8, adapters, &count) != UR_RESULT_SUCCESS) return 1;
  for (uint32_t i = 0; i < count && i < 8; ++i) {
    Dl_info info;
    const void *table = *reinterpret_cast<const void *const *>(adapters[i]);
    std::printf("adapter %s\n", dladdr(table, &info) && info.dli_fname ? info.dli_fname : "?");
  }
  std::fflush(stdout);
  tear_down();
  return 0;
}
