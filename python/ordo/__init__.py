# SPDX-License-Identifier: Apache-2.0
"""Ordo's Unified Runtime adapters for the DPC++ runtime in Python (docs/python.md).

    import ordo
    ordo.activate()      # before dpctl, dpnp or anything else that loads libsycl.so.9
    import dpctl

The runtime reads its adapter list (UR_ADAPTERS_FORCE_LOAD) once, when it first looks
for devices; activate() sets it, in this process's environment, to the adapters in this
package, so every SYCL device the program sees is an Ordo device.
"""
import ctypes.util
import glob
import hashlib
import os
import sys
from pathlib import Path

__version__ = "0.12.0"

PACKAGE_DIR = Path(__file__).resolve().parent
LIB_DIR = PACKAGE_DIR / "lib"
URINFO = PACKAGE_DIR / "bin" / "urinfo"
# In the order the runtime gets them; each reports no platform without its driver.
ADAPTER_NAMES = ("native_cpu", "opencl", "level_zero", "cuda", "hip")


class ActivationError(RuntimeError):
    """activate() came too late, or the package is incomplete."""


def adapter_paths(names=None):
    """Absolute paths of this package's adapter files (those present, or those named)."""
    paths = []
    for name in names or ADAPTER_NAMES:
        path = LIB_DIR / f"libur_adapter_{name}.so.0"
        if path.exists():
            paths.append(str(path))
        elif names:
            raise ActivationError(f"ordo: no {name} adapter in {LIB_DIR}")
    return paths


def _mapped_libraries():
    """Basenames of the shared objects mapped into this process."""
    names = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) >= 6 and fields[5].startswith("/"):
                    names.add(os.path.basename(fields[5]))
    except OSError:
        pass
    return names


def runtime_state():
    """What of the DPC++ runtime this process has loaded: (libsycl loaded, UR libraries loaded)."""
    mapped = _mapped_libraries()
    sycl = any(n.startswith("libsycl.so") for n in mapped)
    ur = sorted(n for n in mapped if n.startswith(("libur_adapter_", "libOpenCL.so", "libze_loader.so")))
    return sycl, ur


def _prefixes():
    seen = []
    for prefix in (sys.prefix, sys.base_prefix, os.environ.get("CONDA_PREFIX")):
        if prefix and prefix not in seen:
            seen.append(prefix)
    return seen


def find_intel_cpu_opencl():
    """libintelocl.so of Intel's CPU OpenCL runtime installed from PyPI (intel-opencl-rt)."""
    for prefix in _prefixes():
        path = Path(prefix) / "lib" / "libintelocl.so"
        if path.exists():
            return path
    return None


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ordo"


def opencl_vendors_folder(intel_lib):
    """An ICD folder naming intel_lib and every .icd of /etc/OpenCL/vendors.

    intel-opencl-rt's own etc/OpenCL/vendors/intel-cpu.icd holds a build-machine path
    (/opt/anaconda1anaconda2anaconda3/...) that pip never rewrites, and OCL_ICD_VENDORS
    replaces /etc/OpenCL/vendors rather than adding to it; so the folder carries both.
    """
    entries = {"intel-cpu.icd": f"{intel_lib}\n"}
    for icd in sorted(glob.glob("/etc/OpenCL/vendors/*.icd")):
        try:
            entries.setdefault(os.path.basename(icd), Path(icd).read_text())
        except OSError:
            pass
    digest = hashlib.sha1(repr(sorted(entries.items())).encode()).hexdigest()[:12]
    for base in (_cache_dir(), Path(os.environ.get("TMPDIR", "/tmp")) / f"ordo-{os.getuid()}"):
        folder = base / f"opencl-vendors-{digest}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in entries.items():
                target = folder / name
                if not target.exists() or target.read_text() != text:
                    tmp = folder / f".{name}.{os.getpid()}"
                    tmp.write_text(text)
                    os.replace(tmp, target)
            return folder
        except OSError:
            continue
    return None


