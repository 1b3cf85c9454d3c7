# SPDX-License-Identifier: Apache-2.0
"""Writes include/ur_api.h and include/ur_ddi.h: the public C ABI, identical in names,
values, layouts and table order to UR at the pinned commit."""
from spec import BANNER, c_type_decl, decl_params


def _macro(m, out):
    name = m["name"]
    bare = name.split("(")[0]
    out.append("#ifndef %s" % bare)
    if m.get("condition"):
        out.append("#if %s" % m["condition"])
        out.append("#define %s %s" % (name, m["value"]))
        if m.get("altvalue") is not None:
            out.append("#else")
            out.append(("#define %s %s" % (name, m["altvalue"])).rstrip())
        out.append("#endif")
    else:
        out.append("#define %s %s" % (name, m["value"]))
    out.append("#endif\n")


def _enum(e, spec, out):
    forced = spec.data["forced_enumerators"][e["type_name"]]
    prefix = e["etors"][0]["name"].rsplit("_", 1)[0] if False else None
    type_name = e["type_name"]
    force_name = type_name[:-2].upper() + "_FORCE_UINT32"
    if e["flags"]:
        out.append("typedef uint32_t %s;" % e["name"])
    out.append("typedef enum %s {" % type_name)
    for x in e["etors"]:
        if x["name"] == "UR_API_VERSION_CURRENT":
            out.append("  %s = UR_MAKE_VERSION(%d, %d)," % ((x["name"],) + tuple(spec.data["api_version"])))
            continue
        note = "  ///< [%s]" % x["type"] if x.get("type") else ""
        out.append("  %s = %s,%s" % (x["name"], _value(x["value"], e["flags"]), note))
    out.append("  %s = 0x%x" % (force_name, forced))
    out.append("} %s;" % type_name)
    if e["flags"]:
        mask = 0
        for x in e["etors"]:
            mask |= x["value"]
        out.append("/// Bits of %s that no flag defines: any of them set is invalid." % e["name"])
        out.append("#define %sMASK 0x%08x" % (type_name[:-6].upper() + "FLAGS_", ~mask & 0xFFFFFFFF))
    out.append("")


def _value(v, flags):
    if flags and v and (v & (v - 1)) == 0:
        return "UR_BIT(%d)" % (v.bit_length() - 1)
    return "0x%x" % v if v >= 0x1000 else str(v)


def _struct(s, out):
    out.append("typedef %s %s {" % (s["kind"], s["name"]))
    for m in s["members"]:
        tags = "".join("[%s]" % t for t in m.get("tags", []))
        decl = c_type_decl(m["type"], m["name"])
        if m.get("array"):
            decl += "[%s]" % m["array"]
        out.append("  %s;%s" % (decl, ("  ///< " + tags) if tags else ""))
    out.append("} %s;\n" % s["name"])


def _function(fn, out):
    out.append("/// %s" % fn["name"])
    for p in fn["params"]:
        out.append("///   %-22s %s" % (p["name"], "".join("[%s]" % t for t in p["tags"])))
    if fn["rules"]:
        out.append("/// Parameter rules (checked by UR_LAYER_PARAMETER_VALIDATION):")
        for r in fn["rules"]:
            out.append("///   %s if `%s`" % (r["result"][len("UR_RESULT_"):], r["check"]))
    params = ",\n    ".join(c_type_decl(p["type"], p["name"]) for p in fn["params"])
    out.append("UR_APIEXPORT ur_result_t UR_APICALL %s(\n    %s);\n" % (fn["name"], params or "void"))


def api_header(spec):
    out = [BANNER.rstrip(), "// Unified Runtime C API, version %d.%d, ABI-compatible with UR commit %s."
           % (tuple(spec.data["api_version"]) + (spec.data["ur_commit"],)),
           "#ifndef UR_API_H_INCLUDED", "#define UR_API_H_INCLUDED", "",
           "#include <stddef.h>", "#include <stdint.h>",
           "#if !defined(__cplusplus)", "#include <stdbool.h> // some structs hold bool", "#endif", "",
           "#if defined(__cplusplus)", 'extern "C" {', "#endif", ""]
    # ur_function_t and ur_structure_type_t (the registry) come first, as in UR.
    for sec in spec.sections:
        out.append("// ---- %s ----\n" % sec["name"])
        for it in sec["items"]:
            k = it["kind"]
            if k == "macro":
                _macro(it, out)
            elif k == "typedef":
                out.append("typedef %s %s;\n" % (it["value"], it["name"]))
            elif k == "handle":
                if it["native"]:
                    out.append("typedef uintptr_t %s;\n" % it["name"])
                else:
                    out.append("typedef struct %s_ *%s;\n" % (it["name"], it["name"]))
            elif k == "enum":
                _enum(it, spec, out)
            elif k in ("struct", "union"):
                _struct(it, out)
            elif k == "fptr":
                ps = ", ".join(c_type_decl(p["type"], p["name"]) for p in it["params"])
                out.append("typedef %s (*%s)(%s);\n" % (it["return"], it["name"], ps or "void"))
            elif k == "function":
                _function(it, out)
    out.append("// ---- callback parameter packs: one pointer per parameter ----\n")
    for name, st in spec.params_structs.items():
        out.append("typedef struct %s {" % name)
        for m in st["members"]:
            out.append("  %s;" % c_type_decl(m["type"], m["name"]))
        out.append("} %s;\n" % name)
    out += ["#if defined(__cplusplus)", "} // extern \"C\"", "#endif", "",
            "#endif // UR_API_H_INCLUDED", ""]
    return "\n".join(out)


def ddi_header(spec):
    out = [BANNER.rstrip(), "// Dispatch tables (DDI) of the Unified Runtime, slot-for-slot as in UR %s."
           % spec.data["ur_commit"],
           "#ifndef UR_DDI_H_INCLUDED", "#define UR_DDI_H_INCLUDED", "",
           '#include "ur_api.h"', "",
           "#if defined(__cplusplus)", 'extern "C" {', "#endif", ""]
    for t in spec.tables:
        out.append("// ---- %s ----" % t["name"])
        for s in t["slots"]:
            fn = spec.slot_function(s)
            out.append("typedef ur_result_t(UR_APICALL *%s)(%s);" % (s["type"], decl_params(fn, names=False)))
        out.append("\ntypedef struct %s {" % t["name"])
        for s in t["slots"]:
            out.append("  %s %s;" % (s["type"], s["name"]))
        out.append("} %s;\n" % t["name"])
        g = spec.getter_for(t)
        out.append("/// Fills pDdiTable with the adapter's (or loader's) functions for this table.")
        out.append("UR_DLLEXPORT ur_result_t UR_APICALL %s(\n    ur_api_version_t version,\n"
                   "    %s *pDdiTable);" % (g, t["name"]))
        out.append("typedef ur_result_t(UR_APICALL *ur_pfn%s_t)(ur_api_version_t, %s *);\n"
                   % (g[2:], t["name"]))
    out.append("/// Every table, in the order UR lays them out.")
    out.append("typedef struct ur_dditable_t {")
    for m in spec.top_table["members"]:
        out.append("  %s %s;" % (m["type"], m["name"]))
    out.append("} ur_dditable_t;\n")
    out += ["#if defined(__cplusplus)", "} // extern \"C\"", "#endif", "",
            "#endif // UR_DDI_H_INCLUDED", ""]
    return "\n".join(out)


def outputs(spec):
    return {"include/ur_api.h": api_header(spec), "include/ur_ddi.h": ddi_header(spec)}
