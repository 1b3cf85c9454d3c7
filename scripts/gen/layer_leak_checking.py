"""Writes the leak-checking layer (loader/generated/leak_checking_layer.gen.cpp).

From the parameter tags of the spec: an "[out][alloc]" handle is created by a call,
"[retain]" takes a reference and "[release]" drops one (for handle types that have a
release function at all). The layer wraps exactly those
functions and reports each successful call to the handle registry (leak_checking.cpp),
which prints every handle still alive, with its type and count, at loader teardown."""
import re

from spec import BANNER, decl_params


def is_alloc(p):
    return any(t == "alloc" or t.startswith("alloc ") for t in p["tags"])


def range_of(p):
    r = [t for t in p["tags"] if t.startswith("range(")]
    m = re.fullmatch(r"range\(0, (\w+)\)", r[0]) if r else None
    return m.group(1) if m else None


def destroyed_param(spec, fn):
    """The spec tags no parameter of urGraphDestroyExp, urUSMPoolDestroyExp, ... as
    [release]; a *Destroy* function ends the life of its last handle parameter."""
    if "Destroy" not in fn["name"] or any("release" in p["tags"] for p in fn["params"]):
        return None
    hs = [p for p in fn["params"] if p["type"] in spec.handles and not spec.handles[p["type"]]["native"]]
    return hs[-1]["name"] if hs else None


def handle_events(spec, fn):
    """(kind, param, handle type, count or None) for each handle the call creates,
    retains or releases."""
    # Only types that can be released are counted (platforms, for one, cannot).
    handles = {p["type"] for f in spec.functions for p in f["params"]
               if ("release" in p["tags"] or p["name"] == destroyed_param(spec, f))
               and p["type"] in spec.handles and not spec.handles[p["type"]]["native"]}
    destroyed = destroyed_param(spec, fn)
    out = []
    for p in fn["params"]:
        t = p["type"]
        if "retain" in p["tags"] and t in handles:
            out.append(("retained", p, t, None))
        elif ("release" in p["tags"] or p["name"] == destroyed) and t in handles:
            out.append(("released", p, t, None))
        elif "out" in p["tags"] and is_alloc(p):
            pointee = re.sub(r"\s*\*$", "", t).strip()
            if pointee in handles:
                out.append(("created", p, pointee, range_of(p)))
    return out


def outputs(spec):
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
                if kind == "created" and count:
                    # Cleared first, so that afterwards the written entries are the non-null ones.
                    o.append("  if (%s)" % p["name"])
                    o.append("    for (uint32_t i = 0; i < %s; ++i) %s[i] = nullptr;" % (count, p["name"]))
            o.append("  const ur_result_t r = g_next.%s.%s(%s);" % (t["field"], s["name"], args))
            o.append("  if (r != UR_RESULT_SUCCESS) return r;")
            for kind, p, ht, count in events:
                n = p["name"]
                if kind == "created" and count:
                    o.append("  if (%s)" % n)
                    o.append("    for (uint32_t i = 0; i < %s; ++i)" % count)
                    o.append('      if (%s[i]) leak_created("%s", %s[i]);' % (n, ht, n))
                elif kind == "created":
                    o.append('  if (%s && *%s) leak_created("%s", *%s);' % (n, n, ht, n))
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
