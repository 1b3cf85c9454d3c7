#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One-time fact extraction: builds scripts/spec/ur.json from UR's YAML spec and the
measured ABI facts.

Only facts are taken: names, types, parameter order and direction tags, enumerator
values, struct layouts, DDI slot order and the checkable parameter conditions. No
description text is kept. Run it when re-pinning to a new UR commit:

    scripts/import_ur_spec.py <ur-checkout>/scripts/core <abi-facts.txt>

or, to re-derive everything but the measured ABI facts (which are then taken from the
current scripts/spec/ur.json), with the pinned commit's checkout:

    scripts/import_ur_spec.py <ur-checkout>/scripts/core --abi-from-spec

The parameter rules are the checks UR's validation layer makes, in its order (rules_of
below); when the checkout has UR's generated layer, they are compared with it and every
difference is printed as a warning.
"""
import glob
import json
import os
import re
import sys

import yaml

COMMIT = "578c2a84"
HERE = os.path.dirname(os.path.abspath(__file__))

# Order in which UR's header declares its sections (a fact of the pinned header).
SECTION_ORDER = [
    "common", "loader", "adapter", "platform", "device", "context", "memory", "sampler",
    "usm", "virtual_memory", "program", "queue", "event", "enqueue",
    "exp-enqueue-kernel-launch-with-args", "kernel", "exp-2d-block-array-capabilities",
    "exp-async-alloc", "exp-bindless-images", "exp-device-wait", "exp-dynamic-link",
    "exp-enqueue-timestamp-recording", "exp-inter-process-communication",
    "exp-memory-export", "exp-multi-device-compile", "exp-usm-context-memcpy",
    "exp-usm-host-alloc-register", "exp-usm-import-release", "exp-usm-p2p",
    "exp-command-buffer", "exp-host-task", "exp-low-power-events", "exp-native-enqueue",
    "exp-reusable-events", "exp-graph",
    # These only extend enums declared elsewhere.
    "exp-clock", "exp-device-is-integrated-gpu", "exp-per-event-profiling",
]


def subst(s):
    if not isinstance(s, str):
        return s
    s = s.replace("$OneApi", "oneAPI")
    s = re.sub(r"\$X", "UR", s)
    s = re.sub(r"\$x", "ur", s)
    return s


def norm_type(t):
    t = subst(t).strip()
    t = re.sub(r"\s*\*", " *", t)
    t = re.sub(r"\* \*", "**", t)
    t = re.sub(r"\s+", " ", t)
    return t


def tags_of(desc):
    """Leading [tag] groups of a description: the machine-readable part."""
    tags = []
    desc = (desc or "").lstrip()
    while desc.startswith("["):
        depth, i = 0, 0
        for i, ch in enumerate(desc):
            depth += ch == "["
            depth -= ch == "]"
            if depth == 0:
                break
        tags.append(subst(desc[1:i]))
        desc = desc[i + 1:].lstrip()
    return tags


def load_abi(path):
    abi = {"funcs": {}, "enums": {}, "structs": {}}
    cur = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("func "):
            m = re.match(r"func (\w+)\((.*)\) -> (\w+)", line)
            params = [p.strip() for p in m.group(2).split(",")] if m.group(2) else []
            abi["funcs"][m.group(1)] = params
        elif line.startswith("enum "):
            m = re.match(r"enum (\w+)::(\w+) = (-?\d+)", line)
            abi["enums"].setdefault(m.group(1), []).append([m.group(2), int(m.group(3))])
        elif line.startswith("struct "):
            m = re.match(r"struct (\w+) size (\d+) align (\d+)", line)
            cur = {"size": int(m.group(2)), "align": int(m.group(3)), "members": []}
            abi["structs"][m.group(1)] = cur
        elif line.startswith("  "):
            m = re.match(r"\s+\w+\.(\w+) @(\d+) : (.*) #(\d+)", line)
            cur["members"].append([m.group(1), int(m.group(2)), m.group(3)])
    return abi


def load_abi_from_spec(path):
    """The measured facts as an earlier import stored them in ur.json, in load_abi's
    shape: for re-importing the YAML's rules without measuring the ABI again."""
    old = json.load(open(path))
    abi = {"funcs": {}, "enums": {}, "structs": {}}
    items = [i for s in old["sections"] for i in s["items"]]
    for f in items:
        if f["kind"] == "function" and f.get("exported"):
            abi["funcs"][f["name"]] = [p["abi_type"] for p in f["params"]]
    abi["funcs"].update(old["table_getters"])
    etors = {i["type_name"]: i["etors"] for i in items if i["kind"] == "enum"}
    for name, forced in old["forced_enumerators"].items():
        abi["enums"][name] = [[e["name"], e["value"]] for e in etors.get(name, []) if "value" in e]
        abi["enums"][name].append([enum_prefix(name.replace("_flag_t", "_flags_t")) + "FORCE_UINT32", forced])
    for s in items:
        if s["kind"] in ("struct", "union"):
            abi["structs"][s["name"]] = {"size": s["size"], "align": s["align"], "members": [
                [m["name"], m["offset"], m["abi_type"]] for m in s["members"]]}
    for name, s in old["params_structs"].items():
        abi["structs"][name] = {"size": s["size"], "align": s["align"], "members": [
            [m["name"], m["offset"], m["type"]] for m in s["members"]]}
    top = old["ddi_tables"][0]
    abi["structs"][top["name"]] = {"size": top["size"], "align": top["align"], "members": [
        [m["name"], m["offset"], m["type"]] for m in top["members"]]}
    for t in old["ddi_tables"][1:]:
        abi["structs"][t["name"]] = {"size": t["size"], "align": t["align"], "members": [
            [m["name"], m["offset"], m["type"]] for m in t["slots"]]}
    return abi


