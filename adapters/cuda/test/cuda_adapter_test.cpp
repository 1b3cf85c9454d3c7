// SPDX-License-Identifier: Apache-2.0
// An adapter on the stream backend (CUDA, or HIP: built twice, ORDO_TEST_* name which)
// driven the way a loader drives it: dlopen the library, copy its tables out with the
// urGet*ProcAddrTable getters, call through them. HIP on an NVIDIA GPU runs through the
// test mapping of HIP onto CUDA (test/hip_on_cuda), so the same GPU tests apply.
//
// Without a GPU only the "Loading" tests run for real: the adapter loads, fills
// every slot, reports no platform and logs why. Everything else skips, saying so.
#if ORDO_TEST_HAS_CUDA_H
#include <cuda.h>
#endif
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ur_ddi.h"

namespace {

#define UR_OK(call) ASSERT_EQ(UR_RESULT_SUCCESS, (call))
#define UR_EXPECT_OK(call) EXPECT_EQ(UR_RESULT_SUCCESS, (call))

struct Loaded {
  void *lib = nullptr;
  std::string dl_error;
  ur_dditable_t t{};
  ur_adapter_handle_t adapter = nullptr;
  std::vector<ur_platform_handle_t> platforms;
  ur_device_handle_t device = nullptr;
  std::string log_path;
};

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Loaded *load() {
  auto *l = new Loaded();
  // The adapter's log goes to a file the test reads (the reason for no platform).
  l->log_path = "/tmp/ordo_adapter_test." + std::to_string(getpid()) + ".log";
  std::remove(l->log_path.c_str());
  std::string cfg = "level:info;flush:debug;output:file," + l->log_path;
  setenv(ORDO_TEST_LOG_ENV, cfg.c_str(), 1);
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
  if (n) {
    uint32_t nd = 0;
    l->t.Device.pfnGet(l->platforms[0], UR_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (nd) l->t.Device.pfnGet(l->platforms[0], UR_DEVICE_TYPE_ALL, 1, &l->device, nullptr);
  }
  return l;
}

Loaded &L() {
  static Loaded *l = load();
  return *l;
}
const ur_dditable_t &T() { return L().t; }

std::string no_device_reason() {
  std::string log = read_file(L().log_path);
  auto at = log.find("no " ORDO_TEST_NAME " platform");
  if (at == std::string::npos) return "no " ORDO_TEST_NAME " device";
  return log.substr(at, log.find('\n', at) - at);
}

// ---- without a GPU --------------------------------------------------------------------------

TEST(Loading, ExportsOnlyTheGettersAndFillsEverySlot) {
  ASSERT_NE(nullptr, L().lib) << L().dl_error;
  // Entry points stay hidden: the loader reaches them through the tables only.
  EXPECT_EQ(nullptr, dlsym(L().lib, "urAdapterGet"));
  EXPECT_EQ(nullptr, dlsym(L().lib, "urEnqueueUSMDeviceAllocExp"));
  const void *const *slots = reinterpret_cast<const void *const *>(&L().t);
  size_t n = sizeof(ur_dditable_t) / sizeof(void *);
  for (size_t i = 0; i < n; ++i) EXPECT_NE(nullptr, slots[i]) << "slot " << i;
  // An unimplemented function answers, it does not crash.
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
            T().Enqueue.pfnReadHostPipe(nullptr, nullptr, nullptr, false, nullptr, 0, 0, nullptr, nullptr));
}

TEST(Loading, AdapterHandleAndInfo) {
  ASSERT_NE(nullptr, L().adapter);
  // Handle-first dispatch: the handle's first word is the adapter's table.
  auto table = *reinterpret_cast<const ur_dditable_t *const *>(L().adapter);
  EXPECT_EQ(T().Adapter.pfnGetInfo, table->Adapter.pfnGetInfo);
  ur_backend_t backend{};
  UR_OK(T().Adapter.pfnGetInfo(L().adapter, UR_ADAPTER_INFO_BACKEND, sizeof(backend), &backend, nullptr));
  EXPECT_EQ(ORDO_TEST_BACKEND, backend);
  size_t size = 0;
  UR_OK(T().Adapter.pfnGetInfo(L().adapter, UR_ADAPTER_INFO_REFERENCE_COUNT, 0, nullptr, &size));
  EXPECT_EQ(sizeof(uint32_t), size);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            T().Adapter.pfnGetInfo(L().adapter, UR_ADAPTER_INFO_BACKEND, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            T().Adapter.pfnGetInfo(L().adapter, UR_ADAPTER_INFO_BACKEND, 1, &backend, nullptr));
}

TEST(Loading, ReportsPlatformsOrSaysWhyNot) {
  ASSERT_NE(nullptr, L().adapter);
  std::string log = read_file(L().log_path);
  if (L().platforms.empty()) {
    // One line saying why, e.g. "libcuda.so.1 not found" or cuInit returned 34.
    auto at = log.find("no " ORDO_TEST_NAME " platform");
    ASSERT_NE(std::string::npos, at) << "log was: " << log;
    std::cout << "[ reason   ] " << no_device_reason() << "\n";
    EXPECT_EQ(log.find("no " ORDO_TEST_NAME " platform"), log.rfind("no " ORDO_TEST_NAME " platform"))
        << "logged more than once";
  } else {
    EXPECT_EQ(std::string::npos, log.find("no " ORDO_TEST_NAME " platform"));
    char name[256] = {};
    UR_OK(T().Platform.pfnGetInfo(L().platforms[0], UR_PLATFORM_INFO_NAME, sizeof(name), name, nullptr));
    EXPECT_NE(std::string(name).find(ORDO_TEST_NAME), std::string::npos);
    ur_backend_t backend{};
    UR_OK(T().Platform.pfnGetInfo(L().platforms[0], UR_PLATFORM_INFO_BACKEND, sizeof(backend), &backend, nullptr));
    EXPECT_EQ(ORDO_TEST_BACKEND, backend);
  }
  uint32_t n = 0;
  UR_OK(T().Platform.pfnGet(L().adapter, 0, nullptr, &n));
  EXPECT_EQ(L().platforms.size(), n);
  ur_platform_handle_t p{};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, T().Platform.pfnGet(L().adapter, 0, &p, nullptr));
}

TEST(Loading, RefusesHandlesOfTheWrongKind) {
  ASSERT_NE(nullptr, L().adapter);
  char buf[64];
  // An adapter handle where a platform is expected: refused, not misread.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_PLATFORM,
            T().Platform.pfnGetInfo(reinterpret_cast<ur_platform_handle_t>(L().adapter), UR_PLATFORM_INFO_NAME,
                                    sizeof(buf), buf, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
            T().Platform.pfnGetInfo(nullptr, UR_PLATFORM_INFO_NAME, sizeof(buf), buf, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, T().Queue.pfnFinish(reinterpret_cast<ur_queue_handle_t>(L().adapter)));
  ur_context_handle_t ctx = nullptr;
  ur_device_handle_t bogus = reinterpret_cast<ur_device_handle_t>(L().adapter);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, T().Context.pfnCreate(1, &bogus, nullptr, &ctx));
}

// ---- with a GPU ------------------------------------------------------------------------------

std::vector<uint8_t> kernel_file(const char *name) {
  std::string s = read_file(std::string(ORDO_TEST_KERNELS) + "/" + name);
  return std::vector<uint8_t>(s.begin(), s.end());
}

ur_exp_kernel_arg_properties_t pointer_arg(uint32_t index, const void *p) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = p;
  return a;
}

ur_exp_kernel_arg_properties_t value_arg(uint32_t index, const void *v, size_t size) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  a.index = index;
  a.size = size;
  a.value.value = v;
  return a;
}

