# SPDX-License-Identifier: Apache-2.0
"""Writes test/loader/generated/leak_coverage.gen.cpp: proof that the leak-checking layer
covers every function with a handle out-parameter, and every function that ends a
handle's life.

The candidates are found here from the parameter types alone (a `X *` parameter whose
direction includes out, X any handle type), not from the layer's own selection, so a
function the layer forgets fails a test. What each test expects follows the rule in
layer_leak_checking.py: a handle of a type that is ever released or destroyed is counted
unless the function is one of its BORROWED getters; any other out-handle is never counted.

Each call goes through the loader (mock adapter loaded, UR_LAYER_LEAK_CHECKING on) with
stand-in handles as arguments. A stand-in carries this file's own table in its first
word, so the call dispatches to a fake that writes fresh stand-ins into the out-handles
(or, for an end function, just succeeds). A test per function calls it twice, ends each
counted handle of the first call and keeps the second: the report must name exactly the
kept counted handles and no release may be called "not alive". urAdapterGet is written
by hand in the loader, so its test uses the real mock adapter and keeps nothing (a kept
adapter reference would outlive the loader)."""
import re

from spec import BANNER
import layer_leak_checking as leak

OUT = "test/loader/generated/leak_coverage.gen.cpp"
HAND_WRITTEN = {"urAdapterGet"}  # no table slot of its own in the loader


def out_params(spec, fn):
    """(param, handle type) for each out-parameter of type `X *`, X a handle type."""
    res = []
    for p in fn["params"]:
        m = re.fullmatch(r"(\w+) \*", p["type"])
        if m and m.group(1) in spec.handles and any("out" in t.split(",") for t in p["tags"]):
            res.append((p, m.group(1)))
    return res


def expectation(spec, fn, ht):
    """(counted, why not) for an out-handle of type ht written by fn."""
    if spec.handles[ht]["native"]:
        return False, "native handle"
    if ht not in leak.trackable_types(spec):
        return False, "never released"
    if fn["name"] in leak.BORROWED:
        return False, "borrowed: " + leak.BORROWED[fn["name"]]
    return True, None


def pointee(p):
    m = re.fullmatch(r"(?:const )?(\w+) \*", p["type"])
    return m.group(1) if m else None


def arg_locals(spec, fn, override=None):
    """Local declarations for a call of fn: stand-ins for handles, one-entry arrays (and
    counts of 1) for handle arrays, zero for everything else."""
    counts = {leak.range_of(p) for p in fn["params"] if pointee(p) in spec.handles and leak.range_of(p)}
    lines = []
    for p in fn["params"]:
        n, t = p["name"], p["type"]
        if override and n in override:
            lines.append("  %s %s = %s;" % (t, n, override[n]))
        elif t in spec.handles and not spec.handles[t]["native"]:
            lines.append("  %s %s = stand_in<%s>();" % (t, n, t))
        elif pointee(p) in spec.handles and any("out" in x.split(",") for x in p["tags"]):
            lines.append("  %s %s[1]{};" % (pointee(p), n))
        elif pointee(p) in spec.handles and not spec.handles[pointee(p)]["native"]:
            lines.append("  %s %s[1] = {stand_in<%s>()};" % (pointee(p), n, pointee(p)))
        elif n in counts:
            lines.append("  %s %s = 1;" % (t, n))
        else:
            lines.append("  %s %s{};" % (t, n))
    return lines


def as_pointer(ht, expr):
    return "reinterpret_cast<const void *>(%s)" % expr


