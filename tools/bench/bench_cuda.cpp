// SPDX-License-Identifier: Apache-2.0
// CUDA workloads for ordo-bench: each has an Ordo row (the CUDA adapter, called
// through the dispatch table it hands a loader) and a raw CUDA driver API row
// doing the same work in the same process, on the same device and primary
// context; hip_* rows run the same Ordo workloads through the HIP adapter (on an
// NVIDIA GPU through the HIP-on-CUDA test mapping, docs/hip.md). At exit the
// Ordo/raw and HIP/raw time ratios are printed.
//
// Both libraries are opened at run time, so ordo-bench links everywhere; without
// libcuda.so.1 (or without the adapter) each benchmark is skipped with the reason.
//   ORDO_CUDA_ADAPTER  path of libur_adapter_cuda.so.0 (default: <bin>/../lib/)
//   ORDO_HIP_ADAPTER   path of libur_adapter_hip.so.0 (default: <bin>/../lib/)
//   ORDO_KERNEL_DIR    folder holding cuda/ordo_test_kernels.ptx (default: <bin>/../kernels)
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <csignal>

#include <algorithm>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_loader.hpp"
#include "ur_ddi.h"

namespace {

// ---- the few CUDA driver declarations the raw rows need (no cuda.h here) --------------
namespace cu {
using Result = int;
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct Ctx *;
using Stream = struct Strm *;
using Module = struct Mod *;
using Function = struct Func *;
using MemPool = struct Pool *;
using Event = struct Evt *;
constexpr unsigned kEventDisableTiming = 2;
struct MemLocation {
  int type; // 1: device
  int id;
};
struct MemPoolProps {
  int allocType;   // 1: pinned
  int handleTypes; // 0: none
  MemLocation location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};
enum PoolAttr { kReleaseThreshold = 4, kReservedHigh = 6, kUsedHigh = 8 };
enum { kReuseFollowEvents = 1, kReuseOpportunistic = 2, kReuseInternalDeps = 3 };
constexpr unsigned kStreamNonBlocking = 1;
} // namespace cu

using ordo_bench::exe_dir;

std::string kernel_path() { return ordo_bench::kernel_path("cuda/ordo_test_kernels.ptx"); }

std::vector<char> read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  std::vector<char> out(text.begin(), text.end());
  if (!out.empty()) out.push_back('\0');
  return out;
}

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kFillElems = kMiB / 4; // the 1 MiB kernel: fill 262144 uint32_t
constexpr size_t kLocal = 256;

// ---- raw CUDA -----------------------------------------------------------------------------

struct Raw {
  bool ok = false;
  std::string why;
#define RAW_FN(name, sym, ...) cu::Result (*name)(__VA_ARGS__) = nullptr;
#define RAW_FUNCTIONS(X)                                                                                               \
  X(Init, "cuInit", unsigned)                                                                                          \
  X(DeviceGet, "cuDeviceGet", cu::Device *, int)                                                                       \
  X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", cu::Context *, cu::Device)                                           \
  X(CtxSetCurrent, "cuCtxSetCurrent", cu::Context)                                                                     \
  X(StreamCreate, "cuStreamCreate", cu::Stream *, unsigned)                                                            \
  X(StreamSynchronize, "cuStreamSynchronize", cu::Stream)                                                              \
  X(StreamDestroy, "cuStreamDestroy_v2", cu::Stream)                                                                   \
  X(ModuleLoadData, "cuModuleLoadData", cu::Module *, const void *)                                                    \
  X(ModuleGetFunction, "cuModuleGetFunction", cu::Function *, cu::Module, const char *)                                \
  X(LaunchKernel, "cuLaunchKernel", cu::Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,          \
    unsigned, cu::Stream, void **, void **)                                                                            \
  X(MemAllocAsync, "cuMemAllocAsync", cu::DevicePtr *, size_t, cu::Stream)                                             \
  X(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", cu::DevicePtr *, size_t, cu::MemPool, cu::Stream)                \
  X(MemFreeAsync, "cuMemFreeAsync", cu::DevicePtr, cu::Stream)                                                         \
  X(MemAlloc, "cuMemAlloc_v2", cu::DevicePtr *, size_t)                                                                \
  X(MemFree, "cuMemFree_v2", cu::DevicePtr)                                                                            \
  X(DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", cu::MemPool *, cu::Device)                                   \
  X(MemPoolCreate, "cuMemPoolCreate", cu::MemPool *, const cu::MemPoolProps *)                                         \
  X(MemPoolDestroy, "cuMemPoolDestroy", cu::MemPool)                                                                   \
  X(MemPoolSetAttribute, "cuMemPoolSetAttribute", cu::MemPool, int, void *)                                            \
  X(MemPoolGetAttribute, "cuMemPoolGetAttribute", cu::MemPool, int, void *)                                            \
  X(EventCreate, "cuEventCreate", cu::Event *, unsigned)                                                               \
  X(EventRecord, "cuEventRecord", cu::Event, cu::Stream)                                                               \
  X(DeviceGetCount, "cuDeviceGetCount", int *)                                                                         \
  X(CtxEnablePeerAccess, "cuCtxEnablePeerAccess", cu::Context, unsigned)                                               \
  X(MemcpyPeerAsync, "cuMemcpyPeerAsync", cu::DevicePtr, cu::Context, cu::DevicePtr, cu::Context, size_t, cu::Stream)
  RAW_FUNCTIONS(RAW_FN)
#undef RAW_FN

  cu::Device dev = 0;
  cu::Context ctx = nullptr;
  cu::Stream stream = nullptr, stream2 = nullptr;
  // The shape of an Ordo out-of-order queue, for the (c) row that mirrors it.
  static constexpr size_t kOooStreams = 4;
  cu::Stream ooo[kOooStreams] = {};
  cu::Event ooo_events[kOooStreams][3] = {};
  cu::Function fill = nullptr, empty = nullptr;
  cu::MemPool default_pool = nullptr;

  Raw() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = std::string("libcuda.so.1 not found (") + dlerror() + ")";
      return;
    }
