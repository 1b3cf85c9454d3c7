// SPDX-License-Identifier: Apache-2.0
// Native handles round trip (docs/native-cpu.md, "Native handles"): for the platform,
// device, context, queue, event, program and kernel, a handle made from another's native
// handle answers the same object (same native handle, same info) and is released on its
// own. On native CPU, where the native handle is the adapter's object, a pointer that is
// no live object of the kind is refused with the kind's error and ownership is checked
// through the reference count. An adapter without native handles skips, saying so.
#include "conformance.hpp"

namespace {

class urNativeHandleTest : public conf::ProgramTest {
protected:
  bool native_cpu() const { return backend() == UR_BACKEND_NATIVE_CPU; }
  // CUDA and HIP: native handles are driver handles the adapter can look up.
  bool stream_backend() const { return backend() == UR_BACKEND_CUDA || backend() == UR_BACKEND_HIP; }
  int foreign_ = 0; // an address that is no object of any adapter
  ur_native_handle_t foreign() { return reinterpret_cast<ur_native_handle_t>(&foreign_); }
};

#define NATIVE_OR_SKIP(call, what)                                                                                     \
  do {                                                                                                                 \
    ur_result_t r_ = (call);                                                                                           \
    if (r_ == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)                                                                     \
      GTEST_SKIP() << what << " has no native handle on " << found().label();                                          \
    ASSERT_SUCCESS(r_);                                                                                                \
  } while (0)

TEST_P(urNativeHandleTest, Device) {
  ur_native_handle_t nd = 0;
  NATIVE_OR_SKIP(urDeviceGetNativeHandle(device(), &nd), "the device");
  ur_device_handle_t d = nullptr;
  NATIVE_OR_SKIP(urDeviceCreateWithNativeHandle(nd, adapter(), nullptr, &d), "the device");
  EXPECT_EQ(device(), d) << "a root device is made once";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urDeviceCreateWithNativeHandle(nd, adapter(), nullptr, nullptr));
  if (stream_backend()) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE,
              urDeviceCreateWithNativeHandle(static_cast<ur_native_handle_t>(4096), adapter(), nullptr, &d))
        << "no device has that driver ordinal";
  }
}

TEST_P(urNativeHandleTest, PlatformAndDevice) {
  ur_native_handle_t np = 0, nd = 0;
  NATIVE_OR_SKIP(urPlatformGetNativeHandle(platform(), &np), "the platform");
  ur_platform_handle_t p = nullptr;
  NATIVE_OR_SKIP(urPlatformCreateWithNativeHandle(np, adapter(), nullptr, &p), "the platform");
  EXPECT_EQ(platform(), p);
  NATIVE_OR_SKIP(urDeviceGetNativeHandle(device(), &nd), "the device");
  ur_device_handle_t d = nullptr;
  NATIVE_OR_SKIP(urDeviceCreateWithNativeHandle(nd, adapter(), nullptr, &d), "the device");
  EXPECT_EQ(device(), d);
  if (native_cpu()) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_PLATFORM, urPlatformCreateWithNativeHandle(foreign(), adapter(), nullptr, &p));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, urDeviceCreateWithNativeHandle(foreign(), adapter(), nullptr, &d));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_DEVICE, urDeviceCreateWithNativeHandle(np, adapter(), nullptr, &d))
        << "the platform is no device";
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urDeviceGetNativeHandle(device(), nullptr));
  }
}

