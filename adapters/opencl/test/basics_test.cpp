// SPDX-License-Identifier: Apache-2.0
// Adapter, platform, device, context, queue and event behaviour on the real device.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "adapter_fixture.hpp"

namespace ocltest {
namespace {

TEST(OpenCLAdapter, ExportsEveryGetterAndNoSlotIsNull) {
  Adapter &a = Adapter::get();
  ASSERT_NE(nullptr, a.lib) << a.error;
  const auto *slots = reinterpret_cast<void *const *>(&a.t);
  for (size_t i = 0; i < sizeof(ur_dditable_t) / sizeof(void *); ++i) EXPECT_NE(nullptr, slots[i]) << "slot " << i;
  ur_adapter_dditable_t table{};
  auto getter = reinterpret_cast<ur_result_t (*)(ur_api_version_t, ur_adapter_dditable_t *)>(
      dlsym(a.lib, "urGetAdapterProcAddrTable"));
  ASSERT_NE(nullptr, getter);
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_VERSION, getter(UR_API_VERSION_0_6, &table));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, getter(UR_API_VERSION_CURRENT, nullptr));
}

TEST(OpenCLAdapter, AdapterInfoAndRefCount) {
  Adapter &a = Adapter::get();
  ASSERT_NE(nullptr, a.lib) << a.error;
  ur_adapter_handle_t adapter = nullptr;
  uint32_t n = 0;
  OCL_ASSERT_OK(a.t.Adapter.pfnGet(0, nullptr, &n));
  EXPECT_EQ(1u, n);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, a.t.Adapter.pfnGet(0, &adapter, nullptr));
  OCL_ASSERT_OK(a.t.Adapter.pfnGet(1, &adapter, nullptr));
  ur_backend_t backend{};
  OCL_ASSERT_OK(a.t.Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, sizeof backend, &backend, nullptr));
  EXPECT_EQ(UR_BACKEND_OPENCL, backend);
  uint32_t before = 0, after = 0;
  OCL_ASSERT_OK(a.t.Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof before, &before, nullptr));
  OCL_ASSERT_OK(a.t.Adapter.pfnRetain(adapter));
  OCL_ASSERT_OK(a.t.Adapter.pfnGetInfo(adapter, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof after, &after, nullptr));
  EXPECT_EQ(before + 1, after);
  OCL_ASSERT_OK(a.t.Adapter.pfnRelease(adapter));
  OCL_ASSERT_OK(a.t.Adapter.pfnRelease(adapter));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, a.t.Adapter.pfnRetain(nullptr));
}

// In a child process whose libOpenCL.so.1 cannot be found the adapter still loads and
// reports no platforms, and says why in its log.
TEST(OpenCLAdapter, NoOpenCLMeansZeroPlatformsAndALogLine) {
  std::string cmd = "ORDO_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1 UR_LOG_OPENCL='level:info;output:stdout' "
                    "ORDO_OCL_COUNT_PLATFORMS=1 /proc/" +
                    std::to_string(getpid()) + "/exe 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  ASSERT_NE(nullptr, p);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(0, pclose(p)) << out;
  EXPECT_NE(std::string::npos, out.find("platforms=0")) << out;
  EXPECT_NE(std::string::npos, out.find("no OpenCL platforms: cannot load /nonexistent/libOpenCL.so.1")) << out;
}

using PlatformDevice = OpenCLTest;

TEST_F(PlatformDevice, PlatformInfoComesFromOpenCL) {
  size_t n = 0;
  OCL_ASSERT_OK(t().Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_NAME, 0, nullptr, &n));
  std::string name(n, '\0');
  OCL_ASSERT_OK(t().Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_NAME, n, &name[0], nullptr));
  EXPECT_GT(n, 1u);
  EXPECT_EQ('\0', name.back());
  ur_backend_t backend{};
  OCL_ASSERT_OK(t().Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_BACKEND, sizeof backend, &backend, nullptr));
  EXPECT_EQ(UR_BACKEND_OPENCL, backend);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_NAME, 1, &name[0], nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            t().Platform.pfnGetInfo(platform, UR_PLATFORM_INFO_FORCE_UINT32, sizeof backend, &backend, nullptr));
  // The same handles every time.
  ur_platform_handle_t again = nullptr;
  OCL_ASSERT_OK(t().Platform.pfnGet(adapter, 1, &again, nullptr));
  uint32_t count = 0;
  OCL_ASSERT_OK(t().Platform.pfnGet(adapter, 0, nullptr, &count));
  EXPECT_GE(count, 1u);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, t().Platform.pfnGet(adapter, 1, nullptr, nullptr));
}

