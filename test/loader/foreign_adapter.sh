#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Ordo's loader beside a real foreign adapter: the DPC++ runtime's wheel
# (intel-cmplr-lib-ur, in the venv scripts/sycl_env.sh makes) puts Intel's Level Zero UR
# adapter, libur_adapter_level_zero.so.0, in the venv's lib/. With that folder on the
# library path and the adapter search path, and no Level Zero driver on the machine, its
# urAdapterGet fails: the loader must skip it with one warning line and go on with every
# other adapter, in urinfo and in the conformance suite (platform, device and context
# tests on every device found: native CPU, PoCL, Intel's CPU OpenCL).
#
#   foreign_adapter.sh <venv> <ordo lib dir> <urinfo> <ordo-conformance>
#
# Exit status: 0 pass, 1 fail, 77 (ctest's SKIP_RETURN_CODE) with the reason.
set -uo pipefail

venv=$1 libdir=$2 urinfo=$3 suite=$4
foreign=$venv/lib/libur_adapter_level_zero.so.0
skip() { echo "SKIP: loader beside Intel's Level Zero adapter: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -n "$venv" ] || skip "ORDO_SYCL_VENV is not set (scripts/test sets it; docs/sycl.md)"
if [ ! -e "$foreign" ]; then
  reason="no $foreign"
  [ -s "$venv.skip" ] && reason="$(cat "$venv.skip")"
  skip "$reason"
fi
# With a Level Zero driver the adapter would be used, not skipped: another test.
if ldconfig -p 2>/dev/null | grep -q 'libze_intel_gpu\.so'; then
  skip "this machine has a Level Zero driver (libze_intel_gpu.so): Intel's adapter would load"
fi

# The venv's lib/ is the library path and comes first in UR_ADAPTERS_SEARCH_PATH: Ordo
# builds a Level Zero adapter of its own under the same file name beside its loader, which
# (found first, and usable with zero platforms) would otherwise keep Intel's from being
# tried. The venv also holds the runtime's own libur_loader.so.0, which the library path
# would put before the programs' RUNPATH: Ordo's is preloaded instead.
icd=$venv/opencl-vendors
[ -d "$icd" ] || icd=/etc/OpenCL/vendors
run_env=(env -u UR_ADAPTERS_FORCE_LOAD -u ONEAPI_DEVICE_SELECTOR
         LD_PRELOAD="$libdir/libur_loader.so.0" LD_LIBRARY_PATH="$venv/lib"
         UR_ADAPTERS_SEARCH_PATH="$venv/lib" OCL_ICD_VENDORS="$icd")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The one line: the foreign adapter, found in the venv's lib/, skipped because its
# urAdapterGet failed. A skipped adapter of Ordo's own build (named by its path in
# $libdir) is not this test's business and is only shown.
check_log() {  # check_log <what> <file>
  local what=$1 file=$2 lines n
  lines=$(grep 'skipping adapter' "$file")
  echo "-- $what: the loader's skip lines:"
  echo "${lines:-  (none)}"
  n=$(grep -cF "skipping adapter $foreign: urAdapterGet failed" "$file")
  [ "$n" -eq 1 ] || fail "$what: expected one line skipping $foreign, saw $n"
  # Without a Level Zero adapter of Ordo's beside the loader, the dynamic linker's search
  # (the venv's lib/ on the library path) reaches Intel's file a second time.
  local expected=1 system
  if [ ! -e "$libdir/libur_adapter_level_zero.so.0" ]; then
    expected=2
    system=$(grep -cF "skipping adapter libur_adapter_level_zero.so.0 (system search): urAdapterGet failed" "$file")
    [ "$system" -eq 1 ] || fail "$what: expected one line skipping it in the system search, saw $system"
  fi
  n=$(grep 'skipping adapter' "$file" | grep -vc "skipping adapter $libdir/")
  [ "$n" -eq "$expected" ] || fail "$what: expected no other skipped adapter outside $libdir, saw $((n - expected))"
}

echo "== urinfo with $venv/lib on the library path"
"${run_env[@]}" "$urinfo" >"$work/urinfo.out" 2>"$work/urinfo.err"
rc=$?
cat "$work/urinfo.out" "$work/urinfo.err"
[ $rc -eq 0 ] || fail "urinfo exited with $rc"
check_log urinfo "$work/urinfo.err"
grep -q '^\[native_cpu:' "$work/urinfo.out" || fail "urinfo lists no native CPU device"
grep -q '^\[opencl:' "$work/urinfo.out" || fail "urinfo lists no OpenCL device"

echo "== conformance (platform, device, context tests) with $venv/lib on the library path"
"${run_env[@]}" "$suite" --gtest_filter='Conformance.*:*urAdapter*:*urPlatform*:*urDevice*:*urContext*' \
  >"$work/suite.out" 2>&1
rc=$?
grep -E '^ordo-conformance:|skipping adapter|^\[  (PASSED|SKIPPED|FAILED) +\] [0-9]+ test|FAILED +\]' "$work/suite.out"
[ $rc -eq 0 ] || { tail -n 40 "$work/suite.out"; fail "the conformance suite exited with $rc"; }
check_log conformance "$work/suite.out"
grep -q '^ordo-conformance: device native_cpu:' "$work/suite.out" || fail "the suite found no native CPU device"
grep -q '^ordo-conformance: device opencl:' "$work/suite.out" || fail "the suite found no OpenCL device"
echo "PASS"
