#!/usr/bin/env python3
"""One-time fact extraction: builds scripts/spec/ur.json from UR's YAML spec and the
measured ABI facts.

Only facts are taken: names, types, parameter order and direction tags, enumerator
values, struct layouts, DDI slot order and the checkable parameter conditions. No
description text is kept. Run it only when re-pinning to a new UR commit:

    scripts/import_ur_spec.py <ur-checkout>/scripts/core <abi-facts.txt>
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


def main():
    core, abi_path = sys.argv[1], sys.argv[2]
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
                explicit = []
                for r in d.get("returns") or []:
                    if isinstance(r, dict):
                        (res, conds), = r.items()
                        for c in conds if isinstance(conds, list) else [conds]:
                            c = subst(str(c)).strip()
                            if re.fullmatch(r"`[^`]+`", c):
                                explicit.append({"result": subst(res), "check": c.strip("`")})
                fn = {"kind": "function", "name": fname, "class": cls, "params": params,
                      "loader_only": bool(d.get("loader_only")), "explicit_rules": explicit}
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

    # Parameter rules: the ones implied by types and tags, then the explicit ones.
    handles = {i["name"] for sec in sections for i in sec["items"]
               if i["kind"] == "handle" and not i["native"]}
    for fn in functions:
        rules = []
        for p in fn["params"]:
            base = p["type"].replace("const ", "").strip()
            optional = "optional" in " ".join(p["tags"]) or "nocheck" in " ".join(p["tags"])
            if base in handles and not optional:
                rules.append({"result": "UR_RESULT_ERROR_INVALID_NULL_HANDLE", "check": "NULL == %s" % p["name"]})
        for p in fn["params"]:
            optional = "optional" in " ".join(p["tags"]) or "nocheck" in " ".join(p["tags"])
            if p["type"].endswith("*") and not optional:
                rules.append({"result": "UR_RESULT_ERROR_INVALID_NULL_POINTER", "check": "NULL == %s" % p["name"]})
        for p in fn["params"]:
            base = p["type"].replace("const ", "").strip()
            e = enums.get(base)
            if e is None or "in" not in p["tags"][0:1] and not p["tags"][0].startswith("in"):
                continue
            if e["flags"]:
                rules.append({"result": "UR_RESULT_ERROR_INVALID_ENUMERATION",
                              "check": "%sMASK & %s" % (enum_prefix(base)[:-5] + "FLAGS_", p["name"])})
            else:
                last = max((x for x in e["etors"] if "value" in x and x["name"] != "UR_API_VERSION_CURRENT"),
                           key=lambda x: x["value"])
                rules.append({"result": "UR_RESULT_ERROR_INVALID_ENUMERATION",
                              "check": "%s < %s" % (last["name"], p["name"])})
        fn["rules"] = rules + fn.pop("explicit_rules")

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
