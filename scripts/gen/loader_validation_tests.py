# SPDX-License-Identifier: Apache-2.0
"""Writes test/loader/generated/validation_rules.gen.cpp: one test per parameter rule of
the spec that can be instantiated automatically, plus one per event wait list.

Each test builds a call whose arguments satisfy every rule (stand-in handles, buffers,
small sizes), then changes the arguments so that this rule, and no rule before it, is
broken. The test asserts that (check_<function> from the loader's generated
ordo_checks/param_checks.gen.hpp names this rule), then calls the API function through the loader
with UR_LAYER_PARAMETER_VALIDATION on and the mock adapter loaded: the result must be
the rule's, which is what UR's own validation layer answers (the rules are UR's checks,
in its order: scripts/import_ur_spec.py). Stand-in handles carry a table of "unsupported" stubs, so a call that
wrongly gets past validation fails the test instead of reaching anything.

The arguments are chosen here, at generation time, with a small model of each call:
every rule's check (a C expression) is evaluated in Python over the model's values, and
the generator searches for values that break the rule in question and no earlier one.
A rule for which it finds none is skipped, counted and listed with the reason."""
import itertools
import re
from types import SimpleNamespace

from spec import BANNER

OUT = "test/loader/generated/validation_rules.gen.cpp"
INT_CANDIDATES = [0, 1, 2, 3, 4, 5, 8, 16, 17, 64]


class Skip(Exception):
    pass


class Nonnull:
    """A non-null pointer in the model: indexable (its memory holds 4s) and truthy."""

    def __getitem__(self, i):
        return 4


NONNULL = Nonnull()


class Zeros(Nonnull):
    """A non-null pointer whose memory holds 0s."""

    def __getitem__(self, i):
        return 0


ZEROS = Zeros()


def c_to_python(check):
    e = check
    # (a ? b : c) -> ((b) if (a) else (c)), innermost first
    ternary = re.compile(r"\(([^()?:]+)\?([^()?:]+):([^()?:]+)\)")
    while ternary.search(e):
        e = ternary.sub(r"((\2) if (\1) else (\3))", e)
    e = e.replace("&&", " and ").replace("||", " or ").replace("->", ".")
    e = re.sub(r"!(?!=)", " not ", e)
    e = re.sub(r"\bNULL\b|\bnullptr\b", "None", e)
    return e


