// urXGetNativeHandle / urXCreateWithNativeHandle for the platform, device, context,
// queue, event, program and kernel (buffers: memory.cpp; the platform's and context's
// urXGetNativeHandle: ur_common's, through adapter.cpp and context.cpp). The native object of a native
// CPU handle is the adapter's object itself, so a native handle is the UR handle's
// value, and making a handle from one checks it against the handle registry: anything
// that is not a live object of that kind (of the given context, where one is given) is
// refused with the kind's INVALID_* error, never dereferenced.
//
// Ownership (docs/native-cpu.md, "Native handles"): with isNativeHandleOwned the new
// handle takes over the reference the native handle's holder had (the count does not
// change; releasing the new handle releases that reference); without it the new handle
// holds a reference of its own (one more urXRetain), and the holder keeps theirs.
// The platform and the device are not reference counted.
#include "context.hpp"
#include "entry_points.hpp"
#include "event.hpp"
#include "kernel.hpp"
#include "platform.hpp"
#include "program.hpp"
#include "queue.hpp"

namespace nc {

namespace {

template <class T, class H> ur_result_t get_native(H h, ur_native_handle_t *out) {
  if (!lookup<T>(h)) return T::invalid_handle(h);
  if (!out) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *out = reinterpret_cast<ur_native_handle_t>(h);
  return UR_RESULT_SUCCESS;
}

// The object a native handle names, if it is a live one of kind T.
template <class T> T *from_native(ur_native_handle_t n) {
  return lookup<T>(reinterpret_cast<typename T::handle_type>(n));
}

template <class T> ur_result_t adopt(T *obj, bool owned, typename T::handle_type *out) {
  if (!owned) obj->retain();
  *out = reinterpret_cast<typename T::handle_type>(obj);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL platformCreateWithNativeHandle(ur_native_handle_t hNativePlatform, ur_adapter_handle_t hAdapter,
                                                      const ur_platform_native_properties_t *,
                                                      ur_platform_handle_t *phPlatform) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (!phPlatform) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  auto p = reinterpret_cast<ur_platform_handle_t>(hNativePlatform);
  if (!is_platform(p)) return UR_RESULT_ERROR_INVALID_PLATFORM;
  *phPlatform = p;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL deviceGetNativeHandle(ur_device_handle_t hDevice, ur_native_handle_t *phNativeDevice) {
  if (!is_device(hDevice)) return device_error(hDevice);
  if (!phNativeDevice) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  *phNativeDevice = reinterpret_cast<ur_native_handle_t>(hDevice);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL deviceCreateWithNativeHandle(ur_native_handle_t hNativeDevice, ur_adapter_handle_t hAdapter,
                                                    const ur_device_native_properties_t *,
                                                    ur_device_handle_t *phDevice) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (!phDevice) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  auto d = reinterpret_cast<ur_device_handle_t>(hNativeDevice);
  if (!is_device(d)) return UR_RESULT_ERROR_INVALID_DEVICE;
  *phDevice = d;
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL contextCreateWithNativeHandle(ur_native_handle_t hNativeContext, ur_adapter_handle_t hAdapter,
                                                     uint32_t numDevices, const ur_device_handle_t *phDevices,
                                                     const ur_context_native_properties_t *pProperties,
                                                     ur_context_handle_t *phContext) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (!phContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (numDevices && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; i < numDevices; ++i)
    if (!is_device(phDevices[i])) return device_error(phDevices[i]);
  Context *ctx = from_native<Context>(hNativeContext);
  if (!ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return adopt(ctx, pProperties && pProperties->isNativeHandleOwned, phContext);
}

ur_result_t UR_APICALL queueGetNativeHandle(ur_queue_handle_t h, ur_queue_native_desc_t *, ur_native_handle_t *out) {
  return get_native<Queue>(h, out);
}

ur_result_t UR_APICALL queueCreateWithNativeHandle(ur_native_handle_t hNativeQueue, ur_context_handle_t hContext,
                                                   ur_device_handle_t hDevice,
                                                   const ur_queue_native_properties_t *pProperties,
                                                   ur_queue_handle_t *phQueue) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (hDevice && !is_device(hDevice)) return device_error(hDevice);
  if (!phQueue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Queue *q = from_native<Queue>(hNativeQueue);
  if (!q) return UR_RESULT_ERROR_INVALID_QUEUE;
  if (q->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return adopt(q, pProperties && pProperties->isNativeHandleOwned, phQueue);
}

ur_result_t UR_APICALL eventGetNativeHandle(ur_event_handle_t h, ur_native_handle_t *out) {
  return get_native<Event>(h, out);
}

ur_result_t UR_APICALL eventCreateWithNativeHandle(ur_native_handle_t hNativeEvent, ur_context_handle_t hContext,
                                                   const ur_event_native_properties_t *pProperties,
                                                   ur_event_handle_t *phEvent) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Event *e = from_native<Event>(hNativeEvent);
  if (!e) return UR_RESULT_ERROR_INVALID_EVENT;
  if (e->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return adopt(e, pProperties && pProperties->isNativeHandleOwned, phEvent);
}

ur_result_t UR_APICALL programGetNativeHandle(ur_program_handle_t h, ur_native_handle_t *out) {
  return get_native<Program>(h, out);
}

ur_result_t UR_APICALL programCreateWithNativeHandle(ur_native_handle_t hNativeProgram, ur_context_handle_t hContext,
                                                     const ur_program_native_properties_t *pProperties,
                                                     ur_program_handle_t *phProgram) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!phProgram) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Program *p = from_native<Program>(hNativeProgram);
  if (!p) return UR_RESULT_ERROR_INVALID_PROGRAM;
  if (p->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  return adopt(p, pProperties && pProperties->isNativeHandleOwned, phProgram);
}

ur_result_t UR_APICALL kernelGetNativeHandle(ur_kernel_handle_t h, ur_native_handle_t *out) {
  return get_native<Kernel>(h, out);
}

ur_result_t UR_APICALL kernelCreateWithNativeHandle(ur_native_handle_t hNativeKernel, ur_context_handle_t hContext,
                                                    ur_program_handle_t hProgram,
                                                    const ur_kernel_native_properties_t *pProperties,
                                                    ur_kernel_handle_t *phKernel) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (hProgram && !lookup<Program>(hProgram)) return Program::invalid_handle(hProgram);
  if (!phKernel) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  Kernel *k = from_native<Kernel>(hNativeKernel);
  if (!k) return UR_RESULT_ERROR_INVALID_KERNEL;
  if (k->program->context != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if (hProgram && reinterpret_cast<Program *>(hProgram) != k->program) return UR_RESULT_ERROR_INVALID_PROGRAM;
  return adopt(k, pProperties && pProperties->isNativeHandleOwned, phKernel);
}

} // namespace

void install_native_handle_entry_points(ur_dditable_t &t) {
  t.Platform.pfnCreateWithNativeHandle = platformCreateWithNativeHandle;
  t.Device.pfnGetNativeHandle = deviceGetNativeHandle;
  t.Device.pfnCreateWithNativeHandle = deviceCreateWithNativeHandle;
  t.Context.pfnCreateWithNativeHandle = contextCreateWithNativeHandle;
  t.Queue.pfnGetNativeHandle = queueGetNativeHandle;
  t.Queue.pfnCreateWithNativeHandle = queueCreateWithNativeHandle;
  t.Event.pfnGetNativeHandle = eventGetNativeHandle;
  t.Event.pfnCreateWithNativeHandle = eventCreateWithNativeHandle;
  t.Program.pfnGetNativeHandle = programGetNativeHandle;
  t.Program.pfnCreateWithNativeHandle = programCreateWithNativeHandle;
  t.Kernel.pfnGetNativeHandle = kernelGetNativeHandle;
  t.Kernel.pfnCreateWithNativeHandle = kernelCreateWithNativeHandle;
}

} // namespace nc
