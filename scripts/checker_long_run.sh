#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A long run of the randomized stream-ordered checker (urAsyncAllocRandomTest) on one
# device: PROGRAMS programs of each mode (classic, lifetimes), in chunks of 200 seeds,
# JOBS chunks at a time, each chunk in its own process (a crash names its seeds and
# does not end the run). Prints one line per mode and the seeds of every failed chunk.
#
#   scripts/checker_long_run.sh <build-dir> <device> [programs] [jobs] [log-dir]
#
# <device> is native_cpu, opencl (PoCL or what the ICD loader finds), intel_cpu (Intel's
# CPU OpenCL runtime from the venv scripts/sycl_env.sh makes), level_zero (the test
# driver, docs/level-zero.md), cuda or hip. Seeds start at ORDO_LONG_RUN_SEED (default
# 1000001, away from the seeds CI runs); with ORDO_LONG_RUN_UNTIL=<seconds> no chunk
# starts after that many seconds (the summary says how far the run got). Replay a failed seed with the command the log
# prints (docs/conformance.md, "The randomized checker").
set -uo pipefail
build=$(cd "$1" && pwd) device=$2 programs=${3:-100000} jobs=${4:-2}
logs=${5:-$build/checker-long-run/$device}
first_seed=${ORDO_LONG_RUN_SEED:-1000001}
chunk=200
mkdir -p "$logs"

adapter=$device
declare -a env_args=()
case $device in
  intel_cpu)
    adapter=opencl venv=$(sed -n 's/^ORDO_SYCL_VENV:PATH=//p' "$build/CMakeCache.txt")
    [ -e "$venv/lib/libintelocl.so" ] || { echo "no Intel CPU OpenCL runtime in '$venv'"; exit 77; }
    env_args+=(OCL_ICD_VENDORS="$venv/opencl-vendors-intel") ;;
  level_zero)
    env_args+=(ZE_ENABLE_ALT_DRIVERS="$build/lib/libze_ordo_cpu.so") ;;
esac
# The build's own libraries and kernels, also when it was copied elsewhere (a snapshot
# keeps running while the tree it came from is rebuilt).
libs=$build/lib
[ "$device" = hip ] && libs=$build/lib/hip_on_cuda:$libs
env_args+=(LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ORDO_KERNEL_DIR="$build/kernels")
env_args+=(ONEAPI_DEVICE_SELECTOR="$adapter:*"
           UR_ADAPTERS_FORCE_LOAD="$build/lib/libur_adapter_$adapter.so.0")

run_chunk() { # mode seed
  local mode=$1 seed=$2 log=$logs/$1-$2.txt
  env "${env_args[@]}" ORDO_RANDOM_MODE="$mode" ORDO_RANDOM_SEED="$seed" \
    ORDO_RANDOM_PROGRAMS=$chunk timeout -s KILL 600 "$build/bin/ordo-conformance" \
    --gtest_filter='*urAsyncAllocRandomTest*' > "$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ] && grep -q '^\[  PASSED  \] 1 test' "$log"; then
    grep -h -E '^\[ random   \]' "$log" > "$log.ok" && rm -f "$log"
  else
    echo "FAILED: $mode seeds $seed..$((seed + chunk - 1)) (exit $rc), log $log"
  fi
}

start=$SECONDS until=${ORDO_LONG_RUN_UNTIL:-0}
seed=$first_seed
while [ $((seed - first_seed)) -lt "$programs" ]; do
  [ "$until" -gt 0 ] && [ $((SECONDS - start)) -ge "$until" ] && break
  for mode in classic lifetimes; do # side by side, so a deadline cuts both alike
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_chunk "$mode" "$seed" &
  done
  seed=$((seed + chunk))
done
wait
failed=$(ls "$logs"/*.txt 2>/dev/null | grep -vc '\.ok$')
for mode in classic lifetimes; do
  n=$(cat "$logs/$mode"-*.ok 2>/dev/null | grep -c 'failed, ' || true)
  ops=$(cat "$logs/$mode"-*.ok 2>/dev/null | grep -oE '[0-9]+ operations' | awk '{s+=$1} END {print s+0}')
  echo "$device $mode: $((n * chunk)) programs in passing chunks, $ops operations"
done
echo "$device: $failed failed chunks, $((SECONDS - start)) s, logs in $logs"
[ "$failed" -eq 0 ]