def enum_prefix(name):
    base = name[:-2]  # drop _t
    if base.endswith("_flags"):
        base = base[:-1]
    return base.upper() + "_"


def add_etors(target, d):
    prefix = enum_prefix(target["name"])
    for e in d["etors"]:
        if str(e.get("version", "")).startswith("9999"):
            continue  # declared in the YAML but never emitted in the header
        tags = tags_of(e.get("desc"))
        etor = {"name": prefix + subst(e["name"])}
        if d.get("typed_etors") and tags:
            etor["type"] = norm_type(tags[0])
        target["etors"].append(etor)


# --- parameter rules ---------------------------------------------------------------
#
# UR's validation layer checks, for each adapter function, the conditions its spec
# implies (null pointers, null handles, enum ranges and flag masks, of the parameters and
# of the members of descriptor/properties structs they point to) and the explicit
# `code` conditions of its `returns:` list. rules_of() derives the same list of (result,
# condition) pairs from the YAML and puts them in the order UR's layer checks them:
#
#   1. every INVALID_NULL_POINTER condition, 2. every INVALID_NULL_HANDLE condition,
#   3. the other results, each with all of its conditions, in the order the results are
#      first given a condition: the implied ones (parameters in order, a struct's
#      members right after the parameter pointing to it), then the `returns:` list.
#
# compare_with_ur_layer() checks the outcome against UR's generated layer when the
# checkout has it.

ALWAYS_RETURNED = ["UR_RESULT_SUCCESS", "UR_RESULT_ERROR_UNINITIALIZED",
                   "UR_RESULT_ERROR_DEVICE_LOST", "UR_RESULT_ERROR_ADAPTER_SPECIFIC"]
CHECKED_FIRST = ["UR_RESULT_ERROR_INVALID_NULL_POINTER", "UR_RESULT_ERROR_INVALID_NULL_HANDLE"]


def has_tag(desc, tag):
    """A [tag] on the first line of a description (where UR's generator looks)."""
    return re.match(r".*\[%s\]" % re.escape(tag), desc or "") is not None


def type_base(t):
    """'const ur_event_handle_t*' -> 'ur_event_handle_t': last word, one '*' less."""
    return re.sub(r"(.*)\*", r"\1", t.split(" ")[-1])


def is_pointer(t):
    """A '*' right after a word, as UR's generator sees pointers: `void *` (with a blank)
    is not one to it (see beyond_ur)."""
    return re.match(r".*\w+\*+", t) is not None


def is_array(t):
    return re.match(r".*\[[1-9][0-9]*\]", t) is not None