class Model:
    """Values of one call's arguments, as the generator sees them and as C++ code."""

    def __init__(self, spec, fn, consts):
        self.spec, self.fn, self.consts = spec, fn, consts
        self.params = {p["name"]: p for p in fn["params"]}
        self.structs = {s["name"]: s for s in spec.structs}
        self.fptrs = {i["name"] for i in spec.items if i["kind"] == "fptr"}
        self.stypes = {e["name"] for e in spec.enums["ur_structure_type_t"]["etors"]}
        self.values = {}
        self.code = {}  # param or "param.member" -> C++ statement that sets it
        for p in fn["params"]:
            self.values[p["name"]] = self.default(p)

    # --- kinds and defaults -------------------------------------------------------

    def kind(self, p):
        t = p["type"]
        base = re.sub(r"\s*\*$", "", t).replace("const ", "").strip()
        if t in self.spec.handles:
            return "native" if self.spec.handles[t]["native"] else "handle"
        if t in self.fptrs:
            return "fptr"
        if t in self.structs:
            return "struct_value"
        if t.endswith("*"):
            if t.count("*") == 1 and t.startswith("const ") and base in self.spec.handles \
                    and not self.spec.handles[base]["native"]:
                return "handle_array"
            if t.count("*") == 1 and base in self.structs:
                return "struct_pointer"
            if t == "const char *":
                return "string"
            return "pointer"
        if t in self.spec.enums:
            return "flags" if self.spec.enums[t]["flags"] else "enum"
        return "integer"

    def is_handle(self, t):
        return t in self.spec.handles and not self.spec.handles[t]["native"]

    def struct_of(self, p):
        return re.sub(r"\s*\*$", "", p["type"]).replace("const ", "").strip()

    def new_struct(self, sname):
        s = self.structs[sname]
        # As `T value{}` leaves them: pointers and handles null, the rest 0.
        ns = SimpleNamespace(**{m["name"]: None if "*" in m["type"] or self.is_handle(m["type"]) else 0
                                for m in s["members"]})
        stype = "UR_STRUCTURE_TYPE_" + sname[3:-2].upper()
        if hasattr(ns, "stype") and stype in self.stypes:
            ns.stype = self.consts[stype]
        return ns

    def default(self, p):
        n, k = p["name"], self.kind(p)
        optional = "optional" in p["tags"]
        if k == "handle":
            return None if optional else NONNULL
        if k == "struct_pointer":
            return None if optional else self.new_struct(self.struct_of(p))
        if k in ("handle_array", "string", "pointer", "fptr"):
            return NONNULL
        if k == "struct_value":
            ns = self.new_struct(p["type"])
            if p["type"] == "ur_rect_region_t":
                ns.width = ns.height = ns.depth = 4
            return ns
        if k == "enum":
            return self.first_etor(p["type"])[1]
        if k in ("flags", "native"):
            return 0 if k == "flags" else 4
        return self.integer_default(n, p["type"])

    def first_etor(self, t):
        e = [x for x in self.spec.enums[t]["etors"] if not x["name"].endswith("FORCE_UINT32")][0]
        return e["name"], e["value"]

    @staticmethod
    def integer_default(name, type_):
        if type_ in ("bool", "ur_bool_t"):
            return 0
        if name == "workDim":
            return 1
        if "RowPitch" in name or "SlicePitch" in name:
            return 0  # tightly packed
        if re.fullmatch(r"(src|dst)?[Pp]itch", name):
            return 16  # at least the width
        return 4

    def declarations(self):
        out = []
        for p in self.fn["params"]:
            n, t, k = p["name"], p["type"], self.kind(p)
            optional = "optional" in p["tags"]
            if k == "handle":
                out.append("  %s %s = %s;" % (t, n, "nullptr" if optional else "stand_in<%s>()" % t))
            elif k == "native":
                out.append("  %s %s = 4;" % (t, n))
            elif k == "handle_array":
                base = t.replace("const ", "").replace("*", "").strip()
                out.append("  %s %s = stand_ins<%s>();" % (t, n, base))
            elif k == "struct_pointer":
                sname = self.struct_of(p)
                out.append("  %s %s_value{};" % (sname, n))
                ns = self.new_struct(sname)
                if hasattr(ns, "stype") and ns.stype:
                    out.append("  %s_value.stype = %s;" % (n, self.stype_name(sname)))
                out.append("  (void)%s_value; // pointed to only when a rule needs it" % n)
                out.append("  %s %s = %s;" % (t, n, "nullptr" if optional else "&%s_value" % n))
            elif k == "string":
                out.append('  %s %s = "ordo";' % (t, n))
            elif k == "pointer":
                out.append("  Scratch %s_memory;" % n)
                out.append("  %s %s = reinterpret_cast<%s>(%s_memory.words);" % (t, n, t, n))
            elif k == "fptr":
                out.append("  %s %s = reinterpret_cast<%s>(&no_op);" % (t, n, t))
            elif k == "struct_value":
                if t == "ur_rect_region_t":
                    out.append("  %s %s = {4, 4, 4};" % (t, n))
                else:
                    out.append("  %s %s{};" % (t, n))
            elif k == "enum":
                out.append("  %s %s = %s;" % (t, n, self.first_etor(t)[0]))
            elif k == "flags":
                out.append("  %s %s = 0;" % (t, n))
            else:
                v = self.integer_default(n, t)
                out.append("  %s %s = %s;" % (t, n, ("false" if v == 0 else "true") if t == "bool" else v))
        return out

    def stype_name(self, sname):
        return "UR_STRUCTURE_TYPE_" + sname[3:-2].upper()

    # --- evaluation ----------------------------------------------------------------

    def fires(self, check, values=None):
        env = dict(self.consts)
        env.update(values if values is not None else self.values)
        try:
            return bool(eval(c_to_python(check), {"__builtins__": {}}, env))
        except (ZeroDivisionError, TypeError, AttributeError, NameError, SyntaxError):
            return None  # cannot tell

    def first_broken(self, rules, wait_lists, values=None):
        """Index of the first rule the values break (wait lists after the rules), None
        when none is, and raises Skip if a rule cannot be evaluated."""
        vals = values if values is not None else self.values
        for i, r in enumerate(rules):
            f = self.fires(r["check"], vals)
            if f is None:
                raise Skip("cannot evaluate `%s`" % r["check"])
            if f:
                return i
        for j, (lst, count) in enumerate(wait_lists):
            if vals[lst] == "with_null" and vals[count] > 0:
                return len(rules) + j
        return None

    # --- the changes the search may make --------------------------------------------

    def candidates(self, name):
        """(key, model value, C++ statement) for each value `name` may be given."""
        p = self.params.get(name)
        if p is None:
            return []
        k, t = self.kind(p), p["type"]
        out = []
        if k == "handle":
            out += [(name, None, "  %s = nullptr;" % name), (name, NONNULL, "  %s = stand_in<%s>();" % (name, t))]
        elif k in ("pointer", "string", "handle_array", "fptr"):
            out += [(name, None, "  %s = nullptr;" % name)]
            if k == "pointer":  # its elements 0 instead of 4
                out += [(name, ZEROS, "  for (size_t &w : %s_memory.words) w = 0;" % name)]
        elif k == "struct_pointer":
            out += [(name, None, "  %s = nullptr;" % name)]
            if self.values[name] is None:
                out += [(name, self.new_struct(self.struct_of(p)), "  %s = &%s_value;" % (name, name))]
        elif k in ("integer", "native"):
            for v in INT_CANDIDATES:
                out.append((name, v, "  %s = %s;" % (name, ("true" if v else "false") if t == "bool" else v)))
        elif k == "enum":
            etors = [x for x in self.spec.enums[t]["etors"] if not x["name"].endswith("FORCE_UINT32")]
            for x in etors:
                out.append((name, x["value"], "  %s = %s;" % (name, x["name"])))
            past = max(x["value"] for x in etors) + 1
            out.append((name, past, "  %s = static_cast<%s>(%d);" % (name, t, past)))
        elif k == "flags":
            for v in self.flag_values(t):
                out.append((name, v, "  %s = static_cast<%s>(0x%x);" % (name, t, v)))
        return out

    def flag_values(self, t):
        """0, the invalid bits, each flag, and each pair of flags."""
        bits = [x["value"] for x in self.spec.enums[t]["etors"]
                if not x["name"].endswith("FORCE_UINT32") and x["value"]]
        vals = [0, self.consts[t[:-2].upper() + "_MASK"]] + bits
        if len(bits) <= 16:
            vals += [a | b for a, b in itertools.combinations(bits, 2)]
        return vals

    def member_candidates(self, name, member):
        """Changes of one member of a struct argument (by pointer or by value)."""
        p = self.params.get(name)
        if p is None:
            return []
        k = self.kind(p)
        if k not in ("struct_pointer", "struct_value"):
            return []
        sname = self.struct_of(p) if k == "struct_pointer" else p["type"]
        members = {m["name"]: m for m in self.structs[sname]["members"]}
        if member not in members:
            return []
        mt = members[member]["type"]
        holder = "%s_value" % name if k == "struct_pointer" else name
        out = []
        if mt in self.spec.enums and not self.spec.enums[mt]["flags"]:
            etors = [x for x in self.spec.enums[mt]["etors"] if not x["name"].endswith("FORCE_UINT32")]
            vals = [(x["value"], x["name"]) for x in etors] + [(max(x["value"] for x in etors) + 1, None)]
            for v, nm in vals:
                out.append(((name, member), v, "  %s.%s = %s;" % (holder, member, nm or "static_cast<%s>(%d)" % (mt, v))))
        elif mt in self.spec.enums:
            for v in self.flag_values(mt):
                out.append(((name, member), v, "  %s.%s = static_cast<%s>(0x%x);" % (holder, member, mt, v)))
        elif self.is_handle(mt):
            out.append(((name, member), None, "  %s.%s = nullptr;" % (holder, member)))
            out.append(((name, member), NONNULL, "  %s.%s = stand_in<%s>();" % (holder, member, mt)))
        elif "*" in mt:
            out.append(((name, member), None, "  %s.%s = nullptr;" % (holder, member)))
            out.append(((name, member), NONNULL, "  %s.%s = reinterpret_cast<%s>(&g_member_memory);" % (holder, member, mt)))
        else:
            for v in INT_CANDIDATES:
                out.append(((name, member), v, "  %s.%s = %d;" % (holder, member, v)))
        return out

    def apply(self, values, change):
        key, v, _ = change
        new = dict(values)
        if isinstance(key, tuple):
            name, member = key
            base = new[name]
            if base is None:  # a member of an absent struct: point at storage first
                p = self.params[name]
                base = self.new_struct(self.struct_of(p))
            ns = SimpleNamespace(**vars(base))
            setattr(ns, member, v)
            new[name] = ns
        else:
            new[key] = v
        return new


