// SPDX-License-Identifier: Apache-2.0
// What UR's own conformance suite found on Ordo's adapters (issue 23; docs/conformance.md,
// "UR's own conformance suite"), each kept fixed here through the public API:
// - a USE_HOST_POINTER buffer is the caller's memory: host writes made after creation
//   are what a read returns;
// - a buffer of another context of the same device, on the CUDA, HIP and Level Zero
//   adapters (docs/cuda.md, docs/level-zero.md, "Memory objects"): copies between
//   contexts, chained by events of those contexts;
// - UR_DEVICE_INFO_COMPONENT_DEVICES asked with no buffer and no size pointer (the
//   adapter's own answer: the validation layer refuses the call by the spec's rules);
// - urIPCGetPhysMemHandleExp on memory made without UR_PHYSICAL_MEM_FLAG_ENABLE_IPC;
// - urUSMContextMemcpyExp where the device reports it, and reported on CUDA and HIP;
// - a sub-device's native handle answers that same sub-device (OpenCL);
// - a queue on the device where the device reports UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES.
// - a queue's native handle taken back by urQueueCreateWithNativeHandle (Level Zero).
// - an event from a null native handle: of the context, complete, met in every wait list
//   (the stand-in event of UR's wait-list refusals);
// - urEventGetProfilingInfo with no buffer and no size pointer on an event without
//   timestamps: PROFILING_INFO_NOT_AVAILABLE, not a null-pointer refusal.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "conformance.hpp"

namespace {

bool is_stream_backend(const urinfo::FoundDevice &d) { return d.backend_name == "cuda" || d.backend_name == "hip"; }
// The adapters that take a buffer of another context of the queue's device.
bool takes_other_contexts_buffers(const urinfo::FoundDevice &d) {
  return is_stream_backend(d) || d.backend_name == "level_zero";
}

class urURCtsRegressionTest : public conf::QueueTest {};

// UR's urMemBufferCreateTest.UseHostPointer: the buffer shows what the host memory holds
// when the command runs, not what it held at creation.
TEST_P(urURCtsRegressionTest, UseHostPointerShowsLaterHostWrites) {
  std::vector<uint8_t> host(4096), back(4096, 1);
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(i & 0xff);
  ur_buffer_properties_t props{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data()};
  ur_mem_handle_t buffer = nullptr;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(
      urMemBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER, host.size(), &props, &buffer));
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(i & 0x0f);
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, buffer, true, 0, back.size(), back.data(), 0, nullptr, nullptr));
  EXPECT_EQ(host, back) << "the buffer must read the host memory's bytes as they are now";
  // And the other way: a command's write lands in the caller's memory.
  std::vector<uint8_t> pattern(256, 0xA5);
  ASSERT_SUCCESS(
      urEnqueueMemBufferWrite(queue, buffer, true, 512, pattern.size(), pattern.data(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, buffer, true, 0, back.size(), back.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(pattern.begin(), pattern.end(), back.begin() + 512));
  EXPECT_SUCCESS(urMemRelease(buffer));
}

// Two USE_HOST_POINTER buffers over the two halves of one allocation (they share a page
// when the halves are not page-aligned): each shows its own half's later host writes.
TEST_P(urURCtsRegressionTest, UseHostPointerBuffersSharingAPage) {
  std::vector<uint8_t> host(6000, 0);
  const size_t half = host.size() / 2;
  ur_buffer_properties_t first{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data()};
  ur_buffer_properties_t second{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data() + half};
  ur_mem_handle_t a = nullptr, b = nullptr;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urMemBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER, half, &first, &a));
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER, half, &second, &b));
  std::iota(host.begin(), host.end(), uint8_t{7});
  std::vector<uint8_t> back(half, 0);
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, a, true, 0, half, back.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin())) << "first half";
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, b, true, 0, half, back.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin() + half)) << "second half";
  EXPECT_SUCCESS(urMemRelease(b));
  EXPECT_SUCCESS(urMemRelease(a));
}

