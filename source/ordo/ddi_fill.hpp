// SPDX-License-Identifier: Apache-2.0
// Helpers every adapter uses to build its dispatch table (docs/architecture.md,
// "Handle-first dispatch"; docs/adapter-guide.md, "The contract" and "The exception
// boundary").
#pragma once
#include <cstddef>

#include "ur_ddi.h"

namespace ordo {

// What the end of a table build puts around the adapter's functions.
struct table_tail {
  // Run the spec's parameter checks (ordo_checks/param_checks.gen.hpp, the validation
  // layer's own) before the adapter's function, so that bad input gets the layer's code
  // with no layer loaded. Off unless the adapter's conformance runs say its answers stay
  // the same (docs/adapter-guide.md, "The exception boundary").
  bool param_checks = false;
  // The adapter leaves to those checks what they cover and repeats none of them, so
  // ORDO_ADAPTER_PARAM_CHECKS=0 must not turn them off (bad input would reach it
  // unchecked). Implies param_checks.
  bool param_checks_required = false;
};

// The end of every table build, called once the adapter, ordo::derived and ordo::command_buffer
// have put in what they implement: every function in the table goes behind the
// exception boundary (put_boundary), then every slot still null gets the generated
// "unsupported" stub, so no slot an adapter exposes is ever null.
void fill_unsupported(ur_dditable_t &ddi, const table_tail &tail = table_tail{});

// The exception boundary (source/generated/boundary.gen.cpp): each non-null slot that
// holds neither a stub nor a thunk gets its slot's thunk, which calls the function that
// was there through ordo::guarded (ordo/guarded.hpp), after the parameter checks where
// tail.param_checks. The table keeps pointing at the thunks, so handles that point at
// the table (ordo::adapter_ddi()) reach the adapter only through them.
void put_boundary(ur_dditable_t &ddi, const table_tail &tail);

// Whether the boundary runs the parameter checks: always where
// tail.param_checks_required; else tail.param_checks, unless ORDO_ADAPTER_PARAM_CHECKS
// says otherwise for every adapter of the process ("1": on, "0": off; read when the
// table is built).
bool param_checks_wanted(const table_tail &tail);

// Each slot's thunk without checks, and, slot by slot, the function the thunks of this
// library call. For the mock adapter, whose ordoMockReplace swaps a function behind the
// boundary (adapters/mock/ddi.cpp); nothing else should need them.
const ur_dditable_t &boundary_thunks();
ur_dditable_t &boundary_targets();

// The generated stub of every slot (UR_RESULT_ERROR_UNSUPPORTED_FEATURE).
const ur_dditable_t &unsupported_ddi();

// How many slots hold something other than the unsupported stub (for logs and docs).
size_t count_supported(const ur_dditable_t &ddi);
size_t slot_count();

// The adapter's complete table; every handle it creates points at it. Defined once
// per adapter library (the generated getters copy tables out of it).
const ur_dditable_t &adapter_ddi();

// Same major version, and a caller no older than the header we were built with.
inline bool version_supported(ur_api_version_t v) {
  return UR_MAJOR_VERSION(v) == UR_MAJOR_VERSION(UR_API_VERSION_CURRENT) &&
         UR_MINOR_VERSION(v) >= UR_MINOR_VERSION(UR_API_VERSION_CURRENT);
}

} // namespace ordo
