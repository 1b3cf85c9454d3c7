// SPDX-License-Identifier: Apache-2.0
// The CPU test driver checked on its own, through the real Level Zero loader (the
// test's environment names the driver in ZE_ENABLE_ALT_DRIVERS): what the adapter
// does not use (regular command lists, command queues, fences) and what must really
// happen (waits that wait, kernels that run over their group counts).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

namespace {

#define ZE_OK(call) ASSERT_EQ(ZE_RESULT_SUCCESS, (call))

// As in tables.hpp: whether the headers built against declare a version's functions.
#ifdef ZE_API_VERSION_CURRENT_M
#define ORDO_ZE_HEADERS_AT_LEAST(major, minor) (ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(major, minor))
#else
#define ORDO_ZE_HEADERS_AT_LEAST(major, minor) 0
#endif

// A descriptor or property struct with its type set and everything else zero.
template <class T> T make(ze_structure_type_t type) {
  T v{};
  v.stype = type;
  return v;
}

struct Env {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  ze_result_t init = ZE_RESULT_ERROR_UNINITIALIZED;
};

Env &env() {
  static Env *e = [] {
    auto *e = new Env();
    e->init = zeInit(0);
    uint32_t n = 1;
    if (e->init == ZE_RESULT_SUCCESS && zeDriverGet(&n, &e->driver) == ZE_RESULT_SUCCESS && n) {
      n = 1;
      zeDeviceGet(e->driver, &n, &e->device);
      ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
      zeContextCreate(e->driver, &cd, &e->context);
    }
    return e;
  }();
  return *e;
}

class Driver : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(ZE_RESULT_SUCCESS, env().init) << "zeInit failed: is ZE_ENABLE_ALT_DRIVERS set to the driver?";
    ASSERT_NE(nullptr, env().context);
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                            ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 8};
    ZE_OK(zeEventPoolCreate(ctx(), &pd, 1, &env().device, &pool));
    for (uint32_t i = 0; i < 8; ++i) {
      ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, 0, ZE_EVENT_SCOPE_FLAG_HOST};
      ZE_OK(zeEventCreate(pool, &ed, &events[i]));
    }
  }
  void TearDown() override {
    for (ze_event_handle_t e : events)
      if (e) zeEventDestroy(e);
    if (pool) zeEventPoolDestroy(pool);
  }
  static ze_context_handle_t ctx() { return env().context; }
  static ze_device_handle_t dev() { return env().device; }
  ze_command_list_handle_t immediate() {
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeCommandListCreateImmediate(ctx(), dev(), &qd, &l));
    return l;
  }
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t events[8] = {};
};

TEST_F(Driver, DescribesOneCpuDevice) {
  auto p = make<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
  ZE_OK(zeDeviceGetProperties(dev(), &p));
  EXPECT_EQ(ZE_DEVICE_TYPE_CPU, p.type);
  EXPECT_GT(p.maxMemAllocSize, 0u);
  auto m = make<ze_device_module_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES);
  ZE_OK(zeDeviceGetModuleProperties(dev(), &m));
  EXPECT_EQ(0u, m.spirvVersionSupported); // native modules only
  // An unimplemented function answers, through the loader, instead of crashing.
  auto ip = make<ze_device_image_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES);
  ZE_OK(zeDeviceGetImageProperties(dev(), &ip));
  EXPECT_EQ(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, zeDeviceGetFabricVertexExp(dev(), nullptr));
}

