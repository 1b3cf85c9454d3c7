// SPDX-License-Identifier: Apache-2.0
// Runs stream-ordered alloc + free pairs through one adapter's own table, for
// callgrind: `valgrind --tool=callgrind --toggle-collect=run_pairs pair_cost <adapter>`
// counts only the measured pairs (docs/performance.md, "CPU cost of the stream backend").
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "ur_ddi.h"

namespace {
ur_dditable_t t{};
ur_queue_handle_t queue = nullptr;

#define CHECK(x)                                                                                                       \
  do {                                                                                                                 \
    if (ur_result_t r_ = (x)) {                                                                                        \
      std::fprintf(stderr, "%s: %d\n", #x, int(r_));                                                                   \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

extern "C" __attribute__((noinline)) void run_pairs(int n, size_t size) {
  for (int i = 0; i < n; ++i) {
    void *p = nullptr;
    CHECK(t.EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, size, nullptr, 0, nullptr, &p, nullptr));
    CHECK(t.EnqueueExp.pfnUSMFreeExp(queue, nullptr, p, 0, nullptr, nullptr));
  }
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <adapter library> [pairs] [bytes]\n", argv[0]);
    return 2;
  }
  const int pairs = argc > 2 ? std::atoi(argv[2]) : 1000;
  const size_t size = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : (1u << 20);
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
#define GET_TABLE(name)                                                                                                \
  if (auto get = reinterpret_cast<ur_pfnGet##name##ProcAddrTable_t>(dlsym(lib, "urGet" #name "ProcAddrTable")))        \
    get(UR_API_VERSION_CURRENT, &t.name);
  GET_TABLE(Adapter)
  GET_TABLE(Platform)
  GET_TABLE(Device)
  GET_TABLE(Context)
  GET_TABLE(Queue)
  GET_TABLE(EnqueueExp)
#undef GET_TABLE
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t dev = nullptr;
  ur_context_handle_t ctx = nullptr;
  uint32_t n = 0;
  CHECK(t.Adapter.pfnGet(1, &adapter, nullptr));
  CHECK(t.Platform.pfnGet(adapter, 1, &platform, &n));
  CHECK(t.Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  CHECK(t.Context.pfnCreate(1, &dev, nullptr, &ctx));
  CHECK(t.Queue.pfnCreate(ctx, dev, nullptr, &queue));
  run_pairs(100, size); // warm: the pool's first chunk, the caches
  CHECK(t.Queue.pfnFinish(queue));
  run_pairs(pairs, size);
  CHECK(t.Queue.pfnFinish(queue));
  std::printf("%d pairs of %zu bytes\n", pairs, size);
  return 0;
}
