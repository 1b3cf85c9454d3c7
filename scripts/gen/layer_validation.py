# SPDX-License-Identifier: Apache-2.0
"""Writes the spec's parameter checks and the parameter-validation layer:
  source/generated/ordo_checks/param_checks.gen.hpp
                             ordo::checks::check_<function>(): the spec's rules for one
                             function, in spec order, which is the order UR's own
                             validation layer checks them in (scripts/import_ur_spec.py,
                             rules_of; each rule's "check" is a C expression over the
                             parameter names), then a null check of every wait-list
                             entry. Library ordo_param_checks: the loader's layer and
                             hand-written functions, and every adapter's table tail
                             (ordo::fill_unsupported, docs/adapter-guide.md), call the same
                             checks, so an adapter refuses bad input with the layer's code
  loader/generated/param_checks.gen.hpp
                             the loader's old name for it (its hand-written functions still
                             include it): the checks, visible in ordo::loader
  loader/generated/validation_layer.gen.cpp
                             a table whose slots run those checks and call the next table;
                             with leak checking on too (UR_LAYER_FULL_VALIDATION), they then
                             refuse a handle the program already released (docs/loader.md,
                             "Released handles")
"""
import re

from layer_leak_checking import trackable_types
from spec import BANNER, decl_params

# What a released handle of each type is refused with: the spec's INVALID_<OBJECT> result
# where ur_result_t has one, else the INVALID_NULL_HANDLE the spec gives any bad handle.
# Wait-list entries answer INVALID_EVENT_WAIT_LIST, as a null entry does.
RELEASED_RESULT = {
    "ur_platform_handle_t": "UR_RESULT_ERROR_INVALID_PLATFORM",
    "ur_context_handle_t": "UR_RESULT_ERROR_INVALID_CONTEXT",
    "ur_event_handle_t": "UR_RESULT_ERROR_INVALID_EVENT",
    "ur_program_handle_t": "UR_RESULT_ERROR_INVALID_PROGRAM",
    "ur_kernel_handle_t": "UR_RESULT_ERROR_INVALID_KERNEL",
    "ur_queue_handle_t": "UR_RESULT_ERROR_INVALID_QUEUE",
    "ur_sampler_handle_t": "UR_RESULT_ERROR_INVALID_SAMPLER",
    "ur_mem_handle_t": "UR_RESULT_ERROR_INVALID_MEM_OBJECT",
    "ur_exp_command_buffer_handle_t": "UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_EXP",
    "ur_exp_command_buffer_command_handle_t": "UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_COMMAND_HANDLE_EXP",
}

# Handle types never refused as released, with the reason.
NEVER_RELEASED = {
    "ur_device_handle_t": "a root device outlives its last urDeviceRelease (the spec leaves "
                          "its count unchanged), and the layer does not ask which are roots",
}

# Handles that the program may still be handed, and may use, after its last release.
# Their last release does not make them refused.
NAMEABLE_AFTER_RELEASE = {
    # The adapter passes the event to its callbacks, which may run after the program's
    # own last urEventRelease (the usual pattern: set a callback, release, wait).
    "urEventSetCallback": "hEvent",
}


def released_checks(spec, fn):
    """(param, count or None, result) for each handle parameter the call reads that the
    layer can know to be released: scalar [in] handles of a type the leak checker counts,
    and the entries of [in] handle arrays."""
    counted = trackable_types(spec) - set(NEVER_RELEASED)
    out = []
    for p in fn["params"]:
        if "in" not in p["tags"]:
            continue
        if p["type"] in counted:
            out.append((p, None, RELEASED_RESULT.get(p["type"], "UR_RESULT_ERROR_INVALID_NULL_HANDLE")))
            continue
        m = re.fullmatch(r"const (\w+) \*", p["type"])
        rng = [t for t in p["tags"] if t.startswith("range(")]
        count = re.fullmatch(r"range\(0, (\w+)\)", rng[0]) if rng else None
        if m and m.group(1) in counted and count:
            result = RELEASED_RESULT.get(m.group(1), "UR_RESULT_ERROR_INVALID_NULL_HANDLE")
            if m.group(1) == "ur_event_handle_t" and "WaitList" in p["name"]:
                result = "UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST"
            out.append((p, count.group(1), result))
    return out


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
         "namespace ordo {", "namespace checks {", ""]
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
    o += ["} // namespace checks", "} // namespace ordo", ""]
    return "\n".join(o)


