# SPDX-License-Identifier: Apache-2.0
"""Writes test/abi/abi_facts.gen.cpp: every measured ABI fact of the spec, compared with
what our headers give (sizes, alignments, offsets, enumerator values, slot positions,
function signatures)."""
from spec import BANNER


def outputs(spec):
    o = [BANNER.rstrip(), "#include <cstddef>", "#include <type_traits>", '#include "abi_facts.h"',
         '#include "ur_ddi.h"', ""]
    o.append("// Function signatures: each exported function has exactly the measured parameter types.")
    for fn in spec.functions:
        types = ", ".join(p["abi_type"] for p in fn["params"]) or "void"
        o.append("static_assert(std::is_same<decltype(&%s), ur_result_t (*)(%s)>::value, \"%s\");"
                 % (fn["name"], types, fn["name"]))
    for g, types in spec.getters.items():
        o.append("static_assert(std::is_same<decltype(&%s), ur_result_t (*)(%s)>::value, \"%s\");"
                 % (g, ", ".join(types), g))
    o.append("")
    o.append("const ordo_abi::Layout ordo_abi::kLayouts[] = {")
    count_l = 0
    for s in spec.structs:
        o.append('  {"%s", sizeof(%s), %d, alignof(%s), %d},' % (s["name"], s["name"], s["size"], s["name"], s["align"]))
        count_l += 1
    for name, st in spec.params_structs.items():
        o.append('  {"%s", sizeof(%s), %d, alignof(%s), %d},' % (name, name, st["size"], name, st["align"]))
        count_l += 1
    for t in [spec.top_table] + spec.tables:
        o.append('  {"%s", sizeof(%s), %d, alignof(%s), %d},' % (t["name"], t["name"], t["size"], t["name"], t["align"]))
        count_l += 1
    o.append("};")
    o.append("const size_t ordo_abi::kLayoutCount = %d;\n" % count_l)

    o.append("// Members in declaration order; for DDI tables the position is the slot index.")
    o.append("const ordo_abi::Member ordo_abi::kMembers[] = {")
    count_m = 0

    def mem(owner, name, off, idx):
        return '  {"%s.%s", offsetof(%s, %s), %d, %d},' % (owner, name, owner, name, off, idx)
    for s in spec.structs:
        for i, m in enumerate(s["members"]):
            o.append(mem(s["name"], m["name"], m["offset"], i))
            count_m += 1
    for name, st in spec.params_structs.items():
        for i, m in enumerate(st["members"]):
            o.append(mem(name, m["name"], m["offset"], i))
            count_m += 1
    for i, m in enumerate(spec.top_table["members"]):
        o.append(mem("ur_dditable_t", m["name"], m["offset"], i))
        count_m += 1
    for t in spec.tables:
        for i, s in enumerate(t["slots"]):
            o.append(mem(t["name"], s["name"], s["offset"], i))
            count_m += 1
    o.append("};")
    o.append("const size_t ordo_abi::kMemberCount = %d;\n" % count_m)

    o.append("const ordo_abi::Enumerator ordo_abi::kEnumerators[] = {")
    count_e = 0
    for e in spec.enums.values():
        for x in e["etors"]:
            o.append('  {"%s", (long long)%s, %dLL},' % (x["name"], x["name"], x["value"]))
            count_e += 1
        force = e["type_name"][:-2].upper() + "_FORCE_UINT32"
        o.append('  {"%s", (long long)%s, %dLL},' % (force, force, spec.data["forced_enumerators"][e["type_name"]]))
        count_e += 1
        o.append('  {"sizeof(%s)", (long long)sizeof(%s), 4LL},' % (e["type_name"], e["type_name"]))
        count_e += 1
    o.append("};")
    o.append("const size_t ordo_abi::kEnumeratorCount = %d;" % count_e)
    o.append("const size_t ordo_abi::kFunctionCount = %d;" % (len(spec.functions) + len(spec.getters)))
    o.append("")
    return {"test/abi/abi_facts.gen.cpp": "\n".join(o)}
