// SPDX-License-Identifier: Apache-2.0
// Programs: creation from the backend's test-kernel file, build, info and build info,
// binaries, function pointers, reference counting, bad binaries, the parameter rules.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "conformance.hpp"

namespace {

using conf::ContextTest;
using conf::ProgramTest;
using conf::ProgramTestWith;
using Query = const urinfo::InfoQuery *;

const char *const kKernelNames[] = {"empty", "fill", "increment", "vector_add", "saxpy", "local_sum", "fill_2d"};

// ---- every program and build-info query ------------------------------------------------------

using urProgramGetInfoTest = ProgramTestWith<Query>;

TEST_P(urProgramGetInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_program_handle_t p = program;
  if (q.id == UR_PROGRAM_INFO_BINARIES) {
    // The caller owns the buffers this query fills (urProgramTest.Binaries); only its
    // size is generic: one pointer per device.
    size_t size = 0;
    ASSERT_SUCCESS(urProgramGetInfo(p, UR_PROGRAM_INFO_BINARIES, 0, nullptr, &size));
    EXPECT_EQ(sizeof(unsigned char *), size);
    return;
  }
  conf::InfoCheckOptions options;
  // The IL is bytes, not a string: empty for a program made from a binary.
  options.raw_bytes = q.id == UR_PROGRAM_INFO_IL;
  conf::check_info_query(
      q,
      [p](uint32_t id, size_t size, void *value, size_t *ret) {
        return urProgramGetInfo(p, static_cast<ur_program_info_t>(id), size, value, ret);
      },
      options);
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urProgramGetInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_program_info_t")), conf::QueryNamer);

using urProgramGetBuildInfoTest = ProgramTestWith<Query>;

TEST_P(urProgramGetBuildInfoTest, Query) {
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  ur_program_handle_t p = program;
  ur_device_handle_t d = device();
  conf::check_info_query(q,
                         [p, d](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urProgramGetBuildInfo(p, d, static_cast<ur_program_build_info_t>(id), size, value,
                                                        ret);
                         },
                         {});
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urProgramGetBuildInfoTest, Query,
                                   ::testing::ValuesIn(conf::queries_of("ur_program_build_info_t")), conf::QueryNamer);

// ---- a built program -----------------------------------------------------------------------------

using urProgramTest = ProgramTest;

TEST_P(urProgramTest, InfoDescribesTheProgram) {
  ur_context_handle_t c = nullptr;
  uint32_t n = 0;
  ur_device_handle_t d = nullptr;
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_CONTEXT, sizeof c, &c, nullptr));
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_NUM_DEVICES, sizeof n, &n, nullptr));
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_DEVICES, sizeof d, &d, nullptr));
  EXPECT_EQ(context, c);
  EXPECT_EQ(1u, n);
  EXPECT_EQ(device(), d);
}

TEST_P(urProgramTest, KernelNames) {
  size_t count = 0;
  ur_result_t r = urProgramGetInfo(program, UR_PROGRAM_INFO_NUM_KERNELS, sizeof count, &count, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) GTEST_SKIP() << "UR_PROGRAM_INFO_NUM_KERNELS is optional";
  ASSERT_SUCCESS(r);
  EXPECT_EQ(std::size(kKernelNames), count);
  size_t size = 0;
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_KERNEL_NAMES, 0, nullptr, &size));
  std::string names(size, '\0');
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_KERNEL_NAMES, size, &names[0], nullptr));
  names.resize(size - 1);
  std::vector<std::string> listed;
  std::stringstream ss(names);
  for (std::string item; std::getline(ss, item, ';');) listed.push_back(item);
  for (const char *k : kKernelNames)
    EXPECT_NE(listed.end(), std::find(listed.begin(), listed.end(), k)) << k << " missing from '" << names << "'";
}