TEST_F(PlatformDevice, DeviceInfoComesFromOpenCL) {
  ur_device_type_t type{};
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_NE(UR_DEVICE_TYPE_DEFAULT, type);
  uint32_t units = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr));
  EXPECT_GE(units, 1u);
  uint64_t mem = 0, max_alloc = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_GLOBAL_MEM_SIZE, sizeof mem, &mem, nullptr));
  OCL_ASSERT_OK(
      t().Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr));
  EXPECT_GT(mem, 0u);
  EXPECT_LE(max_alloc, mem);
  size_t wg = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr));
  EXPECT_GE(wg, 1u);
  size_t n = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES, 0, nullptr, &n));
  EXPECT_EQ(0u, n % sizeof(size_t));
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_VERSION, 0, nullptr, &n));
  std::string version(n, '\0');
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_VERSION, n, &version[0], nullptr));
  unsigned major = 0, minor = 0;
  EXPECT_EQ(2, std::sscanf(version.c_str(), "%u.%u", &major, &minor)) << version;
  ur_platform_handle_t owner = nullptr;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_PLATFORM, sizeof owner, &owner, nullptr));
  EXPECT_EQ(platform, owner);
  // Every query below UR's ceiling either answers or says it is unsupported.
  for (uint32_t q = 0; q <= 139; ++q) {
    size_t size = 0;
    ur_result_t r = t().Device.pfnGetInfo(device, static_cast<ur_device_info_t>(q), 0, nullptr, &size);
    EXPECT_TRUE(r == UR_RESULT_SUCCESS || r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) << "query " << q << ": " << r;
    if (r == UR_RESULT_SUCCESS && size) {
      std::vector<char> buf(size);
      EXPECT_EQ(UR_RESULT_SUCCESS,
                t().Device.pfnGetInfo(device, static_cast<ur_device_info_t>(q), size, buf.data(), nullptr))
          << "query " << q;
    }
  }
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION,
            t().Device.pfnGetInfo(device, static_cast<ur_device_info_t>(0x9001), sizeof units, &units, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            t().Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE,
            t().Device.pfnGetInfo(reinterpret_cast<ur_device_handle_t>(context), UR_DEVICE_INFO_MAX_COMPUTE_UNITS,
                                  sizeof units, &units, nullptr));
}

// USM capabilities follow what the device has: Intel USM, or SVM.
TEST_F(PlatformDevice, UsmCapabilitiesFollowSvm) {
  size_t n = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_EXTENSIONS, 0, nullptr, &n));
  std::string ext(n, '\0');
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_EXTENSIONS, n, &ext[0], nullptr));
  uint32_t host = device_caps(UR_DEVICE_INFO_USM_HOST_SUPPORT);
  uint32_t dev = device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT);
  uint32_t shared = device_caps(UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT);
  if (dev == 0) GTEST_SKIP() << "device has neither SVM nor Intel USM";
  EXPECT_TRUE(dev & UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS);
  if (ext.find("cl_intel_unified_shared_memory") == std::string::npos) {
    // SVM: host and shared come together, from fine-grain buffer SVM.
    EXPECT_EQ(host, shared);
  }
}

TEST_F(PlatformDevice, RootDeviceRefCountAndNativeHandle) {
  uint32_t before = device_caps(UR_DEVICE_INFO_REFERENCE_COUNT);
  // UR: a root device's reference count does not change.
  OCL_ASSERT_OK(t().Device.pfnRetain(device));
  EXPECT_EQ(before, device_caps(UR_DEVICE_INFO_REFERENCE_COUNT));
  OCL_ASSERT_OK(t().Device.pfnRelease(device));
  EXPECT_EQ(before, device_caps(UR_DEVICE_INFO_REFERENCE_COUNT));
  ur_native_handle_t native = 0;
  OCL_ASSERT_OK(t().Device.pfnGetNativeHandle(device, &native));
  ur_device_handle_t same = nullptr;
  OCL_ASSERT_OK(t().Device.pfnCreateWithNativeHandle(native, adapter, nullptr, &same));
  EXPECT_EQ(device, same);
  OCL_ASSERT_OK(t().Device.pfnRelease(same));
}

