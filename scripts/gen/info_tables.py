# SPDX-License-Identifier: Apache-2.0
"""Writes tools/urinfo/support/info_tables.gen.cpp: every enumeration of the API and the
typed queries of each *GetInfo enumeration, as data for urinfo, the demo and the
conformance suite. The types and lookups over them are hand-written
(tools/urinfo/support/info_tables.hpp, info_format.cpp)."""
import re

from spec import BANNER

OUTPUT = "tools/urinfo/support/info_tables.gen.cpp"

# The *GetInfo enumerations the tools walk, in the order they are listed.
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

# Scalar query types: (ValueKind, the C type whose size one element has).
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


def classify(spec, type_):
    """(kind, element C type, enum type name or None, count) for one query's type text.
    count: 1 for a scalar, N for a fixed array T[N], 0 for an open array T[] (or a string)."""
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
    enum = spec.enums.get(type_)
    if enum is not None:
        # A flags typedef (ur_queue_flags_t) carries the bits of its enumeration.
        return ("Flags" if enum["flags"] else "Enum"), type_, type_, count
    if type_ in spec.handles:
        return "Handle", type_, None, count
    if any(s["name"] == type_ for s in spec.structs):
        return "Struct", type_, None, count
    raise SystemExit("info_tables: no rule for query type %r" % type_)


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def outputs(spec):
    out = [BANNER.rstrip(), '#include "info_tables.hpp"', "", "namespace urinfo {", "namespace {"]
    w = out.append
    names = sorted(spec.enums)
    for name in names:
        w("const Enumerator etors_%s[] = {" % name)
        for et in spec.enums[name]["etors"]:
            w("    {%s, %d}," % (c_string(et["name"]), et["value"]))
        w("};")
    w("const EnumType enum_types[] = {")
    for name in names:
        e = spec.enums[name]
        w("    {%s, %s, etors_%s, %d}," % (c_string(name), "true" if e["flags"] else "false",
                                         name, len(e["etors"])))
    w("};")
    w("")
    for info in INFO_ENUMS:
        w("const InfoQuery queries_%s[] = {" % info)
        for et in spec.enums[info]["etors"]:
            kind, ctype, enum_name, count = classify(spec, et["type"])
            w("    {%s, %d, %s, ValueKind::%s, sizeof(%s), %d, %s}," % (
                c_string(et["name"]), et["value"], c_string(et["type"]), kind, ctype, count,
                c_string(enum_name) if enum_name else "nullptr"))
        w("};")
    w("const InfoTable info_tables[] = {")
    for info in INFO_ENUMS:
        w("    {%s, queries_%s, %d}," % (c_string(info), info, len(spec.enums[info]["etors"])))
    w("};")
    w("} // namespace")
    w("")
    w("const EnumType *enum_types_begin() { return enum_types; }")
    w("size_t enum_type_count() { return sizeof(enum_types) / sizeof(enum_types[0]); }")
    w("const InfoTable *info_tables_begin() { return info_tables; }")
    w("size_t info_table_count() { return sizeof(info_tables) / sizeof(info_tables[0]); }")
    w("")
    w("} // namespace urinfo")
    return {OUTPUT: "\n".join(out) + "\n"}