#define RAW_LOAD(name, sym, ...)                                                                                       \
  name = reinterpret_cast<decltype(name)>(dlsym(lib, sym));                                                            \
  if (!name) {                                                                                                         \
    why = std::string("libcuda.so.1 lacks ") + sym;                                                                    \
    return;                                                                                                            \
  }
    RAW_FUNCTIONS(RAW_LOAD)
#undef RAW_LOAD
    if (int r = Init(0)) {
      why = "cuInit returned " + std::to_string(r);
      return;
    }
    std::vector<char> ptx = read_text(kernel_path());
    cu::Module mod = nullptr;
    if (DeviceGet(&dev, 0) || PrimaryCtxRetain(&ctx, dev) || CtxSetCurrent(ctx) ||
        StreamCreate(&stream, cu::kStreamNonBlocking) || StreamCreate(&stream2, cu::kStreamNonBlocking)) {
      why = "no usable CUDA device 0";
      return;
    }
    if (ptx.empty() || ModuleLoadData(&mod, ptx.data()) || ModuleGetFunction(&fill, mod, "fill") ||
        ModuleGetFunction(&empty, mod, "empty")) {
      why = "cannot load " + kernel_path();
      return;
    }
    for (size_t i = 0; i < kOooStreams; ++i) {
      if (StreamCreate(&ooo[i], cu::kStreamNonBlocking)) {
        why = "cannot create streams";
        return;
      }
      for (cu::Event &e : ooo_events[i])
        if (EventCreate(&e, cu::kEventDisableTiming)) {
          why = "cannot create events";
          return;
        }
    }
    // Keep memory across synchronisation, as the Ordo rows do with their default pool.
    DeviceGetDefaultMemPool(&default_pool, dev);
    uint64_t keep = UINT64_MAX;
    MemPoolSetAttribute(default_pool, cu::kReleaseThreshold, &keep);
    ok = true;
  }
  void current() { CtxSetCurrent(ctx); }
  cu::Result launch_fill(cu::Stream s, cu::DevicePtr p, uint32_t v) {
    void *args[] = {&p, &v};
    return LaunchKernel(fill, unsigned(kFillElems / kLocal), 1, 1, unsigned(kLocal), 1, 1, 0, s, args, nullptr);
  }
};

Raw &raw() {
  static Raw *r = new Raw();
  return *r;
}

// ---- Ordo ---------------------------------------------------------------------------------

struct Ordo {
  const char *side; // "ordo" (CUDA adapter) or "hip" (HIP adapter): which ratio a row feeds
  bool ok = false;
  std::string why;
  ur_dditable_t t{};
  ur_device_handle_t dev = nullptr;
  ur_context_handle_t ctx = nullptr;
  ur_queue_handle_t queue = nullptr, queue2 = nullptr, ooq = nullptr;
  ur_kernel_handle_t fill = nullptr, empty = nullptr;

