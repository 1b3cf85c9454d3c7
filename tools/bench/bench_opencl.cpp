// SPDX-License-Identifier: Apache-2.0
// OpenCL workloads of ordo-bench: each has an Ordo row (through libur_loader and the
// OpenCL adapter) and a raw OpenCL row doing the same work on the same device in the
// same run. Both libraries are dlopen'ed, so the binary links everywhere; a machine
// without OpenCL skips these rows and says why.
//
//   OpenCL_EmptyLaunch_{Ordo,Raw}     256 launches of an empty kernel, then finish
//   OpenCL_AllocFree_{Ordo,Raw}       64 alloc/free pairs of 64 KiB device memory
//                                     (Ordo: stream-ordered; raw: clSVMAlloc/clSVMFree)
//   OpenCL_AllocKernelFree_{Ordo,Raw} 64 x (alloc 64 KiB -> fill -> increment -> free)
//                                     (raw: synchronous clSVMAlloc ... clFinish, clSVMFree)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bench_loader.hpp"
#include "ur_api.h"

namespace {
namespace bench_opencl {

constexpr int kLaunchBatch = 256;
constexpr int kAllocBatch = 64;
constexpr size_t kAllocBytes = 64 << 10;
constexpr size_t kElements = kAllocBytes / sizeof(uint32_t);

using ordo_bench::read_file;

std::string kernel_file(const char *ext) {
  return ordo_bench::kernel_path(std::string("opencl/ordo_test_kernels.") + ext);
}

// ---- the Ordo side: UR through libur_loader.so.0 ----

// A list of X(...) entries, laid out by hand.
// clang-format off
#define UR_FUNCTIONS(X)                                                                                                \
  X(urLoaderInit)                                                                                                      \
  X(urAdapterGet)                                                                                                      \
  X(urPlatformGet)                                                                                                     \
  X(urPlatformGetInfo)                                                                                                 \
  X(urDeviceGet) X(urDeviceGetInfo) X(urContextCreate) X(urQueueCreate) X(urQueueFinish) X(urProgramCreateWithBinary)  \
      X(urProgramCreateWithIL) X(urProgramBuild) X(urKernelCreate) X(urEnqueueKernelLaunchWithArgsExp)                 \
          X(urEnqueueUSMDeviceAllocExp) X(urEnqueueUSMFreeExp)
// clang-format on

struct Ordo {
  ORDO_BENCH_UR_ENTRY_POINTS(UR_FUNCTIONS)
  std::string error;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
  ur_kernel_handle_t empty = nullptr, fill = nullptr, increment = nullptr;
  bool async_alloc = false;

  static Ordo &get() { return ordo_bench::once<Ordo>(); }

  void init() {
    if (!ordo_bench::open_device(*this, UR_BACKEND_OPENCL, "OpenCL")) return;
    ur_bool_t async = 0;
    urDeviceGetInfo(device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof async, &async, nullptr);
    async_alloc = async;
    if (urContextCreate(1, &device, nullptr, &context) || urQueueCreate(context, device, nullptr, &queue)) {
      error = "context/queue creation failed";
      return;
    }
    size_t il = 0;
    urDeviceGetInfo(device, UR_DEVICE_INFO_IL_VERSION, 0, nullptr, &il);
    std::vector<uint8_t> bin = read_file(kernel_file(il > 1 ? "spv" : "bc"));
    if (bin.empty()) {
      error = "test kernels not built: " + kernel_file(il > 1 ? "spv" : "bc");
      return;
    }
    ur_program_handle_t program = nullptr;
    size_t len = bin.size();
    const uint8_t *data = bin.data();
    ur_result_t r = il > 1 ? urProgramCreateWithIL(context, data, len, nullptr, &program)
                           : urProgramCreateWithBinary(context, 1, &device, &len, &data, nullptr, &program);
    if (r || urProgramBuild(context, program, nullptr) || urKernelCreate(program, "empty", &empty) ||
        urKernelCreate(program, "fill", &fill) || urKernelCreate(program, "increment", &increment)) {
      error = "building the test kernels failed";
      return;
    }
    warm_up();
  }

  // OpenCL implementations finish compiling a kernel at its first launch: do that
  // before anything is timed.
  void warm_up() {
    void *p = nullptr;
    urEnqueueUSMDeviceAllocExp(queue, nullptr, kAllocBytes, nullptr, 0, nullptr, &p, nullptr);
    uint32_t value = 0;
    ur_exp_kernel_arg_properties_t args[2] = {};
    for (auto &a : args) a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
    args[0].type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
    args[0].size = sizeof(void *);
    args[0].value.pointer = p;
    args[1].type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
    args[1].index = 1;
    args[1].size = sizeof value;
    args[1].value.value = &value;
    size_t one = 1, n = kElements;
    urEnqueueKernelLaunchWithArgsExp(queue, empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr);
    if (p) {
      urEnqueueKernelLaunchWithArgsExp(queue, fill, 1, nullptr, &n, nullptr, 2, args, nullptr, 0, nullptr, nullptr);
      urEnqueueKernelLaunchWithArgsExp(queue, increment, 1, nullptr, &n, nullptr, 1, args, nullptr, 0, nullptr,
                                       nullptr);
      urEnqueueUSMFreeExp(queue, nullptr, p, 0, nullptr, nullptr);
    }
    urQueueFinish(queue);
  }

