# SPDX-License-Identifier: Apache-2.0
"""Writes the loader's exported surface (loader/generated/):
  entry_points.gen.cpp       every API function that has a DDI slot, as an exported
                             handle-first dispatcher; the bottom dispatch table the
                             layers call into; the table of exported functions
  proc_addr_getters.gen.cpp  the loader's 26 urGet*ProcAddrTable getters
  loader.gen.map             the linker version script: LIBUR_LOADER_0.12 for all of it

Handle-first dispatch (docs/architecture.md): the table is read from the first word of
the first handle argument. Functions without a slot (urLoader*, urLoaderConfig*,
urDeviceGetSelected) and urAdapterGet are written by hand in loader/."""
import re

from spec import BANNER, decl_params

VERSION_NODE = "LIBUR_LOADER_0.12"
# Exported but written by hand in loader/ (no handle to dispatch on).
HAND_WRITTEN = {"urAdapterGet"}


def dispatch_handles(spec):
    """Names of the non-native handle types the loader can dispatch on."""
    return {k for k, v in spec.handles.items() if not v["native"]}


def dispatch_plan(spec, fn):
    """How a function finds its table: ('value', param) or ('array', param, count)."""
    handles = dispatch_handles(spec)
    for p in fn["params"]:
        if p["type"] in handles:
            return ("value", p)
    for p in fn["params"]:
        m = re.fullmatch(r"const (\w+) \*", p["type"])
        if m and m.group(1) in handles:
            rng = [t for t in p["tags"] if t.startswith("range(")]
            count = re.fullmatch(r"range\(0, (\w+)\)", rng[0]).group(1)
            return ("array", p, count)
    return None


def rule_result(fn, check, default):
    for r in fn.get("rules", []):
        if r["check"] == check:
            return r["result"]
    return default


def args(fn):
    return ", ".join(p["name"] for p in fn["params"])


def slot_functions(spec):
    """(table, slot, function) for every DDI slot, in table order."""
    for t in spec.tables:
        for s in t["slots"]:
            yield t, s, spec.slot_function(s)


def dispatch_body(spec, t, s, fn):
    plan = dispatch_plan(spec, fn)
    out = []
    if plan[0] == "value":
        p = plan[1]
        out.append("  if (!%s) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;" % p["name"])
        out.append("  const ur_dditable_t *table = ordo::ddi_of(%s);" % p["name"])
    else:
        p, count = plan[1], plan[2]
        out.append("  if (!%s) return %s;" % (
            p["name"], rule_result(fn, "NULL == %s" % p["name"], "UR_RESULT_ERROR_INVALID_NULL_POINTER")))
        out.append("  if (%s == 0) return %s;" % (
            count, rule_result(fn, "%s == 0" % count, "UR_RESULT_ERROR_INVALID_SIZE")))
        out.append("  if (!%s[0]) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;" % p["name"])
        out.append("  const ur_dditable_t *table = ordo::ddi_of(%s[0]);" % p["name"])
    # A handle without a table, or a foreign adapter's empty slot, is refused, not called.
    out.append("  if (ORDO_UNLIKELY(!table || !table->%s.%s)) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;"
               % (t["field"], s["name"]))
    out.append("  return table->%s.%s(%s);" % (t["field"], s["name"], args(fn)))
    return out


def entry_points(spec):
    o = [BANNER.rstrip(),
         "// Exported entry points: with no layer active, one table read from the first",
         "// handle and one indirect call; with layers, the top layer's table.",
         '#include "loader_state.hpp"', '#include "ordo/handle.hpp"', "",
         "#define ORDO_UNLIKELY(x) __builtin_expect(!!(x), 0)", "",
         "namespace {", ""]
    for t, s, fn in slot_functions(spec):
        if fn["name"] in HAND_WRITTEN:
            continue
        o.append("inline ur_result_t UR_APICALL dispatch_%s(%s) {" % (fn["name"], decl_params(fn)))
        o += dispatch_body(spec, t, s, fn)
        o.append("}")
        o.append("")
    o += ["} // namespace", "", 'extern "C" {', ""]
    for t, s, fn in slot_functions(spec):
        if fn["name"] in HAND_WRITTEN:
            continue
        o.append("UR_APIEXPORT ur_result_t UR_APICALL %s(%s) {" % (fn["name"], decl_params(fn)))
        o.append("  if (const ur_dditable_t *layers = ordo::loader::layer_top())")
        o.append("    return layers->%s.%s(%s);" % (t["field"], s["name"], args(fn)))
        o.append("  return dispatch_%s(%s);" % (fn["name"], args(fn)))
        o.append("}")
        o.append("")
    o += ['} // extern "C"', "", "namespace ordo {", "namespace loader {", ""]
    o.append("// The bottom of every layer chain: plain handle-first dispatch.")
    o.append("const ur_dditable_t &dispatch_table() {")
    o.append("  static const ur_dditable_t table = [] {")
    o.append("    ur_dditable_t t{};")
    for t, s, fn in slot_functions(spec):
        target = "ordo::loader::adapter_get" if fn["name"] in HAND_WRITTEN else "dispatch_%s" % fn["name"]
        o.append("    t.%s.%s = %s;" % (t["field"], s["name"], target))
    o += ["    return t;", "  }();", "  return table;", "}", ""]
    o.append("// The loader's own exported functions, as its urGet*ProcAddrTable getters hand out.")
    o.append("const ur_dditable_t &exported_table() {")
    o.append("  static const ur_dditable_t table = [] {")
    o.append("    ur_dditable_t t{};")
    for t, s, fn in slot_functions(spec):
        o.append("    t.%s.%s = ::%s;" % (t["field"], s["name"], fn["name"]))
    o += ["    return t;", "  }();", "  return table;", "}", "", "} // namespace loader",
          "} // namespace ordo", ""]
    return "\n".join(o)


def getters(spec):
    g = [BANNER.rstrip(), "// The loader's getters hand out tables of its own exported functions,",
         "// so a caller that fills its dispatch from them still goes through the loader.",
         '#include "loader_state.hpp"', "", 'extern "C" {', ""]
    for t in spec.tables:
        name = spec.getter_for(t)
        g.append("UR_APIEXPORT ur_result_t UR_APICALL %s(ur_api_version_t version, %s *pDdiTable) {"
                 % (name, t["name"]))
        g.append("  if (!pDdiTable) return UR_RESULT_ERROR_INVALID_NULL_POINTER;")
        g.append("  if (!ordo::version_supported(version)) return UR_RESULT_ERROR_UNSUPPORTED_VERSION;")
        g.append("  *pDdiTable = ordo::loader::exported_table().%s;" % t["field"])
        g.append("  return UR_RESULT_SUCCESS;")
        g.append("}")
        g.append("")
    g += ['} // extern "C"', ""]
    return "\n".join(g)


def version_script(spec):
    names = [f["name"] for f in spec.functions] + sorted(spec.getters)
    m = ["/* SPDX-License-Identifier: Apache-2.0 */",
         "/* Generated by scripts/generate from scripts/spec/ur.json. Do not edit. */",
         "/* Every API function and table getter, under one version node; nothing else. */",
         "%s {" % VERSION_NODE, "  global:"]
    m += ["    %s;" % n for n in names]
    m += ["  local:", "    *;", "};", ""]
    return "\n".join(m)


def outputs(spec):
    return {"loader/generated/entry_points.gen.cpp": entry_points(spec),
            "loader/generated/proc_addr_getters.gen.cpp": getters(spec),
            "loader/generated/loader.gen.map": version_script(spec)}