ur_exp_kernel_arg_properties_t local_arg(uint32_t index, size_t size) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_LOCAL;
  a.index = index;
  a.size = size;
  return a;
}

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!L().device) GTEST_SKIP() << "needs a " ORDO_TEST_NAME " device: " << no_device_reason();
    dev = L().device;
    UR_OK(T().Context.pfnCreate(1, &dev, nullptr, &ctx));
    UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &queue));
  }
  void TearDown() override {
    for (auto k : kernels) T().Kernel.pfnRelease(k);
    for (auto p : programs) T().Program.pfnRelease(p);
    if (queue) T().Queue.pfnRelease(queue);
    if (ctx) T().Context.pfnRelease(ctx);
  }

  ur_program_handle_t program(const char *file) {
    std::vector<uint8_t> image = kernel_file(file);
    EXPECT_FALSE(image.empty()) << "missing " << ORDO_TEST_KERNELS << "/" << file;
    const uint8_t *data = image.data();
    size_t size = image.size();
    ur_program_handle_t p = nullptr;
    EXPECT_EQ(UR_RESULT_SUCCESS, T().Program.pfnCreateWithBinary(ctx, 1, &dev, &size, &data, nullptr, &p));
    EXPECT_EQ(UR_RESULT_SUCCESS, T().Program.pfnBuild(ctx, p, nullptr));
    programs.push_back(p);
    return p;
  }
  ur_kernel_handle_t kernel(ur_program_handle_t p, const char *name) {
    ur_kernel_handle_t k = nullptr;
    EXPECT_EQ(UR_RESULT_SUCCESS, T().Kernel.pfnCreate(p, name, &k));
    kernels.push_back(k);
    return k;
  }
  ur_result_t launch_1d(ur_queue_handle_t q, ur_kernel_handle_t k, size_t n, size_t local,
                        std::vector<ur_exp_kernel_arg_properties_t> args, uint32_t nwait = 0,
                        const ur_event_handle_t *waits = nullptr, ur_event_handle_t *ev = nullptr) {
    return T().EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, 1, nullptr, &n, local ? &local : nullptr,
                                                     uint32_t(args.size()), args.data(), nullptr, nwait, waits, ev);
  }
  size_t pool_info(ur_usm_pool_handle_t p, ur_usm_pool_info_t what) {
    size_t v = 0;
    EXPECT_EQ(UR_RESULT_SUCCESS, T().USMExp.pfnPoolGetInfoExp(p, what, &v, nullptr));
    return v;
  }

  ur_device_handle_t dev = nullptr;
  ur_context_handle_t ctx = nullptr;
  ur_queue_handle_t queue = nullptr;
  std::vector<ur_program_handle_t> programs;
  std::vector<ur_kernel_handle_t> kernels;
};

TEST_F(Gpu, DeviceInfoIsReal) {
  char text[256] = {};
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_NAME, sizeof(text), text, nullptr));
  EXPECT_GT(std::strlen(text), 0u);
  std::cout << "[ device   ] " << text;
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_VERSION, sizeof(text), text, nullptr));
  std::cout << ", compute capability " << text << "\n";
  int major = -1, minor = -1;
  ASSERT_EQ(2, std::sscanf(text, "%d.%d", &major, &minor)) << text;
  EXPECT_GE(major, 5);
  uint32_t u32 = 0;
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_VENDOR_ID, sizeof(u32), &u32, nullptr));
  EXPECT_EQ(0x10deu, u32);
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_DEVICE_ID, sizeof(u32), &u32, nullptr));
  EXPECT_NE(0u, u32);
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof(u32), &u32, nullptr));
  EXPECT_GT(u32, 0u);
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_MEMORY_BUS_WIDTH, sizeof(u32), &u32, nullptr));
  EXPECT_GT(u32, 0u);
  size_t wg = 0, items[3] = {};
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr));
  EXPECT_GE(wg, 1024u);
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, sizeof(items), items, nullptr));
  EXPECT_GE(items[0], 1024u);
  uint64_t mem = 0;
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_GLOBAL_MEM_SIZE, sizeof(mem), &mem, nullptr));
  EXPECT_GT(mem, uint64_t(1) << 30);
  uint64_t free_mem = 0;
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_GLOBAL_MEM_FREE, sizeof(free_mem), &free_mem, nullptr));
  EXPECT_GT(free_mem, 0u);
  EXPECT_LE(free_mem, mem);
  uint8_t uuid[16] = {};
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_UUID, sizeof(uuid), uuid, nullptr));
  bool nonzero = false;
  for (uint8_t b : uuid) nonzero = nonzero || b;
  EXPECT_TRUE(nonzero);
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_PCI_ADDRESS, sizeof(text), text, nullptr));
  EXPECT_GT(std::strlen(text), 5u);
  ur_bool_t b = false;
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof(b), &b, nullptr));
  EXPECT_TRUE(b);
  UR_OK(T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_USM_POOL_SUPPORT, sizeof(b), &b, nullptr));
  EXPECT_TRUE(b);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            T().Device.pfnGetInfo(dev, UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, sizeof(size_t), items, nullptr));
  uint64_t d0 = 0, h0 = 0, d1 = 0, h1 = 0;
  UR_OK(T().Device.pfnGetGlobalTimestamps(dev, &d0, &h0));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  UR_OK(T().Device.pfnGetGlobalTimestamps(dev, &d1, &h1));
  EXPECT_GT(d1, d0);
  EXPECT_GT(h1, h0);
}

TEST_F(Gpu, SyncUsmFillCopyAndQueries) {
  const size_t n = 3 * 1024 * 64; // divisible by 3, 4 and 8
  void *d = nullptr, *h = nullptr, *s = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, n, &d));
  UR_OK(T().USM.pfnHostAlloc(ctx, nullptr, nullptr, n, &h));
  UR_OK(T().USM.pfnSharedAlloc(ctx, dev, nullptr, nullptr, n, &s));
  std::vector<uint8_t> out(n);
  for (size_t psize : {size_t{1}, size_t{3}, size_t{4}, size_t{8}, size_t{16}}) {
    uint8_t pattern[16];
    for (size_t i = 0; i < psize; ++i) pattern[i] = uint8_t(0x11 * (i + 1) + psize);
    UR_OK(T().Enqueue.pfnUSMFill(queue, d, psize, pattern, n, 0, nullptr, nullptr));
    UR_OK(T().Enqueue.pfnUSMMemcpy(queue, true, out.data(), d, n, 0, nullptr, nullptr));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(pattern[i % psize], out[i]) << "pattern " << psize << " at " << i;
  }
  // Device -> host USM -> shared -> pageable host.
  UR_OK(T().Enqueue.pfnUSMMemcpy(queue, false, h, d, n, 0, nullptr, nullptr));
  UR_OK(T().Enqueue.pfnUSMMemcpy(queue, false, s, h, n, 0, nullptr, nullptr));
  UR_OK(T().Queue.pfnFinish(queue));
  EXPECT_EQ(0, std::memcmp(s, out.data(), n));

  ur_usm_type_t type{};
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, d, UR_USM_ALLOC_INFO_TYPE, sizeof(type), &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_DEVICE, type);
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, h, UR_USM_ALLOC_INFO_TYPE, sizeof(type), &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_HOST, type);
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, s, UR_USM_ALLOC_INFO_TYPE, sizeof(type), &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_SHARED, type);
  void *base = nullptr;
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, static_cast<char *>(d) + 100, UR_USM_ALLOC_INFO_BASE_PTR, sizeof(base), &base,
                                   nullptr));
  EXPECT_EQ(d, base);
  size_t size = 0;
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, d, UR_USM_ALLOC_INFO_SIZE, sizeof(size), &size, nullptr));
  EXPECT_EQ(n, size);
  ur_device_handle_t owner = nullptr;
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, d, UR_USM_ALLOC_INFO_DEVICE, sizeof(owner), &owner, nullptr));
  EXPECT_EQ(dev, owner);
  int on_stack = 0;
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, &on_stack, UR_USM_ALLOC_INFO_TYPE, sizeof(type), &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type);

  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE, T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, 0, &base));
  EXPECT_EQ(UR_RESULT_ERROR_OVERLAPPING_REGIONS,
            T().Enqueue.pfnUSMMemcpy(queue, true, static_cast<char *>(d) + 8, d, 64, 0, nullptr, nullptr));
  UR_OK(T().USM.pfnFree(ctx, d));
  UR_OK(T().USM.pfnFree(ctx, h));
  UR_OK(T().USM.pfnFree(ctx, s));
  // A second free and a pointer never allocated: refused, no crash.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, T().USM.pfnFree(ctx, d));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, T().USM.pfnFree(ctx, &on_stack));
}