  Ordo(const char *which, const char *env_name, const char *library) : side(which) {
    const char *env = std::getenv(env_name);
    std::string path = env ? env : exe_dir() + "/../lib/" + library;
    void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "cannot open " + path + ": " + dlerror();
      return;
    }
#define GET_TABLE(name)                                                                                                \
  if (auto get = reinterpret_cast<ur_pfnGet##name##ProcAddrTable_t>(dlsym(lib, "urGet" #name "ProcAddrTable")))        \
    get(UR_API_VERSION_CURRENT, &t.name);
    // clang-format off
    GET_TABLE(Adapter)
    GET_TABLE(Platform)
    GET_TABLE(Device)
    GET_TABLE(Context)
    GET_TABLE(Queue) GET_TABLE(Program) GET_TABLE(Kernel) GET_TABLE(Enqueue) GET_TABLE(EnqueueExp) GET_TABLE(Event)
        GET_TABLE(USM) GET_TABLE(USMExp) GET_TABLE(UsmP2PExp)
    // clang-format on
#undef GET_TABLE
            ur_adapter_handle_t adapter = nullptr;
    ur_platform_handle_t platform = nullptr;
    uint32_t n = 0;
    if (!t.Adapter.pfnGet || t.Adapter.pfnGet(1, &adapter, nullptr) || t.Platform.pfnGet(adapter, 1, &platform, &n) ||
        n == 0) {
      why = std::string("the adapter ") + library + " reports no platform (no driver or no GPU)";
      return;
    }
    if (t.Device.pfnGet(platform, UR_DEVICE_TYPE_GPU, 1, &dev, nullptr) ||
        t.Context.pfnCreate(1, &dev, nullptr, &ctx) || t.Queue.pfnCreate(ctx, dev, nullptr, &queue) ||
        t.Queue.pfnCreate(ctx, dev, nullptr, &queue2)) {
      why = "cannot create a context and queues";
      return;
    }
    ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
    t.Queue.pfnCreate(ctx, dev, &props, &ooq);
    std::vector<char> ptx = read_text(kernel_path());
    const uint8_t *data = reinterpret_cast<const uint8_t *>(ptx.data());
    size_t size = ptx.empty() ? 0 : ptx.size() - 1;
    ur_program_handle_t program = nullptr;
    if (size == 0 || t.Program.pfnCreateWithBinary(ctx, 1, &dev, &size, &data, nullptr, &program) ||
        t.Program.pfnBuild(ctx, program, nullptr) || t.Kernel.pfnCreate(program, "fill", &fill) ||
        t.Kernel.pfnCreate(program, "empty", &empty)) {
      why = "cannot build " + kernel_path();
      return;
    }
    // Keep memory across synchronisation, as the raw rows do with the driver's pool
    // (the default pool's release threshold is 0 otherwise, like CUDA's).
    ur_usm_pool_handle_t pool = nullptr;
    size_t keep = SIZE_MAX;
    if (t.USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &pool) ||
        t.USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &keep, sizeof keep)) {
      why = "cannot set the default pool's release threshold";
      return;
    }
    ok = true;
  }

  ur_result_t launch_fill(ur_queue_handle_t q, void *p, const uint32_t *v, uint32_t nwait,
                          const ur_event_handle_t *waits, ur_event_handle_t *ev) {
    ur_exp_kernel_arg_properties_t args[2] = {};
    args[0].stype = args[1].stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
    args[0].type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
    args[0].index = 0;
    args[0].size = sizeof(void *);
    args[0].value.pointer = p;
    args[1].type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
    args[1].index = 1;
    args[1].size = sizeof(uint32_t);
    args[1].value.value = v;
    size_t gws = kFillElems, lws = kLocal;
    return t.EnqueueExp.pfnKernelLaunchWithArgsExp(q, fill, 1, nullptr, &gws, &lws, 2, args, nullptr, nwait, waits, ev);
  }
};

