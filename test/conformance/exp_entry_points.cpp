// SPDX-License-Identifier: Apache-2.0
// Experimental entry points Ordo's adapters build from their own others
// (docs/command-buffers.md, "Derived entry points"): pitched USM (urUSMPitchedAllocExp),
// copies without a queue (urUSMContextMemcpyExp), builds for a device list
// (urProgramBuildExp / CompileExp / LinkExp) and native commands (urEnqueueNativeCommandExp),
// each with its data or effect checked and what it must refuse. An adapter that answers
// UR_RESULT_ERROR_UNSUPPORTED_FEATURE skips the test, saying so.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;

class urUSMExpTest : public conf::QueueTest {};

TEST_P(urUSMExpTest, PitchedAllocHoldsRows) {
  const size_t width = 100, height = 7;
  void *p = nullptr;
  size_t pitch = 0;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(
      urUSMPitchedAllocExp(context, device(), nullptr, nullptr, width, height, 4, &p, &pitch));
  ASSERT_NE(nullptr, p);
  EXPECT_GE(pitch, width);
  EXPECT_EQ(0u, pitch % 4) << "rows start on an element";
  std::vector<uint8_t> host(width * height), back(width * height, 0);
  std::iota(host.begin(), host.end(), uint8_t(3));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy2D(queue, true, p, pitch, host.data(), width, width, height, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy2D(queue, true, back.data(), width, p, pitch, width, height, 0, nullptr, nullptr));
  EXPECT_EQ(host, back);
  size_t size = 0;
  ASSERT_SUCCESS(urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_SIZE, sizeof size, &size, nullptr));
  EXPECT_GE(size, pitch * height);
  EXPECT_SUCCESS(urUSMFree(context, p));

  void *q = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urUSMPitchedAllocExp(context, device(), nullptr, nullptr, width, height, 4, nullptr, &pitch));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE,
            urUSMPitchedAllocExp(context, device(), nullptr, nullptr, width, height, 3, &q, &pitch))
      << "an element of 3 bytes";
  ASSERT_RESULT_IN(urUSMPitchedAllocExp(context, device(), nullptr, nullptr, 0, height, 4, &q, &pitch),
                   UR_RESULT_ERROR_INVALID_USM_SIZE, UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(nullptr, q);
}

TEST_P(urUSMExpTest, ContextMemcpyWithoutAQueue) {
  const size_t n = 4096;
  void *d = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, n * 4, &d));
  std::vector<uint32_t> host(n), back(n, 0);
  std::iota(host.begin(), host.end(), 5u);
  ur_result_t r = urUSMContextMemcpyExp(context, d, host.data(), n * 4);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urUSMFree(context, d));
    GTEST_SKIP() << "urUSMContextMemcpyExp is not supported on " << found().label();
  }
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urUSMContextMemcpyExp(context, back.data(), d, n * 4));
  EXPECT_EQ(host, back);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urUSMContextMemcpyExp(context, back.data(), d, 0));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urUSMContextMemcpyExp(context, nullptr, d, 4));
  EXPECT_SUCCESS(urUSMFree(context, d));
}

// ---- importing host memory ----

TEST_P(urUSMExpTest, ImportAndReleaseHostMemory) {
  std::vector<uint32_t> host(8192), back(8192, 0);
  std::iota(host.begin(), host.end(), 9u);
  ur_result_t r = urUSMImportExp(context, host.data(), host.size() * 4);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << "urUSMImportExp is not supported on " << found().label();
  ASSERT_SUCCESS(r);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMImportExp(context, host.data() + 16, 64)) << "overlaps an import";
  // Imported memory is used by commands as before.
  void *d = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, host.size() * 4, &d));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, d, host.data(), host.size() * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, back.data(), d, host.size() * 4, 0, nullptr, nullptr));
  EXPECT_EQ(host, back);
  EXPECT_SUCCESS(urUSMFree(context, d));
  ASSERT_SUCCESS(urUSMReleaseExp(context, host.data()));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urUSMReleaseExp(context, host.data())) << "released already";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urUSMImportExp(context, host.data(), 0));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urUSMImportExp(context, nullptr, 64));
  // Two imports sharing a page, released in either order.
  ASSERT_SUCCESS(urUSMImportExp(context, host.data(), 64));
  ASSERT_SUCCESS(urUSMImportExp(context, host.data() + 16, 64));
  EXPECT_SUCCESS(urUSMReleaseExp(context, host.data()));
  EXPECT_SUCCESS(urUSMReleaseExp(context, host.data() + 16));
}

