// SPDX-License-Identifier: Apache-2.0
// urXRetain, urXRelease and urXGetNativeHandle, written once for the adapter's objects
// that are one cl_* object each (`cl`) on the one object model (ordo/object.hpp): the
// user's last release drops the user's holder, and the last holder retires the object.
#pragma once
#include "common.hpp"

namespace ordo::opencl {

template <class T> ur_result_t UR_APICALL retain_handle(T *h) {
  ORDO_CHECK_HANDLE(h);
  return h->retain_user() ? UR_RESULT_SUCCESS : T::kInvalid;
}

template <class T> ur_result_t UR_APICALL release_handle(T *h) {
  ORDO_CHECK_HANDLE(h);
  bool last = false;
  if (!h->release_user(last)) return T::kInvalid;
  if (last) unhold(h);
  return UR_RESULT_SUCCESS;
}

// The arguments between the handle and the answer (a device, a descriptor) are of no
// use here: one cl_* object serves them all.
template <class T, class... Unused> ur_result_t UR_APICALL native_handle(T *h, Unused..., ur_native_handle_t *out) {
  ORDO_CHECK_HANDLE(h);
  *out = reinterpret_cast<ur_native_handle_t>(h->cl);
  return UR_RESULT_SUCCESS;
}

} // namespace ordo::opencl