// A crash of a GPU run leaves its stack on stderr (library + offset, for addr2line
// against the build that ran), then dies of the same signal.
void on_fatal_signal(int sig) {
  static const char msg[] = "ordo-bench: fatal signal; stack:\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void)ignored;
  void *frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
const bool fatal_signals_reported = [] {
  std::signal(SIGSEGV, on_fatal_signal);
  std::signal(SIGBUS, on_fatal_signal);
  std::signal(SIGABRT, on_fatal_signal);
  return true;
}();

Ordo &ordo() {
  static Ordo *o = new Ordo("ordo", "ORDO_CUDA_ADAPTER", "libur_adapter_cuda.so.0");
  return *o;
}
Ordo &hip() {
  static Ordo *o = new Ordo("hip", "ORDO_HIP_ADAPTER", "libur_adapter_hip.so.0");
  return *o;
}

// ---- time per operation, and the Ordo/raw ratios printed at exit ---------------------------

// Every row is run as at least kGpuRepetitions repetitions (ORDO_GPU_BENCH_REPETITIONS
// raises it); with --benchmark_enable_random_interleaving=true they interleave with the
// other rows' in one process, so a row and its raw baseline see the same machine. At
// exit each row is printed as the median of its repetitions with their range, the raw
// baseline of the same run beside it, the ratio of the medians and the range of the
// ratios of the repetitions taken pairwise (k-th Ordo with k-th raw) (docs/performance.md).
constexpr int kGpuRepetitions = 9;
int gpu_repetitions() {
  const char *env = std::getenv("ORDO_GPU_BENCH_REPETITIONS");
  int n = env ? std::atoi(env) : 0;
  return n > kGpuRepetitions ? n : kGpuRepetitions;
}

class Ratios {
public:
  void put(const std::string &workload, const char *side, int64_t iterations, double ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    sides_[side][workload].push_back({iterations, ns});
  }
  ~Ratios() {
    const auto &raw = sides_["raw"];
    for (const char *side : {"ordo", "hip"}) {
      const auto &rows = sides_[side];
      if (rows.empty()) continue;
      std::printf("\n%s ÷ raw CUDA, ns per operation: median of n repetitions [min-max]; ratio of the medians "
                  "[min-max of the repetitions' ratios, k-th with k-th] (same run)\n",
                  side == std::string("hip") ? "HIP adapter" : "CUDA adapter");
      for (auto &[name, runs] : rows) {
        auto it = raw.find(name);
        if (it == raw.end()) continue;
        const Stats o = stats(runs), b = stats(it->second);
        if (b.median <= 0 || o.n == 0) continue;
        double lo = 0, hi = 0;
        for (size_t k = 0; k < std::min(o.values.size(), b.values.size()); ++k) {
          const double r = o.values[k] / b.values[k];
          lo = k == 0 ? r : std::min(lo, r);
          hi = k == 0 ? r : std::max(hi, r);
        }
        std::printf(
            "  %-46s %-4s n=%-2zu %9.1f [%9.1f-%9.1f]  raw n=%-2zu %9.1f [%9.1f-%9.1f]  ratio %.3f [%.3f-%.3f]%s\n",
            name.c_str(), side, o.n, o.median, o.min, o.max, b.n, b.median, b.min, b.max, o.median / b.median, lo, hi,
            o.n < size_t(kGpuRepetitions) ? "  (fewer than 9 repetitions)" : "");
      }
    }
    // Raw rows with no Ordo counterpart (c'': the driver on 4 streams).
    for (auto &[name, runs] : raw) {
      if (sides_["ordo"].count(name) || sides_["hip"].count(name)) continue;
      const Stats b = stats(runs);
      if (b.n) std::printf("  %-46s raw  n=%-2zu %9.1f [%9.1f-%9.1f]\n", name.c_str(), b.n, b.median, b.min, b.max);
    }
    std::fflush(stdout);
  }

private:
  struct Run {
    int64_t iterations;
    double ns;
  };
  struct Stats {
    size_t n = 0;
    double median = 0, min = 0, max = 0;
    std::vector<double> values; // in the order the repetitions ran
  };
  // The full-length runs (Google Benchmark's shorter sizing runs left out).
  static Stats stats(const std::vector<Run> &runs) {
    int64_t most = 0;
    for (const Run &r : runs) most = std::max(most, r.iterations);
    Stats s;
    for (const Run &r : runs)
      if (r.iterations * 2 >= most) s.values.push_back(r.ns);
    s.n = s.values.size();
    if (s.n == 0) return s;
    std::vector<double> sorted = s.values;
    std::sort(sorted.begin(), sorted.end());
    s.median = s.n % 2 ? sorted[s.n / 2] : (sorted[s.n / 2 - 1] + sorted[s.n / 2]) / 2;
    s.min = sorted.front();
    s.max = sorted.back();
    return s;
  }
  std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::vector<Run>>> sides_;
};
Ratios ratios;

// Times the batches of a benchmark and reports nanoseconds per operation.
struct PerOp {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void report(benchmark::State &st, const char *workload, const char *side, size_t ops_per_iteration) {
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    double per = ns / double(st.iterations() * ops_per_iteration);
    st.counters["ns_per_op"] = benchmark::Counter(per, benchmark::Counter::kAvgThreads); // per thread
    st.SetItemsProcessed(int64_t(st.iterations() * ops_per_iteration));
    ratios.put(workload, side, int64_t(st.iterations()), per);
  }
};

#define REQUIRE(side)                                                                                                  \
  if (!side().ok) {                                                                                                    \
    st.SkipWithError(side().why.c_str());                                                                              \
    return;                                                                                                            \
  }
#define CHECK_OK(expr)                                                                                                 \
  if ((expr) != 0) {                                                                                                   \
    st.SkipWithError("call failed: " #expr);                                                                           \
    break;                                                                                                             \
  }

// (a) stream-ordered alloc + free of 1 MiB, back to back on one in-order queue / stream.
constexpr size_t kPairs = 256;

void BM_cuda_a_async_alloc_free_1MiB_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kPairs; ++i) {
      void *p = nullptr;
      CHECK_OK(o.t.EnqueueExp.pfnUSMDeviceAllocExp(o.queue, nullptr, kMiB, nullptr, 0, nullptr, &p, nullptr));
      CHECK_OK(o.t.EnqueueExp.pfnUSMFreeExp(o.queue, nullptr, p, 0, nullptr, nullptr));
    }
    o.t.Queue.pfnFinish(o.queue);
  }
  timer.report(st, "a async alloc+free 1 MiB", o.side, kPairs);
}

void BM_cuda_a_async_alloc_free_1MiB_raw(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kPairs; ++i) {
      cu::DevicePtr p = 0;
      CHECK_OK(r.MemAllocAsync(&p, kMiB, r.stream));
      CHECK_OK(r.MemFreeAsync(p, r.stream));
    }
    r.StreamSynchronize(r.stream);
  }
  timer.report(st, "a async alloc+free 1 MiB", "raw", kPairs);
}

// (b) alloc -> 1 MiB kernel -> free, in order. The sync rows show what
// stream-ordering saves over cuMemAlloc/cuMemFree (urUSMDeviceAlloc/urUSMFree).
constexpr size_t kRounds = 64;

void BM_cuda_b_alloc_kernel_free_inorder_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  PerOp timer;
  uint32_t v = 1;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds; ++i) {
      void *p = nullptr;
      CHECK_OK(o.t.EnqueueExp.pfnUSMDeviceAllocExp(o.queue, nullptr, kMiB, nullptr, 0, nullptr, &p, nullptr));
      CHECK_OK(o.launch_fill(o.queue, p, &v, 0, nullptr, nullptr));
      CHECK_OK(o.t.EnqueueExp.pfnUSMFreeExp(o.queue, nullptr, p, 0, nullptr, nullptr));
    }
    o.t.Queue.pfnFinish(o.queue);
  }
  timer.report(st, "b alloc->kernel->free in-order", o.side, kRounds);
}

