# SPDX-License-Identifier: Apache-2.0
"""Writes the leak-checking layer (loader/generated/leak_checking_layer.gen.cpp).

The layer counts references of handles of every *trackable* type: a non-native handle
type that some function releases or destroys (platforms, for one, are never released, so
they are not tracked). For those types it wraps every DDI function that

  - creates a reference: a parameter of type `ur_X_handle_t *` whose direction includes
    out ([out] or [in,out]) hands the caller a new reference, whatever other tags it has.
    The [alloc] tag is not consulted: the imported spec leaves it off creators such as
    urUSMPoolCreateExp, urEnqueueUSMDeviceAllocExp and urDevicePartition.
    Enqueue-style events, CreateWithNativeHandle results, sub-devices, sub-buffers,
    stream-ordered allocation events and pools all follow this rule. A range-tagged
    array creates one reference per entry written.
  - takes one: a parameter tagged [retain];
  - drops one: a parameter tagged [release], the last handle of a *Destroy* function
    that tags none, or a parameter listed in ENDS.

The exceptions to the out-parameter rule are listed, each with its reason, in BORROWED
(getters that return a handle someone else owns: never counted) and ADOPTED (counted only
when the handle is not already alive). Functions without a DDI slot (urLoaderConfig*,
urDeviceGetSelected, which calls urDeviceGet through the layers) are not wrapped.

Each successful call is reported to the handle registry (leak_checking.cpp), which logs
every handle still alive, with its type and count, at loader teardown. The generated
test test/loader/generated/leak_coverage.gen.cpp (loader_leak_tests.py) calls every
function with a handle out-parameter through the layer to check the result."""
import re

from spec import BANNER, decl_params

# Out-handles that are not a reference of the caller's: the handle stays owned by the
# object it was read from, so the caller must not release it and it can never leak.
BORROWED = {
    "urUSMPoolGetDefaultDevicePoolExp": "the device's default pool belongs to the context",
    "urUSMPoolGetDevicePoolExp": "the pool currently set for the device; its creator owns it",
    "urQueueGetGraphExp": "the graph the queue is capturing into; the capture owns it",
}

# Out-handles that are a new reference only when the handle is not alive yet.
ADOPTED = {
    # After urQueueBeginGraphCaptureExp the graph is new and the caller must destroy it;
    # after urQueueBeginCaptureIntoGraphExp it is the caller's own graph handed back.
    "urQueueEndGraphCaptureExp": "a new graph, or the one passed to urQueueBeginCaptureIntoGraphExp",
}

# Parameters that end a handle's life although the spec tags them with nothing and the
# function is not named *Destroy*.
ENDS = {
    "urIPCClosePhysMemHandleExp": "hPhysMem",  # closes what urIPCOpenPhysMemHandleExp opened
}


def range_of(p):
    r = [t for t in p["tags"] if t.startswith("range(")]
    m = re.fullmatch(r"range\(0, (\w+)\)", r[0]) if r else None
    return m.group(1) if m else None


def is_out(p):
    """[out] or [in,out]."""
    return any("out" in t.split(",") for t in p["tags"])


def out_handle_type(spec, p):
    """X when p is an out-parameter of type `X *` for a handle type X (native or not)."""
    m = re.fullmatch(r"(\w+) \*", p["type"])
    if m and m.group(1) in spec.handles and is_out(p):
        return m.group(1)
    return None


def destroyed_param(spec, fn):
    """The spec tags no parameter of urGraphDestroyExp, urUSMPoolDestroyExp, ... as
    [release]; a *Destroy* function ends the life of its last handle parameter."""
    if fn["name"] in ENDS:
        return ENDS[fn["name"]]
    if "Destroy" not in fn["name"] or any("release" in p["tags"] for p in fn["params"]):
        return None
    hs = [p for p in fn["params"] if p["type"] in spec.handles and not spec.handles[p["type"]]["native"]]
    return hs[-1]["name"] if hs else None


def trackable_types(spec):
    """Non-native handle types that some function releases or destroys."""
    return {p["type"] for f in spec.functions for p in f["params"]
            if ("release" in p["tags"] or p["name"] == destroyed_param(spec, f))
            and p["type"] in spec.handles and not spec.handles[p["type"]]["native"]}


def handle_events(spec, fn):
    """(kind, param, handle type, count or None) for each handle the call creates,
    adopts, retains or releases."""
    handles = trackable_types(spec)
    destroyed = destroyed_param(spec, fn)
    out = []
    for p in fn["params"]:
        t = p["type"]
        if "retain" in p["tags"] and t in handles:
            out.append(("retained", p, t, None))
        elif ("release" in p["tags"] or p["name"] == destroyed) and t in handles:
            out.append(("released", p, t, None))
        elif out_handle_type(spec, p) in handles and fn["name"] not in BORROWED:
            kind = "adopted" if fn["name"] in ADOPTED else "created"
            out.append((kind, p, out_handle_type(spec, p), range_of(p)))
    return out


def outputs(spec):
    for name in list(BORROWED) + list(ADOPTED) + list(ENDS):
        assert name in spec.fn, "%s: no such function in the spec" % name
    o = [BANNER.rstrip(), '#include "layers_internal.hpp"', "",
         "namespace ordo {", "namespace loader {", "namespace {", "",
         "ur_dditable_t g_next; // the table below this layer", ""]
    slots = []
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            events = handle_events(spec, fn)
            if not events:
                continue
            slots.append((t, s, fn))
            args = ", ".join(p["name"] for p in fn["params"])
            o.append("ur_result_t UR_APICALL leak_check_%s(%s) {" % (fn["name"], decl_params(fn)))
            for kind, p, ht, count in events:
                if kind in ("created", "adopted") and count:
                    # Cleared first, so that afterwards the written entries are the non-null ones.
                    o.append("  if (%s)" % p["name"])
                    o.append("    for (uint32_t i = 0; i < %s; ++i) %s[i] = nullptr;" % (count, p["name"]))
            o.append("  const ur_result_t r = g_next.%s.%s(%s);" % (t["field"], s["name"], args))
            o.append("  if (r != UR_RESULT_SUCCESS) return r;")
            for kind, p, ht, count in events:
                n = p["name"]
                if kind in ("created", "adopted") and count:
                    o.append("  if (%s)" % n)
                    o.append("    for (uint32_t i = 0; i < %s; ++i)" % count)
                    o.append('      if (%s[i]) leak_%s("%s", %s[i]);' % (n, kind, ht, n))
                elif kind in ("created", "adopted"):
                    o.append('  if (%s && *%s) leak_%s("%s", *%s);' % (n, n, kind, ht, n))
                else:
                    o.append('  leak_%s("%s", %s);' % (kind, ht, n))
            o.append("  return r;")
            o.append("}")
            o.append("")
    o += ["} // namespace", "",
          "// Only the functions that create, retain or release handles are wrapped.",
          "void init_leak_checking_layer(const ur_dditable_t &next, ur_dditable_t &layer) {",
          "  g_next = next;", "  layer = next;"]
    for t, s, fn in slots:
        o.append("  layer.%s.%s = leak_check_%s;" % (t["field"], s["name"], fn["name"]))
    o += ["}", "", "} // namespace loader", "} // namespace ordo", ""]
    return {"loader/generated/leak_checking_layer.gen.cpp": "\n".join(o)}