TEST_F(Gpu, TwoDimensionalCopyAndFill) {
  const size_t width = 100, height = 37, pitch = 128;
  void *d = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, pitch * height, &d));
  uint32_t zero = 0;
  UR_OK(T().Enqueue.pfnUSMFill(queue, d, 4, &zero, pitch * height, 0, nullptr, nullptr));
  uint8_t pattern[2] = {0xab, 0xcd};
  UR_OK(T().Enqueue.pfnUSMFill2D(queue, d, pitch, 2, pattern, width, height, 0, nullptr, nullptr));
  std::vector<uint8_t> host(width * height, 0);
  UR_OK(T().Enqueue.pfnUSMMemcpy2D(queue, true, host.data(), width, d, pitch, width, height, 0, nullptr, nullptr));
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(pattern[i % 2], host[i]) << i;
  // Pattern wider than 4 bytes: row by row.
  uint8_t wide[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  UR_OK(T().Enqueue.pfnUSMFill2D(queue, d, pitch, 8, wide, 96, height, 0, nullptr, nullptr));
  std::vector<uint8_t> rows(96 * height);
  UR_OK(T().Enqueue.pfnUSMMemcpy2D(queue, true, rows.data(), 96, d, pitch, 96, height, 0, nullptr, nullptr));
  for (size_t i = 0; i < rows.size(); ++i) ASSERT_EQ(wide[i % 8], rows[i]) << i;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            T().Enqueue.pfnUSMMemcpy2D(queue, true, host.data(), 10, d, pitch, 20, 1, 0, nullptr, nullptr));
  UR_OK(T().USM.pfnFree(ctx, d));
}

TEST_F(Gpu, PtxProgramBuildsAndRuns) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_program_build_status_t status{};
  UR_OK(T().Program.pfnGetBuildInfo(p, dev, UR_PROGRAM_BUILD_INFO_STATUS, sizeof(status), &status, nullptr));
  EXPECT_EQ(UR_PROGRAM_BUILD_STATUS_SUCCESS, status);
  size_t log_size = 0;
  UR_OK(T().Program.pfnGetBuildInfo(p, dev, UR_PROGRAM_BUILD_INFO_LOG, 0, nullptr, &log_size));
  EXPECT_GE(log_size, 1u);
  size_t nkernels = 0;
  UR_OK(T().Program.pfnGetInfo(p, UR_PROGRAM_INFO_NUM_KERNELS, sizeof(nkernels), &nkernels, nullptr));
  EXPECT_EQ(7u, nkernels);
  char names[512] = {};
  UR_OK(T().Program.pfnGetInfo(p, UR_PROGRAM_INFO_KERNEL_NAMES, sizeof(names), names, nullptr));
  EXPECT_NE(std::string::npos, std::string(names).find("local_sum")) << names;
  EXPECT_EQ(std::string::npos, std::string(names).find("_with_offset")) << "offset variants are not kernels";

  ur_kernel_handle_t fill = kernel(p, "fill");
  uint32_t nargs = 0;
  UR_OK(T().Kernel.pfnGetInfo(fill, UR_KERNEL_INFO_NUM_ARGS, sizeof(nargs), &nargs, nullptr));
  EXPECT_EQ(2u, nargs);
  ur_kernel_handle_t missing = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_NAME, T().Kernel.pfnCreate(p, "no_such_kernel", &missing));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_NAME, T().Kernel.pfnCreate(p, "", &missing));

  const size_t n = 1 << 20;
  uint32_t *d = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, n * 4, reinterpret_cast<void **>(&d)));
  uint32_t value = 0xc0ffee;
  UR_OK(launch_1d(queue, fill, n, 256, {pointer_arg(0, d), value_arg(1, &value, 4)}));
  UR_OK(launch_1d(queue, fill, n, 0, {pointer_arg(0, d), value_arg(1, &value, 4)})); // shape chosen
  std::vector<uint32_t> out(n);
  UR_OK(T().Enqueue.pfnUSMMemcpy(queue, true, out.data(), d, n * 4, 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(value, out[i]) << i;

  // Argument and shape errors are refused before anything is enqueued.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGS, launch_1d(queue, fill, n, 256, {pointer_arg(0, d)}));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
            launch_1d(queue, fill, n, 256, {pointer_arg(0, d), value_arg(1, &value, 2)}));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
            launch_1d(queue, fill, n, 256, {pointer_arg(0, d), value_arg(5, &value, 4)}));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE,
            launch_1d(queue, fill, n, 300, {pointer_arg(0, d), value_arg(1, &value, 4)}));

  // A global offset runs fill_with_offset: ids start at the offset.
  uint32_t zero = 0;
  UR_OK(T().Enqueue.pfnUSMFill(queue, d, 4, &zero, 64 * 4, 0, nullptr, nullptr));
  size_t offset = 16, count = 32;
  auto args = std::vector<ur_exp_kernel_arg_properties_t>{pointer_arg(0, d), value_arg(1, &value, 4)};
  UR_OK(T().EnqueueExp.pfnKernelLaunchWithArgsExp(queue, fill, 1, &offset, &count, nullptr, 2, args.data(), nullptr, 0,
                                                  nullptr, nullptr));
  UR_OK(T().Enqueue.pfnUSMMemcpy(queue, true, out.data(), d, 64 * 4, 0, nullptr, nullptr));
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ((i >= offset && i < offset + count) ? value : 0u, out[i]) << i;
  UR_OK(T().USM.pfnFree(ctx, d));
}

TEST_F(Gpu, CubinProgramLocalMemoryAnd2D) {
  ur_program_handle_t p = program("ordo_test_kernels.sm_90.cubin");
  ur_kernel_handle_t local_sum = kernel(p, "local_sum");
  ur_kernel_handle_t fill_2d = kernel(p, "fill_2d");
  ur_kernel_handle_t saxpy = kernel(p, "saxpy");
  const size_t n = 64 * 1024, group = 256;
  uint32_t *in = nullptr, *sums = nullptr;
  UR_OK(T().USM.pfnSharedAlloc(ctx, dev, nullptr, nullptr, n * 4, reinterpret_cast<void **>(&in)));
  UR_OK(T().USM.pfnSharedAlloc(ctx, dev, nullptr, nullptr, n / group * 4, reinterpret_cast<void **>(&sums)));
  for (size_t i = 0; i < n; ++i) in[i] = uint32_t(i % 1000);
  UR_OK(launch_1d(queue, local_sum, n, group, {pointer_arg(0, in), pointer_arg(1, sums), local_arg(2, group * 4)}));
  UR_OK(T().Queue.pfnFinish(queue));
  for (size_t g = 0; g < n / group; ++g) {
    uint32_t want = 0;
    for (size_t i = 0; i < group; ++i) want += uint32_t((g * group + i) % 1000);
    ASSERT_EQ(want, sums[g]) << "group " << g;
  }

  const size_t w = 256, h = 64;
  uint32_t *grid = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, w * h * 4, reinterpret_cast<void **>(&grid)));
  size_t gws[2] = {w, h}, lws[2] = {32, 4};
  uint32_t width = uint32_t(w);
  auto a0 = pointer_arg(0, grid), a1 = value_arg(1, &width, 4);
  ur_exp_kernel_arg_properties_t args[2] = {a0, a1};
  UR_OK(T().EnqueueExp.pfnKernelLaunchWithArgsExp(queue, fill_2d, 2, nullptr, gws, lws, 2, args, nullptr, 0, nullptr,
                                                  nullptr));
  std::vector<uint32_t> out(w * h);
  UR_OK(T().Enqueue.pfnUSMMemcpy(queue, true, out.data(), grid, w * h * 4, 0, nullptr, nullptr));
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(uint32_t(i), out[i]);

  float *x = nullptr, *y = nullptr;
  UR_OK(T().USM.pfnSharedAlloc(ctx, dev, nullptr, nullptr, n * 4, reinterpret_cast<void **>(&x)));
  UR_OK(T().USM.pfnSharedAlloc(ctx, dev, nullptr, nullptr, n * 4, reinterpret_cast<void **>(&y)));
  for (size_t i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = 1.0f;
  }
  float a = 2.0f;
  UR_OK(launch_1d(queue, saxpy, n, 128, {value_arg(0, &a, 4), pointer_arg(1, x), pointer_arg(2, y)}));
  UR_OK(T().Queue.pfnFinish(queue));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(2.0f * float(i) + 1.0f, y[i]);
  for (void *ptr : {static_cast<void *>(in), static_cast<void *>(sums), static_cast<void *>(grid),
                    static_cast<void *>(x), static_cast<void *>(y)})
    UR_OK(T().USM.pfnFree(ctx, ptr));
}