def is_handle(t):
    return re.match(r".*handle_t", t) is not None


def is_special_handle(t):
    """Native and IPC handles are values, not objects: never null-checked."""
    return re.match(r".*native_handle_t", t) is not None or re.match(r".*ipc.*handle_t", t) is not None


def is_struct_param(t):
    return re.match(r".*desc_t", t) is not None or re.match(r".*properties_t", t) is not None


def enum_limit(e):
    """UR's range check for a value of an enum or flags type, as a template for the
    value's expression: the mask of unknown bits, or `LAST < value` with the enumerator
    of the highest value (gaps below it are not checked)."""
    values = [x["value"] for x in e["etors"] if "value" in x and x["name"] != "UR_API_VERSION_CURRENT"]
    if e["flags"]:
        if any(values):
            return "%s_MASK & %%s" % e["name"][:-2].upper()
        top = max(values) if values else 0
        return "%s < %%s" % (hex((top << 1) - 1) if top else "0")
    top = max(values)
    last = [x for x in e["etors"] if x.get("value") == top and x["name"] != "UR_API_VERSION_CURRENT"][0]
    return "%s < %%s" % last["name"]


def rules_of(fn, yml, enums, yaml_members, fptrs):
    """[{result, check}] of one function, in the order UR's layer checks them.

    The results are kept as a list of groups, each a result with its conditions, which
    starts with the four results every function returns (no conditions). A condition
    joins the first group of its result that has a condition already; a result without
    one opens a new group at the end. The order of the groups that end up holding a
    `code` condition gives the order of results 3. above."""
    groups = [[r, []] for r in ALWAYS_RETURNED]

    def add(result, cond):
        group = next((g for g in groups if g[0] == result and g[1]), None)
        if group is None:
            group = [result, []]
            groups.append(group)
        if cond is not None and cond not in group[1]:
            group[1].append(cond)

    def null_checks(t, accessor, outer):
        if is_pointer(t) or is_array(t) or t in fptrs:
            add("UR_RESULT_ERROR_INVALID_NULL_POINTER", "`NULL == %s`" % accessor)
        elif is_handle(t) and not is_special_handle(outer["type"]):
            # UR's generator asks whether the *parameter* is a native/IPC handle,
            # also for the members of the struct it points to.
            add("UR_RESULT_ERROR_INVALID_NULL_HANDLE", "`NULL == %s`" % accessor)

    def enum_checks(t, accessor, outer):
        e = enums[type_base(t)]
        guard = "NULL != %s && " % outer["name"] if has_tag(outer["desc"], "optional") else ""
        add("UR_RESULT_ERROR_INVALID_ENUMERATION", "`%s%s`" % (guard, enum_limit(e) % accessor))

    def is_enum(t):
        return type_base(t) in enums and not is_pointer(t)

    for p in yml["params"]:
        if has_tag(p["desc"], "nocheck"):
            continue
        if not has_tag(p["desc"], "optional"):
            null_checks(p["type"], p["name"], p)
        if is_enum(p["type"]):
            enum_checks(p["type"], p["name"], p)
        if is_struct_param(p["type"]):
            for m in yaml_members[type_base(p["type"])]:
                if has_tag(m["desc"], "nocheck"):
                    continue
                accessor = "%s->%s" % (p["name"], m["name"])
                if not has_tag(m["desc"], "optional"):
                    null_checks(m["type"], accessor, p)
                if is_enum(m["type"]):
                    enum_checks(m["type"], accessor, p)
    for r in yml["returns"]:
        if isinstance(r, dict):
            for res, conds in r.items():
                for c in conds:
                    add(subst(res), c)
        else:
            add(subst(r), None)

    ordered = {}
    for result, conds in groups:
        for c in conds:
            code = re.fullmatch(r"`([^`]*)`", c)
            if code:
                ordered.setdefault(result, []).append(subst(code.group(1)))
    # The loader's own functions are not in UR's layer: UR's loader checks them by
    # hand, the handle first.
    first = CHECKED_FIRST[::-1] if fn["loader_only"] else CHECKED_FIRST
    keys = sorted(ordered, key=lambda k: first.index(k) if k in first else len(first))
    rules = []
    for k in keys:
        for c in ordered[k]:
            rule = {"result": k, "check": c}
            if rule not in rules:  # a repeated condition can never be the first broken
                rules.append(rule)
    return rules


