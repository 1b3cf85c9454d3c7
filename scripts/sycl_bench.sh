#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a SYCL command costs through Ordo's adapters beside the DPC++ runtime's own, on
# one device (issue 11, "OpenCL under a SYCL runtime"; docs/performance.md):
#   scripts/sycl_bench.sh [build-dir] [device] [runs]     device: intel_cpu (default), pocl, native_cpu
# Runs build/bin/ordo-sycl-bench through each side in turn (Ordo, own, Ordo, own, ...),
# `runs` times each (default 3), and prints per workload the median of each side's run
# medians and Ordo ÷ own. Needs the build's SYCL venv (scripts/sycl_env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} device=${2:-intel_cpu} runs=${3:-3}
venv=$build/sycl-venv
program=$build/bin/ordo-sycl-bench
[ -x "$program" ] || { echo "no $program: configure $build with -DORDO_SYCL_VENV=$venv and build ordo-sycl-bench"; exit 1; }
adapters="$build/lib/libur_adapter_native_cpu.so.0,$build/lib/libur_adapter_opencl.so.0"
case $device in
  native_cpu) selector='native_cpu:*' icd=$venv/opencl-vendors platform='' ;;
  pocl) selector='opencl:*' icd=$venv/opencl-vendors-pocl platform='Portable Computing Language' ;;
  intel_cpu) selector='opencl:*' icd=$venv/opencl-vendors-intel platform='Intel(R) OpenCL' ;;
  *) echo "unknown device $device"; exit 2 ;;
esac
common=(env -u UR_ADAPTERS_FORCE_LOAD -u UR_ENABLE_LAYERS LD_LIBRARY_PATH="$venv/lib" OCL_ICD_VENDORS="$icd"
        ONEAPI_DEVICE_SELECTOR="$selector" ORDO_SYCL_PLATFORM="$platform")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$runs"); do
  "${common[@]}" UR_ADAPTERS_FORCE_LOAD="$adapters" timeout 300 "$program" >"$out/ordo.$i" 2>&1 || true
  "${common[@]}" timeout 300 "$program" >"$out/own.$i" 2>&1 || true
done
echo "ordo-sycl-bench on $device, $runs runs per side interleaved (ns per operation, median of run medians)"
python3 - "$out" "$runs" <<'EOF'
import re, sys, statistics
out, runs = sys.argv[1], int(sys.argv[2])
def read(side):
    rows = {}
    for i in range(1, runs + 1):
        for line in open(f"{out}/{side}.{i}"):
            m = re.match(r"\[info\] (\w+_ns) = ([0-9.e+]+)", line)
            if m: rows.setdefault(m.group(1), []).append(float(m.group(2)))
            m = re.match(r"\[skip\] (\w+_ns) -- (.*)", line)
            if m: rows.setdefault(m.group(1), m.group(2))
    return rows
ordo, own = read("ordo"), read("own")
for name in ordo.keys() | own.keys():
    a, b = ordo.get(name), own.get(name)
    fa = f"{statistics.median(a):10.0f}" if isinstance(a, list) else f"{'-':>10}"
    fb = f"{statistics.median(b):10.0f}" if isinstance(b, list) else f"{'-':>10}"
    ratio = f"{statistics.median(a) / statistics.median(b):.2f}" if isinstance(a, list) and isinstance(b, list) else "-"
    note = b if isinstance(b, str) else (a if isinstance(a, str) else "")
    print(f"  {name:28s} ordo {fa}  own {fb}  ratio {ratio}  {note}")
EOF
