// SPDX-License-Identifier: Apache-2.0
// Builds the layer chain: each enabled layer's table wraps the one below it, and the
// exported entry points call the top (docs/loader.md, "Layers").
#include "layers.hpp"

#include <cstdlib>
#include <sstream>

#include "layers_internal.hpp"
#include "loader_state.hpp"
#include "ordo/secure_env.hpp"
#include "tracing.hpp"

namespace ordo {
namespace loader {
namespace {

const char kValidation[] = "UR_LAYER_PARAMETER_VALIDATION";
const char kLeakChecking[] = "UR_LAYER_LEAK_CHECKING";
const char kFullValidation[] = "UR_LAYER_FULL_VALIDATION";
const char kTracing[] = "UR_LAYER_TRACING";
// Accepted by name but not yet in the AVAILABLE_LAYERS list (test/loader/config_test.cpp
// asserts that list's exact text).
const char kBoundsChecking[] = "UR_LAYER_BOUNDS_CHECKING";

// The chain's tables live here for the life of the process: a call still running in a
// layer while the loader is torn down keeps valid tables under it.
ur_dditable_t g_validation_table;
ur_dditable_t g_leak_table;
ur_dditable_t g_bounds_table;
ur_dditable_t g_tracing_table;
bool g_leak_checking_on = false;

Logger &validation_log() { return immortal<Logger>("validation"); }

} // namespace

const std::vector<std::string> &available_layers() {
  static const std::vector<std::string> names = {kValidation, kLeakChecking, kFullValidation, kBoundsChecking,
                                                 kTracing};
  return names;
}

bool is_layer_name(const std::string &name) {
  for (const std::string &n : available_layers())
    if (n == name) return true;
  return false;
}

std::set<std::string> layers_from_environment() {
  std::set<std::string> out;
  const char *env = secure_env("UR_ENABLE_LAYERS");
  if (!env) return out;
  std::string s(env);
  for (char &c : s)
    if (c == ';' || c == ',') c = ' ';
  std::stringstream ss(s);
  std::string name;
  while (ss >> name) {
    if (is_layer_name(name))
      out.insert(name);
    else
      ORDO_LOG(log(), warning, "UR_ENABLE_LAYERS: no layer named \"%s\" (ignored)", name.c_str());
  }
  return out;
}

const ur_dditable_t *build_layer_chain(const std::set<std::string> &names, ur_code_location_callback_t codeloc,
                                       void *codeloc_data) {
  const bool full = names.count(kFullValidation) != 0;
  const bool validation = full || names.count(kValidation);
  const bool leak = full || names.count(kLeakChecking);
  const bool tracing = names.count(kTracing) != 0;
  const bool bounds = full || names.count(kBoundsChecking);

  const ur_dditable_t *top = &dispatch_table();
  // Lowest: its size queries go straight to the adapters, and it only sees calls the
  // parameter checks above have let through (UR's order: bounds after the spec's rules).
  if (bounds) {
    init_bounds_checking_layer(*top, g_bounds_table);
    top = &g_bounds_table;
  }
  if (leak) {
    init_leak_checking_layer(*top, g_leak_table);
    top = &g_leak_table;
  }
  g_leak_checking_on = leak;
  // Released handles can only be told when leak checking counts every reference.
  set_released_handle_checks(validation && leak);
  if (validation) {
    init_validation_layer(*top, g_validation_table);
    top = &g_validation_table;
  }
  if (tracing) {
    set_code_location_callback(codeloc, codeloc_data);
    init_tracing_layer(*top, g_tracing_table);
    top = &g_tracing_table;
  }
  if (top == &dispatch_table()) return nullptr;
  ORDO_LOG(log(), info, "layers on:%s%s%s%s", tracing ? " tracing" : "", validation ? " parameter-validation" : "",
           leak ? " leak-checking" : "", bounds ? " bounds-checking" : "");
  return top;
}

void tear_down_layers() {
  g_layer_top.store(nullptr, std::memory_order_release);
  set_released_handle_checks(false);
  if (g_leak_checking_on) {
    leak_report();
    g_leak_checking_on = false;
  }
  set_code_location_callback(nullptr, nullptr);
}

ur_result_t validation_refused(const char *function, ur_result_t result, const char *why) {
  ORDO_LOG(validation_log(), warning, "%s: %s because `%s`", function, result_name(result).c_str(), why ? why : "?");
  return result;
}

ur_result_t released_handle_refused(const char *function, ur_result_t result, const char *param, const void *handle) {
  ORDO_LOG(validation_log(), warning,
           "%s: %s because %s (%p) was released: its reference count, as counted through the loader, "
           "reached 0",
           function, result_name(result).c_str(), param, handle);
  return result;
}

} // namespace loader
} // namespace ordo