// urDeviceGet, urDeviceSelectBinary and sub-device counts are ur_common/device.hpp's,
// with OpenCL's rules as hooks: DEFAULT is the platform's first device, types are bits
// of CL_DEVICE_TYPE, an ahead-of-time target comes before SPIR-V.
TEST_F(PlatformDevice, DeviceGetSelectBinaryAndSubDeviceCounts) {
  uint32_t all = 0, defaults = 0, cpus = 0, mca = 0;
  OCL_ASSERT_OK(t().Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, &all));
  OCL_ASSERT_OK(t().Device.pfnGet(platform, UR_DEVICE_TYPE_DEFAULT, 0, nullptr, &defaults));
  EXPECT_EQ(all ? 1u : 0u, defaults);
  ur_device_handle_t first = nullptr;
  OCL_ASSERT_OK(t().Device.pfnGet(platform, UR_DEVICE_TYPE_DEFAULT, 1, &first, nullptr));
  EXPECT_EQ(device, first);
  OCL_ASSERT_OK(t().Device.pfnGet(platform, UR_DEVICE_TYPE_CPU, 0, nullptr, &cpus));
  ur_device_type_t type{};
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_TYPE, sizeof type, &type, nullptr));
  if (type == UR_DEVICE_TYPE_CPU) {
    EXPECT_LE(1u, cpus);
  }
  OCL_ASSERT_OK(t().Device.pfnGet(platform, UR_DEVICE_TYPE_MCA, 0, nullptr, &mca));
  EXPECT_EQ(0u, mca); // OpenCL has no such devices

  const char *native = type == UR_DEVICE_TYPE_CPU   ? UR_DEVICE_BINARY_TARGET_SPIRV64_X86_64
                       : type == UR_DEVICE_TYPE_GPU ? UR_DEVICE_BINARY_TARGET_SPIRV64_GEN
                                                    : UR_DEVICE_BINARY_TARGET_SPIRV64_FPGA;
  const ur_device_binary_t binaries[] = {{UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, UR_DEVICE_BINARY_TARGET_SPIRV64},
                                         {UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, native},
                                         {UR_STRUCTURE_TYPE_DEVICE_BINARY, nullptr, UR_DEVICE_BINARY_TARGET_NVPTX64}};
  uint32_t selected = 99;
  OCL_ASSERT_OK(t().Device.pfnSelectBinary(device, binaries, 3, &selected));
  EXPECT_EQ(1u, selected); // the ahead-of-time image first, wherever it stands
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_BINARY, t().Device.pfnSelectBinary(device, &binaries[2], 1, &selected));

  ur_device_partition_property_t equally{UR_DEVICE_PARTITION_EQUALLY, {1}};
  ur_device_partition_properties_t props{UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES, nullptr, &equally, 1};
  ur_device_handle_t sub = nullptr;
  if (t().Device.pfnPartition(device, &props, 1, &sub, nullptr) != UR_RESULT_SUCCESS)
    GTEST_SKIP() << "the device cannot be partitioned equally";
  auto count = [&](ur_device_handle_t d) {
    uint32_t n = 0;
    t().Device.pfnGetInfo(d, UR_DEVICE_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr);
    return n;
  };
  const uint32_t handed_out = count(sub);
  OCL_ASSERT_OK(t().Device.pfnRetain(sub));
  EXPECT_EQ(handed_out + 1, count(sub));
  for (uint32_t i = 0; i <= handed_out; ++i) OCL_ASSERT_OK(t().Device.pfnRelease(sub));
  EXPECT_EQ(0u, count(sub));
  // Every reference released: one more is refused, and the count stays at 0.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, t().Device.pfnRelease(sub));
  EXPECT_EQ(0u, count(sub));
}

using ContextQueue = OpenCLTest;

TEST_F(ContextQueue, ContextInfoAndRefCount) {
  uint32_t n = 0;
  OCL_ASSERT_OK(t().Context.pfnGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr));
  EXPECT_EQ(1u, n);
  ur_device_handle_t d = nullptr;
  OCL_ASSERT_OK(t().Context.pfnGetInfo(context, UR_CONTEXT_INFO_DEVICES, sizeof d, &d, nullptr));
  EXPECT_EQ(device, d);
  uint32_t refs = 0;
  OCL_ASSERT_OK(t().Context.pfnRetain(context));
  OCL_ASSERT_OK(t().Context.pfnGetInfo(context, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs); // queues hold the context, but are not counted
  OCL_ASSERT_OK(t().Context.pfnRelease(context));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, t().Context.pfnCreate(0, &device, nullptr, &context));
  ur_context_properties_t bad{UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES, nullptr, 0x10};
  ur_context_handle_t c2 = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, t().Context.pfnCreate(1, &device, &bad, &c2));
}

