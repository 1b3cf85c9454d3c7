// SPDX-License-Identifier: Apache-2.0
// Two devices of one platform in one context (issue 15): peer access between them, a
// kernel on the second device using memory from the first device's stream-ordered
// pool, cross-device copies ordered by wait lists, and the reuse rule across devices.
// With fewer than two devices on the platform every test skips: "needs two GPUs; found N".
// CTest runs this group alone under the label multi_gpu (CMakeLists.txt).
#include <algorithm>
#include <numeric>

#include "conformance.hpp"

namespace {

class urMultiGpuTest : public conf::DeviceFixture<urinfo::FoundDevice> {
protected:
  ur_device_handle_t dev[2] = {nullptr, nullptr};
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue[2] = {nullptr, nullptr};

  void SetUp() override {
    CONF_BASE_SETUP(conf::DeviceFixture<urinfo::FoundDevice>);
    std::vector<ur_device_handle_t> peers;
    for (const urinfo::FoundDevice &d : conf::devices())
      if (d.platform == platform() && d.type_name == "gpu") peers.push_back(d.device);
    if (found().type_name != "gpu") GTEST_SKIP() << found().label() << " is no GPU";
    if (peers.size() < 2) GTEST_SKIP() << "needs two GPUs; found " << peers.size();
    // Each device of the platform is the first of a pair once, with the next one.
    auto me = std::find(peers.begin(), peers.end(), device());
    ASSERT_NE(peers.end(), me);
    dev[0] = *me;
    dev[1] = (me + 1 == peers.end()) ? peers.front() : *(me + 1);
    ASSERT_SUCCESS(urContextCreate(2, dev, nullptr, &context));
    for (int i = 0; i < 2; ++i) ASSERT_SUCCESS(urQueueCreate(context, dev[i], nullptr, &queue[i]));
  }
  void TearDown() override {
    for (ur_queue_handle_t q : queue)
      if (q) {
        EXPECT_SUCCESS(urQueueFinish(q));
        EXPECT_SUCCESS(urQueueRelease(q));
      }
    if (context) {
      EXPECT_SUCCESS(urContextRelease(context));
    }
  }

  // Whether dev[from] may access dev[to]'s memory (UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT).
  bool peer_supported(int from, int to) {
    int supported = 0;
    ur_result_t r = urUsmP2PPeerAccessGetInfoExp(dev[from], dev[to], UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT,
                                                 sizeof supported, &supported, nullptr);
    if (r != UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
      EXPECT_SUCCESS(r);
    }
    return r == UR_RESULT_SUCCESS && supported != 0;
  }

  // dev[1] gets access to dev[0]'s memory; skips where the pair has no peer access.
  void enable_1_to_0() {
    if (!peer_supported(1, 0)) GTEST_SKIP() << "the two devices have no peer access";
    ASSERT_SUCCESS(urUsmP2PEnablePeerAccessExp(dev[1], dev[0]));
  }

  void run_kernel_on_second_device(ur_usm_pool_handle_t pool);

  ur_kernel_handle_t kernel(const char *name, ur_program_handle_t *program) {
    // Built for both devices: the kernel runs on either.
    urinfo::TestProgram p = urinfo::load_test_program(conf::kernel_dir(), context, found(), {dev[0], dev[1]});
    if (!p.skip_reason.empty() || !p.ok()) return nullptr;
    *program = p.program;
    ur_kernel_handle_t k = nullptr;
    EXPECT_SUCCESS(urKernelCreate(p.program, name, &k));
    return k;
  }
};

ur_exp_kernel_arg_properties_t arg_pointer(uint32_t index, void *p) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = p;
  return a;
}

TEST_P(urMultiGpuTest, ContextHoldsBothDevices) {
  uint32_t n = 0;
  ASSERT_SUCCESS(urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr));
  EXPECT_EQ(2u, n);
  ur_device_handle_t listed[2] = {};
  ASSERT_SUCCESS(urContextGetInfo(context, UR_CONTEXT_INFO_DEVICES, sizeof listed, listed, nullptr));
  EXPECT_EQ(dev[0], listed[0]);
  EXPECT_EQ(dev[1], listed[1]);
}

