// The CPU test driver's dispatch tables (docs/level-zero.md). gen_tables.py writes one
// exported getter per table of the installed DDI headers: it points every slot at
// stub<F>::call (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) and then calls install() for
// the table, which puts in what the driver implements.
#pragma once
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

namespace zecpu {

template <class F> struct unsupported;
template <class... A> struct unsupported<ze_result_t(ZE_APICALL *)(A...)> {
  static ze_result_t ZE_APICALL call(A...) { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
};
template <class F> inline void stub(F &slot) { slot = &unsupported<F>::call; }

// Any 1.x caller: the tables have only grown within a major version.
inline bool version_ok(ze_api_version_t v) { return ZE_MAJOR_VERSION(v) == ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT); }

// Tables with nothing implemented keep their stubs.
template <class T> inline void install(T &) {}
void install(ze_global_dditable_t &t);
void install(ze_driver_dditable_t &t);
void install(ze_device_dditable_t &t);
void install(ze_context_dditable_t &t);
void install(ze_command_queue_dditable_t &t);
void install(ze_command_list_dditable_t &t);
void install(ze_fence_dditable_t &t);
void install(ze_event_pool_dditable_t &t);
void install(ze_event_dditable_t &t);
void install(ze_module_dditable_t &t);
void install(ze_module_build_log_dditable_t &t);
void install(ze_kernel_dditable_t &t);
void install(ze_kernel_exp_dditable_t &t);
void install(ze_mem_dditable_t &t);

} // namespace zecpu