  ur_result_t launch(ur_kernel_handle_t k, size_t n, std::vector<ur_exp_kernel_arg_properties_t> args) {
    return urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, &n, nullptr, uint32_t(args.size()),
                                            args.empty() ? nullptr : args.data(), nullptr, 0, nullptr, nullptr);
  }
};

ur_exp_kernel_arg_properties_t ur_pointer(uint32_t index, const void *p) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = p;
  return a;
}

ur_exp_kernel_arg_properties_t ur_value(uint32_t index, size_t size, const void *v) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  a.index = index;
  a.size = size;
  a.value.value = v;
  return a;
}

// ---- the raw side: OpenCL through libOpenCL.so.1 ----

// clang-format off
#define CL_FUNCTIONS(X)                                                                                                \
  X(clGetPlatformIDs)                                                                                                  \
  X(clGetDeviceIDs)                                                                                                    \
  X(clCreateContext)                                                                                                   \
  X(clCreateCommandQueueWithProperties)                                                                                \
  X(clCreateProgramWithBinary)                                                                                         \
  X(clBuildProgram)                                                                                                    \
  X(clCreateKernel) X(clSetKernelArg) X(clSetKernelArgSVMPointer) X(clEnqueueNDRangeKernel) X(clFinish) X(clSVMAlloc)  \
      X(clSVMFree)
// clang-format on

struct Raw {
#define CL_DECLARE(fn) decltype(&::fn) fn = nullptr;
  CL_FUNCTIONS(CL_DECLARE)
#undef CL_DECLARE
  std::string error;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_kernel empty = nullptr, fill = nullptr, increment = nullptr;

  static Raw &get() { return ordo_bench::once<Raw>(); }

  void init() {
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = "libOpenCL.so.1 not found";
      return;
    }
#define CL_LOAD(fn)                                                                                                    \
  if (!(fn = reinterpret_cast<decltype(fn)>(dlsym(lib, #fn)))) {                                                       \
    error = "libOpenCL.so.1 lacks " #fn;                                                                               \
    return;                                                                                                            \
  }
    CL_FUNCTIONS(CL_LOAD)
#undef CL_LOAD
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0 ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
      error = "no OpenCL device";
      return;
    }
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    queue = context ? clCreateCommandQueueWithProperties(context, device, nullptr, &err) : nullptr;
    std::vector<uint8_t> bin = read_file(kernel_file("bc"));
    if (!queue || bin.empty()) {
      error = "no queue, or test kernels not built";
      return;
    }
    size_t len = bin.size();
    const unsigned char *data = bin.data();
    cl_program program = clCreateProgramWithBinary(context, 1, &device, &len, &data, nullptr, &err);
    if (!program || clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
      error = "building the SPIR bitcode failed";
      return;
    }
    empty = clCreateKernel(program, "empty", &err);
    fill = clCreateKernel(program, "fill", &err);
    increment = clCreateKernel(program, "increment", &err);
    if (!empty || !fill || !increment) {
      error = "kernel creation failed";
      return;
    }
    // As on the Ordo side: the first launch of each kernel finishes its compilation.
    void *p = clSVMAlloc(context, CL_MEM_READ_WRITE, kAllocBytes, 0);
    uint32_t value = 0;
    size_t one = 1, elements = kElements;
    clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr);
    if (p) {
      clSetKernelArgSVMPointer(fill, 0, p);
      clSetKernelArg(fill, 1, sizeof value, &value);
      clEnqueueNDRangeKernel(queue, fill, 1, nullptr, &elements, nullptr, 0, nullptr, nullptr);
      clSetKernelArgSVMPointer(increment, 0, p);
      clEnqueueNDRangeKernel(queue, increment, 1, nullptr, &elements, nullptr, 0, nullptr, nullptr);
    }
    clFinish(queue);
    if (p) clSVMFree(context, p);
  }
};

// ---- workloads ----