TEST_F(ContextQueue, QueueFlagsAndErrors) {
  ur_queue_flags_t flags = 0;
  OCL_ASSERT_OK(t().Queue.pfnGetInfo(ooo_queue, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr));
  EXPECT_TRUE(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ur_context_handle_t c = nullptr;
  OCL_ASSERT_OK(t().Queue.pfnGetInfo(queue, UR_QUEUE_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  ur_bool_t empty = 0;
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
            t().Queue.pfnGetInfo(queue, UR_QUEUE_INFO_EMPTY, sizeof empty, &empty, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, t().Queue.pfnGetInfo(queue, UR_QUEUE_INFO_SIZE, 4, &empty, nullptr));
  ur_queue_properties_t both{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                             UR_QUEUE_FLAG_PRIORITY_HIGH | UR_QUEUE_FLAG_PRIORITY_LOW};
  ur_queue_handle_t q = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, t().Queue.pfnCreate(context, device, &both, &q));
  ur_queue_properties_t unknown{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, 1u << 20};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, t().Queue.pfnCreate(context, device, &unknown, &q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, t().Queue.pfnFinish(reinterpret_cast<ur_queue_handle_t>(context)));
  // A profiling queue is a real one.
  ur_queue_properties_t prof{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_PROFILING_ENABLE};
  OCL_ASSERT_OK(t().Queue.pfnCreate(context, device, &prof, &q));
  OCL_ASSERT_OK(t().Queue.pfnRelease(q));
}

// The order of the checks where an argument is bad in two ways, and a native queue's
// round trip (ur_common/queue.hpp's hooks).
TEST_F(ContextQueue, QueueCheckOrderAndNativeRoundTrip) {
  auto not_device = reinterpret_cast<ur_device_handle_t>(context);
  ur_queue_handle_t q = nullptr;
  // The handles before the flags, the flags before OpenCL's device-queue rules.
  ur_queue_properties_t default_only{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_ON_DEVICE_DEFAULT};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, t().Queue.pfnCreate(context, not_device, &default_only, &q));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, t().Queue.pfnCreate(context, device, &default_only, &q));
  ur_queue_properties_t in_order_on_device{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_ON_DEVICE};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, t().Queue.pfnCreate(context, device, &in_order_on_device, &q));
  // The native queue is read before the device is checked against it.
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, t().Queue.pfnCreateWithNativeHandle(0, context, not_device, nullptr, &q));
  ur_native_handle_t native = 0;
  OCL_ASSERT_OK(t().Queue.pfnGetNativeHandle(queue, nullptr, &native));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE,
            t().Queue.pfnCreateWithNativeHandle(native, context, not_device, nullptr, &q));
  OCL_ASSERT_OK(t().Queue.pfnCreateWithNativeHandle(native, context, nullptr, nullptr, &q));
  ur_device_handle_t d = nullptr;
  OCL_ASSERT_OK(t().Queue.pfnGetInfo(q, UR_QUEUE_INFO_DEVICE, sizeof d, &d, nullptr));
  EXPECT_EQ(device, d);
  ur_queue_flags_t flags = ~0u;
  OCL_ASSERT_OK(t().Queue.pfnGetInfo(q, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr));
  EXPECT_EQ(0u, flags);
  // A host queue has no device-queue answers, whatever the buffer.
  ur_queue_handle_t dq = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE,
            t().Queue.pfnGetInfo(q, UR_QUEUE_INFO_DEVICE_DEFAULT, sizeof dq, &dq, nullptr));
  OCL_ASSERT_OK(t().Queue.pfnFlush(q));
  OCL_ASSERT_OK(t().Queue.pfnFinish(q));
  OCL_ASSERT_OK(t().Queue.pfnRelease(q));
}

