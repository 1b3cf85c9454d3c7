// SPDX-License-Identifier: Apache-2.0
// Kernel launches through urEnqueueKernelLaunchWithArgsExp: 1 to 3 dimensions, offsets,
// given and chosen local sizes, value / pointer / local arguments, wait lists and chains
// on out-of-order queues, and what a launch must refuse.
//
// The pinned API (UR 578c2a84) has no urKernelSetArg* or urEnqueueKernelLaunch: arguments
// are given with each launch, so that is the only launch path tested here.
#include <algorithm>
#include <numeric>

#include "conformance.hpp"

namespace {

using conf::arg_local;
using conf::arg_pointer;
using conf::arg_value;
using conf::ProgramTest;

// Launch helpers over one queue; each returns the launch's result.
class urEnqueueKernelTest : public ProgramTest {
protected:
  std::vector<ur_kernel_handle_t> kernels;
  std::vector<void *> allocations;

  void TearDown() override {
    if (queue) urQueueFinish(queue);
    for (ur_kernel_handle_t k : kernels) EXPECT_SUCCESS(urKernelRelease(k));
    for (void *p : allocations) EXPECT_SUCCESS(urUSMFree(context, p));
    ProgramTest::TearDown();
  }
  ur_kernel_handle_t kernel(const char *name) {
    ur_kernel_handle_t k = make_kernel(name);
    if (k) kernels.push_back(k);
    return k;
  }
  template <class T> T *device_array(size_t n) {
    void *p = nullptr;
    EXPECT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, n * sizeof(T), &p));
    if (p) allocations.push_back(p);
    return static_cast<T *>(p);
  }
  template <class T> void upload(T *dst, const std::vector<T> &src) {
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, dst, src.data(), src.size() * sizeof(T), 0, nullptr, nullptr));
  }
  template <class T> std::vector<T> download(const T *src, size_t n) {
    std::vector<T> out(n);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), src, n * sizeof(T), 0, nullptr, nullptr));
    return out;
  }
  ur_result_t launch(ur_kernel_handle_t k, uint32_t dims, const size_t *global, const size_t *local,
                     const std::vector<ur_exp_kernel_arg_properties_t> &args, const size_t *offset = nullptr,
                     uint32_t n_wait = 0, const ur_event_handle_t *wait = nullptr, ur_event_handle_t *event = nullptr,
                     ur_queue_handle_t q = nullptr) {
    return urEnqueueKernelLaunchWithArgsExp(q ? q : queue, k, dims, offset, global, local,
                                            static_cast<uint32_t>(args.size()), args.empty() ? nullptr : args.data(),
                                            nullptr, n_wait, wait, event);
  }
  ur_result_t fill(uint32_t *out, const uint32_t &value, size_t n, const size_t *local = nullptr) {
    ur_kernel_handle_t k = kernel("fill");
    return launch(k, 1, &n, local, {arg_pointer(0, out), arg_value(1, sizeof value, &value)});
  }
};

// ---- one dimension ------------------------------------------------------------------------------

TEST_P(urEnqueueKernelTest, EmptyKernel) {
  ur_kernel_handle_t k = kernel("empty");
  ASSERT_NE(nullptr, k);
  size_t global = 64;
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(launch(k, 1, &global, nullptr, {}, nullptr, 0, nullptr, &e));
  ASSERT_SUCCESS(urEventWait(1, &e));
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
  EXPECT_SUCCESS(urEventGetInfo(e, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_COMMAND_KERNEL_LAUNCH, type);
  EXPECT_SUCCESS(urEventRelease(e));
}

TEST_P(urEnqueueKernelTest, FillWithLocalSize) {
  const size_t n = 1024, local = 64;
  uint32_t *out = device_array<uint32_t>(n);
  const uint32_t value = 0xFEEDBEEF;
  ASSERT_SUCCESS(fill(out, value, n, &local));
  std::vector<uint32_t> host = download(out, n);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [&](uint32_t v) { return v == value; }));
}

TEST_P(urEnqueueKernelTest, FillWithChosenLocalSize) {
  for (size_t n : {size_t(1), size_t(7), size_t(1000), size_t(4096)}) {
    uint32_t *out = device_array<uint32_t>(n);
    const uint32_t value = static_cast<uint32_t>(n);
    ASSERT_SUCCESS(fill(out, value, n)) << n << " items";
    std::vector<uint32_t> host = download(out, n);
    EXPECT_TRUE(std::all_of(host.begin(), host.end(), [&](uint32_t v) { return v == value; })) << n << " items";
  }
}

