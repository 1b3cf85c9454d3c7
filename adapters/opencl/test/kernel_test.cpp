// SPDX-License-Identifier: Apache-2.0
// Programs (SPIR bitcode or SPIR-V), kernels and launches on the real device.
#include <numeric>
#include <thread>
#include <vector>

#include "adapter_fixture.hpp"

namespace ocltest {
namespace {

class Kernels : public OpenCLTest {
protected:
  void SetUp() override {
    OpenCLTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT)) GTEST_SKIP() << "the kernels here take USM pointers; no USM";
    program = build_test_program();
    ASSERT_NE(nullptr, program);
  }
  void TearDown() override {
    if (program) {
      EXPECT_EQ(UR_RESULT_SUCCESS, t().Program.pfnRelease(program));
    }
    OpenCLTest::TearDown();
  }
  ur_kernel_handle_t kernel(const char *name) {
    ur_kernel_handle_t k = nullptr;
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Kernel.pfnCreate(program, name, &k));
    return k;
  }
  template <class T> T *shared(size_t n) {
    void *p = nullptr;
    ur_result_t r = device_caps(UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT)
                        ? t().USM.pfnSharedAlloc(context, device, nullptr, nullptr, n * sizeof(T), &p)
                        : t().USM.pfnHostAlloc(context, nullptr, nullptr, n * sizeof(T), &p);
    EXPECT_EQ(UR_RESULT_SUCCESS, r);
    return static_cast<T *>(p);
  }
  ur_program_handle_t program = nullptr;
};

TEST_F(Kernels, ProgramInfoListsTheKernels) {
  size_t n = 0;
  OCL_ASSERT_OK(t().Program.pfnGetInfo(program, UR_PROGRAM_INFO_KERNEL_NAMES, 0, nullptr, &n));
  std::string names(n, '\0');
  OCL_ASSERT_OK(t().Program.pfnGetInfo(program, UR_PROGRAM_INFO_KERNEL_NAMES, n, &names[0], nullptr));
  for (const char *k : {"empty", "fill", "increment", "vector_add", "saxpy", "local_sum", "fill_2d"})
    EXPECT_NE(std::string::npos, names.find(k)) << names;
  size_t count = 0;
  OCL_ASSERT_OK(t().Program.pfnGetInfo(program, UR_PROGRAM_INFO_NUM_KERNELS, sizeof count, &count, nullptr));
  EXPECT_EQ(7u, count);
  ur_program_build_status_t status{};
  OCL_ASSERT_OK(
      t().Program.pfnGetBuildInfo(program, device, UR_PROGRAM_BUILD_INFO_STATUS, sizeof status, &status, nullptr));
  EXPECT_EQ(UR_PROGRAM_BUILD_STATUS_SUCCESS, status);
  ur_program_binary_type_t type{};
  OCL_ASSERT_OK(
      t().Program.pfnGetBuildInfo(program, device, UR_PROGRAM_BUILD_INFO_BINARY_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_PROGRAM_BINARY_TYPE_EXECUTABLE, type);
  // The built binary can be read back and used again.
  size_t bin_size = 0;
  OCL_ASSERT_OK(t().Program.pfnGetInfo(program, UR_PROGRAM_INFO_BINARY_SIZES, sizeof bin_size, &bin_size, nullptr));
  EXPECT_GT(bin_size, 0u);
}

TEST_F(Kernels, KernelInfo) {
  ur_kernel_handle_t k = kernel("saxpy");
  ASSERT_NE(nullptr, k);
  uint32_t nargs = 0;
  OCL_ASSERT_OK(t().Kernel.pfnGetInfo(k, UR_KERNEL_INFO_NUM_ARGS, sizeof nargs, &nargs, nullptr));
  EXPECT_EQ(3u, nargs);
  size_t n = 0;
  OCL_ASSERT_OK(t().Kernel.pfnGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, 0, nullptr, &n));
  std::string name(n, '\0');
  OCL_ASSERT_OK(t().Kernel.pfnGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, n, &name[0], nullptr));
  EXPECT_STREQ("saxpy", name.c_str());
  ur_program_handle_t p = nullptr;
  OCL_ASSERT_OK(t().Kernel.pfnGetInfo(k, UR_KERNEL_INFO_PROGRAM, sizeof p, &p, nullptr));
  EXPECT_EQ(program, p);
  size_t wg = 0;
  OCL_ASSERT_OK(t().Kernel.pfnGetGroupInfo(k, device, UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr));
  EXPECT_GE(wg, 1u);
  uint32_t sg = 0;
  OCL_ASSERT_OK(
      t().Kernel.pfnGetSubGroupInfo(k, device, UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE, sizeof sg, &sg, nullptr));
  EXPECT_GE(sg, 1u);
  size_t global[1] = {1000}, offset[1] = {0}, local[1] = {0};
  OCL_ASSERT_OK(t().Kernel.pfnGetSuggestedLocalWorkSize(k, queue, 1, offset, global, local));
  EXPECT_EQ(0u, 1000 % local[0]);
  ur_kernel_handle_t missing = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_NAME, t().Kernel.pfnCreate(program, "no_such_kernel", &missing));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(k));
}

