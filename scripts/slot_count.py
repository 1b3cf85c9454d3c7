#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Counts the UR functions an adapter library implements.

    scripts/slot_count.py [--list] <adapter.so> [<adapter.so> ...]

Loads each adapter, asks it for its 26 dispatch tables (urGet<Table>ProcAddrTable) and
names every slot's function from the library's symbol table (nm). A slot that holds the
generated "unsupported" stub (source/generated/unsupported.gen.cpp) is not counted;
every other slot is. Images, samplers and external-memory interop are counted apart,
as the coverage figures in docs/ leave them out. --list prints each implemented
function. Needs a library with its symbol table (not stripped).
"""
import ctypes
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE_WORDS = ("Image", "Sampler", "ExternalMemory", "ExternalSemaphore", "Interop")


def tables():
    """[(table name, [slot suffixes in order])] from include/ur_ddi.h."""
    text = (ROOT / "include" / "ur_ddi.h").read_text()
    order = re.search(r"typedef struct ur_dditable_t \{(.*?)\} ur_dditable_t;", text, re.S).group(1)
    out = []
    for ctype, name in re.findall(r"(ur_\w+_dditable_t) (\w+);", order):
        body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (ctype, ctype), text, re.S).group(1)
        out.append((name, re.findall(r"\bpfn(\w+);", body)))
    return out


def function_name(table, suffix):
    if table.endswith("Exp") and suffix.endswith("Exp"):
        table = table[:-3]
    if table == "EnqueueExp":
        table = "Enqueue"
    return "ur" + table.replace("USMExp", "USM") + suffix


def symbols(lib):
    """offset -> demangled name, from the library's symbol table."""
    out = subprocess.run(["nm", "-C", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.setdefault(int(parts[0], 16), parts[2])
    return syms


class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]


def count(lib, show):
    handle = ctypes.CDLL(str(lib), mode=ctypes.RTLD_LOCAL)
    libdl = ctypes.CDLL(None)
    libdl.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    syms = symbols(lib)
    version = (0 << 16) | 12  # UR_MAKE_VERSION(0, 12)
    implemented, stubs, images = [], 0, 0
    for table, slots in tables():
        getter = getattr(handle, "urGet%sProcAddrTable" % table)
        buf = (ctypes.c_void_p * len(slots))()
        if getter(ctypes.c_uint32(version), buf) != 0:
            continue
        for suffix, ptr in zip(slots, buf):
            name = function_name(table, suffix)
            if not ptr:
                continue
            info = DlInfo()
            libdl.dladdr(ctypes.c_void_p(ptr), ctypes.byref(info))
            sym = syms.get(ptr - info.fbase, "?")
            if "unsupported_ur" in sym:
                stubs += 1
            elif any(w in name for w in IMAGE_WORDS):
                images += 1
            else:
                implemented.append(name)
    print("%s: %d implemented (without images, samplers, external interop), %d of those kinds, %d unsupported stubs"
          % (Path(lib).name, len(implemented), images, stubs))
    if show:
        for name in sorted(implemented):
            print("  " + name)


def main():
    args = sys.argv[1:]
    show = "--list" in args
    for lib in [a for a in args if a != "--list"]:
        count(lib, show)


if __name__ == "__main__":
    main()