void BM_cuda_b_alloc_kernel_free_inorder_raw(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds; ++i) {
      cu::DevicePtr p = 0;
      CHECK_OK(r.MemAllocAsync(&p, kMiB, r.stream));
      CHECK_OK(r.launch_fill(r.stream, p, 1));
      CHECK_OK(r.MemFreeAsync(p, r.stream));
    }
    r.StreamSynchronize(r.stream);
  }
  timer.report(st, "b alloc->kernel->free in-order", "raw", kRounds);
}

void BM_cuda_b_sync_alloc_kernel_free_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  PerOp timer;
  uint32_t v = 1;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds / 8; ++i) {
      void *p = nullptr;
      CHECK_OK(o.t.USM.pfnDeviceAlloc(o.ctx, o.dev, nullptr, nullptr, kMiB, &p));
      CHECK_OK(o.launch_fill(o.queue, p, &v, 0, nullptr, nullptr));
      CHECK_OK(o.t.USM.pfnFree(o.ctx, p));
    }
    o.t.Queue.pfnFinish(o.queue);
  }
  timer.report(st, "b' sync alloc->kernel->free", o.side, kRounds / 8);
}

void BM_cuda_b_sync_alloc_kernel_free_raw(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds / 8; ++i) {
      cu::DevicePtr p = 0;
      CHECK_OK(r.MemAlloc(&p, kMiB));
      CHECK_OK(r.launch_fill(r.stream, p, 1));
      CHECK_OK(r.MemFree(p));
    }
    r.StreamSynchronize(r.stream);
  }
  timer.report(st, "b' sync alloc->kernel->free", "raw", kRounds / 8);
}

// (c) the same on an out-of-order queue, ordered by explicit wait lists
// (alloc -> kernel -> free through events), against raw CUDA on one stream.
void BM_cuda_c_alloc_kernel_free_ooo_events_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  if (!o.ooq) {
    st.SkipWithError("no out-of-order queue");
    return;
  }
  PerOp timer;
  uint32_t v = 1;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds; ++i) {
      void *p = nullptr;
      ur_event_handle_t allocated = nullptr, ran = nullptr, freed = nullptr;
      CHECK_OK(o.t.EnqueueExp.pfnUSMDeviceAllocExp(o.ooq, nullptr, kMiB, nullptr, 0, nullptr, &p, &allocated));
      CHECK_OK(o.launch_fill(o.ooq, p, &v, 1, &allocated, &ran));
      CHECK_OK(o.t.EnqueueExp.pfnUSMFreeExp(o.ooq, nullptr, p, 1, &ran, &freed));
      o.t.Event.pfnRelease(allocated);
      o.t.Event.pfnRelease(ran);
      o.t.Event.pfnRelease(freed);
    }
    o.t.Queue.pfnFinish(o.ooq);
  }
  timer.report(st, "c alloc->kernel->free out-of-order (vs raw in-order)", o.side, kRounds);
}

void BM_cuda_c_alloc_kernel_free_ooo_events_raw_inorder(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds; ++i) {
      cu::DevicePtr p = 0;
      CHECK_OK(r.MemAllocAsync(&p, kMiB, r.stream));
      CHECK_OK(r.launch_fill(r.stream, p, 1));
      CHECK_OK(r.MemFreeAsync(p, r.stream));
    }
    r.StreamSynchronize(r.stream);
  }
  timer.report(st, "c alloc->kernel->free out-of-order (vs raw in-order)", "raw", kRounds);
}

// (c'') raw CUDA doing what an Ordo out-of-order queue does with the same program:
// each round on the next of 4 streams, an event recorded after each command. It
// tells the driver's own cost of spreading stream-ordered allocation over streams
// apart from the adapter's.
void BM_cuda_c_alloc_kernel_free_ooo_events_raw_4streams(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kRounds; ++i) {
      size_t k = i % Raw::kOooStreams;
      cu::Stream s = r.ooo[k];
      cu::DevicePtr p = 0;
      CHECK_OK(r.MemAllocAsync(&p, kMiB, s));
      CHECK_OK(r.EventRecord(r.ooo_events[k][0], s));
      CHECK_OK(r.launch_fill(s, p, 1));
      CHECK_OK(r.EventRecord(r.ooo_events[k][1], s));
      CHECK_OK(r.MemFreeAsync(p, s));
      CHECK_OK(r.EventRecord(r.ooo_events[k][2], s));
    }
    for (cu::Stream s : r.ooo) r.StreamSynchronize(s);
  }
  timer.report(st, "c'' raw: same program on 4 streams", "raw", kRounds);
}

// (d) empty-kernel launch throughput on one in-order queue.
constexpr size_t kLaunches = 1024;

