// SPDX-License-Identifier: Apache-2.0
// urXGetNativeHandle, written once for the adapter's objects that are one cl_* object
// each (`cl`); their urXRetain and urXRelease are ur_common/handles.hpp's.
#pragma once
#include "common.hpp"
#include "ur_common/handles.hpp"

namespace ordo::opencl {

// The arguments between the handle and the answer (a device, a descriptor) are of no
// use here: one cl_* object serves them all.
template <class T, class... Unused> ur_result_t UR_APICALL native_handle(T *h, Unused..., ur_native_handle_t *out) {
  ORDO_CHECK_HANDLE(h);
  *out = reinterpret_cast<ur_native_handle_t>(h->cl);
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::opencl
