// SPDX-License-Identifier: Apache-2.0
// The suite's main: initialises the loader with the validation layer, finds the devices,
// and tears everything down after the last test.
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "conformance.hpp"

namespace conf {

namespace {

const char kValidationLayer[] = "UR_LAYER_PARAMETER_VALIDATION";

struct State {
  bool loader_ready = false;
  bool validation = false;
  std::string validation_status;
  urinfo::Discovery found;
  std::string kernel_dir;
};

State &state() {
  static State s;
  return s;
}

bool env_flag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

std::string loader_layers(ur_loader_config_handle_t config) {
  size_t size = 0;
  if (urLoaderConfigGetInfo(config, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS, 0, nullptr, &size) != UR_RESULT_SUCCESS ||
      size == 0)
    return "";
  std::string s(size, '\0');
  if (urLoaderConfigGetInfo(config, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS, size, &s[0], nullptr) != UR_RESULT_SUCCESS)
    return "";
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

// Loader initialisation with the parameter-validation layer, unless
// ORDO_CONFORMANCE_NO_VALIDATION is set (to see what an adapter refuses by itself).
void init_loader(State &s) {
  ur_loader_config_handle_t config = nullptr;
  ur_result_t r = urLoaderConfigCreate(&config);
  if (r != UR_RESULT_SUCCESS) {
    s.validation_status = "urLoaderConfigCreate failed with " + urinfo::result_name(r);
    config = nullptr;
  } else if (env_flag("ORDO_CONFORMANCE_NO_VALIDATION")) {
    s.validation_status = "turned off by ORDO_CONFORMANCE_NO_VALIDATION";
  } else {
    r = urLoaderConfigEnableLayer(config, kValidationLayer);
    s.validation = r == UR_RESULT_SUCCESS;
    s.validation_status = s.validation ? std::string("on")
                                       : "urLoaderConfigEnableLayer failed with " + urinfo::result_name(r) +
                                             " (layers the loader offers: '" + loader_layers(config) + "')";
  }
  r = urLoaderInit(0, config);
  if (config) urLoaderConfigRelease(config);
  if (r != UR_RESULT_SUCCESS) {
    std::printf("ordo-conformance: urLoaderInit failed with %s\n", urinfo::result_name(r).c_str());
    s.validation = false;
    return;
  }
  s.loader_ready = true;
}

void init_once() {
  State &s = state();
  const char *dir = std::getenv("ORDO_KERNEL_DIR");
  s.kernel_dir = dir && *dir ? dir : ORDO_KERNEL_DIR;
  // Adapters print why they find nothing while they load; keep that for the skip message.
  urinfo::StderrCapture capture;
  capture.start();
  init_loader(s);
  if (s.loader_ready) s.found = urinfo::discover();
  s.found.log_lines = capture.stop();
  std::printf("ordo-conformance: validation layer %s\n", s.validation_status.c_str());
  std::printf("ordo-conformance: test kernels from %s\n", s.kernel_dir.c_str());
  for (const urinfo::FoundDevice &d : s.found.devices)
    std::printf("ordo-conformance: device %s (%s)\n", d.label().c_str(), device_param_name(d).c_str());
  if (s.found.devices.empty()) std::printf("ordo-conformance: no devices: %s\n", why_no_devices().c_str());
  for (const urinfo::FoundDevice &d : s.found.devices) {
    size_t listed = 0;
    for (const KnownFailure &k : known_failures())
      if (d.backend_name == k.backend || std::string(k.backend) == "*") ++listed;
    if (listed)
      std::printf("ordo-conformance: %zu known-failure entr%s for %s (known_failures.cpp)%s\n", listed,
                  listed == 1 ? "y" : "ies", d.backend_name.c_str(),
                  run_known_failures() ? ", run anyway (ORDO_CONFORMANCE_RUN_KNOWN_FAILURES)" : "");
  }
  std::fflush(stdout);
}

void ensure_init() {
  static std::once_flag once;
  std::call_once(once, init_once);
}

// Releases what discovery holds and tears the loader down after the last test.
class Environment : public ::testing::Environment {
public:
  void TearDown() override {
    State &s = state();
    urinfo::release(s.found);
    if (s.loader_ready) urLoaderTearDown();
    s.loader_ready = false;
  }
};

} // namespace

const std::vector<urinfo::FoundDevice> &devices() {
  ensure_init();
  return state().found.devices;
}

std::string why_no_devices() {
  State &s = state();
  if (!s.loader_ready) return "the loader did not initialise";
  return s.found.why_no_devices();
}

bool validation_enabled() {
  ensure_init();
  return state().validation;
}

std::string validation_status() {
  ensure_init();
  return state().validation_status;
}

const std::string &kernel_dir() {
  ensure_init();
  return state().kernel_dir;
}

bool run_known_failures() { return env_flag("ORDO_CONFORMANCE_RUN_KNOWN_FAILURES"); }

} // namespace conf

// Says what was found: with no device, the run is one skipped test with the reason.
TEST(Conformance, DevicesFound) {
  if (conf::devices().empty()) {
    const char *selector = std::getenv("ONEAPI_DEVICE_SELECTOR");
    std::string backend = selector ? std::string(selector).substr(0, std::string(selector).find(':')) : "";
    GTEST_SKIP() << "no " << (backend.empty() ? "" : backend + " ") << "device: " << conf::why_no_devices();
  }
  for (const urinfo::FoundDevice &d : conf::devices()) {
    EXPECT_NE(nullptr, d.device);
    EXPECT_FALSE(d.backend_name.empty());
  }
}

// The negative tests of this suite are written for the validation layer.
TEST(Conformance, ValidationLayerEnabled) {
  if (conf::devices().empty()) GTEST_SKIP() << "no device to validate against";
  if (std::getenv("ORDO_CONFORMANCE_NO_VALIDATION"))
    GTEST_SKIP() << "validation turned off by ORDO_CONFORMANCE_NO_VALIDATION";
  EXPECT_TRUE(conf::validation_enabled()) << conf::validation_status();
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new conf::Environment);
  return RUN_ALL_TESTS();
}
