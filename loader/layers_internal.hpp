// SPDX-License-Identifier: Apache-2.0
// What the generated layer tables call into (layers.cpp, leak_checking.cpp), and the
// layers' init functions.
#pragma once
#include <atomic>
#include <cstddef>

#include "ur_api.h"
#include "ur_ddi.h"

namespace ordo {
namespace loader {

// Each fills `layer` with its slots over `next` (generated: *_layer.gen.cpp).
void init_validation_layer(const ur_dditable_t &next, ur_dditable_t &layer);
void init_leak_checking_layer(const ur_dditable_t &next, ur_dditable_t &layer);
void init_tracing_layer(const ur_dditable_t &next, ur_dditable_t &layer);
// Hand-written (bounds_checking.cpp): only the enqueue slots it checks differ from `next`.
void init_bounds_checking_layer(const ur_dditable_t &next, ur_dditable_t &layer);

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

// Released handles (docs/loader.md, "Released handles"): with both the validation and
// the leak-checking layer on, a handle whose count reaches zero is remembered as
// released until a call hands the same address out again; the validation layer refuses
// calls that name it.
void set_released_handle_checks(bool on);
// How many handles are remembered as released: the validation layer's slots look up
// nothing while it is zero, or while the checks are off (then it stays zero).
extern std::atomic<size_t> g_released_handles;
inline bool released_handles_to_check() { return g_released_handles.load(std::memory_order_relaxed) != 0; }
bool handle_released(const void *handle);
// `handle` may be named after its last release (an event with callbacks).
void handle_nameable_after_release(const void *handle);
// Logs (logger "validation") that `function` was refused because its parameter `param`
// is a released handle; returns `result`.
ur_result_t released_handle_refused(const char *function, ur_result_t result, const char *param, const void *handle);

} // namespace loader
} // namespace ordo