TEST_F(Gpu, BadBinariesAreRefusedWithALog) {
  const uint8_t junk[] = "this is not a GPU binary";
  const uint8_t *data = junk;
  size_t size = sizeof(junk);
  ur_program_handle_t p = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NATIVE_BINARY,
            T().Program.pfnCreateWithBinary(ctx, 1, &dev, &size, &data, nullptr, &p));
  const uint32_t spirv[] = {0x07230203u, 0x00010000u, 0, 0, 0};
  data = reinterpret_cast<const uint8_t *>(spirv);
  size = sizeof(spirv);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NATIVE_BINARY,
            T().Program.pfnCreateWithBinary(ctx, 1, &dev, &size, &data, nullptr, &p));
  const char broken[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n";
  data = reinterpret_cast<const uint8_t *>(broken);
  size = sizeof(broken) - 1;
  UR_OK(T().Program.pfnCreateWithBinary(ctx, 1, &dev, &size, &data, nullptr, &p));
  programs.push_back(p);
  EXPECT_EQ(UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE, T().Program.pfnBuild(ctx, p, nullptr));
  char log[4096] = {};
  UR_OK(T().Program.pfnGetBuildInfo(p, dev, UR_PROGRAM_BUILD_INFO_LOG, sizeof(log), log, nullptr));
  EXPECT_GT(std::strlen(log), 0u);
  std::cout << "[ jit log  ] " << std::string(log).substr(0, 120) << "\n";
  ur_kernel_handle_t k = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE, T().Kernel.pfnCreate(p, "k", &k));
}

TEST_F(Gpu, StreamOrderedAllocKernelFreeInOrder) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_usm_pool_handle_t def = nullptr, again = nullptr;
  UR_OK(T().USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &def));
  UR_OK(T().USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &again));
  EXPECT_EQ(def, again);
  const size_t n = 256 * 1024; // 1 MiB of uint32_t
  std::vector<uint32_t> out(n);
  for (uint32_t iter = 0; iter < 200; ++iter) {
    void *buf = nullptr;
    UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, n * 4, nullptr, 0, nullptr, &buf, nullptr));
    UR_OK(launch_1d(queue, fill, n, 256, {pointer_arg(0, buf), value_arg(1, &iter, 4)}));
    if (iter % 50 == 0) {
      ur_usm_pool_handle_t owner = nullptr;
      UR_OK(T().USM.pfnGetMemAllocInfo(ctx, buf, UR_USM_ALLOC_INFO_POOL, sizeof(owner), &owner, nullptr));
      EXPECT_EQ(def, owner);
      size_t size = 0;
      UR_OK(T().USM.pfnGetMemAllocInfo(ctx, buf, UR_USM_ALLOC_INFO_SIZE, sizeof(size), &size, nullptr));
      EXPECT_EQ(n * 4, size);
      UR_OK(T().Enqueue.pfnUSMMemcpy(queue, true, out.data(), buf, n * 4, 0, nullptr, nullptr));
      for (size_t i = 0; i < n; i += 97) ASSERT_EQ(iter, out[i]);
    }
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, buf, 0, nullptr, nullptr));
  }
  // Ordered on one stream, each free's block serves the next alloc: one chunk.
  size_t reserved_high = pool_info(def, UR_USM_POOL_INFO_RESERVED_HIGH_EXP);
  EXPECT_LE(reserved_high, size_t(4) << 20);
  EXPECT_EQ(n * 4, pool_info(def, UR_USM_POOL_INFO_USED_HIGH_EXP)); // exact: one live 1 MiB block at most
  UR_OK(T().Queue.pfnFinish(queue));
  size_t used = pool_info(def, UR_USM_POOL_INFO_USED_CURRENT_EXP);
  size_t reserved = pool_info(def, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP);
  std::cout << "[ pool     ] default pool after 200 x 1 MiB: used " << used << ", reserved " << reserved
            << ", reserved high " << reserved_high << "\n";
  EXPECT_EQ(0u, used);
  // A default pool's release threshold is 0: at urQueueFinish its free chunks go back.
  EXPECT_EQ(0u, pool_info(def, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP));
  EXPECT_EQ(0u, reserved);
}

TEST_F(Gpu, StreamOrderedOnOutOfOrderQueueWithEvents) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_kernel_handle_t inc = kernel(p, "increment");
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  ur_queue_handle_t ooq = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, &props, &ooq));
  const size_t n = 64 * 1024;
  std::vector<uint32_t> out(n);
  for (uint32_t iter = 0; iter < 20; ++iter) {
    void *buf = nullptr;
    ur_event_handle_t allocated = nullptr, filled = nullptr, bumped = nullptr, copied = nullptr, freed = nullptr;
    UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(ooq, nullptr, n * 4, nullptr, 0, nullptr, &buf, &allocated));
    UR_OK(launch_1d(ooq, fill, n, 256, {pointer_arg(0, buf), value_arg(1, &iter, 4)}, 1, &allocated, &filled));
    UR_OK(launch_1d(ooq, inc, n, 256, {pointer_arg(0, buf)}, 1, &filled, &bumped));
    UR_OK(T().Enqueue.pfnUSMMemcpy(ooq, false, out.data(), buf, n * 4, 1, &bumped, &copied));
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(ooq, nullptr, buf, 1, &copied, &freed));
    UR_OK(T().Event.pfnWait(1, &freed));
    for (size_t i = 0; i < n; i += 31) ASSERT_EQ(iter + 1, out[i]) << "iteration " << iter;
    ur_command_t type{};
    UR_OK(T().Event.pfnGetInfo(freed, UR_EVENT_INFO_COMMAND_TYPE, sizeof(type), &type, nullptr));
    EXPECT_EQ(UR_COMMAND_ENQUEUE_USM_FREE_EXP, type);
    for (auto e : {allocated, filled, bumped, copied, freed}) UR_OK(T().Event.pfnRelease(e));
  }
  // A barrier orders increments that would otherwise run on different streams.
  uint32_t *acc = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, n * 4, reinterpret_cast<void **>(&acc)));
  uint32_t zero = 0;
  UR_OK(T().Enqueue.pfnUSMFill(ooq, acc, 4, &zero, n * 4, 0, nullptr, nullptr));
  for (int i = 0; i < 16; ++i) {
    UR_OK(T().Enqueue.pfnEventsWaitWithBarrier(ooq, 0, nullptr, nullptr));
    UR_OK(launch_1d(ooq, inc, n, 256, {pointer_arg(0, acc)}));
  }
  UR_OK(T().Enqueue.pfnEventsWaitWithBarrier(ooq, 0, nullptr, nullptr));
  UR_OK(T().Enqueue.pfnUSMMemcpy(ooq, true, out.data(), acc, n * 4, 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(16u, out[i]) << i;
  UR_OK(T().USM.pfnFree(ctx, acc));
  UR_OK(T().Queue.pfnRelease(ooq));
}

TEST_F(Gpu, StreamOrderedBadInputChangesNothing) {
  ur_usm_pool_handle_t def = nullptr;
  UR_OK(T().USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &def));
  void *buf = nullptr, *plain = nullptr;
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, 4096, nullptr, 0, nullptr, &buf, nullptr));
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, 4096, &plain));
  UR_OK(T().Queue.pfnFinish(queue));
  size_t used_before = pool_info(def, UR_USM_POOL_INFO_USED_CURRENT_EXP);

  void *untouched = reinterpret_cast<void *>(0x1234);
  void *out = untouched;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_USM_SIZE,
            T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, 0, nullptr, 0, nullptr, &out, nullptr));
  EXPECT_EQ(untouched, out);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, 64, nullptr, 0, nullptr, nullptr, nullptr));
  ur_event_handle_t ev = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
            T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, 64, nullptr, 1, nullptr, &out, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
            T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, 64, nullptr, 0, &ev, &out, nullptr));
  int local = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
            T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, &local, 0, nullptr, nullptr)); // never allocated
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
            T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, plain, 0, nullptr, nullptr)); // not from a pool
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
            T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, static_cast<char *>(buf) + 16, 0, nullptr, nullptr));

  // A pool of another context.
  ur_context_handle_t other = nullptr;
  UR_OK(T().Context.pfnCreate(1, &dev, nullptr, &other));
  ur_usm_pool_handle_t foreign = nullptr;
  UR_OK(T().USMExp.pfnPoolGetDefaultDevicePoolExp(other, dev, &foreign));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT,
            T().EnqueueExp.pfnUSMDeviceAllocExp(queue, foreign, 64, nullptr, 0, nullptr, &out, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, T().EnqueueExp.pfnUSMFreeExp(queue, foreign, buf, 0, nullptr, nullptr));
  // Another context knows nothing of this context's allocations.
  ur_usm_type_t type = UR_USM_TYPE_DEVICE;
  UR_OK(T().USM.pfnGetMemAllocInfo(other, buf, UR_USM_ALLOC_INFO_TYPE, sizeof(type), &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, T().USM.pfnFree(other, plain));
  UR_OK(T().Context.pfnRelease(other));

  UR_OK(T().Queue.pfnFinish(queue));
  EXPECT_EQ(used_before, pool_info(def, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, buf, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
            T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, buf, 0, nullptr, nullptr)); // double free
  UR_OK(T().USM.pfnFree(ctx, plain));
  UR_OK(T().Queue.pfnFinish(queue));
}

