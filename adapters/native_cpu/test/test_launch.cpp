// SPDX-License-Identifier: Apache-2.0
// urEnqueueKernelLaunchWithArgsExp: the common test kernels, ND-ranges, argument
// kinds, local memory and every refusal.
#include <numeric>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuLaunch : public NativeCpu {
protected:
  void SetUp() override {
    NativeCpu::SetUp();
    common = build_program(test_kernels_path());
    extra = build_program(extra_kernels_path());
    q = make_queue();
  }
  ur_program_handle_t common = nullptr, extra = nullptr;
  ur_queue_handle_t q = nullptr;
};

TEST_F(NativeCpuLaunch, FillAndIncrement) {
  const size_t n = 100000;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  uint32_t value = 41;
  ASSERT_EQ(launch(q, kernel(common, "fill"), 1, &n, nullptr, {pointer_arg(0, data), value_arg(1, 4, &value)}),
            UR_RESULT_SUCCESS);
  ur_kernel_handle_t inc = kernel(common, "increment");
  ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], 42u) << i;
}

TEST_F(NativeCpuLaunch, VectorAddAndSaxpy) {
  const size_t n = 4096;
  auto *a = static_cast<float *>(shared_alloc(n * 4));
  auto *b = static_cast<float *>(shared_alloc(n * 4));
  auto *c = static_cast<float *>(shared_alloc(n * 4));
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = float(2 * i);
  }
  size_t local = 64;
  ASSERT_EQ(
      launch(q, kernel(common, "vector_add"), 1, &n, &local, {pointer_arg(0, a), pointer_arg(1, b), pointer_arg(2, c)}),
      UR_RESULT_SUCCESS);
  float alpha = 0.5f;
  ASSERT_EQ(launch(q, kernel(common, "saxpy"), 1, &n, nullptr,
                   {value_arg(0, sizeof alpha, &alpha), pointer_arg(1, a), pointer_arg(2, c)}),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(c[i], 3.0f * i + 0.5f * i) << i;
}

TEST_F(NativeCpuLaunch, LocalSumWithGivenAndChosenLocalSizes) {
  const size_t n = 1 << 14;
  auto *in = static_cast<uint32_t *>(shared_alloc(n * 4));
  auto *out = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::iota(in, in + n, 0u);
  ur_kernel_handle_t k = kernel(common, "local_sum");
  for (size_t local : {1u, 16u, 256u, 1024u}) {
    ASSERT_EQ(launch(q, k, 1, &n, &local, {pointer_arg(0, in), pointer_arg(1, out), local_arg(2, local * 4)}),
              UR_RESULT_SUCCESS);
    ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    for (size_t g = 0; g < n / local; ++g) {
      uint64_t first = g * local, last = first + local - 1;
      ASSERT_EQ(out[g], uint32_t((first + last) * local / 2)) << "local " << local << " group " << g;
    }
  }
  // Chosen local size: query it first so the scratch fits.
  size_t offset = 0, chosen = 0;
  ASSERT_EQ(T(k).Kernel.pfnGetSuggestedLocalWorkSize(k, q, 1, &offset, &n, &chosen), UR_RESULT_SUCCESS);
  ASSERT_EQ(launch(q, k, 1, &n, nullptr, {pointer_arg(0, in), pointer_arg(1, out), local_arg(2, chosen * 4)}),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(out[0], uint32_t((chosen - 1) * chosen / 2));
}

TEST_F(NativeCpuLaunch, Fill2D) {
  const size_t w = 37, h = 23;
  auto *out = static_cast<uint32_t *>(shared_alloc(w * h * 4));
  size_t global[2] = {w, h};
  uint32_t width = w;
  ASSERT_EQ(launch(q, kernel(common, "fill_2d"), 2, global, nullptr, {pointer_arg(0, out), value_arg(1, 4, &width)}),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < w * h; ++i) ASSERT_EQ(out[i], i);
}

TEST_F(NativeCpuLaunch, EmptyKernelRuns) {
  size_t one = 1;
  ur_event_handle_t ev = nullptr;
  ASSERT_EQ(launch(q, kernel(common, "empty"), 1, &one, nullptr, {}, 0, nullptr, &ev), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_SUCCESS);
  ur_command_t type{};
  T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr);
  EXPECT_EQ(type, UR_COMMAND_KERNEL_LAUNCH);
  T(ev).Event.pfnRelease(ev);
}

