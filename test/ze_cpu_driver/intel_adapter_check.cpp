// SPDX-License-Identifier: Apache-2.0
// Intel's Level Zero UR adapter (from the DPC++ runtime wheel; its path in
// ORDO_INTEL_L0_ADAPTER) running a small USM / queue / event program on the CPU test
// driver through the Level Zero loader the dynamic linker finds (the pinned 1.32.0 under
// ctest, docs/level-zero.md). A second client of the driver: what it
// needs that Ordo's adapter does not use shows up here. The adapter is opened and its
// tables read as a UR loader does, and asked for once: it tears its Level Zero loader
// down on its last release and cannot start again in the same process.
//
// Prints "SKIP: <why>" and exits 0 where the check cannot run (the test skips on it):
// Intel's adapter needs a Level Zero loader of version 1.19 or newer (docs/level-zero.md).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>
#include <level_zero/loader/ze_loader.h>

#include "ur_ddi.h"

namespace {

int fail(const char *what, ur_result_t r) {
  std::printf("FAILED: %s returned %d\n", what, int(r));
  return 1;
}

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    ur_result_t r_ = (call);                                                                                           \
    if (r_ != UR_RESULT_SUCCESS) return fail(#call, r_);                                                               \
  } while (0)

// The loader's own version (the one the dynamic linker finds: the pinned loader through
// LD_LIBRARY_PATH, or the system's). zelGetLoaderVersion (newer loaders) answers before
// zeInit; zelLoaderGetVersions lists no component until zeInit has run.
bool loader_version(int &major, int &minor, int &patch) {
  void *lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  using get_one_t = ze_result_t(ZE_APICALL *)(zel_component_version_t *);
  if (auto one = reinterpret_cast<get_one_t>(dlsym(lib, "zelGetLoaderVersion"))) {
    zel_component_version_t c{};
    if (one(&c) != ZE_RESULT_SUCCESS) return false;
    major = c.component_lib_version.major;
    minor = c.component_lib_version.minor;
    patch = c.component_lib_version.patch;
    return true;
  }
  auto get = reinterpret_cast<decltype(&zelLoaderGetVersions)>(dlsym(lib, "zelLoaderGetVersions"));
  size_t n = 0;
  if (!get || get(&n, nullptr) != ZE_RESULT_SUCCESS) return false;
  std::vector<zel_component_version_t> v(n);
  if (get(&n, v.data()) != ZE_RESULT_SUCCESS) return false;
  for (auto &c : v)
    if (std::strncmp(c.component_name, "loader", 6) == 0) {
      major = c.component_lib_version.major;
      minor = c.component_lib_version.minor;
      patch = c.component_lib_version.patch;
      return true;
    }
  return false;
}

} // namespace

int main() {
  int major = 0, minor = 0, patch = 0;
  // ORDO_INTEL_CHECK_FORCE=1 runs it anyway, to see where it stops.
  const char *force = std::getenv("ORDO_INTEL_CHECK_FORCE");
  const bool forced = force && std::strcmp(force, "1") == 0;
  if (!forced && !loader_version(major, minor, patch)) {
    // zelLoaderGetVersions lists no component before loader 1.9 or so.
    std::printf("SKIP: the system Level Zero loader does not report its version (an old loader: Debian 12 has "
                "1.8.12); Intel's adapter needs 1.19 or newer (it forwards zeDeviceGetRootDevice and "
                "zeInitDrivers through loader table slots an old loader lacks, and crashes on the null "
                "pointer): docs/level-zero.md\n");
    return 0;
  }
  if (!forced && major == 1 && minor < 19) {
    std::printf("SKIP: the system Level Zero loader is %d.%d.%d; Intel's adapter needs 1.19 or newer "
                "(it forwards zeDeviceGetRootDevice and zeInitDrivers through loader table slots that "
                "%d.%d lacks, and crashes on the null pointer): docs/level-zero.md\n",
                major, minor, patch, major, minor);
    return 0;
  }

  const char *path = std::getenv("ORDO_INTEL_L0_ADAPTER");
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!lib) {
    std::printf("FAILED: cannot open ORDO_INTEL_L0_ADAPTER='%s': %s\n", path ? path : "", dlerror());
    return 1;
  }
  ur_dditable_t t{};