TEST_F(Gpu, UserPoolHonoursLimitsAndReportsStatistics) {
  const size_t MiB = size_t(1) << 20;
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, 64 * MiB, 16 * MiB};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t pool = nullptr;
  UR_OK(T().USMExp.pfnPoolCreateExp(ctx, dev, &desc, &pool));
  EXPECT_EQ(64 * MiB, pool_info(pool, UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP));
  EXPECT_EQ(16 * MiB, pool_info(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP));

  void *a = nullptr, *b = nullptr;
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, 40 * MiB, nullptr, 0, nullptr, &a, nullptr));
  void *untouched = reinterpret_cast<void *>(0x1234);
  b = untouched;
  EXPECT_EQ(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
            T().EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, 40 * MiB, nullptr, 0, nullptr, &b, nullptr));
  EXPECT_EQ(untouched, b);
  UR_OK(T().Queue.pfnFinish(queue));
  EXPECT_LE(pool_info(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP), 64 * MiB);
  EXPECT_GE(pool_info(pool, UR_USM_POOL_INFO_USED_HIGH_EXP), 40 * MiB);
  EXPECT_GE(pool_info(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP), 40 * MiB);

  // After the free (ordered on the same queue), the block serves the next alloc.
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, nullptr));
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, 40 * MiB, nullptr, 0, nullptr, &b, nullptr));
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, pool, b, 0, nullptr, nullptr));
  UR_OK(T().Queue.pfnFinish(queue));
  EXPECT_EQ(0u, pool_info(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));

  // Reset the high-water marks; raise the threshold; trim to nothing.
  size_t zero = 0, threshold = 32 * MiB;
  UR_OK(T().USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &zero, sizeof(zero)));
  EXPECT_EQ(0u, pool_info(pool, UR_USM_POOL_INFO_USED_HIGH_EXP));
  UR_OK(T().USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &threshold, sizeof(threshold)));
  EXPECT_EQ(32 * MiB, pool_info(pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP));
  size_t one = 1; // any value written resets a high-water mark to the current value
  UR_OK(T().USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &one, sizeof(one)));
  EXPECT_EQ(0u, pool_info(pool, UR_USM_POOL_INFO_USED_HIGH_EXP));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            T().USMExp.pfnPoolSetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, &zero, sizeof(zero)));
  UR_OK(T().USMExp.pfnPoolTrimToExp(ctx, dev, pool, 0));
  EXPECT_EQ(0u, pool_info(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP));

  // The current pool: NULL allocations go to it until it is destroyed.
  UR_OK(T().USMExp.pfnPoolSetDevicePoolExp(ctx, dev, pool));
  ur_usm_pool_handle_t current = nullptr;
  UR_OK(T().USMExp.pfnPoolGetDevicePoolExp(ctx, dev, &current));
  EXPECT_EQ(pool, current);
  void *c = nullptr;
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, MiB, nullptr, 0, nullptr, &c, nullptr));
  ur_usm_pool_handle_t owner = nullptr;
  UR_OK(T().USM.pfnGetMemAllocInfo(ctx, c, UR_USM_ALLOC_INFO_POOL, sizeof(owner), &owner, nullptr));
  EXPECT_EQ(pool, owner);
  // Destroyed with a live block: the release waits for that block's free.
  UR_OK(T().USMExp.pfnPoolDestroyExp(ctx, dev, pool));
  UR_OK(T().USMExp.pfnPoolGetDevicePoolExp(ctx, dev, &current));
  ur_usm_pool_handle_t def = nullptr;
  UR_OK(T().USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &def));
  EXPECT_EQ(def, current);
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, c, 0, nullptr, nullptr));
  UR_OK(T().Queue.pfnFinish(queue));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, T().USMExp.pfnPoolDestroyExp(ctx, dev, def));
}

TEST_F(Gpu, AtTheLimitAnAllocationWaitsForAPendingFree) {
  // docs/async-alloc.md, reuse rule 3: a pool at its maximum makes an unordered allocation
  // wait for another queue's pending free instead of failing.
  const size_t MiB = size_t(1) << 20;
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, 64 * MiB, 0};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t pool = nullptr;
  UR_OK(T().USMExp.pfnPoolCreateExp(ctx, dev, &desc, &pool));
  ur_queue_handle_t other = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &other));
  const size_t big_n = size_t(256) << 20; // a 1 GiB fill keeps queue A busy for a while
  void *big = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, big_n * 4, &big));
  uint32_t v = 5, w = 6;
  void *a = nullptr, *b = nullptr;
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, 40 * MiB, nullptr, 0, nullptr, &a, nullptr));
  UR_OK(launch_1d(queue, fill, big_n, 256, {pointer_arg(0, big), value_arg(1, &v, 4)}));
  UR_OK(launch_1d(queue, fill, 10 * MiB, 256, {pointer_arg(0, a), value_arg(1, &v, 4)}));
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, pool, a, 0, nullptr, nullptr));
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(other, pool, 40 * MiB, nullptr, 0, nullptr, &b, nullptr));
  UR_OK(launch_1d(other, fill, 10 * MiB, 256, {pointer_arg(0, b), value_arg(1, &w, 4)}));
  std::vector<uint32_t> out(10 * MiB);
  UR_OK(T().Enqueue.pfnUSMMemcpy(other, true, out.data(), b, out.size() * 4, 0, nullptr, nullptr));
  for (size_t i = 0; i < out.size(); i += 4099) ASSERT_EQ(w, out[i]) << i;
  EXPECT_LE(pool_info(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP), 64 * MiB);
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(other, pool, b, 0, nullptr, nullptr));
  UR_OK(T().Queue.pfnFinish(queue));
  UR_OK(T().Queue.pfnFinish(other));
  UR_OK(T().USM.pfnFree(ctx, big));
  UR_OK(T().Queue.pfnRelease(other));
  UR_OK(T().USMExp.pfnPoolDestroyExp(ctx, dev, pool));
}

TEST_F(Gpu, StreamOrderedHostAndSharedMemory) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t inc = kernel(p, "increment");
  const size_t n = 4096;
  struct Kind {
    const char *name;
    ur_pfnEnqueueUSMHostAllocExp_t alloc;
    ur_usm_type_t type;
  };
  for (Kind kind : {Kind{"host", T().EnqueueExp.pfnUSMHostAllocExp, UR_USM_TYPE_HOST},
                    Kind{"shared", T().EnqueueExp.pfnUSMSharedAllocExp, UR_USM_TYPE_SHARED}}) {
    uint32_t *buf = nullptr;
    ur_result_t r = kind.alloc(queue, nullptr, n * 4, nullptr, 0, nullptr, reinterpret_cast<void **>(&buf), nullptr);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
      std::cout << "[ note     ] the device has no " << kind.name << " memory\n";
      continue;
    }
    UR_OK(r);
    UR_OK(T().Queue.pfnFinish(queue));
    for (size_t i = 0; i < n; ++i) buf[i] = uint32_t(i); // the host writes it directly
    UR_OK(launch_1d(queue, inc, n, 128, {pointer_arg(0, buf)}));
    UR_OK(T().Queue.pfnFinish(queue));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(uint32_t(i + 1), buf[i]) << kind.name;
    ur_usm_type_t type{};
    UR_OK(T().USM.pfnGetMemAllocInfo(ctx, buf, UR_USM_ALLOC_INFO_TYPE, sizeof(type), &type, nullptr));
    EXPECT_EQ(kind.type, type) << kind.name;
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, buf, 0, nullptr, nullptr));
  }
  UR_OK(T().Queue.pfnFinish(queue));
}