// Every id in 1, 2 and 3 dimensions, with offsets and given local sizes.
TEST_F(NativeCpuLaunch, IdsInThreeDimensionsWithOffsets) {
  ur_kernel_handle_t k = kernel(extra, "record_ids");
  struct Case {
    uint32_t dim;
    size_t global[3], local[3], offset[3];
  };
  for (const Case &c : {Case{1, {48, 1, 1}, {8, 1, 1}, {5, 0, 0}}, Case{2, {12, 10, 1}, {4, 5, 1}, {1, 2, 0}},
                        Case{3, {6, 4, 6}, {3, 2, 2}, {7, 8, 9}}, Case{3, {5, 3, 7}, {5, 1, 7}, {0, 0, 0}}}) {
    size_t items = c.global[0] * c.global[1] * c.global[2];
    auto *g = static_cast<uint32_t *>(shared_alloc(items * 12));
    auto *l = static_cast<uint32_t *>(shared_alloc(items * 12));
    auto *grp = static_cast<uint32_t *>(shared_alloc(items * 12));
    ASSERT_EQ(launch(q, k, c.dim, c.global, c.local, {pointer_arg(0, g), pointer_arg(1, l), pointer_arg(2, grp)}, 0,
                     nullptr, nullptr, c.offset),
              UR_RESULT_SUCCESS);
    ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    for (size_t z = 0; z < c.global[2]; ++z)
      for (size_t y = 0; y < c.global[1]; ++y)
        for (size_t x = 0; x < c.global[0]; ++x) {
          size_t i = (z * c.global[1] + y) * c.global[0] + x;
          size_t id[3] = {x, y, z};
          for (int d = 0; d < 3; ++d) {
            size_t off = d < int(c.dim) ? c.offset[d] : 0;
            ASSERT_EQ(g[3 * i + d], id[d] + off) << "dim " << c.dim << " item " << i << " d " << d;
            ASSERT_EQ(l[3 * i + d], id[d] % c.local[d]);
            ASSERT_EQ(grp[3 * i + d], id[d] / c.local[d]);
          }
        }
  }
}

TEST_F(NativeCpuLaunch, ValueArgumentsOfEverySize) {
  ur_kernel_handle_t k = kernel(extra, "value_kinds");
  const size_t n = 33;
  auto *out = static_cast<uint64_t *>(shared_alloc(n * 8));
  struct Pair {
    uint64_t a, b;
  } p{1000, 200};
  uint64_t x = 34;
  ASSERT_EQ(launch(q, k, 1, &n, nullptr, {value_arg(0, sizeof p, &p), value_arg(1, 8, &x), pointer_arg(2, out)}),
            UR_RESULT_SUCCESS);
  // A pointer may also come as an 8-byte value; arguments may come in any order.
  void *out_as_value = out;
  x = 1;
  ASSERT_EQ(launch(q, k, 1, &n, nullptr,
                   {value_arg(2, sizeof out_as_value, &out_as_value), value_arg(1, 8, &x), value_arg(0, sizeof p, &p)}),
            UR_RESULT_SUCCESS);
  p.a = 0; // copied at enqueue: changing it now changes nothing
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 1201u);
}