TEST_F(Driver, MemoryOfThreeKindsIsDescribed) {
  auto dd = make<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
  auto hd = make<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
  void *d = nullptr, *h = nullptr, *s = nullptr;
  ZE_OK(zeMemAllocDevice(ctx(), &dd, 1000, 256, dev(), &d));
  ZE_OK(zeMemAllocHost(ctx(), &hd, 1000, 0, &h));
  ZE_OK(zeMemAllocShared(ctx(), &dd, &hd, 1000, 0, dev(), &s));
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(d) % 256);
  struct {
    void *p;
    ze_memory_type_t type;
  } cases[] = {{d, ZE_MEMORY_TYPE_DEVICE}, {h, ZE_MEMORY_TYPE_HOST}, {s, ZE_MEMORY_TYPE_SHARED}};
  for (auto &c : cases) {
    auto p = make<ze_memory_allocation_properties_t>(ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
    ze_device_handle_t owner = nullptr;
    ZE_OK(zeMemGetAllocProperties(ctx(), static_cast<char *>(c.p) + 999, &p, &owner));
    EXPECT_EQ(c.type, p.type);
    EXPECT_EQ(c.type == ZE_MEMORY_TYPE_HOST ? nullptr : dev(), owner);
  }
  int local = 0;
  auto p = make<ze_memory_allocation_properties_t>(ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
  ZE_OK(zeMemGetAllocProperties(ctx(), &local, &p, nullptr));
  EXPECT_EQ(ZE_MEMORY_TYPE_UNKNOWN, p.type);
  for (auto &c : cases) ZE_OK(zeMemFree(ctx(), c.p));
  EXPECT_NE(ZE_RESULT_SUCCESS, zeMemFree(ctx(), d)); // a second free is refused
}

// Memory belongs to the context it was allocated in: another context of the same driver
// does not know it (Intel's UR adapter asks this; Ordo's keeps its own registry).
TEST_F(Driver, AnotherContextsMemoryIsUnknown) {
  ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t other = nullptr;
  ZE_OK(zeContextCreate(env().driver, &cd, &other));
  auto dd = make<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
  void *d = nullptr;
  ZE_OK(zeMemAllocDevice(ctx(), &dd, 1000, 0, dev(), &d));
  auto p = make<ze_memory_allocation_properties_t>(ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
  ze_device_handle_t owner = dev();
  ZE_OK(zeMemGetAllocProperties(other, d, &p, &owner));
  EXPECT_EQ(ZE_MEMORY_TYPE_UNKNOWN, p.type);
  EXPECT_EQ(nullptr, owner);
  void *base = nullptr;
  size_t size = 0;
  EXPECT_NE(ZE_RESULT_SUCCESS, zeMemGetAddressRange(other, d, &base, &size));
  ZE_OK(zeMemGetAddressRange(ctx(), d, &base, &size));
  EXPECT_EQ(d, base);
  ZE_OK(zeMemFree(ctx(), d));
  ZE_OK(zeContextDestroy(other));
}

// A caller of an older API version passes a smaller table: the driver fills only the
// slots of that version (Debian's loader 1.8.12 asks for 1.4, whose device table has 18
// slots; zeDeviceGetRootDevice came at 1.7) and never writes past them.
TEST_F(Driver, TableGettersKeepToTheAskedVersion) {
#if !ORDO_ZE_HEADERS_AT_LEAST(1, 10)
  GTEST_SKIP() << "built on old headers without the pinned loader's per-slot versions (docs/level-zero.md)";
#endif
  const char *path = std::getenv("ZE_ENABLE_ALT_DRIVERS");
  ASSERT_NE(nullptr, path);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nullptr, lib) << dlerror();
  using getter_t = ze_result_t(ZE_APICALL *)(ze_api_version_t, void *);
  auto get = reinterpret_cast<getter_t>(dlsym(lib, "zeGetDeviceProcAddrTable"));
  ASSERT_NE(nullptr, get);
  void *const canary = reinterpret_cast<void *>(uintptr_t(0x0dd5ea1));
  struct Case {
    ze_api_version_t version;
    size_t slots;
  } cases[] = {{ZE_API_VERSION_1_0, 14}, {ZE_API_VERSION_1_4, 18}};
  for (const Case &c : cases) {
    void *table[64];
    for (void *&slot : table) slot = canary;
    ZE_OK(get(c.version, table));
    for (size_t i = 0; i < c.slots; ++i)
      EXPECT_NE(canary, table[i]) << "slot " << i << " at 1." << ZE_MINOR_VERSION(c.version);
    for (size_t i = c.slots; i < 64; ++i)
      EXPECT_EQ(canary, table[i]) << "slot " << i << " written at 1." << ZE_MINOR_VERSION(c.version);
  }
  dlclose(lib);
}

#if ORDO_ZE_HEADERS_AT_LEAST(1, 10)
// Functions a current client (Intel's UR adapter through loader 1.32.0) calls. Looked up
// in the loader at run time: the same binary also runs on Debian's 1.8.12, which lacks them.
TEST_F(Driver, RootDeviceAndInitDrivers) {
  auto root_of = reinterpret_cast<decltype(&zeDeviceGetRootDevice)>(dlsym(RTLD_DEFAULT, "zeDeviceGetRootDevice"));
  auto init_drivers = reinterpret_cast<decltype(&zeInitDrivers)>(dlsym(RTLD_DEFAULT, "zeInitDrivers"));
  if (!root_of || !init_drivers) GTEST_SKIP() << "the Level Zero loader is older than 1.19 (no zeInitDrivers)";
  ze_device_handle_t root = dev();
  ZE_OK(root_of(dev(), &root));
  EXPECT_EQ(nullptr, root); // a root device itself
  ze_init_driver_type_desc_t desc{ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, nullptr, ZE_INIT_DRIVER_TYPE_FLAG_GPU};
  uint32_t n = 0;
  ZE_OK(init_drivers(&n, nullptr, &desc));
  const char *as_gpu = std::getenv("ORDO_ZE_CPU_AS_GPU");
  EXPECT_EQ(as_gpu && std::strcmp(as_gpu, "1") == 0 ? 1u : 0u, n) << "a CPU device is no GPU";
}
#endif

// A synchronous immediate list has finished a command when the append returns, even one
// that waits for an event signalled from another thread a little later.
TEST_F(Driver, SynchronousImmediateListFinishesOnReturn) {
  ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                             ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t l = nullptr;
  ZE_OK(zeCommandListCreateImmediate(ctx(), dev(), &qd, &l));
  std::vector<char> src(1 << 20, 7), dst(1 << 20, 0);
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    zeEventHostSignal(events[0]);
  });
  ZE_OK(zeCommandListAppendMemoryCopy(l, dst.data(), src.data(), src.size(), nullptr, 1, &events[0]));
  EXPECT_EQ(ZE_RESULT_SUCCESS, zeEventQueryStatus(events[0]));
  EXPECT_TRUE(dst == src) << "the copy had not run when the append returned";
  signaller.join();
  ZE_OK(zeCommandListDestroy(l));
}

