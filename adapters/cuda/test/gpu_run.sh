#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs the CUDA and HIP adapters' checks and benchmarks on an NVIDIA GPU machine:
#   adapters/cuda/test/gpu_run.sh <out-dir>
# HIP runs through test/hip_on_cuda's libamdhip64.so.5 (HIP mapped onto CUDA).
# Builds in build-gpu. GoogleTest and Google Benchmark come from .deps/usr when the
# machine has none (a copy of Debian's packages carried along: headers, libraries,
# CMake package files). Stages: ORDO_GPU_STAGES (default "test conformance bench"),
# ORDO_GPU_ADAPTERS (default "cuda hip"), ORDO_GPU_SANITIZER=1 adds compute-sanitizer.
# Stage multi_gpu (for a machine with two or more GPUs, issue 15): how the GPUs are
# linked, the two-device conformance group, the random checker on every GPU at once
# (one process per GPU) and the peer-copy benchmark row. ORDO_GPU_BENCH_FILTER narrows the
# bench stage (a Google Benchmark filter; default: every cuda and hip row).
# Stage sycl: the SYCL interop programs (test/sycl) on cuda:* through the DPC++ runtime,
# from ORDO_SYCL_VENV (default build-gpu/sycl-venv: libsycl.so.9 is all the cuda runs
# need) and ORDO_SYCL_BIN (default build-gpu/bin).
# ORDO_GPU_PREBUILT=1 skips the build and runs what build-gpu already holds (binaries
# built elsewhere and carried along: the device machine has no GoogleTest).
set -u -o pipefail
out=${1:-.}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root" || exit 1
stages=${ORDO_GPU_STAGES:-test conformance bench}
adapters=${ORDO_GPU_ADAPTERS:-cuda hip}
has() { [[ " $1 " == *" $2 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

prefix=""
[ -d .deps/usr ] && prefix="-DCMAKE_PREFIX_PATH=$root/.deps/usr" &&
  export LD_LIBRARY_PATH=$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
targets="ur_loader ordo-conformance ordo-bench ordo_test_kernels_cuda"
for a in $adapters; do targets+=" ur_adapter_$a ${a}_adapter_test"; done
has "$adapters" hip && targets+=" ordo_hip_on_cuda ordo_test_kernels_hip"
generator=""; command -v ninja >/dev/null && generator="-G Ninja"
if [ "${ORDO_GPU_PREBUILT:-0}" = 1 ]; then
  echo "== prebuilt binaries in build-gpu"
elif ! { timeout 90 cmake -S . -B build-gpu $generator -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORDO_BUILD_TESTS=ON \
         -DORDO_BUILD_BENCH=ON $prefix >"$out/build.txt" 2>&1 &&
       timeout 400 cmake --build build-gpu -j16 --target $targets >>"$out/build.txt" 2>&1; }; then
  echo "== build failed:"; grep -m8 -E "error|Error|not found" "$out/build.txt"; exit 1
else
  echo "== built in build-gpu"
fi
bin=$root/build-gpu/bin
lib=$root/build-gpu/lib
hip_lib=$lib/hip_on_cuda # the HIP-on-CUDA libamdhip64.so.5

# <adapter> <command...>: the environment that makes HIP mean HIP on CUDA.
with() {
  local a=$1; shift
  if [ "$a" = hip ]; then LD_LIBRARY_PATH=$hip_lib:$LD_LIBRARY_PATH "$@"; else "$@"; fi
}

for a in $adapters; do
  if has "$stages" test; then
    echo "== $a adapter test"
    with $a timeout 150 "$bin/${a}_adapter_test" >"$out/${a}_adapter_test.txt" 2>&1
    echo "exit $?"
    grep -E "^\[ (reason|device|pool|note) |FAILED|Failure|Expected|Which is|^\[  PASSED|^\[  SKIPPED \] [0-9]+ test|tests ran" \
      "$out/${a}_adapter_test.txt" | head -40
    if [ "${ORDO_GPU_SANITIZER:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
      with $a timeout 150 compute-sanitizer --tool memcheck "$bin/${a}_adapter_test" --gtest_filter='Gpu.*' \
        >"$out/${a}_sanitizer.txt" 2>&1
      echo "sanitizer exit $?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' "$out/${a}_sanitizer.txt" | tr '\n' ' ')"
    fi
  fi
  if has "$stages" conformance; then
    # Everything but the random programs, then urAsyncAllocRandomTest (ORDO_RANDOM_PROGRAMS).
    # ORDO_GPU_FILTER narrows the main part (a gtest filter); ORDO_GPU_RANDOM=0 leaves out the random one.
    parts="main random"; [ "${ORDO_GPU_RANDOM:-1}" = 0 ] && parts=main
    for part in $parts; do
      filter=${ORDO_GPU_FILTER:--*urAsyncAllocRandomTest*}; [ $part = random ] && filter='*urAsyncAllocRandomTest*'
      f="$out/${a}_conformance_$part.txt"
      ONEAPI_DEVICE_SELECTOR="$a:*" UR_ADAPTERS_FORCE_LOAD=$lib/libur_adapter_$a.so.0 \
        with $a timeout 240 "$bin/ordo-conformance" --gtest_filter="$filter" >"$f" 2>&1
      echo "== $a conformance ($part): exit $? ran $(grep -c '^\[ RUN' "$f") passed $(grep -c '^\[       OK' "$f")" \
        "failed $(grep -c '^\[  FAILED  \].*ms)' "$f") skipped $(grep -c '^\[  SKIPPED \].*ms)' "$f")"
      grep -E "^\[  FAILED  \].*ms\)" "$f" | head -30
      grep -B4 -E "^\[  FAILED  \].*ms\)" "$f" | grep -E "Failure|Expected|Value of|Which is|error" | head -30
    done
  fi
done

if has "$stages" bench; then
  # ORDO_GPU_BENCH_RUNS runs of it (default 1), stopping at a crash; each run's ratios are
  # printed and kept in bench.<run>.txt, and bench.txt is the last run whole.
  for run in $(seq "${ORDO_GPU_BENCH_RUNS:-1}"); do
    echo "== benchmarks, run $run (cuda and hip rows in one process, 3 repetitions interleaved)"
    ORDO_HIP_LIBRARY=$hip_lib/libamdhip64.so.5 timeout 420 "$bin/ordo-bench" \
      --benchmark_filter="${ORDO_GPU_BENCH_FILTER:-cuda|hip}" \
      --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true >"$out/bench.txt" 2>&1
    rc=$?
    echo "exit $rc"
    grep -E "adapter:| ratio [0-9.]+$" "$out/bench.txt" | tee "$out/bench.$run.txt"
    [ $rc -ne 0 ] && break
  done
  grep -vE "^\*\*\*WARNING|^Run on|^CPU Caches|^  L[123]|^Load Average|_(mean|stddev|cv) " "$out/bench.txt" | cut -c1-160
  if [ $rc -ge 128 ]; then
    # The stack ordo-bench printed, and what it ran, to resolve it (addr2line -e <lib> <offset>).
    grep -A40 "fatal signal" "$out/bench.txt" | head -45
    tar czf "$out/crash.tar.gz" -C "$root/build-gpu" bin/ordo-bench lib/libur_adapter_cuda.so.0.12.0 \
      lib/libur_adapter_hip.so.0.12.0 lib/hip_on_cuda 2>/dev/null
  fi
fi

if has "$stages" multi_gpu; then
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  echo "== multi_gpu: $gpus GPUs; topology:"
  nvidia-smi topo -m 2>&1 | head -8
  for a in $adapters; do
    f="$out/${a}_multi_gpu.txt"
    ONEAPI_DEVICE_SELECTOR="$a:*" UR_ADAPTERS_FORCE_LOAD=$lib/libur_adapter_$a.so.0 \
      with $a timeout 120 "$bin/ordo-conformance" --gtest_filter='*urMultiGpuTest*' >"$f" 2>&1
    echo "== $a two-device group: exit $? passed $(grep -c '^\[       OK' "$f")" \
      "failed $(grep -c '^\[  FAILED  \].*ms)' "$f") skipped $(grep -c '^\[  SKIPPED \].*ms)' "$f")"
    grep -E "^\[  (FAILED|SKIPPED) \].*ms\)|Failure|Expected|Which is|skipped: " "$f" | head -20
  done
  # The random checker on every GPU at once, one process each (ORDO_RANDOM_PROGRAMS, default 500).
  echo "== random checker on $gpus GPUs at once"
  pids=()
  for i in $(seq 0 $((gpus - 1))); do
    ONEAPI_DEVICE_SELECTOR="cuda:$i" UR_ADAPTERS_FORCE_LOAD=$lib/libur_adapter_cuda.so.0 \
      ORDO_RANDOM_PROGRAMS=${ORDO_RANDOM_PROGRAMS:-500} timeout 240 "$bin/ordo-conformance" \
      --gtest_filter='*urAsyncAllocRandomTest*' >"$out/random_gpu$i.txt" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    echo "gpu $i: exit $? $(grep -E '^\[ random|^\[  PASSED|^\[  FAILED' "$out/random_gpu$i.txt" | tr '\n' ' ' | cut -c1-300)"
  done
  echo "== peer copy row (f), 3 repetitions"
  timeout 120 "$bin/ordo-bench" --benchmark_filter='cuda_f_' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true >"$out/bench_f.txt" 2>&1
  echo "exit $?"
  grep -vE "^\*\*\*WARNING|^Run on|^CPU Caches|^  L[123]|^Load Average|_(mean|stddev|cv) " "$out/bench_f.txt" | cut -c1-160
fi

if has "$stages" sycl; then
  venv=${ORDO_SYCL_VENV:-$root/build-gpu/sycl-venv}
  sycl_bin=${ORDO_SYCL_BIN:-$bin}
  mkdir -p "$venv/opencl-vendors"
  for p in "$sycl_bin"/ordo-sycl-*; do
    [ -x "$p" ] || { echo "== sycl: no programs in $sycl_bin"; break; }
    n=$(basename "$p")
    case $n in ordo-sycl-demo) continue ;; esac
    bash test/sycl/run.sh "$venv" cuda "$p" "$lib/libur_adapter_native_cpu.so.0,$lib/libur_adapter_cuda.so.0" \
      >"$out/sycl_$n.txt" 2>&1
    echo "== sycl $n on cuda: exit $? $(grep -E '^-- .* on cuda: ' "$out/sycl_$n.txt" | cut -c1-220)"
    grep -E '^ \* ' "$out/sycl_$n.txt" | head -8
  done
fi