def names_in(check):
    """Parameter names and (param, member) pairs a check reads."""
    members = set(re.findall(r"\b(\w+)\s*(?:->|\.)\s*(\w+)", check))
    words = set(re.findall(r"\b([a-zA-Z_]\w*)\b", check))
    return words, members


def search(model, rules, wait_lists, target):
    """Changes that make `target` the first broken rule, or raise Skip."""
    if target < len(rules):
        words, members = names_in(rules[target]["check"])
    else:
        lst, count = wait_lists[target - len(rules)]
        words, members = {lst, count}, set()
    options = []
    for w in sorted(words):
        options += model.candidates(w)
    for name, member in sorted(members):
        options += model.member_candidates(name, member)
        # a member of a struct that must first be pointed to
        p = model.params.get(name)
        if p is not None and model.kind(p) == "struct_pointer" and model.values[name] is None:
            options += [c for c in model.candidates(name) if c[1] is not None]

    if target >= len(rules):
        lst, count = wait_lists[target - len(rules)]
        options.append((lst, "with_null", None))
    base = model.values
    touched_target = {o[0] if not isinstance(o[0], tuple) else o[0][0] for o in options}

    def first(values):
        return model.first_broken(rules, wait_lists, values)

    # 1, 2, then 3 changes to the target's own arguments.
    broke_it = False
    for size in (1, 2, 3):
        for combo in itertools.combinations(options, size):
            keys = [c[0] for c in combo]
            if len(set(map(str, keys))) != size:
                continue
            values = base
            for c in combo:
                values = model.apply(values, c)
            try:
                f = first(values)
            except Skip:
                continue
            if f == target:
                return list(combo)
            if f is not None and f < target:
                broke_it = broke_it or target < len(rules) and model.fires(rules[target]["check"], values)
                # Also change arguments the target does not read, to clear the earlier rule.
                fixed = repair(model, rules, wait_lists, target, values, touched_target)
                if fixed is not None:
                    return list(combo) + fixed
    if broke_it:
        raise Skip("unreachable: whenever it is broken, an earlier rule is broken too")
    raise Skip("no arguments found that break it (array elements are not varied)")


