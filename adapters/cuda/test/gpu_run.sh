#!/bin/bash
# Runs the CUDA adapter's checks and benchmarks on a GPU machine:
#   adapters/cuda/test/gpu_run.sh <out-dir>
# Builds in build-gpu when the machine can (cmake, ninja, GoogleTest, Google
# Benchmark present); otherwise uses binaries built elsewhere in build-cuda (carried
# along), whose baked-in paths name /work/main, so that path is made to point here.
set -u -o pipefail
out=${1:-.}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../../.." && pwd)
if [ "$root" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$root" /work/main; fi
cd /work/main || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

targets="ur_adapter_cuda cuda_adapter_test ordo_test_kernels_cuda ordo-bench ordo-conformance"
if [ "${ORDO_GPU_BUILD:-1}" = 1 ] &&
   timeout 60 cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORDO_BUILD_TESTS=ON \
     -DORDO_BUILD_BENCH=ON >"$out/build.txt" 2>&1 &&
   timeout 300 cmake --build build-gpu -j16 --target $targets >>"$out/build.txt" 2>&1; then
  echo "== built here in build-gpu"
else
  echo "== no build here (see build.txt: $(grep -m1 -iE 'error|could not' "$out/build.txt" | cut -c1-160)); using carried build-cuda"
fi
bin() { if [ -x "build-gpu/bin/$1" ]; then echo "/work/main/build-gpu/bin/$1"; else echo "/work/main/build-cuda/bin/$1"; fi; }
adapter=/work/main/build-cuda/lib/libur_adapter_cuda.so.0
[ -e build-gpu/lib/libur_adapter_cuda.so.0 ] && [ -x build-gpu/bin/ordo-conformance ] && adapter=/work/main/build-gpu/lib/libur_adapter_cuda.so.0
export LD_LIBRARY_PATH=/work/main/build-cuda/lib:${LD_LIBRARY_PATH:-}

echo "== adapter test: $(bin cuda_adapter_test)"
timeout 120 "$(bin cuda_adapter_test)" >"$out/adapter_test.txt" 2>&1
echo "exit $?"
grep -E "^\[ (reason|device|pool|profile|jit log|note) |FAILED|Failure|Expected|Which is|^\[  PASSED|^\[  SKIPPED \] [0-9]+ test|tests ran" "$out/adapter_test.txt" | head -60

if command -v compute-sanitizer >/dev/null; then
  echo "== adapter test under compute-sanitizer (memcheck)"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$(bin cuda_adapter_test)" \
    --gtest_filter='Gpu.*' >"$out/sanitizer.txt" 2>&1
  echo "exit $?"
  grep -E "ERROR SUMMARY|^\[  PASSED|^\[  FAILED" "$out/sanitizer.txt" | head -10
fi

# The conformance suite in two runs, each with its own log and limit: everything but
# the random programs, then urAsyncAllocRandomTest (ORDO_RANDOM_PROGRAMS, default 200).
conformance() { # <log name> <gtest filter> <seconds>
  echo "== conformance on cuda ($2): $(bin ordo-conformance), adapter $adapter"
  ONEAPI_DEVICE_SELECTOR='cuda:*' UR_ADAPTERS_FORCE_LOAD=$adapter timeout "$3" "$(bin ordo-conformance)" \
    --gtest_filter="$2" >"$out/$1.txt" 2>&1
  echo "exit $?"
  local f="$out/$1.txt"
  echo "ran $(grep -c '^\[ RUN' "$f") passed $(grep -c '^\[       OK' "$f") failed $(grep -c '^\[  FAILED  \].*ms)' "$f") skipped $(grep -c '^\[  SKIPPED \].*ms)' "$f")"
  grep -E "^\[ random   \]" "$f" | head -5
  grep -E "^\[  FAILED  \].*ms\)" "$f" | head -40
  grep -B3 -E "^\[  FAILED  \].*ms\)" "$f" | grep -E "Failure|Expected|Value of|Which is|error|replay" | head -40
}
conformance conformance '-*urAsyncAllocRandomTest*' 300
conformance conformance_random '*urAsyncAllocRandomTest*' 300

echo "== benchmarks: $(bin ordo-bench)"
# Three repetitions in random order, so neither row of a pair always runs first.
timeout 240 "$(bin ordo-bench)" --benchmark_filter=cuda --benchmark_repetitions=3 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true >"$out/bench.txt" 2>&1
echo "exit $?"
echo "== (c) again with one stream per out-of-order queue (ORDO_CUDA_OOO_STREAMS=1)"
ORDO_CUDA_OOO_STREAMS=1 timeout 60 "$(bin ordo-bench)" --benchmark_filter='cuda_c_' >"$out/bench_c_one_stream.txt" 2>&1
grep -E "^BM_|ratio" "$out/bench_c_one_stream.txt"
echo "== benchmark table"
grep -vE "^\*\*\*WARNING|^Run on|^CPU Caches|^  L[123]|^Load Average|_(mean|stddev|cv) " "$out/bench.txt" | cut -c1-200
