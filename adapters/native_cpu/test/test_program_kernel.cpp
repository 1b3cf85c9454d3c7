// SPDX-License-Identifier: Apache-2.0
// Programs from native CPU binaries, and kernels.
#include <cstring>
#include <set>
#include <sstream>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuProgram : public NativeCpu {
protected:
  ur_result_t create(const std::vector<uint8_t> &bin, ur_program_handle_t *p) {
    size_t len = bin.size();
    const uint8_t *data = bin.data();
    ur_result_t r = T(context).Program.pfnCreateWithBinary(context, 1, &device, &len, &data, nullptr, p);
    if (r == UR_RESULT_SUCCESS) programs.push_back(*p);
    return r;
  }
  std::string info_string(ur_program_handle_t p, ur_program_info_t info) {
    size_t size = 0;
    EXPECT_EQ(T(p).Program.pfnGetInfo(p, info, 0, nullptr, &size), UR_RESULT_SUCCESS);
    std::string s(size, '\0');
    EXPECT_EQ(T(p).Program.pfnGetInfo(p, info, size, s.data(), nullptr), UR_RESULT_SUCCESS);
    return s.c_str();
  }
  std::string build_string(ur_program_handle_t p, ur_program_build_info_t info) {
    size_t size = 0;
    EXPECT_EQ(T(p).Program.pfnGetBuildInfo(p, device, info, 0, nullptr, &size), UR_RESULT_SUCCESS);
    std::string s(size, '\0');
    EXPECT_EQ(T(p).Program.pfnGetBuildInfo(p, device, info, size, s.data(), nullptr), UR_RESULT_SUCCESS);
    return s.c_str();
  }
  template <class V> V build_value(ur_program_handle_t p, ur_program_build_info_t info) {
    V v{};
    EXPECT_EQ(T(p).Program.pfnGetBuildInfo(p, device, info, sizeof v, &v, nullptr), UR_RESULT_SUCCESS);
    return v;
  }
};

std::set<std::string> split(const std::string &s) {
  std::set<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ';')) out.insert(item);
  return out;
}

TEST_F(NativeCpuProgram, CreateBuildAndListKernels) {
  std::vector<uint8_t> bin = read_file(test_kernels_path());
  ur_program_handle_t p = nullptr;
  ASSERT_EQ(create(bin, &p), UR_RESULT_SUCCESS);
  EXPECT_EQ(build_value<ur_program_build_status_t>(p, UR_PROGRAM_BUILD_INFO_STATUS), UR_PROGRAM_BUILD_STATUS_NONE);
  EXPECT_EQ(build_value<ur_program_binary_type_t>(p, UR_PROGRAM_BUILD_INFO_BINARY_TYPE),
            UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  size_t n = 0;
  EXPECT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_NUM_KERNELS, sizeof n, &n, nullptr),
            UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE);
  ur_kernel_handle_t k = nullptr;
  EXPECT_EQ(T(p).Kernel.pfnCreate(p, "fill", &k), UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE);

  ASSERT_EQ(T(p).Program.pfnBuild(context, p, "-O2"), UR_RESULT_SUCCESS);
  EXPECT_EQ(build_value<ur_program_build_status_t>(p, UR_PROGRAM_BUILD_INFO_STATUS), UR_PROGRAM_BUILD_STATUS_SUCCESS);
  EXPECT_EQ(build_value<ur_program_binary_type_t>(p, UR_PROGRAM_BUILD_INFO_BINARY_TYPE),
            UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
  EXPECT_EQ(build_string(p, UR_PROGRAM_BUILD_INFO_OPTIONS), "-O2");
  EXPECT_NE(build_string(p, UR_PROGRAM_BUILD_INFO_LOG).find("7 kernel(s)"), std::string::npos);
  ASSERT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_NUM_KERNELS, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 7u);
  EXPECT_EQ(split(info_string(p, UR_PROGRAM_INFO_KERNEL_NAMES)),
            (std::set<std::string>{"empty", "fill", "increment", "vector_add", "saxpy", "local_sum", "fill_2d"}));

  uint32_t ndev = 0;
  ASSERT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_NUM_DEVICES, sizeof ndev, &ndev, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(ndev, 1u);
  ur_context_handle_t c = nullptr;
  ASSERT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_CONTEXT, sizeof c, &c, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(c, context);
  size_t bin_size = 0;
  ASSERT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_BINARY_SIZES, sizeof bin_size, &bin_size, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(bin_size, bin.size());
  std::vector<uint8_t> back(bin_size);
  unsigned char *dst = back.data();
  ASSERT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_BINARIES, sizeof dst, &dst, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(back, bin);
  size_t il = 1;
  ASSERT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_IL, 0, nullptr, &il), UR_RESULT_SUCCESS);
  EXPECT_EQ(il, 0u);
  EXPECT_EQ(T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_FORCE_UINT32, 0, nullptr, &il),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  ASSERT_EQ(T(p).Program.pfnRetain(p), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  T(p).Program.pfnGetInfo(p, UR_PROGRAM_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr);
  EXPECT_EQ(refs, 2u);
  ASSERT_EQ(T(p).Program.pfnRelease(p), UR_RESULT_SUCCESS);
}