// UR's urEventWaitTest.WithCrossContextDependencies, on three contexts of the device: on
// context i's queue, a copy from context i's buffer into context i+1's, each waiting for
// the previous copy's event. The UR spec names no error for a buffer of another context
// (urEnqueueMemBufferCopy lists INVALID_MEM_OBJECT with no condition); the CUDA and HIP
// adapters take one whose context has the queue's device (docs/cuda.md), Level Zero in
// reads, writes and copies (done on the host, each buffer by its own context, the events
// of the other contexts waited for on the host: docs/level-zero.md). The other adapters
// refuse it with INVALID_MEM_OBJECT (mem_buffer.cpp) and skip here.
TEST_P(urURCtsRegressionTest, CopyBetweenContextsOfOneDevice) {
  if (!takes_other_contexts_buffers(found()))
    GTEST_SKIP() << found().backend_name << " refuses a buffer of another context (INVALID_MEM_OBJECT), as the spec "
                 << "allows; only the CUDA, HIP and Level Zero adapters take one of the same device";
  constexpr size_t kContexts = 3, kCount = 1024, kBytes = kCount * sizeof(uint32_t);
  ur_device_handle_t dev = device();
  std::vector<ur_context_handle_t> contexts(kContexts, nullptr);
  std::vector<ur_queue_handle_t> queues(kContexts, nullptr);
  std::vector<ur_mem_handle_t> buffers(kContexts, nullptr);
  std::vector<ur_event_handle_t> events;
  // Released however the test ends (an ASSERT returns early).
  struct Cleanup {
    std::function<void()> run;
    ~Cleanup() { run(); }
  } cleanup{[&] {
    for (ur_event_handle_t e : events) EXPECT_SUCCESS(urEventRelease(e));
    for (size_t i = 0; i < kContexts; ++i) {
      if (buffers[i]) {
        EXPECT_SUCCESS(urMemRelease(buffers[i]));
      }
      if (queues[i]) {
        EXPECT_SUCCESS(urQueueRelease(queues[i]));
      }
      if (contexts[i]) {
        EXPECT_SUCCESS(urContextRelease(contexts[i]));
      }
    }
  }};
  for (size_t i = 0; i < kContexts; ++i) {
    ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &contexts[i]));
    ASSERT_SUCCESS(urQueueCreate(contexts[i], dev, nullptr, &queues[i]));
    ASSERT_SUCCESS(urMemBufferCreate(contexts[i], UR_MEM_FLAG_READ_WRITE, kBytes, nullptr, &buffers[i]));
    std::vector<uint32_t> fill(kCount, uint32_t(100 + i));
    ASSERT_SUCCESS(urEnqueueMemBufferWrite(queues[i], buffers[i], true, 0, kBytes, fill.data(), 0, nullptr, nullptr));
  }
  for (size_t i = 0; i + 1 < kContexts; ++i) {
    ur_event_handle_t done = nullptr;
    ur_result_t r = urEnqueueMemBufferCopy(queues[i], buffers[i], buffers[i + 1], 0, 0, kBytes, events.empty() ? 0 : 1,
                                           events.empty() ? nullptr : &events.back(), &done);
    EXPECT_SUCCESS(r) << "copy on context " << i << "'s queue into context " << i + 1 << "'s buffer";
    if (r != UR_RESULT_SUCCESS) break;
    events.push_back(done);
  }
  if (events.size() == kContexts - 1) {
    ASSERT_SUCCESS(urEventWait(static_cast<uint32_t>(events.size()), events.data()));
    // Context 0's bytes went through every buffer.
    std::vector<uint32_t> out(kCount, 1);
    ASSERT_SUCCESS(
        urEnqueueMemBufferRead(queues.back(), buffers.back(), true, 0, kBytes, out.data(), 0, nullptr, nullptr));
    EXPECT_EQ(std::vector<uint32_t>(kCount, 100u), out);
    // A read of another context's buffer on this queue, too.
    ASSERT_SUCCESS(urEnqueueMemBufferRead(queues[0], buffers[1], true, 0, kBytes, out.data(), 0, nullptr, nullptr));
    EXPECT_EQ(std::vector<uint32_t>(kCount, 100u), out);
    // And a write into another context's buffer, read back through its own queue.
    std::vector<uint32_t> in(kCount, 7u);
    ASSERT_SUCCESS(urEnqueueMemBufferWrite(queues[0], buffers[2], true, 0, kBytes, in.data(), 0, nullptr, nullptr));
    ASSERT_SUCCESS(urEnqueueMemBufferRead(queues[2], buffers[2], true, 0, kBytes, out.data(), 0, nullptr, nullptr));
    EXPECT_EQ(in, out);
  }
}

