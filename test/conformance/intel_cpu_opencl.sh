#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The conformance suite on Intel's CPU OpenCL runtime (intel-opencl-rt from PyPI, in the
# venv scripts/sycl_env.sh makes), through Ordo's loader and OpenCL adapter. That device
# takes SPIR-V (the suite builds test/kernels/opencl's .spv with urProgramCreateWithIL)
# and has cl_intel_unified_shared_memory (the adapter's Intel USM path, not SVM): the two
# OpenCL paths PoCL cannot reach.
#
#   intel_cpu_opencl.sh <venv> <ordo-conformance> <libur_adapter_opencl.so.0> [gtest args...]
#
# Exit status: the suite's; 77 (ctest's SKIP_RETURN_CODE) with the reason when the
# runtime is not installed. A runtime that is installed but shows no device fails.
set -uo pipefail

venv=$1 suite=$2 adapter=$3
shift 3
skip() { echo "SKIP: conformance on Intel's CPU OpenCL: $*"; exit 77; }

if [ -z "$venv" ]; then
  skip "ORDO_SYCL_VENV is not set (scripts/test sets it; docs/sycl.md)"
fi
if [ ! -e "$venv/lib/libintelocl.so" ]; then
  reason="no intel-opencl-rt in $venv"
  [ -s "$venv.skip" ] && reason="$(cat "$venv.skip")"
  skip "$reason"
fi
icd=$venv/opencl-vendors-intel
[ -d "$icd" ] || skip "$icd is missing (scripts/sycl_env.sh makes it)"

# The venv's lib/ stays off the library path: it holds the DPC++ runtime's own
# libur_loader.so.0, which would be found before Ordo's. libintelocl.so finds its own
# dependencies through its RUNPATH ($ORIGIN).
# Every test runs, the multi-threaded stress tests included. Blocking in clWaitForEvents
# or clFinish on this runtime can hang with several threads waiting (the runtime's TBB
# arena runs a nested wait that never returns); the adapter waits there by polling the
# events' status instead (adapters/opencl/polled_waits.cpp, docs/opencl.md). Should a run
# hang anyway, it is stopped after 240 s, reported with the test it was in, and run once
# more; a second hang fails the test. Arguments given to this script are passed on.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for attempt in 1 2; do
  env -u LD_LIBRARY_PATH -u UR_ADAPTERS_SEARCH_PATH \
    OCL_ICD_VENDORS="$icd" ONEAPI_DEVICE_SELECTOR='opencl:*' UR_ADAPTERS_FORCE_LOAD="$adapter" \
    timeout -s KILL 240 "$suite" "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  [ "$rc" -ne 137 ] && break
  echo "HANG: attempt $attempt did not finish in 240 s, last test started: $(grep '^\[ RUN' "$out" | tail -1)"
  echo "      (see the comment in $0); running the suite again"
done
if grep -q '^ordo-conformance: no devices' "$out"; then
  echo "FAIL: Intel's CPU OpenCL runtime is installed in $venv but Ordo's OpenCL adapter found no device"
  exit 1
fi
if ! grep -q '^ordo-conformance: device opencl:' "$out"; then
  echo "FAIL: the suite named no OpenCL device"
  exit 1
fi
exit "$rc"
