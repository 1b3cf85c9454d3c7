// SPDX-License-Identifier: Apache-2.0
// urLoaderConfig*: create, count references, query, and record what urLoaderInit
// should apply. Live configs are remembered, so that a destroyed or made-up handle is
// refused instead of used.
#include "loader_config.hpp"

#include <unordered_set>

#include "layers.hpp"
#include "loader_state.hpp"
#include "ordo/info.hpp"
#include "param_checks.gen.hpp"

namespace ordo {
namespace loader {
namespace {

std::mutex g_live_mutex;
std::unordered_set<ur_loader_config_handle_t> &live_configs() {
  static std::unordered_set<ur_loader_config_handle_t> live;
  return live;
}

// The error for a handle that is null or not a live config.
ur_result_t check_handle(ur_loader_config_handle_t config) {
  if (!config) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!config_is_live(config)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  return UR_RESULT_SUCCESS;
}

std::string joined_layer_names() {
  std::string out;
  for (const std::string &name : available_layers()) {
    if (!out.empty()) out += ';';
    out += name;
  }
  return out;
}

} // namespace

bool config_is_live(ur_loader_config_handle_t config) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return live_configs().count(config) != 0;
}

ConfigSnapshot snapshot(ur_loader_config_handle_t config) {
  std::lock_guard<std::mutex> lock(config->mutex);
  return ConfigSnapshot{config->layers, config->mocking, config->codeloc, config->codeloc_data};
}

} // namespace loader
} // namespace ordo

using namespace ordo::loader;

extern "C" {

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigCreate(ur_loader_config_handle_t *phLoaderConfig) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigCreate(&why, phLoaderConfig)) return r;
  auto *config = new ur_loader_config_handle_t_();
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    live_configs().insert(config);
  }
  *phLoaderConfig = config;
  return UR_RESULT_SUCCESS;
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigRetain(ur_loader_config_handle_t hLoaderConfig) {
  // Counting under the registry lock keeps a concurrent last release from freeing it.
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigRetain(&why, hLoaderConfig)) return r;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  if (!live_configs().count(hLoaderConfig)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
  hLoaderConfig->ref_count.fetch_add(1, std::memory_order_relaxed);
  return UR_RESULT_SUCCESS;
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigRelease(ur_loader_config_handle_t hLoaderConfig) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigRelease(&why, hLoaderConfig)) return r;
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    if (!live_configs().count(hLoaderConfig)) return UR_RESULT_ERROR_INVALID_ARGUMENT;
    if (hLoaderConfig->ref_count.fetch_sub(1, std::memory_order_acq_rel) != 1) return UR_RESULT_SUCCESS;
    live_configs().erase(hLoaderConfig);
  }
  delete hLoaderConfig;
  return UR_RESULT_SUCCESS;
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigGetInfo(ur_loader_config_handle_t hLoaderConfig,
                                                          ur_loader_config_info_t propName, size_t propSize,
                                                          void *pPropValue, size_t *pPropSizeRet) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigGetInfo(&why, hLoaderConfig, propName, propSize, pPropValue, pPropSizeRet))
    return r;
  if (ur_result_t r = check_handle(hLoaderConfig)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS: return out.string(joined_layer_names());
  case UR_LOADER_CONFIG_INFO_REFERENCE_COUNT:
    return out.value<uint32_t>(hLoaderConfig->ref_count.load(std::memory_order_relaxed));
  default: return UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
  }
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigEnableLayer(ur_loader_config_handle_t hLoaderConfig,
                                                              const char *pLayerName) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigEnableLayer(&why, hLoaderConfig, pLayerName)) return r;
  if (ur_result_t r = check_handle(hLoaderConfig)) return r;
  if (!is_layer_name(pLayerName)) {
    ORDO_LOG(log(), warning, "urLoaderConfigEnableLayer: no layer named \"%s\"", pLayerName);
    return UR_RESULT_ERROR_LAYER_NOT_PRESENT;
  }
  std::lock_guard<std::mutex> lock(hLoaderConfig->mutex);
  hLoaderConfig->layers.insert(pLayerName);
  return UR_RESULT_SUCCESS;
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigSetCodeLocationCallback(ur_loader_config_handle_t hLoaderConfig,
                                                                          ur_code_location_callback_t pfnCodeloc,
                                                                          void *pUserData) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigSetCodeLocationCallback(&why, hLoaderConfig, pfnCodeloc, pUserData)) return r;
  if (!pfnCodeloc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ur_result_t r = check_handle(hLoaderConfig)) return r;
  std::lock_guard<std::mutex> lock(hLoaderConfig->mutex);
  hLoaderConfig->codeloc = pfnCodeloc;
  hLoaderConfig->codeloc_data = pUserData;
  return UR_RESULT_SUCCESS;
}

UR_APIEXPORT ur_result_t UR_APICALL urLoaderConfigSetMockingEnabled(ur_loader_config_handle_t hLoaderConfig,
                                                                    ur_bool_t enable) {
  const char *why = nullptr;
  if (ur_result_t r = check_urLoaderConfigSetMockingEnabled(&why, hLoaderConfig, enable)) return r;
  if (ur_result_t r = check_handle(hLoaderConfig)) return r;
  std::lock_guard<std::mutex> lock(hLoaderConfig->mutex);
  hLoaderConfig->mocking = enable != 0;
  return UR_RESULT_SUCCESS;
}

} // extern "C"