// UR's urQueueCreateWithNativeHandleTest.{Success, SuccessWithProperties}: the native
// handle urQueueGetNativeHandle hands out is taken back by urQueueCreateWithNativeHandle
// (no properties, and not owned), for an in-order and an out-of-order queue. The new
// queue is of the context, runs commands, is ordered with the original by events, and
// its release leaves the original working.
TEST_P(urURCtsRegressionTest, QueueFromItsNativeHandle) {
  constexpr size_t kBytes = 4096;
  ur_mem_handle_t buffer = nullptr;
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, kBytes, nullptr, &buffer));
  for (ur_queue_flags_t flags : {ur_queue_flags_t(0), ur_queue_flags_t(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE)}) {
    SCOPED_TRACE(flags ? "out-of-order queue" : "in-order queue");
    ur_queue_properties_t qp{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
    ur_queue_handle_t original = nullptr;
    ASSERT_SUCCESS(urQueueCreate(context, device(), &qp, &original));
    ur_native_handle_t native = 0;
    ur_result_t r = urQueueGetNativeHandle(original, nullptr, &native);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
      EXPECT_SUCCESS(urQueueRelease(original));
      EXPECT_SUCCESS(urMemRelease(buffer));
      GTEST_SKIP() << found().label() << " hands out no native queue handle";
    }
    ASSERT_SUCCESS(r);
    ur_queue_native_properties_t keep{UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, nullptr, false};
    for (const ur_queue_native_properties_t *props : {static_cast<const ur_queue_native_properties_t *>(nullptr),
                                                      static_cast<const ur_queue_native_properties_t *>(&keep)}) {
      ur_queue_handle_t q = nullptr;
      r = urQueueCreateWithNativeHandle(native, context, device(), props, &q);
      EXPECT_SUCCESS(r) << "the native handle urQueueGetNativeHandle gave, " << (props ? "not owned" : "no properties");
      if (r != UR_RESULT_SUCCESS) continue;
      ur_context_handle_t q_context = nullptr;
      EXPECT_SUCCESS(urQueueGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof q_context, &q_context, nullptr));
      EXPECT_EQ(context, q_context);
      // A write on the original, then a read on the new queue that waits for it.
      std::vector<uint8_t> in(kBytes), out(kBytes, 0);
      for (size_t i = 0; i < kBytes; ++i) in[i] = uint8_t(i * 7 + (props ? 1 : 2) + flags);
      ur_event_handle_t written = nullptr;
      ASSERT_SUCCESS(urEnqueueMemBufferWrite(original, buffer, false, 0, kBytes, in.data(), 0, nullptr, &written));
      ASSERT_SUCCESS(urEnqueueMemBufferRead(q, buffer, true, 0, kBytes, out.data(), 1, &written, nullptr));
      EXPECT_EQ(in, out);
      EXPECT_SUCCESS(urEventRelease(written));
      EXPECT_SUCCESS(urQueueFinish(q));
      EXPECT_SUCCESS(urQueueRelease(q));
    }
    EXPECT_SUCCESS(urEnqueueEventsWait(original, 0, nullptr, nullptr)) << "the original still works";
    EXPECT_SUCCESS(urQueueFinish(original));
    EXPECT_SUCCESS(urQueueRelease(original));
  }
  EXPECT_SUCCESS(urMemRelease(buffer));
}

// UR's urDeviceGetInfoComponentDevicesTest.SuccessComponentDevices: a device that is not
// composite has no component devices, and a caller that sized its array by that answer
// asks with (0, NULL, NULL). Only the adapter's own answer is checked: the validation
// layer refuses the call (the spec's rule: pPropValue and pPropSizeRet both null).
TEST_P(urURCtsRegressionTest, ComponentDevicesOfANonCompositeDevice) {
  ur_device_handle_t composite = nullptr;
  ur_result_t r = urDeviceGetInfo(device(), UR_DEVICE_INFO_COMPOSITE_DEVICE, sizeof composite, &composite, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) GTEST_SKIP() << "no UR_DEVICE_INFO_COMPOSITE_DEVICE";
  ASSERT_SUCCESS(r);
  size_t size = 999;
  r = urDeviceGetInfo(device(), UR_DEVICE_INFO_COMPONENT_DEVICES, 0, nullptr, &size);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION) GTEST_SKIP() << "no UR_DEVICE_INFO_COMPONENT_DEVICES";
  ASSERT_SUCCESS(r);
  if (size != 0) GTEST_SKIP() << found().label() << " is composite: it has component devices";
  if (found().backend_name == "level_zero")
    GTEST_SKIP() << "the Level Zero adapter answers INVALID_NULL_POINTER, as UR's own Level Zero adapter does (UR's "
                 << "suite lists this as a known failure there)";
  if (conf::validation_enabled())
    GTEST_SKIP() << "the validation layer refuses (0, NULL, NULL) by the spec's parameter rules; the adapter's "
                 << "own answer is checked with ORDO_CONFORMANCE_NO_VALIDATION=1";
  EXPECT_SUCCESS(urDeviceGetInfo(device(), UR_DEVICE_INFO_COMPONENT_DEVICES, 0, nullptr, nullptr));
}

