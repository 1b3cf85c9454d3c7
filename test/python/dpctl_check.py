# SPDX-License-Identifier: Apache-2.0
"""A dpctl program on one OpenCL device, through Ordo's adapters or the runtime's own.

    python dpctl_check.py ordo <pocl|intel_cpu>    import ordo; ordo.activate() first
    python dpctl_check.py own  <pocl|intel_cpu>    the runtime's built-in OpenCL adapter
    python -m ordo run dpctl_check.py run <device>  Ordo, set up by `python -m ordo run` alone

Prints one line per check ([ok], [FAIL] name -- why, [info] name = value) and a last line
`RESULT <mode> <device>: <n> ok, <m> failed`; exits 1 when a check failed, 77 when the
device is not there. Both modes see the same OpenCL platforms: the own run takes only
OCL_ICD_VENDORS from ordo.environment(), not the adapter list (docs/python.md).
"""
import os
import sys

MODE, DEVICE = sys.argv[1], sys.argv[2]
PLATFORM = {"pocl": "Portable Computing Language", "intel_cpu": "Intel(R) OpenCL"}[DEVICE]

import ordo  # noqa: E402  (loads nothing of the runtime)

if MODE == "ordo":
    for line in ordo.activate(selector="opencl:*"):
        print(f"[info] ordo: {line}")
elif MODE == "own":
    env, _ = ordo.environment()
    if "OCL_ICD_VENDORS" in env:
        os.environ["OCL_ICD_VENDORS"] = env["OCL_ICD_VENDORS"]
    # No ONEAPI_DEVICE_SELECTOR here: with its built-in OpenCL adapter, dpctl 0.22.1 on
    # this runtime lists no device at all under "opencl:*" (seen 2026-11-28); the device
    # is picked by platform name below in both modes.

import dpctl  # noqa: E402
import dpctl.memory as dpmem  # noqa: E402

passed = failed = 0


def check(name, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"[ok] {name}", flush=True)
    else:
        failed += 1
        print(f"[FAIL] {name} -- {why}", flush=True)


def attempt(name, fn):
    """fn() or None, a failed check when it raises."""
    try:
        return fn()
    except Exception as exc:  # the runtime's errors come as several exception types
        check(name, False, f"{type(exc).__name__}: {exc}")
        return None


def finish(code=None):
    print(f"RESULT {MODE} {DEVICE}: {passed} ok, {failed} failed", flush=True)
    sys.exit(code if code is not None else (1 if failed else 0))


devices = [d for d in dpctl.get_devices() if PLATFORM in d.sycl_platform.name]
if not devices:
    print(f"SKIP: no {DEVICE} device ({PLATFORM}) among {[d.sycl_platform.name for d in dpctl.get_devices()]}")
    finish(77)
device = devices[0]
print(f"[info] device = {device.name} | platform {device.sycl_platform.name} | driver {device.driver_version}")

# Which adapter file answers: Ordo's must be mapped in the Ordo run and not in the own run.
ordo_opencl = str(ordo.LIB_DIR / "libur_adapter_opencl.so.0")
mapped = {line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith(".so.0") or ".so." in line}
uses_ordo = any(os.path.realpath(p) == os.path.realpath(ordo_opencl) for p in mapped if p.startswith("/"))
check("adapter is " + ("Ordo's" if MODE != "own" else "the runtime's own"),
      uses_ordo == (MODE != "own"), f"Ordo's OpenCL adapter mapped: {uses_ordo}")

queue = attempt("SyclQueue", lambda: dpctl.SyclQueue(device))
if queue is None:
    finish()
check("SyclQueue", queue.sycl_device == device)
for aspect in ("usm_device_allocations", "usm_host_allocations", "usm_shared_allocations"):
    print(f"[info] {aspect} = {getattr(device, 'has_aspect_' + aspect)}")
# dpctl 0.22.1 has no binding for sycl_ext_oneapi_async_memory_alloc (no aspect, no
# async_malloc): the extension is checked in C++ by test/sycl (ordo-sycl-async-alloc).
print(f"[info] async-alloc extension in dpctl = {hasattr(device, 'has_aspect_ext_oneapi_async_memory_alloc')}")

N = 1 << 16
pattern = bytes((i * 7 + 3) & 0xFF for i in range(N))
kinds = (("device", dpmem.MemoryUSMDevice), ("shared", dpmem.MemoryUSMShared), ("host", dpmem.MemoryUSMHost))
blocks = {}
for kind, cls in kinds:
    block = attempt(f"alloc {kind}", lambda cls=cls: cls(N, queue=queue))
    if block is None:
        continue
    check(f"alloc {kind}", block.get_usm_type() == kind, f"usm type {block.get_usm_type()}")
    blocks[kind] = block

for kind, block in blocks.items():
    def roundtrip(block=block):
        block.copy_from_host(pattern)
        return bytes(block.copy_to_host())
    got = attempt(f"host -> {kind} -> host", roundtrip)
    if got is not None:
        check(f"host -> {kind} -> host", got == pattern, "bytes differ")

# queue.memcpy between every pair of USM kinds, each from a fresh pattern.
for src_kind, src in blocks.items():
    for dst_kind, dst in blocks.items():
        if src is dst:
            continue
        data = bytes((b + len(src_kind) * 11 + len(dst_kind)) & 0xFF for b in pattern)
        def copy(src=src, dst=dst, data=data):
            src.copy_from_host(data)
            dst.copy_from_host(bytes(N))
            queue.memcpy(dst, src, N)
            return bytes(dst.copy_to_host())
        got = attempt(f"memcpy {src_kind} -> {dst_kind}", copy)
        if got is not None:
            check(f"memcpy {src_kind} -> {dst_kind}", got == data, "bytes differ")

# Host and shared memory are read and written by the host in place (buffer protocol).
for kind in ("shared", "host"):
    if kind in blocks:
        def in_place(block=blocks[kind]):
            view = memoryview(block).cast("B")
            view[:4] = b"ordo"
            return bytes(block.copy_to_host()[:4])
        got = attempt(f"{kind} in place", in_place)
        if got is not None:
            check(f"{kind} in place", got == b"ordo", f"read back {got!r}")

if "device" in blocks and "shared" in blocks:
    def async_copy():
        blocks["shared"].copy_from_host(pattern)
        event = queue.memcpy_async(blocks["device"], blocks["shared"], N)
        event.wait()
        return bytes(blocks["device"].copy_to_host())
    got = attempt("memcpy_async shared -> device", async_copy)
    if got is not None:
        check("memcpy_async shared -> device", got == pattern, "bytes differ")

del blocks
queue.wait()
finish()
