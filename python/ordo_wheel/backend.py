# SPDX-License-Identifier: Apache-2.0
"""PEP 517 backend for the `ordo-ur` wheel (docs/python.md, "How the wheel is built").

No build requirements: it drives CMake and writes the wheel with the standard library.

1. Find a build tree: `-C build-dir=<dir>` (pip: `--config-settings build-dir=<dir>`) or
   ORDO_WHEEL_BUILD_DIR names one that is already built (CI packs build/); otherwise
   build-wheel/ at the repository root is configured (Release, no tests) and built.
2. `cmake --install <tree> --prefix <staging> --strip`: the project's own install rules.
3. Zip python/ordo, the loader, the adapters (not the mock one) and urinfo into
   ordo/lib and ordo/bin, plus the dist-info.
4. Tag it: py3-none (no extension module: the package loads nothing into Python) and the
   oldest manylinux policy whose symbol versions and library list every ELF file meets,
   checked with readelf the way auditwheel checks; linux_x86_64 when one does not.
"""
import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("native_cpu", "opencl", "level_zero", "cuda", "hip")

# Facts from auditwheel 6.4.2's manylinux-policy.json (x86_64): the newest GLIBC, GLIBCXX,
# CXXABI and GCC symbol versions each policy allows. Oldest first.
POLICIES = (
    ("manylinux_2_17", "2.17", "3.4.19", "1.3.7", "4.8.0"),
    ("manylinux_2_24", "2.24", "3.4.22", "1.3.10", "4.8.0"),
    ("manylinux_2_27", "2.27", "3.4.24", "1.3.11", "7.0.0"),
    ("manylinux_2_28", "2.28", "3.4.24", "1.3.11", "7.0.0"),
    ("manylinux_2_31", "2.31", "3.4.28", "1.3.12", "7.0.0"),
    ("manylinux_2_34", "2.34", "3.4.29", "1.3.13", "7.0.0"),
    ("manylinux_2_35", "2.35", "3.4.30", "1.3.13", "12.0.0"),
    ("manylinux_2_36", "2.36", "3.4.30", "1.3.13", "12.0.0"),
    ("manylinux_2_37", "2.36", "3.4.30", "1.3.13", "12.0.0"),
    ("manylinux_2_38", "2.38", "3.4.30", "1.3.13", "12.0.0"),
    ("manylinux_2_39", "2.39", "3.4.33", "1.3.15", "14.0.0"),
)
# Libraries every manylinux policy lets a wheel use from the system (the part of the list
# Ordo could need), plus the dynamic linker itself.
SYSTEM_LIBS = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
    "libgcc_s.so.1", "libstdc++.so.6", "ld-linux-x86-64.so.2",
}


def _log(msg):
    print(f"ordo_wheel: {msg}", file=sys.stderr, flush=True)


def _run(cmd):
    _log("$ " + " ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True)


def _project():
    """name and version from pyproject.toml, checked against CMakeLists.txt."""
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
        proj = tomllib.loads(text)["project"]
        name, version = proj["name"], proj["version"]
    except ImportError:  # Python < 3.11: the two plain string keys are enough
        name = re.search(r'^name\s*=\s*"([^"]+)"', text, re.M).group(1)
        version = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
    cmake = re.search(r"project\(Ordo VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if cmake and cmake.group(1) != version:
        raise RuntimeError(f"pyproject.toml says {version}, CMakeLists.txt {cmake.group(1)}")
    return name, version


def _build_tree(config_settings):
    given = (config_settings or {}).get("build-dir") or os.environ.get("ORDO_WHEEL_BUILD_DIR")
    if given:
        tree = Path(given).resolve()
        if not (tree / "CMakeCache.txt").is_file() or not (tree / "cmake_install.cmake").is_file():
            raise RuntimeError(f"{tree} is not a configured CMake build tree of Ordo")
        _log(f"packing the existing build tree {tree} (not rebuilt: build it first)")
        return tree
    tree = ROOT / "build-wheel"
    if not (tree / "CMakeCache.txt").is_file():
        _run(["cmake", "-S", ROOT, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
              "-DORDO_BUILD_TESTS=OFF", "-DORDO_BUILD_BENCH=OFF",
              "-DORDO_ADAPTERS=" + ";".join(ADAPTERS)])
    _run(["cmake", "--build", tree, "-j", str(os.cpu_count() or 2)])
    return tree


def _readelf(path, flag):
    return subprocess.run(["readelf", "-W", flag, str(path)], check=True,
                          capture_output=True, text=True).stdout


def _version_key(v):
    return tuple(int(x) for x in v.split("."))


def platform_tag(elf_files):
    """The oldest manylinux tag all files meet, and why; linux_x86_64 if none.

    elf_files: {name in the wheel: path}; the wheel's own sonames are not foreign."""
    own = {Path(name).name for name in elf_files}
    newest = {}
    for path in elf_files.values():
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf(path, "-d")))
        foreign = needed - SYSTEM_LIBS - own
        if foreign:
            return "linux_x86_64", f"{path.name} needs {sorted(foreign)}, outside every manylinux policy"
        for family, ver in re.findall(r"\b(GLIBC|GLIBCXX|CXXABI|GCC)_([0-9][0-9.]*)\b",
                                      _readelf(path, "--dyn-syms")):
            if family not in newest or _version_key(ver) > _version_key(newest[family]):
                newest[family] = ver
    limits = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")
    for policy in POLICIES:
        allowed = dict(zip(limits, policy[1:]))
        if all(_version_key(newest[f]) <= _version_key(allowed[f]) for f in newest):
            return policy[0] + "_x86_64", "newest symbol versions used: " + ", ".join(
                f"{f}_{newest[f]}" for f in limits if f in newest)
    return "linux_x86_64", f"symbol versions {newest} are newer than every known policy"