// UR's urIPCGetPhysMemHandleExpNoIpcTest.InvalidArgumentNoIpcFlag: the spec's code for
// memory made without UR_PHYSICAL_MEM_FLAG_ENABLE_IPC is INVALID_ARGUMENT.
TEST_P(urURCtsRegressionTest, IpcHandleOfMemoryWithoutTheIpcFlag) {
  ur_bool_t yes = false;
  if (conf::info(device(), UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP, yes) != UR_RESULT_SUCCESS || !yes)
    GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP";
  size_t page = 0;
  ASSERT_SUCCESS(urVirtualMemGranularityGetInfo(context, device(), 1, UR_VIRTUAL_MEM_GRANULARITY_INFO_MINIMUM,
                                                sizeof page, &page, nullptr));
  ur_physical_mem_handle_t plain = nullptr;
  ASSERT_SUCCESS(urPhysicalMemCreate(context, device(), page, nullptr, &plain));
  void *data = nullptr;
  size_t size = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ARGUMENT, urIPCGetPhysMemHandleExp(context, plain, &data, &size));
  EXPECT_EQ(nullptr, data);
  EXPECT_SUCCESS(urPhysicalMemRelease(plain));
}

// UR's exp_usm_context_memcpy group: a copy without a queue between USM allocations of
// the context (device, host, shared where the device has them), done on return; a size
// past either allocation is INVALID_SIZE (the spec's). CUDA and HIP must report it.
TEST_P(urURCtsRegressionTest, ContextMemcpyBetweenAllocations) {
  ur_bool_t supported = false;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP, supported));
  if (is_stream_backend(found())) {
    EXPECT_TRUE(supported) << "the stream backend implements urUSMContextMemcpyExp";
  }
  if (!supported) GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP";
  constexpr size_t kCount = 4096, kBytes = kCount * sizeof(uint32_t);
  for (ur_usm_type_t kind : {UR_USM_TYPE_DEVICE, UR_USM_TYPE_HOST, UR_USM_TYPE_SHARED}) {
    if (!conf::usm_supported(device(), kind)) continue;
    SCOPED_TRACE(conf::usm_kind_name(kind));
    void *src = nullptr, *dst = nullptr;
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), kind, kBytes, &src));
    ASSERT_SUCCESS(conf::usm_alloc(context, device(), kind, kBytes, &dst));
    std::vector<uint32_t> in(kCount), out(kCount, 0);
    std::iota(in.begin(), in.end(), 3u);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, src, in.data(), kBytes, 0, nullptr, nullptr));
    const uint32_t zero = 0;
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, dst, sizeof zero, &zero, kBytes, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(queue));
    // Unaligned on both sides, all but the first 7 bytes.
    ASSERT_SUCCESS(
        urUSMContextMemcpyExp(context, static_cast<char *>(dst) + 7, static_cast<char *>(src) + 7, kBytes - 7));
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), dst, kBytes, 0, nullptr, nullptr));
    std::vector<uint32_t> expect = in;
    std::memset(expect.data(), 0, 7);
    EXPECT_EQ(expect, out);
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urUSMContextMemcpyExp(context, dst, src, kBytes + 1))
        << "one byte past both allocations";
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                     urUSMContextMemcpyExp(context, static_cast<char *>(dst) + 8, src, kBytes - 4))
        << "past the destination's end";
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urUSMContextMemcpyExp(context, dst, src, 0));
    EXPECT_SUCCESS(urUSMFree(context, src));
    EXPECT_SUCCESS(urUSMFree(context, dst));
  }
}