def repair(model, rules, wait_lists, target, values, protected):
    changes = []
    for _ in range(4):
        f = model.first_broken(rules, wait_lists, values)
        if f == target:
            return changes
        if f is None or f > target:
            return None
        words, members = names_in(rules[f]["check"])
        best = None
        for w in sorted(words - {str(p) for p in protected}):
            for c in model.candidates(w):
                v2 = model.apply(values, c)
                try:
                    f2 = model.first_broken(rules, wait_lists, v2)
                except Skip:
                    continue
                if f2 is not None and f2 > f and f2 <= target:
                    best = (c, v2)
                    break
            if best:
                break
        if not best:
            return None
        changes.append(best[0])
        values = best[1]
    return None


def repair_defaults(model, rules, wait_lists):
    """Changes to the default arguments until they break no rule; raises Skip if stuck."""
    changes = []
    for _ in range(6):
        f = model.first_broken(rules, wait_lists)
        if f is None:
            return changes
        words, members = names_in(rules[f]["check"])
        options = [c for w in sorted(words) for c in model.candidates(w)]
        options += [c for nm, mb in sorted(members) for c in model.member_candidates(nm, mb)]
        found = None
        for c in options:
            v2 = model.apply(model.values, c)
            try:
                f2 = model.first_broken(rules, wait_lists, v2)
            except Skip:
                continue
            if f2 is None or f2 > f:
                found = (c, v2)
                break
        if not found:
            raise Skip("no arguments found that break no rule")
        changes.append(found[0])
        model.values = found[1]
    raise Skip("no arguments found that break no rule")