#define ORDO_GET_TABLE(name)                                                                                           \
  if (auto get = reinterpret_cast<ur_pfnGet##name##ProcAddrTable_t>(dlsym(lib, "urGet" #name "ProcAddrTable")))        \
    CHECK(get(UR_API_VERSION_CURRENT, &t.name));
  // clang-format off
  ORDO_GET_TABLE(Adapter)
  ORDO_GET_TABLE(Platform)
  ORDO_GET_TABLE(Device)
  ORDO_GET_TABLE(Context)
  ORDO_GET_TABLE(Queue) ORDO_GET_TABLE(Event) ORDO_GET_TABLE(Enqueue) ORDO_GET_TABLE(USM)
  // clang-format on
#undef ORDO_GET_TABLE
      uint32_t n = 0;
  ur_adapter_handle_t adapter = nullptr;
  CHECK(t.Adapter.pfnGet(1, &adapter, &n));
  ur_platform_handle_t platform = nullptr;
  CHECK(t.Platform.pfnGet(adapter, 1, &platform, &n));
  if (n == 0) return fail("urPlatformGet (no platform)", UR_RESULT_ERROR_DEVICE_NOT_FOUND);
  ur_device_handle_t device = nullptr;
  CHECK(t.Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 1, &device, &n));
  char name[256] = {};
  CHECK(t.Device.pfnGetInfo(device, UR_DEVICE_INFO_NAME, sizeof(name), name, nullptr));
  std::printf("device: %s\n", name);
  ur_context_handle_t context = nullptr;
  CHECK(t.Context.pfnCreate(1, &device, nullptr, &context));
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  ur_queue_handle_t queue = nullptr;
  CHECK(t.Queue.pfnCreate(context, device, &props, &queue));

  const size_t count = 4096, bytes = count * sizeof(uint32_t);
  void *host = nullptr, *dev = nullptr, *shared = nullptr;
  CHECK(t.USM.pfnHostAlloc(context, nullptr, nullptr, bytes, &host));
  CHECK(t.USM.pfnDeviceAlloc(context, device, nullptr, nullptr, bytes, &dev));
  CHECK(t.USM.pfnSharedAlloc(context, device, nullptr, nullptr, bytes, &shared));
  // fill device -> copy to shared -> copy to host, chained by events on an out-of-order queue.
  uint32_t pattern = 0x5eed;
  ur_event_handle_t filled = nullptr, copied = nullptr, back = nullptr;
  CHECK(t.Enqueue.pfnUSMFill(queue, dev, sizeof(pattern), &pattern, bytes, 0, nullptr, &filled));
  CHECK(t.Enqueue.pfnUSMMemcpy(queue, false, shared, dev, bytes, 1, &filled, &copied));
  CHECK(t.Enqueue.pfnUSMMemcpy(queue, false, host, shared, bytes, 1, &copied, &back));
  CHECK(t.Event.pfnWait(1, &back));
  ur_event_status_t status = UR_EVENT_STATUS_QUEUED;
  CHECK(t.Event.pfnGetInfo(back, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
  auto *h = static_cast<uint32_t *>(host);
  int wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += h[i] != pattern;
  CHECK(t.Queue.pfnFinish(queue));
  for (ur_event_handle_t e : {filled, copied, back}) CHECK(t.Event.pfnRelease(e));
  for (void *p : {host, dev, shared}) CHECK(t.USM.pfnFree(context, p));
  CHECK(t.Queue.pfnRelease(queue));
  CHECK(t.Context.pfnRelease(context));
  CHECK(t.Adapter.pfnRelease(adapter));
  if (status != UR_EVENT_STATUS_COMPLETE || wrong) {
    std::printf("FAILED: status %d, %d wrong values\n", int(status), wrong);
    return 1;
  }
  std::printf("PASSED: Intel's adapter ran fill/copy/copy with events on the test driver\n");
  return 0;
}
