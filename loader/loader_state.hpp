// SPDX-License-Identifier: Apache-2.0
// State shared by the loader's translation units: the active layer chain, the generated
// tables, and the loaded adapters (see docs/loader.md).
#pragma once
#include <atomic>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "ordo/ddi_fill.hpp"
#include "ordo/logger.hpp"
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo {
namespace loader {

// An object in static storage that is never destroyed: loggers and registries that
// exit-time destructors (ours, adapters') may still use. No heap block of its own, so
// a dlclose'd copy of the loader leaves nothing unreachable behind.
template <class T, class... A> T &immortal(A &&...args) {
  alignas(T) static unsigned char storage[sizeof(T)];
  static T *object = new (storage) T(std::forward<A>(args)...);
  return *object;
}

// Top of the layer chain, or null when no layer is on (then the entry points dispatch
// straight from the handle). Published with release order once the chain is complete.
extern std::atomic<const ur_dditable_t *> g_layer_top;
inline const ur_dditable_t *layer_top() { return g_layer_top.load(std::memory_order_acquire); }

// Generated (entry_points.gen.cpp): the handle-first dispatch table every layer chain
// ends in, and the table of the loader's own exported functions.
const ur_dditable_t &dispatch_table();
const ur_dditable_t &exported_table();

// The logger named "loader" (UR_LOG_LOADER).
Logger &log();

// urAdapterGet across every loaded adapter (the bottom table's Adapter.pfnGet).
ur_result_t UR_APICALL adapter_get(uint32_t NumEntries, ur_adapter_handle_t *phAdapters, uint32_t *pNumAdapters);

// Starts the loader if nothing has yet (the implicit init of a first urAdapterGet).
ur_result_t ensure_initialised();

// "UR_RESULT_ERROR_INVALID_VALUE", or the number when the value has no name.
std::string result_name(ur_result_t result);

} // namespace loader
} // namespace ordo