// UR's urDeviceCreateWithNativeHandleTest.SubDeviceHandleEquality: the native handle of
// a sub-device, made a device again (twice), is that sub-device; each handle made so is
// one reference of it to release.
TEST_P(urURCtsRegressionTest, SubDeviceFromItsNativeHandle) {
  ur_device_partition_property_t equally{UR_DEVICE_PARTITION_EQUALLY, {2}};
  ur_device_partition_properties_t props{UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES, nullptr, &equally, 1};
  uint32_t n = 0;
  ur_result_t r = urDevicePartition(device(), &props, 0, nullptr, &n);
  if (r != UR_RESULT_SUCCESS || n == 0)
    GTEST_SKIP() << found().label() << " does not partition equally by 2 (" << r << ", " << n << " sub-devices)";
  std::vector<ur_device_handle_t> subs(n, nullptr);
  ASSERT_SUCCESS(urDevicePartition(device(), &props, n, subs.data(), nullptr));
  ur_native_handle_t native = 0;
  r = urDeviceGetNativeHandle(subs[0], &native);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    for (ur_device_handle_t s : subs) EXPECT_SUCCESS(urDeviceRelease(s));
    GTEST_SKIP() << found().label() << ": no native device handles";
  }
  ASSERT_SUCCESS(r);
  ur_device_handle_t a = nullptr, b = nullptr;
  ASSERT_SUCCESS(urDeviceCreateWithNativeHandle(native, adapter(), nullptr, &a));
  ASSERT_SUCCESS(urDeviceCreateWithNativeHandle(native, adapter(), nullptr, &b));
  EXPECT_EQ(subs[0], a) << "the native handle of a sub-device must give back that sub-device";
  EXPECT_EQ(a, b);
  // Three references of subs[0] now (the partition's and the two made from the native
  // handle): each releases once.
  EXPECT_SUCCESS(urDeviceRelease(a));
  EXPECT_SUCCESS(urDeviceRelease(b));
  for (ur_device_handle_t s : subs) EXPECT_SUCCESS(urDeviceRelease(s));
}

// UR's urQueueGetInfoDeviceQueueTestWithInfoParam: a device that reports queues on the
// device makes one (out of order, the device's default), which answers
// UR_QUEUE_INFO_DEVICE_DEFAULT (itself) and UR_QUEUE_INFO_SIZE, and is released cleanly.
TEST_P(urURCtsRegressionTest, QueueOnTheDevice) {
  ur_queue_flags_t on_device = 0;
  ur_result_t r = conf::info(device(), UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES, on_device);
  if (r != UR_RESULT_SUCCESS || on_device == 0) GTEST_SKIP() << found().label() << " reports no queues on the device";
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                              UR_QUEUE_FLAG_ON_DEVICE | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT |
                                  UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  ur_queue_handle_t device_queue = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), &props, &device_queue));
  ur_queue_handle_t default_queue = nullptr;
  EXPECT_SUCCESS(
      urQueueGetInfo(device_queue, UR_QUEUE_INFO_DEVICE_DEFAULT, sizeof default_queue, &default_queue, nullptr));
  EXPECT_EQ(device_queue, default_queue);
  uint32_t size = 0;
  EXPECT_SUCCESS(urQueueGetInfo(device_queue, UR_QUEUE_INFO_SIZE, sizeof size, &size, nullptr));
  EXPECT_GT(size, 0u);
  ur_queue_flags_t flags = 0;
  EXPECT_SUCCESS(urQueueGetInfo(device_queue, UR_QUEUE_INFO_FLAGS, sizeof flags, &flags, nullptr));
  EXPECT_TRUE(flags & UR_QUEUE_FLAG_ON_DEVICE);
  // The host finishes nothing on it (only kernels enqueue to a device queue).
  EXPECT_SUCCESS(urQueueFinish(device_queue));
  EXPECT_SUCCESS(urQueueRelease(device_queue));
  // A host queue has no device-queue size.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_QUEUE,
                   urQueueGetInfo(queue, UR_QUEUE_INFO_SIZE, sizeof size, &size, nullptr));
}