TEST_F(NativeCpuLaunch, TwoLocalArgumentsAndWorkGroupMemory) {
  const size_t n = 512, local = 32;
  auto *in = static_cast<uint32_t *>(shared_alloc(n * 4));
  auto *out = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::iota(in, in + n, 1u);
  ASSERT_EQ(launch(q, kernel(extra, "two_locals"), 1, &n, &local,
                   {pointer_arg(0, in), pointer_arg(1, out), local_arg(2, local * 4), local_arg(3, local * 8)}),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * in[i]);

  ur_kernel_launch_workgroup_property_t wg{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY, nullptr, local * 4};
  ur_kernel_launch_ext_properties_t props{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES, &wg, 0};
  std::vector<ur_exp_kernel_arg_properties_t> args = {pointer_arg(0, in), pointer_arg(1, out)};
  ur_kernel_handle_t k = kernel(extra, "wg_memory_sum");
  ASSERT_EQ(T(q).EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, 1, nullptr, &n, &local, 2, args.data(), &props, 0, nullptr,
                                                       nullptr),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t g = 0; g < n / local; ++g) {
    uint32_t first = uint32_t(g * local + 1), last = first + uint32_t(local) - 1;
    ASSERT_EQ(out[g], (first + last) * local / 2) << g;
  }
  // Cooperative launches and clusters are not offered.
  props.pNext = nullptr;
  props.flags = UR_KERNEL_LAUNCH_FLAG_COOPERATIVE;
  EXPECT_EQ(T(q).EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, 1, nullptr, &n, &local, 2, args.data(), &props, 0, nullptr,
                                                       nullptr),
            UR_RESULT_ERROR_INVALID_OPERATION);
  ur_kernel_launch_cluster_property_t cluster{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_CLUSTER_PROPERTY, nullptr, {2, 1, 1}};
  props.flags = UR_KERNEL_LAUNCH_FLAG_OPPORTUNISTIC_QUEUE_SERIALIZE;
  props.pNext = &cluster;
  EXPECT_EQ(T(q).EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, 1, nullptr, &n, &local, 2, args.data(), &props, 0, nullptr,
                                                       nullptr),
            UR_RESULT_ERROR_INVALID_OPERATION);
}

