# SPDX-License-Identifier: Apache-2.0
"""Writes the pieces every adapter shares (source/generated/):
  unsupported.gen.cpp      a stub for every DDI slot, returning UNSUPPORTED_FEATURE,
                           ordo::unsupported_ddi() (the table of them), and
                           ordo::fill_unsupported(), the end of every table build: the
                           exception boundary around each function the adapter put in
                           (ordo::put_boundary, entry_boundary.py), then a stub in every
                           empty slot;
  proc_addr_getters.gen.cpp the 26 exported urGet*ProcAddrTable functions of an adapter,
                           copying tables out of the adapter's ordo::adapter_ddi()."""
from spec import BANNER, c_type_decl


def outputs(spec):
    u = [BANNER.rstrip(), '#include "ordo/ddi_fill.hpp"', "", "namespace {", ""]
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            params = ", ".join(p["type"] for p in fn["params"])
            u.append("ur_result_t UR_APICALL unsupported_%s(%s) { return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; }"
                     % (fn["name"], params))
    u += ["", "} // namespace", "", "namespace ordo {", "",
          "const ur_dditable_t &unsupported_ddi() {",
          "  static const ur_dditable_t stubs = [] {",
          "    ur_dditable_t t{};"]
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            u.append("    t.%s.%s = unsupported_%s;" % (t["field"], s["name"], fn["name"]))
    u += ["    return t;", "  }();", "  return stubs;", "}", "",
          "void fill_unsupported(ur_dditable_t &ddi, const table_tail &tail) {",
          "  put_boundary(ddi, tail); // the adapter's own functions only: the stubs never throw"]
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            u.append("  if (!ddi.%s.%s) ddi.%s.%s = unsupported_%s;"
                     % (t["field"], s["name"], t["field"], s["name"], fn["name"]))
    u += ["}", "", "size_t count_supported(const ur_dditable_t &ddi) {", "  size_t n = 0;"]
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            u.append("  n += ddi.%s.%s != unsupported_%s;" % (t["field"], s["name"], fn["name"]))
    u += ["  return n;", "}", "", "size_t slot_count() { return %d; }" % sum(len(t["slots"]) for t in spec.tables),
          "", "} // namespace ordo", ""]

    g = [BANNER.rstrip(), '#include "ordo/ddi_fill.hpp"', "",
         "// Each adapter defines ordo::adapter_ddi(); these getters are its only exports.", ""]
    for t in spec.tables:
        name = spec.getter_for(t)
        g.append('extern "C" UR_DLLEXPORT ur_result_t UR_APICALL %s(ur_api_version_t version, %s *pDdiTable) {'
                 % (name, t["name"]))
        g.append("  if (!pDdiTable) return UR_RESULT_ERROR_INVALID_NULL_POINTER;")
        g.append("  if (!ordo::version_supported(version)) return UR_RESULT_ERROR_UNSUPPORTED_VERSION;")
        g.append("  *pDdiTable = ordo::adapter_ddi().%s;" % t["field"])
        g.append("  return UR_RESULT_SUCCESS;")
        g.append("}\n")
    return {"source/generated/unsupported.gen.cpp": "\n".join(u),
            "source/generated/proc_addr_getters.gen.cpp": "\n".join(g)}
