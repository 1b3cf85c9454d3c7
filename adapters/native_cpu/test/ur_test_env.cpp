// SPDX-License-Identifier: Apache-2.0
#include "ur_test_env.hpp"

#include <cstdlib>

namespace ncpu_test {

namespace {
template <class F> bool get(void *lib, const char *name, ur_api_version_t v, F *table, ur_result_t *first_error) {
  using Getter = ur_result_t(UR_APICALL *)(ur_api_version_t, F *);
  auto fn = reinterpret_cast<Getter>(dlsym(lib, name));
  ur_result_t r = fn ? fn(v, table) : UR_RESULT_ERROR_UNINITIALIZED;
  if (r != UR_RESULT_SUCCESS && *first_error == UR_RESULT_SUCCESS) *first_error = r;
  return r == UR_RESULT_SUCCESS;
}
} // namespace

void *adapter_library() {
  static void *lib = [] {
    void *l = dlopen(NCPU_ADAPTER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!l) {
      std::fprintf(stderr, "cannot load %s: %s\n", NCPU_ADAPTER_PATH, dlerror());
      std::abort();
    }
    return l;
  }();
  return lib;
}

ur_result_t get_all_tables(void *lib, ur_api_version_t v, ur_dditable_t *t) {
  ur_result_t e = UR_RESULT_SUCCESS;
  get(lib, "urGetAdapterProcAddrTable", v, &t->Adapter, &e);
  get(lib, "urGetPlatformProcAddrTable", v, &t->Platform, &e);
  get(lib, "urGetContextProcAddrTable", v, &t->Context, &e);
  get(lib, "urGetEventProcAddrTable", v, &t->Event, &e);
  get(lib, "urGetEventExpProcAddrTable", v, &t->EventExp, &e);
  get(lib, "urGetProgramProcAddrTable", v, &t->Program, &e);
  get(lib, "urGetProgramExpProcAddrTable", v, &t->ProgramExp, &e);
  get(lib, "urGetKernelProcAddrTable", v, &t->Kernel, &e);
  get(lib, "urGetQueueProcAddrTable", v, &t->Queue, &e);
  get(lib, "urGetQueueExpProcAddrTable", v, &t->QueueExp, &e);
  get(lib, "urGetSamplerProcAddrTable", v, &t->Sampler, &e);
  get(lib, "urGetMemProcAddrTable", v, &t->Mem, &e);
  get(lib, "urGetPhysicalMemProcAddrTable", v, &t->PhysicalMem, &e);
  get(lib, "urGetEnqueueProcAddrTable", v, &t->Enqueue, &e);
  get(lib, "urGetEnqueueExpProcAddrTable", v, &t->EnqueueExp, &e);
  get(lib, "urGetUSMProcAddrTable", v, &t->USM, &e);
  get(lib, "urGetUSMExpProcAddrTable", v, &t->USMExp, &e);
  get(lib, "urGetBindlessImagesExpProcAddrTable", v, &t->BindlessImagesExp, &e);
  get(lib, "urGetCommandBufferExpProcAddrTable", v, &t->CommandBufferExp, &e);
  get(lib, "urGetGraphExpProcAddrTable", v, &t->GraphExp, &e);
  get(lib, "urGetIPCExpProcAddrTable", v, &t->IPCExp, &e);
  get(lib, "urGetMemoryExportExpProcAddrTable", v, &t->MemoryExportExp, &e);
  get(lib, "urGetUsmP2PExpProcAddrTable", v, &t->UsmP2PExp, &e);
  get(lib, "urGetVirtualMemProcAddrTable", v, &t->VirtualMem, &e);
  get(lib, "urGetDeviceProcAddrTable", v, &t->Device, &e);
  get(lib, "urGetDeviceExpProcAddrTable", v, &t->DeviceExp, &e);
  return e;
}

const ur_dditable_t &adapter_table() {
  static ur_dditable_t table = [] {
    ur_dditable_t t{};
    ur_result_t r = get_all_tables(adapter_library(), UR_API_VERSION_CURRENT, &t);
    if (r != UR_RESULT_SUCCESS) {
      std::fprintf(stderr, "a urGet*ProcAddrTable getter failed: %d\n", r);
      std::abort();
    }
    return t;
  }();
  return table;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void NativeCpu::SetUp() {
  const ur_dditable_t &t = adapter_table();
  ASSERT_EQ(t.Adapter.pfnGet(1, &adapter, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(adapter).Platform.pfnGet(adapter, 1, &platform, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(platform).Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 1, &device, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(device).Context.pfnCreate(1, &device, nullptr, &context), UR_RESULT_SUCCESS);
}

void NativeCpu::TearDown() {
  for (auto q : queues) {
    EXPECT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    EXPECT_EQ(T(q).Queue.pfnRelease(q), UR_RESULT_SUCCESS);
  }
  for (auto p : allocations) EXPECT_EQ(T(context).USM.pfnFree(context, p), UR_RESULT_SUCCESS);
  for (auto k : kernels) EXPECT_EQ(T(k).Kernel.pfnRelease(k), UR_RESULT_SUCCESS);
  for (auto p : programs) EXPECT_EQ(T(p).Program.pfnRelease(p), UR_RESULT_SUCCESS);
  if (context) {
    EXPECT_EQ(T(context).Context.pfnRelease(context), UR_RESULT_SUCCESS);
  }
  if (adapter) {
    EXPECT_EQ(T(adapter).Adapter.pfnRelease(adapter), UR_RESULT_SUCCESS);
  }
}

ur_program_handle_t NativeCpu::build_program(const std::string &path) {
  std::vector<uint8_t> bin = read_file(path);
  EXPECT_FALSE(bin.empty()) << path;
  size_t len = bin.size();
  const uint8_t *data = bin.data();
  ur_program_handle_t p = nullptr;
  EXPECT_EQ(T(context).Program.pfnCreateWithBinary(context, 1, &device, &len, &data, nullptr, &p), UR_RESULT_SUCCESS);
  if (!p) return nullptr;
  programs.push_back(p);
  EXPECT_EQ(T(p).Program.pfnBuild(context, p, nullptr), UR_RESULT_SUCCESS);
  return p;
}

ur_kernel_handle_t NativeCpu::kernel(ur_program_handle_t program, const char *name) {
  ur_kernel_handle_t k = nullptr;
  EXPECT_EQ(T(program).Kernel.pfnCreate(program, name, &k), UR_RESULT_SUCCESS) << name;
  if (k) kernels.push_back(k);
  return k;
}

ur_queue_handle_t NativeCpu::make_queue(ur_queue_flags_t flags) {
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
  ur_queue_handle_t q = nullptr;
  EXPECT_EQ(T(context).Queue.pfnCreate(context, device, &props, &q), UR_RESULT_SUCCESS);
  if (q) queues.push_back(q);
  return q;
}

void *NativeCpu::shared_alloc(size_t bytes) {
  void *p = nullptr;
  EXPECT_EQ(T(context).USM.pfnSharedAlloc(context, device, nullptr, nullptr, bytes, &p), UR_RESULT_SUCCESS);
  if (p) allocations.push_back(p);
  return p;
}

ur_exp_kernel_arg_properties_t NativeCpu::value_arg(uint32_t index, size_t size, const void *value) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  a.index = index;
  a.size = size;
  a.value.value = value;
  return a;
}

ur_exp_kernel_arg_properties_t NativeCpu::pointer_arg(uint32_t index, const void *ptr) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = ptr;
  return a;
}

ur_exp_kernel_arg_properties_t NativeCpu::local_arg(uint32_t index, size_t size) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_LOCAL;
  a.index = index;
  a.size = size;
  return a;
}

uint32_t NativeCpu::workers() {
  uint32_t n = 0;
  EXPECT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof n, &n, nullptr),
            UR_RESULT_SUCCESS);
  return n;
}

ur_result_t NativeCpu::launch(ur_queue_handle_t q, ur_kernel_handle_t k, uint32_t dim, const size_t *global,
                              const size_t *local, const std::vector<ur_exp_kernel_arg_properties_t> &args,
                              uint32_t num_waits, const ur_event_handle_t *waits, ur_event_handle_t *event,
                              const size_t *offset) {
  return T(q).EnqueueExp.pfnKernelLaunchWithArgsExp(
      q, k, dim, offset, global, local, static_cast<uint32_t>(args.size()), args.empty() ? nullptr : args.data(),
      nullptr, num_waits, waits, event);
}

Gate::~Gate() {
  open();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return waiters_ == 0; });
}

void Gate::open() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
  }
  cv_.notify_all();
}

void Gate::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiters_;
  cv_.wait(lock, [&] { return open_; });
  --waiters_;
  cv_.notify_all();
}

} // namespace ncpu_test