// ---- programs for a list of devices ----

class urProgramExpTest : public conf::QueueTest {
protected:
  ur_program_handle_t unbuilt() {
    urinfo::TestProgram p = urinfo::load_test_program(conf::kernel_dir(), context, found(), false);
    if (!p.skip_reason.empty()) return nullptr;
    EXPECT_TRUE(p.ok()) << p.problem();
    return p.program;
  }
  // Runs "fill" from the program and checks the data.
  void check_fill(ur_program_handle_t prog) {
    ur_kernel_handle_t k = nullptr;
    ASSERT_SUCCESS(urKernelCreate(prog, "fill", &k));
    const size_t n = 256;
    void *out = nullptr;
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, n * 4, &out));
    const uint32_t v = 0x600D;
    std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, out), arg_value(1, sizeof v, &v)};
    ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, &n, nullptr, 2, args.data(), nullptr, 0,
                                                    nullptr, nullptr));
    std::vector<uint32_t> back(n);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, back.data(), out, n * 4, 0, nullptr, nullptr));
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [&](uint32_t x) { return x == v; }));
    EXPECT_SUCCESS(urUSMFree(context, out));
    EXPECT_SUCCESS(urKernelRelease(k));
  }
};

TEST_P(urProgramExpTest, BuildForTheDevice) {
  ur_program_handle_t prog = unbuilt();
  if (!prog) GTEST_SKIP() << "no test program for " << found().label();
  ur_device_handle_t dev = device();
  ur_result_t r = urProgramBuildExp(prog, 1, &dev, 0, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urProgramRelease(prog));
    GTEST_SKIP() << "urProgramBuildExp is not supported on " << found().label();
  }
  ASSERT_SUCCESS(r);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urProgramBuildExp(prog, 0, &dev, 0, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ENUMERATION, urProgramBuildExp(prog, 1, &dev, UR_EXP_PROGRAM_FLAGS_MASK, nullptr));
  check_fill(prog);
  EXPECT_SUCCESS(urProgramRelease(prog));
}

TEST_P(urProgramExpTest, RefusesANullDevice) {
  ur_program_handle_t prog = unbuilt();
  if (!prog) GTEST_SKIP() << "no test program for " << found().label();
  ur_device_handle_t none = nullptr;
  ur_result_t r = urProgramBuildExp(prog, 1, &none, 0, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urProgramRelease(prog));
    GTEST_SKIP() << "urProgramBuildExp is not supported on " << found().label();
  }
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, r);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urProgramCompileExp(prog, 1, &none, 0, nullptr));
  EXPECT_SUCCESS(urProgramRelease(prog));
}

