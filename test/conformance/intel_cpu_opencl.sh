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
# Left out here: the multi-threaded stress tests and urAsyncAllocTest.ThreadsShareOnePool.
# With several threads waiting on events of one out-of-order queue, Intel's runtime
# sometimes never returns from clWaitForEvents: the waiting thread sits in the queue's
# out_of_order_command_list::WaitForIdle (task_arena execute) while the runtime's TBB
# worker waits in an out_of_order_executor_task for a task group; no Ordo lock is held.
# Seen on the 2-core machine under load, stress tests about one run in five,
# ThreadsShareOnePool once in about 180 runs (stacks in docs/opencl.md). They run on PoCL
# and native CPU. A run that still hangs that way is stopped after 240 s, reported, and
# run once more; a second hang fails the test. Arguments given to this script replace
# the filter.
filter=(--gtest_filter='-urStressTest.*:urAsyncAllocTest.ThreadsShareOnePool/*')
[ $# -gt 0 ] && filter=()
echo "conformance on Intel's CPU OpenCL: urStressTest.* and urAsyncAllocTest.ThreadsShareOnePool left out (the runtime can hang in clWaitForEvents under many waiting threads; see $0)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for attempt in 1 2; do
  env -u LD_LIBRARY_PATH -u UR_ADAPTERS_SEARCH_PATH \
    OCL_ICD_VENDORS="$icd" ONEAPI_DEVICE_SELECTOR='opencl:*' UR_ADAPTERS_FORCE_LOAD="$adapter" \
    timeout -s KILL 240 "$suite" "${filter[@]}" "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  [ "$rc" -ne 137 ] && break
  echo "HANG: attempt $attempt did not finish in 240 s, last test started: $(grep '^\[ RUN' "$out" | tail -1)"
  echo "      (Intel's runtime inside clWaitForEvents, see the comment in $0); running the suite again"
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