TEST_P(urProgramTest, BuildStatusAndType) {
  ur_program_build_status_t status = UR_PROGRAM_BUILD_STATUS_NONE;
  ASSERT_SUCCESS(
      urProgramGetBuildInfo(program, device(), UR_PROGRAM_BUILD_INFO_STATUS, sizeof status, &status, nullptr));
  EXPECT_EQ(UR_PROGRAM_BUILD_STATUS_SUCCESS, status);
  ur_program_binary_type_t type = UR_PROGRAM_BINARY_TYPE_NONE;
  ASSERT_SUCCESS(
      urProgramGetBuildInfo(program, device(), UR_PROGRAM_BUILD_INFO_BINARY_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_PROGRAM_BINARY_TYPE_EXECUTABLE, type);
  size_t log_size = 0;
  ASSERT_SUCCESS(urProgramGetBuildInfo(program, device(), UR_PROGRAM_BUILD_INFO_LOG, 0, nullptr, &log_size));
  EXPECT_GE(log_size, 1u) << "the log is a string, at least its terminator";
}

TEST_P(urProgramTest, Binaries) {
  size_t size = 0;
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_BINARY_SIZES, sizeof size, &size, nullptr));
  ASSERT_GT(size, 0u);
  std::vector<unsigned char> binary(size, 0);
  unsigned char *ptrs[1] = {binary.data()};
  ASSERT_SUCCESS(urProgramGetInfo(program, UR_PROGRAM_INFO_BINARIES, sizeof ptrs, ptrs, nullptr));
  if (backend() == UR_BACKEND_NATIVE_CPU) {
    // What came in is what goes out: the shared object itself.
    std::ifstream in(program_path, std::ios::binary);
    std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(file, binary);
  }
  // The binary makes a working program again.
  ur_device_handle_t d = device();
  const uint8_t *data = binary.data();
  ur_program_handle_t again = nullptr;
  ASSERT_SUCCESS(urProgramCreateWithBinary(context, 1, &d, &size, &data, nullptr, &again));
  ASSERT_SUCCESS(urProgramBuild(context, again, nullptr));
  ur_kernel_handle_t k = nullptr;
  EXPECT_SUCCESS(urKernelCreate(again, "fill", &k));
  if (k) {
    EXPECT_SUCCESS(urKernelRelease(k));
  }
  EXPECT_SUCCESS(urProgramRelease(again));
}

TEST_P(urProgramTest, RetainRelease) {
  const uint32_t before = conf::reference_count(program);
  ASSERT_SUCCESS(urProgramRetain(program));
  EXPECT_EQ(before + 1, conf::reference_count(program));
  ASSERT_SUCCESS(urProgramRelease(program));
  EXPECT_EQ(before, conf::reference_count(program));
}

TEST_P(urProgramTest, FunctionPointer) {
  void *fn = nullptr;
  ur_result_t r = urProgramGetFunctionPointer(device(), program, "fill", &fn);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urProgramGetFunctionPointer unsupported";
  ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_FUNCTION_ADDRESS_NOT_AVAILABLE);
  if (r == UR_RESULT_SUCCESS) {
    EXPECT_NE(nullptr, fn);
  }
  void *none = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_KERNEL_NAME,
                   urProgramGetFunctionPointer(device(), program, "no_such_function", &none));
}

TEST_P(urProgramTest, NativeHandle) {
  ur_native_handle_t native = 0;
  ASSERT_RESULT_IN(urProgramGetNativeHandle(program, &native), UR_RESULT_SUCCESS, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST_P(urProgramTest, KernelKeepsProgramAlive) {
  ur_kernel_handle_t k = make_kernel("fill");
  ASSERT_NE(nullptr, k);
  ur_program_handle_t from_kernel = nullptr;
  ASSERT_SUCCESS(urKernelGetInfo(k, UR_KERNEL_INFO_PROGRAM, sizeof from_kernel, &from_kernel, nullptr));
  EXPECT_EQ(program, from_kernel);
  EXPECT_SUCCESS(urKernelRelease(k));
}

CONF_INSTANTIATE_DEVICE_SUITE(urProgramTest);

// ---- creation and build, step by step ---------------------------------------------------------------

class urProgramCreateTest : public ContextTest {
public:
  std::string path;
  bool as_il = false;
  std::vector<uint8_t> bytes;

  void SetUp() override {
    CONF_BASE_SETUP(ContextTest);
    std::string why;
    if (!urinfo::test_program_file(conf::kernel_dir(), found(), path, as_il, why)) GTEST_SKIP() << why;
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    ASSERT_FALSE(bytes.empty()) << path;
  }
  ur_result_t create(const std::vector<uint8_t> &data, ur_program_handle_t *p) {
    if (as_il) return urProgramCreateWithIL(context, data.data(), data.size(), nullptr, p);
    ur_device_handle_t d = device();
    size_t length = data.size();
    const uint8_t *ptr = data.data();
    return urProgramCreateWithBinary(context, 1, &d, &length, &ptr, nullptr, p);
  }
};

TEST_P(urProgramCreateTest, CreateThenBuild) {
  ur_program_handle_t p = nullptr;
  ASSERT_SUCCESS(create(bytes, &p));
  ASSERT_SUCCESS(urProgramBuild(context, p, nullptr));
  ur_kernel_handle_t k = nullptr;
  EXPECT_SUCCESS(urKernelCreate(p, "vector_add", &k));
  if (k) {
    EXPECT_SUCCESS(urKernelRelease(k));
  }
  EXPECT_SUCCESS(urProgramRelease(p));
}

TEST_P(urProgramCreateTest, BuildWithOptions) {
  ur_program_handle_t p = nullptr;
  ASSERT_SUCCESS(create(bytes, &p));
  ASSERT_SUCCESS(urProgramBuild(context, p, ""));
  size_t size = 0;
  EXPECT_SUCCESS(urProgramGetBuildInfo(p, device(), UR_PROGRAM_BUILD_INFO_OPTIONS, 0, nullptr, &size));
  EXPECT_SUCCESS(urProgramRelease(p));
}

TEST_P(urProgramCreateTest, KernelBeforeBuildIsRefused) {
  ur_program_handle_t p = nullptr;
  ASSERT_SUCCESS(create(bytes, &p));
  ur_kernel_handle_t k = nullptr;
  ur_result_t r = urKernelCreate(p, "fill", &k);
  // A binary may count as built already; IL never does.
  if (as_il) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE, r);
  } else {
    ASSERT_RESULT_IN(r, UR_RESULT_SUCCESS, UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE);
  }
  if (k) {
    EXPECT_SUCCESS(urKernelRelease(k));
  }
  EXPECT_SUCCESS(urProgramRelease(p));
}