TEST_P(urProgramExpTest, CompileThenLinkForTheDevice) {
  ur_program_handle_t prog = unbuilt();
  if (!prog) GTEST_SKIP() << "no test program for " << found().label();
  ur_device_handle_t dev = device();
  ur_result_t r = urProgramCompileExp(prog, 1, &dev, 0, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE || r == UR_RESULT_ERROR_INVALID_OPERATION) {
    EXPECT_SUCCESS(urProgramRelease(prog));
    GTEST_SKIP() << "no separate compile for this program on " << found().label() << " (" << urinfo::result_name(r)
                 << ")";
  }
  ASSERT_SUCCESS(r);
  ur_program_binary_type_t type = UR_PROGRAM_BINARY_TYPE_NONE;
  ASSERT_SUCCESS(urProgramGetBuildInfo(prog, dev, UR_PROGRAM_BUILD_INFO_BINARY_TYPE, sizeof type, &type, nullptr));
  EXPECT_TRUE(type == UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT || type == UR_PROGRAM_BINARY_TYPE_EXECUTABLE)
      << "after a compile: " << type;
  ur_program_handle_t linked = nullptr;
  r = urProgramLinkExp(context, 1, &dev, 0, 1, &prog, nullptr, &linked);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urProgramRelease(prog));
    GTEST_SKIP() << "compiled; no linker on " << found().label();
  }
  ASSERT_SUCCESS(r);
  ASSERT_NE(nullptr, linked);
  check_fill(linked);
  EXPECT_SUCCESS(urProgramRelease(linked));
  EXPECT_SUCCESS(urProgramRelease(prog));
}

// urProgramCompile then urProgramLink of the compiled program (and refusals), where the
// adapter links.
TEST_P(urProgramExpTest, CompileThenLinkWithoutDeviceList) {
  ur_program_handle_t prog = unbuilt();
  if (!prog) GTEST_SKIP() << "no test program for " << found().label();
  ur_result_t r = urProgramCompile(context, prog, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE || r == UR_RESULT_ERROR_INVALID_OPERATION) {
    EXPECT_SUCCESS(urProgramRelease(prog));
    GTEST_SKIP() << "no urProgramCompile for this program on " << found().label() << " (" << urinfo::result_name(r)
                 << ")";
  }
  ASSERT_SUCCESS(r);
  ur_program_handle_t linked = nullptr;
  r = urProgramLink(context, 1, &prog, nullptr, &linked);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urProgramRelease(prog));
    GTEST_SKIP() << "compiled; no linker on " << found().label();
  }
  ASSERT_SUCCESS(r);
  check_fill(linked);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urProgramLink(context, 0, &prog, nullptr, &linked));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urProgramLink(context, 1, nullptr, nullptr, &linked));
  EXPECT_SUCCESS(urProgramRelease(linked));
  EXPECT_SUCCESS(urProgramRelease(prog));
}

// ---- native commands ----

class urNativeCommandTest : public conf::QueueTest {};

struct NativeData {
  std::atomic<int> calls{0};
  ur_queue_handle_t seen = nullptr;
};
void native_command(ur_queue_handle_t q, void *p) {
  auto *d = static_cast<NativeData *>(p);
  d->seen = q;
  d->calls.fetch_add(1);
}

