#!/usr/bin/env python3
"""Writes info_tables.gen.cpp: the enumerations and the typed *GetInfo queries of the
UR API, read from scripts/spec/ur.json, for urinfo, the demo and the conformance suite.

Run by the build (tools/urinfo/CMakeLists.txt): gen_info_tables.py <ur.json> <out.cpp>.
The output lives in the build tree only; the spec is its single source.
"""
import json
import re
import sys

# The *GetInfo enumerations whose queries the tools walk, and the name the C++ side
# uses for each table.
INFO_ENUMS = [
    "ur_loader_config_info_t",
    "ur_adapter_info_t",
    "ur_platform_info_t",
    "ur_device_info_t",
    "ur_context_info_t",
    "ur_queue_info_t",
    "ur_event_info_t",
    "ur_profiling_info_t",
    "ur_usm_alloc_info_t",
    "ur_usm_pool_info_t",
    "ur_program_info_t",
    "ur_program_build_info_t",
    "ur_kernel_info_t",
    "ur_kernel_group_info_t",
    "ur_kernel_sub_group_info_t",
]

SCALARS = {
    "uint8_t": ("Unsigned", "uint8_t"),
    "uint32_t": ("Unsigned", "uint32_t"),
    "uint64_t": ("Unsigned", "uint64_t"),
    "size_t": ("Unsigned", "size_t"),
    "int32_t": ("Signed", "int32_t"),
    "int": ("Signed", "int"),
    "ur_bool_t": ("Bool", "ur_bool_t"),
    "void *": ("Pointer", "void *"),
    "unsigned char *": ("Pointer", "unsigned char *"),
}


def classify(type_, enums, flags, handles, structs):
    """(kind, element C type, enum type name or None, count) for one query type.
    count: 1 for a scalar, N for a fixed array T[N], 0 for an open array T[]."""
    count = 1
    m = re.fullmatch(r"(.*?)\s*\[(\d*)\]", type_)
    if m:
        type_ = m.group(1)
        count = int(m.group(2)) if m.group(2) else 0
    if type_ == "char" and count == 0:
        return "String", "char", None, 0
    if type_ in SCALARS:
        kind, ctype = SCALARS[type_]
        return kind, ctype, None, count
    if type_ in flags:
        return "Flags", type_, flags[type_], count
    if type_ in enums:
        return "Enum", type_, type_, count
    if type_ in handles:
        return "Handle", type_, None, count
    if type_ in structs:
        return "Struct", type_, None, count
    raise SystemExit("gen_info_tables: no rule for query type %r" % type_)


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    spec_path, out_path = sys.argv[1], sys.argv[2]
    data = json.load(open(spec_path))
    items = [i for s in data["sections"] for i in s["items"]]
    enums = {i["name"]: i for i in items if i["kind"] == "enum"}
    # A flags typedef (ur_queue_flags_t) names the enumeration of its bits (ur_queue_flag_t).
    flags = {i["name"]: i["name"] for i in items if i["kind"] == "enum" and i["flags"]}
    handles = {i["name"] for i in items if i["kind"] == "handle"}
    structs = {i["name"] for i in items if i["kind"] in ("struct", "union")}

    out = []
    w = out.append
    w("// Generated at build time by tools/urinfo/gen_info_tables.py from scripts/spec/ur.json.")
    w("// Do not edit; it is not committed.")
    w('#include "info_tables.hpp"')
    w("")
    w("namespace urinfo {")
    w("namespace {")
    names = sorted(enums)
    for name in names:
        e = enums[name]
        w("const Enumerator etors_%s[] = {" % name)
        for et in e["etors"]:
            w("    {%s, %d}," % (c_string(et["name"]), et["value"]))
        w("};")
    w("const EnumType enum_types[] = {")
    for name in names:
        e = enums[name]
        w("    {%s, %s, etors_%s, %d}," % (c_string(name), "true" if e["flags"] else "false",
                                         name, len(e["etors"])))
    w("};")
    w("")
    for info in INFO_ENUMS:
        e = enums[info]
        w("const InfoQuery queries_%s[] = {" % info)
        for et in e["etors"]:
            kind, ctype, enum_name, count = classify(et["type"], enums, flags, handles, structs)
            w("    {%s, %d, %s, ValueKind::%s, sizeof(%s), %d, %s}," % (
                c_string(et["name"]), et["value"], c_string(et["type"]), kind, ctype, count,
                c_string(enum_name) if enum_name else "nullptr"))
        w("};")
    w("const InfoTable info_tables[] = {")
    for info in INFO_ENUMS:
        w("    {%s, queries_%s, %d}," % (c_string(info), info, len(enums[info]["etors"])))
    w("};")
    w("} // namespace")
    w("")
    w("const EnumType *enum_types_begin() { return enum_types; }")
    w("size_t enum_type_count() { return sizeof(enum_types) / sizeof(enum_types[0]); }")
    w("const InfoTable *info_tables_begin() { return info_tables; }")
    w("size_t info_table_count() { return sizeof(info_tables) / sizeof(info_tables[0]); }")
    w("")
    w("} // namespace urinfo")
    text = "\n".join(out) + "\n"
    try:
        if open(out_path).read() == text:
            return
    except OSError:
        pass
    with open(out_path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
