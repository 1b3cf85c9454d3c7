// What the generated layer tables call into (layers.cpp, leak_checking.cpp).
#pragma once
#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo {
namespace loader {

// Each fills `layer` with its slots over `next` (generated: *_layer.gen.cpp).
void init_validation_layer(const ur_dditable_t &next, ur_dditable_t &layer);
void init_leak_checking_layer(const ur_dditable_t &next, ur_dditable_t &layer);
void init_tracing_layer(const ur_dditable_t &next, ur_dditable_t &layer);

// Logs (logger "validation") why a call was refused; returns `result`.
ur_result_t validation_refused(const char *function, ur_result_t result, const char *why);

// The leak checker's registry: a successful call created, retained or released `handle`.
void leak_created(const char *type, const void *handle);
// Counts `handle` as created only if it is not alive already (see ADOPTED in
// scripts/gen/layer_leak_checking.py).
void leak_adopted(const char *type, const void *handle);
void leak_retained(const char *type, const void *handle);
void leak_released(const char *type, const void *handle);
// Logs (logger "leak_checking") every handle still alive, then forgets them all.
// Returns how many were alive.
size_t leak_report();

} // namespace loader
} // namespace ordo
