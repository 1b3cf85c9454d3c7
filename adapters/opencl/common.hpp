// SPDX-License-Identifier: Apache-2.0
// What every file of the OpenCL adapter shares: handle checks (on ordo::object),
// the adapter's logger, wait-list translation.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cl_api.hpp"
#include "ordo/ddi_fill.hpp"
#include "ordo/object.hpp"
#include "ordo/info.hpp"
#include "ordo/logger.hpp"
#include "ordo/retired_handles.hpp"

namespace ordo::opencl {

Logger &log();

// The base of every handle type of the adapter (ordo/object.hpp): its kind, and what a
// handle of another kind passed in its place is refused with.
template <ordo::handle_kind Kind, ur_result_t Invalid> struct handle_object : ordo::object {
  static constexpr ordo::handle_kind kKind = Kind;
  static constexpr ur_result_t kInvalid = Invalid;
  handle_object() : object(Kind) {}
};

// Drops one holder; the last one destroys the object and retires its handle.
template <class T> void unhold(T *o) {
  if (o->drop()) ordo::retire(o);
}

// Handles are checked with ORDO_CHECK_HANDLE (ordo/object.hpp); null pointers, enum
// ranges, flag masks and wait lists by the spec's checks in the table tail (ddi.cpp).
// Returns the UR code for a failed CL call.
#define ORDO_CL_CHECK(expr)                                                                                            \
  do {                                                                                                                 \
    cl_int ordo_cl_err_ = (expr);                                                                                      \
    if (ordo_cl_err_ != CL_SUCCESS) return ::ordo::opencl::to_ur(ordo_cl_err_);                                        \
  } while (0)

// A UR wait list as cl_events, without touching the heap for short lists.
class ClWaitList {
public:
  ClWaitList() = default;
  ClWaitList(const ClWaitList &) = delete;
  ClWaitList &operator=(const ClWaitList &) = delete;
  ~ClWaitList() {
    if (data_ != inline_) delete[] data_;
  }
  // Translates `list` (and keeps it: the command's ordering predecessors); refuses
  // handles that are not events of this adapter; an event of another context than
  // `context` is INVALID_CONTEXT (OpenCL's rule; Intel's runtime takes such an event and
  // crashes later, tools/opencl_probes/foreign_event_wait.c).
  ur_result_t assign(uint32_t n, const ur_event_handle_t *list, ur_context_handle_t context);
  // What assign refuses, with nothing translated: for checks made before the command
  // that translates the list itself.
  static ur_result_t check(uint32_t n, const ur_event_handle_t *list, ur_context_handle_t context);
  // Adds one more event (used for internal dependencies).
  void push(cl_event e);
  cl_uint size() const { return size_; }
  const cl_event *data() const { return size_ ? data_ : nullptr; }
  uint32_t ur_count() const { return ur_n_; }
  const ur_event_handle_t *ur_list() const { return ur_; }

private:
  const ur_event_handle_t *ur_ = nullptr;
  uint32_t ur_n_ = 0;
  static constexpr uint32_t kInline = 8;
  cl_event inline_[kInline];
  cl_event *data_ = inline_;
  uint32_t size_ = 0, capacity_ = kInline;
};

// Reads a CL string query (platform, device, kernel, program) into `out`, or returns it.
template <class Fn, class Obj, class Param> cl_int cl_string(Fn fn, Obj obj, Param param, std::string &out) {
  size_t n = 0;
  cl_int err = fn(obj, param, 0, nullptr, &n);
  if (err != CL_SUCCESS) return err;
  out.assign(n, '\0');
  if (n) err = fn(obj, param, n, &out[0], nullptr);
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return err;
}
template <class Fn, class Obj, class Param> std::string cl_string(Fn fn, Obj obj, Param param) {
  std::string s;
  cl_string(fn, obj, param, s);
  return s;
}
// Reads a CL array query (device IDs, partition properties, sizes) into `out`: empty
// where OpenCL gives nothing or refuses the size query.
template <class T, class Fn, class Obj, class Param> cl_int cl_array(Fn fn, Obj obj, Param param, std::vector<T> &out) {
  size_t n = 0;
  cl_int err = fn(obj, param, 0, nullptr, &n);
  out.assign(err == CL_SUCCESS ? n / sizeof(T) : 0, T{});
  if (!out.empty()) err = fn(obj, param, out.size() * sizeof(T), out.data(), nullptr);
  return err;
}

} // namespace ordo::opencl