def beyond_ur(fn):
    """Null checks of required pointer parameters that UR's generator misses (it does
    not see `void *` written with a blank as a pointer) and no explicit condition
    names: checked after all of UR's rules, so they only refuse calls UR's layer would
    pass to the adapter. Marked "beyond_ur"."""
    out = []
    for p in fn["params"]:
        optional = "optional" in p["tags"] or "nocheck" in p["tags"]
        if optional or not p["type"].endswith("*"):
            continue
        named = any(r["result"] == "UR_RESULT_ERROR_INVALID_NULL_POINTER"
                    and re.search(r"\b%s\b" % p["name"], r["check"]) for r in fn["rules"])
        if not named:
            out.append({"result": "UR_RESULT_ERROR_INVALID_NULL_POINTER",
                        "check": "NULL == %s" % p["name"], "beyond_ur": True})
    return out


def ur_layer_checks(path):
    """{function: [(result, condition without blanks)]}: the checks UR's generated layer
    runs with parameter validation on, in order (bounds checks, which need
    UR_LAYER_BOUNDS_CHECKING, left out), plus ("WAIT_LIST", name) for its loop over
    an event wait list."""
    text = open(path).read()
    out = {}
    for m in re.finditer(r"Intercept function for\s+(?:///\s*)?(\w+)", text):
        name = m.group(1)
        start = text.find("enableParameterValidation) {", m.end())
        nxt = text.find("Intercept function for", m.end())
        if start < 0 or (0 <= nxt < start):
            out[name] = []
            continue
        i = start + len("enableParameterValidation) {")
        checks = []
        while True:
            while text[i].isspace():
                i += 1
            if text[i] == "}":
                break
            assert text.startswith("if", i), (name, text[i:i + 80])
            j = text.index("(", i)
            depth, k = 0, j
            while True:
                depth += text[k] == "("
                depth -= text[k] == ")"
                if depth == 0:
                    break
                k += 1
            cond = text[j + 1:k]
            rest = text[k + 1:].lstrip()
            if rest.startswith("return"):
                ret = re.match(r"return\s+(\w+);", rest)
                checks.append((ret.group(1), re.sub(r"\s+", "", cond)))
                i = text.index(";", k) + 1
                continue
            assert rest.startswith("{"), (name, rest[:80])
            b = text.index("{", k)
            depth, q = 0, b
            while True:
                depth += text[q] == "{"
                depth -= text[q] == "}"
                if depth == 0:
                    break
                q += 1
            if "phEventWaitList[i] == NULL" in text[b:q]:
                checks.append(("WAIT_LIST", "phEventWaitList"))
            elif "enableBoundsChecking" not in cond:
                raise AssertionError((name, cond))
            i = q + 1
        out[name] = checks
    return out


def compare_with_ur_layer(functions, path):
    """Problems where an adapter function's rules (beyond_ur ones left out) are not
    the checks UR's layer makes, in its order (UR's repeats of a check counted once)."""
    ur = ur_layer_checks(path)
    problems = []
    for fn in functions:
        if fn["loader_only"]:
            continue
        ours = [(r["result"], re.sub(r"\s+", "", r["check"])) for r in fn["rules"] if not r.get("beyond_ur")]
        theirs = [c for c in ur.get(fn["name"], []) if c[0] != "WAIT_LIST"]
        deduped = []
        for c in theirs:
            if c not in deduped:
                deduped.append(c)
        if fn["name"] not in ur:
            problems.append("%s: not in UR's validation layer" % fn["name"])
        elif ours != deduped:
            problems.append("%s: rules differ from UR's layer:\n    ours   %s\n    theirs %s"
                            % (fn["name"], ours, deduped))
    return problems