TEST_F(Kernels, FillIncrementSaxpyVectorAdd) {
  const size_t n = 4096;
  uint32_t *u = shared<uint32_t>(n);
  float *x = shared<float>(n), *y = shared<float>(n), *z = shared<float>(n);
  ASSERT_TRUE(u && x && y && z);
  ur_kernel_handle_t fill = kernel("fill"), inc = kernel("increment"), saxpy = kernel("saxpy"),
                     add = kernel("vector_add");
  uint32_t value = 41;
  size_t global[1] = {n};
  OCL_ASSERT_OK(launch(queue, fill, 1, global, nullptr, {pointer_arg(0, u), value_arg(1, sizeof value, &value)}));
  OCL_ASSERT_OK(launch(queue, inc, 1, global, nullptr, {pointer_arg(0, u)}));
  for (size_t i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = 1.0f;
  }
  float a = 2.0f;
  OCL_ASSERT_OK(
      launch(queue, saxpy, 1, global, nullptr, {value_arg(0, sizeof a, &a), pointer_arg(1, x), pointer_arg(2, y)}));
  OCL_ASSERT_OK(launch(queue, add, 1, global, nullptr, {pointer_arg(0, x), pointer_arg(1, y), pointer_arg(2, z)}));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(42u, u[i]) << i;
    ASSERT_EQ(2.0f * float(i) + 1.0f, y[i]) << i;
    ASSERT_EQ(float(i) + y[i], z[i]) << i;
  }
  for (ur_kernel_handle_t k : {fill, inc, saxpy, add}) OCL_ASSERT_OK(t().Kernel.pfnRelease(k));
  for (void *p : {(void *)u, (void *)x, (void *)y, (void *)z}) OCL_ASSERT_OK(t().USM.pfnFree(context, p));
}

TEST_F(Kernels, LocalMemoryAndTwoDimensions) {
  const size_t groups = 16, local_size = 64, n = groups * local_size;
  uint32_t *in = shared<uint32_t>(n), *out = shared<uint32_t>(groups);
  for (size_t i = 0; i < n; ++i) in[i] = uint32_t(i);
  ur_kernel_handle_t sum = kernel("local_sum");
  size_t global[1] = {n}, local[1] = {local_size};
  OCL_ASSERT_OK(launch(queue, sum, 1, global, local,
                       {pointer_arg(0, in), pointer_arg(1, out), local_arg(2, local_size * sizeof(uint32_t))}));
  const uint32_t width = 33, height = 7;
  uint32_t *grid = shared<uint32_t>(width * height);
  ur_kernel_handle_t f2d = kernel("fill_2d");
  size_t global2[2] = {width, height};
  OCL_ASSERT_OK(launch(queue, f2d, 2, global2, nullptr, {pointer_arg(0, grid), value_arg(1, sizeof width, &width)}));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  for (size_t g = 0; g < groups; ++g) {
    uint32_t expect = 0;
    for (size_t i = 0; i < local_size; ++i) expect += uint32_t(g * local_size + i);
    EXPECT_EQ(expect, out[g]) << g;
  }
  for (uint32_t i = 0; i < width * height; ++i) ASSERT_EQ(i, grid[i]);
  OCL_ASSERT_OK(t().Kernel.pfnRelease(sum));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(f2d));
  for (void *p : {(void *)in, (void *)out, (void *)grid}) OCL_ASSERT_OK(t().USM.pfnFree(context, p));
}