// UR's suite makes the stand-in event of its wait-list refusals with
// urEventCreateWithNativeHandle(0, hContext, NULL, &event) (uur::MakeDummyEventForWaitList:
// urEnqueueEventsWaitTest.InvalidNullPtrEventWaitList and ~20 more of the enqueue group).
// Every Ordo adapter takes 0 (docs/adapter-guide.md, "The contract"): an event of the
// context with no native object, complete from the start, met in any wait list of the
// context's queues, the stream-ordered alloc and free, command buffers and graph capture
// included.
TEST_P(urURCtsRegressionTest, NullNativeEventIsComplete) {
  constexpr size_t kCount = 1024, kBytes = kCount * sizeof(uint32_t);
  ur_event_handle_t none = nullptr;
  ur_result_t r = urEventCreateWithNativeHandle(0, context, nullptr, &none);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << found().label() << " makes no event of a native handle";
  ASSERT_SUCCESS(r);
  std::vector<ur_event_handle_t> events{none}; // each released once at the end
  ur_queue_handle_t ooo = nullptr;
  std::vector<void *> allocations;
  std::string left_out; // the parts the device offers nothing for, said at the end
  // Released however the test ends (an ASSERT returns early).
  struct Cleanup {
    std::function<void()> run;
    ~Cleanup() { run(); }
  } cleanup{[&] {
    if (!left_out.empty()) std::printf("[ not run  ] %s:%s\n", found().label().c_str(), left_out.c_str());
    urQueueFinish(queue);
    if (ooo) {
      EXPECT_SUCCESS(urQueueFinish(ooo));
      EXPECT_SUCCESS(urQueueRelease(ooo));
    }
    for (ur_event_handle_t e : events) EXPECT_SUCCESS(urEventRelease(e));
    for (void *p : allocations) EXPECT_SUCCESS(urUSMFree(context, p));
  }};

  // What it answers.
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urEventGetInfo(none, UR_EVENT_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  ur_queue_handle_t q = queue;
  ASSERT_SUCCESS(urEventGetInfo(none, UR_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, nullptr));
  EXPECT_EQ(nullptr, q) << "no command, no queue";
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
  ASSERT_SUCCESS(urEventGetInfo(none, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_COMMAND_EVENTS_WAIT, type);
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(none));
  EXPECT_EQ(1u, conf::reference_count(none));
  ur_native_handle_t native = 1;
  ASSERT_SUCCESS(urEventGetNativeHandle(none, &native));
  EXPECT_EQ(0u, native) << "no native object";
  uint64_t t = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                   urEventGetProfilingInfo(none, UR_PROFILING_INFO_COMMAND_START, sizeof t, &t, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                   urEventGetProfilingInfo(none, UR_PROFILING_INFO_COMMAND_END, sizeof t, nullptr, nullptr));
  ASSERT_SUCCESS(urEventWait(1, &none));
  ASSERT_SUCCESS(urEventRetain(none));
  EXPECT_EQ(2u, conf::reference_count(none));
  ASSERT_SUCCESS(urEventRelease(none));
  EXPECT_EQ(1u, conf::reference_count(none));
  // Another one is another event; ownership means nothing without a native object.
  ur_event_native_properties_t owned{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, true};
  ur_event_handle_t second = nullptr;
  ASSERT_SUCCESS(urEventCreateWithNativeHandle(0, context, &owned, &second));
  events.push_back(second);
  EXPECT_NE(none, second);
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(second));

  // A callback for any status is due at once (it may run on another thread).
  struct Seen {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<ur_event_handle_t, ur_execution_info_t>> calls;
  } seen;
  ur_event_callback_t note = [](ur_event_handle_t e, ur_execution_info_t s, void *user) {
    auto *w = static_cast<Seen *>(user);
    std::lock_guard<std::mutex> lock(w->m);
    w->calls.emplace_back(e, s);
    w->cv.notify_all();
  };
  r = urEventSetCallback(none, UR_EXECUTION_INFO_COMPLETE, note, &seen);
  if (r != UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    ASSERT_SUCCESS(r);
    ASSERT_SUCCESS(urEventSetCallback(none, UR_EXECUTION_INFO_SUBMITTED, note, &seen));
    ASSERT_SUCCESS(urEventSetCallback(none, UR_EXECUTION_INFO_RUNNING, note, &seen));
    std::unique_lock<std::mutex> lock(seen.m);
    seen.cv.wait(lock, [&] { return seen.calls.size() >= 3; });
    EXPECT_EQ(3u, seen.calls.size());
    for (auto &call : seen.calls) EXPECT_EQ(none, call.first);
  } else {
    left_out += " callbacks (urEventSetCallback unsupported);";
  }

  // In wait lists: commands that wait for it run, alone and with real events.
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kBytes, &mem));
  allocations.push_back(mem);
  auto expect_words = [&](ur_queue_handle_t on, uint32_t v, uint32_t n, const ur_event_handle_t *w, const char *what) {
    std::vector<uint32_t> out(kCount, ~v);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(on, true, out.data(), mem, kBytes, n, w, nullptr)) << what;
    EXPECT_EQ(std::vector<uint32_t>(kCount, v), out) << what;
  };
  ur_event_handle_t filled = nullptr;
  uint32_t v = 0x11;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, sizeof v, &v, kBytes, 1, &none, &filled));
  events.push_back(filled);
  ur_event_handle_t both[2] = {filled, none};
  ASSERT_SUCCESS(urEventWait(2, both));
  {
    SCOPED_TRACE("in-order queue");
    expect_words(queue, v, 2, both, "a copy after the fill and the null-native event");
  }
  ur_event_handle_t waited = nullptr, barrier = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 1, &none, &waited));
  events.push_back(waited);
  ASSERT_SUCCESS(urEnqueueEventsWaitWithBarrier(queue, 2, both, &barrier));
  events.push_back(barrier);
  ASSERT_SUCCESS(urEventWait(1, &barrier));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(waited));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(barrier));

  if (conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
    SCOPED_TRACE("out-of-order queue");
    ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooo));
    v = 0x22;
    ur_event_handle_t ooo_fill = nullptr, ooo_wait = nullptr, ooo_barrier = nullptr;
    ASSERT_SUCCESS(urEnqueueUSMFill(ooo, mem, sizeof v, &v, kBytes, 1, &none, &ooo_fill));
    events.push_back(ooo_fill);
    ur_event_handle_t after_fill[2] = {none, ooo_fill};
    ASSERT_SUCCESS(urEnqueueEventsWait(ooo, 2, after_fill, &ooo_wait));
    events.push_back(ooo_wait);
    ASSERT_SUCCESS(urEnqueueEventsWaitWithBarrier(ooo, 1, &none, &ooo_barrier));
    events.push_back(ooo_barrier);
    expect_words(ooo, v, 1, &ooo_wait, "a copy after a wait for the fill and the null-native event");
    ASSERT_SUCCESS(urEventWait(1, &ooo_barrier));
  } else {
    left_out += " out-of-order queue (not in UR_DEVICE_INFO_QUEUE_PROPERTIES);";
  }

  // The stream-ordered alloc and free.
  ur_bool_t async = false;
  if (conf::info(device(), UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, async) == UR_RESULT_SUCCESS && async) {
    for (ur_queue_handle_t on : {queue, ooo}) {
      if (!on) continue;
      SCOPED_TRACE(on == queue ? "stream-ordered, in-order queue" : "stream-ordered, out-of-order queue");
      void *block = nullptr;
      ur_event_handle_t allocated = nullptr, set = nullptr, freed = nullptr;
      ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(on, nullptr, kBytes, nullptr, 1, &none, &block, &allocated));
      events.push_back(allocated);
      ASSERT_NE(nullptr, block);
      v = 0x33;
      ur_event_handle_t after_alloc[2] = {allocated, none};
      ASSERT_SUCCESS(urEnqueueUSMFill(on, block, sizeof v, &v, kBytes, 2, after_alloc, &set));
      events.push_back(set);
      std::vector<uint32_t> out(kCount, 0);
      ASSERT_SUCCESS(urEnqueueUSMMemcpy(on, true, out.data(), block, kBytes, 1, &set, nullptr));
      EXPECT_EQ(std::vector<uint32_t>(kCount, v), out);
      ASSERT_SUCCESS(urEnqueueUSMFreeExp(on, nullptr, block, 1, &none, &freed));
      events.push_back(freed);
      ASSERT_SUCCESS(urEventWait(1, &freed));
    }
  } else {
    left_out += " stream-ordered alloc and free (no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP);";
  }

  // A command buffer's enqueue.
  ur_bool_t command_buffers = false;
  if (conf::info(device(), UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP, command_buffers) == UR_RESULT_SUCCESS &&
      command_buffers) {
    SCOPED_TRACE("command buffer");
    ur_exp_command_buffer_desc_t desc{UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC, nullptr, false, false, false};
    ur_exp_command_buffer_handle_t cb = nullptr;
    ASSERT_SUCCESS(urCommandBufferCreateExp(context, device(), &desc, &cb));
    v = 0x44;
    ur_result_t appended = urCommandBufferAppendUSMFillExp(cb, mem, &v, sizeof v, kBytes, 0, nullptr, 0, nullptr,
                                                           nullptr, nullptr, nullptr);
    ur_result_t finalized = appended == UR_RESULT_SUCCESS ? urCommandBufferFinalizeExp(cb) : appended;
    ur_event_handle_t ran = nullptr;
    ur_result_t enqueued =
        finalized == UR_RESULT_SUCCESS ? urEnqueueCommandBufferExp(queue, cb, 1, &none, &ran) : finalized;
    if (ran) events.push_back(ran);
    EXPECT_SUCCESS(appended);
    EXPECT_SUCCESS(finalized);
    EXPECT_SUCCESS(enqueued);
    if (ran) {
      EXPECT_SUCCESS(urEventWait(1, &ran));
      expect_words(queue, v, 0, nullptr, "what the command buffer's fill wrote");
    }
    EXPECT_SUCCESS(urQueueFinish(queue));
    EXPECT_SUCCESS(urCommandBufferReleaseExp(cb));
  } else {
    left_out += " command buffer (no UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP);";
  }

  // Graph capture: a captured command that waits for it runs on replay.
  ur_bool_t graphs = false;
  if (conf::info(device(), UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP, graphs) == UR_RESULT_SUCCESS && graphs) {
    SCOPED_TRACE("graph capture");
    v = 0x55;
    ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
    ur_result_t captured = urEnqueueUSMFill(queue, mem, sizeof v, &v, kBytes, 1, &none, nullptr);
    ur_exp_graph_handle_t graph = nullptr;
    ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
    EXPECT_SUCCESS(captured);
    ur_exp_executable_graph_handle_t exec = nullptr;
    EXPECT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));
    if (exec) {
      ur_event_handle_t replayed = nullptr;
      EXPECT_SUCCESS(urEnqueueGraphExp(queue, exec, 1, &none, &replayed));
      if (replayed) {
        events.push_back(replayed);
        EXPECT_SUCCESS(urEventWait(1, &replayed));
        expect_words(queue, v, 0, nullptr, "what the replayed fill wrote");
      }
      EXPECT_SUCCESS(urQueueFinish(queue));
      EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
    }
    EXPECT_SUCCESS(urGraphDestroyExp(graph));
  } else {
    left_out += " graph capture (no UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP);";
  }
}

