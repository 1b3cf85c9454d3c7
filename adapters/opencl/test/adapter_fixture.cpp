// SPDX-License-Identifier: Apache-2.0
#include "adapter_fixture.hpp"

namespace ocltest {

namespace {
template <class T> bool load_table(void *lib, const char *getter, T &out, std::string &error) {
  using Getter = ur_result_t (*)(ur_api_version_t, T *);
  auto fn = reinterpret_cast<Getter>(dlsym(lib, getter));
  if (!fn) {
    error = std::string("missing export ") + getter;
    return false;
  }
  if (fn(UR_API_VERSION_CURRENT, &out) != UR_RESULT_SUCCESS) {
    error = std::string(getter) + " failed";
    return false;
  }
  return true;
}
} // namespace

Adapter &Adapter::get() {
  static Adapter *a = [] {
    auto *a = new Adapter();
    a->lib = dlopen(ORDO_OCL_ADAPTER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
      a->error = dlerror();
      return a;
    }
    ur_dditable_t &t = a->t;
    std::string &e = a->error;
    bool ok = load_table(a->lib, "urGetAdapterProcAddrTable", t.Adapter, e) &&
              load_table(a->lib, "urGetPlatformProcAddrTable", t.Platform, e) &&
              load_table(a->lib, "urGetContextProcAddrTable", t.Context, e) &&
              load_table(a->lib, "urGetEventProcAddrTable", t.Event, e) &&
              load_table(a->lib, "urGetEventExpProcAddrTable", t.EventExp, e) &&
              load_table(a->lib, "urGetProgramProcAddrTable", t.Program, e) &&
              load_table(a->lib, "urGetProgramExpProcAddrTable", t.ProgramExp, e) &&
              load_table(a->lib, "urGetKernelProcAddrTable", t.Kernel, e) &&
              load_table(a->lib, "urGetQueueProcAddrTable", t.Queue, e) &&
              load_table(a->lib, "urGetQueueExpProcAddrTable", t.QueueExp, e) &&
              load_table(a->lib, "urGetSamplerProcAddrTable", t.Sampler, e) &&
              load_table(a->lib, "urGetMemProcAddrTable", t.Mem, e) &&
              load_table(a->lib, "urGetPhysicalMemProcAddrTable", t.PhysicalMem, e) &&
              load_table(a->lib, "urGetEnqueueProcAddrTable", t.Enqueue, e) &&
              load_table(a->lib, "urGetEnqueueExpProcAddrTable", t.EnqueueExp, e) &&
              load_table(a->lib, "urGetUSMProcAddrTable", t.USM, e) &&
              load_table(a->lib, "urGetUSMExpProcAddrTable", t.USMExp, e) &&
              load_table(a->lib, "urGetBindlessImagesExpProcAddrTable", t.BindlessImagesExp, e) &&
              load_table(a->lib, "urGetCommandBufferExpProcAddrTable", t.CommandBufferExp, e) &&
              load_table(a->lib, "urGetGraphExpProcAddrTable", t.GraphExp, e) &&
              load_table(a->lib, "urGetIPCExpProcAddrTable", t.IPCExp, e) &&
              load_table(a->lib, "urGetMemoryExportExpProcAddrTable", t.MemoryExportExp, e) &&
              load_table(a->lib, "urGetUsmP2PExpProcAddrTable", t.UsmP2PExp, e) &&
              load_table(a->lib, "urGetVirtualMemProcAddrTable", t.VirtualMem, e) &&
              load_table(a->lib, "urGetDeviceProcAddrTable", t.Device, e) &&
              load_table(a->lib, "urGetDeviceExpProcAddrTable", t.DeviceExp, e);
    if (!ok) {
      dlclose(a->lib);
      a->lib = nullptr;
    }
    return a;
  }();
  return *a;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string kernel_path(const char *ext) { return std::string(ORDO_OCL_KERNEL_DIR "/ordo_test_kernels.") + ext; }

void OpenCLTest::SetUp() {
  Adapter &a = Adapter::get();
  ASSERT_NE(nullptr, a.lib) << a.error;
  OCL_ASSERT_OK(t().Adapter.pfnGet(1, &adapter, nullptr));
  uint32_t n = 0;
  OCL_ASSERT_OK(t().Platform.pfnGet(adapter, 0, nullptr, &n));
  if (n == 0) GTEST_SKIP() << "no OpenCL platform here (install pocl-opencl-icd)";
  std::vector<ur_platform_handle_t> platforms(n);
  OCL_ASSERT_OK(t().Platform.pfnGet(adapter, n, platforms.data(), nullptr));
  for (ur_platform_handle_t p : platforms) {
    uint32_t nd = 0;
    OCL_ASSERT_OK(t().Device.pfnGet(p, UR_DEVICE_TYPE_ALL, 0, nullptr, &nd));
    if (nd) {
      platform = p;
      OCL_ASSERT_OK(t().Device.pfnGet(p, UR_DEVICE_TYPE_ALL, 1, &device, nullptr));
      break;
    }
  }
  if (!device) GTEST_SKIP() << "no OpenCL device here";
  OCL_ASSERT_OK(t().Context.pfnCreate(1, &device, nullptr, &context));
  OCL_ASSERT_OK(t().Queue.pfnCreate(context, device, nullptr, &queue));
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  OCL_ASSERT_OK(t().Queue.pfnCreate(context, device, &props, &ooo_queue));
}

void OpenCLTest::TearDown() {
  if (ooo_queue) {
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Queue.pfnRelease(ooo_queue));
  }
  if (queue) {
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Queue.pfnRelease(queue));
  }
  if (context) {
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Context.pfnRelease(context));
  }
  if (device) {
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Device.pfnRelease(device));
  }
  if (adapter) {
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Adapter.pfnRelease(adapter));
  }
}

