# SPDX-License-Identifier: Apache-2.0
"""Writes the tracing layer and the names it prints (loader/generated/):
  enum_names.gen.hpp/.cpp  enum value -> enumerator name for every enum of the spec, and
                           flag masks -> "A | B | 0x..." for every flags type
  tracing_layer.gen.cpp    one wrapper per DDI slot: prints the call with its arguments,
                           its result and its duration, then returns the result

Printing of each argument is chosen from its type: enums by name, flags by bit names,
handles and pointers as addresses, strings quoted, and out-handles (the created
handle) after the call."""
import re

from spec import BANNER, decl_params


def unique_etors(enum):
    """Enumerators with distinct values (the first name of an aliased value wins)."""
    seen, out = set(), []
    for e in enum["etors"]:
        if e["name"].endswith("_FORCE_UINT32") or e["value"] in seen:
            continue
        seen.add(e["value"])
        out.append(e)
    return out


def value_enums(spec):
    return [e for e in spec.enums.values() if not e["flags"]]


def flag_enums(spec):
    return [e for e in spec.enums.values() if e["flags"]]


def enum_names(spec):
    h = [BANNER.rstrip(), "// Names of enum values and flag masks, for logs and the tracing layer.",
         "#pragma once", "#include <cstdint>", "#include <string>", "", '#include "ur_api.h"', "",
         "namespace ordo {", "namespace loader {", "",
         "// nullptr when the value is not a known enumerator."]
    c = [BANNER.rstrip(), '#include "enum_names.gen.hpp"', "", "#include <cstdio>", "",
         "namespace ordo {", "namespace loader {", ""]
    for e in value_enums(spec):
        t = e["type_name"]
        h.append("const char *enum_name(%s value);" % t)
        c.append("const char *enum_name(%s value) {" % t)
        c.append("  switch (value) {")
        for et in unique_etors(e):
            c.append('  case %s: return "%s";' % (et["name"], et["name"]))
        c.append("  default: return nullptr;")
        c.append("  }")
        c.append("}")
        c.append("")
    h.append("")
    h.append("// \"UR_QUEUE_FLAG_A | UR_QUEUE_FLAG_B\", unknown bits in hex, \"0\" for none.")
    c.append("namespace {")
    c.append("struct FlagName { uint64_t bit; const char *name; };")
    c.append("std::string join_flags(const FlagName *names, size_t n, uint64_t value) {")
    c.append("  if (value == 0) return \"0\";")
    c.append("  std::string out;")
    c.append("  for (size_t i = 0; i < n; ++i) {")
    c.append("    if (names[i].bit && (value & names[i].bit) == names[i].bit) {")
    c.append("      if (!out.empty()) out += \" | \";")
    c.append("      out += names[i].name;")
    c.append("      value &= ~names[i].bit;")
    c.append("    }")
    c.append("  }")
    c.append("  if (value) {")
    c.append("    char buf[32];")
    c.append("    std::snprintf(buf, sizeof buf, \"0x%llx\", static_cast<unsigned long long>(value));")
    c.append("    if (!out.empty()) out += \" | \";")
    c.append("    out += buf;")
    c.append("  }")
    c.append("  return out;")
    c.append("}")
    c.append("} // namespace")
    c.append("")
    for e in flag_enums(spec):
        fn = "flags_name_" + e["name"]
        h.append("std::string %s(uint64_t value);" % fn)
        c.append("std::string %s(uint64_t value) {" % fn)
        etors = unique_etors(e)
        c.append("  static const FlagName names[] = {")
        for et in etors:
            c.append('    {static_cast<uint64_t>(%s), "%s"},' % (et["name"], et["name"]))
        if not etors:
            c.append('    {0, ""},')
        c.append("  };")
        c.append("  return join_flags(names, %d, value);" % len(etors))
        c.append("}")
        c.append("")
    h += ["", "} // namespace loader", "} // namespace ordo", ""]
    c += ["} // namespace loader", "} // namespace ordo", ""]
    return "\n".join(h), "\n".join(c)


def outputs(spec):
    hdr, src = enum_names(spec)
    out = {"loader/generated/enum_names.gen.hpp": hdr,
           "loader/generated/enum_names.gen.cpp": src}
    out.update(tracing_layer(spec))
    return out