TEST_P(urNativeHandleTest, Context) {
  ur_native_handle_t n = 0, again = 0;
  NATIVE_OR_SKIP(urContextGetNativeHandle(context, &n), "the context");
  ur_device_handle_t dev = device();
  ur_context_native_properties_t keep{UR_STRUCTURE_TYPE_CONTEXT_NATIVE_PROPERTIES, nullptr, false};
  ur_context_handle_t c = nullptr;
  NATIVE_OR_SKIP(urContextCreateWithNativeHandle(n, adapter(), 1, &dev, &keep, &c), "the context");
  ASSERT_SUCCESS(urContextGetNativeHandle(c, &again));
  EXPECT_EQ(n, again);
  uint32_t num = 0;
  ASSERT_SUCCESS(urContextGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, sizeof num, &num, nullptr));
  EXPECT_EQ(1u, num);
  EXPECT_SUCCESS(urContextRelease(c));
  ASSERT_SUCCESS(urContextGetInfo(context, UR_CONTEXT_INFO_NUM_DEVICES, sizeof num, &num, nullptr))
      << "releasing the handle made without ownership released the original";
  if (stream_backend()) {
    int not_a_context = 0;
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT,
              urContextCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(&not_a_context), adapter(), 1, &dev,
                                              &keep, &c))
        << "only a device's primary context is taken";
    ASSERT_SUCCESS(urContextCreateWithNativeHandle(n, adapter(), 0, nullptr, &keep, &c))
        << "no device list: its device";
    ASSERT_SUCCESS(urContextGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, sizeof num, &num, nullptr));
    EXPECT_EQ(1u, num);
    EXPECT_SUCCESS(urContextRelease(c));
  }
  if (!native_cpu()) return;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urContextCreateWithNativeHandle(foreign(), adapter(), 1, &dev, &keep, &c));
  // Ownership: with it, the new handle takes over the holder's reference.
  ur_context_handle_t mine = nullptr, owner = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &mine));
  ASSERT_SUCCESS(urContextGetNativeHandle(mine, &n));
  ASSERT_SUCCESS(urContextCreateWithNativeHandle(n, adapter(), 1, &dev, &keep, &c));
  uint32_t refs = 0;
  ASSERT_SUCCESS(urContextGetInfo(mine, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(2u, refs) << "without ownership the new handle holds its own reference";
  EXPECT_SUCCESS(urContextRelease(c));
  ur_context_native_properties_t own{UR_STRUCTURE_TYPE_CONTEXT_NATIVE_PROPERTIES, nullptr, true};
  ASSERT_SUCCESS(urContextCreateWithNativeHandle(n, adapter(), 1, &dev, &own, &owner));
  ASSERT_SUCCESS(urContextGetInfo(owner, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
  EXPECT_EQ(1u, refs) << "with ownership the count is the holder's";
  EXPECT_SUCCESS(urContextRelease(owner)); // the last reference: `mine` is gone with it
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urContextCreateWithNativeHandle(n, adapter(), 1, &dev, &keep, &c))
      << "a released context's native handle";
}

TEST_P(urNativeHandleTest, Queue) {
  ur_native_handle_t n = 0, again = 0;
  NATIVE_OR_SKIP(urQueueGetNativeHandle(queue, nullptr, &n), "the queue");
  ur_queue_native_properties_t keep{UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, nullptr, false};
  ur_queue_handle_t q = nullptr;
  NATIVE_OR_SKIP(urQueueCreateWithNativeHandle(n, context, device(), &keep, &q), "the queue");
  ASSERT_SUCCESS(urQueueGetNativeHandle(q, nullptr, &again));
  EXPECT_EQ(n, again);
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urQueueGetInfo(q, UR_QUEUE_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  ASSERT_SUCCESS(urEnqueueEventsWait(q, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urQueueRelease(q));
  ASSERT_SUCCESS(urQueueFinish(queue)) << "the original still works";
  if (!native_cpu()) return;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueCreateWithNativeHandle(foreign(), context, device(), &keep, &q));
  ur_native_handle_t nc = 0;
  ASSERT_SUCCESS(urContextGetNativeHandle(context, &nc));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_QUEUE, urQueueCreateWithNativeHandle(nc, context, device(), &keep, &q))
      << "a context is no queue";
  ur_device_handle_t dev = device();
  ur_context_handle_t other = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_CONTEXT, urQueueCreateWithNativeHandle(n, other, device(), &keep, &q))
      << "the queue of another context";
  EXPECT_SUCCESS(urContextRelease(other));
}

TEST_P(urNativeHandleTest, Event) {
  ur_event_handle_t e = nullptr, copy = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(queue, 0, nullptr, &e));
  ur_native_handle_t n = 0, again = 0;
  ur_result_t r = urEventGetNativeHandle(e, &n);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    EXPECT_SUCCESS(urEventRelease(e));
    GTEST_SKIP() << "the event has no native handle on " << found().label();
  }
  ASSERT_SUCCESS(r);
  ur_event_native_properties_t keep{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, false};
  ASSERT_SUCCESS(urEventCreateWithNativeHandle(n, context, &keep, &copy));
  ASSERT_SUCCESS(urEventGetNativeHandle(copy, &again));
  EXPECT_EQ(n, again);
  ASSERT_SUCCESS(urEventWait(1, &copy));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(copy));
  EXPECT_SUCCESS(urEventRelease(copy));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(e)) << "the original outlives the copy";
  if (native_cpu()) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventCreateWithNativeHandle(foreign(), context, &keep, &copy));
    ur_event_native_properties_t own{UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, nullptr, true};
    ASSERT_SUCCESS(urEventCreateWithNativeHandle(n, context, &own, &copy));
    uint32_t refs = 0;
    ASSERT_SUCCESS(urEventGetInfo(copy, UR_EVENT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr));
    EXPECT_EQ(1u, refs) << "with ownership the count is the holder's";
    EXPECT_SUCCESS(urEventRelease(copy)); // the original's reference, taken over
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventCreateWithNativeHandle(n, context, &keep, &copy))
        << "a released event's native handle";
    return;
  }
  EXPECT_SUCCESS(urEventRelease(e));
}