def environment(selector=None, adapters=None, opencl_vendors="auto", base=None):
    """The variables activate() sets, and one line per choice saying why.

    selector: ONEAPI_DEVICE_SELECTOR (e.g. "opencl:*"); None leaves it as it is.
    adapters: adapter names (ADAPTER_NAMES); None takes every one in the package.
    opencl_vendors: a folder of .icd files, "auto" (make one with Intel's CPU OpenCL
      runtime when intel-opencl-rt is installed and OCL_ICD_VENDORS is not set), or None.
    """
    base = os.environ if base is None else base
    env, notes = {}, []
    paths = adapter_paths(adapters)
    if not paths:
        raise ActivationError(f"ordo: no adapter files in {LIB_DIR}: the package is incomplete")
    env["UR_ADAPTERS_FORCE_LOAD"] = ",".join(paths)
    notes.append(f"adapters: {', '.join(os.path.basename(p) for p in paths)} from {LIB_DIR}")
    if selector is not None:
        env["ONEAPI_DEVICE_SELECTOR"] = selector
    if base.get("ONEAPI_DEVICE_SELECTOR") or selector:
        notes.append(f"devices: ONEAPI_DEVICE_SELECTOR={selector or base['ONEAPI_DEVICE_SELECTOR']}")

    if opencl_vendors == "auto":
        if base.get("OCL_ICD_VENDORS"):
            notes.append(f"OpenCL platforms: OCL_ICD_VENDORS={base['OCL_ICD_VENDORS']} (already set, kept)")
        else:
            intel = find_intel_cpu_opencl()
            folder = opencl_vendors_folder(intel) if intel else None
            if folder:
                env["OCL_ICD_VENDORS"] = str(folder)
                notes.append(f"OpenCL platforms: OCL_ICD_VENDORS={folder} (Intel's CPU OpenCL "
                             f"{intel}, plus /etc/OpenCL/vendors)")
            elif intel:
                notes.append(f"OpenCL platforms: could not write an ICD folder for {intel}; /etc/OpenCL/vendors only")
            else:
                notes.append("OpenCL platforms: /etc/OpenCL/vendors (no intel-opencl-rt in this environment)")
    elif opencl_vendors:
        env["OCL_ICD_VENDORS"] = str(opencl_vendors)
        notes.append(f"OpenCL platforms: OCL_ICD_VENDORS={opencl_vendors}")

    # Ordo's OpenCL adapter dlopens libOpenCL.so.1; with no system ICD loader, take the
    # one intel-opencl-rt installs (ORDO_OPENCL_LIBRARY, docs/opencl.md).
    if not base.get("ORDO_OPENCL_LIBRARY") and not ctypes.util.find_library("OpenCL"):
        for prefix in _prefixes():
            icd_loader = Path(prefix) / "lib" / "libOpenCL.so.1"
            if icd_loader.exists():
                env["ORDO_OPENCL_LIBRARY"] = str(icd_loader)
                notes.append(f"OpenCL ICD loader: {icd_loader} (none on the system path)")
                break
    return env, notes


_activated = None


def activate(selector=None, adapters=None, opencl_vendors="auto", verbose=False):
    """Point the DPC++ runtime of this process at Ordo's adapters. Returns the notes.

    Raises ActivationError when the runtime has already loaded adapters: it reads
    UR_ADAPTERS_FORCE_LOAD only once, so the program would silently keep the runtime's own.
    """
    global _activated
    env, notes = environment(selector, adapters, opencl_vendors)
    sycl_loaded, ur_loaded = runtime_state()
    if sycl_loaded and ur_loaded:
        if os.environ.get("UR_ADAPTERS_FORCE_LOAD") == env["UR_ADAPTERS_FORCE_LOAD"]:
            return _activated or notes  # set before the runtime started (python -m ordo run)
        raise ActivationError(
            "ordo.activate() came too late: the SYCL runtime (libsycl.so.9) has already "
            f"loaded its adapters ({', '.join(ur_loaded)}), and it reads "
            "UR_ADAPTERS_FORCE_LOAD only once. Call `import ordo; ordo.activate()` before "
            "importing dpctl or dpnp (or anything that asks for SYCL devices), or start the "
            "program with `python -m ordo run <program>`.")
    if sycl_loaded:
        notes.append("note: libsycl.so.9 is loaded but has not looked for devices yet: in time")
    os.environ.update(env)
    _activated = notes
    if verbose:
        for line in notes:
            print(f"ordo: {line}", file=sys.stderr)
    return notes