TEST_F(Gpu, ReuseAcrossQueuesFollowsEvents) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_queue_handle_t other = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &other));
  const size_t n = 256 * 1024;
  std::vector<uint32_t> out(n);
  for (uint32_t iter = 0; iter < 50; ++iter) {
    void *a = nullptr, *b = nullptr;
    ur_event_handle_t freed = nullptr;
    uint32_t one = 1, two = 2;
    UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, nullptr, n * 4, nullptr, 0, nullptr, &a, nullptr));
    UR_OK(launch_1d(queue, fill, n, 256, {pointer_arg(0, a), value_arg(1, &one, 4)}));
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, a, 0, nullptr, &freed));
    // Ordered after the free through its event: may (and usually does) get the same block.
    UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(other, nullptr, n * 4, nullptr, 1, &freed, &b, nullptr));
    UR_OK(launch_1d(other, fill, n, 256, {pointer_arg(0, b), value_arg(1, &two, 4)}));
    UR_OK(T().Enqueue.pfnUSMMemcpy(other, true, out.data(), b, n * 4, 0, nullptr, nullptr));
    for (size_t i = 0; i < n; i += 101) ASSERT_EQ(2u, out[i]);
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(other, nullptr, b, 0, nullptr, nullptr));
    UR_OK(T().Event.pfnRelease(freed));
  }
  UR_OK(T().Queue.pfnFinish(queue));
  UR_OK(T().Queue.pfnRelease(other));
}

TEST_F(Gpu, ProfilingStatusAndCallbacks) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_PROFILING_ENABLE};
  ur_queue_handle_t pq = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, &props, &pq));
  const size_t n = 1 << 22;
  void *buf = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, n * 4, &buf));
  uint32_t v = 7;
  ur_event_handle_t ev = nullptr;
  UR_OK(launch_1d(pq, fill, n, 256, {pointer_arg(0, buf), value_arg(1, &v, 4)}, 0, nullptr, &ev));

  std::mutex m;
  std::condition_variable cv;
  bool called = false;
  struct State {
    std::mutex *m;
    std::condition_variable *cv;
    bool *called;
  } state{&m, &cv, &called};
  UR_OK(T().Event.pfnSetCallback(
      ev, UR_EXECUTION_INFO_COMPLETE,
      [](ur_event_handle_t, ur_execution_info_t status, void *data) {
        auto *s = static_cast<State *>(data);
        std::lock_guard<std::mutex> lock(*s->m);
        *s->called = status == UR_EXECUTION_INFO_COMPLETE;
        s->cv->notify_all();
      },
      &state));
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
            T().Event.pfnSetCallback(
                ev, UR_EXECUTION_INFO_QUEUED, [](ur_event_handle_t, ur_execution_info_t, void *) {}, nullptr));
  UR_OK(T().Event.pfnWait(1, &ev));
  ur_event_status_t status{};
  UR_OK(T().Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, status);
  uint64_t queued = 0, submit = 0, start = 0, end = 0, complete = 0;
  UR_OK(T().Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_QUEUED, 8, &queued, nullptr));
  UR_OK(T().Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_SUBMIT, 8, &submit, nullptr));
  UR_OK(T().Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_START, 8, &start, nullptr));
  UR_OK(T().Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_END, 8, &end, nullptr));
  UR_OK(T().Event.pfnGetProfilingInfo(ev, UR_PROFILING_INFO_COMMAND_COMPLETE, 8, &complete, nullptr));
  EXPECT_LE(queued, submit);
  EXPECT_LE(submit, start);
  EXPECT_LT(start, end); // a 16 MiB fill takes microseconds
  EXPECT_LE(end, complete);
  EXPECT_LT(end - start, uint64_t(1000000000));
  std::cout << "[ profile  ] 16 MiB fill kernel: " << (end - start) << " ns\n";
  {
    std::unique_lock<std::mutex> lock(m);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return called; })) << "callback not called";
  }
  ur_event_handle_t plain = nullptr;
  UR_OK(T().Enqueue.pfnEventsWait(queue, 0, nullptr, &plain));
  UR_OK(T().Event.pfnWait(1, &plain));
  EXPECT_EQ(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
            T().Event.pfnGetProfilingInfo(plain, UR_PROFILING_INFO_COMMAND_START, 8, &start, nullptr));
  UR_OK(T().Event.pfnRelease(plain));
  UR_OK(T().Event.pfnRelease(ev));
  UR_OK(T().USM.pfnFree(ctx, buf));
  UR_OK(T().Queue.pfnRelease(pq));
}

TEST_F(Gpu, ManyThreadsAllocateAndFreeConcurrently) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ur_queue_handle_t q = nullptr;
      if (T().Queue.pfnCreate(ctx, dev, nullptr, &q) != UR_RESULT_SUCCESS) {
        ++failures;
        return;
      }
      const size_t n = 16 * 1024;
      std::vector<uint32_t> out(n);
      for (uint32_t i = 0; i < 200; ++i) {
        void *buf = nullptr;
        uint32_t v = uint32_t(t * 1000) + i;
        bool ok = T().EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, n * 4 + i * 64, nullptr, 0, nullptr, &buf, nullptr) ==
                  UR_RESULT_SUCCESS;
        ok = ok && launch_1d(q, fill, n, 128, {pointer_arg(0, buf), value_arg(1, &v, 4)}) == UR_RESULT_SUCCESS;
        if (ok && i % 40 == 0) {
          ok = T().Enqueue.pfnUSMMemcpy(q, true, out.data(), buf, n * 4, 0, nullptr, nullptr) == UR_RESULT_SUCCESS;
          ok = ok && out[n - 1] == v && out[0] == v;
        }
        ok = ok && T().EnqueueExp.pfnUSMFreeExp(q, nullptr, buf, 0, nullptr, nullptr) == UR_RESULT_SUCCESS;
        if (!ok) ++failures;
      }
      if (T().Queue.pfnRelease(q) != UR_RESULT_SUCCESS) ++failures;
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(0, failures.load());
}

