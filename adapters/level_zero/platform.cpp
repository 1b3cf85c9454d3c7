// SPDX-License-Identifier: Apache-2.0
// Level Zero platforms: one per driver that reports a device (none without a driver).
// urAdapter* and urPlatform* are ur_common/adapter.hpp's; this file says what a Level
// Zero platform answers.
#include "common.hpp"
#include "ur_common/adapter.hpp"

namespace ordo::level_zero {

namespace {

struct adapter_hooks : handle_types {
  static Adapter *the_adapter() { return level_zero::the_adapter(); }
  static const std::vector<Platform *> &platforms() { return level_zero::platforms(); }
  static Logger &logger() { return level_zero::logger(); }
  static ur_backend_t backend() { return UR_BACKEND_LEVEL_ZERO; }
  static std::string name(const Platform *) { return "Level Zero (Ordo)"; }
  static std::string vendor(const Platform *p) {
    return p->devices[0]->facts.props.vendorId == 0x8086 ? "Intel(R) Corporation" : "unknown vendor";
  }
  static std::string version(const Platform *p) {
    return std::to_string(ZE_MAJOR_VERSION(p->api_version)) + "." + std::to_string(ZE_MINOR_VERSION(p->api_version)) +
           " (driver " + std::to_string(p->driver_version) + ")";
  }
  static ur_result_t native_handle(Platform *p, ur_native_handle_t *out) {
    *out = reinterpret_cast<ur_native_handle_t>(p->driver);
    return UR_RESULT_SUCCESS;
  }
};

} // namespace

void install_adapter_entry_points(ur_dditable_t &t) {
  ordo::ur_common::adapter_entry_points<adapter_hooks>::install(t);
}

} // namespace ordo::level_zero
