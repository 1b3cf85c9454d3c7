// SPDX-License-Identifier: Apache-2.0
// The cost of one call through libur_loader into the mock adapter, beside a direct call
// of the same adapter function (its slot, taken from the mock's own getter) in the same
// run. Both libraries are dlopen'ed from ../lib next to this binary (or the system
// search), so the binary links everywhere.
//
//   Dispatch_QueueFlush_Direct                  mock's urQueueFlush slot, called directly
//   Dispatch_QueueFlush_Loader                  urQueueFlush through the loader, no layer
//   Dispatch_QueueFlush_LoaderValidation        ... with UR_LAYER_PARAMETER_VALIDATION
//   Dispatch_ContextRetainRelease_{Direct,Loader,LoaderValidation}
//                                               a urContextRetain + urContextRelease pair
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <string>

#include "bench_loader.hpp"
#include "ur_ddi.h"

namespace {
namespace bench_dispatch {

using ordo_bench::open_library;

// A list of X(...) entries, laid out by hand.
// clang-format off
#define UR_FUNCTIONS(X)                                                                                                \
  X(urLoaderConfigCreate)                                                                                              \
  X(urLoaderConfigRelease)                                                                                             \
  X(urLoaderConfigSetMockingEnabled)                                                                                   \
  X(urLoaderConfigEnableLayer)                                                                                         \
  X(urLoaderInit) X(urLoaderTearDown) X(urAdapterGet) X(urAdapterRelease) X(urPlatformGet) X(urDeviceGet)              \
      X(urContextCreate) X(urContextRetain) X(urContextRelease) X(urQueueCreate) X(urQueueRelease) X(urQueueFlush)
// clang-format on

// The loader with only the mock adapter (mocking enabled), optionally with validation.
struct Session {
#define DECLARE(f) decltype(&::f) f = nullptr;
  UR_FUNCTIONS(DECLARE)
#undef DECLARE
  void *loader = nullptr;
  ur_adapter_handle_t adapter = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
  ur_dditable_t mock{}; // the mock's own tables, from its getters
  std::string error;

  explicit Session(bool validation) {
    loader = open_library("libur_loader.so.0");
    if (!loader) {
      error = "libur_loader.so.0 not found";
      return;
    }
#define LOAD(f) f = reinterpret_cast<decltype(f)>(dlsym(loader, #f));
    UR_FUNCTIONS(LOAD)
#undef LOAD
    ur_loader_config_handle_t config = nullptr;
    urLoaderConfigCreate(&config);
    urLoaderConfigSetMockingEnabled(config, true);
    if (validation) urLoaderConfigEnableLayer(config, "UR_LAYER_PARAMETER_VALIDATION");
    ur_result_t r = urLoaderInit(0, config);
    urLoaderConfigRelease(config);
    uint32_t n = 0;
    if (r != UR_RESULT_SUCCESS || urAdapterGet(1, &adapter, &n) != UR_RESULT_SUCCESS || n != 1) {
      // A later urLoaderInit only counts references: if another workload of this run
      // initialised the loader first, mocking cannot be switched on any more.
      error = n > 1 ? "the loader was initialised by another workload first; run the Dispatch rows alone "
                      "(--benchmark_filter=Dispatch)"
                    : "the mock adapter did not load (libur_adapter_mock.so.0 beside the loader?)";
      return;
    }
    ur_platform_handle_t platform = nullptr;
    ur_device_handle_t device = nullptr;
    urPlatformGet(adapter, 1, &platform, nullptr);
    urDeviceGet(platform, UR_DEVICE_TYPE_ALL, 1, &device, nullptr);
    urContextCreate(1, &device, nullptr, &context);
    urQueueCreate(context, device, nullptr, &queue);
    // The direct row calls the slots the mock's own getters hand out.
    Dl_info info;
    if (!dladdr(*reinterpret_cast<void **>(queue), &info)) {
      error = "cannot find the mock library";
      return;
    }
    void *mock_lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    auto get_queue = reinterpret_cast<decltype(&::urGetQueueProcAddrTable)>(dlsym(mock_lib, "urGetQueueProcAddrTable"));
    auto get_context =
        reinterpret_cast<decltype(&::urGetContextProcAddrTable)>(dlsym(mock_lib, "urGetContextProcAddrTable"));
    get_queue(UR_API_VERSION_CURRENT, &mock.Queue);
    get_context(UR_API_VERSION_CURRENT, &mock.Context);
    dlclose(mock_lib);
  }
  ~Session() {
    if (!loader) return;
    if (queue) urQueueRelease(queue);
    if (context) urContextRelease(context);
    if (adapter) urAdapterRelease(adapter);
    urLoaderTearDown();
    dlclose(loader);
  }
};

enum class Path { direct, loader, validation };

void QueueFlush(benchmark::State &state, Path path) {
  Session s(path == Path::validation);
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  auto flush = path == Path::direct ? s.mock.Queue.pfnFlush : s.urQueueFlush;
  ur_queue_handle_t q = s.queue;
  for (auto _ : state) {
    benchmark::DoNotOptimize(flush(q));
  }
  state.SetItemsProcessed(state.iterations());
}

void ContextRetainRelease(benchmark::State &state, Path path) {
  Session s(path == Path::validation);
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  auto retain = path == Path::direct ? s.mock.Context.pfnRetain : s.urContextRetain;
  auto release = path == Path::direct ? s.mock.Context.pfnRelease : s.urContextRelease;
  ur_context_handle_t c = s.context;
  for (auto _ : state) {
    benchmark::DoNotOptimize(retain(c));
    benchmark::DoNotOptimize(release(c));
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(QueueFlush, Direct, Path::direct)->Name("Dispatch_QueueFlush_Direct");
BENCHMARK_CAPTURE(QueueFlush, Loader, Path::loader)->Name("Dispatch_QueueFlush_Loader");
BENCHMARK_CAPTURE(QueueFlush, LoaderValidation, Path::validation)->Name("Dispatch_QueueFlush_LoaderValidation");
BENCHMARK_CAPTURE(ContextRetainRelease, Direct, Path::direct)->Name("Dispatch_ContextRetainRelease_Direct");
BENCHMARK_CAPTURE(ContextRetainRelease, Loader, Path::loader)->Name("Dispatch_ContextRetainRelease_Loader");
BENCHMARK_CAPTURE(ContextRetainRelease, LoaderValidation, Path::validation)
    ->Name("Dispatch_ContextRetainRelease_LoaderValidation");

} // namespace bench_dispatch
} // namespace