TEST_P(urNativeCommandTest, RunsAfterItsWaitListAndGivesAnEvent) {
  NativeData data;
  ur_event_handle_t before = nullptr, done = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 0, nullptr, &before));
  ur_result_t r = urEnqueueNativeCommandExp(queue, native_command, &data, 0, nullptr, nullptr, 1, &before, &done);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urEventRelease(before));
    GTEST_SKIP() << "urEnqueueNativeCommandExp is not supported on " << found().label();
  }
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urEventWait(1, &done));
  EXPECT_EQ(1, data.calls.load());
  EXPECT_EQ(queue, data.seen);
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(before));
  EXPECT_SUCCESS(urEventRelease(before));
  EXPECT_SUCCESS(urEventRelease(done));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urEnqueueNativeCommandExp(queue, nullptr, &data, 0, nullptr, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
            urEnqueueNativeCommandExp(queue, native_command, &data, 0, nullptr, nullptr, 1, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(1, data.calls.load()) << "refused calls ran nothing";
}

// ---- device globals ----

class urDeviceGlobalTest : public conf::ProgramTest {};

TEST_P(urDeviceGlobalTest, ReadAndWrite) {
  uint32_t words[16] = {};
  ur_result_t r = urEnqueueDeviceGlobalVariableRead(queue, program, "ordo_test_global", true, sizeof words, 0, words, 0,
                                                    nullptr, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << "urEnqueueDeviceGlobalVariableRead is not supported on " << found().label();
  if (r == UR_RESULT_ERROR_INVALID_VALUE)
    GTEST_SKIP() << "the test program of " << found().label() << " has no device global (test/kernels/README.md)";
  ASSERT_SUCCESS(r);
  for (uint32_t i = 0; i < 16; ++i) ASSERT_EQ(i + 1, words[i]) << i;
  const uint32_t patch[4] = {100, 101, 102, 103};
  ur_event_handle_t wrote = nullptr;
  ASSERT_SUCCESS(urEnqueueDeviceGlobalVariableWrite(queue, program, "ordo_test_global", false, sizeof patch, 8, patch,
                                                    0, nullptr, &wrote));
  ASSERT_SUCCESS(urEnqueueDeviceGlobalVariableRead(queue, program, "ordo_test_global", true, sizeof words, 0, words, 1,
                                                   &wrote, nullptr));
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(i >= 2 && i < 6 ? 98 + i : i + 1, words[i]) << i;
  EXPECT_SUCCESS(urEventRelease(wrote));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueDeviceGlobalVariableRead(queue, program, "ordo_test_global", true, 8,
                                                                            60, words, 0, nullptr, nullptr))
      << "past the end of the global";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urEnqueueDeviceGlobalVariableRead(queue, program, "no_such_global", true, 4,
                                                                             0, words, 0, nullptr, nullptr));
  // Put the words back: the program's module may stay loaded for later tests.
  const uint32_t original[4] = {3, 4, 5, 6};
  ASSERT_SUCCESS(urEnqueueDeviceGlobalVariableWrite(queue, program, "ordo_test_global", true, sizeof original, 8,
                                                    original, 0, nullptr, nullptr));
}

// ---- host tasks ----

class urHostTaskTest : public conf::QueueTest {};

struct HostTaskData {
  std::atomic<int> runs{0};
};
void slow_host_task(void *p) {
  auto *d = static_cast<HostTaskData *>(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  d->runs.fetch_add(1);
}

// On the in-order queue, a command after the host task completes only after it ran.
TEST_P(urHostTaskTest, OrdersTheQueue) {
  HostTaskData data;
  ur_event_handle_t task = nullptr, after = nullptr;
  ur_result_t r = urEnqueueHostTaskExp(queue, slow_host_task, &data, nullptr, 0, nullptr, &task);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    GTEST_SKIP() << "urEnqueueHostTaskExp is not supported on " << found().label();
  ASSERT_SUCCESS(r);
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 0, nullptr, &after));
  ASSERT_SUCCESS(urEventWait(1, &after));
  EXPECT_EQ(1, data.runs.load()) << "the command after the host task completed first";
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(task));
  // The task's own event, and a second task that waits for it.
  ur_event_handle_t second = nullptr;
  ASSERT_SUCCESS(urEnqueueHostTaskExp(queue, slow_host_task, &data, nullptr, 1, &task, &second));
  ASSERT_SUCCESS(urEventWait(1, &second));
  EXPECT_EQ(2, data.runs.load());
  EXPECT_SUCCESS(urEventRelease(task));
  EXPECT_SUCCESS(urEventRelease(after));
  EXPECT_SUCCESS(urEventRelease(second));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urEnqueueHostTaskExp(queue, nullptr, &data, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
            urEnqueueHostTaskExp(queue, slow_host_task, &data, nullptr, 1, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ(2, data.runs.load()) << "refused calls ran nothing";
}

CONF_INSTANTIATE_DEVICE_SUITE(urUSMExpTest);
CONF_INSTANTIATE_DEVICE_SUITE(urProgramExpTest);
CONF_INSTANTIATE_DEVICE_SUITE(urNativeCommandTest);
CONF_INSTANTIATE_DEVICE_SUITE(urDeviceGlobalTest);
CONF_INSTANTIATE_DEVICE_SUITE(urHostTaskTest);

} // namespace