TEST_P(urMultiGpuTest, PeerAccessInfoEnableDisable) {
  if (!peer_supported(0, 1) && !peer_supported(1, 0)) GTEST_SKIP() << "the two devices have no peer access";
  for (int from = 0; from < 2; ++from) {
    int atomics = -1;
    ASSERT_SUCCESS(urUsmP2PPeerAccessGetInfoExp(dev[from], dev[1 - from], UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT,
                                                sizeof atomics, &atomics, nullptr));
    EXPECT_TRUE(atomics == 0 || atomics == 1);
  }
  enable_1_to_0();
  if (IsSkipped()) return;
  EXPECT_SUCCESS(urUsmP2PDisablePeerAccessExp(dev[1], dev[0]));
}

// A kernel on device 1 increments memory that a stream-ordered pool of device 0 gave on
// queue 0: device 0's default pool (pool == nullptr) or a pool made for device 0.
TEST_P(urMultiGpuTest, KernelOnSecondDeviceUsesFirstDevicesPoolMemory) {
  enable_1_to_0();
  if (IsSkipped() || HasFatalFailure()) return;
  run_kernel_on_second_device(nullptr);
}

TEST_P(urMultiGpuTest, KernelOnSecondDeviceUsesFirstDevicesUserPoolMemory) {
  enable_1_to_0();
  if (IsSkipped() || HasFatalFailure()) return;
  ur_usm_pool_desc_t desc{};
  desc.stype = UR_STRUCTURE_TYPE_USM_POOL_DESC;
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreateExp(context, dev[0], &desc, &pool));
  run_kernel_on_second_device(pool);
  EXPECT_SUCCESS(urQueueFinish(queue[0]));
  EXPECT_SUCCESS(urUSMPoolDestroyExp(context, dev[0], pool));
}

void urMultiGpuTest::run_kernel_on_second_device(ur_usm_pool_handle_t pool) {
  const size_t n = 1 << 16;
  void *p = nullptr;
  ur_event_handle_t allocated = nullptr, filled = nullptr, ran = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue[0], pool, n * 4, nullptr, 0, nullptr, &p, &allocated));
  ur_device_handle_t owner = nullptr;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_DEVICE, sizeof owner, &owner, nullptr));
  EXPECT_EQ(dev[0], owner);
  const uint32_t start = 41;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue[0], p, 4, &start, n * 4, 1, &allocated, &filled));
  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t k = kernel("increment", &program);
  if (!k) GTEST_SKIP() << "no test kernels for " << found().label();
  auto a = arg_pointer(0, p);
  ASSERT_SUCCESS(
      urEnqueueKernelLaunchWithArgsExp(queue[1], k, 1, nullptr, &n, nullptr, 1, &a, nullptr, 1, &filled, &ran));
  std::vector<uint32_t> out(n);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue[0], true, out.data(), p, n * 4, 1, &ran, nullptr));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint32_t v) { return v == 42; }));
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue[0], pool, p, 0, nullptr, nullptr));
  for (ur_event_handle_t e : {allocated, filled, ran}) EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urKernelRelease(k));
  EXPECT_SUCCESS(urProgramRelease(program));
}

// Device 0 memory copied into device 1 memory on queue 1, after queue 0's fill.
TEST_P(urMultiGpuTest, CrossDeviceCopyFollowsWaitList) {
  const size_t n = 1 << 20;
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, dev[0], nullptr, nullptr, n, &a));
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, dev[1], nullptr, nullptr, n, &b));
  const uint8_t v = 0x3C;
  ur_event_handle_t filled = nullptr, copied = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue[0], a, 1, &v, n, 0, nullptr, &filled));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue[1], false, b, a, n, 1, &filled, &copied));
  std::vector<uint8_t> out(n);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue[0], true, out.data(), b, n, 1, &copied, nullptr));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](uint8_t x) { return x == v; }));
  EXPECT_SUCCESS(urEventRelease(filled));
  EXPECT_SUCCESS(urEventRelease(copied));
  EXPECT_SUCCESS(urUSMFree(context, a));
  EXPECT_SUCCESS(urUSMFree(context, b));
}

