"""Writes the parameter-validation layer (loader/generated/):
  param_checks.gen.hpp       check_<function>(): the spec's rules for one function, in
                             spec order, which is the order UR's own validation layer
                             checks them in (scripts/import_ur_spec.py, rules_of; each
                             rule's "check" is a C expression over the parameter names),
                             then a null check of every wait-list entry; shared with the
                             hand-written loader functions
  validation_layer.gen.cpp   a table whose slots run those checks and call the next table
"""
import re

from spec import BANNER, decl_params


def wait_lists(fn):
    """(list, count) parameter names of the event wait lists of a function."""
    out = []
    for p in fn["params"]:
        if p["type"] != "const ur_event_handle_t *" or "in" not in p["tags"]:
            continue
        rng = [t for t in p["tags"] if t.startswith("range(")]
        if not rng:
            continue
        m = re.fullmatch(r"range\(0, (\w+)\)", rng[0])
        if m and "WaitList" in p["name"]:
            out.append((p["name"], m.group(1)))
    return out


def has_checks(fn):
    return bool(fn.get("rules")) or bool(wait_lists(fn))


def c_string(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def param_checks(spec):
    o = [BANNER.rstrip(),
         "// check_<function>(why, args...): UR_RESULT_SUCCESS, or the result of the first",
         "// rule the arguments break, with *why set to the rule's text.",
         "#pragma once", '#include "ur_api.h"', "", "#include <cstddef>", "",
         "namespace ordo {", "namespace loader {", ""]
    for fn in spec.functions:
        if not has_checks(fn):
            continue
        params = decl_params(fn)
        o.append("inline ur_result_t check_%s(const char **why%s) {"
                 % (fn["name"], (", " + params) if fn["params"] else ""))
        for r in fn.get("rules", []):
            o.append("  if (%s) {" % r["check"])
            o.append("    *why = %s;" % c_string(r["check"]))
            o.append("    return %s;" % r["result"])
            o.append("  }")
        for lst, count in wait_lists(fn):
            o.append("  if (%s) {" % lst)
            o.append("    for (uint32_t i = 0; i < %s; ++i) {" % count)
            o.append("      if (%s[i] == NULL) {" % lst)
            o.append("        *why = %s;" % c_string("%s[i] == NULL for some i < %s" % (lst, count)))
            o.append("        return UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;")
            o.append("      }")
            o.append("    }")
            o.append("  }")
        o.append("  return UR_RESULT_SUCCESS;")
        o.append("}")
        o.append("")
    o += ["} // namespace loader", "} // namespace ordo", ""]
    return "\n".join(o)


def validation_layer(spec):
    o = [BANNER.rstrip(), '#include "layers_internal.hpp"', '#include "param_checks.gen.hpp"', "",
         "namespace ordo {", "namespace loader {", "namespace {", "",
         "ur_dditable_t g_next; // the table below this layer", ""]
    slots = []
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            if not has_checks(fn):
                continue
            slots.append((t, s, fn))
            args = ", ".join(p["name"] for p in fn["params"])
            o.append("ur_result_t UR_APICALL validate_%s(%s) {" % (fn["name"], decl_params(fn)))
            o.append("  const char *why = nullptr;")
            o.append("  if (ur_result_t r = check_%s(&why%s))" % (fn["name"], (", " + args) if args else ""))
            o.append('    return validation_refused("%s", r, why);' % fn["name"])
            o.append("  return g_next.%s.%s(%s);" % (t["field"], s["name"], args))
            o.append("}")
            o.append("")
    o += ["} // namespace", "",
          "// Slots without rules are the next table's own: no cost for them.",
          "void init_validation_layer(const ur_dditable_t &next, ur_dditable_t &layer) {",
          "  g_next = next;", "  layer = next;"]
    for t, s, fn in slots:
        o.append("  layer.%s.%s = validate_%s;" % (t["field"], s["name"], fn["name"]))
    o += ["}", "", "} // namespace loader", "} // namespace ordo", ""]
    return "\n".join(o)


def outputs(spec):
    return {"loader/generated/param_checks.gen.hpp": param_checks(spec),
            "loader/generated/validation_layer.gen.cpp": validation_layer(spec)}