def main():
    core, abi_path = sys.argv[1], sys.argv[2]
    if abi_path == "--abi-from-spec":
        abi = load_abi_from_spec(os.path.join(HERE, "spec", "ur.json"))
    else:
        abi = load_abi(abi_path)
    docs = {}
    for f in glob.glob(os.path.join(core, "*.yml")):
        key = os.path.basename(f)[:-4]
        docs[key] = [d for d in yaml.safe_load_all(open(f)) if d]

    order = ["registry"] + SECTION_ORDER
    leftover = sorted(set(docs) - set(order) - {"manifests"})
    if leftover:
        sys.exit("unplaced spec files: %s" % leftover)

    enums = {}        # name -> enum object (extensions merged in)
    pending_ext = []
    sections = []
    functions = []
    yaml_members = {}  # struct name -> its members as the YAML declares them (no base)
    for key in order:
        items = []
        for d in docs[key]:
            t = d["type"]
            if t in ("header", "class", "manifest"):
                continue
            name = subst(d["name"])
            if t == "macro":
                items.append({"kind": "macro", "name": name.replace(" ", ""),
                              "value": subst(d["value"]), "condition": d.get("condition"),
                              "altvalue": subst(d.get("altvalue"))})
            elif t == "typedef":
                items.append({"kind": "typedef", "name": name, "value": subst(d["value"])})
            elif t == "handle":
                native = name.endswith("native_handle_t")
                items.append({"kind": "handle", "name": name, "native": native,
                              "loader_only": bool(d.get("loader_only"))})
            elif t == "enum":
                if d.get("extend"):
                    pending_ext.append(d)
                    continue
                else:
                    flags = name.endswith("_flags_t")
                    target = {"kind": "enum", "name": name, "flags": flags,
                              "type_name": name[:-7] + "flag_t" if flags else name,
                              "etors": []}
                    enums[name] = target
                    items.append(target)
                add_etors(target, d)
            elif t in ("struct", "union"):
                members = []
                if d.get("base"):
                    members = [{"name": "stype", "type": "ur_structure_type_t", "tags": ["in"]},
                               {"name": "pNext", "type": "void *" if "properties" in d["base"]
                                else "const void *", "tags": ["in", "optional"]}]
                for m in d["members"]:
                    mt = norm_type(m["type"])
                    mn = m["name"]
                    arr = re.match(r"(\w+)\[(\w+)\]", mn)
                    entry = {"name": arr.group(1) if arr else mn, "type": mt,
                             "tags": tags_of(m.get("desc"))}
                    if arr:
                        entry["array"] = subst(arr.group(2))
                    if m.get("tag"):
                        entry["tag"] = subst(m["tag"])
                    members.append(entry)
                yaml_members[name] = [{"name": m["name"], "type": subst(m["type"]),
                                       "desc": subst(m.get("desc") or "")} for m in d["members"]]
                obj = {"kind": t, "name": name, "members": members}
                if d.get("base"):
                    obj["base"] = subst(d["base"])
                if d.get("tag"):
                    obj["tag"] = subst(d["tag"])
                items.append(obj)
            elif t == "fptr_typedef":
                items.append({"kind": "fptr", "name": name, "return": norm_type(d["return"]),
                              "params": [{"name": p["name"], "type": norm_type(p["type"])}
                                         for p in d["params"]]})
            elif t == "function" and str(d.get("version", "")).startswith("9999"):
                continue
            elif t == "function":
                cls = subst(d["class"])
                fname = cls + subst(d["name"])
                params = [{"name": p["name"], "type": norm_type(p["type"]),
                           "tags": tags_of(p["desc"])} for p in d["params"]]
                fn = {"kind": "function", "name": fname, "class": cls, "params": params,
                      "loader_only": bool(d.get("loader_only")),
                      "yaml": {"params": [{"name": p["name"], "type": subst(p["type"]),
                                           "desc": subst(p["desc"])} for p in d["params"]],
                               "returns": d.get("returns") or []}}
                items.append(fn)
                functions.append(fn)
        sections.append({"name": key, "items": items})
    for d in pending_ext:
        add_etors(enums[subst(d["name"])], d)
    # The header's generator adds this one from the spec's version.
    enums["ur_api_version_t"]["etors"].append({"name": "UR_API_VERSION_CURRENT"})

    # Attach measured ABI facts, and check the two sources agree.
    problems = []
    for e in enums.values():
        measured = abi["enums"].get(e["type_name"])
        if measured is None:
            problems.append("enum %s not in ABI facts" % e["type_name"])
            continue
        values = dict(measured)
        for etor in e["etors"]:
            if etor["name"] not in values:
                problems.append("enumerator %s not in ABI facts" % etor["name"])
            else:
                etor["value"] = values[etor["name"]]
        known = {x["name"] for x in e["etors"]}
        for n, v in measured:
            if n not in known and not n.endswith("_FORCE_UINT32"):
                problems.append("enumerator %s only in ABI facts" % n)
    for s in sections:
        for it in s["items"]:
            if it["kind"] in ("struct", "union"):
                m = abi["structs"].get(it["name"])
                if not m:
                    problems.append("struct %s not in ABI facts" % it["name"])
                    continue
                it["size"], it["align"] = m["size"], m["align"]
                names = [x[0] for x in m["members"]]
                if names != [x["name"] for x in it["members"]]:
                    problems.append("struct %s members differ: %s" % (it["name"], names))
                for mem, (_, off, ty) in zip(it["members"], m["members"]):
                    mem["offset"] = off
                    mem["abi_type"] = ty
    for fn in functions:
        types = abi["funcs"].get(fn["name"])
        if types is None:
            fn["exported"] = False
            continue
        fn["exported"] = True
        if len(types) != len(fn["params"]):
            problems.append("function %s arity differs" % fn["name"])
        for p, ty in zip(fn["params"], types):
            p["abi_type"] = ty

    # Parameter rules, in the order UR's validation layer checks them (see rules_of).
    fptrs = {i["name"] for sec in sections for i in sec["items"] if i["kind"] == "fptr"}
    for fn in functions:
        fn["rules"] = rules_of(fn, fn.pop("yaml"), enums, yaml_members, fptrs)
        fn["rules"] += beyond_ur(fn)
    ur_layer = os.path.join(core, "..", "..", "source", "loader", "layers", "validation", "ur_valddi.cpp")
    if os.path.exists(ur_layer):
        problems += compare_with_ur_layer(functions, ur_layer)

    params_structs = {k: v for k, v in abi["structs"].items() if k.endswith("_params_t")}
    tables = []
    for k, v in abi["structs"].items():
        if k.endswith("_dditable_t") and k != "ur_dditable_t":
            tables.append({"name": k, "size": v["size"], "align": v["align"],
                           "slots": [{"name": n, "type": t, "offset": o} for n, o, t in v["members"]]})
    top = abi["structs"]["ur_dditable_t"]
    ddi = {"name": "ur_dditable_t", "size": top["size"], "align": top["align"],
           "members": [{"name": n, "type": t, "offset": o} for n, o, t in top["members"]]}
    getters = {k: v for k, v in abi["funcs"].items() if k.startswith("urGet") and k.endswith("ProcAddrTable")}
    exported = [f["name"] for f in functions if f["exported"] and f["name"] not in getters]
    missing = sorted(set(abi["funcs"]) - set(getters) - set(exported))
    if missing:
        problems.append("functions in ABI facts but not in spec: %s" % missing)

    spec = {
        "ur_commit": COMMIT,
        "api_version": [0, 12],
        "sections": sections,
        "params_structs": {k: {"size": v["size"], "align": v["align"],
                               "members": [{"name": n, "offset": o, "type": t} for n, o, t in v["members"]]}
                           for k, v in sorted(params_structs.items())},
        "ddi_tables": [ddi] + sorted(tables, key=lambda t: [m["type"] for m in ddi["members"]].index(t["name"])),
        "table_getters": {k: v for k, v in sorted(getters.items())},
        "forced_enumerators": {k: [x for x in v if x[0].endswith("_FORCE_UINT32")][0][1]
                               for k, v in abi["enums"].items()},
    }
    for p in problems:
        print("warning:", p, file=sys.stderr)
    out = os.path.join(HERE, "spec", "ur.json")
    with open(out, "w") as fh:
        json.dump(spec, fh, indent=1, sort_keys=False)
        fh.write("\n")
    print("wrote %s: %d functions (%d exported), %d enums, %d structs/unions, %d tables"
          % (out, len(functions), len(exported), len(enums),
             sum(1 for s in sections for i in s["items"] if i["kind"] in ("struct", "union")),
             len(tables)))


if __name__ == "__main__":
    main()
