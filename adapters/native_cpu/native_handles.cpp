// SPDX-License-Identifier: Apache-2.0
// Native handles the other files leave (docs/native-cpu.md, "Native handles"): a native
// handle is the UR handle's value, checked against the handle registry (anything not a
// live object of the kind, of the given context, gets the kind's INVALID_* error). With
// isNativeHandleOwned the new handle takes over the holder's reference; without it, it
// holds one more (urXRetain). The platform and the device are not reference counted.
#include "context.hpp"
#include "entry_points.hpp"
#include "kernel.hpp"
#include "platform.hpp"
#include "program.hpp"
#include "queue.hpp"

namespace ordo::native_cpu {

namespace {

template <class T, class H> ur_result_t UR_APICALL get_native(H h, ur_native_handle_t *out) {
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

// The platform and the device are singletons: a native handle names the one there is.
template <class H, bool (*Is)(H), ur_result_t Invalid, class P>
ur_result_t UR_APICALL singleton_from_native(ur_native_handle_t hNative, ur_adapter_handle_t hAdapter, const P *,
                                             H *out) {
  if (!is_adapter(hAdapter)) return bad_handle(hAdapter, UR_RESULT_ERROR_INVALID_ARGUMENT);
  if (!out) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!Is(reinterpret_cast<H>(hNative))) return Invalid;
  *out = reinterpret_cast<H>(hNative);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urContextCreateWithNativeHandle(ur_native_handle_t hNativeContext, ur_adapter_handle_t hAdapter,
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

ur_result_t UR_APICALL urQueueGetNativeHandle(ur_queue_handle_t h, ur_queue_native_desc_t *, ur_native_handle_t *out) {
  return get_native<Queue>(h, out);
}

Context *context_of(Queue *q) { return q->context; }
Context *context_of(Program *p) { return p->ctx; }
Context *context_of(Kernel *k) { return k->program->ctx; }

// urXCreateWithNativeHandle of an object of a context: `arg_check` is the result of the
// entry point's other handle checks, refused after the context's. A kernel's `program`,
// if not null, must be its own.
template <class T, class P>
ur_result_t adopt_native(ur_native_handle_t hNative, ur_context_handle_t hContext, ur_result_t arg_check,
                         const P *pProperties, typename T::handle_type *out, Program *program = nullptr) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (arg_check) return arg_check;
  if (!out) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  T *obj = from_native<T>(hNative);
  if (!obj) return T::kInvalid;
  if (context_of(obj) != ctx) return UR_RESULT_ERROR_INVALID_CONTEXT;
  if constexpr (std::is_same_v<T, Kernel>)
    if (program && obj->program != program) return UR_RESULT_ERROR_INVALID_PROGRAM;
  return adopt(obj, pProperties && pProperties->isNativeHandleOwned, out);
}

ur_result_t UR_APICALL urQueueCreateWithNativeHandle(ur_native_handle_t hNativeQueue, ur_context_handle_t hContext,
                                                     ur_device_handle_t hDevice,
                                                     const ur_queue_native_properties_t *pProperties,
                                                     ur_queue_handle_t *phQueue) {
  const ur_result_t dev = hDevice && !is_device(hDevice) ? device_error(hDevice) : UR_RESULT_SUCCESS;
  return adopt_native<Queue>(hNativeQueue, hContext, dev, pProperties, phQueue);
}

ur_result_t UR_APICALL urProgramCreateWithNativeHandle(ur_native_handle_t hNativeProgram, ur_context_handle_t hContext,
                                                       const ur_program_native_properties_t *pProperties,
                                                       ur_program_handle_t *phProgram) {
  return adopt_native<Program>(hNativeProgram, hContext, UR_RESULT_SUCCESS, pProperties, phProgram);
}

ur_result_t UR_APICALL urKernelCreateWithNativeHandle(ur_native_handle_t hNativeKernel, ur_context_handle_t hContext,
                                                      ur_program_handle_t hProgram,
                                                      const ur_kernel_native_properties_t *pProperties,
                                                      ur_kernel_handle_t *phKernel) {
  const ur_result_t prog =
      hProgram && !lookup<Program>(hProgram) ? Program::invalid_handle(hProgram) : UR_RESULT_SUCCESS;
  return adopt_native<Kernel>(hNativeKernel, hContext, prog, pProperties, phKernel,
                              reinterpret_cast<Program *>(hProgram));
}

} // namespace

void install_native_handle_entry_points(ur_dditable_t &t) {
  t.Platform.pfnCreateWithNativeHandle =
      singleton_from_native<ur_platform_handle_t, is_platform, UR_RESULT_ERROR_INVALID_PLATFORM>;
  t.Device.pfnCreateWithNativeHandle =
      singleton_from_native<ur_device_handle_t, is_device, UR_RESULT_ERROR_INVALID_DEVICE>;
  t.Context.pfnCreateWithNativeHandle = urContextCreateWithNativeHandle;
  t.Queue.pfnGetNativeHandle = urQueueGetNativeHandle;
  t.Queue.pfnCreateWithNativeHandle = urQueueCreateWithNativeHandle;
  t.Program.pfnGetNativeHandle = get_native<Program, ur_program_handle_t>;
  t.Program.pfnCreateWithNativeHandle = urProgramCreateWithNativeHandle;
  t.Kernel.pfnCreateWithNativeHandle = urKernelCreateWithNativeHandle;
}

} // namespace ordo::native_cpu
