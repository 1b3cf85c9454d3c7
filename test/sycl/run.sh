#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One SYCL interop test: runs a host-only SYCL program on one device twice,
#   1. through Ordo's adapters (UR_ADAPTERS_FORCE_LOAD): this run decides pass or fail;
#   2. through the DPC++ runtime's own adapters (no FORCE_LOAD), where it has that device:
#      informational, so the difference shows in the log;
# then prints the two runs' checks side by side (a "*" marks a check that failed in
# either run; "-" is a check that run did not reach or did not have).
#
#   run.sh <venv> <device> <program> <ordo adapter files, comma-separated>
#     device: native_cpu | pocl | intel_cpu | cuda | level_zero
#     (level_zero: the driver named by ZE_ENABLE_ALT_DRIVERS, the loader folder by
#     ORDO_ZE_LOADER_DIR when set; CTest sets both)
#
# Exit status: 0 pass, 1 fail, 77 skip (ctest's SKIP_RETURN_CODE; the reason is printed).
# The Ordo run fails when the program fails, when the runtime prints "adapter
# initialization failed", or when it did not load every adapter file it was given.
set -uo pipefail

venv=$1 device=$2 program=$3 adapters=$4
name=$(basename "$program")
SKIP=77
skip() { echo "SKIP: $name on $device: $*"; exit $SKIP; }

if [ ! -e "$venv/lib/libsycl.so.9" ]; then
  reason="no DPC++ runtime in $venv"
  [ -s "$venv.skip" ] && reason="$(cat "$venv.skip")"
  skip "$reason"
fi
[ -x "$program" ] || skip "$program was not built (configure with -DORDO_SYCL_VENV=$venv once the venv exists)"

IFS=, read -r -a files <<<"$adapters"
for f in "${files[@]}"; do
  [ -e "$f" ] || skip "Ordo adapter $f is not built"
done

case $device in
  native_cpu)
    selector='native_cpu:*' icd=$venv/opencl-vendors platform=''
    ;;
  pocl)
    [ -e /etc/OpenCL/vendors/pocl.icd ] || skip "PoCL is not installed (/etc/OpenCL/vendors/pocl.icd)"
    selector='opencl:*' icd=$venv/opencl-vendors-pocl platform='Portable Computing Language'
    ;;
  intel_cpu)
    [ -e "$venv/lib/libintelocl.so" ] || skip "Intel's CPU OpenCL runtime is not in $venv"
    selector='opencl:*' icd=$venv/opencl-vendors-intel platform='Intel(R) OpenCL'
    ;;
  cuda)
    ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || skip "no CUDA driver on this machine (libcuda.so.1)"
    selector='cuda:*' icd=$venv/opencl-vendors platform=''
    ;;
  level_zero)
    [ -n "${ZE_ENABLE_ALT_DRIVERS:-}" ] || skip "no Level Zero test driver named (ZE_ENABLE_ALT_DRIVERS)"
    selector='level_zero:*' icd=$venv/opencl-vendors platform=''
    ;;
  *) echo "run.sh: unknown device '$device'"; exit 2 ;;
esac
[ -d "$icd" ] || skip "$icd is missing (scripts/sycl_env.sh makes it)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Only the venv's libraries on the library path: the runtime then finds no adapter of
# Ordo's by itself (and Ordo's OpenCL adapter and the runtime use the venv's ICD loader).
common=(env -u UR_ADAPTERS_FORCE_LOAD -u SYCL_DEVICE_FILTER -u UR_ENABLE_LAYERS
        LD_LIBRARY_PATH="$venv/lib${ORDO_ZE_LOADER_DIR:+:$ORDO_ZE_LOADER_DIR}" OCL_ICD_VENDORS="$icd"
        ONEAPI_DEVICE_SELECTOR="$selector" ORDO_SYCL_PLATFORM="$platform" SYCL_UR_TRACE=1)

echo "== $name on $device"
echo "-- through Ordo: UR_ADAPTERS_FORCE_LOAD=$adapters ONEAPI_DEVICE_SELECTOR=$selector OCL_ICD_VENDORS=$icd"
t0=$(date +%s.%N)
"${common[@]}" UR_ADAPTERS_FORCE_LOAD="$adapters" timeout 120 "$program" >"$work/ordo" 2>&1
ordo_rc=$?
t1=$(date +%s.%N)
sed 's/^/   | /' "$work/ordo"