// Host pointer import through zeDriverGetExtensionFunctionAddress, as Intel's driver
// offers it: an imported range is fed to commands in place (a fill lands in the
// caller's memory); imports of one pointer nest, and releasing one not imported fails.
TEST_F(Driver, HostPointerImport) {
  using import_fn = ze_result_t(ZE_APICALL *)(ze_driver_handle_t, void *, size_t);
  using release_fn = ze_result_t(ZE_APICALL *)(ze_driver_handle_t, void *);
  void *f = nullptr, *g = nullptr, *none = nullptr;
  ZE_OK(zeDriverGetExtensionFunctionAddress(env().driver, "zexDriverImportExternalPointer", &f));
  ZE_OK(zeDriverGetExtensionFunctionAddress(env().driver, "zexDriverReleaseImportedPointer", &g));
  EXPECT_NE(ZE_RESULT_SUCCESS, zeDriverGetExtensionFunctionAddress(env().driver, "zexNoSuchFunction", &none));
  auto import_pointer = reinterpret_cast<import_fn>(f);
  auto release_pointer = reinterpret_cast<release_fn>(g);
  std::vector<uint8_t> host(4096, 0);
  ZE_OK(import_pointer(env().driver, host.data(), host.size()));
  ZE_OK(import_pointer(env().driver, host.data(), 64));
  ze_command_list_handle_t l = immediate();
  const uint8_t pattern = 0x5a;
  ZE_OK(zeCommandListAppendMemoryFill(l, host.data() + 100, &pattern, 1, 200, events[0], 0, nullptr));
  ZE_OK(zeEventHostSynchronize(events[0], UINT64_MAX));
  EXPECT_EQ(0, host[99]);
  EXPECT_EQ(0x5a, host[100]);
  EXPECT_EQ(0x5a, host[299]);
  EXPECT_EQ(0, host[300]);
  ZE_OK(release_pointer(env().driver, host.data()));
  ZE_OK(release_pointer(env().driver, host.data()));
  EXPECT_NE(ZE_RESULT_SUCCESS, release_pointer(env().driver, host.data()));
  ZE_OK(zeCommandListDestroy(l));
}

