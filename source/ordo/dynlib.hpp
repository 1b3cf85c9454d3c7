// SPDX-License-Identifier: Apache-2.0
// The dynamic-library seam: adapters load their backend's runtime (libOpenCL.so.1,
// libcuda.so.1, ...) at run time so that they load cleanly where it is absent.
#pragma once
#include <dlfcn.h>

#include <string>

namespace ordo {

class DynLib {
public:
  DynLib() = default;
  explicit DynLib(const char *name, int flags = RTLD_NOW | RTLD_LOCAL) { open(name, flags); }
  ~DynLib() {
    if (handle_) dlclose(handle_);
  }
  DynLib(const DynLib &) = delete;
  DynLib &operator=(const DynLib &) = delete;

  bool open(const char *name, int flags = RTLD_NOW | RTLD_LOCAL) {
    handle_ = dlopen(name, flags);
    if (!handle_) {
      const char *e = dlerror();
      error_ = e ? e : "unknown dlopen error";
    }
    return handle_ != nullptr;
  }
  explicit operator bool() const { return handle_ != nullptr; }
  const std::string &error() const { return error_; }

  // Looks up `name` into a function pointer of the right type; false if missing.
  template <class F> bool sym(const char *name, F &out) const {
    out = handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
    return out != nullptr;
  }

private:
  void *handle_ = nullptr;
  std::string error_;
};

} // namespace ordo
