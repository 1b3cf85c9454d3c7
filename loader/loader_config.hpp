// SPDX-License-Identifier: Apache-2.0
// ur_loader_config_handle_t: what a program asks of urLoaderInit (layers, mocking, a
// code-location callback for tracing).
#pragma once
#include <atomic>
#include <mutex>
#include <set>
#include <string>

#include "ur_api.h"

struct ur_loader_config_handle_t_ {
  std::atomic<uint32_t> ref_count{1};
  mutable std::mutex mutex; // guards the members below
  std::set<std::string> layers;
  bool mocking = false;
  ur_code_location_callback_t codeloc = nullptr;
  void *codeloc_data = nullptr;
};

namespace ordo {
namespace loader {

// What urLoaderInit takes from a config, copied under its lock.
struct ConfigSnapshot {
  std::set<std::string> layers;
  bool mocking = false;
  ur_code_location_callback_t codeloc = nullptr;
  void *codeloc_data = nullptr;
};

// False when the handle is not a live config (never created, or already destroyed).
bool config_is_live(ur_loader_config_handle_t config);
ConfigSnapshot snapshot(ur_loader_config_handle_t config);

} // namespace loader
} // namespace ordo