TEST_F(ContextQueue, DeviceOutOfOrderSupportIsNative) {
  ur_queue_flags_t host_props = 0;
  OCL_ASSERT_OK(
      t().Device.pfnGetInfo(device, UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES, sizeof host_props, &host_props, nullptr));
  if (!(host_props & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    GTEST_SKIP() << "the device has no out-of-order queues";
  ur_native_handle_t native = 0;
  OCL_ASSERT_OK(t().Queue.pfnGetNativeHandle(ooo_queue, nullptr, &native));
  ur_queue_handle_t wrapped = nullptr;
  OCL_ASSERT_OK(t().Queue.pfnCreateWithNativeHandle(native, context, nullptr, nullptr, &wrapped));
  ur_queue_flags_t flags = 0;
  OCL_ASSERT_OK(t().Queue.pfnGetInfo(wrapped, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr));
  EXPECT_TRUE(flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE); // read back from the cl_command_queue
  OCL_ASSERT_OK(t().Queue.pfnRelease(wrapped));
}

using Events = OpenCLTest;

TEST_F(Events, BarrierEventStatusWaitAndRefCount) {
  ur_event_handle_t e = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWaitWithBarrier(ooo_queue, 0, nullptr, &e));
  OCL_ASSERT_OK(t().Event.pfnWait(1, &e));
  ur_event_status_t s{};
  OCL_ASSERT_OK(t().Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, s);
  ur_command_t cmd{};
  OCL_ASSERT_OK(t().Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_TYPE, sizeof cmd, &cmd, nullptr));
  EXPECT_EQ(UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, cmd);
  ur_queue_handle_t q = nullptr;
  OCL_ASSERT_OK(t().Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
  EXPECT_EQ(ooo_queue, q);
  uint32_t refs = 0;
  OCL_ASSERT_OK(t().Event.pfnRetain(e));
  OCL_ASSERT_OK(t().Event.pfnGetInfo(e, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs);
  OCL_ASSERT_OK(t().Event.pfnRelease(e));
  // Without profiling there are no timestamps.
  uint64_t ts = 0;
  EXPECT_EQ(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
            t().Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_START, sizeof ts, &ts, nullptr));
  OCL_ASSERT_OK(t().Event.pfnRelease(e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, t().Event.pfnWait(0, &e));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, t().Event.pfnWait(1, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, t().Enqueue.pfnEventsWait(queue, 1, nullptr, nullptr));
}

TEST_F(Events, ProfilingTimestampsAreOrdered) {
  ur_queue_properties_t prof{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_PROFILING_ENABLE};
  ur_queue_handle_t q = nullptr;
  OCL_ASSERT_OK(t().Queue.pfnCreate(context, device, &prof, &q));
  ur_event_handle_t e = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(q, 0, nullptr, &e));
  OCL_ASSERT_OK(t().Event.pfnWait(1, &e));
  uint64_t queued = 0, start = 0, end = 0;
  OCL_ASSERT_OK(t().Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_QUEUED, sizeof queued, &queued, nullptr));
  OCL_ASSERT_OK(t().Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_START, sizeof start, &start, nullptr));
  OCL_ASSERT_OK(t().Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, sizeof end, &end, nullptr));
  EXPECT_LE(queued, start);
  EXPECT_LE(start, end);
  OCL_ASSERT_OK(t().Event.pfnRelease(e));
  OCL_ASSERT_OK(t().Queue.pfnRelease(q));
}

TEST_F(Events, CallbackRunsOnCompletionEvenAfterRelease) {
  static std::atomic<int> calls{0};
  calls = 0;
  ur_event_handle_t e = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(queue, 0, nullptr, &e));
  auto cb = [](ur_event_handle_t, ur_execution_info_t status, void *user) {
    EXPECT_EQ(UR_EXECUTION_INFO_COMPLETE, status);
    EXPECT_EQ(&calls, user);
    calls++;
  };
  OCL_ASSERT_OK(t().Event.pfnSetCallback(e, UR_EXECUTION_INFO_COMPLETE, cb, &calls));
  EXPECT_EQ(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
            t().Event.pfnSetCallback(e, UR_EXECUTION_INFO_QUEUED, cb, nullptr));
  OCL_ASSERT_OK(t().Event.pfnRelease(e)); // the callback keeps the event alive
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  for (int i = 0; i < 200 && calls == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(1, calls.load());
}