def loader_alias():
    return "\n".join([
        BANNER.rstrip(),
        "// The spec's parameter checks (library ordo_param_checks), under the name and in the",
        "// namespace the loader's hand-written functions use.",
        "#pragma once",
        '#include "ordo_checks/param_checks.gen.hpp"', "",
        "namespace ordo {", "namespace loader {", "using namespace ordo::checks;",
        "} // namespace loader", "} // namespace ordo", ""])


def validation_layer(spec):
    for name, param in NAMEABLE_AFTER_RELEASE.items():
        assert any(p["name"] == param for p in spec.fn[name]["params"]), name
    o = [BANNER.rstrip(), '#include "layers_internal.hpp"', '#include "ordo_checks/param_checks.gen.hpp"', "",
         "namespace ordo {", "namespace loader {", "namespace {", "",
         "ur_dditable_t g_next; // the table below this layer", ""]
    slots = []
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            released = released_checks(spec, fn)
            if not has_checks(fn) and not released:
                continue
            slots.append((t, s, fn))
            name = fn["name"]
            args = ", ".join(p["name"] for p in fn["params"])
            o.append("ur_result_t UR_APICALL validate_%s(%s) {" % (name, decl_params(fn)))
            if has_checks(fn):
                o.append("  const char *why = nullptr;")
                o.append("  if (ur_result_t r = checks::check_%s(&why%s))" % (name, (", " + args) if args else ""))
                o.append('    return validation_refused("%s", r, why);' % name)
            if released:
                o.append("  if (released_handles_to_check()) {")
                for p, count, result in released:
                    n = p["name"]
                    if count:
                        o.append("    if (%s)" % n)
                        o.append("      for (uint32_t i = 0; i < %s; ++i)" % count)
                        o.append("        if (handle_released(%s[i]))" % n)
                        o.append('          return released_handle_refused("%s", %s, "%s[i]", %s[i]);'
                                 % (name, result, n, n))
                    else:
                        o.append("    if (handle_released(%s))" % n)
                        o.append('      return released_handle_refused("%s", %s, "%s", %s);'
                                 % (name, result, n, n))
                o.append("  }")
            call = "g_next.%s.%s(%s)" % (t["field"], s["name"], args)
            if name in NAMEABLE_AFTER_RELEASE:
                o.append("  const ur_result_t result = %s;" % call)
                o.append("  if (result == UR_RESULT_SUCCESS) handle_nameable_after_release(%s);"
                         % NAMEABLE_AFTER_RELEASE[name])
                o.append("  return result;")
            else:
                o.append("  return %s;" % call)
            o.append("}")
            o.append("")
    o += ["} // namespace", "",
          "// Slots without checks are the next table's own: no cost for them.",
          "void init_validation_layer(const ur_dditable_t &next, ur_dditable_t &layer) {",
          "  g_next = next;", "  layer = next;"]
    for t, s, fn in slots:
        o.append("  layer.%s.%s = validate_%s;" % (t["field"], s["name"], fn["name"]))
    o += ["}", "", "} // namespace loader", "} // namespace ordo", ""]
    return "\n".join(o)


def outputs(spec):
    return {"source/generated/ordo_checks/param_checks.gen.hpp": param_checks(spec),
            "loader/generated/param_checks.gen.hpp": loader_alias(),
            "loader/generated/validation_layer.gen.cpp": validation_layer(spec)}
