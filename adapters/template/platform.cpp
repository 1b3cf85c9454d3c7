// SPDX-License-Identifier: Apache-2.0
// Discovery and the platform: one platform with one device whose memory is host memory.
// urAdapter* and urPlatform* are ur_common/adapter.hpp's; this file says what differs.
// Replace: discover() (open your runtime with ordo::DynLib, ordo/dynlib.hpp; with no
// runtime or no device, return no platform and log one info line saying why), the
// platform's strings and native handle, and kBackend.
#include "common.hpp"
#include "ur_common/adapter.hpp"

namespace ordo::template_adapter {

namespace {

// UR's ur_backend_t has no value for a new vendor. The template reports
// UR_BACKEND_OFFLOAD (selector "offload:*"), the one backend not named after a vendor's
// runtime; a real adapter reports its own value once the spec has one
// (docs/adapter-guide.md, "Your backend's name").
constexpr ur_backend_t kBackend = UR_BACKEND_OFFLOAD;

std::vector<Platform *> *discover() {
  auto *list = new std::vector<Platform *>();
  auto *platform = new Platform();
  auto *device = new Device();
  device->platform = platform;
  // What a driver would report; the host's memory stands in for the device's.
  device->facts.global_mem = 4ull << 30;
  device->facts.max_alloc = 1ull << 30;
  device->facts.compute_units = 1;
  platform->devices.push_back(device);
  list->push_back(platform);
  ORDO_LOG(logger(), info, "template adapter: 1 platform, 1 host-memory device");
  return list;
}

struct adapter_hooks : handle_types {
  static Adapter *the_adapter() { return template_adapter::the_adapter(); }
  static const std::vector<Platform *> &platforms() { return template_adapter::platforms(); }
  static Logger &logger() { return template_adapter::logger(); }
  static ur_backend_t backend() { return kBackend; }
  static std::string name(const Platform *) { return "Ordo adapter template"; }
  static std::string vendor(const Platform *) { return "Ordo"; }
  static std::string version(const Platform *) { return "0.12"; }
  static ur_result_t native_handle(Platform *p, ur_native_handle_t *out) {
    *out = reinterpret_cast<ur_native_handle_t>(p); // your driver's platform handle
    return UR_RESULT_SUCCESS;
  }
};

} // namespace

const std::vector<Platform *> &platforms() {
  static std::vector<Platform *> *list = discover(); // once, at the first urAdapterGet
  return *list;
}

void install_adapter_entry_points(ur_dditable_t &t) {
  ordo::ur_common::adapter_entry_points<adapter_hooks>::install(t);
}

} // namespace ordo::template_adapter