// On the out-of-order queue only events order the launches.
TEST_F(Kernels, OutOfOrderChainFollowsWaitLists) {
  const size_t n = 1024;
  uint32_t *u = shared<uint32_t>(n);
  ur_kernel_handle_t fill = kernel("fill"), inc = kernel("increment");
  uint32_t zero = 0;
  size_t global[1] = {n};
  ur_event_handle_t prev = nullptr;
  OCL_ASSERT_OK(
      launch(ooo_queue, fill, 1, global, nullptr, {pointer_arg(0, u), value_arg(1, 4, &zero)}, 0, nullptr, &prev));
  for (int i = 0; i < 20; ++i) {
    ur_event_handle_t next = nullptr;
    OCL_ASSERT_OK(launch(ooo_queue, inc, 1, global, nullptr, {pointer_arg(0, u)}, 1, &prev, &next));
    OCL_ASSERT_OK(t().Event.pfnRelease(prev));
    prev = next;
  }
  OCL_ASSERT_OK(t().Event.pfnWait(1, &prev));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(20u, u[i]);
  OCL_ASSERT_OK(t().Event.pfnRelease(prev));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(fill));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(inc));
  OCL_ASSERT_OK(t().USM.pfnFree(context, u));
}

// One kernel handle, many threads, each launching with its own arguments.
TEST_F(Kernels, ConcurrentLaunchesOfOneKernel) {
  const int threads = 4, launches = 50;
  const size_t n = 256;
  ur_kernel_handle_t fill = kernel("fill");
  std::vector<uint32_t *> bufs;
  for (int i = 0; i < threads * launches; ++i) bufs.push_back(shared<uint32_t>(n));
  std::vector<std::thread> pool;
  for (int th = 0; th < threads; ++th)
    pool.emplace_back([&, th] {
      for (int i = 0; i < launches; ++i) {
        uint32_t value = uint32_t(th * launches + i);
        size_t global[1] = {n};
        EXPECT_EQ(UR_RESULT_SUCCESS,
                  launch(ooo_queue, fill, 1, global, nullptr, {pointer_arg(0, bufs[value]), value_arg(1, 4, &value)}));
      }
    });
  for (auto &th : pool) th.join();
  OCL_ASSERT_OK(t().Queue.pfnFinish(ooo_queue));
  for (size_t b = 0; b < bufs.size(); ++b)
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(uint32_t(b), bufs[b][i]) << "buffer " << b;
  for (uint32_t *p : bufs) OCL_ASSERT_OK(t().USM.pfnFree(context, p));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(fill));
}

TEST_F(Kernels, LaunchErrors) {
  ur_kernel_handle_t fill = kernel("fill");
  size_t zero[1] = {0}, global[1] = {16};
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(queue, fill, 1, zero, nullptr, {}));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, launch(queue, fill, 1, global, zero, {}));
  size_t global_4d[4] = {16, 1, 1, 1}; // workDim entries, as the spec asks of the caller
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(queue, fill, 4, global_4d, nullptr, {}));
  // Arguments never set.
  ur_kernel_handle_t fresh = kernel("increment");
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGS, launch(queue, fresh, 1, global, nullptr, {}));
  uint32_t v = 0;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
            launch(queue, fill, 1, global, nullptr, {value_arg(7, 4, &v)}));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            t().EnqueueExp.pfnKernelLaunchWithArgsExp(queue, fill, 1, nullptr, global, nullptr, 2, nullptr, nullptr, 0,
                                                      nullptr, nullptr));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(fill));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(fresh));
}