echo "-- through the runtime's own adapters (informational): ONEAPI_DEVICE_SELECTOR=$selector OCL_ICD_VENDORS=$icd"
"${common[@]}" timeout 120 "$program" >"$work/own" 2>&1
own_rc=$?
t2=$(date +%s.%N)
sed 's/^/   | /' "$work/own"

# Side by side: every check name of either run, in order of first appearance.
echo "-- side by side"
awk -v W=78 '
  # [ok] name | [FAIL] name -- detail | [skip] name -- why | [info] name = value
  function sep(line) { return line ~ /^\[info\]/ ? " = " : " -- " }
  function key(line,   k, i) {
    k = substr(line, 8); i = index(k, sep(line))
    return i ? substr(k, 1, i - 1) : k
  }
  function val(line,   v, i) {
    if (line ~ /^\[ok\]/) return "ok"
    v = substr(line, 8); i = index(v, sep(line)); v = i ? substr(v, i + length(sep(line))) : ""
    if (line ~ /^\[info\]/) return v
    return (line ~ /^\[FAIL\]/ ? "FAIL " : "skip ") v
  }
  FNR == 1 { run++ }
  /^\[(ok|FAIL|info|skip)\]/ {
    k = key($0); seen[run, k]++; k = k "#" seen[run, k]
    if (!(k in order)) { order[k] = ++n; names[n] = k }
    result[run, k] = val($0)
  }
  function cut(s, w) { return length(s) > w ? substr(s, 1, w - 3) "..." : s }
  END {
    printf "   %-" W "s  %-34s  %s\n", "check", "Ordo", "runtime'"'"'s own adapters"
    for (i = 1; i <= n; i++) {
      k = names[i]; shown = k; sub(/#[0-9]+$/, "", shown)
      a = ((1, k) in result) ? result[1, k] : "-"
      b = ((2, k) in result) ? result[2, k] : "-"
      mark = (a ~ /^FAIL/ || b ~ /^FAIL/) ? "*" : " "
      printf " %s %-" W "s  %-34s  %s\n", mark, cut(shown, W), cut(a, 34), cut(b, 40)
    }
  }' "$work/ordo" "$work/own"

summary() {  # summary <file> <rc>
  local ok fail
  ok=$(grep -c '^\[ok\]' "$1") fail=$(grep -c '^\[FAIL\]' "$1")
  case $2 in
    0) echo "pass ($ok ok)" ;;
    77) echo "no such device" ;;
    124) echo "TIMED OUT after 120 s ($ok ok, $fail failed before)" ;;
    1) echo "$fail FAILED, $ok ok" ;;
    *) echo "CRASHED with status $2 ($ok ok, $fail failed before)" ;;
  esac
}

verdict=0
why=()
if [ $ordo_rc -eq 77 ]; then
  why+=("Ordo's adapters show no $device device")
elif [ $ordo_rc -ne 0 ]; then
  why+=("the program failed through Ordo: $(summary "$work/ordo" $ordo_rc)")
fi
if grep -q 'adapter initialization failed' "$work/ordo"; then
  why+=("the runtime printed: $(grep -m1 'adapter initialization failed' "$work/ordo")")
fi
for f in "${files[@]}"; do
  grep -qF "loaded adapter" "$work/ordo" && grep -F "loaded adapter" "$work/ordo" | grep -qF "($f)" ||
    why+=("the runtime did not load $f")
done
[ ${#why[@]} -gt 0 ] && verdict=1

printf -- '-- %s on %s: through Ordo: %s [%.1f s]; through the runtime'"'"'s own adapters: %s [%.1f s]\n' \
  "$name" "$device" "$(summary "$work/ordo" $ordo_rc)" "$(awk "BEGIN{print $t1 - $t0}")" \
  "$(summary "$work/own" $own_rc)" "$(awk "BEGIN{print $t2 - $t1}")"
if [ $verdict -ne 0 ]; then
  for w in "${why[@]}"; do echo "FAIL: $w"; done
  exit 1
fi
echo "PASS"
