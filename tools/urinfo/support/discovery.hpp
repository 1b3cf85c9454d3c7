// SPDX-License-Identifier: Apache-2.0
// Finding devices the way a UR user does: adapters from the loader, their platforms,
// and the devices ONEAPI_DEVICE_SELECTOR lets through (urDeviceGetSelected).
// Shared by urinfo, the demo and the conformance suite.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ur_api.h"

namespace urinfo {

struct FoundDevice {
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t device = nullptr;
  ur_backend_t backend = UR_BACKEND_UNKNOWN;
  std::string backend_name;   // "native_cpu", "opencl", ... (as ONEAPI_DEVICE_SELECTOR spells it)
  std::string type_name;      // "cpu", "gpu", ...
  std::string name;           // UR_DEVICE_INFO_NAME
  uint32_t backend_index = 0; // position among the devices of its backend: the N of [backend:N]

  // "native_cpu:AMD EPYC 7B13"
  std::string label() const { return backend_name + ":" + name; }
};

struct Discovery {
  std::vector<ur_adapter_handle_t> adapters;
  std::vector<FoundDevice> devices;
  // One line per adapter (and per problem) saying what was found and, where nothing
  // was, why: platform errors, adapter log messages, the selector.
  std::vector<std::string> notes;

  // Warnings and errors adapters and the loader printed while loading (StderrCapture).
  std::vector<std::string> log_lines;

  // Everything in `notes` (and the log lines) on one line, for a skip message.
  std::string why_no_devices() const;
};

// Adapters say why they found nothing (no driver, no device) in log lines printed to
// stderr while they load, before a logger callback can be set. This copies stderr aside
// between start() and stop(), writes it back unchanged, and keeps its warning and error
// lines. Use it around urLoaderInit and discover(), when no other thread is printing.
// In sanitizer builds it does nothing, so that a sanitizer's report is never set aside.
class StderrCapture {
public:
  StderrCapture() = default;
  ~StderrCapture() { stop(); }
  StderrCapture(const StderrCapture &) = delete;
  StderrCapture &operator=(const StderrCapture &) = delete;

  void start();
  // Restores stderr; returns the warning and error lines seen.
  std::vector<std::string> stop();

private:
  int saved_fd_ = -1;
  void *file_ = nullptr; // FILE *
};

// The loader must be initialised (urLoaderInit). Holds a reference to every adapter
// and device found until release().
Discovery discover();
void release(Discovery &found);

std::string backend_name(ur_backend_t backend);      // UR_BACKEND_LEVEL_ZERO -> "level_zero"
std::string device_type_name(ur_device_type_t type); // UR_DEVICE_TYPE_GPU -> "gpu"

// String queries; "" if the query fails.
std::string device_string(ur_device_handle_t device, ur_device_info_t query);
std::string platform_string(ur_platform_handle_t platform, ur_platform_info_t query);

// Fixed-size queries into `out`; the query's result.
template <class T> ur_result_t device_value(ur_device_handle_t device, ur_device_info_t query, T &out) {
  return urDeviceGetInfo(device, query, sizeof(T), &out, nullptr);
}

} // namespace urinfo