// A block freed on queue 0 after device 1's last use of it (the free waits for that
// use): an alloc after the free may reuse it, and device 1's result is not disturbed.
TEST_P(urMultiGpuTest, ReuseAfterOtherDevicesUseWaitsForIt) {
  enable_1_to_0();
  if (IsSkipped() || HasFatalFailure()) return;
  const size_t n = 1 << 20;
  void *p = nullptr, *q = nullptr, *saved = nullptr;
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, dev[1], nullptr, nullptr, n, &saved));
  ur_event_handle_t written = nullptr, copied = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue[0], nullptr, n, nullptr, 0, nullptr, &p, nullptr));
  const uint8_t first = 0x11, second = 0x22;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue[0], p, 1, &first, n, 0, nullptr, &written));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue[1], false, saved, p, n, 1, &written, &copied));
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue[0], nullptr, p, 1, &copied, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue[0], nullptr, n, nullptr, 0, nullptr, &q, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFill(queue[0], q, 1, &second, n, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue[0]));
  ASSERT_SUCCESS(urQueueFinish(queue[1]));
  std::vector<uint8_t> out(n);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue[1], true, out.data(), saved, n, 0, nullptr, nullptr));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](uint8_t x) { return x == first; }))
      << "device 1 saw the block after its reuse";
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue[0], nullptr, q, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urEventRelease(written));
  EXPECT_SUCCESS(urEventRelease(copied));
  EXPECT_SUCCESS(urQueueFinish(queue[0]));
  EXPECT_SUCCESS(urUSMFree(context, saved));
}

// A pool from urUSMPoolCreate serves every device of the context, each device from its
// own memory (docs/async-alloc.md, "Pools"): a block freed on device 0's queue is never
// handed to an alloc on device 1's queue, even one ordered after the free; that alloc
// gets device 1 memory, and the pool's statistics count both devices.
TEST_P(urMultiGpuTest, BlockFreedOnOneDeviceIsNotReusedOnTheOther) {
  ur_usm_pool_desc_t desc{};
  desc.stype = UR_STRUCTURE_TYPE_USM_POOL_DESC;
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(context, &desc, &pool));
  const size_t n = 1 << 20;
  void *p = nullptr, *q = nullptr;
  ur_event_handle_t freed = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue[0], pool, n, nullptr, 0, nullptr, &p, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue[0], pool, p, 0, nullptr, &freed));
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue[1], pool, n, nullptr, 1, &freed, &q, nullptr));
  ur_device_handle_t owner = nullptr;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, q, UR_USM_ALLOC_INFO_DEVICE, sizeof owner, &owner, nullptr));
  EXPECT_EQ(dev[1], owner) << "device 1's alloc was given another device's memory";
  const uint8_t v = 0x5A;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue[1], q, 1, &v, n, 0, nullptr, nullptr));
  std::vector<uint8_t> out(n);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue[1], true, out.data(), q, n, 0, nullptr, nullptr));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](uint8_t x) { return x == v; }));
  size_t used = 0, used_high = 0;
  ASSERT_SUCCESS(urUSMPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, &used, nullptr));
  ASSERT_SUCCESS(urUSMPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, &used_high, nullptr));
  EXPECT_EQ(n, used);
  EXPECT_GE(used_high, n);
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue[1], pool, q, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urQueueFinish(queue[1]));
  EXPECT_SUCCESS(urEventRelease(freed));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
}

// A buffer in a context of two devices: written on device 0, incremented by a kernel
// on device 1, read on device 0 (the data follows the device that uses it).
TEST_P(urMultiGpuTest, BufferFollowsTheDeviceThatUsesIt) {
  const size_t n = 4096;
  ur_mem_handle_t m = nullptr;
  ur_result_t r = urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, n * 4, nullptr, &m);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "no memory objects on " << found().label();
  ASSERT_SUCCESS(r);
  std::vector<uint32_t> in(n);
  std::iota(in.begin(), in.end(), 7u);
  ASSERT_SUCCESS(urEnqueueMemBufferWrite(queue[0], m, true, 0, n * 4, in.data(), 0, nullptr, nullptr));
  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t k = kernel("increment", &program);
  if (!k) {
    urMemRelease(m);
    GTEST_SKIP() << "no test kernels for " << found().label();
  }
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ;
  a.size = sizeof(ur_mem_handle_t);
  a.value.memObjTuple = {m, UR_MEM_FLAG_READ_WRITE};
  ur_event_handle_t ran = nullptr;
  ASSERT_SUCCESS(
      urEnqueueKernelLaunchWithArgsExp(queue[1], k, 1, nullptr, &n, nullptr, 1, &a, nullptr, 0, nullptr, &ran));
  std::vector<uint32_t> out(n);
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue[0], m, true, 0, n * 4, out.data(), 1, &ran, nullptr));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(in[i] + 1, out[i]) << i;
  EXPECT_SUCCESS(urEventRelease(ran));
  EXPECT_SUCCESS(urKernelRelease(k));
  EXPECT_SUCCESS(urProgramRelease(program));
  EXPECT_SUCCESS(urMemRelease(m));
}

CONF_INSTANTIATE_DEVICE_SUITE(urMultiGpuTest);

} // namespace