TEST_P(urEnqueueKernelTest, GlobalOffset) {
  const size_t n = 64, offset = 16, count = 32;
  uint32_t *out = device_array<uint32_t>(n);
  const uint32_t zero = 0, value = 9;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, out, sizeof zero, &zero, n * 4, 0, nullptr, nullptr));
  ur_kernel_handle_t k = kernel("fill");
  ASSERT_SUCCESS(launch(k, 1, &count, nullptr, {arg_pointer(0, out), arg_value(1, sizeof value, &value)}, &offset));
  std::vector<uint32_t> host = download(out, n);
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ((i >= offset && i < offset + count) ? value : 0u, host[i]) << "ids include the offset; element " << i;
}

TEST_P(urEnqueueKernelTest, VectorAdd) {
  const size_t n = 4096;
  float *a = device_array<float>(n), *b = device_array<float>(n), *c = device_array<float>(n);
  std::vector<float> ha(n), hb(n);
  std::iota(ha.begin(), ha.end(), 0.0f);
  std::iota(hb.begin(), hb.end(), 1000.0f);
  upload(a, ha);
  upload(b, hb);
  ur_kernel_handle_t k = kernel("vector_add");
  ASSERT_SUCCESS(launch(k, 1, &n, nullptr, {arg_pointer(0, a), arg_pointer(1, b), arg_pointer(2, c)}));
  std::vector<float> hc = download(c, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(ha[i] + hb[i], hc[i]) << i;
}

TEST_P(urEnqueueKernelTest, SaxpyValueArgument) {
  const size_t n = 2048;
  float *x = device_array<float>(n), *y = device_array<float>(n);
  std::vector<float> hx(n), hy(n);
  std::iota(hx.begin(), hx.end(), 1.0f);
  std::fill(hy.begin(), hy.end(), 0.5f);
  upload(x, hx);
  upload(y, hy);
  float a = 3.0f;
  ur_kernel_handle_t k = kernel("saxpy");
  ASSERT_SUCCESS(launch(k, 1, &n, nullptr, {arg_value(0, sizeof a, &a), arg_pointer(1, x), arg_pointer(2, y)}));
  a = -100.0f; // the value was copied at the call: changing it now changes nothing
  std::vector<float> out = download(y, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(3.0f * hx[i] + 0.5f, out[i]) << i;
}

TEST_P(urEnqueueKernelTest, LocalMemoryArgument) {
  const size_t local = 64, groups = 16, n = local * groups;
  uint32_t *in = device_array<uint32_t>(n), *out = device_array<uint32_t>(groups);
  std::vector<uint32_t> h(n);
  std::iota(h.begin(), h.end(), 1u);
  upload(in, h);
  ur_kernel_handle_t k = kernel("local_sum");
  ASSERT_SUCCESS(
      launch(k, 1, &n, &local, {arg_pointer(0, in), arg_pointer(1, out), arg_local(2, local * sizeof(uint32_t))}));
  std::vector<uint32_t> sums = download(out, groups);
  for (size_t g = 0; g < groups; ++g) {
    uint32_t expected = 0;
    for (size_t i = 0; i < local; ++i) expected += h[g * local + i];
    EXPECT_EQ(expected, sums[g]) << "group " << g;
  }
}

TEST_P(urEnqueueKernelTest, ArgumentsPersistNotBetweenKernels) {
  // Two kernels of one name keep their own arguments.
  const size_t n = 256;
  uint32_t *a = device_array<uint32_t>(n), *b = device_array<uint32_t>(n);
  const uint32_t one = 1, two = 2;
  ur_kernel_handle_t k1 = kernel("fill"), k2 = kernel("fill");
  ASSERT_SUCCESS(launch(k1, 1, &n, nullptr, {arg_pointer(0, a), arg_value(1, 4, &one)}));
  ASSERT_SUCCESS(launch(k2, 1, &n, nullptr, {arg_pointer(0, b), arg_value(1, 4, &two)}));
  std::vector<uint32_t> ha = download(a, n), hb = download(b, n);
  EXPECT_TRUE(std::all_of(ha.begin(), ha.end(), [](uint32_t v) { return v == 1; }));
  EXPECT_TRUE(std::all_of(hb.begin(), hb.end(), [](uint32_t v) { return v == 2; }));
}

TEST_P(urEnqueueKernelTest, PointerToHostAndSharedMemory) {
  for (ur_usm_type_t kind : {UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED}) {
    if (!conf::usm_supported(device(), kind)) continue;
    SCOPED_TRACE(conf::usm_kind_name(kind));
    const size_t n = 512;
    void *mem = nullptr;
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), kind, n * 4, &mem));
    allocations.push_back(mem);
    const uint32_t value = 77;
    ASSERT_SUCCESS(fill(static_cast<uint32_t *>(mem), value, n));
    ASSERT_SUCCESS(urQueueFinish(queue));
    const uint32_t *h = static_cast<const uint32_t *>(mem);
    EXPECT_TRUE(std::all_of(h, h + n, [&](uint32_t v) { return v == value; }));
  }
}

