// SPDX-License-Identifier: Apache-2.0
// The platform: one, holding every device the driver reports (none without a driver).
// urAdapter* and urPlatform* are ur_common/adapter.hpp's; this file says what the
// driver's platform answers (backend_info).
#include "backend.hpp"
#include "ur_common/adapter.hpp"

namespace ordo::stream_backend {

namespace {

struct adapter_hooks : handle_types {
  static Adapter *the_adapter() { return stream_backend::the_adapter(); }
  static const std::vector<Platform *> &platforms() { return stream_backend::platforms(); }
  static Logger &logger() { return stream_backend::logger(); }
  static ur_backend_t backend() { return info().backend; }
  static std::string name(const Platform *) { return info().platform_name; }
  static std::string vendor(const Platform *) { return info().vendor_name; }
  static std::string version(const Platform *) {
    return std::string(info().display_name) + " " + info().runtime_version;
  }
  // Neither CUDA nor HIP has a platform object.
  static ur_result_t native_handle(Platform *, ur_native_handle_t *) { return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; }
};

} // namespace

void install_adapter_entry_points(ur_dditable_t &t) {
  ordo::ur_common::adapter_entry_points<adapter_hooks>::install(t);
  t.Platform.pfnGetNativeHandle = nullptr; // no driver object stands for the platform: the unsupported stub
}

} // namespace ordo::stream_backend
