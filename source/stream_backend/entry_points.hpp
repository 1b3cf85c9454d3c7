// SPDX-License-Identifier: Apache-2.0
// Every UR entry point the stream backend implements, grouped by the file that
// defines it. adapter.cpp puts each into its slot of the dispatch table (the
// urUSMPool* slots are the stream-ordered layer's, pool_hooks.cpp; urAdapter*,
// urPlatform*, urContext*, urProgram*, urUSM* and the async allocs are ur_common's,
// through install_*_entry_points); every other slot gets the generated
// "unsupported" stub.
#pragma once
#include "ur_api.h"

namespace ordo::stream_backend {

// device.cpp
ur_result_t UR_APICALL urDeviceGet(ur_platform_handle_t, ur_device_type_t, uint32_t, ur_device_handle_t *, uint32_t *);
ur_result_t UR_APICALL urDeviceGetInfo(ur_device_handle_t, ur_device_info_t, size_t, void *, size_t *);
ur_result_t UR_APICALL urDeviceRetain(ur_device_handle_t);
ur_result_t UR_APICALL urDeviceRelease(ur_device_handle_t);
ur_result_t UR_APICALL urDeviceSelectBinary(ur_device_handle_t, const ur_device_binary_t *, uint32_t, uint32_t *);
ur_result_t UR_APICALL urDeviceGetNativeHandle(ur_device_handle_t, ur_native_handle_t *);
ur_result_t UR_APICALL urDeviceCreateWithNativeHandle(ur_native_handle_t, ur_adapter_handle_t,
                                                      const ur_device_native_properties_t *, ur_device_handle_t *);
ur_result_t UR_APICALL urDeviceGetGlobalTimestamps(ur_device_handle_t, uint64_t *, uint64_t *);
ur_result_t UR_APICALL urDeviceWaitExp(ur_device_handle_t);

// queue.cpp
ur_result_t UR_APICALL urQueueGetInfo(ur_queue_handle_t, ur_queue_info_t, size_t, void *, size_t *);
ur_result_t UR_APICALL urQueueCreate(ur_context_handle_t, ur_device_handle_t, const ur_queue_properties_t *,
                                     ur_queue_handle_t *);
ur_result_t UR_APICALL urQueueRetain(ur_queue_handle_t);
ur_result_t UR_APICALL urQueueRelease(ur_queue_handle_t);
ur_result_t UR_APICALL urQueueGetNativeHandle(ur_queue_handle_t, ur_queue_native_desc_t *, ur_native_handle_t *);
ur_result_t UR_APICALL urQueueCreateWithNativeHandle(ur_native_handle_t, ur_context_handle_t, ur_device_handle_t,
                                                     const ur_queue_native_properties_t *, ur_queue_handle_t *);
ur_result_t UR_APICALL urQueueFinish(ur_queue_handle_t);
ur_result_t UR_APICALL urQueueFlush(ur_queue_handle_t);

// event.cpp
ur_result_t UR_APICALL urEventGetInfo(ur_event_handle_t, ur_event_info_t, size_t, void *, size_t *);
ur_result_t UR_APICALL urEventGetProfilingInfo(ur_event_handle_t, ur_profiling_info_t, size_t, void *, size_t *);
ur_result_t UR_APICALL urEventWait(uint32_t, const ur_event_handle_t *);
ur_result_t UR_APICALL urEventRetain(ur_event_handle_t);
ur_result_t UR_APICALL urEventRelease(ur_event_handle_t);
ur_result_t UR_APICALL urEventGetNativeHandle(ur_event_handle_t, ur_native_handle_t *);
ur_result_t UR_APICALL urEventCreateWithNativeHandle(ur_native_handle_t, ur_context_handle_t,
                                                     const ur_event_native_properties_t *, ur_event_handle_t *);
ur_result_t UR_APICALL urEventSetCallback(ur_event_handle_t, ur_execution_info_t, ur_event_callback_t, void *);

// enqueue.cpp
ur_result_t UR_APICALL urEnqueueTimestampRecordingExp(ur_queue_handle_t, bool, uint32_t, const ur_event_handle_t *,
                                                      ur_event_handle_t *);

// enqueue_usm.cpp
ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t, void *, size_t, const void *, size_t, uint32_t,
                                        const ur_event_handle_t *, ur_event_handle_t *);
ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t, bool, void *, const void *, size_t, uint32_t,
                                          const ur_event_handle_t *, ur_event_handle_t *);
ur_result_t UR_APICALL urEnqueueUSMPrefetch(ur_queue_handle_t, const void *, size_t, ur_usm_migration_flags_t, uint32_t,
                                            const ur_event_handle_t *, ur_event_handle_t *);
ur_result_t UR_APICALL urEnqueueUSMAdvise(ur_queue_handle_t, const void *, size_t, ur_usm_advice_flags_t,
                                          ur_event_handle_t *);
ur_result_t UR_APICALL urEnqueueUSMFill2D(ur_queue_handle_t, void *, size_t, size_t, const void *, size_t, size_t,
                                          uint32_t, const ur_event_handle_t *, ur_event_handle_t *);
ur_result_t UR_APICALL urEnqueueUSMMemcpy2D(ur_queue_handle_t, bool, void *, size_t, const void *, size_t, size_t,
                                            size_t, uint32_t, const ur_event_handle_t *, ur_event_handle_t *);

// kernel.cpp
ur_result_t UR_APICALL urKernelCreate(ur_program_handle_t, const char *, ur_kernel_handle_t *);
ur_result_t UR_APICALL urKernelCreateWithNativeHandle(ur_native_handle_t, ur_context_handle_t, ur_program_handle_t,
                                                      const ur_kernel_native_properties_t *, ur_kernel_handle_t *);
ur_result_t UR_APICALL urKernelGetSuggestedLocalWorkSize(ur_kernel_handle_t, ur_queue_handle_t, uint32_t,
                                                         const size_t *, const size_t *, size_t *);
ur_result_t UR_APICALL urKernelSetExecInfo(ur_kernel_handle_t, ur_kernel_exec_info_t, size_t,
                                           const ur_kernel_exec_info_properties_t *, const void *);
ur_result_t UR_APICALL urKernelSuggestMaxCooperativeGroupCount(ur_kernel_handle_t, ur_device_handle_t, uint32_t,
                                                               const size_t *, size_t, uint32_t *);

// launch.cpp
ur_result_t UR_APICALL urEnqueueKernelLaunchWithArgsExp(ur_queue_handle_t, ur_kernel_handle_t, uint32_t, const size_t *,
                                                        const size_t *, const size_t *, uint32_t,
                                                        const ur_exp_kernel_arg_properties_t *,
                                                        const ur_kernel_launch_ext_properties_t *, uint32_t,
                                                        const ur_event_handle_t *, ur_event_handle_t *);

} // namespace ordo::stream_backend