TEST_P(urEnqueueKernelTest, MemoryObjectArgument) {
  // Buffers (urMemBuffer*) are optional in Ordo's scope; an adapter that has them must
  // take one as a kernel argument.
  const size_t n = 256;
  ur_mem_handle_t buffer = nullptr;
  ur_result_t r = urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, n * 4, nullptr, &buffer);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "memory objects (urMemBufferCreate) unsupported";
  ASSERT_SUCCESS(r);
  ur_exp_kernel_arg_properties_t mem{};
  mem.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  mem.type = UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ;
  mem.index = 0;
  mem.size = sizeof(ur_mem_handle_t);
  mem.value.memObjTuple = {buffer, UR_MEM_FLAG_READ_WRITE};
  const uint32_t value = 0xB0FF;
  ASSERT_SUCCESS(launch(kernel("fill"), 1, &n, nullptr, {mem, arg_value(1, sizeof value, &value)}));
  std::vector<uint32_t> host(n, 0);
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, buffer, true, 0, n * 4, host.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [&](uint32_t v) { return v == value; }));
  EXPECT_SUCCESS(urMemRelease(buffer));
}

// ---- two and three dimensions --------------------------------------------------------------------

TEST_P(urEnqueueKernelTest, TwoDimensions) {
  const uint32_t width = 48;
  const size_t global[2] = {width, 20};
  uint32_t *out = device_array<uint32_t>(global[0] * global[1]);
  ur_kernel_handle_t k = kernel("fill_2d");
  for (bool with_local : {true, false}) {
    const size_t local[2] = {8, 4};
    ASSERT_SUCCESS(launch(k, 2, global, with_local ? local : nullptr, {arg_pointer(0, out), arg_value(1, 4, &width)}));
    std::vector<uint32_t> host = download(out, global[0] * global[1]);
    for (size_t i = 0; i < host.size(); ++i)
      ASSERT_EQ(i, host[i]) << (with_local ? "given" : "chosen") << " local size";
  }
}

TEST_P(urEnqueueKernelTest, ThreeDimensions) {
  uint32_t dims = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS, dims));
  if (dims < 3) GTEST_SKIP() << "the device has " << dims << " work-item dimensions";
  // The test kernels index dimension 0 only, so a 3-D launch of `empty` checks that the
  // launch itself runs; a 3-D `increment` over (n, 1, 1) checks the ids of dimension 0.
  ur_kernel_handle_t e = kernel("empty");
  const size_t global[3] = {8, 4, 2}, local[3] = {2, 2, 2};
  ur_event_handle_t done = nullptr;
  ASSERT_SUCCESS(launch(e, 3, global, local, {}, nullptr, 0, nullptr, &done));
  ASSERT_SUCCESS(urEventWait(1, &done));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(done));
  EXPECT_SUCCESS(urEventRelease(done));

  const size_t n = 64;
  uint32_t *data = device_array<uint32_t>(n);
  const uint32_t zero = 0;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, data, 4, &zero, n * 4, 0, nullptr, nullptr));
  ur_kernel_handle_t inc = kernel("increment");
  const size_t g3[3] = {n, 1, 1}, l3[3] = {16, 1, 1};
  ASSERT_SUCCESS(launch(inc, 3, g3, l3, {arg_pointer(0, data)}));
  std::vector<uint32_t> host = download(data, n);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](uint32_t v) { return v == 1; }));
}

// ---- ordering -------------------------------------------------------------------------------------

TEST_P(urEnqueueKernelTest, InOrderQueueChainsLaunches) {
  const size_t n = 1024;
  uint32_t *data = device_array<uint32_t>(n);
  const uint32_t zero = 0;
  ASSERT_SUCCESS(fill(data, zero, n));
  ur_kernel_handle_t inc = kernel("increment");
  for (int i = 0; i < 10; ++i) ASSERT_SUCCESS(launch(inc, 1, &n, nullptr, {arg_pointer(0, data)}));
  std::vector<uint32_t> host = download(data, n);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](uint32_t v) { return v == 10; }));
}