// Stream-ordered allocs and frees record no driver event of their own (docs/cuda.md,
// "Deferred events"); their events must still answer status, waits, wait lists on other
// queues, callbacks and native handles as a recorded event does, also after their
// queue is gone.
TEST_F(Gpu, DeferredAllocAndFreeEventsBehaveLikeRecordedOnes) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_queue_handle_t a = nullptr, b = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &a));
  UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &b));
  const size_t big = 32 * 1024 * 1024; // uint32_t: keeps the stream busy for a while
  const size_t n = 64 * 1024;
  uint32_t *host = nullptr;
  UR_OK(T().USM.pfnHostAlloc(ctx, nullptr, nullptr, n * 4, reinterpret_cast<void **>(&host)));
  static std::atomic<int> called{0};
  called = 0;
  for (uint32_t iter = 1; iter <= 20; ++iter) {
    void *slow = nullptr, *buf = nullptr;
    ur_event_handle_t allocated = nullptr, freed = nullptr, joined = nullptr;
    UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(a, nullptr, big * 4, nullptr, 0, nullptr, &slow, nullptr));
    UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(a, nullptr, n * 4, nullptr, 0, nullptr, &buf, &allocated));
    UR_OK(launch_1d(a, fill, big, 256, {pointer_arg(0, slow), value_arg(1, &iter, 4)}));
    UR_OK(launch_1d(a, fill, n, 256, {pointer_arg(0, buf), value_arg(1, &iter, 4)}));
    UR_OK(T().Enqueue.pfnUSMMemcpy(a, false, host, buf, n * 4, 0, nullptr, nullptr));
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(a, nullptr, buf, 0, nullptr, &freed));
    UR_OK(T().EnqueueExp.pfnUSMFreeExp(a, nullptr, slow, 0, nullptr, nullptr));
    ur_event_status_t st{};
    UR_OK(T().Event.pfnGetInfo(freed, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr));
    EXPECT_TRUE(st == UR_EVENT_STATUS_SUBMITTED || st == UR_EVENT_STATUS_RUNNING || st == UR_EVENT_STATUS_COMPLETE);
    UR_OK(T().Event.pfnSetCallback(
        freed, UR_EXECUTION_INFO_COMPLETE, [](ur_event_handle_t, ur_execution_info_t, void *) { ++called; }, nullptr));
    // Another queue waits for the free: the copy before it in a's order must be done.
    UR_OK(T().Enqueue.pfnEventsWait(b, 1, &freed, &joined));
    UR_OK(T().Event.pfnWait(1, &joined));
    for (size_t i = 0; i < n; i += 61) ASSERT_EQ(iter, host[i]) << "iteration " << iter;
    UR_OK(T().Event.pfnGetInfo(freed, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr));
    EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, st);
    ur_native_handle_t native = 0;
    UR_OK(T().Event.pfnGetNativeHandle(allocated, &native));
    EXPECT_NE(0u, native);
    UR_OK(T().Event.pfnWait(1, &allocated));
    for (auto e : {allocated, freed, joined}) UR_OK(T().Event.pfnRelease(e));
  }
  // A free's event outliving its queue: complete, waitable, with a native handle.
  void *last = nullptr;
  ur_event_handle_t freed = nullptr;
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(a, nullptr, n * 4, nullptr, 0, nullptr, &last, nullptr));
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(a, nullptr, last, 0, nullptr, &freed));
  UR_OK(T().Queue.pfnRelease(a));
  ur_event_status_t st{};
  UR_OK(T().Event.pfnGetInfo(freed, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, st);
  UR_OK(T().Event.pfnWait(1, &freed));
  UR_OK(T().Enqueue.pfnEventsWait(b, 1, &freed, nullptr));
  ur_native_handle_t native = 0;
  UR_OK(T().Event.pfnGetNativeHandle(freed, &native));
  EXPECT_NE(0u, native);
  UR_OK(T().Event.pfnRelease(freed));
  UR_OK(T().Queue.pfnFinish(b));
  for (int i = 0; i < 200 && called.load() < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(20, called.load());
  UR_OK(T().USM.pfnFree(ctx, host));
  UR_OK(T().Queue.pfnRelease(b));
}

#if ORDO_TEST_HAS_CUDA_H
// ---- the driver's process-wide memory pools --------------------------------------------------

// The driver's own view of its memory pools, read through libcuda directly: the
// adapter must leave every pool of the process as it found it (docs/cuda.md).
struct DriverPools {
  std::string why; // why it cannot be read; empty when it can
  decltype(&::cuDeviceGetDefaultMemPool) device_default = nullptr;
  decltype(&::cuDeviceGetMemPool) device_current = nullptr;
  decltype(&::cuMemGetDefaultMemPool) default_of = nullptr;
  decltype(&::cuMemGetMemPool) current_of = nullptr;
  decltype(&::cuMemPoolGetAttribute) attribute = nullptr;

  DriverPools() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = std::string("libcuda.so.1 not found: ") + dlerror();
      return;
    }
    auto init = reinterpret_cast<decltype(&::cuInit)>(dlsym(lib, "cuInit"));
    auto resolver = reinterpret_cast<decltype(&::cuGetProcAddress)>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!init || !resolver || init(0) != CUDA_SUCCESS) {
      why = "libcuda.so.1 is not a usable driver";
      return;
    }
    auto get = [&](const char *name, auto &fn) {
      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      void *p = nullptr;
      if (resolver(name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS && p)
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      else if (why.empty())
        why = std::string("the driver lacks ") + name;
    };
    get("cuDeviceGetDefaultMemPool", device_default);
    get("cuDeviceGetMemPool", device_current);
    get("cuMemGetDefaultMemPool", default_of);
    get("cuMemGetMemPool", current_of);
    get("cuMemPoolGetAttribute", attribute);
  }

  struct State {
    std::string name;
    CUmemoryPool pool = nullptr;
    cuuint64_t threshold = 0;
    int follow_events = -1, opportunistic = -1, internal_dependencies = -1;
    bool operator==(const State &o) const {
      return pool == o.pool && threshold == o.threshold && follow_events == o.follow_events &&
             opportunistic == o.opportunistic && internal_dependencies == o.internal_dependencies;
    }
  };
  // Every pool the driver has for `dev`: its default and current device pools, and
  // the default and current pinned-host and managed pools (where the driver has them).
  std::vector<State> read(CUdevice dev) const {
    std::vector<State> all;
    auto add = [&](const char *name, auto query) {
      CUmemoryPool pool = nullptr;
      if (query(&pool) != CUDA_SUCCESS || !pool) return; // no such pool on this driver or device
      State st;
      st.name = name;
      st.pool = pool;
      attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &st.threshold);
      attribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &st.follow_events);
      attribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &st.opportunistic);
      attribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &st.internal_dependencies);
      all.push_back(st);
    };
    CUmemLocation host{CU_MEM_LOCATION_TYPE_HOST, 0};
    CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, int(dev)};
    add("device default", [&](CUmemoryPool *p) { return device_default(p, dev); });
    add("device current", [&](CUmemoryPool *p) { return device_current(p, dev); });
    add("pinned host default", [&](CUmemoryPool *p) { return default_of(p, &host, CU_MEM_ALLOCATION_TYPE_PINNED); });
    add("pinned host current", [&](CUmemoryPool *p) { return current_of(p, &host, CU_MEM_ALLOCATION_TYPE_PINNED); });
    add("managed default", [&](CUmemoryPool *p) { return default_of(p, &device, CU_MEM_ALLOCATION_TYPE_MANAGED); });
    add("managed current", [&](CUmemoryPool *p) { return current_of(p, &device, CU_MEM_ALLOCATION_TYPE_MANAGED); });
    return all;
  }
};

std::ostream &operator<<(std::ostream &os, const DriverPools::State &s) {
  return os << s.name << " pool " << s.pool << ": release threshold " << s.threshold << ", follow events "
            << s.follow_events << ", opportunistic " << s.opportunistic << ", internal dependencies "
            << s.internal_dependencies;
}