TEST_F(Events, NativeEventRoundTrip) {
  ur_event_handle_t e = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(queue, 0, nullptr, &e));
  ur_native_handle_t native = 0;
  OCL_ASSERT_OK(t().Event.pfnGetNativeHandle(e, &native));
  ur_event_handle_t wrapped = nullptr;
  OCL_ASSERT_OK(t().Event.pfnCreateWithNativeHandle(native, context, nullptr, &wrapped));
  OCL_ASSERT_OK(t().Event.pfnWait(1, &wrapped));
  ur_queue_handle_t q = reinterpret_cast<ur_queue_handle_t>(1);
  OCL_ASSERT_OK(t().Event.pfnGetInfo(wrapped, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
  EXPECT_EQ(queue, q); // the live UR queue on the cl_event's command queue
  OCL_ASSERT_OK(t().Event.pfnRelease(wrapped));
  OCL_ASSERT_OK(t().Event.pfnRelease(e));
}

// urEventWait over events of two contexts (clWaitForEvents context by context), and the
// order of the checks where an argument is bad in two ways (ur_common/event.hpp's hooks).
TEST_F(Events, WaitAcrossContextsAndCheckOrder) {
  ur_context_handle_t other = nullptr;
  OCL_ASSERT_OK(t().Context.pfnCreate(1, &device, nullptr, &other));
  ur_queue_handle_t other_queue = nullptr;
  OCL_ASSERT_OK(t().Queue.pfnCreate(other, device, nullptr, &other_queue));
  ur_event_handle_t events[3] = {};
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(queue, 0, nullptr, &events[0]));
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(other_queue, 0, nullptr, &events[1]));
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(queue, 0, nullptr, &events[2]));
  OCL_ASSERT_OK(t().Event.pfnWait(3, events));
  ur_context_handle_t c = nullptr;
  OCL_ASSERT_OK(t().Event.pfnGetInfo(events[1], UR_EVENT_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(other, c);
  // A queue is not an event, whatever else is wrong.
  auto not_event = reinterpret_cast<ur_event_handle_t>(queue);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, t().Event.pfnWait(1, &not_event));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT,
            t().Event.pfnGetProfilingInfo(not_event, UR_PROFILING_INFO_COMMAND_END, 0, nullptr, nullptr));
  // No buffer and no size: no timestamps without profiling all the same (the spec lists no
  // null-pointer rule for this query).
  EXPECT_EQ(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
            t().Event.pfnGetProfilingInfo(events[0], UR_PROFILING_INFO_COMMAND_END, 0, nullptr, nullptr));
  ur_event_status_t s{};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Event.pfnGetInfo(events[0], UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, 0, &s, nullptr));
  // 0: an event of the context with no cl_event, complete; a wait list takes it as met,
  // alone (nothing for OpenCL to wait for) and with a cl_event of another context.
  ur_event_handle_t wrapped = nullptr;
  OCL_ASSERT_OK(t().Event.pfnCreateWithNativeHandle(0, context, nullptr, &wrapped));
  ur_event_status_t done{};
  OCL_ASSERT_OK(t().Event.pfnGetInfo(wrapped, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof done, &done, nullptr));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, done);
  OCL_ASSERT_OK(t().Event.pfnWait(1, &wrapped));
  ur_event_handle_t with_other[2] = {wrapped, events[1]};
  OCL_ASSERT_OK(t().Event.pfnWait(2, with_other));
  ur_event_handle_t after = nullptr;
  OCL_ASSERT_OK(t().Enqueue.pfnEventsWait(queue, 1, &wrapped, &after));
  OCL_ASSERT_OK(t().Event.pfnWait(1, &after));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, t().Enqueue.pfnEventsWait(other_queue, 1, &wrapped, nullptr));
  OCL_ASSERT_OK(t().Event.pfnRelease(after));
  OCL_ASSERT_OK(t().Event.pfnRelease(wrapped));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, t().Event.pfnCreateWithNativeHandle(0, context, nullptr, nullptr));
  for (ur_event_handle_t e : events) OCL_ASSERT_OK(t().Event.pfnRelease(e));
  OCL_ASSERT_OK(t().Queue.pfnRelease(other_queue));
  OCL_ASSERT_OK(t().Context.pfnRelease(other));
}

} // namespace
} // namespace ocltest

// The child-process side of NoOpenCLMeansZeroPlatformsAndALogLine.
int main(int argc, char **argv) {
  if (std::getenv("ORDO_OCL_COUNT_PLATFORMS")) {
    ocltest::Adapter &a = ocltest::Adapter::get();
    if (!a.lib) {
      std::printf("adapter failed to load: %s\n", a.error.c_str());
      return 1;
    }
    ur_adapter_handle_t adapter = nullptr;
    uint32_t n = 99;
    if (a.t.Adapter.pfnGet(1, &adapter, nullptr) || a.t.Platform.pfnGet(adapter, 0, nullptr, &n)) return 2;
    std::printf("platforms=%u\n", n);
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