void BM_cuda_d_empty_kernel_launch_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  PerOp timer;
  size_t one = 1;
  for (auto _ : st) {
    for (size_t i = 0; i < kLaunches; ++i)
      CHECK_OK(o.t.EnqueueExp.pfnKernelLaunchWithArgsExp(o.queue, o.empty, 1, nullptr, &one, &one, 0, nullptr, nullptr,
                                                         0, nullptr, nullptr));
    o.t.Queue.pfnFinish(o.queue);
  }
  timer.report(st, "d empty kernel launch", o.side, kLaunches);
}

void BM_cuda_d_empty_kernel_launch_raw(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kLaunches; ++i)
      CHECK_OK(r.LaunchKernel(r.empty, 1, 1, 1, 1, 1, 1, 0, r.stream, nullptr, nullptr));
    r.StreamSynchronize(r.stream);
  }
  timer.report(st, "d empty kernel launch", "raw", kLaunches);
}

// (e) random allocation: 73% allocations / 27% frees, sizes log-uniform in
// 1 KiB..64 MiB, alternating over two in-order queues (each block freed on the
// queue that allocated it), at most 4 GiB live. Same seed for both rows, each on a
// fresh pool; reports the pool's reserved and used high-water marks.
struct Op {
  bool alloc;
  size_t size;   // alloc: bytes
  size_t victim; // free: index into the live list
  int queue;
};

const std::vector<Op> &random_ops() {
  static std::vector<Op> ops = [] {
    std::mt19937_64 rng(20261122);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<Op> list;
    std::vector<size_t> live;
    size_t live_bytes = 0;
    const size_t limit = size_t(4) << 30;
    for (int i = 0; i < 4000; ++i) {
      bool alloc = unit(rng) < 0.73 || live.empty();
      size_t size = size_t(std::exp(std::log(1024.0) + unit(rng) * (std::log(64.0 * kMiB) - std::log(1024.0))));
      if (alloc && live_bytes + size > limit) alloc = false;
      if (alloc) {
        list.push_back({true, size, 0, int(rng() % 2)});
        live.push_back(size);
        live_bytes += size;
      } else {
        size_t victim = rng() % live.size();
        list.push_back({false, 0, victim, 0});
        live_bytes -= live[victim];
        live[victim] = live.back();
        live.pop_back();
      }
    }
    return list;
  }();
  return ops;
}

void report_pool(benchmark::State &st, size_t reserved_high, size_t used_high) {
  st.counters["reserved_high_MiB"] = double(reserved_high) / double(kMiB);
  st.counters["used_high_MiB"] = double(used_high) / double(kMiB);
  st.counters["reserved_over_used"] = used_high ? double(reserved_high) / double(used_high) : 0.0;
}

void BM_cuda_e_random_alloc_two_queues_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  if (o.t.USMExp.pfnPoolCreateExp(o.ctx, o.dev, &desc, &pool)) {
    st.SkipWithError("urUSMPoolCreateExp failed");
    return;
  }
  const auto &ops = random_ops();
  ur_queue_handle_t queues[2] = {o.queue, o.queue2};
  PerOp timer;
  for (auto _ : st) {
    std::vector<std::pair<void *, int>> live;
    for (const Op &op : ops) {
      if (op.alloc) {
        void *p = nullptr;
        CHECK_OK(
            o.t.EnqueueExp.pfnUSMDeviceAllocExp(queues[op.queue], pool, op.size, nullptr, 0, nullptr, &p, nullptr));
        live.emplace_back(p, op.queue);
      } else {
        auto [p, q] = live[op.victim];
        CHECK_OK(o.t.EnqueueExp.pfnUSMFreeExp(queues[q], pool, p, 0, nullptr, nullptr));
        live[op.victim] = live.back();
        live.pop_back();
      }
    }
    for (auto [p, q] : live) o.t.EnqueueExp.pfnUSMFreeExp(queues[q], pool, p, 0, nullptr, nullptr);
    o.t.Queue.pfnFinish(o.queue);
    o.t.Queue.pfnFinish(o.queue2);
  }
  timer.report(st, "e random alloc (per op)", o.side, ops.size());
  size_t reserved = 0, used = 0;
  o.t.USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP, &reserved, nullptr);
  o.t.USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &used, nullptr);
  report_pool(st, reserved, used);
  o.t.USMExp.pfnPoolDestroyExp(o.ctx, o.dev, pool);
}

