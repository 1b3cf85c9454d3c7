// SPDX-License-Identifier: Apache-2.0
// The switch over the table tail's parameter checks (ordo/ddi_fill.hpp).
#include <cstdlib>
#include <cstring>

#include "ordo/ddi_fill.hpp"

namespace ordo {

bool param_checks_wanted(const table_tail &tail) {
  if (tail.param_checks_required) return true; // its own code relies on them
  // An override for trying an adapter with the checks on (or off) without rebuilding it:
  // its conformance run decides whether its own default may change.
  const char *value = std::getenv("ORDO_ADAPTER_PARAM_CHECKS");
  if (value && std::strcmp(value, "1") == 0) return true;
  if (value && std::strcmp(value, "0") == 0) return false;
  return tail.param_checks;
}

} // namespace ordo