using Programs = OpenCLTest;

TEST_F(Programs, IlNeedsADeviceThatTakesIl) {
  std::vector<uint8_t> spv = read_file(kernel_path("spv"));
  if (spv.empty()) GTEST_SKIP() << "no SPIR-V test kernels were built (llvm-spirv-15 missing)";
  size_t il_size = 0;
  OCL_ASSERT_OK(t().Device.pfnGetInfo(device, UR_DEVICE_INFO_IL_VERSION, 0, nullptr, &il_size));
  ur_program_handle_t p = nullptr;
  ur_result_t r = t().Program.pfnCreateWithIL(context, spv.data(), spv.size(), nullptr, &p);
  if (il_size > 1) {
    EXPECT_EQ(UR_RESULT_SUCCESS, r);
    if (p) {
      OCL_ASSERT_OK(t().Program.pfnRelease(p));
    }
  } else {
    EXPECT_EQ(UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE, r); // e.g. PoCL: no SPIR-V, SPIR bitcode instead
  }
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, t().Program.pfnCreateWithIL(context, spv.data(), 0, nullptr, &p));
}

TEST_F(Programs, GarbageBinaryIsRefusedOrFailsToBuildWithALog) {
  std::vector<uint8_t> junk(256, 0x5a);
  size_t len = junk.size();
  const uint8_t *bin = junk.data();
  ur_program_handle_t p = nullptr;
  ur_result_t r = t().Program.pfnCreateWithBinary(context, 1, &device, &len, &bin, nullptr, &p);
  if (r == UR_RESULT_SUCCESS) {
    EXPECT_NE(UR_RESULT_SUCCESS, t().Program.pfnBuild(context, p, nullptr));
    size_t n = 0;
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Program.pfnGetBuildInfo(p, device, UR_PROGRAM_BUILD_INFO_LOG, 0, nullptr, &n));
    OCL_ASSERT_OK(t().Program.pfnRelease(p));
  } else {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_NATIVE_BINARY, r);
  }
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            t().Program.pfnCreateWithBinary(context, 0, &device, &len, &bin, nullptr, &p));
}

TEST_F(Programs, BinaryOfABuiltProgramBuildsAgain) {
  if (!device_caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT)) GTEST_SKIP() << "no USM";
  ur_program_handle_t p = build_test_program();
  ASSERT_NE(nullptr, p);
  size_t size = 0;
  OCL_ASSERT_OK(t().Program.pfnGetInfo(p, UR_PROGRAM_INFO_BINARY_SIZES, sizeof size, &size, nullptr));
  std::vector<uint8_t> bin(size);
  uint8_t *ptrs[1] = {bin.data()};
  OCL_ASSERT_OK(t().Program.pfnGetInfo(p, UR_PROGRAM_INFO_BINARIES, sizeof ptrs, ptrs, nullptr));
  const uint8_t *cbin = bin.data();
  ur_program_handle_t again = nullptr;
  OCL_ASSERT_OK(t().Program.pfnCreateWithBinary(context, 1, &device, &size, &cbin, nullptr, &again));
  OCL_ASSERT_OK(t().Program.pfnBuild(context, again, nullptr));
  ur_kernel_handle_t k = nullptr;
  OCL_ASSERT_OK(t().Kernel.pfnCreate(again, "empty", &k));
  size_t global[1] = {1};
  OCL_ASSERT_OK(launch(queue, k, 1, global, nullptr, {}));
  OCL_ASSERT_OK(t().Queue.pfnFinish(queue));
  OCL_ASSERT_OK(t().Kernel.pfnRelease(k));
  OCL_ASSERT_OK(t().Program.pfnRelease(again));
  OCL_ASSERT_OK(t().Program.pfnRelease(p));
}

} // namespace
} // namespace ocltest
