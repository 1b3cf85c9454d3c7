// SPDX-License-Identifier: Apache-2.0
// Known failures: tests an adapter is known to fail today, each with its reason.
//
// A listed test is reported as skipped with "known failure on <adapter>: <reason>";
// it never runs silently and never counts as a pass. To see whether one has been
// fixed, run with ORDO_CONFORMANCE_RUN_KNOWN_FAILURES=1. When a fix lands, delete its
// entry here in the same change. docs/conformance.md says how to add one.
//
// backend: the adapter's backend as ONEAPI_DEVICE_SELECTOR spells it, or "*".
// pattern: glob over "Suite.Test/<device>[__<param>]"; without a '/', every
//          parameter of "Suite.Test" matches.
#include <fnmatch.h>

#include "conformance.hpp"

namespace conf {

const std::vector<KnownFailure> &known_failures() {
  static const std::vector<KnownFailure> list = {
      // {"native_cpu", "urEventTest.FailedDependency", "why, in one line"},
  };
  return list;
}

const char *known_failure(const std::string &backend, const std::string &test) {
  for (const KnownFailure &k : known_failures()) {
    if (std::string(k.backend) != "*" && backend != k.backend) continue;
    std::string pattern = k.pattern;
    if (pattern.find('/') == std::string::npos) pattern += "/*";
    if (fnmatch(pattern.c_str(), test.c_str(), 0) == 0) return k.reason;
  }
  return nullptr;
}

} // namespace conf
