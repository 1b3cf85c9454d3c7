#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ordo-bad-input on Intel's CPU OpenCL runtime (intel-opencl-rt in the SYCL venv,
# scripts/sycl_env.sh), through Ordo's OpenCL adapter; set up as
# test/conformance/intel_cpu_opencl.sh does (that script says why LD_LIBRARY_PATH goes).
#   intel_cpu_opencl.sh <venv> <libur_adapter_opencl.so.0> <ordo-bad-input> [its arguments...]
# Exit status: the tool's; 77 (ctest's SKIP_RETURN_CODE) when the runtime is not installed.
set -uo pipefail
venv=$1 adapter=$2 tool=$3
shift 3
skip() { echo "SKIP: ordo-bad-input on Intel's CPU OpenCL: $*"; exit 77; }
[ -n "$venv" ] || skip "ORDO_SYCL_VENV is not set (scripts/test sets it; docs/sycl.md)"
if [ ! -e "$venv/lib/libintelocl.so" ]; then
  reason="no intel-opencl-rt in $venv"
  [ -s "$venv.skip" ] && reason="$(cat "$venv.skip")"
  skip "$reason"
fi
icd=$venv/opencl-vendors-intel
[ -d "$icd" ] || skip "$icd is missing (scripts/sycl_env.sh makes it)"
exec env -u LD_LIBRARY_PATH -u UR_ADAPTERS_SEARCH_PATH \
  OCL_ICD_VENDORS="$icd" ONEAPI_DEVICE_SELECTOR='opencl:*' UR_ADAPTERS_FORCE_LOAD="$adapter" \
  "$tool" "$@"