TEST_P(urEnqueueKernelTest, OutOfOrderChainFollowsWaitLists) {
  if (!conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    GTEST_SKIP() << "no out-of-order queues";
  ur_queue_handle_t ooo = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooo));
  const size_t n = 1 << 16;
  uint32_t *data = device_array<uint32_t>(n);
  ur_kernel_handle_t f = kernel("fill"), inc = kernel("increment");
  const uint32_t zero = 0;
  const int steps = 24;
  std::vector<ur_event_handle_t> events(steps + 1, nullptr);
  ASSERT_SUCCESS(
      launch(f, 1, &n, nullptr, {arg_pointer(0, data), arg_value(1, 4, &zero)}, nullptr, 0, nullptr, &events[0], ooo));
  for (int i = 1; i <= steps; ++i)
    ASSERT_SUCCESS(launch(inc, 1, &n, nullptr, {arg_pointer(0, data)}, nullptr, 1, &events[i - 1], &events[i], ooo));
  std::vector<uint32_t> host(n, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(ooo, true, host.data(), data, n * 4, 1, &events[steps], nullptr));
  size_t wrong = std::count_if(host.begin(), host.end(), [&](uint32_t v) { return v != uint32_t(steps); });
  EXPECT_EQ(0u, wrong) << "elements not incremented exactly " << steps << " times: the chain ran out of order";
  for (ur_event_handle_t e : events) EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urQueueFinish(ooo));
  EXPECT_SUCCESS(urQueueRelease(ooo));
}

TEST_P(urEnqueueKernelTest, OutOfOrderPipeline) {
  // fill a, fill b (independent) -> vector_add c = a + b -> saxpy c = 2 b + c -> copy back.
  if (!conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    GTEST_SKIP() << "no out-of-order queues";
  ur_queue_handle_t ooo = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooo));
  const size_t n = 1 << 14;
  float *a = device_array<float>(n), *b = device_array<float>(n), *c = device_array<float>(n);
  const float fa = 1.5f, fb = 2.25f, two = 2.0f;
  ur_event_handle_t ea = nullptr, eb = nullptr, eadd = nullptr, esaxpy = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(ooo, a, sizeof fa, &fa, n * 4, 0, nullptr, &ea));
  ASSERT_SUCCESS(urEnqueueUSMFill(ooo, b, sizeof fb, &fb, n * 4, 0, nullptr, &eb));
  ur_event_handle_t ab[2] = {ea, eb};
  ASSERT_SUCCESS(launch(kernel("vector_add"), 1, &n, nullptr, {arg_pointer(0, a), arg_pointer(1, b), arg_pointer(2, c)},
                        nullptr, 2, ab, &eadd, ooo));
  ASSERT_SUCCESS(launch(kernel("saxpy"), 1, &n, nullptr, {arg_value(0, 4, &two), arg_pointer(1, b), arg_pointer(2, c)},
                        nullptr, 1, &eadd, &esaxpy, ooo));
  std::vector<float> host(n, 0);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(ooo, true, host.data(), c, n * 4, 1, &esaxpy, nullptr));
  const float expected = 2.0f * fb + (fa + fb);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [&](float v) { return v == expected; }));
  for (ur_event_handle_t e : {ea, eb, eadd, esaxpy}) EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urQueueFinish(ooo));
  EXPECT_SUCCESS(urQueueRelease(ooo));
}

TEST_P(urEnqueueKernelTest, ManyIndependentLaunches) {
  const size_t n = 256, count = 64;
  std::vector<uint32_t *> outs;
  ur_kernel_handle_t f = kernel("fill");
  std::vector<uint32_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    outs.push_back(device_array<uint32_t>(n));
    values[i] = static_cast<uint32_t>(i * 3 + 1);
    ASSERT_SUCCESS(launch(f, 1, &n, nullptr, {arg_pointer(0, outs[i]), arg_value(1, 4, &values[i])}));
  }
  ASSERT_SUCCESS(urQueueFinish(queue));
  for (size_t i = 0; i < count; ++i) {
    std::vector<uint32_t> host = download(outs[i], n);
    EXPECT_TRUE(std::all_of(host.begin(), host.end(), [&](uint32_t v) { return v == values[i]; })) << "launch " << i;
  }
}

