// SPDX-License-Identifier: Apache-2.0
#include "adapter_registry.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "loader_state.hpp"
#include "ordo/secure_env.hpp"

namespace ordo {
namespace loader {

LoadedAdapter::~LoadedAdapter() {
  if (held && ddi.Adapter.pfnRelease) ddi.Adapter.pfnRelease(held);
  if (library) dlclose(library);
}

const std::vector<std::string> &known_adapter_names() {
  static const std::vector<std::string> names = {"libur_adapter_native_cpu.so.0", "libur_adapter_opencl.so.0",
                                                 "libur_adapter_cuda.so.0", "libur_adapter_hip.so.0",
                                                 "libur_adapter_level_zero.so.0"};
  return names;
}

const char *mock_adapter_name() { return "libur_adapter_mock.so.0"; }

namespace {

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool file_exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Each getter fills one table of LoadedAdapter::ddi.
struct Getter {
  const char *name;
  size_t offset; // of the table inside ur_dditable_t
};

#define ORDO_GETTER(getter, field)                                                                                     \
  { #getter, offsetof(ur_dditable_t, field) }
const Getter kGetters[] = {
    ORDO_GETTER(urGetAdapterProcAddrTable, Adapter),
    ORDO_GETTER(urGetPlatformProcAddrTable, Platform),
    ORDO_GETTER(urGetContextProcAddrTable, Context),
    ORDO_GETTER(urGetEventProcAddrTable, Event),
    ORDO_GETTER(urGetEventExpProcAddrTable, EventExp),
    ORDO_GETTER(urGetProgramProcAddrTable, Program),
    ORDO_GETTER(urGetProgramExpProcAddrTable, ProgramExp),
    ORDO_GETTER(urGetKernelProcAddrTable, Kernel),
    ORDO_GETTER(urGetQueueProcAddrTable, Queue),
    ORDO_GETTER(urGetQueueExpProcAddrTable, QueueExp),
    ORDO_GETTER(urGetSamplerProcAddrTable, Sampler),
    ORDO_GETTER(urGetMemProcAddrTable, Mem),
    ORDO_GETTER(urGetPhysicalMemProcAddrTable, PhysicalMem),
    ORDO_GETTER(urGetEnqueueProcAddrTable, Enqueue),
    ORDO_GETTER(urGetEnqueueExpProcAddrTable, EnqueueExp),
    ORDO_GETTER(urGetGraphExpProcAddrTable, GraphExp),
    ORDO_GETTER(urGetUSMProcAddrTable, USM),
    ORDO_GETTER(urGetUSMExpProcAddrTable, USMExp),
    ORDO_GETTER(urGetBindlessImagesExpProcAddrTable, BindlessImagesExp),
    ORDO_GETTER(urGetCommandBufferExpProcAddrTable, CommandBufferExp),
    ORDO_GETTER(urGetIPCExpProcAddrTable, IPCExp),
    ORDO_GETTER(urGetMemoryExportExpProcAddrTable, MemoryExportExp),
    ORDO_GETTER(urGetUsmP2PExpProcAddrTable, UsmP2PExp),
    ORDO_GETTER(urGetVirtualMemProcAddrTable, VirtualMem),
    ORDO_GETTER(urGetDeviceProcAddrTable, Device),
    ORDO_GETTER(urGetDeviceExpProcAddrTable, DeviceExp),
};
#undef ORDO_GETTER
static_assert(sizeof(kGetters) / sizeof(kGetters[0]) == 26, "one getter per table");

// Every getter has the same shape: (version, pointer to its table).
using AnyGetter = ur_result_t(UR_APICALL *)(ur_api_version_t, void *);

// Whether `lib` itself (not a library it depends on) defines urLoaderInit, which only a
// loader does. When the dynamic linker cannot say where the symbol lives, the answer
// errs on the side of "a loader": skipping a library is safe, calling a loader is not.
bool is_a_loader(void *lib) {
  void *entry = dlsym(lib, "urLoaderInit");
  if (!entry) return false;
  struct link_map *own = nullptr;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &own) != 0 || !own) return true;
  Dl_info info;
  struct link_map *defining = nullptr;
  if (!dladdr1(entry, &info, reinterpret_cast<void **>(&defining), RTLD_DL_LINKMAP) || !defining) return true;
  return defining == own;
}

} // namespace

std::unique_ptr<LoadedAdapter> load_adapter(const std::string &path, const AdapterList &already, std::string &why) {
  dlerror();
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  auto adapter = std::make_unique<LoadedAdapter>();
  adapter->path = path;
  adapter->library = lib;
  // Asking a loader (this one, or a copy of it) for its adapters from inside discovery
  // would re-enter urLoaderInit's lock (this copy) or start a second discovery that may
  // come back here (a copy): a loader is never an adapter.
  if (is_a_loader(lib)) {
    why = "it is a UR loader (it defines urLoaderInit), not an adapter";
    return nullptr; // the destructor drops the extra dlopen reference
  }
  // One library reached under two names (a symlink, a repeated path) is loaded once.
  for (auto &other : already) {
    if (other->library == lib) {
      why = "the same library is already loaded as " + other->path;
      return nullptr; // the destructor drops the extra dlopen reference
    }
  }
  for (const Getter &g : kGetters) {
    auto fn = reinterpret_cast<AnyGetter>(dlsym(lib, g.name));
    if (!fn) {
      why = std::string("not a UR adapter: it does not export ") + g.name;
      return nullptr;
    }
    void *table = reinterpret_cast<char *>(&adapter->ddi) + g.offset;
    ur_result_t r = fn(UR_API_VERSION_CURRENT, table);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_VERSION) {
      why = std::string("does not support UR API version 0.12 (") + g.name +
            " returned UR_RESULT_ERROR_UNSUPPORTED_VERSION)";
      return nullptr;
    }
    if (r != UR_RESULT_SUCCESS) {
      why = std::string(g.name) + " failed with " + result_name(r);
      return nullptr;
    }
  }
  if (!adapter->ddi.Adapter.pfnGet) {
    why = "its adapter table has no urAdapterGet";
    return nullptr;
  }
  // An adapter whose urAdapterGet fails (no driver, a version it refuses) is no
  // adapter for this process: asked once here, so that it never fails a caller's
  // urAdapterGet and never drags the other adapters down with it. The reference it
  // hands out is kept until the loader unloads it (~LoadedAdapter): releasing it now
  // would take the adapter through a whole init/teardown before the program's own
  // urAdapterGet, which some adapters (Intel's Level Zero one) cannot survive.
  if (ur_result_t r = adapter->ddi.Adapter.pfnGet(1, &adapter->held, nullptr)) {
    adapter->held = nullptr; // nothing was taken
    why = "urAdapterGet failed with " + result_name(r);
    return nullptr;
  }
  return adapter;
}

