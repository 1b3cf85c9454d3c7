#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A backend that is simply not installed is no warning (docs/loader.md, "Logging"):
# urinfo and ordo-demo, as a newcomer runs them, print no WARNING line when the only
# missing pieces are uninstalled backends (no libcuda.so.1 or only its stub, no AMD GPU,
# no Level Zero driver); with UR_LOG_LOADER=level:info each says so in one info line.
# A backend that is installed but broken (a HIP runtime lacking its symbols) still warns.
#
#   quiet_check.sh <urinfo> <ordo-demo> <dir of the adapters>
#
# Exit status: 0 pass, 1 fail, 77 (ctest's SKIP_RETURN_CODE) with the reason.
set -uo pipefail

urinfo=$1 demo=$2 libdir=$3
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[ -e "$libdir/libur_adapter_native_cpu.so.0" ] || skip "no native CPU adapter built in $libdir"
# A newcomer's environment: none of the log or selection settings.
run() { env -u UR_LOG_LOADER -u UR_LOG_CUDA -u UR_LOG_HIP -u UR_LOG_LEVEL_ZERO -u UR_LOG_NATIVE_CPU \
  -u UR_LOG_OPENCL -u ONEAPI_DEVICE_SELECTOR -u UR_ADAPTERS_SEARCH_PATH -u ORDO_HIP_LIBRARY "$@" 2>&1; }

# Which GPU backends are installed and broken here is no newcomer's case: leave them out.
uninstalled=()
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || uninstalled+=(cuda)
ldconfig -p 2>/dev/null | grep -q 'libze_intel_gpu\.so' || uninstalled+=(level_zero)
# libamdhip64 without an AMD GPU is "not installed" too; only a working one is left out.
[ -e /dev/kfd ] || uninstalled+=(hip)
forced=$libdir/libur_adapter_native_cpu.so.0
for b in "${uninstalled[@]}"; do
  [ -e "$libdir/libur_adapter_$b.so.0" ] && forced+=",$libdir/libur_adapter_$b.so.0"
done
echo "adapters: $forced"

check_quiet() { # check_quiet <what> <output>
  if grep -q WARNING <<<"$2"; then
    printf '%s\n' "$2"
    fail "$1 printed a WARNING line, though the only missing backends are not installed"
  fi
  echo "ok: $1: no WARNING"
}

out=$(run UR_ADAPTERS_FORCE_LOAD="$forced" "$urinfo")
grep -q '^\[native_cpu:cpu\]' <<<"$out" || { printf '%s\n' "$out"; fail "urinfo lists no native CPU device"; }
check_quiet "urinfo (uninstalled backends forced)" "$out"
check_quiet "urinfo (default adapter search)" "$(run "$urinfo")"
check_quiet "ordo-demo (uninstalled backends forced)" "$(run UR_ADAPTERS_FORCE_LOAD="$forced" "$demo")"

# With the loader's log at info, each uninstalled backend is said once, at info.
out=$(run UR_LOG_LOADER=level:info UR_ADAPTERS_FORCE_LOAD="$forced" "$urinfo")
check_quiet "urinfo with UR_LOG_LOADER=level:info" "$out"
for b in "${uninstalled[@]}"; do
  [ -e "$libdir/libur_adapter_$b.so.0" ] || continue
  n=$(grep -c "^<loader>\[INFO\]: adapter $b: no .* platform, .* is not installed: " <<<"$out")
  [ "$n" = 1 ] || { printf '%s\n' "$out"; fail "adapter $b: $n 'not installed' lines on the loader's log, expected 1"; }
  echo "ok: adapter $b: one info line on the loader's log"
done

# CUDA's stub library (the toolkit's, for linking) stands for "no driver": quiet too.
stub=$(ls /usr/local/cuda*/lib*/stubs/libcuda.so 2>/dev/null | head -1)
if [[ " ${uninstalled[*]} " == *" cuda "* && -n "$stub" && -e "$libdir/libur_adapter_cuda.so.0" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  ln -s "$stub" "$tmp/libcuda.so.1"
  out=$(run LD_LIBRARY_PATH="$tmp" UR_LOG_LOADER=level:info \
    UR_ADAPTERS_FORCE_LOAD="$libdir/libur_adapter_native_cpu.so.0,$libdir/libur_adapter_cuda.so.0" "$urinfo")
  check_quiet "urinfo with the CUDA stub library as libcuda.so.1" "$out"
  grep -q 'CUDA is not installed: cuInit returned 34 (CUDA_ERROR_STUB_LIBRARY)' <<<"$out" ||
    { printf '%s\n' "$out"; fail "the stub library is not reported as 'not installed' on the loader's log"; }
  echo "ok: the CUDA stub library: not installed, at info"
fi

# A real problem stays a warning: a "HIP runtime" that lacks every HIP symbol.
if [ -e "$libdir/libur_adapter_hip.so.0" ]; then
  out=$(run ORDO_HIP_LIBRARY=libz.so.1 \
    UR_ADAPTERS_FORCE_LOAD="$libdir/libur_adapter_native_cpu.so.0,$libdir/libur_adapter_hip.so.0" "$urinfo")
  n=$(grep -c '^<hip>\[WARNING\]: no HIP platform: libz.so.1 lacks ' <<<"$out")
  [ "$n" = 1 ] || { printf '%s\n' "$out"; fail "a broken HIP runtime gave $n warning lines, expected 1"; }
  echo "ok: a broken HIP runtime is one warning"
fi
echo "PASS"