// Device memory past maxMemAllocSize is refused unless the caller relaxes the limit
// (Intel's UR adapter relies on the driver for this; Ordo's adapter checks it first).
TEST_F(Driver, AllocationsPastMaxMemAllocSize) {
  auto p = make<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
  ZE_OK(zeDeviceGetProperties(dev(), &p));
  auto m = make<ze_device_memory_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES);
  uint32_t n = 1;
  ZE_OK(zeDeviceGetMemoryProperties(dev(), &n, &m));
  if (p.maxMemAllocSize >= m.totalSize) GTEST_SKIP() << "maxMemAllocSize is the whole memory here";
  const size_t too_big = p.maxMemAllocSize + 1;
  auto dd = make<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
  auto hd = make<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
  void *ptr = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeMemAllocDevice(ctx(), &dd, too_big, 0, dev(), &ptr));
  EXPECT_EQ(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeMemAllocShared(ctx(), &dd, &hd, too_big, 0, dev(), &ptr));
  ze_relaxed_allocation_limits_exp_desc_t relaxed{ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC, nullptr,
                                                  ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE};
  dd.pNext = &relaxed;
  ZE_OK(zeMemAllocDevice(ctx(), &dd, too_big, 0, dev(), &ptr)); // host memory here: pages untouched
  ZE_OK(zeMemFree(ctx(), ptr));
}

// A command waiting for an event signalled later by the host really waits.
TEST_F(Driver, ImmediateListWaitsForHostSignal) {
  ze_command_list_handle_t l = immediate();
  std::vector<uint32_t> dst(1024, 0), src(1024, 7);
  ZE_OK(zeCommandListAppendMemoryCopy(l, dst.data(), src.data(), 4096, events[1], 1, &events[0]));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(events[1]));
  EXPECT_EQ(0u, dst[0]);
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventHostSynchronize(events[1], 1000000)); // 1 ms
  ZE_OK(zeEventHostSignal(events[0]));
  ZE_OK(zeEventHostSynchronize(events[1], UINT64_MAX));
  EXPECT_EQ(7u, dst[1023]);
  ze_kernel_timestamp_result_t ts{};
  ZE_OK(zeEventQueryKernelTimestamp(events[1], &ts));
  EXPECT_LE(ts.global.kernelStart, ts.global.kernelEnd);
  ZE_OK(zeCommandListDestroy(l));
}

// Two lists ordered by an event: the second list's fill runs after the first's copy.
TEST_F(Driver, EventsOrderTwoLists) {
  ze_command_list_handle_t a = immediate(), b = immediate();
  std::vector<uint8_t> buf(1 << 20, 0), src(1 << 20, 1);
  uint8_t two = 2;
  ZE_OK(zeCommandListAppendWaitOnEvents(a, 1, &events[0]));
  ZE_OK(zeCommandListAppendMemoryCopy(a, buf.data(), src.data(), buf.size(), events[1], 0, nullptr));
  ZE_OK(zeCommandListAppendMemoryFill(b, buf.data(), &two, 1, 16, events[2], 1, &events[1]));
  ZE_OK(zeEventHostSignal(events[0]));
  ZE_OK(zeEventHostSynchronize(events[2], UINT64_MAX));
  EXPECT_EQ(2, buf[0]);
  EXPECT_EQ(1, buf[16]);
  // Reset on a list, then signalled again from it.
  ZE_OK(zeCommandListAppendEventReset(a, events[2]));
  ZE_OK(zeCommandListAppendSignalEvent(a, events[3]));
  ZE_OK(zeEventHostSynchronize(events[3], UINT64_MAX));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(events[2]));
  ZE_OK(zeCommandListDestroy(a));
  ZE_OK(zeCommandListDestroy(b));
}

