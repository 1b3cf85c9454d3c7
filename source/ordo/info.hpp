// SPDX-License-Identifier: Apache-2.0
// Answers *GetInfo queries: one call writes a value of the query's type into the
// caller's buffer, or reports its size, with the errors the spec gives for a buffer
// that is too small.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "ur_api.h"

namespace ordo {

class InfoWriter {
public:
  InfoWriter(size_t size, void *value, size_t *size_ret) : size_(size), value_(value), size_ret_(size_ret) {}

  ur_result_t bytes(const void *data, size_t n) {
    if (size_ret_) *size_ret_ = n;
    if (value_) {
      if (size_ < n) return UR_RESULT_ERROR_INVALID_SIZE;
      std::memcpy(value_, data, n);
    }
    return UR_RESULT_SUCCESS;
  }
  template <class T> ur_result_t value(const T &v) { return bytes(&v, sizeof(T)); }
  ur_result_t boolean(bool b) { return value(static_cast<ur_bool_t>(b)); }
  ur_result_t string(const std::string &s) { return bytes(s.c_str(), s.size() + 1); }
  template <class T> ur_result_t array(const std::vector<T> &v) { return bytes(v.data(), v.size() * sizeof(T)); }
  template <class T> ur_result_t array(const T *data, size_t n) { return bytes(data, n * sizeof(T)); }

private:
  size_t size_;
  void *value_;
  size_t *size_ret_;
};

} // namespace ordo

namespace ordo {

// The argument rules every *GetInfo query with a size/value/size_ret triple shares.
inline ur_result_t check_info_args(size_t size, const void *value, const size_t *size_ret) {
  if (size == 0 && value) return UR_RESULT_ERROR_INVALID_SIZE;
  if (size != 0 && !value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!value && !size_ret) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return UR_RESULT_SUCCESS;
}

} // namespace ordo