void BM_cuda_e_random_alloc_two_queues_raw(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  cu::MemPoolProps props{};
  props.allocType = 1;
  props.location = {1, r.dev};
  cu::MemPool pool = nullptr;
  if (r.MemPoolCreate(&pool, &props)) {
    st.SkipWithError("cuMemPoolCreate failed");
    return;
  }
  int on = 1;
  for (int attr : {cu::kReuseFollowEvents, cu::kReuseOpportunistic, cu::kReuseInternalDeps})
    r.MemPoolSetAttribute(pool, attr, &on);
  const auto &ops = random_ops();
  cu::Stream streams[2] = {r.stream, r.stream2};
  PerOp timer;
  for (auto _ : st) {
    std::vector<std::pair<cu::DevicePtr, int>> live;
    for (const Op &op : ops) {
      if (op.alloc) {
        cu::DevicePtr p = 0;
        CHECK_OK(r.MemAllocFromPoolAsync(&p, op.size, pool, streams[op.queue]));
        live.emplace_back(p, op.queue);
      } else {
        auto [p, q] = live[op.victim];
        CHECK_OK(r.MemFreeAsync(p, streams[q]));
        live[op.victim] = live.back();
        live.pop_back();
      }
    }
    for (auto [p, q] : live) r.MemFreeAsync(p, streams[q]);
    r.StreamSynchronize(r.stream);
    r.StreamSynchronize(r.stream2);
  }
  timer.report(st, "e random alloc (per op)", "raw", ops.size());
  uint64_t reserved = 0, used = 0;
  r.MemPoolGetAttribute(pool, cu::kReservedHigh, &reserved);
  r.MemPoolGetAttribute(pool, cu::kUsedHigh, &used);
  report_pool(st, size_t(reserved), size_t(used));
  r.MemPoolDestroy(pool);
}

// (f) peer copy (issue 15): 64 MiB from device 0's memory into device 1's, through
// urEnqueueUSMMemcpy on device 1's queue in a context of both devices (peer access
// enabled) vs cuMemcpyPeerAsync between the two primary contexts. Needs two GPUs.
constexpr size_t kPeerBytes = 64 * kMiB;

std::string two_gpus() {
  int n = 0;
  raw().DeviceGetCount(&n);
  return n < 2 ? "needs two GPUs; found " + std::to_string(n) : std::string();
}

void BM_cuda_f_peer_copy_64MiB_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  const std::string why = two_gpus();
  if (!why.empty()) {
    st.SkipWithError(why.c_str());
    return;
  }
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t devs[2] = {};
  ur_context_handle_t ctx = nullptr;
  ur_queue_handle_t q = nullptr;
  void *a = nullptr, *b = nullptr;
  if (o.t.Device.pfnGetInfo(o.dev, UR_DEVICE_INFO_PLATFORM, sizeof platform, &platform, nullptr) ||
      o.t.Device.pfnGet(platform, UR_DEVICE_TYPE_GPU, 2, devs, nullptr) ||
      o.t.Context.pfnCreate(2, devs, nullptr, &ctx) || o.t.Queue.pfnCreate(ctx, devs[1], nullptr, &q) ||
      o.t.USM.pfnDeviceAlloc(ctx, devs[0], nullptr, nullptr, kPeerBytes, &a) ||
      o.t.USM.pfnDeviceAlloc(ctx, devs[1], nullptr, nullptr, kPeerBytes, &b) ||
      o.t.UsmP2PExp.pfnEnablePeerAccessExp(devs[1], devs[0])) {
    st.SkipWithError("cannot set up two devices with peer access");
    return;
  }
  PerOp timer;
  for (auto _ : st) {
    CHECK_OK(o.t.Enqueue.pfnUSMMemcpy(q, false, b, a, kPeerBytes, 0, nullptr, nullptr));
    o.t.Queue.pfnFinish(q);
  }
  timer.report(st, "f peer copy 64 MiB", o.side, 1);
  st.SetBytesProcessed(int64_t(st.iterations() * kPeerBytes));
  o.t.USM.pfnFree(ctx, a);
  o.t.USM.pfnFree(ctx, b);
  o.t.Queue.pfnRelease(q);
  o.t.Context.pfnRelease(ctx);
}

void BM_cuda_f_peer_copy_64MiB_raw(benchmark::State &st) {
  REQUIRE(raw);
  const std::string why = two_gpus();
  if (!why.empty()) {
    st.SkipWithError(why.c_str());
    return;
  }
  Raw &r = raw();
  cu::Device d1 = 0;
  cu::Context c1 = nullptr;
  cu::Stream s1 = nullptr;
  cu::DevicePtr a = 0, b = 0;
  r.current();
  if (r.MemAlloc(&a, kPeerBytes) || r.DeviceGet(&d1, 1) || r.PrimaryCtxRetain(&c1, d1) || r.CtxSetCurrent(c1) ||
      r.MemAlloc(&b, kPeerBytes) || r.StreamCreate(&s1, cu::kStreamNonBlocking)) {
    st.SkipWithError("cannot set up the second device");
    return;
  }
  r.CtxEnablePeerAccess(r.ctx, 0); // already enabled is fine
  PerOp timer;
  for (auto _ : st) {
    CHECK_OK(r.MemcpyPeerAsync(b, c1, a, r.ctx, kPeerBytes, s1));
    r.StreamSynchronize(s1);
  }
  timer.report(st, "f peer copy 64 MiB", "raw", 1);
  st.SetBytesProcessed(int64_t(st.iterations() * kPeerBytes));
  r.MemFree(b);
  r.current();
  r.MemFree(a);
}

// (g) scale (issue 11): every thread allocates and frees 64 KiB blocks on its own queue
// (its own stream) from the device's one default pool, at 1, 2, 4, 8 and 16 threads;
// per pair and thread, so Ordo ÷ raw at a thread count is also the throughput ratio.
constexpr size_t kScalePairs = 256;
constexpr size_t kScaleBytes = 64 * 1024;