TEST_F(NativeCpuProgram, RefusesBinariesThatAreNotNativeCpuPrograms) {
  ur_program_handle_t p = nullptr;
  EXPECT_EQ(create({1, 2, 3, 4, 5, 6, 7, 8}, &p), UR_RESULT_ERROR_INVALID_NATIVE_BINARY);
  std::vector<uint8_t> relocatable = read_file(test_kernels_path());
  relocatable[16] = 1; // e_type = ET_REL
  EXPECT_EQ(create(relocatable, &p), UR_RESULT_ERROR_INVALID_NATIVE_BINARY);
  std::vector<uint8_t> truncated = read_file(test_kernels_path());
  truncated.resize(200);
  EXPECT_EQ(create(truncated, &p), UR_RESULT_ERROR_INVALID_NATIVE_BINARY);
  // A real shared object without a kernel table.
  std::vector<uint8_t> adapter = read_file(NCPU_ADAPTER_PATH);
  EXPECT_EQ(create(adapter, &p), UR_RESULT_ERROR_INVALID_NATIVE_BINARY);
  EXPECT_EQ(p, nullptr);
  std::vector<uint8_t> bin = read_file(test_kernels_path());
  size_t len = bin.size(), zero = 0;
  const uint8_t *data = bin.data();
  EXPECT_EQ(T(context).Program.pfnCreateWithBinary(context, 0, &device, &len, &data, nullptr, &p),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(context).Program.pfnCreateWithBinary(context, 1, &device, &zero, &data, nullptr, &p),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(T(context).Program.pfnCreateWithBinary(context, 1, &device, &len, nullptr, nullptr, &p),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  ur_program_properties_t props{UR_STRUCTURE_TYPE_PROGRAM_PROPERTIES, nullptr, 2, nullptr};
  EXPECT_EQ(T(context).Program.pfnCreateWithBinary(context, 1, &device, &len, &data, &props, &p),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(p, nullptr);
}

// Each program is its own copy of the module: globals are not shared, and a
// released program's memfd name can be reused safely.
TEST_F(NativeCpuProgram, EachProgramLoadsItsOwnCopy) {
  for (int round = 0; round < 3; ++round) {
    ur_program_handle_t a = build_program(extra_kernels_path());
    ur_program_handle_t b = build_program(extra_kernels_path());
    uint32_t *ca = nullptr, *cb = nullptr;
    size_t size = 0;
    ASSERT_EQ(
        T(a).Program.pfnGetGlobalVariablePointer(device, a, "ordo_test_counter", &size, reinterpret_cast<void **>(&ca)),
        UR_RESULT_SUCCESS);
    EXPECT_EQ(size, sizeof(uint32_t));
    ASSERT_EQ(T(b).Program.pfnGetGlobalVariablePointer(device, b, "ordo_test_counter", nullptr,
                                                       reinterpret_cast<void **>(&cb)),
              UR_RESULT_SUCCESS);
    EXPECT_NE(ca, cb);
    ur_queue_handle_t q = make_queue();
    ur_kernel_handle_t ka = kernel(a, "bump_counter");
    size_t one = 1;
    ASSERT_EQ(launch(q, ka, 1, &one, nullptr, {}), UR_RESULT_SUCCESS);
    ASSERT_EQ(launch(q, ka, 1, &one, nullptr, {}), UR_RESULT_SUCCESS);
    ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    EXPECT_EQ(*ca, 2u);
    EXPECT_EQ(*cb, 0u);
    // Release everything of this round before the next one loads again.
    for (auto k : kernels) T(k).Kernel.pfnRelease(k);
    kernels.clear();
    for (auto pr : programs) T(pr).Program.pfnRelease(pr);
    programs.clear();
  }
}

TEST_F(NativeCpuProgram, FunctionAndGlobalPointers) {
  ur_program_handle_t p = build_program(test_kernels_path());
  void *fn = nullptr;
  ASSERT_EQ(T(p).Program.pfnGetFunctionPointer(device, p, "fill", &fn), UR_RESULT_SUCCESS);
  EXPECT_NE(fn, nullptr);
  ASSERT_EQ(T(p).Program.pfnGetFunctionPointer(device, p, "ordo_nc_kernel_fill", &fn), UR_RESULT_SUCCESS);
  EXPECT_NE(fn, nullptr);
  EXPECT_EQ(T(p).Program.pfnGetFunctionPointer(device, p, "no_such_function", &fn),
            UR_RESULT_ERROR_INVALID_KERNEL_NAME);
  // Symbols of the program's dependencies are not the program's.
  EXPECT_EQ(T(p).Program.pfnGetFunctionPointer(device, p, "malloc", &fn), UR_RESULT_ERROR_INVALID_KERNEL_NAME);
  void *var = nullptr;
  EXPECT_EQ(T(p).Program.pfnGetGlobalVariablePointer(device, p, "no_such_variable", nullptr, &var),
            UR_RESULT_ERROR_INVALID_VALUE);
}

TEST_F(NativeCpuProgram, CompileAndLink) {
  ur_program_handle_t a = nullptr, b = nullptr;
  ASSERT_EQ(create(read_file(test_kernels_path()), &a), UR_RESULT_SUCCESS);
  ASSERT_EQ(create(read_file(extra_kernels_path()), &b), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(a).Program.pfnCompile(context, a, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(b).Program.pfnCompile(context, b, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(build_value<ur_program_binary_type_t>(a, UR_PROGRAM_BUILD_INFO_BINARY_TYPE),
            UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  ur_program_handle_t inputs[2] = {a, b};
  ur_program_handle_t linked = nullptr;
  ASSERT_EQ(T(context).Program.pfnLink(context, 2, inputs, nullptr, &linked), UR_RESULT_SUCCESS);
  programs.push_back(linked);
  size_t n = 0;
  ASSERT_EQ(T(linked).Program.pfnGetInfo(linked, UR_PROGRAM_INFO_NUM_KERNELS, sizeof n, &n, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(n, 14u);
  std::set<std::string> names = split(info_string(linked, UR_PROGRAM_INFO_KERNEL_NAMES));
  EXPECT_TRUE(names.count("fill") && names.count("record_ids"));
  EXPECT_NE(kernel(linked, "saxpy"), nullptr);
  EXPECT_NE(kernel(linked, "fail_at"), nullptr);
  size_t bin_size = 1;
  ASSERT_EQ(T(linked).Program.pfnGetInfo(linked, UR_PROGRAM_INFO_BINARY_SIZES, sizeof bin_size, &bin_size, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(bin_size, 0u); // two modules: no single binary to give back

  // The same kernels twice cannot be linked.
  ur_program_handle_t twice[2] = {a, a}, failed = nullptr;
  EXPECT_EQ(T(context).Program.pfnLink(context, 2, twice, nullptr, &failed), UR_RESULT_ERROR_PROGRAM_LINK_FAILURE);
  EXPECT_EQ(failed, nullptr);
  EXPECT_EQ(T(context).Program.pfnLink(context, 0, twice, nullptr, &failed), UR_RESULT_ERROR_INVALID_SIZE);
}

class NativeCpuKernel : public NativeCpu {};

TEST_F(NativeCpuKernel, CreateAndQuery) {
  ur_program_handle_t p = build_program(test_kernels_path());
  ur_kernel_handle_t k = kernel(p, "saxpy");
  ASSERT_NE(k, nullptr);
  size_t size = 0;
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, 0, nullptr, &size), UR_RESULT_SUCCESS);
  std::string name(size, '\0');
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, size, name.data(), nullptr), UR_RESULT_SUCCESS);
  EXPECT_STREQ(name.c_str(), "saxpy");
  uint32_t nargs = 0;
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_NUM_ARGS, sizeof nargs, &nargs, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(nargs, 3u);
  ur_program_handle_t kp = nullptr;
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_PROGRAM, sizeof kp, &kp, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(kp, p);
  ur_context_handle_t kc = nullptr;
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_CONTEXT, sizeof kc, &kc, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(kc, context);
  uint32_t regs = 0;
  EXPECT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_NUM_REGS, sizeof regs, &regs, nullptr),
            UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  EXPECT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_FORCE_UINT32, sizeof regs, &regs, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  size_t wg = 0;
  ASSERT_EQ(T(k).Kernel.pfnGetGroupInfo(k, device, UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr),
            UR_RESULT_SUCCESS);
  size_t dev_wg = 0;
  T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof dev_wg, &dev_wg, nullptr);
  EXPECT_EQ(wg, dev_wg);
  size_t compile[3] = {9, 9, 9};
  ASSERT_EQ(T(k).Kernel.pfnGetGroupInfo(k, device, UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE, sizeof compile,
                                        compile, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(compile[0] + compile[1] + compile[2], 0u);
  uint32_t sg = 0;
  ASSERT_EQ(
      T(k).Kernel.pfnGetSubGroupInfo(k, device, UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE, sizeof sg, &sg, nullptr),
      UR_RESULT_SUCCESS);
  EXPECT_EQ(sg, 1u);
  EXPECT_EQ(T(k).Kernel.pfnRetain(k), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(k).Kernel.pfnRelease(k), UR_RESULT_SUCCESS);
  ur_bool_t yes = 1;
  EXPECT_EQ(T(k).Kernel.pfnSetExecInfo(k, UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS, sizeof yes, nullptr, &yes),
            UR_RESULT_SUCCESS);
  ur_kernel_handle_t none = nullptr;
  EXPECT_EQ(T(p).Kernel.pfnCreate(p, "no_such_kernel", &none), UR_RESULT_ERROR_INVALID_KERNEL_NAME);
  EXPECT_EQ(T(p).Kernel.pfnCreate(p, nullptr, &none), UR_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(NativeCpuKernel, RequiredWorkGroupSizeIsReported) {
  ur_kernel_handle_t k = kernel(build_program(extra_kernels_path()), "reqd_four");
  size_t compile[3] = {};
  ASSERT_EQ(T(k).Kernel.pfnGetGroupInfo(k, device, UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE, sizeof compile,
                                        compile, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(compile[0], 4u);
  EXPECT_EQ(compile[1], 1u);
  size_t size = 0;
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_ATTRIBUTES, 0, nullptr, &size), UR_RESULT_SUCCESS);
  std::string attrs(size, '\0');
  T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_ATTRIBUTES, size, attrs.data(), nullptr);
  EXPECT_STREQ(attrs.c_str(), "reqd_work_group_size(4,1,1)");
  ur_queue_handle_t q = make_queue();
  size_t global[1] = {64}, offset[1] = {0}, local[1] = {0};
  ASSERT_EQ(T(k).Kernel.pfnGetSuggestedLocalWorkSize(k, q, 1, offset, global, local), UR_RESULT_SUCCESS);
  EXPECT_EQ(local[0], 4u);
}

// urKernelGetInfo, GetNativeHandle and Release are ur_common/kernel.hpp's over this
// adapter's registry: machine code has no register budget and no spill, the native
// handle is the kernel itself, and a released handle is refused, never read.
TEST_F(NativeCpuKernel, SharedKernelEntryPointsKeepNativeCpuAnswers) {
  ur_program_handle_t p = build_program(test_kernels_path());
  ur_kernel_handle_t k = kernel(p, "fill");
  size_t size = 0;
  EXPECT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_SPILL_MEM_SIZE, 0, nullptr, &size),
            UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  EXPECT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_NUM_REGS, 0, nullptr, &size),
            UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  ASSERT_EQ(T(k).Kernel.pfnGetInfo(k, UR_KERNEL_INFO_ATTRIBUTES, 0, nullptr, &size), UR_RESULT_SUCCESS);
  EXPECT_EQ(size, 1u); // "": no required size
  ur_native_handle_t native = 0;
  ASSERT_EQ(T(k).Kernel.pfnGetNativeHandle(k, &native), UR_RESULT_SUCCESS);
  EXPECT_EQ(native, reinterpret_cast<ur_native_handle_t>(k));
  ur_kernel_handle_t extra = nullptr;
  ASSERT_EQ(T(p).Kernel.pfnCreate(p, "fill", &extra), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(extra).Kernel.pfnRelease(extra), UR_RESULT_SUCCESS);
  uint32_t args = 0;
  EXPECT_EQ(T(k).Kernel.pfnGetInfo(extra, UR_KERNEL_INFO_NUM_ARGS, sizeof args, &args, nullptr),
            UR_RESULT_ERROR_INVALID_KERNEL);
  EXPECT_EQ(T(k).Kernel.pfnRelease(extra), UR_RESULT_ERROR_INVALID_KERNEL);
}

TEST_F(NativeCpuKernel, SuggestedLocalSizeDividesTheGlobalSize) {
  ur_kernel_handle_t k = kernel(build_program(test_kernels_path()), "fill");
  ur_queue_handle_t q = make_queue();
  for (size_t g : {1u, 7u, 64u, 1000u, 1024u, 65536u, 1000003u, 1u << 22}) {
    size_t global[3] = {g, 3, 2}, offset[3] = {}, local[3] = {};
    ASSERT_EQ(T(k).Kernel.pfnGetSuggestedLocalWorkSize(k, q, 3, offset, global, local), UR_RESULT_SUCCESS);
    for (int d = 0; d < 3; ++d) {
      ASSERT_GE(local[d], 1u);
      EXPECT_EQ(global[d] % local[d], 0u) << g << " dim " << d;
    }
    EXPECT_LE(local[0] * local[1] * local[2], 8192u);
  }
  size_t global[1] = {0}, offset[1] = {}, local[1] = {};
  EXPECT_EQ(T(k).Kernel.pfnGetSuggestedLocalWorkSize(k, q, 1, offset, global, local),
            UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
  EXPECT_EQ(T(k).Kernel.pfnGetSuggestedLocalWorkSize(k, q, 4, offset, global, local),
            UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
}

// A binary built for another version of the kernel ABI is refused with INVALID_BINARY
// and a log line saying why, before anything in it is called: the table getter of
// each of these binaries aborts (test/kernels/native_cpu/stale_abi_kernel.c).
TEST_F(NativeCpuProgram, RefusesBinariesOfAnotherKernelAbiVersion) {
  struct LogLines {
    std::mutex mu;
    std::vector<std::string> lines;
  } log;
  auto collect = [](ur_logger_level_t, const char *msg, void *user) {
    auto *l = static_cast<LogLines *>(user);
    std::lock_guard<std::mutex> lock(l->mu);
    l->lines.emplace_back(msg ? msg : "");
  };
  ASSERT_EQ(T(adapter).Adapter.pfnSetLoggerCallback(adapter, collect, &log, UR_LOGGER_LEVEL_WARN), UR_RESULT_SUCCESS);

  const std::string kernels = test_kernels_path();
  const std::string dir = kernels.substr(0, kernels.rfind('/')) + "/stale_abi/";
  const struct {
    const char *file;
    const char *reason;
  } cases[] = {{"no_version.so", "does not export ordo_nc_abi_version"},
               {"newer_version.so", "built for native CPU kernel ABI version"},
               {"wide_version.so", "not a uint32_t"}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.file);
    std::vector<uint8_t> bin = read_file(dir + c.file);
    ASSERT_FALSE(bin.empty()) << dir + c.file << " was not built (test/kernels/native_cpu)";
    {
      std::lock_guard<std::mutex> lock(log.mu);
      log.lines.clear();
    }
    ur_program_handle_t p = nullptr;
    EXPECT_EQ(create(bin, &p), UR_RESULT_ERROR_INVALID_BINARY);
    EXPECT_EQ(p, nullptr);
    std::lock_guard<std::mutex> lock(log.mu);
    bool said_why = false;
    for (const std::string &line : log.lines)
      said_why |=
          line.find("urProgramCreateWithBinary") != std::string::npos && line.find(c.reason) != std::string::npos;
    EXPECT_TRUE(said_why) << "no log line with '" << c.reason << "' among " << log.lines.size() << " line(s)";
  }
  ASSERT_EQ(T(adapter).Adapter.pfnSetLoggerCallback(adapter, nullptr, nullptr, UR_LOGGER_LEVEL_QUIET),
            UR_RESULT_SUCCESS);

  // Binaries of this version, from C++ and from C, still load.
  ur_program_handle_t p = nullptr;
  EXPECT_EQ(create(read_file(test_kernels_path()), &p), UR_RESULT_SUCCESS);
  EXPECT_EQ(create(read_file(c_kernel_path()), &p), UR_RESULT_SUCCESS);
}

} // namespace
