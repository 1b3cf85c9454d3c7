// SPDX-License-Identifier: Apache-2.0
// The layers (docs/loader.md, "Layers"): each is a ur_dditable_t whose slots do their
// work and call the next table; the chain ends in the handle-first dispatch table.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo {
namespace loader {

// "UR_LAYER_PARAMETER_VALIDATION", ... in the order urLoaderConfigGetInfo lists them.
// is_layer_name also accepts "UR_LAYER_BOUNDS_CHECKING" (layers.cpp says why it is not listed).
const std::vector<std::string> &available_layers();
bool is_layer_name(const std::string &name);

// Names from UR_ENABLE_LAYERS (separated by spaces, ';' or ','); unknown ones are
// logged and dropped.
std::set<std::string> layers_from_environment();

// Builds the chain for these names and returns its top (null when none is on).
// Tracing sits on top (it sees the call as made), then parameter validation, then
// leak checking, then bounds checking, then dispatch.
const ur_dditable_t *build_layer_chain(const std::set<std::string> &names, ur_code_location_callback_t codeloc,
                                       void *codeloc_data);

// Called at loader teardown (and at exit if the loader is still up): the leak
// checker's report. Leaves no layer active.
void tear_down_layers();

} // namespace loader
} // namespace ordo