// Bytes that are no program: refused when created (INVALID_NATIVE_BINARY for a binary,
// INVALID_BINARY for IL), or, by backends that only look when building, by the build
// (PROGRAM_BUILD_FAILURE). Either way no kernel comes out of it.
void expect_refused(urProgramCreateTest &t, ur_result_t created, ur_program_handle_t p) {
  if (created == UR_RESULT_SUCCESS) {
    ur_result_t built = urProgramBuild(t.context, p, nullptr);
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE, built);
    // A failed build says why in its log.
    size_t log_size = 0;
    EXPECT_SUCCESS(urProgramGetBuildInfo(p, t.device(), UR_PROGRAM_BUILD_INFO_LOG, 0, nullptr, &log_size));
    EXPECT_GT(log_size, 1u) << "the build log of a failed build is empty";
    ur_program_build_status_t status = UR_PROGRAM_BUILD_STATUS_SUCCESS;
    EXPECT_SUCCESS(urProgramGetBuildInfo(p, t.device(), UR_PROGRAM_BUILD_INFO_STATUS, sizeof status, &status, nullptr));
    EXPECT_EQ(UR_PROGRAM_BUILD_STATUS_ERROR, status);
    EXPECT_SUCCESS(urProgramRelease(p));
  } else {
    EXPECT_EQ_RESULT(t.as_il ? UR_RESULT_ERROR_INVALID_BINARY : UR_RESULT_ERROR_INVALID_NATIVE_BINARY, created);
  }
}

TEST_P(urProgramCreateTest, GarbageIsRefused) {
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  ur_program_handle_t p = nullptr;
  ur_result_t r = create(garbage, &p);
  expect_refused(*this, r, p);
}

TEST_P(urProgramCreateTest, TruncatedIsRefused) {
  // The first 64 bytes: a valid header (ELF, SPIR-V, PTX text) and nothing behind it.
  std::vector<uint8_t> head(bytes.begin(), bytes.begin() + std::min<size_t>(64, bytes.size() / 2));
  ur_program_handle_t p = nullptr;
  ur_result_t r = create(head, &p);
  expect_refused(*this, r, p);
}

TEST_P(urProgramCreateTest, ManyProgramsFromOneBinary) {
  std::vector<ur_program_handle_t> programs(4, nullptr);
  for (auto &p : programs) {
    ASSERT_SUCCESS(create(bytes, &p));
    ASSERT_SUCCESS(urProgramBuild(context, p, nullptr));
  }
  for (auto p : programs) EXPECT_SUCCESS(urProgramRelease(p));
}

// ---- parameter rules (validation layer) ----------------------------------------------

TEST_P(urProgramCreateTest, CreateRules) {
  CONF_REQUIRE_VALIDATION();
  ur_device_handle_t d = device();
  size_t length = bytes.size();
  const uint8_t *ptr = bytes.data();
  ur_program_handle_t p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urProgramCreateWithBinary(context, 0, &d, &length, &ptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urProgramCreateWithBinary(context, 1, &d, nullptr, &ptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urProgramCreateWithBinary(context, 1, &d, &length, nullptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urProgramCreateWithBinary(nullptr, 1, &d, &length, &ptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urProgramCreateWithIL(context, bytes.data(), 0, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urProgramCreateWithIL(context, nullptr, 16, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urProgramBuild(context, nullptr, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urProgramCreateTest);

TEST_P(urProgramTest, InfoRules) {
  CONF_REQUIRE_VALIDATION();
  uint32_t n = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urProgramGetInfo(program, UR_PROGRAM_INFO_FORCE_UINT32, sizeof n, &n, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urProgramGetInfo(program, UR_PROGRAM_INFO_NUM_DEVICES, 0, &n, nullptr));
  ur_program_build_status_t s;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urProgramGetBuildInfo(program, device(), UR_PROGRAM_BUILD_INFO_FORCE_UINT32, sizeof s, &s, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urProgramGetBuildInfo(program, nullptr, UR_PROGRAM_BUILD_INFO_STATUS, sizeof s, &s, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urProgramRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urProgramRelease(nullptr));
}

} // namespace