std::string loader_directory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&loader_directory), &info) == 0 || !info.dli_fname) return "";
  std::string file = info.dli_fname;
  auto slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

AdapterList discover_adapters(bool mock_only) {
  AdapterList loaded;
  Logger &l = log();

  const char *forced = secure_env("UR_ADAPTERS_FORCE_LOAD");
  if (forced && *forced && !mock_only) {
    for (const std::string &path : split(forced, ',')) {
      std::string why;
      if (auto a = load_adapter(path, loaded, why)) {
        ORDO_LOG(l, info, "loaded adapter %s (UR_ADAPTERS_FORCE_LOAD)", path.c_str());
        loaded.push_back(std::move(a));
      } else {
        ORDO_LOG(l, warning, "skipping adapter %s (UR_ADAPTERS_FORCE_LOAD): %s", path.c_str(), why.c_str());
      }
    }
    return loaded;
  }
  if (forced && *forced && mock_only) ORDO_LOG(l, info, "mocking is enabled: UR_ADAPTERS_FORCE_LOAD is ignored");

  std::vector<std::string> dirs;
  if (const char *sp = secure_env("UR_ADAPTERS_SEARCH_PATH"))
    for (const std::string &d : split(sp, ':')) dirs.push_back(d);
  std::string own = loader_directory();
  if (!own.empty()) dirs.push_back(own);

  std::vector<std::string> names = mock_only ? std::vector<std::string>{mock_adapter_name()} : known_adapter_names();
  for (const std::string &name : names) {
    bool found = false;
    for (const std::string &dir : dirs) {
      std::string path = dir + "/" + name;
      if (!file_exists(path)) continue;
      std::string why;
      if (auto a = load_adapter(path, loaded, why)) {
        ORDO_LOG(l, info, "loaded adapter %s", path.c_str());
        loaded.push_back(std::move(a));
        found = true;
        break;
      }
      ORDO_LOG(l, warning, "skipping adapter %s: %s", path.c_str(), why.c_str());
    }
    if (found) continue;
    // Last, the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache, ...).
    std::string why;
    if (auto a = load_adapter(name, loaded, why)) {
      ORDO_LOG(l, info, "loaded adapter %s (system search)", name.c_str());
      loaded.push_back(std::move(a));
    } else if (why.find("No such file") != std::string::npos) {
      ORDO_LOG(l, info, "adapter %s not found (searched %zu director%s and the system path)", name.c_str(), dirs.size(),
               dirs.size() == 1 ? "y" : "ies");
    } else {
      ORDO_LOG(l, warning, "skipping adapter %s (system search): %s", name.c_str(), why.c_str());
    }
  }
  return loaded;
}

} // namespace loader
} // namespace ordo
