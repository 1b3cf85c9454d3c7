// SPDX-License-Identifier: Apache-2.0
// The CPU test driver's dispatch tables (docs/level-zero.md). gen_tables.py writes one
// exported getter per table of the installed DDI headers: it points every slot at
// stub<F>::call (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE), calls install() for the table,
// which puts in what the driver implements, and hands the caller the slots that exist
// at the version it asked for.
#pragma once
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

// Code for functions newer than Debian's headers (1.4) is built only against headers
// that declare them (the pinned loader's: docs/level-zero.md).
#ifdef ZE_API_VERSION_CURRENT_M
#define ORDO_ZE_HEADERS_AT_LEAST(major, minor) (ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(major, minor))
#else // older headers (Debian's 1.4) name their version only in an enum
#define ORDO_ZE_HEADERS_AT_LEAST(major, minor) 0
#endif

namespace zecpu {

template <class F> struct unsupported;
template <class... A> struct unsupported<ze_result_t(ZE_APICALL *)(A...)> {
  static ze_result_t ZE_APICALL call(A...) { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
};
// The few functions that return something else (zeDriverGetDefaultContext, a handle):
// a null or zero answer, which is how they say "none".
template <class R, class... A> struct unsupported<R(ZE_APICALL *)(A...)> {
  static R ZE_APICALL call(A...) { return R{}; }
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