// Regular lists run when a queue executes them, in order, and the fence says when.
TEST_F(Driver, RegularListsOnAQueueWithAFence) {
  ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                             ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_queue_handle_t q = nullptr;
  ZE_OK(zeCommandQueueCreate(ctx(), dev(), &qd, &q));
  ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  ze_command_list_handle_t l = nullptr;
  ZE_OK(zeCommandListCreate(ctx(), dev(), &ld, &l));
  std::vector<uint32_t> x(256, 0), y(256, 0);
  uint32_t five = 5;
  ZE_OK(zeCommandListAppendWaitOnEvents(l, 1, &events[0]));
  ZE_OK(zeCommandListAppendMemoryFill(l, x.data(), &five, 4, 1024, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
  ZE_OK(zeCommandListAppendMemoryCopy(l, y.data(), x.data(), 1024, nullptr, 0, nullptr));
  ZE_OK(zeCommandListClose(l));
  // A closed list takes no more commands; an open one cannot be executed.
  EXPECT_NE(ZE_RESULT_SUCCESS, zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
  ze_fence_desc_t fd{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t f = nullptr;
  ZE_OK(zeFenceCreate(q, &fd, &f));
  ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeFenceQueryStatus(f)); // still waiting for events[0]
  EXPECT_EQ(0u, y[255]);
  ZE_OK(zeEventHostSignal(events[0]));
  ZE_OK(zeFenceHostSynchronize(f, UINT64_MAX));
  EXPECT_EQ(5u, y[255]);
  // Run it again after a reset of the fence and of the data.
  ZE_OK(zeFenceReset(f));
  std::fill(y.begin(), y.end(), 0);
  ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
  ZE_OK(zeCommandQueueSynchronize(q, UINT64_MAX));
  EXPECT_EQ(ZE_RESULT_SUCCESS, zeFenceQueryStatus(f));
  EXPECT_EQ(5u, y[0]);
  ZE_OK(zeFenceDestroy(f));
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeCommandQueueDestroy(q));
}

std::vector<uint8_t> read_kernels() {
  std::ifstream in(ORDO_TEST_NATIVE_KERNELS, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(Driver, SpirvIsRefusedWithABuildLog) {
  const uint32_t spirv[] = {0x07230203u, 0x00010000u, 0, 1, 0};
  auto md = make<ze_module_desc_t>(ZE_STRUCTURE_TYPE_MODULE_DESC);
  md.format = ZE_MODULE_FORMAT_IL_SPIRV;
  md.inputSize = sizeof(spirv);
  md.pInputModule = reinterpret_cast<const uint8_t *>(spirv);
  ze_module_handle_t m = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, zeModuleCreate(ctx(), dev(), &md, &m, &log));
  ASSERT_NE(nullptr, log);
  size_t size = 0;
  ZE_OK(zeModuleBuildLogGetString(log, &size, nullptr));
  std::string text(size, '\0');
  ZE_OK(zeModuleBuildLogGetString(log, &size, &text[0]));
  EXPECT_NE(std::string::npos, text.find("SPIR-V"));
  ZE_OK(zeModuleBuildLogDestroy(log));
}

// A native module's kernel runs once per group of the group count, with its group
// size, arguments captured at append time and a global offset.
TEST_F(Driver, NativeKernelRunsOverGroupCounts) {
  std::vector<uint8_t> bin = read_kernels();
  ASSERT_FALSE(bin.empty()) << ORDO_TEST_NATIVE_KERNELS << " is missing";
  auto md = make<ze_module_desc_t>(ZE_STRUCTURE_TYPE_MODULE_DESC);
  md.format = ZE_MODULE_FORMAT_NATIVE;
  md.inputSize = bin.size();
  md.pInputModule = bin.data();
  ze_module_handle_t m = nullptr;
  ZE_OK(zeModuleCreate(ctx(), dev(), &md, &m, nullptr));
  uint32_t count = 0;
  ZE_OK(zeModuleGetKernelNames(m, &count, nullptr));
  EXPECT_GE(count, 5u);
  ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "fill"};
  ze_kernel_handle_t k = nullptr;
  ZE_OK(zeKernelCreate(m, &kd, &k));
  ze_kernel_desc_t bad{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "no_such_kernel"};
  ze_kernel_handle_t none = nullptr;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, zeKernelCreate(m, &bad, &none));
  auto dd = make<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
  auto hd = make<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
  void *out = nullptr;
  ZE_OK(zeMemAllocShared(ctx(), &dd, &hd, 1024 * 4, 0, dev(), &out));
  std::memset(out, 0, 1024 * 4);
  ze_command_list_handle_t l = immediate();
  uint32_t value = 9;
  ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof(void *), &out));
  ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof(value), &value));
  ZE_OK(zeKernelSetGroupSize(k, 16, 1, 1));
  ZE_OK(zeKernelSetGlobalOffsetExp(k, 256, 0, 0));
  ze_group_count_t groups{8, 1, 1}; // items 256..383
  ZE_OK(zeCommandListAppendLaunchKernel(l, k, &groups, events[0], 0, nullptr));
  value = 1; // changed after the append: the launch keeps 9
  ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof(value), &value));
  ZE_OK(zeEventHostSynchronize(events[0], UINT64_MAX));
  auto *u = static_cast<uint32_t *>(out);
  EXPECT_EQ(0u, u[255]);
  EXPECT_EQ(9u, u[256]);
  EXPECT_EQ(9u, u[383]);
  EXPECT_EQ(0u, u[384]);
  ZE_OK(zeCommandListDestroy(l));
  ZE_OK(zeKernelDestroy(k));
  ZE_OK(zeModuleDestroy(m));
  ZE_OK(zeMemFree(ctx(), out));
}

} // namespace