def _stage(tree, staging):
    _run(["cmake", "--install", tree, "--prefix", staging, "--strip"])
    libdir = next((staging / d for d in ("lib", "lib64") if (staging / d / "libur_loader.so.0").exists()), None)
    if libdir is None:
        raise RuntimeError(f"cmake --install put no libur_loader.so.0 under {staging}")
    files = {"ordo/lib/libur_loader.so.0": libdir / "libur_loader.so.0"}
    for name in ADAPTERS:
        soname = f"libur_adapter_{name}.so.0"
        if (libdir / soname).exists():
            files[f"ordo/lib/{soname}"] = libdir / soname
        else:
            _log(f"{soname}: not built in {tree} (its SDK was missing), not in the wheel")
    files["ordo/bin/urinfo"] = staging / "bin" / "urinfo"
    # Symlinks resolved: a wheel holds plain files, one per soname.
    return {k: v.resolve() for k, v in files.items()}


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname, data, executable=False):
        info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o100755 if executable else 0o100644) << 16  # S_IFREG: pip keeps +x only then
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append((arcname, f"sha256={digest}", str(len(data))))

    def close(self, record_name):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(self.records + [(record_name, "", "")])
        info = zipfile.ZipInfo(record_name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        self.zip.writestr(info, out.getvalue())
        self.zip.close()


def _metadata(name, version):
    readme = (ROOT / "docs" / "python.md").read_text() if (ROOT / "docs" / "python.md").exists() else ""
    return (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            "Summary: Ordo: a Unified Runtime loader and adapters for the DPC++ runtime, dpctl and dpnp\n"
            "License: Apache-2.0\nRequires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n" + readme)


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _project()
    dist_info = Path(metadata_directory) / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata(name, version))
    return dist_info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _project()
    tree = _build_tree(config_settings)
    staging = Path(tempfile.mkdtemp(prefix="ordo-wheel-stage-"))
    try:
        binaries = _stage(tree, staging)
        tag, why = platform_tag(binaries)
        _log(f"platform tag {tag}: {why}")
        dist = name.replace("-", "_")
        wheel_name = f"{dist}-{version}-py3-none-{tag}.whl"
        dist_info = f"{dist}-{version}.dist-info"
        wheel = _Wheel(Path(wheel_directory) / wheel_name)
        for py in sorted((ROOT / "python" / "ordo").glob("*.py")):
            wheel.add(f"ordo/{py.name}", py.read_bytes())
        for arcname, path in binaries.items():
            wheel.add(arcname, path.read_bytes(), executable=True)
        for lic in sorted(p for p in ROOT.iterdir() if re.match(r"(LICEN[CS]E|COPYING|NOTICE)", p.name)):
            wheel.add(f"{dist_info}/licenses/{lic.name}", lic.read_bytes())
        wheel.add(f"{dist_info}/METADATA", _metadata(name, version).encode())
        wheel.add(f"{dist_info}/WHEEL", (
            "Wheel-Version: 1.0\nGenerator: ordo_wheel (python/ordo_wheel/backend.py)\n"
            f"Root-Is-Purelib: false\nTag: py3-none-{tag}\n").encode())
        wheel.add(f"{dist_info}/entry_points.txt",
                  b"[console_scripts]\nurinfo = ordo.__main__:urinfo_main\n")
        wheel.close(f"{dist_info}/RECORD")
        _log(f"wrote {wheel_name}")
        return wheel_name
    finally:
        shutil.rmtree(staging, ignore_errors=True)