uint32_t OpenCLTest::device_caps(ur_device_info_t what) {
  uint32_t v = 0;
  EXPECT_EQ(UR_RESULT_SUCCESS, t().Device.pfnGetInfo(device, what, sizeof v, &v, nullptr));
  return v;
}

ur_program_handle_t OpenCLTest::build_test_program() {
  size_t il_size = 0;
  t().Device.pfnGetInfo(device, UR_DEVICE_INFO_IL_VERSION, 0, nullptr, &il_size);
  ur_program_handle_t program = nullptr;
  if (il_size > 1) {
    std::vector<uint8_t> spv = read_file(kernel_path("spv"));
    EXPECT_FALSE(spv.empty()) << "missing " << kernel_path("spv");
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Program.pfnCreateWithIL(context, spv.data(), spv.size(), nullptr, &program));
  } else {
    std::vector<uint8_t> bc = read_file(kernel_path("bc"));
    EXPECT_FALSE(bc.empty()) << "missing " << kernel_path("bc");
    size_t len = bc.size();
    const uint8_t *bin = bc.data();
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Program.pfnCreateWithBinary(context, 1, &device, &len, &bin, nullptr, &program));
  }
  if (program) {
    EXPECT_EQ(UR_RESULT_SUCCESS, t().Program.pfnBuild(context, program, nullptr));
  }
  return program;
}

ur_exp_kernel_arg_properties_t OpenCLTest::value_arg(uint32_t index, size_t size, const void *v) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  a.index = index;
  a.size = size;
  a.value.value = v;
  return a;
}

ur_exp_kernel_arg_properties_t OpenCLTest::pointer_arg(uint32_t index, const void *p) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = p;
  return a;
}

ur_exp_kernel_arg_properties_t OpenCLTest::local_arg(uint32_t index, size_t size) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_LOCAL;
  a.index = index;
  a.size = size;
  return a;
}

ur_result_t OpenCLTest::launch(ur_queue_handle_t q, ur_kernel_handle_t k, uint32_t dims, const size_t *global,
                               const size_t *local, std::vector<ur_exp_kernel_arg_properties_t> args, uint32_t nwait,
                               const ur_event_handle_t *wait, ur_event_handle_t *ev) {
  return t().EnqueueExp.pfnKernelLaunchWithArgsExp(q, k, dims, nullptr, global, local,
                                                   static_cast<uint32_t>(args.size()),
                                                   args.empty() ? nullptr : args.data(), nullptr, nwait, wait, ev);
}

} // namespace ocltest