TEST_P(urNativeHandleTest, ProgramAndKernel) {
  // Released on every way out, a skip or a failed assertion included.
  struct Made {
    ur_program_handle_t p = nullptr;
    ur_kernel_handle_t k = nullptr, k2 = nullptr;
    ~Made() {
      if (k2) {
        EXPECT_SUCCESS(urKernelRelease(k2));
      }
      if (k) {
        EXPECT_SUCCESS(urKernelRelease(k));
      }
      if (p) {
        EXPECT_SUCCESS(urProgramRelease(p));
      }
    }
  };
  ur_native_handle_t np = 0, nk = 0, again = 0;
  NATIVE_OR_SKIP(urProgramGetNativeHandle(program, &np), "the program");
  ur_program_native_properties_t pkeep{UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES, nullptr, false};
  {
    Made made;
    NATIVE_OR_SKIP(urProgramCreateWithNativeHandle(np, context, &pkeep, &made.p), "the program");
    ASSERT_SUCCESS(urProgramGetNativeHandle(made.p, &again));
    EXPECT_EQ(np, again);
    ASSERT_SUCCESS(urKernelCreate(made.p, "fill", &made.k)) << "a kernel of the program made from the native handle";
    NATIVE_OR_SKIP(urKernelGetNativeHandle(made.k, &nk), "the kernel");
    ur_kernel_native_properties_t kkeep{UR_STRUCTURE_TYPE_KERNEL_NATIVE_PROPERTIES, nullptr, false};
    NATIVE_OR_SKIP(urKernelCreateWithNativeHandle(nk, context, made.p, &kkeep, &made.k2), "the kernel");
    ASSERT_SUCCESS(urKernelGetNativeHandle(made.k2, &again));
    EXPECT_EQ(nk, again);
    uint32_t args = 0, args2 = 1;
    ASSERT_SUCCESS(urKernelGetInfo(made.k, UR_KERNEL_INFO_NUM_ARGS, sizeof args, &args, nullptr));
    ASSERT_SUCCESS(urKernelGetInfo(made.k2, UR_KERNEL_INFO_NUM_ARGS, sizeof args2, &args2, nullptr));
    EXPECT_EQ(args, args2);
    if (native_cpu()) {
      ur_program_handle_t p = nullptr;
      ur_kernel_handle_t k2 = nullptr;
      EXPECT_EQ(UR_RESULT_ERROR_INVALID_PROGRAM, urProgramCreateWithNativeHandle(foreign(), context, &pkeep, &p));
      EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL,
                urKernelCreateWithNativeHandle(foreign(), context, made.p, &kkeep, &k2));
      EXPECT_EQ(UR_RESULT_ERROR_INVALID_KERNEL, urKernelCreateWithNativeHandle(np, context, made.p, &kkeep, &k2))
          << "a program is no kernel";
    }
  }
  ur_kernel_handle_t k3 = make_kernel("fill");
  EXPECT_NE(nullptr, k3) << "the original program outlives the copy";
  if (k3) {
    EXPECT_SUCCESS(urKernelRelease(k3));
  }
}

CONF_INSTANTIATE_DEVICE_SUITE(urNativeHandleTest);

} // namespace