def outputs(spec):
    cases, enders = [], []  # (fn, [(param, type, counted, why)]), (fn, param, type)
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            outs = out_params(spec, fn)
            if outs:
                cases.append((t, s, fn, [(p, ht) + expectation(spec, fn, ht) for p, ht in outs]))
            for kind, p, ht, _ in leak.handle_events(spec, fn):
                if kind == "released":
                    enders.append((t, s, fn, p, ht))
    # How the tests end a counted handle: the type's [release] function, else its Destroy.
    end_of = {}
    for t, s, fn, p, ht in enders:
        if ht not in end_of or ("release" in p["tags"] and "release" not in end_of[ht][1]["tags"]):
            end_of[ht] = (fn, p)
    for t, s, fn, outs in cases:
        for p, ht, counted, why in outs:
            assert not counted or ht in end_of, "%s: nothing ends a %s" % (fn["name"], ht)

    n_outs = sum(len(o) for *_, o in cases)
    n_counted = sum(1 for *_, o in cases for x in o if x[2])
    o = [BANNER.rstrip(),
         "// Every function with a handle out-parameter, and every function that ends a",
         "// handle's life, called through UR_LAYER_LEAK_CHECKING (scripts/gen/loader_leak_tests.py",
         "// says how). %d functions write %d out-handles: %d counted, %d not (listed at the end"
         % (len(cases), n_outs, n_counted, n_outs - n_counted),
         "// of this file with the reason); %d functions end a handle." % len(enders),
         "#include <gtest/gtest.h>", "",
         "#include <cstdio>", "#include <ostream>", "#include <string>", "",
         '#include "ordo/ddi_fill.hpp"', '#include "ur_api.h"', "",
         "namespace {", "",
         "const ur_dditable_t &fake_table();", "",
         "// Stand-in handles: fake_table() in the first word; fresh ones for each out-handle.",
         "struct StandIn {",
         "  const ur_dditable_t *table;",
         "};",
         "StandIn g_in;",
         "StandIn g_fresh[16];",
         "size_t g_used = 0;", "",
         "template <class H> H stand_in() {",
         "  g_in.table = &fake_table();",
         "  return reinterpret_cast<H>(&g_in);",
         "}",
         "template <class H> H fresh() {",
         "  StandIn *s = &g_fresh[g_used++ % 16];",
         "  s->table = &fake_table();",
         "  return reinterpret_cast<H>(s);",
         "}", "",
         "// Fakes behind the stand-ins: out-handles get fresh stand-ins, ends succeed.", ""]
    faked = set()
    for t, s, fn, outs in cases:
        if fn["name"] in HAND_WRITTEN:
            continue
        faked.add((t["field"], s["name"], fn["name"]))
        o.append("ur_result_t UR_APICALL fake_%s(%s) {" % (fn["name"], ", ".join(
            "%s %s" % (p["type"], p["name"]) for p in fn["params"]) or "void"))
        for p, ht, counted, why in outs:
            n, cnt = p["name"], leak.range_of(p)
            if cnt:
                o.append("  if (%s)" % n)
                o.append("    for (uint32_t i = 0; i < %s; ++i) %s[i] = fresh<%s>();" % (cnt, n, ht))
            else:
                o.append("  if (%s) *%s = fresh<%s>();" % (n, n, ht))
        o.append("  return UR_RESULT_SUCCESS;")
        o.append("}")
        o.append("")
    for t, s, fn, p, ht in enders:
        if (t["field"], s["name"], fn["name"]) in faked:
            continue
        faked.add((t["field"], s["name"], fn["name"]))
        o.append("ur_result_t UR_APICALL fake_%s(%s) { return UR_RESULT_SUCCESS; }"
                 % (fn["name"], ", ".join(q["type"] for q in fn["params"])))
    o += ["", "const ur_dditable_t &fake_table() {",
          "  static const ur_dditable_t table = [] {",
          "    ur_dditable_t t{};"]
    for field, slot, name in sorted(faked):
        o.append("    t.%s.%s = fake_%s;" % (field, slot, name))
    o += ["    ordo::fill_unsupported(t);", "    return t;", "  }();", "  return table;", "}", ""]

    o += ["// One call through the loader: its result and the out-handles it wrote.",
          "struct Outcome {",
          "  ur_result_t result = UR_RESULT_ERROR_UNINITIALIZED;",
          "  const void *handles[2] = {nullptr, nullptr};",
          "};", ""]
    for t, s, fn, outs in cases:
        o.append("void call_%s(Outcome &o) {" % fn["name"])
        o += arg_locals(spec, fn)
        o.append("  o.result = %s(%s);" % (fn["name"], ", ".join(p["name"] for p in fn["params"])))
        for i, (p, ht, counted, why) in enumerate(outs):
            o.append("  o.handles[%d] = %s;" % (i, as_pointer(ht, "%s[0]" % p["name"])))
        o.append("}")
        o.append("")
    for t, s, fn, p, ht in enders:
        o.append("ur_result_t end_%s(const void *h) {" % fn["name"])
        o += arg_locals(spec, fn, {p["name"]: "static_cast<%s>(const_cast<void *>(h))" % ht})
        o.append("  return %s(%s);" % (fn["name"], ", ".join(q["name"] for q in fn["params"])))
        o.append("}")
        o.append("")

    o += ["struct OutHandle {",
          "  const char *param;",
          "  const char *type;",
          "  bool counted;",
          "  ur_result_t (*end)(const void *); // how the test ends a counted one",
          "};",
          "struct Case {",
          "  const char *function;",
          "  void (*call)(Outcome &);",
          "  bool keep; // call a second time and keep what it wrote",
          "  size_t count;",
          "  OutHandle outs[2];",
          "};", "",
          "const Case kCases[] = {"]
    for t, s, fn, outs in cases:
        assert len(outs) <= 2
        items = []
        for p, ht, counted, why in outs:
            end = "end_%s" % end_of[ht][0]["name"] if counted else "nullptr"
            items.append('{"%s", "%s", %s, %s}' % (p["name"], ht, "true" if counted else "false", end))
        o.append('    {"%s", call_%s, %s, %d, {%s}},' % (
            fn["name"], fn["name"], "false" if fn["name"] in HAND_WRITTEN else "true", len(outs),
            ", ".join(items)))
    o += ["};", "",
          "struct Ender {",
          "  const char *function;",
          "  const char *type;",
          "  ur_result_t (*end)(const void *);",
          "};", "",
          "const Ender kEnders[] = {"]
    for t, s, fn, p, ht in enders:
        o.append('    {"%s", "%s", end_%s},' % (fn["name"], ht, fn["name"]))
    o += ["};", ""]
    o += r'''// The loader with the mock adapter and leak checking, for one scope; its teardown
// writes the report.
struct LeakCheckingLoader {
  LeakCheckingLoader() {
    ur_loader_config_handle_t config = nullptr;
    EXPECT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
    EXPECT_EQ(urLoaderConfigSetMockingEnabled(config, true), UR_RESULT_SUCCESS);
    EXPECT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_LEAK_CHECKING"), UR_RESULT_SUCCESS);
    EXPECT_EQ(urLoaderInit(0, config), UR_RESULT_SUCCESS);
    EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
  }
  ~LeakCheckingLoader() { EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS); }
};

size_t count_lines_with(const std::string &text, const std::string &needle) {
  size_t n = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.substr(pos, end - pos).find(needle) != std::string::npos) ++n;
    pos = end + 1;
  }
  return n;
}

std::string format(const char *fmt, const char *type, const void *handle) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, type, handle);
  return buf;
}

// Test names and failure messages show the function, not the bytes of the case.
void PrintTo(const Case &c, std::ostream *os) { *os << c.function; }
void PrintTo(const Ender &e, std::ostream *os) { *os << e.function; }

class OutHandles : public testing::TestWithParam<Case> {};
class Ends : public testing::TestWithParam<Ender> {};

} // namespace

// The first call's counted handles are ended, the second call's kept: the report names
// exactly the kept counted ones, and no end is "not alive".
TEST_P(OutHandles, CountedUnlessBorrowedNativeOrNeverReleased) {
  const Case &c = GetParam();
  Outcome first, kept;
  ur_result_t ended[2] = {UR_RESULT_SUCCESS, UR_RESULT_SUCCESS};
  testing::internal::CaptureStderr();
  {
    LeakCheckingLoader loader;
    c.call(first);
    for (size_t i = 0; i < c.count; ++i)
      if (first.result == UR_RESULT_SUCCESS && c.outs[i].counted) ended[i] = c.outs[i].end(first.handles[i]);
    if (c.keep) c.call(kept);
  }
  const std::string log = testing::internal::GetCapturedStderr();
  ASSERT_EQ(first.result, UR_RESULT_SUCCESS) << log;
  size_t alive = 0;
  for (size_t i = 0; i < c.count; ++i) {
    const OutHandle &out = c.outs[i];
    ASSERT_NE(first.handles[i], nullptr) << out.param;
    EXPECT_EQ(ended[i], UR_RESULT_SUCCESS) << out.param;
    if (c.keep) {
      ASSERT_EQ(kept.result, UR_RESULT_SUCCESS) << log;
      std::string line = format("%s %p still alive with reference count 1", out.type, kept.handles[i]);
      EXPECT_EQ(count_lines_with(log, line), out.counted ? 1u : 0u) << out.param << "\n" << log;
      alive += out.counted;
    }
  }
  EXPECT_EQ(count_lines_with(log, "not alive"), 0u) << log;
  EXPECT_EQ(count_lines_with(log, "still alive"), alive) << log;
}

// A stand-in that was never created, ended once: the layer saw the end.
TEST_P(Ends, AreSeenByTheLayer) {
  const Ender &e = GetParam();
  const void *h = fresh<const void *>();
  ur_result_t r = UR_RESULT_ERROR_UNINITIALIZED;
  testing::internal::CaptureStderr();
  {
    LeakCheckingLoader loader;
    r = e.end(h);
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r, UR_RESULT_SUCCESS);
  EXPECT_EQ(count_lines_with(log, format("release of %s %p, which is not alive", e.type, h)), 1u) << log;
}

INSTANTIATE_TEST_SUITE_P(LeakCheckingCoverage, OutHandles, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case> &i) { return std::string(i.param.function); });
INSTANTIATE_TEST_SUITE_P(LeakCheckingCoverage, Ends, testing::ValuesIn(kEnders),
                         [](const testing::TestParamInfo<Ender> &i) { return std::string(i.param.function); });
'''.split("\n")
    o.append("// Out-handles the layer does not count:")
    for t, s, fn, outs in cases:
        for p, ht, counted, why in outs:
            if not counted:
                o.append("//   %s %s (%s): %s" % (fn["name"], p["name"], ht, why))
    o.append("")
    return {OUT: "\n".join(o)}