void OpenCL_EmptyLaunch_Ordo(benchmark::State &state) {
  Ordo &o = Ordo::get();
  if (!o.error.empty()) return state.SkipWithError(o.error.c_str());
  for (auto _ : state) {
    for (int i = 0; i < kLaunchBatch; ++i)
      if (o.launch(o.empty, 1, {})) return state.SkipWithError("launch failed");
    o.urQueueFinish(o.queue);
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

void OpenCL_EmptyLaunch_Raw(benchmark::State &state) {
  Raw &r = Raw::get();
  if (!r.error.empty()) return state.SkipWithError(r.error.c_str());
  size_t one = 1;
  for (auto _ : state) {
    for (int i = 0; i < kLaunchBatch; ++i)
      if (r.clEnqueueNDRangeKernel(r.queue, r.empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr))
        return state.SkipWithError("launch failed");
    r.clFinish(r.queue);
  }
  state.SetItemsProcessed(state.iterations() * kLaunchBatch);
}

void OpenCL_AllocFree_Ordo(benchmark::State &state) {
  Ordo &o = Ordo::get();
  if (!o.error.empty()) return state.SkipWithError(o.error.c_str());
  if (!o.async_alloc) return state.SkipWithError("the device reports no stream-ordered allocation");
  for (auto _ : state) {
    for (int i = 0; i < kAllocBatch; ++i) {
      void *p = nullptr;
      if (o.urEnqueueUSMDeviceAllocExp(o.queue, nullptr, kAllocBytes, nullptr, 0, nullptr, &p, nullptr) ||
          o.urEnqueueUSMFreeExp(o.queue, nullptr, p, 0, nullptr, nullptr))
        return state.SkipWithError("alloc/free failed");
    }
    o.urQueueFinish(o.queue);
  }
  state.SetItemsProcessed(state.iterations() * kAllocBatch);
}

void OpenCL_AllocFree_Raw(benchmark::State &state) {
  Raw &r = Raw::get();
  if (!r.error.empty()) return state.SkipWithError(r.error.c_str());
  for (auto _ : state) {
    for (int i = 0; i < kAllocBatch; ++i) {
      void *p = r.clSVMAlloc(r.context, CL_MEM_READ_WRITE, kAllocBytes, 0);
      if (!p) return state.SkipWithError("clSVMAlloc failed");
      r.clSVMFree(r.context, p);
    }
  }
  state.SetItemsProcessed(state.iterations() * kAllocBatch);
}

void OpenCL_AllocKernelFree_Ordo(benchmark::State &state) {
  Ordo &o = Ordo::get();
  if (!o.error.empty()) return state.SkipWithError(o.error.c_str());
  if (!o.async_alloc) return state.SkipWithError("the device reports no stream-ordered allocation");
  uint32_t value = 7;
  for (auto _ : state) {
    for (int i = 0; i < kAllocBatch; ++i) {
      void *p = nullptr;
      if (o.urEnqueueUSMDeviceAllocExp(o.queue, nullptr, kAllocBytes, nullptr, 0, nullptr, &p, nullptr) ||
          o.launch(o.fill, kElements, {ur_pointer(0, p), ur_value(1, sizeof value, &value)}) ||
          o.launch(o.increment, kElements, {ur_pointer(0, p)}) ||
          o.urEnqueueUSMFreeExp(o.queue, nullptr, p, 0, nullptr, nullptr))
        return state.SkipWithError("pipeline failed");
    }
    o.urQueueFinish(o.queue);
  }
  state.SetItemsProcessed(state.iterations() * kAllocBatch);
}

void OpenCL_AllocKernelFree_Raw(benchmark::State &state) {
  Raw &r = Raw::get();
  if (!r.error.empty()) return state.SkipWithError(r.error.c_str());
  uint32_t value = 7;
  size_t n = kElements;
  for (auto _ : state) {
    for (int i = 0; i < kAllocBatch; ++i) {
      void *p = r.clSVMAlloc(r.context, CL_MEM_READ_WRITE, kAllocBytes, 0);
      if (!p) return state.SkipWithError("clSVMAlloc failed");
      r.clSetKernelArgSVMPointer(r.fill, 0, p);
      r.clSetKernelArg(r.fill, 1, sizeof value, &value);
      r.clEnqueueNDRangeKernel(r.queue, r.fill, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
      r.clSetKernelArgSVMPointer(r.increment, 0, p);
      r.clEnqueueNDRangeKernel(r.queue, r.increment, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
      // clSVMFree does not wait for the kernels: the raw program must.
      r.clFinish(r.queue);
      r.clSVMFree(r.context, p);
    }
  }
  state.SetItemsProcessed(state.iterations() * kAllocBatch);
}

BENCHMARK(OpenCL_EmptyLaunch_Ordo)->UseRealTime();
BENCHMARK(OpenCL_EmptyLaunch_Raw)->UseRealTime();
BENCHMARK(OpenCL_AllocFree_Ordo)->UseRealTime();
BENCHMARK(OpenCL_AllocFree_Raw)->UseRealTime();
BENCHMARK(OpenCL_AllocKernelFree_Ordo)->UseRealTime();
BENCHMARK(OpenCL_AllocKernelFree_Raw)->UseRealTime();

} // namespace bench_opencl
} // namespace