def c_string(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def constants(spec):
    consts = {}
    for e in spec.enums.values():
        mask = 0
        for x in e["etors"]:
            consts[x["name"]] = x["value"]
            mask |= x["value"]
        if e["flags"]:
            consts[e["name"][:-2].upper() + "_MASK"] = ~mask & 0xFFFFFFFF
    return consts


PRELUDE = r'''
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "ordo/ddi_fill.hpp"
#include "ordo_checks/param_checks.gen.hpp"
#include "ur_api.h"

using namespace ordo::checks;

namespace {

// Stand-in handles: an "unsupported" table in the first word, so that a call that gets
// past validation by mistake returns UR_RESULT_ERROR_UNSUPPORTED_FEATURE.
const ur_dditable_t *stub_table() {
  static const ur_dditable_t table = [] {
    ur_dditable_t t{};
    ordo::fill_unsupported(t);
    return t;
  }();
  return &table;
}
struct StandIn {
  const ur_dditable_t *table;
  unsigned char rest[248];
};
StandIn g_stand_ins[8];

template <class H> H stand_in() { return reinterpret_cast<H>(&g_stand_ins[0]); }
template <class H> const H *stand_ins() {
  static H list[8];
  for (int i = 0; i < 8; ++i) list[i] = reinterpret_cast<H>(&g_stand_ins[i]);
  return list;
}

// Memory behind every other pointer argument: 64 words of 4.
struct Scratch {
  size_t words[64];
  Scratch() {
    for (size_t &w : words) w = 4;
  }
};
Scratch g_member_memory;

void no_op() {}

// The loader with the mock adapter and UR_LAYER_PARAMETER_VALIDATION, for all tests.
class ValidationEnvironment : public testing::Environment {
public:
  void SetUp() override {
    for (StandIn &s : g_stand_ins) s.table = stub_table();
    ur_loader_config_handle_t config = nullptr;
    ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderConfigSetMockingEnabled(config, true), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_PARAMETER_VALIDATION"), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderInit(0, config), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
    uint32_t n = 0;
    ASSERT_EQ(urAdapterGet(0, nullptr, &n), UR_RESULT_SUCCESS);
    ASSERT_EQ(n, 1u) << "the mock adapter did not load";
  }
  void TearDown() override { EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS); }
};

} // namespace

int main(int argc, char **argv) {
  setenv("UR_LOG_VALIDATION", "level:error", 0); // hundreds of expected refusals
  testing::InitGoogleTest(&argc, argv);
  testing::AddGlobalTestEnvironment(new ValidationEnvironment);
  return RUN_ALL_TESTS();
}
'''


def outputs(spec):
    import layer_validation as lv

    consts = constants(spec)
    tests, skipped = [], []
    total = 0
    for fn in spec.functions:
        rules = fn.get("rules", [])
        wait = lv.wait_lists(fn)
        args = ", ".join(p["name"] for p in fn["params"])
        n_cases = len(rules) + len(wait)
        for target in range(n_cases):
            total += 1
            model = Model(spec, fn, consts)
            if target < len(rules):
                why, result = rules[target]["check"], rules[target]["result"]
            else:
                lst, count = wait[target - len(rules)]
                why = "%s[i] == NULL for some i < %s" % (lst, count)
                result = "UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST"
            try:
                changes = repair_defaults(model, rules, wait)
                changes += search(model, rules, wait, target)
            except Skip as e:
                skipped.append((fn["name"], why, str(e)))
                continue
            lines = []
            for key, v, stmt in changes:
                if v == "with_null":
                    lst, count = wait[target - len(rules)]
                    base = model.params[lst]["type"].replace("const ", "").replace("*", "").strip()
                    lines.append("  const %s with_null[4] = {stand_in<%s>(), stand_in<%s>(), nullptr, stand_in<%s>()};"
                                 % (base, base, base, base))
                    lines.append("  %s = with_null;" % lst)
                    lines.append("  %s = 4;" % count)
                else:
                    if isinstance(key, tuple) and model.kind(model.params[key[0]]) == "struct_pointer":
                        lines.append("  %s = &%s_value;" % (key[0], key[0]))
                    lines.append(stmt)
            name = "%s_%d" % (fn["name"], target)
            t = ["// %s -> %s" % (why, result), "TEST(ValidationRule, %s) {" % name]
            t += model.declarations()
            t += lines
            t.append("  const char *why = nullptr;")
            t.append("  ASSERT_EQ(check_%s(&why%s), %s) << \"generator: not the rule broken\";"
                     % (fn["name"], (", " + args) if args else "", result))
            t.append("  ASSERT_STREQ(why, %s) << \"generator: an earlier rule is broken first\";" % c_string(why))
            t.append("  EXPECT_EQ(%s(%s), %s);" % (fn["name"], args, result))
            t.append("}")
            t.append("")
            tests.append("\n".join(t))

    covered = len(tests)
    head = [BANNER.rstrip(),
            "// One test per parameter rule (and per event wait list) that",
            "// scripts/gen/loader_validation_tests.py can instantiate: %d of %d covered, %d"
            % (covered, total, len(skipped)),
            "// skipped (listed, with the reason, at the end of this file)."]
    body = [PRELUDE.strip(), ""]
    body.append("TEST(ValidationRules, Coverage) {")
    body.append('  std::cout << "validation rules: %d of %d instantiated as tests, %d skipped "'
                % (covered, total, len(skipped)))
    body.append('               "(see the end of validation_rules.gen.cpp)" << std::endl;')
    body.append('  RecordProperty("covered", %d);' % covered)
    body.append('  RecordProperty("skipped", %d);' % len(skipped))
    body.append("}")
    body.append("")
    body += tests
    tail = ["// Skipped (%d):" % len(skipped)]
    for fname, check, reason in skipped:
        tail.append("//   %s: `%s`: %s" % (fname, check, reason))
    return {OUT: "\n".join(head + body + tail) + "\n"}
