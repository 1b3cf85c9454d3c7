// SPDX-License-Identifier: Apache-2.0
// An adapter's dispatch table, built once at the first call of ordo::adapter_ddi():
// `Build` puts in every slot the adapter implements (its own entry points, then those
// ordo::command_buffer and ordo::derived make of them), and the table tail comes last
// (ordo::fill_unsupported: every function behind the exception boundary, every empty
// slot the generated "unsupported" stub; docs/adapter-guide.md, "The exception
// boundary").
#pragma once

#include <cstring>

#include "ordo/ddi_fill.hpp"
#include "ur_ddi.h"

namespace ordo::ur_common {

// `ParamChecks`: table_tail::param_checks, the spec's parameter checks before each
// function (only for an adapter whose conformance runs hold it).
template <void (*Build)(ur_dditable_t &), bool ParamChecks = false> const ur_dditable_t &table_built_once() {
  static const ur_dditable_t table = [] {
    ur_dditable_t t;
    std::memset(&t, 0, sizeof(t));
    Build(t);
    ordo::table_tail tail;
    tail.param_checks = ParamChecks;
    ordo::fill_unsupported(t, tail);
    return t;
  }();
  return table;
}

} // namespace ordo::ur_common
