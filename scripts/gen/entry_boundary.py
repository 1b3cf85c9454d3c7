# SPDX-License-Identifier: Apache-2.0
"""Writes the exception boundary every adapter's table gets (source/generated/boundary.gen.cpp)
and the device-info default (source/generated/device_info.gen.cpp).

boundary.gen.cpp: for every DDI slot a thunk, boundary_<function>, that calls the
adapter's own function through ordo::guarded (source/ordo/guarded.hpp: std::bad_alloc
becomes UR_RESULT_ERROR_OUT_OF_HOST_MEMORY, any other exception UR_RESULT_ERROR_UNKNOWN),
and for every function with parameter rules a second one, checked_<function>, that runs
the spec's checks first (ordo_checks/param_checks.gen.hpp, the validation layer's own).
ordo::put_boundary(), called by ordo::fill_unsupported() (the end of every table build),
moves each function the adapter put in its table behind its slot's thunk: the table
handles point at holds the thunks, the thunks call the adapter's functions
(docs/adapter-guide.md, "The exception boundary").

device_info.gen.cpp: ordo::is_device_info(), whether a value is a ur_device_info_t of the
spec, for ordo::device_info_default() (source/ordo/device_info.hpp)."""
from layer_validation import has_checks
from spec import BANNER, decl_params

BOUNDARY = "source/generated/boundary.gen.cpp"
DEVICE_INFO = "source/generated/device_info.gen.cpp"


def slots(spec):
    for t in spec.tables:
        for s in t["slots"]:
            yield t, s, spec.slot_function(s)


def boundary(spec):
    o = [BANNER.rstrip(),
         "// One thunk per slot; see scripts/gen/entry_boundary.py for what each does.",
         '#include "ordo/ddi_fill.hpp"', '#include "ordo/guarded.hpp"',
         '#include "ordo_checks/param_checks.gen.hpp"', "",
         "namespace {", "",
         "// Slot by slot, the adapter function each thunk calls. Written once per slot when the",
         "// table is built (the mock's ordoMockReplace swaps them later), read by every call.",
         "ur_dditable_t g_targets;", ""]
    for t, s, fn in slots(spec):
        name = fn["name"]
        args = ", ".join(p["name"] for p in fn["params"])
        slot = "g_targets.%s.%s" % (t["field"], s["name"])
        o.append("ur_result_t UR_APICALL boundary_%s(%s) {" % (name, decl_params(fn)))
        o.append("  const %s fn = __atomic_load_n(&%s, __ATOMIC_ACQUIRE);" % (s["type"], slot))
        o.append("  return ordo::guarded([&] { return fn(%s); });" % args)
        o.append("}")
        if has_checks(fn):
            o.append("ur_result_t UR_APICALL checked_%s(%s) {" % (name, decl_params(fn)))
            o.append("  const char *why = nullptr;")
            o.append("  if (ur_result_t r = ordo::checks::check_%s(&why%s)) return r;"
                     % (name, (", " + args) if args else ""))
            o.append("  return boundary_%s(%s);" % (name, args))
            o.append("}")
        o.append("")
    o += ["// Moves one slot's function behind its thunk. A slot that is empty, holds the stub or",
          "// a thunk already, stays. So does one whose thunk in this library already calls",
          "// another function (a second table with other functions built in one library):",
          "// each slot's thunk calls one function per library.",
          "template <class F> void put_behind(F &slot, F &target, F stub, F thunk, F checked) {",
          "  if (!slot || slot == stub || slot == thunk || slot == checked) return;",
          "  F expected = nullptr;",
          "  if (!__atomic_compare_exchange_n(&target, &expected, slot, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&",
          "      expected != slot)",
          "    return;",
          "  slot = checked ? checked : thunk;",
          "}", "",
          "} // namespace", "",
          "namespace ordo {", "",
          "void put_boundary(ur_dditable_t &ddi, const table_tail &tail) {",
          "  const ur_dditable_t &stubs = unsupported_ddi();",
          "  const bool check = param_checks_wanted(tail);"]
    for t, s, fn in slots(spec):
        f = "%s.%s" % (t["field"], s["name"])
        checked = ("check ? checked_%s : nullptr" % fn["name"]) if has_checks(fn) else "nullptr"
        o.append("  put_behind<%s>(ddi.%s, g_targets.%s, stubs.%s, boundary_%s, %s);"
                 % (s["type"], f, f, f, fn["name"], checked))
    o += ["}", "",
          "const ur_dditable_t &boundary_thunks() {",
          "  static const ur_dditable_t thunks = [] {",
          "    ur_dditable_t t{};"]
    for t, s, fn in slots(spec):
        o.append("    t.%s.%s = boundary_%s;" % (t["field"], s["name"], fn["name"]))
    o += ["    return t;", "  }();", "  return thunks;", "}", "",
          "ur_dditable_t &boundary_targets() { return g_targets; }", "",
          "} // namespace ordo", ""]
    return "\n".join(o)


def device_info(spec):
    etors = spec.enums["ur_device_info_t"]["etors"]
    o = [BANNER.rstrip(), '#include "ordo/device_info.hpp"', "", "namespace ordo {", "",
         "bool is_device_info(ur_device_info_t value) {", "  switch (value) {"]
    for e in etors:
        if e["name"].endswith("_FORCE_UINT32"):
            continue
        o.append("  case %s:" % e["name"])
    o += ["    return true;", "  default:", "    return false;", "  }", "}", "",
          "bool is_device_info_bool(ur_device_info_t value) {", "  switch (value) {"]
    for e in etors:
        if e.get("type") == "ur_bool_t":
            o.append("  case %s:" % e["name"])
    o += ["    return true;", "  default:", "    return false;", "  }", "}", "",
          "} // namespace ordo", ""]
    return "\n".join(o)


def outputs(spec):
    return {BOUNDARY: boundary(spec), DEVICE_INFO: device_info(spec)}