// UR's urEnqueueTimestampRecordingExpTest.ReleaseEventWhileTimestampWritePending: an event
// of a queue without profiling asked for a time with no buffer and no size pointer answers
// PROFILING_INFO_NOT_AVAILABLE (the spec's one value rule for this query is `pPropValue &&
// propSize == 0`), also when the adapter recycled the event of a timestamp recording.
// On a profiling queue the same call says whether the time is there: SUCCESS once the
// command is complete.
TEST_P(urURCtsRegressionTest, ProfilingInfoWithNoBufferOfAnUntimedEvent) {
  constexpr size_t kBytes = 64 * 1024;
  void *mem = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kBytes, &mem));
  const uint8_t pattern = 0xFF;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, 1, &pattern, kBytes, 0, nullptr, nullptr));
  ur_bool_t timestamps = false;
  if (conf::info(device(), UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP, timestamps) == UR_RESULT_SUCCESS &&
      timestamps) {
    ur_event_handle_t stamp = nullptr;
    ASSERT_SUCCESS(urEnqueueTimestampRecordingExp(queue, false, 0, nullptr, &stamp));
    EXPECT_SUCCESS(urEventRelease(stamp));
  }
  ur_event_handle_t filled = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem, 1, &pattern, kBytes, 0, nullptr, &filled));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
      urEventGetProfilingInfo(filled, UR_PROFILING_INFO_COMMAND_QUEUED, sizeof(uint64_t), nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                   urEventGetProfilingInfo(filled, UR_PROFILING_INFO_COMMAND_END, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEventWait(1, &filled));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                   urEventGetProfilingInfo(filled, UR_PROFILING_INFO_COMMAND_END, 0, nullptr, nullptr))
      << "complete, and still no timestamps";
  EXPECT_SUCCESS(urEventRelease(filled));
  if (conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_PROFILING_ENABLE)) {
    ur_queue_handle_t timed = nullptr;
    ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_PROFILING_ENABLE, &timed));
    ur_event_handle_t e = nullptr;
    EXPECT_SUCCESS(urEnqueueUSMFill(timed, mem, 1, &pattern, kBytes, 0, nullptr, &e));
    if (e) {
      EXPECT_SUCCESS(urEventWait(1, &e));
      EXPECT_SUCCESS(urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, sizeof(uint64_t), nullptr, nullptr));
      EXPECT_SUCCESS(urEventRelease(e));
    }
    EXPECT_SUCCESS(urQueueFinish(timed));
    EXPECT_SUCCESS(urQueueRelease(timed));
  }
  EXPECT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urUSMFree(context, mem));
}

CONF_INSTANTIATE_DEVICE_SUITE(urURCtsRegressionTest);

} // namespace
