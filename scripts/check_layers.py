#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when an #include or a CMake source reference crosses Ordo's layers.

The layers are the ones docs/architecture.md draws ("Layering"); ALLOWED below is that
drawing as a table: which part of the tree may include the headers of which other part.
Each #include "x" / <x> of every C and C++ file is resolved as the compiler would find it
in this tree (next to the including file first, then by its spelling anywhere in the
tree) and the part holding the header must be the includer's own or one it may use.
CMakeLists.txt files may not compile another part's source files, nor put source/ itself
on an include path (each library of source/ has its own include root:
ordo_include_root, cmake/OrdoHelpers.cmake).

    scripts/check_layers.py [--root DIR] [--table]

Run by ctest (test layering, label lint). Standard library only.
"""

import argparse
import os
import re
import sys

# Parts of the tree, by path prefix (longest prefix wins). "{name}" stands for one
# folder name, so every adapter, and every adapter's tests, is a part of its own.
PARTS = [
    ("include", "include"),  # the public C API: ur_api.h, ur_ddi.h, ur_native_cpu_kernel.h
    ("source/ordo", "ordo"),  # ordo_base
    ("source/generated", "ordo"),  # ordo_base too: the table defaults ordo/*.hpp declare
    # ordo_param_checks: the spec's parameter checks, generated, header-only.
    ("source/generated/ordo_checks", "param_checks"),
    ("source/ordered_pool", "ordered_pool"),
    ("source/stream_ordered", "stream_ordered"),
    ("source/ur_common", "ur_common"),
    ("source/command_buffer", "command_buffer"),
    ("source/derived", "derived"),
    ("source/elf", "elf"),
    ("source/stream_backend", "stream_backend"),
    # The stream backend's one public header: the driver seam an adapter implements.
    ("source/stream_backend/driver_api.hpp", "stream_backend_driver_api"),
    ("loader", "loader"),
    ("adapters/{name}", "adapter:{name}"),
    ("adapters/{name}/test", "adapter_test:{name}"),
    # The mock adapter's header for tests that reach the mock the loader loaded.
    ("adapters/mock/ordo_mock.h", "mock_api"),
    ("tools/urinfo", "urinfo"),
    ("tools/urinfo/support", "urinfo_support"),
    ("tools/bench", "bench"),
    ("tools/pool_replay", "pool_replay"),
    ("tools/opencl_probes", "opencl_probes"),
    ("examples", "examples"),
    ("test/{name}", "test:{name}"),
]

# Who may include whom, besides itself. "adapter:*" is every adapter.
SOURCE_LIBRARIES_FOR_ADAPTERS = {
    "include", "ordo", "param_checks", "stream_ordered", "ur_common", "command_buffer", "derived", "elf",
    "stream_backend_driver_api",
}
ALLOWED = {
    "include": set(),
    # The pool core knows nothing of UR, not even its headers (docs/ordered-pool.md).
    "ordered_pool": set(),
    "param_checks": {"include"},
    # ordo_base's boundary runs the parameter checks (and hands them on to its users).
    "ordo": {"include", "param_checks"},
    "stream_ordered": {"include", "ordo", "ordered_pool"},
    "command_buffer": {"include", "ordo"},
    "derived": {"include", "ordo"},
    "elf": {"include", "ordo"},
    "ur_common": {"include", "ordo", "stream_ordered"},
    "stream_backend": {"include", "ordo", "ur_common", "stream_ordered", "command_buffer", "derived"},
    "stream_backend_driver_api": {"include"},
    # The loader: the API, ordo_base and the parameter checks, no pool, no adapter code.
    "loader": {"include", "ordo", "param_checks"},
    # Adapters: the API and source/'s libraries; never the pool core directly (it comes
    # through ordo_so/layer.hpp), the loader, or another adapter.
    "adapter:*": SOURCE_LIBRARIES_FOR_ADAPTERS,
    "mock_api": {"include"},
    # An adapter's own tests load it as a loader would: the API only.
    "adapter_test:*": {"include"},
    # The mock's own tests reach the mock the loader loaded through its test interface.
    "adapter_test:mock": {"include", "mock_api"},
    "urinfo_support": {"include"},
    "urinfo": {"include", "urinfo_support"},
    "bench": {"include"},
    # The random workload on a pool core alone (cache simulation): bench's sequence.
    "pool_replay": {"ordered_pool", "bench"},
    "opencl_probes": set(),
    # Programs as a user writes them: the API (through the loader) and urinfo's support.
    "examples": {"include", "urinfo_support"},
    "test:abi": {"include"},
    "test:bad_input": {"include", "urinfo_support"},
    "test:conformance": {"include", "urinfo_support"},
    "test:kernels": {"include"},
    # Loader tests: the loader's own generated rule table, ordo/ helpers, the mock's API.
    "test:loader": {"include", "ordo", "param_checks", "loader", "mock_api"},
    "test:unit": {"include", "ordo", "param_checks", "ordered_pool", "stream_ordered"},
    "test:ze_cpu_driver": {"include", "elf"},
    "test:hip_on_cuda": {"include"},
    "test:sycl": set(),
    "test:python": set(),
}

# Known crossings, each with why it stays: (includer's path prefix, included file).
KNOWN_EXCEPTIONS = {
    # HIP's runtime API over the CUDA driver API, a test double below the HIP adapter: it
    # implements exactly the declarations the adapter calls, and copies 2D the way the
    # CUDA adapter does.
    ("test/hip_on_cuda", "adapters/hip/hip_api.hpp"),
    ("test/hip_on_cuda", "adapters/cuda/copy_2d.hpp"),
    # The HIP adapter's test is the CUDA adapter's test source, built for HIP.
    ("adapters/hip/test", "adapters/cuda/test/cuda_adapter_test.cpp"),
}

SCANNED_ROOTS = ["include", "source", "loader", "adapters", "tools", "examples", "test"]
CODE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".inc")
INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CMAKE_SET_DIR = re.compile(r'set\((\w+)\s+\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/([^\s)"]+)\)')
# A folder named on a line: ${CMAKE_CURRENT_SOURCE_DIR}[/x], ${PROJECT_SOURCE_DIR}/x.
CMAKE_CURRENT_FOLDER = re.compile(r'\$\{CMAKE_CURRENT_SOURCE_DIR\}(?:/([^\s)"$]*))?(?=[\s)"]|$)')
CMAKE_PROJECT_FOLDER = re.compile(r'\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/([^\s)"$]*)(?=[\s)"]|$)')


def part_of(path):
    """The part of the tree a repository-relative path belongs to, or None."""
    best, best_len = None, -1
    segments = path.split("/")
    for prefix, name in PARTS:
        pattern = prefix.split("/")
        if len(pattern) > len(segments):
            continue
        bound = {}
        ok = True
        for want, have in zip(pattern, segments):
            if want == "{name}":
                bound["name"] = have
            elif want != have:
                ok = False
                break
        if ok and len(pattern) > best_len:
            # A "{name}" never matches a file: adapters/adapter.map is no adapter.
            if "name" in bound and len(segments) == pattern.index("{name}") + 1:
                continue
            best, best_len = name.format(**bound), len(pattern)
    return best


def allowed_for(part):
    if part in ALLOWED:
        return ALLOWED[part]
    kind = part.split(":")[0] + ":*"
    return ALLOWED.get(kind)


# Public headers that are a part of their own inside another part's folder: that part's.
OWNER = {"stream_backend_driver_api": "stream_backend", "mock_api": "adapter:mock"}


def may_use(includer, included):
    if included == includer or OWNER.get(included) == includer:
        return True
    allowed = allowed_for(includer)
    return allowed is not None and included in allowed


def tree_files(root):
    for top in SCANNED_ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(filenames):
                yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


class Index:
    """Every file of the tree by its path, to resolve an include spelling."""

    def __init__(self, files):
        self.files = set(files)
        self.by_name = {}
        for f in files:
            self.by_name.setdefault(os.path.basename(f), []).append(f)
        self.public_names = {os.path.basename(f) for f in files if f.startswith("include/")}

    def resolve(self, includer, spelling, quoted):
        """Files of the tree this include may name (empty: a system or generated header)."""
        if quoted:
            beside = os.path.normpath(os.path.join(os.path.dirname(includer), spelling)).replace(os.sep, "/")
            if beside in self.files:
                return [beside]
        elif "/" not in spelling and spelling not in self.public_names:
            return []  # <vector>, <dlfcn.h>, ...: the system's
        candidates = self.by_name.get(os.path.basename(spelling), [])
        return [c for c in candidates if c == spelling or c.endswith("/" + spelling)]


def check(root):
    files = list(tree_files(root))
    index = Index(files)
    problems = []
    unknown_parts = set()

    for path in files + cmake_files_outside(root):
        includer = part_of(path)
        if os.path.basename(path) == "CMakeLists.txt" or path.endswith(".cmake"):
            problems += check_cmake(root, path, includer)
            continue
        if includer is None:
            continue
        if allowed_for(includer) is None:
            unknown_parts.add(includer)
            continue
        if not path.endswith(CODE_SUFFIXES):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE_LINE.match(line)
            if not m:
                continue
            quoted, spelling = m.group(1) == '"', m.group(2)
            candidates = index.resolve(path, spelling, quoted)
            if not candidates:
                continue
            parts = {part_of(c) for c in candidates}
            if any(may_use(includer, p) for p in parts):
                continue
            if any(path.startswith(prefix) and c == target
                   for prefix, target in KNOWN_EXCEPTIONS for c in candidates):
                continue
            problems.append(f"{path}:{number}: includes {spelling} ({', '.join(sorted(candidates))}, "
                            f"part {', '.join(sorted(p or '?' for p in parts))}): "
                            f"{includer} may use {describe(includer)}")

    for part in sorted(unknown_parts):
        problems.append(f"part {part} has no row in scripts/check_layers.py's ALLOWED table: "
                        "add one (and draw it in docs/architecture.md)")
    return problems


def cmake_files_outside(root):
    """The top-level CMakeLists.txt and cmake/*.cmake: they may not widen include paths either."""
    found = ["CMakeLists.txt"] if os.path.exists(os.path.join(root, "CMakeLists.txt")) else []
    cmake_dir = os.path.join(root, "cmake")
    if os.path.isdir(cmake_dir):
        found += ["cmake/" + f for f in sorted(os.listdir(cmake_dir)) if f.endswith(".cmake")]
    return found


def check_cmake(root, path, includer):
    problems = []
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        text = f.read()
    variables = {name: value for name, value in CMAKE_SET_DIR.findall(text)}
    here = os.path.dirname(path)
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        folders = [os.path.normpath(os.path.join(here, rest or ".")).replace(os.sep, "/")
                   for rest in CMAKE_CURRENT_FOLDER.findall(line)]
        folders += [rest.rstrip("/") for rest in CMAKE_PROJECT_FOLDER.findall(line)]
        if "source" in folders:
            problems.append(f"{path}:{number}: puts source/ itself on an include path: link the "
                            "library of source/ whose headers it needs (each has its own include root)")
        for m in re.finditer(r'\$\{(\w+)\}/([^\s)"]+\.(?:c|cc|cpp|cxx|cu))\b', line):
            var, rest = m.group(1), m.group(2)
            if var in ("PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR"):
                source = rest
            elif var == "CMAKE_CURRENT_SOURCE_DIR":
                source = os.path.normpath(os.path.join(here, rest)).replace(os.sep, "/")
            elif var in variables:
                source = os.path.normpath(os.path.join(variables[var], rest)).replace(os.sep, "/")
            else:
                continue
            owner = part_of(source)
            if includer is None or owner is None or owner == includer:
                continue
            if any(path.startswith(prefix) and source == target for prefix, target in KNOWN_EXCEPTIONS):
                continue
            problems.append(f"{path}:{number}: compiles {source}, a source file of {owner}: "
                            f"link that part's library instead")
    return problems


def describe(part):
    allowed = sorted(allowed_for(part) or [])
    return ", ".join(allowed) if allowed else "nothing but itself"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--table", action="store_true", help="print who may include whom and exit")
    args = parser.parse_args()
    if args.table:
        for part in sorted(ALLOWED):
            print(f"{part:28} -> {describe(part)}")
        for prefix, target in sorted(KNOWN_EXCEPTIONS):
            print(f"known exception: {prefix} -> {target}")
        return 0
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} crossing(s) of the layers of docs/architecture.md")
        return 1
    print("check_layers: every include and CMake source reference keeps to the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