SCALAR_INTS = {"size_t", "uint32_t", "uint64_t", "int32_t", "int64_t", "uint8_t", "int",
               "const size_t", "ur_bool_t", "ur_exp_command_buffer_sync_point_t"}


def range_of(p):
    r = [t for t in p["tags"] if t.startswith("range(")]
    if not r:
        return None
    m = re.fullmatch(r"range\(0, (\w+)\)", r[0])
    return m.group(1) if m else None


def print_arg(spec, fn, p):
    """C++ lines appending parameter p's value to std::string `a`."""
    t, n = p["type"], p["name"]
    fptrs = {i["name"] for i in spec.items if i["kind"] == "fptr"}
    structs = {i["name"] for i in spec.structs}
    out = ['  arg(a, "%s");' % n]
    base = t.replace("const ", "").strip()
    if t == "bool":
        out.append("  put_bool(a, %s);" % n)
    elif t in SCALAR_INTS:
        out.append("  put_int(a, %s);" % n)
    elif base in spec.enums and spec.enums[base]["flags"]:
        out.append("  put_flags(a, flags_name_%s(%s));" % (base, n))
    elif base in spec.enums:
        out.append("  put_enum(a, %s);" % n)
    elif t in spec.handles and spec.handles[t]["native"]:
        out.append("  put_hex(a, %s);" % n)
    elif t in spec.handles:
        out.append("  put_ptr(a, %s);" % n)
    elif t in fptrs:
        out.append("  put_ptr(a, reinterpret_cast<const void *>(%s));" % n)
    elif t in structs and t in ("ur_rect_offset_t", "ur_rect_region_t"):
        out.append("  put_rect(a, %s);" % n)
    elif "*" in t:
        pointee = re.sub(r"\s*\*$", "", t).replace("const ", "").strip()
        is_out = "out" in p["tags"] or "in,out" in p["tags"]
        count = range_of(p)
        if t == "const char *" and not is_out:
            out.append("  put_string(a, %s);" % n)
        elif not is_out and count and pointee in spec.handles:
            out.append("  put_handles(a, %s, %s);" % (n, count))
        elif is_out and not count and pointee in spec.handles and not spec.handles[pointee]["native"]:
            out.append("  put_out_ptr(a, %s, r);" % n)
        elif is_out and not count and (pointee in SCALAR_INTS or pointee in spec.handles):
            out.append("  put_out_int(a, %s, r);" % n)
        else:
            out.append("  put_ptr(a, %s);" % n)
    else:
        out.append('  a += "<%s>";' % t)
    return out


def tracing_layer(spec):
    o = [BANNER.rstrip(), '#include "enum_names.gen.hpp"', '#include "layers_internal.hpp"',
         '#include "tracing.hpp"', "",
         "namespace ordo {", "namespace loader {", "namespace {", "",
         "ur_dditable_t g_next; // the table below this layer", ""]
    slots = []
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            slots.append((t, s, fn))
            args = ", ".join(p["name"] for p in fn["params"])
            call = "g_next.%s.%s(%s)" % (t["field"], s["name"], args)
            o.append("ur_result_t UR_APICALL trace_%s(%s) {" % (fn["name"], decl_params(fn)))
            o.append("  if (!tracing_enabled()) return %s;" % call)
            o.append("  TracedCall call;")
            o.append("  const ur_result_t r = %s;" % call)
            o.append("  call.stop();")
            o.append("  std::string a;")
            for p in fn["params"]:
                o += print_arg(spec, fn, p)
            o.append('  call.emit("%s", a, r);' % fn["name"])
            o.append("  return r;")
            o.append("}")
            o.append("")
    o += ["} // namespace", "", "void init_tracing_layer(const ur_dditable_t &next, ur_dditable_t &layer) {",
          "  g_next = next;"]
    for t, s, fn in slots:
        o.append("  layer.%s.%s = trace_%s;" % (t["field"], s["name"], fn["name"]))
    o += ["}", "", "} // namespace loader", "} // namespace ordo", ""]
    return {"loader/generated/tracing_layer.gen.cpp": "\n".join(o)}