TEST_P(urEnqueueKernelTest, ProfiledLaunch) {
  if (!conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_PROFILING_ENABLE)) GTEST_SKIP() << "no profiling queues";
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_PROFILING_ENABLE, &q));
  const size_t n = 1 << 16;
  uint32_t *out = device_array<uint32_t>(n);
  const uint32_t v = 5;
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(
      launch(kernel("fill"), 1, &n, nullptr, {arg_pointer(0, out), arg_value(1, 4, &v)}, nullptr, 0, nullptr, &e, q));
  ASSERT_SUCCESS(urEventWait(1, &e));
  uint64_t start = 0, end = 0;
  ASSERT_SUCCESS(urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_START, sizeof start, &start, nullptr));
  ASSERT_SUCCESS(urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, sizeof end, &end, nullptr));
  EXPECT_LE(start, end);
  EXPECT_SUCCESS(urEventRelease(e));
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urQueueRelease(q));
}

// ---- what a launch must refuse (the adapter itself) -------------------------------------------------

TEST_P(urEnqueueKernelTest, MissingArgumentsAreRefused) {
  ur_kernel_handle_t k = kernel("fill");
  size_t n = 16;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGS, launch(k, 1, &n, nullptr, {}));
  uint32_t *out = device_array<uint32_t>(n);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGS, launch(k, 1, &n, nullptr, {arg_pointer(0, out)}));
}

TEST_P(urEnqueueKernelTest, ArgumentIndexOutOfRange) {
  ur_kernel_handle_t k = kernel("increment");
  size_t n = 16;
  uint32_t *out = device_array<uint32_t>(n);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
                   launch(k, 1, &n, nullptr, {arg_pointer(0, out), arg_pointer(1, out)}));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, launch(k, 1, &n, nullptr, {arg_pointer(7, out)}));
}

TEST_P(urEnqueueKernelTest, ValueArgumentOfWrongSize) {
  ur_kernel_handle_t k = kernel("fill");
  size_t n = 16;
  uint32_t *out = device_array<uint32_t>(n);
  const uint64_t wide = 1;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
                   launch(k, 1, &n, nullptr, {arg_pointer(0, out), arg_value(1, sizeof wide, &wide)}));
}

TEST_P(urEnqueueKernelTest, LocalSizeBeyondDeviceLimit) {
  size_t max_group = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, max_group));
  ur_kernel_handle_t k = kernel("empty");
  size_t local = max_group * 2, global = local * 2;
  ur_result_t r = launch(k, 1, &global, &local, {});
  ASSERT_RESULT_IN(r, UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE);
}

TEST_P(urEnqueueKernelTest, BadWorkDimension) {
  ur_kernel_handle_t k = kernel("empty");
  size_t global[4] = {4, 4, 4, 4};
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(k, 0, global, nullptr, {}));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(k, 4, global, nullptr, {}));
}

TEST_P(urEnqueueKernelTest, RefusedLaunchChangesNothing) {
  // After a refused launch the kernel and queue work as before.
  ur_kernel_handle_t k = kernel("fill");
  size_t n = 64;
  uint32_t *out = device_array<uint32_t>(n);
  const uint64_t wide = 1;
  const uint32_t v = 3;
  EXPECT_NE(UR_RESULT_SUCCESS, launch(k, 1, &n, nullptr, {arg_pointer(0, out), arg_value(1, 8, &wide)}));
  ASSERT_SUCCESS(launch(k, 1, &n, nullptr, {arg_pointer(0, out), arg_value(1, 4, &v)}));
  std::vector<uint32_t> host = download(out, n);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [&](uint32_t x) { return x == v; }));
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urEnqueueKernelTest, LaunchRules) {
  CONF_REQUIRE_VALIDATION();
  ur_kernel_handle_t k = kernel("empty");
  size_t global = 16, zero = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urEnqueueKernelLaunchWithArgsExp(nullptr, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr, 0,
                                                    nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urEnqueueKernelLaunchWithArgsExp(queue, nullptr, 1, nullptr, &global, nullptr, 0, nullptr, nullptr,
                                                    0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0,
                                                    nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(k, 1, &zero, nullptr, {}));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, launch(k, 1, &global, &zero, {}));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
                   urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr, 1,
                                                    nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, &global, nullptr, 1, nullptr, nullptr, 0,
                                                    nullptr, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urEnqueueKernelTest);

} // namespace
