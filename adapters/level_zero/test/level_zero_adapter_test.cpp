// SPDX-License-Identifier: Apache-2.0
// The Level Zero adapter driven the way a loader drives it: dlopen the library, copy
// its tables out with the urGet*ProcAddrTable getters, call through them.
//
// ORDO_TEST_EXPECT says what the run's environment provides: "driver" (the CPU test
// driver named in ZE_ENABLE_ALT_DRIVERS: a platform must appear) or "none" (no driver
// named: without a real Level Zero driver there is no platform, and one log line says
// why).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ur_ddi.h"

namespace {

#define UR_OK(call) ASSERT_EQ(UR_RESULT_SUCCESS, (call))

struct Loaded {
  void *lib = nullptr;
  std::string dl_error;
  ur_dditable_t t{};
  ur_adapter_handle_t adapter = nullptr;
  std::vector<ur_platform_handle_t> platforms;
  std::string log_path;
};

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Loaded &L() {
  static Loaded *l = [] {
    auto *l = new Loaded();
    l->log_path = "/tmp/ordo_level_zero_test." + std::to_string(getpid()) + ".log";
    std::remove(l->log_path.c_str());
    std::string cfg = "level:info;flush:debug;output:file," + l->log_path;
    setenv("UR_LOG_LEVEL_ZERO", cfg.c_str(), 1);
    setenv("UR_LOG_LOADER", cfg.c_str(), 1); // "not installed" is said on the loader's log
    l->lib = dlopen(ORDO_TEST_ADAPTER, RTLD_NOW | RTLD_LOCAL);
    if (!l->lib) {
      l->dl_error = dlerror();
      return l;
    }
#define ORDO_GET_TABLE(name)                                                                                           \
  if (auto get = reinterpret_cast<ur_pfnGet##name##ProcAddrTable_t>(dlsym(l->lib, "urGet" #name "ProcAddrTable")))     \
    get(UR_API_VERSION_CURRENT, &l->t.name);
    // clang-format off
    ORDO_GET_TABLE(Adapter)
    ORDO_GET_TABLE(Platform)
    ORDO_GET_TABLE(Context)
    ORDO_GET_TABLE(Event)
    ORDO_GET_TABLE(EventExp) ORDO_GET_TABLE(Program) ORDO_GET_TABLE(ProgramExp) ORDO_GET_TABLE(Kernel)
        ORDO_GET_TABLE(Queue) ORDO_GET_TABLE(QueueExp) ORDO_GET_TABLE(Sampler) ORDO_GET_TABLE(Mem)
            ORDO_GET_TABLE(PhysicalMem) ORDO_GET_TABLE(Enqueue) ORDO_GET_TABLE(EnqueueExp) ORDO_GET_TABLE(USM)
                ORDO_GET_TABLE(USMExp) ORDO_GET_TABLE(BindlessImagesExp) ORDO_GET_TABLE(CommandBufferExp)
                    ORDO_GET_TABLE(GraphExp) ORDO_GET_TABLE(IPCExp) ORDO_GET_TABLE(MemoryExportExp)
                        ORDO_GET_TABLE(UsmP2PExp) ORDO_GET_TABLE(VirtualMem) ORDO_GET_TABLE(Device)
                            ORDO_GET_TABLE(DeviceExp)
    // clang-format on
#undef ORDO_GET_TABLE
                            if (!l->t.Adapter.pfnGet) return l;
    l->t.Adapter.pfnGet(1, &l->adapter, nullptr);
    uint32_t n = 0;
    l->t.Platform.pfnGet(l->adapter, 0, nullptr, &n);
    l->platforms.resize(n);
    if (n) l->t.Platform.pfnGet(l->adapter, n, l->platforms.data(), nullptr);
    return l;
  }();
  return *l;
}
const ur_dditable_t &T() { return L().t; }

std::string expect() {
  const char *e = std::getenv("ORDO_TEST_EXPECT");
  return e ? e : "";
}

TEST(LevelZeroAdapter, ExportsOnlyTheGettersAndFillsEverySlot) {
  ASSERT_NE(nullptr, L().lib) << L().dl_error;
  EXPECT_EQ(nullptr, dlsym(L().lib, "urAdapterGet"));
  EXPECT_EQ(nullptr, dlsym(L().lib, "zeInit")); // the loader is opened, never linked
  const void *const *slots = reinterpret_cast<const void *const *>(&L().t);
  for (size_t i = 0; i < sizeof(ur_dditable_t) / sizeof(void *); ++i) EXPECT_NE(nullptr, slots[i]) << "slot " << i;
  // Images are not offered (the generated stub); buffers are.
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
            T().Mem.pfnImageCreate(nullptr, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, T().Mem.pfnRelease(nullptr));
  ur_backend_t backend{};
  UR_OK(T().Adapter.pfnGetInfo(L().adapter, UR_ADAPTER_INFO_BACKEND, sizeof(backend), &backend, nullptr));
  EXPECT_EQ(UR_BACKEND_LEVEL_ZERO, backend);
}

TEST(LevelZeroAdapter, ReportsPlatformsOrSaysWhyNot) {
  ASSERT_NE(nullptr, L().adapter);
  const std::string log = read_file(L().log_path);
  const std::string marker = "no Level Zero platform"; // ": why" when it failed, ", not installed: why" at info
  if (expect() == "driver") {
    ASSERT_EQ(1u, L().platforms.size()) << "log was: " << log;
    EXPECT_EQ(std::string::npos, log.find(marker));
    ur_backend_t backend{};
    UR_OK(T().Platform.pfnGetInfo(L().platforms[0], UR_PLATFORM_INFO_BACKEND, sizeof(backend), &backend, nullptr));
    EXPECT_EQ(UR_BACKEND_LEVEL_ZERO, backend);
    uint32_t n = 0;
    UR_OK(T().Device.pfnGet(L().platforms[0], UR_DEVICE_TYPE_ALL, 0, nullptr, &n));
    EXPECT_EQ(1u, n);
    UR_OK(T().Device.pfnGet(L().platforms[0], UR_DEVICE_TYPE_GPU, 0, nullptr, &n));
    EXPECT_EQ(0u, n); // the test driver's device is a CPU
    return;
  }
  if (!L().platforms.empty()) GTEST_SKIP() << "a real Level Zero driver is installed here";
  auto at = log.find(marker);
  ASSERT_NE(std::string::npos, at) << "log was: " << log;
  EXPECT_EQ(at, log.rfind(marker)) << "logged more than once";
  std::cout << "[ reason   ] " << log.substr(at, log.find('\n', at) - at) << "\n";
}

TEST(LevelZeroAdapter, RefusesHandlesOfTheWrongKind) {
  ASSERT_NE(nullptr, L().adapter);
  char buf[64];
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_PLATFORM,
            T().Platform.pfnGetInfo(reinterpret_cast<ur_platform_handle_t>(L().adapter), UR_PLATFORM_INFO_NAME,
                                    sizeof(buf), buf, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, T().Queue.pfnFinish(reinterpret_cast<ur_queue_handle_t>(L().adapter)));
  ur_context_handle_t ctx = nullptr;
  ur_device_handle_t bogus = reinterpret_cast<ur_device_handle_t>(L().adapter);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, T().Context.pfnCreate(1, &bogus, nullptr, &ctx));
}

// Another adapter's event laid out exactly as an Ordo event (ordo/object.hpp: table
// pointer, user count, kind, holders) with the same kind: only its first word, another
// adapter's table, tells it apart. A wait list must refuse it without using it.
TEST(LevelZeroAdapter, RefusesAnotherAdaptersEvent) {
  if (L().platforms.empty()) GTEST_SKIP() << "no Level Zero platform: needs the CPU test driver";
  ur_device_handle_t dev = nullptr;
  UR_OK(T().Device.pfnGet(L().platforms[0], UR_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  ur_context_handle_t ctx = nullptr;
  UR_OK(T().Context.pfnCreate(1, &dev, nullptr, &ctx));
  ur_queue_handle_t q = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &q));

  static const ur_dditable_t other_adapters_table{};
  struct {
    const ur_dditable_t *ddi = &other_adapters_table;
    uint32_t ref_count = 1;
    uint32_t kind = 6; // ordo::handle_kind::event
    uint32_t holders = 1;
    uint64_t rest[16] = {};
  } foreign;
  auto foreign_event = reinterpret_cast<ur_event_handle_t>(&foreign);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, T().Enqueue.pfnEventsWait(q, 1, &foreign_event, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
            T().Enqueue.pfnEventsWaitWithBarrier(q, 1, &foreign_event, nullptr));
  ur_event_status_t status;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, T().Event.pfnGetInfo(foreign_event, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS,
                                                                sizeof(status), &status, nullptr));
  EXPECT_EQ(1u, foreign.ref_count); // refused, not touched
  EXPECT_EQ(1u, foreign.holders);

  // The same layout with this adapter's own table is taken as an event of its kind:
  // the table is what refused the foreign one.
  ur_event_handle_t real = nullptr;
  UR_OK(T().Enqueue.pfnEventsWait(q, 0, nullptr, &real));
  EXPECT_EQ(UR_RESULT_SUCCESS, T().Enqueue.pfnEventsWait(q, 1, &real, nullptr));
  EXPECT_EQ(reinterpret_cast<const uint32_t *>(real)[3], foreign.kind);
  UR_OK(T().Event.pfnRelease(real));
  UR_OK(T().Queue.pfnFinish(q));
  UR_OK(T().Queue.pfnRelease(q));
  UR_OK(T().Context.pfnRelease(ctx));
}

} // namespace
