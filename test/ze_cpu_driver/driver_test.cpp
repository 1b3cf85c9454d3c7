// The CPU test driver checked on its own, through the real Level Zero loader (the
// test's environment names the driver in ZE_ENABLE_ALT_DRIVERS): what the adapter
// does not use (regular command lists, command queues, fences) and what must really
// happen (waits that wait, kernels that run over their group counts).
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

namespace {

#define ZE_OK(call) ASSERT_EQ(ZE_RESULT_SUCCESS, (call))

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
    ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
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
  ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                             ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
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
