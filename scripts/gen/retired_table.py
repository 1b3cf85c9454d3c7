# SPDX-License-Identifier: Apache-2.0
"""Writes the retired dispatch table (source/generated/retired.gen.cpp).

ordo::retired_ddi() is the table a destroyed handle's first word points at
(source/ordo/retired_handles.hpp; docs/adapter-guide.md, "Released handles"). Every
slot refuses without touching any argument: the loader dispatches on the first handle
argument, so the slot answers what a released handle of that type gets from the
validation layer (layer_validation.RELEASED_RESULT), and INVALID_NULL_HANDLE where
ur_result_t has no code for that type."""
from layer_validation import RELEASED_RESULT
from loader_entry_points import dispatch_plan
from spec import BANNER

# Types the validation layer never refuses as released, but whose retired handle has a code.
EXTRA_RESULT = {
    "ur_device_handle_t": "UR_RESULT_ERROR_INVALID_DEVICE",
    # What a destroyed pool handle gets from the stream-ordered layer while the pool's
    # memory still waits for its blocks (docs/async-alloc.md, "Errors"): the same after.
    "ur_usm_pool_handle_t": "UR_RESULT_ERROR_INVALID_VALUE",
}


def refusal(spec, fn):
    plan = dispatch_plan(spec, fn)
    if not plan:
        return "UR_RESULT_ERROR_INVALID_NULL_HANDLE"
    if plan[0] == "array":
        p = plan[1]
        if p["type"] == "const ur_event_handle_t *" and "WaitList" in p["name"]:
            return "UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST"
        handle_type = p["type"][len("const "):-len(" *")]
    else:
        handle_type = plan[1]["type"]
    return RELEASED_RESULT.get(handle_type, EXTRA_RESULT.get(handle_type, "UR_RESULT_ERROR_INVALID_NULL_HANDLE"))


def outputs(spec):
    o = [BANNER.rstrip(), '#include "ordo/retired_handles.hpp"', "", "namespace {", ""]
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            params = ", ".join(p["type"] for p in fn["params"])
            o.append("ur_result_t UR_APICALL retired_%s(%s) { return %s; }" % (fn["name"], params, refusal(spec, fn)))
    o += ["", "ur_dditable_t make_retired_table() {", "  ur_dditable_t t{};"]
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            o.append("  t.%s.%s = retired_%s;" % (t["field"], s["name"], fn["name"]))
    o += ["  return t;", "}", "", "} // namespace", "", "namespace ordo {", "",
          "const ur_dditable_t &retired_ddi() {",
          "  static const ur_dditable_t table = make_retired_table();",
          "  return table;", "}", "", "} // namespace ordo", ""]
    return {"source/generated/retired.gen.cpp": "\n".join(o)}
