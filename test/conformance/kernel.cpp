// SPDX-License-Identifier: Apache-2.0
// Kernels: creation, info, group and sub-group info, reference counting, exec info,
// suggested local sizes, the parameter rules.
#include <cstring>

#include "conformance.hpp"

namespace {

using conf::ProgramTest;
using conf::ProgramTestWith;
using Query = const urinfo::InfoQuery *;

struct KernelSignature {
  const char *name;
  uint32_t num_args;
};
// test/kernels/README.md
const KernelSignature kKernels[] = {{"empty", 0}, {"fill", 2},      {"increment", 1}, {"vector_add", 3},
                                    {"saxpy", 3}, {"local_sum", 3}, {"fill_2d", 2}};

// A fixture holding one kernel (saxpy: a value and two pointers).
template <class Param> class KernelFixture : public ProgramTestWith<Param> {
protected:
  ur_kernel_handle_t kernel = nullptr;
  void SetUp() override {
    CONF_BASE_SETUP(ProgramTestWith<Param>);
    ASSERT_SUCCESS(urKernelCreate(this->program, "saxpy", &kernel));
  }
  void TearDown() override {
    if (kernel) {
      EXPECT_SUCCESS(urKernelRelease(kernel));
    }
    ProgramTestWith<Param>::TearDown();
  }
};

// ---- every kernel, group and sub-group query -----------------------------------------------

using urKernelGetInfoTest = KernelFixture<Query>;

TEST_P(urKernelGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_kernel_handle_t k = kernel;
  conf::check_info_query(q,
                         [k](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urKernelGetInfo(k, static_cast<ur_kernel_info_t>(id), size, value, ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urKernelGetInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_kernel_info_t")), conf::QueryNamer);

using urKernelGetGroupInfoTest = KernelFixture<Query>;

TEST_P(urKernelGetGroupInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_kernel_handle_t k = kernel;
  ur_device_handle_t d = device();
  conf::check_info_query(q,
                         [k, d](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urKernelGetGroupInfo(k, d, static_cast<ur_kernel_group_info_t>(id), size, value, ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urKernelGetGroupInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_kernel_group_info_t")), conf::QueryNamer);

using urKernelGetSubGroupInfoTest = KernelFixture<Query>;

TEST_P(urKernelGetSubGroupInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_kernel_handle_t k = kernel;
  ur_device_handle_t d = device();
  conf::check_info_query(q,
                         [k, d](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urKernelGetSubGroupInfo(k, d, static_cast<ur_kernel_sub_group_info_t>(id), size,
                                                          value, ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urKernelGetSubGroupInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_kernel_sub_group_info_t")),
                                   conf::QueryNamer);

// ---- behaviour ------------------------------------------------------------------------------------

using urKernelTest = ProgramTest;

TEST_P(urKernelTest, EveryTestKernelWithItsArgumentCount) {
  for (const KernelSignature &sig : kKernels) {
    SCOPED_TRACE(sig.name);
    ur_kernel_handle_t k = nullptr;
    ASSERT_SUCCESS(urKernelCreate(program, sig.name, &k));
    uint32_t n = 99;
    EXPECT_SUCCESS(urKernelGetInfo(k, UR_KERNEL_INFO_NUM_ARGS, sizeof n, &n, nullptr));
    EXPECT_EQ(sig.num_args, n);
    size_t size = 0;
    ASSERT_SUCCESS(urKernelGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, 0, nullptr, &size));
    std::string name(size, '\0');
    ASSERT_SUCCESS(urKernelGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, size, &name[0], nullptr));
    EXPECT_STREQ(sig.name, name.c_str());
    EXPECT_SUCCESS(urKernelRelease(k));
  }
}

TEST_P(urKernelTest, ContextAndProgram) {
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  ur_context_handle_t c = nullptr;
  ur_program_handle_t p = nullptr;
  EXPECT_SUCCESS(urKernelGetInfo(k, UR_KERNEL_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_SUCCESS(urKernelGetInfo(k, UR_KERNEL_INFO_PROGRAM, sizeof p, &p, nullptr));
  EXPECT_EQ(context, c);
  EXPECT_EQ(program, p);
  EXPECT_SUCCESS(urKernelRelease(k));
}

TEST_P(urKernelTest, UnknownNameIsRefused) {
  ur_kernel_handle_t k = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_NAME, urKernelCreate(program, "no_such_kernel", &k));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_NAME, urKernelCreate(program, "", &k));
  // A prefix of a real name is no name either.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_NAME, urKernelCreate(program, "vector_", &k));
}

TEST_P(urKernelTest, TwoKernelsOfOneName) {
  ur_kernel_handle_t a = make_kernel("increment"), b = make_kernel("increment");
  ASSERT_NE(nullptr, a);
  ASSERT_NE(nullptr, b);
  EXPECT_NE(a, b) << "each urKernelCreate makes a new kernel object";
  EXPECT_SUCCESS(urKernelRelease(a));
  EXPECT_SUCCESS(urKernelRelease(b));
}

TEST_P(urKernelTest, RetainRelease) {
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  EXPECT_EQ(1u, conf::reference_count(k));
  ASSERT_SUCCESS(urKernelRetain(k));
  EXPECT_EQ(2u, conf::reference_count(k));
  ASSERT_SUCCESS(urKernelRelease(k));
  EXPECT_EQ(1u, conf::reference_count(k));
  EXPECT_SUCCESS(urKernelRelease(k));
}

TEST_P(urKernelTest, WorkGroupSizeWithinDeviceLimit) {
  ur_kernel_handle_t k = make_kernel("local_sum");
  ASSERT_NE(nullptr, k);
  size_t kernel_max = 0, device_max = 0, multiple = 0;
  ASSERT_SUCCESS(
      urKernelGetGroupInfo(k, device(), UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, sizeof kernel_max, &kernel_max, nullptr));
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, device_max));
  EXPECT_GE(kernel_max, 1u);
  EXPECT_LE(kernel_max, device_max);
  ASSERT_SUCCESS(urKernelGetGroupInfo(k, device(), UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                      sizeof multiple, &multiple, nullptr));
  EXPECT_GE(multiple, 1u);
  size_t compile[3] = {9, 9, 9};
  ASSERT_SUCCESS(urKernelGetGroupInfo(k, device(), UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE, sizeof compile,
                                      compile, nullptr));
  EXPECT_EQ(0u, compile[0] + compile[1] + compile[2]) << "the test kernels ask for no particular group size";
  EXPECT_SUCCESS(urKernelRelease(k));
}

TEST_P(urKernelTest, SuggestedLocalWorkSize) {
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  const size_t offset[3] = {0, 0, 0}, global[3] = {1024, 1, 1};
  size_t local[3] = {0, 0, 0};
  ur_result_t r = urKernelGetSuggestedLocalWorkSize(k, queue, 1, offset, global, local);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    urKernelRelease(k);
    GTEST_SKIP() << "urKernelGetSuggestedLocalWorkSize unsupported";
  }
  ASSERT_SUCCESS(r);
  EXPECT_GE(local[0], 1u);
  EXPECT_EQ(0u, global[0] % local[0]) << "a suggestion must divide the global size";
  EXPECT_SUCCESS(urKernelRelease(k));
}

TEST_P(urKernelTest, SuggestedLocalWorkSizeRefusesAnEmptyDimensionAsTheLaunchDoes) {
  // A global size of 0 in any dimension: the suggestion gives the code the launch gives
  // (INVALID_WORK_DIMENSION, UR's rule for urEnqueueKernelLaunchWithArgsExp) and writes
  // nothing (review 26: SUCCESS with 1 on OpenCL, INVALID_GLOBAL_WIDTH_DIMENSION on Level Zero).
  ur_kernel_handle_t k = make_kernel("empty");
  ASSERT_NE(nullptr, k);
  const size_t offset[3] = {0, 0, 0};
  for (uint32_t dims = 1; dims <= 3; ++dims) {
    for (uint32_t empty = 0; empty < dims; ++empty) {
      size_t global[3] = {8, 4, 2};
      global[empty] = 0;
      size_t local[3] = {77, 77, 77};
      ur_result_t suggested = urKernelGetSuggestedLocalWorkSize(k, queue, dims, offset, global, local);
      if (suggested == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
        urKernelRelease(k);
        GTEST_SKIP() << "urKernelGetSuggestedLocalWorkSize unsupported";
      }
      EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, suggested)
          << dims << " dimensions, " << empty << " empty";
      EXPECT_TRUE(local[0] == 77 && local[1] == 77 && local[2] == 77) << "a refused suggestion writes nothing";
      ur_event_handle_t e = nullptr;
      ur_result_t launched = urEnqueueKernelLaunchWithArgsExp(queue, k, dims, nullptr, global, nullptr, 0, nullptr,
                                                              nullptr, 0, nullptr, &e);
      EXPECT_EQ_RESULT(suggested, launched) << dims << " dimensions, " << empty << " empty: the launch";
      EXPECT_EQ(nullptr, e);
      if (e) urEventRelease(e);
    }
  }
  // The same calls with every dimension non-empty are answered.
  const size_t global[3] = {8, 4, 2};
  size_t local[3] = {0, 0, 0};
  EXPECT_SUCCESS(urKernelGetSuggestedLocalWorkSize(k, queue, 3, offset, global, local));
  EXPECT_SUCCESS(urKernelRelease(k));
}

TEST_P(urKernelTest, ExecInfoIndirectAccess) {
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  ur_bool_t yes = 1;
  ur_result_t r = urKernelSetExecInfo(k, UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS, sizeof yes, nullptr, &yes);
  ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  EXPECT_SUCCESS(urKernelRelease(k));
}

TEST_P(urKernelTest, NativeHandle) {
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  ur_native_handle_t native = 0;
  ASSERT_RESULT_IN(urKernelGetNativeHandle(k, &native), UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  EXPECT_SUCCESS(urKernelRelease(k));
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urKernelTest, CreateRules) {
  CONF_REQUIRE_VALIDATION();
  ur_kernel_handle_t k = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urKernelCreate(nullptr, "fill", &k));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urKernelCreate(program, nullptr, &k));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urKernelCreate(program, "fill", nullptr));
}

TEST_P(urKernelTest, InfoRules) {
  CONF_REQUIRE_VALIDATION();
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  uint32_t n = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urKernelGetInfo(k, UR_KERNEL_INFO_FORCE_UINT32, sizeof n, &n, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urKernelGetInfo(k, UR_KERNEL_INFO_NUM_ARGS, 0, &n, nullptr));
  size_t s = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urKernelGetGroupInfo(k, device(), UR_KERNEL_GROUP_INFO_FORCE_UINT32, sizeof s, &s, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urKernelGetGroupInfo(k, nullptr, UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, sizeof s, &s, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urKernelSetExecInfo(k, UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS, 1, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urKernelRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urKernelRelease(nullptr));
  EXPECT_SUCCESS(urKernelRelease(k));
}

CONF_INSTANTIATE_DEVICE_SUITE(urKernelTest);

} // namespace