// Issue 9, bug 5: the adapter used to reconfigure the device's default memory pool
// (release threshold, reuse policies), which every CUDA user of the process shares.
// Stream-ordered work of every kind, on the default, host and user pools, with the
// default pool's threshold set and trimmed through UR, leaves them as they were.
TEST_F(Gpu, ProcessMemoryPoolsAreLeftAsFound) {
  static const DriverPools driver;
  if (!driver.why.empty()) GTEST_SKIP() << "cannot read the driver's pools: " << driver.why;
  ur_native_handle_t native = 0;
  UR_OK(T().Device.pfnGetNativeHandle(dev, &native));
  const CUdevice cu_dev = CUdevice(native);
  const std::vector<DriverPools::State> before = driver.read(cu_dev);
  ASSERT_FALSE(before.empty()) << "the driver reports no memory pool for the device";
  for (auto &st : before) std::cout << "[ pool     ] before: " << st << "\n";

  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  ur_queue_handle_t ooq = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, &props, &ooq));
  ur_usm_pool_handle_t def = nullptr, user = nullptr;
  UR_OK(T().USMExp.pfnPoolGetDefaultDevicePoolExp(ctx, dev, &def));
  size_t keep = size_t(1) << 30; // the Ordo default pool's threshold, not the driver's
  UR_OK(T().USMExp.pfnPoolSetInfoExp(def, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &keep, sizeof(keep)));
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  UR_OK(T().USMExp.pfnPoolCreateExp(ctx, dev, &desc, &user));
  const size_t n = 64 * 1024;
  for (uint32_t iter = 0; iter < 20; ++iter) {
    for (ur_queue_handle_t q : {queue, ooq}) {
      void *d = nullptr, *s = nullptr, *h = nullptr, *u = nullptr;
      ur_event_handle_t ready[4] = {};
      UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(q, nullptr, n * 4, nullptr, 0, nullptr, &d, &ready[0]));
      UR_OK(T().EnqueueExp.pfnUSMSharedAllocExp(q, nullptr, n * 4, nullptr, 0, nullptr, &s, &ready[1]));
      UR_OK(T().EnqueueExp.pfnUSMHostAllocExp(q, nullptr, n * 4, nullptr, 0, nullptr, &h, &ready[2]));
      UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(q, user, n * 4, nullptr, 0, nullptr, &u, &ready[3]));
      ur_event_handle_t filled[4] = {};
      void *bufs[4] = {d, s, h, u};
      for (int k = 0; k < 4; ++k)
        UR_OK(launch_1d(q, fill, n, 256, {pointer_arg(0, bufs[k]), value_arg(1, &iter, 4)}, 1, &ready[k], &filled[k]));
      for (int k = 0; k < 4; ++k) {
        UR_OK(T().EnqueueExp.pfnUSMFreeExp(q, nullptr, bufs[k], 1, &filled[k], nullptr));
        UR_OK(T().Event.pfnRelease(ready[k]));
        UR_OK(T().Event.pfnRelease(filled[k]));
      }
    }
    if (iter % 5 == 4) {
      UR_OK(T().Queue.pfnFinish(queue));
      UR_OK(T().Queue.pfnFinish(ooq));
    }
  }
  void *sync = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, def, 4096, &sync));
  UR_OK(T().USM.pfnFree(ctx, sync));
  UR_OK(T().Queue.pfnFinish(queue));
  UR_OK(T().Queue.pfnFinish(ooq));
  UR_OK(T().USMExp.pfnPoolTrimToExp(ctx, dev, def, 0));
  UR_OK(T().USMExp.pfnPoolDestroyExp(ctx, dev, user));
  UR_OK(T().Queue.pfnRelease(ooq));

  const std::vector<DriverPools::State> after = driver.read(cu_dev);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i], after[i]) << "after: " << after[i];
}
#else
TEST_F(Gpu, ProcessMemoryPoolsAreLeftAsFound) {
  GTEST_SKIP() << "built without cuda.h: the driver's pools cannot be read";
}
#endif

// Bug 2: frees on one stream must reach the pool in the order their commands enter
// it (the adapter makes the pool call in the same hold of the stream's lock as the
// free's event). Four threads share one in-order queue and a pool small enough that
// pending memory is reused all the time; a fifth thread, on another queue, takes
// memory the pool believes free and checks its own pattern, which a writer still
// running on that memory would spoil. A stress test: the race it guards against has
// a window too narrow to hit on demand.
TEST_F(Gpu, ThreadsSharingOneQueueKeepTheirBlocks) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  ur_queue_handle_t other = nullptr;
  UR_OK(T().Queue.pfnCreate(ctx, dev, nullptr, &other));
  std::atomic<int> failures{0}, writers{4};
  const size_t n = 16 * 1024;
  // Room for 16 blocks: pending memory is reused all the time, yet with 5 blocks
  // live at most some gap always fits one more.
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, 16 * n * 4, 0};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_usm_pool_handle_t pool = nullptr;
  UR_OK(T().USMExp.pfnPoolCreateExp(ctx, dev, &desc, &pool));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint32_t> out(n);
      for (uint32_t i = 0; i < 150; ++i) {
        void *buf = nullptr;
        uint32_t v = uint32_t(t * 1000) + i;
        size_t bytes = n * 4 - size_t(t) * 64; // sizes differ, so blocks split and merge
        bool ok = T().EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, bytes, nullptr, 0, nullptr, &buf, nullptr) ==
                  UR_RESULT_SUCCESS;
        ok =
            ok && launch_1d(queue, fill, bytes / 4, 0, {pointer_arg(0, buf), value_arg(1, &v, 4)}) == UR_RESULT_SUCCESS;
        if (ok && i % 10 == 0) {
          ok = T().Enqueue.pfnUSMMemcpy(queue, true, out.data(), buf, bytes, 0, nullptr, nullptr) == UR_RESULT_SUCCESS;
          for (size_t k = 0; ok && k < bytes / 4; k += 61) ok = out[k] == v;
        }
        ok = ok && T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, buf, 0, nullptr, nullptr) == UR_RESULT_SUCCESS;
        if (!ok) ++failures;
      }
      --writers;
    });
  }
  std::atomic<int> spoiled{0};
  threads.emplace_back([&] {
    std::vector<uint32_t> out(n);
    for (uint32_t i = 0; writers.load() > 0 || i < 20; ++i) {
      void *buf = nullptr;
      uint32_t v = 0xc0ffee00u + i;
      size_t bytes = (n - (i % 4) * 16) * 4;
      bool ok = T().EnqueueExp.pfnUSMDeviceAllocExp(other, pool, bytes, nullptr, 0, nullptr, &buf, nullptr) ==
                UR_RESULT_SUCCESS;
      ok = ok && launch_1d(other, fill, bytes / 4, 0, {pointer_arg(0, buf), value_arg(1, &v, 4)}) == UR_RESULT_SUCCESS;
      ok =
          ok && T().Enqueue.pfnUSMMemcpy(other, true, out.data(), buf, bytes, 0, nullptr, nullptr) == UR_RESULT_SUCCESS;
      for (size_t k = 0; ok && k < bytes / 4; ++k)
        if (out[k] != v) {
          ++spoiled;
          break;
        }
      ok = ok && T().EnqueueExp.pfnUSMFreeExp(other, nullptr, buf, 0, nullptr, nullptr) == UR_RESULT_SUCCESS;
      if (!ok) ++failures;
    }
  });
  for (auto &th : threads) th.join();
  EXPECT_EQ(0, failures.load());
  EXPECT_EQ(0, spoiled.load()) << "blocks given to the other queue were written by commands of the shared queue";
  UR_OK(T().Queue.pfnFinish(queue));
  UR_OK(T().Queue.pfnFinish(other));
  EXPECT_EQ(0u, pool_info(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP));
  EXPECT_LE(pool_info(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP), 16 * n * 4);
  UR_OK(T().USMExp.pfnPoolDestroyExp(ctx, dev, pool));
  UR_OK(T().Queue.pfnRelease(other));
}

// A destroyed pool's last free returns at once: its memory goes back at a later
// synchronisation point, without the host waiting for the device.
TEST_F(Gpu, DestroyedPoolsLastFreeDoesNotWaitForTheDevice) {
  ur_program_handle_t p = program("ordo_test_kernels.ptx");
  ur_kernel_handle_t fill = kernel(p, "fill");
  const size_t big_n = size_t(256) << 20; // 1 GiB, filled 8 times: milliseconds of work
  void *big = nullptr;
  UR_OK(T().USM.pfnDeviceAlloc(ctx, dev, nullptr, nullptr, big_n * 4, &big));
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  UR_OK(T().USMExp.pfnPoolCreateExp(ctx, dev, &desc, &pool));
  void *a = nullptr;
  UR_OK(T().EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, 4 << 20, nullptr, 0, nullptr, &a, nullptr));
  uint32_t v = 3;
  for (int i = 0; i < 8; ++i) UR_OK(launch_1d(queue, fill, big_n, 256, {pointer_arg(0, big), value_arg(1, &v, 4)}));
  ur_event_handle_t last = nullptr;
  UR_OK(launch_1d(queue, fill, 1 << 20, 256, {pointer_arg(0, a), value_arg(1, &v, 4)}, 0, nullptr, &last));
  UR_OK(T().USMExp.pfnPoolDestroyExp(ctx, dev, pool)); // a live block: the pool stays until it is freed
  UR_OK(T().EnqueueExp.pfnUSMFreeExp(queue, nullptr, a, 0, nullptr, nullptr)); // its last free
  ur_event_status_t status{};
  UR_OK(T().Event.pfnGetInfo(last, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
  EXPECT_NE(UR_EVENT_STATUS_COMPLETE, status) << "the host waited for the device in the last free";
  size_t reserved = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            T().USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP, &reserved, nullptr));
  UR_OK(T().Queue.pfnFinish(queue)); // the pool's memory goes back here
  UR_OK(T().Event.pfnRelease(last));
  UR_OK(T().USM.pfnFree(ctx, big));
}

} // namespace