TEST_F(NativeCpuLaunch, RequiredWorkGroupSize) {
  ur_kernel_handle_t k = kernel(extra, "reqd_four");
  const size_t n = 64;
  auto *out = static_cast<uint32_t *>(shared_alloc(n * 4));
  size_t wrong = 8, right = 4;
  EXPECT_EQ(launch(q, k, 1, &n, &wrong, {pointer_arg(0, out)}), UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
  ASSERT_EQ(launch(q, k, 1, &n, &right, {pointer_arg(0, out)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(launch(q, k, 1, &n, nullptr, {pointer_arg(0, out)}), UR_RESULT_SUCCESS); // chosen: the required size
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_EQ(out[n - 1], 4u);
  size_t odd = 10;
  EXPECT_EQ(launch(q, k, 1, &odd, nullptr, {pointer_arg(0, out)}), UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
}

TEST_F(NativeCpuLaunch, RangeErrors) {
  ur_kernel_handle_t k = kernel(common, "increment");
  auto *data = static_cast<uint32_t *>(shared_alloc(4096 * 4));
  std::vector<ur_exp_kernel_arg_properties_t> args = {pointer_arg(0, data)};
  size_t g = 64, zero = 0, l7 = 7, big = 100000;
  size_t g3[3] = {64, 64, 64}, l3[3] = {64, 64, 64};
  EXPECT_EQ(launch(q, k, 0, &g, nullptr, args), UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
  EXPECT_EQ(launch(q, k, 4, g3, nullptr, args), UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
  EXPECT_EQ(launch(q, k, 1, &zero, nullptr, args), UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
  EXPECT_EQ(launch(q, k, 1, &g, &zero, args), UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
  EXPECT_EQ(launch(q, k, 1, &g, &l7, args), UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE); // 64 % 7
  EXPECT_EQ(launch(q, k, 1, &big, &big, args), UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE);
  EXPECT_EQ(launch(q, k, 3, g3, l3, args), UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE); // 64^3 items per group
  EXPECT_EQ(T(q).EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, 1, nullptr, nullptr, nullptr, 1, args.data(), nullptr, 0,
                                                       nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  size_t huge_offset = SIZE_MAX - 10;
  EXPECT_EQ(launch(q, k, 1, &g, nullptr, args, 0, nullptr, nullptr, &huge_offset), UR_RESULT_ERROR_INVALID_VALUE);
  ur_bool_t empty = 0;
  T(q).Queue.pfnGetInfo(q, UR_QUEUE_INFO_EMPTY, sizeof empty, &empty, nullptr);
  EXPECT_TRUE(empty); // none of these was enqueued
}

TEST_F(NativeCpuLaunch, ArgumentErrors) {
  auto *data = static_cast<uint32_t *>(shared_alloc(64 * 4));
  size_t n = 64, local = 16;
  uint32_t v = 1;
  uint64_t wide = 1;
  ur_kernel_handle_t fill = kernel(common, "fill");
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_ERROR_INVALID_KERNEL_ARGS);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, data), value_arg(2, 4, &v)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, data), value_arg(1, 8, &wide)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, data), value_arg(1, 0, &v)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {local_arg(0, 64), value_arg(1, 4, &v)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGS);
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {pointer_arg(0, data), value_arg(1, 4, nullptr)}),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  // A memory-object argument whose handle is no buffer (here: a USM pointer); samplers do not exist.
  ur_exp_kernel_arg_properties_t mem = pointer_arg(0, data);
  mem.type = UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ;
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {mem, value_arg(1, 4, &v)}), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  ur_exp_kernel_arg_properties_t sampler = pointer_arg(0, data);
  sampler.type = UR_EXP_KERNEL_ARG_TYPE_SAMPLER;
  EXPECT_EQ(launch(q, fill, 1, &n, nullptr, {sampler, value_arg(1, 4, &v)}), UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ur_kernel_handle_t sum = kernel(common, "local_sum");
  EXPECT_EQ(launch(q, sum, 1, &n, &local, {pointer_arg(0, data), pointer_arg(1, data), pointer_arg(2, data)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGS);
  uint64_t too_much = 0;
  T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_LOCAL_MEM_SIZE, sizeof too_much, &too_much, nullptr);
  EXPECT_EQ(launch(q, sum, 1, &n, &local, {pointer_arg(0, data), pointer_arg(1, data), local_arg(2, too_much + 1)}),
            UR_RESULT_ERROR_OUT_OF_RESOURCES);
  // A kernel of another context cannot run on this queue.
  ur_context_handle_t other = nullptr;
  ASSERT_EQ(ddi().Context.pfnCreate(1, &device, nullptr, &other), UR_RESULT_SUCCESS);
  ur_queue_handle_t oq = nullptr;
  ASSERT_EQ(T(other).Queue.pfnCreate(other, device, nullptr, &oq), UR_RESULT_SUCCESS);
  EXPECT_EQ(launch(oq, fill, 1, &n, nullptr, {pointer_arg(0, data), value_arg(1, 4, &v)}),
            UR_RESULT_ERROR_INVALID_KERNEL);
  T(oq).Queue.pfnRelease(oq);
  T(other).Context.pfnRelease(other);
  int bogus;
  EXPECT_EQ(launch(q, reinterpret_cast<ur_kernel_handle_t>(&bogus), 1, &n, nullptr, {}),
            UR_RESULT_ERROR_INVALID_KERNEL);
}

TEST_F(NativeCpuLaunch, KernelFailureStopsTheLaunch) {
  const size_t n = 1 << 16;
  auto *out = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(out, out + n, 0u);
  uint32_t bad = 5;
  ur_event_handle_t ev = nullptr;
  size_t local = 64;
  ASSERT_EQ(
      launch(q, kernel(extra, "fail_at"), 1, &n, &local, {pointer_arg(0, out), value_arg(1, 4, &bad)}, 0, nullptr, &ev),
      UR_RESULT_SUCCESS);
  EXPECT_EQ(T(ev).Event.pfnWait(1, &ev), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  ur_event_status_t s{};
  T(ev).Event.pfnGetInfo(ev, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
  EXPECT_EQ(s, UR_EVENT_STATUS_ERROR);
  EXPECT_EQ(out[bad], 0u);
  T(ev).Event.pfnRelease(ev);
}

// A program written in C with its kernel table by hand (no C++ helpers).
TEST_F(NativeCpuLaunch, HandWrittenCKernelTable) {
  ur_kernel_handle_t k = kernel(build_program(c_kernel_path()), "twice");
  const size_t n = 1000, local = 10;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::iota(data, data + n, 0u);
  ASSERT_EQ(launch(q, k, 1, &n, &local, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], 2 * i);
  uint32_t value = 1;
  EXPECT_EQ(launch(q, k, 1, &n, &local, {value_arg(0, 4, &value)}), UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
}

// A large launch spreads over every worker and still covers each item once.
TEST_F(NativeCpuLaunch, LargeLaunchCoversEveryItemOnce) {
  const size_t n = 1 << 22;
  auto *data = static_cast<uint32_t *>(shared_alloc(n * 4));
  std::fill(data, data + n, 0u);
  ur_kernel_handle_t inc = kernel(common, "increment");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(launch(q, inc, 1, &n, nullptr, {pointer_arg(0, data)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], 3u) << i;
}

} // namespace