std::string scale_workload(const benchmark::State &st) {
  return "g alloc+free 64 KiB, " + std::to_string(st.threads()) + " threads";
}

void BM_cuda_g_threads_alloc_free_ordo(benchmark::State &st, Ordo &o) {
  if (!o.ok) {
    st.SkipWithError(o.why.c_str());
    return;
  }
  REQUIRE(raw);
  ur_queue_handle_t q = nullptr;
  if (o.t.Queue.pfnCreate(o.ctx, o.dev, nullptr, &q)) {
    st.SkipWithError("cannot create a queue");
    return;
  }
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kScalePairs; ++i) {
      void *p = nullptr;
      CHECK_OK(o.t.EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, kScaleBytes, nullptr, 0, nullptr, &p, nullptr));
      CHECK_OK(o.t.EnqueueExp.pfnUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
    }
    o.t.Queue.pfnFinish(q);
  }
  timer.report(st, scale_workload(st).c_str(), o.side, kScalePairs);
  o.t.Queue.pfnRelease(q);
}

void BM_cuda_g_threads_alloc_free_raw(benchmark::State &st) {
  REQUIRE(raw);
  Raw &r = raw();
  r.current();
  cu::Stream s = nullptr;
  if (r.StreamCreate(&s, cu::kStreamNonBlocking)) {
    st.SkipWithError("cannot create a stream");
    return;
  }
  PerOp timer;
  for (auto _ : st) {
    for (size_t i = 0; i < kScalePairs; ++i) {
      cu::DevicePtr p = 0;
      CHECK_OK(r.MemAllocAsync(&p, kScaleBytes, s));
      CHECK_OK(r.MemFreeAsync(p, s));
    }
    r.StreamSynchronize(s);
  }
  timer.report(st, scale_workload(st).c_str(), "raw", kScalePairs);
  r.StreamDestroy(s);
}

} // namespace

// Ordo rows keep their names; each also runs through the HIP adapter as BM_hip_*.
#define ORDO_BENCH_CUDA_ROW(fn, name)                                                                                  \
  benchmark::internal::Benchmark *const name##_reg =                                                                   \
      benchmark::RegisterBenchmark(#name, [](benchmark::State &st) { fn(st, ordo()); })
#define ORDO_BENCH_HIP_ROW(fn, name)                                                                                   \
  benchmark::internal::Benchmark *const name##_reg =                                                                   \
      benchmark::RegisterBenchmark(#name, [](benchmark::State &st) { fn(st, hip()); })
ORDO_BENCH_CUDA_ROW(BM_cuda_a_async_alloc_free_1MiB_ordo, BM_cuda_a_async_alloc_free_1MiB_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_a_async_alloc_free_1MiB_raw)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_b_alloc_kernel_free_inorder_ordo, BM_cuda_b_alloc_kernel_free_inorder_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_b_alloc_kernel_free_inorder_raw)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_b_sync_alloc_kernel_free_ordo, BM_cuda_b_sync_alloc_kernel_free_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_b_sync_alloc_kernel_free_raw)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_c_alloc_kernel_free_ooo_events_ordo, BM_cuda_c_alloc_kernel_free_ooo_events_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_c_alloc_kernel_free_ooo_events_raw_inorder)->UseRealTime()->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_c_alloc_kernel_free_ooo_events_raw_4streams)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_d_empty_kernel_launch_ordo, BM_cuda_d_empty_kernel_launch_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_d_empty_kernel_launch_raw)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_e_random_alloc_two_queues_ordo, BM_cuda_e_random_alloc_two_queues_ordo)
    ->UseRealTime()
    ->Iterations(5)
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_e_random_alloc_two_queues_raw)->UseRealTime()->Iterations(5)->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_f_peer_copy_64MiB_ordo, BM_cuda_f_peer_copy_64MiB_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_f_peer_copy_64MiB_raw)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_CUDA_ROW(BM_cuda_g_threads_alloc_free_ordo, BM_cuda_g_threads_alloc_free_ordo)
    ->ThreadRange(1, 16)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
BENCHMARK(BM_cuda_g_threads_alloc_free_raw)->ThreadRange(1, 16)->UseRealTime()->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_a_async_alloc_free_1MiB_ordo, BM_hip_a_async_alloc_free_1MiB_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_b_alloc_kernel_free_inorder_ordo, BM_hip_b_alloc_kernel_free_inorder_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_b_sync_alloc_kernel_free_ordo, BM_hip_b_sync_alloc_kernel_free_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_c_alloc_kernel_free_ooo_events_ordo, BM_hip_c_alloc_kernel_free_ooo_events_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_d_empty_kernel_launch_ordo, BM_hip_d_empty_kernel_launch_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_e_random_alloc_two_queues_ordo, BM_hip_e_random_alloc_two_queues_ordo)
    ->UseRealTime()
    ->Iterations(5)
    ->Repetitions(gpu_repetitions());
ORDO_BENCH_HIP_ROW(BM_cuda_f_peer_copy_64MiB_ordo, BM_hip_f_peer_copy_64MiB_ordo)
    ->UseRealTime()
    ->Repetitions(gpu_repetitions());
