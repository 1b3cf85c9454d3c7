// SPDX-License-Identifier: Apache-2.0
// Libraries that look like adapters but cannot be used, one per way of being broken;
// each is built as libur_adapter_opencl.so.0 in its own folder (test/loader/CMakeLists.txt).
//   ORDO_BROKEN_NO_GETTERS      exports no urGet*ProcAddrTable at all
//   ORDO_BROKEN_FAILING_GETTER  every getter works except urGetQueueProcAddrTable
//   ORDO_BROKEN_WRONG_VERSION   every getter refuses the caller's API version
//   ORDO_BROKEN_ADAPTER_GET     every getter works, but urAdapterGet fails (an adapter
//                               with no driver behind it)
//   ORDO_BROKEN_ADAPTER_GET_ONCE urAdapterGet succeeds once (the loader's probe) and fails
//                               from then on; its handle's retain fails too while
//                               ORDO_TEST_BROKEN_RETAIN_FAILS is set
#include "ur_ddi.h"

#ifdef ORDO_BROKEN_NO_GETTERS

extern "C" UR_DLLEXPORT int ordo_not_an_adapter(void) { return 42; }

#else

#if defined(ORDO_BROKEN_ADAPTER_GET) || defined(ORDO_BROKEN_ADAPTER_GET_ONCE)
#define ORDO_ADAPTER_GETTER(X)
#else
#define ORDO_ADAPTER_GETTER(X) X(urGetAdapterProcAddrTable, ur_adapter_dditable_t)
#endif

#define ORDO_GETTERS(X)                                                                                                \
  ORDO_ADAPTER_GETTER(X)                                                                                               \
  X(urGetPlatformProcAddrTable, ur_platform_dditable_t)                                                                \
  X(urGetContextProcAddrTable, ur_context_dditable_t)                                                                  \
  X(urGetEventProcAddrTable, ur_event_dditable_t)                                                                      \
  X(urGetEventExpProcAddrTable, ur_event_exp_dditable_t)                                                               \
  X(urGetProgramProcAddrTable, ur_program_dditable_t)                                                                  \
  X(urGetProgramExpProcAddrTable, ur_program_exp_dditable_t)                                                           \
  X(urGetKernelProcAddrTable, ur_kernel_dditable_t)                                                                    \
  X(urGetQueueExpProcAddrTable, ur_queue_exp_dditable_t)                                                               \
  X(urGetSamplerProcAddrTable, ur_sampler_dditable_t)                                                                  \
  X(urGetMemProcAddrTable, ur_mem_dditable_t)                                                                          \
  X(urGetPhysicalMemProcAddrTable, ur_physical_mem_dditable_t)                                                         \
  X(urGetEnqueueProcAddrTable, ur_enqueue_dditable_t)                                                                  \
  X(urGetEnqueueExpProcAddrTable, ur_enqueue_exp_dditable_t)                                                           \
  X(urGetGraphExpProcAddrTable, ur_graph_exp_dditable_t)                                                               \
  X(urGetUSMProcAddrTable, ur_usm_dditable_t)                                                                          \
  X(urGetUSMExpProcAddrTable, ur_usm_exp_dditable_t)                                                                   \
  X(urGetBindlessImagesExpProcAddrTable, ur_bindless_images_exp_dditable_t)                                            \
  X(urGetCommandBufferExpProcAddrTable, ur_command_buffer_exp_dditable_t)                                              \
  X(urGetIPCExpProcAddrTable, ur_ipc_exp_dditable_t)                                                                   \
  X(urGetMemoryExportExpProcAddrTable, ur_memory_export_exp_dditable_t)                                                \
  X(urGetUsmP2PExpProcAddrTable, ur_usm_p2p_exp_dditable_t)                                                            \
  X(urGetVirtualMemProcAddrTable, ur_virtual_mem_dditable_t)                                                           \
  X(urGetDeviceProcAddrTable, ur_device_dditable_t)                                                                    \
  X(urGetDeviceExpProcAddrTable, ur_device_exp_dditable_t)

#ifdef ORDO_BROKEN_WRONG_VERSION
#define ORDO_ANSWER UR_RESULT_ERROR_UNSUPPORTED_VERSION
#else
#define ORDO_ANSWER UR_RESULT_SUCCESS
#endif

#define ORDO_DEFINE_GETTER(name, table)                                                                                \
  extern "C" UR_DLLEXPORT ur_result_t UR_APICALL name(ur_api_version_t, table *pDdiTable) {                            \
    if (pDdiTable) *pDdiTable = table{};                                                                               \
    return ORDO_ANSWER;                                                                                                \
  }
ORDO_GETTERS(ORDO_DEFINE_GETTER)

#ifdef ORDO_BROKEN_ADAPTER_GET
static ur_result_t UR_APICALL failing_adapter_get(uint32_t, ur_adapter_handle_t *, uint32_t *) {
  return UR_RESULT_ERROR_UNSUPPORTED_VERSION;
}
extern "C" UR_DLLEXPORT ur_result_t UR_APICALL urGetAdapterProcAddrTable(ur_api_version_t,
                                                                         ur_adapter_dditable_t *pDdiTable) {
  if (pDdiTable) {
    *pDdiTable = ur_adapter_dditable_t{};
    pDdiTable->pfnGet = failing_adapter_get;
  }
  return UR_RESULT_SUCCESS;
}
#endif

#ifdef ORDO_BROKEN_ADAPTER_GET_ONCE
#include <atomic>
#include <cstdlib>

// Handle-first dispatch: the adapter handle starts with a pointer to this table.
static ur_dditable_t g_table;
static struct { const ur_dditable_t *table = &g_table; } g_adapter;
static std::atomic<int> g_gets{0};

static ur_result_t UR_APICALL get_once(uint32_t NumEntries, ur_adapter_handle_t *phAdapters, uint32_t *pNumAdapters) {
  if (g_gets.fetch_add(1) > 0) return UR_RESULT_ERROR_DEVICE_LOST;
  if (phAdapters && NumEntries) phAdapters[0] = reinterpret_cast<ur_adapter_handle_t>(&g_adapter);
  if (pNumAdapters) *pNumAdapters = 1;
  return UR_RESULT_SUCCESS;
}
static ur_result_t UR_APICALL retain(ur_adapter_handle_t) {
  return std::getenv("ORDO_TEST_BROKEN_RETAIN_FAILS") ? UR_RESULT_ERROR_OUT_OF_RESOURCES : UR_RESULT_SUCCESS;
}
static ur_result_t UR_APICALL release(ur_adapter_handle_t) { return UR_RESULT_SUCCESS; }

extern "C" UR_DLLEXPORT ur_result_t UR_APICALL urGetAdapterProcAddrTable(ur_api_version_t,
                                                                         ur_adapter_dditable_t *pDdiTable) {
  g_table.Adapter.pfnGet = get_once;
  g_table.Adapter.pfnRetain = retain;
  g_table.Adapter.pfnRelease = release;
  if (pDdiTable) *pDdiTable = g_table.Adapter;
  return UR_RESULT_SUCCESS;
}
#endif

extern "C" UR_DLLEXPORT ur_result_t UR_APICALL urGetQueueProcAddrTable(ur_api_version_t, ur_queue_dditable_t *) {
#ifdef ORDO_BROKEN_FAILING_GETTER
  return UR_RESULT_ERROR_OUT_OF_RESOURCES;
#else
  return ORDO_ANSWER;
#endif
}

#endif
