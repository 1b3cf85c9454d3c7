// SPDX-License-Identifier: Apache-2.0
// urLoaderInit / urLoaderTearDown / urAdapterGet: the loader's reference-counted life.
//
// The first urLoaderInit (or the first urAdapterGet when nobody called urLoaderInit)
// discovers adapters and builds the layer chain; every urLoaderInit takes a reference,
// every urLoaderTearDown drops one, and the last one unloads everything. Later inits
// while the loader is up only count: their config is not applied (as in UR).
#include <cstdlib>
#include <mutex>
#include <shared_mutex>

#include "adapter_registry.hpp"
#include "enum_names.gen.hpp"
#include "layers.hpp"
#include "loader_config.hpp"
#include "loader_state.hpp"
#include "param_checks.gen.hpp"

namespace ordo {
namespace loader {

std::atomic<const ur_dditable_t *> g_layer_top{nullptr};

Logger &log() { return immortal<Logger>("loader"); }

std::string result_name(ur_result_t result) {
  if (const char *n = enum_name(result)) return n;
  return "ur_result_t(" + std::to_string(static_cast<int>(result)) + ")";
}

namespace {

struct LoaderState {
  std::shared_mutex mutex; // exclusive for init/teardown, shared for urAdapterGet
  uint32_t references = 0;
  std::atomic<bool> up{false}; // lock-free check on the urAdapterGet fast path
  AdapterList adapters;

  // A program that never tears down still gets the leak report at exit.
  ~LoaderState() {
    if (references > 0) tear_down_layers();
    // Adapters stay loaded, and keep the loader's reference: their exit-time
    // destructors may still run after ours, and nothing of theirs is torn down now.
    for (auto &a : adapters) {
      a->held = nullptr;
      a->library = nullptr;
    }
  }
};

LoaderState &state() {
  static LoaderState s;
  return s;
}

// Caller holds the exclusive lock.
void start(const ConfigSnapshot &config) {
  LoaderState &s = state();
  s.adapters = discover_adapters(config.mocking);
  ORDO_LOG(log(), info, "loader initialised with %zu adapter%s%s", s.adapters.size(), s.adapters.size() == 1 ? "" : "s",
           config.mocking ? " (mocking enabled)" : "");
  std::set<std::string> layers = layers_from_environment();
  layers.insert(config.layers.begin(), config.layers.end());
  const ur_dditable_t *top = build_layer_chain(layers, config.codeloc, config.codeloc_data);
  g_layer_top.store(top, std::memory_order_release);
  s.up.store(true, std::memory_order_release);
}

ur_result_t init(ur_loader_config_handle_t config) {
  ConfigSnapshot snap;
  if (config) snap = snapshot(config);
  LoaderState &s = state();
  std::unique_lock<std::shared_mutex> lock(s.mutex);
  if (s.references == 0) {
    start(snap);
  } else if (config) {
    ORDO_LOG(log(), info, "urLoaderInit: the loader is already initialised; this config is not applied");
  }
  ++s.references;
  return UR_RESULT_SUCCESS;
}

} // namespace

ur_result_t ensure_initialised() {
  LoaderState &s = state();
  if (s.up.load(std::memory_order_acquire)) return UR_RESULT_SUCCESS;
  std::unique_lock<std::shared_mutex> lock(s.mutex);
  if (s.references == 0) {
    ORDO_LOG(log(), debug, "urAdapterGet before urLoaderInit: initialising with defaults");
    start(ConfigSnapshot{});
    s.references = 1; // released by a urLoaderTearDown, like an explicit init
  }
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL adapter_get(uint32_t NumEntries, ur_adapter_handle_t *phAdapters, uint32_t *pNumAdapters) {
  if (NumEntries == 0 && phAdapters) return UR_RESULT_ERROR_INVALID_SIZE;
  LoaderState &s = state();
  std::shared_lock<std::shared_mutex> lock(s.mutex);
  const uint32_t loaded = static_cast<uint32_t>(s.adapters.size());
  if (!phAdapters) {
    if (pNumAdapters) *pNumAdapters = loaded;
    return UR_RESULT_SUCCESS;
  }
  // Each adapter returns its one handle and counts the reference. Every loaded adapter
  // passed urAdapterGet when it was loaded, and the loader still holds the handle it
  // gave then: one whose urAdapterGet fails now hands out that handle, retained, so the
  // caller gets the adapters a count query promised, none null (docs/loader.md,
  // "Dispatch"). Only an adapter that refuses the retain too is left out, and the rest
  // move up; *pNumAdapters then says how many were written.
  uint32_t written = 0, asked = 0;
  for (const auto &adapter : s.adapters) {
    if (written == NumEntries) break;
    ++asked;
    ur_adapter_handle_t handle = nullptr;
    ur_result_t r = adapter->ddi.Adapter.pfnGet(1, &handle, nullptr);
    if (r == UR_RESULT_SUCCESS && handle) {
      phAdapters[written++] = handle;
      continue;
    }
    if (r == UR_RESULT_SUCCESS) r = UR_RESULT_ERROR_INVALID_NULL_HANDLE; // success without a handle
    if (adapter->held && adapter->ddi.Adapter.pfnRetain &&
        adapter->ddi.Adapter.pfnRetain(adapter->held) == UR_RESULT_SUCCESS) {
      ORDO_LOG(log(), warning, "urAdapterGet of %s failed with %s; handing out the handle it gave when loaded",
               adapter->path.c_str(), result_name(r).c_str());
      phAdapters[written++] = adapter->held;
      continue;
    }
    ORDO_LOG(log(), warning, "urAdapterGet of %s failed with %s; leaving it out", adapter->path.c_str(),
             result_name(r).c_str());
  }
  for (uint32_t i = written; i < NumEntries && i < loaded; ++i) phAdapters[i] = nullptr;
  // The adapters not asked (NumEntries was reached) still count as available.
  if (pNumAdapters) *pNumAdapters = written + (loaded - asked);
  return UR_RESULT_SUCCESS;
}

} // namespace loader
} // namespace ordo

using namespace ordo::loader;

extern "C" {

UR_APIEXPORT ur_result_t UR_APICALL urLoaderInit(ur_device_init_flags_t device_flags,
                                                 ur_loader_config_handle_t hLoaderConfig) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderInit(&why, device_flags, hLoaderConfig)) return r;
  if (hLoaderConfig && !config_is_live(hLoaderConfig)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  return init(hLoaderConfig);
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderTearDown(void) {
  LoaderState &s = state();
  std::unique_lock<std::shared_mutex> lock(s.mutex);
  if (s.references == 0) return UR_RESULT_ERROR_UNINITIALIZED;
  if (--s.references > 0) return UR_RESULT_SUCCESS;
  s.up.store(false, std::memory_order_release);
  tear_down_layers();
  s.adapters.clear();
  ORDO_LOG(log(), info, "loader torn down");
  return UR_RESULT_SUCCESS;
}

UR_APIEXPORT ur_result_t UR_APICALL urAdapterGet(uint32_t NumEntries, ur_adapter_handle_t *phAdapters,
                                                 uint32_t *pNumAdapters) {
  ensure_initialised();
  if (const ur_dditable_t *layers = layer_top()) return layers->Adapter.pfnGet(NumEntries, phAdapters, pNumAdapters);
  return adapter_get(NumEntries, phAdapters, pNumAdapters);
}

} // extern "C"
