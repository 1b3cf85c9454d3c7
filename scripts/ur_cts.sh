#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs UR's own conformance suite (its 22 groups; those of kernel tests with a stand-in compiler)
# against Ordo: each group through four pairings of loader and adapter, on each backend
# present. A tool, not part of CI (docs/conformance.md, "UR's own conformance suite").
#
#   scripts/ur_cts.sh [--tarball F] [--build D] [--ordo D] [--out D] [--adapters "a b"]
#                     [--groups "g h"] [--skip-build] [--build-only] [--report-only] [--jobs N]
#
# Every option has an environment variable (UR_CTS_TARBALL, UR_CTS_BUILD, UR_CTS_ORDO_BUILD,
# UR_CTS_OUT, UR_CTS_ADAPTERS, UR_CTS_GROUPS, UR_CTS_SKIP_BUILD=1, UR_CTS_JOBS). Others:
#   UR_CTS_GTEST_SOURCE   GoogleTest source tree (default /usr/src/googletest)
#   UR_CTS_UMF_PREFIX     an installed UMF 1.2 (PyPI umf==1.2.0), needed by UR's CUDA adapter
#                         (default: <ordo build>/sycl-venv, then python3's umf package)
#   UR_CTS_OPENCL_INCLUDE OpenCL headers of 2025.07 or newer for UR's OpenCL adapter
#   UR_CTS_SYCL_VENV      the venv of scripts/sycl_env.sh (default <ordo build>/sycl-venv): Intel's
#                         CPU OpenCL runtime and the UR Level Zero adapter of the DPC++ wheel
#   UR_CTS_UR_L0_ADAPTER  UR's Level Zero adapter (default the wheel's; UR's own needs
#                         compute-runtime headers fetched from the network, so it is not built)
#   UR_CTS_TIMEOUT        seconds one run of a group binary may take (default 300)
#   UR_CTS_PARALLEL=1     run the backends side by side (one process per backend)
# Backends (--adapters): native_cpu; opencl (the system's ICDs: PoCL on the dev VM);
# opencl_intel (Intel's CPU OpenCL runtime from the venv, alone in OCL_ICD_VENDORS);
# level_zero (Ordo's CPU test driver libze_ordo_cpu.so as GPU, on the pinned loader 1.32.0);
# cuda; hip. The default is every one present.
# Nothing from UR is kept in the repository: the snapshot is unpacked under the build
# directory (default build-urcts) and UR's build is cached there.
set -u -o pipefail
# One compound command: bash parses it whole before running, so editing this file while
# a run is under way cannot change the run.
{

root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${UR_CTS_TARBALL:-$root/../shared/third_party/unified-runtime-578c2a84.tar.xz}
build=${UR_CTS_BUILD:-$root/build-urcts}
ordo=${UR_CTS_ORDO_BUILD:-$root/build}
out=${UR_CTS_OUT:-}
adapters=${UR_CTS_ADAPTERS:-auto}
groups=${UR_CTS_GROUPS:-adapter platform device context queue event memory sampler virtual_memory
  exp_usm_context_memcpy exp_usm_host_mem_register exp_graph exp_reusable_events
  usm enqueue exp_command_buffer exp_host_task exp_usm_p2p memory-migrate integration kernel
  program}
skip_build=${UR_CTS_SKIP_BUILD:-0}
build_only=0
report_only=0
jobs=${UR_CTS_JOBS:-$(nproc)}
run_timeout=${UR_CTS_TIMEOUT:-300}
gtest_src=${UR_CTS_GTEST_SOURCE:-/usr/src/googletest}
sycl_venv=${UR_CTS_SYCL_VENV:-}
ur_l0_adapter=${UR_CTS_UR_L0_ADAPTER:-}

while [ $# -gt 0 ]; do
  case $1 in
    --tarball) tarball=$2; shift ;;
    --build) build=$2; shift ;;
    --ordo) ordo=$2; shift ;;
    --out) out=$2; shift ;;
    --adapters) adapters=$2; shift ;;
    --groups) groups=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --skip-build) skip_build=1 ;;
    --build-only) build_only=1 ;;
    --report-only) report_only=1 ;; # the table from the results already in the output folder
    -h|--help) sed -n "2,/^set -u/p" "$0" | sed "\$d"; exit 0 ;;
    *) echo "ur_cts.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$build" || exit 1
build=$(cd "$build" && pwd)
ordo=$(cd "$ordo" 2>/dev/null && pwd) || { echo "ur_cts.sh: no Ordo build at $ordo" >&2; exit 1; }
out=${out:-$build/results}
mkdir -p "$out" && out=$(cd "$out" && pwd)
src=$build/src
ur=$build/ur
sycl_venv=${sycl_venv:-$ordo/sycl-venv}
ur_l0_adapter=${ur_l0_adapter:-$sycl_venv/lib/libur_adapter_level_zero.so.0}
ze_loader_dir=$ordo/_deps/level-zero-1.32.0/build/lib

say() { echo "== $*"; }

# ---------------------------------------------------------------- what this machine has
has_cuda_driver() { ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && nvidia-smi -L >/dev/null 2>&1; }
has_opencl_icd() { ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; }
find_umf() {
  local p
  for p in "${UR_CTS_UMF_PREFIX:-}" "$ordo/sycl-venv"; do
    [ -n "$p" ] && [ -f "$p/lib/cmake/umf/umf-config.cmake" ] && { echo "$p"; return; }
  done
  # PyPI's umf wheel installs under the interpreter's data prefix.
  p=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["data"])' 2>/dev/null)
  [ -n "$p" ] && [ -f "$p/lib/cmake/umf/umf-config.cmake" ] && echo "$p"
}
# UR's OpenCL adapter needs headers that define cl_khr_spirv_queries (2025.07 or newer).
find_opencl_include() {
  local d
  for d in "${UR_CTS_OPENCL_INCLUDE:-}" "$ordo/sycl-venv/include" /usr/include; do
    [ -n "$d" ] && [ -f "$d/CL/cl_ext.h" ] || continue
    if printf '#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl_ext.h>\n#ifndef cl_khr_spirv_queries\n#error old\n#endif\n' |
       ${CXX:-c++} -fsyntax-only -x c++ -I"$d" - >/dev/null 2>&1; then echo "$d"; return; fi
  done
}

umf_prefix=$(find_umf)
ocl_include=""
has_opencl_icd && ocl_include=$(find_opencl_include)
build_cuda=OFF
has_cuda_driver && command -v nvcc >/dev/null && [ -n "$umf_prefix" ] && build_cuda=ON
build_opencl=OFF
[ -n "$ocl_include" ] && build_opencl=ON

if [ "$adapters" = auto ]; then
  adapters=native_cpu
  has_opencl_icd && [ -e "$ordo/lib/libur_adapter_opencl.so.0" ] && adapters+=" opencl"
  [ -e "$sycl_venv/lib/libintelocl.so" ] && [ -d "$sycl_venv/opencl-vendors-intel" ] &&
    [ -e "$ordo/lib/libur_adapter_opencl.so.0" ] && adapters+=" opencl_intel"
  [ -e "$ordo/lib/libze_ordo_cpu.so" ] && [ -e "$ze_loader_dir/libze_loader.so.1" ] &&
    [ -e "$ordo/lib/libur_adapter_level_zero.so.0" ] && adapters+=" level_zero"
  if has_cuda_driver; then
    adapters+=" cuda"
    # Ordo's HIP adapter on an NVIDIA GPU through the HIP-on-CUDA test mapping (docs/hip.md).
    [ -e "$ordo/lib/hip_on_cuda/libamdhip64.so.5" ] && adapters+=" hip"
  fi
fi
say "adapters: $adapters; UR builds its own: native_cpu$([ $build_cuda = ON ] && echo ' cuda')$([ $build_opencl = ON ] && echo ' opencl')"

# ---------------------------------------------------------------- build UR (cached)
build_ur() {
  local stamp=$src/.ordo-unpacked-from sum
  [ -f "$tarball" ] || { echo "ur_cts.sh: no UR snapshot at $tarball" >&2; return 1; }
  sum=$(sha256sum "$tarball" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
    say "unpacking $(basename "$tarball")"
    rm -rf "$src" && mkdir -p "$src" && tar xf "$tarball" -C "$src" --strip-components=1 || return 1
    echo "$sum" >"$stamp"
  fi
  # lit and filecheck are only run by UR's lit tests, which this script does not use;
  # UR's configure refuses to start without them, so stand-ins do when none is installed.
  mkdir -p "$build/fakebin"
  local tool
  for tool in lit filecheck; do
    command -v $tool >/dev/null ||
      printf '#!/bin/sh\necho "%s: stand-in from scripts/ur_cts.sh" >&2\nexit 1\n' $tool >"$build/fakebin/$tool"
    [ -f "$build/fakebin/$tool" ] && chmod +x "$build/fakebin/$tool"
  done
  # UR builds its groups of kernel tests (usm, enqueue, kernel, program, ...) only with a
  # SYCL compiler, to make the device binaries some of their tests load. Without one, a
  # stand-in makes none: those groups build, every test that needs no kernel runs, and a
  # test that loads a binary fails at "failed opening kernel path", which the report
  # counts apart as "no kernel" (it did not run), not as a failure.
  local dpcxx=${UR_CTS_DPCXX:-}
  if [ -z "$dpcxx" ]; then
    dpcxx=$build/fakebin/dpcxx-no-kernels
    cat >"$dpcxx" <<'STANDIN'
#!/bin/sh
# Stand-in SYCL compiler from scripts/ur_cts.sh: writes an empty integration header (no
# kernel names) and no device binary.
for a in "$@"; do
  case $a in -fsycl-int-header=*) f=${a#-fsycl-int-header=}; f=$(echo "$f" | tr -d '"'); : >"$f" ;; esac
done
exit 0
STANDIN
    printf '#!/bin/sh\nexit 0\n' >"$build/fakebin/clang-offload-extract"
    chmod +x "$dpcxx" "$build/fakebin/clang-offload-extract"
  fi
  [ -d "$gtest_src" ] || { echo "ur_cts.sh: no GoogleTest source at $gtest_src" >&2; return 1; }
  local gen=() prefix=() ocl=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  [ -n "$umf_prefix" ] && prefix=(-DCMAKE_PREFIX_PATH="$umf_prefix")
  [ $build_opencl = ON ] && ocl=(-DOpenCL_INCLUDE_DIR="$ocl_include" -DUR_STATIC_ADAPTER_OPENCL=OFF)
  # The ICD loader the test binaries link (exp_command_buffer does) is the system's: the
  # venv's libOpenCL.so, on the UMF prefix path, is Intel's and needs Intel's libraries.
  local icd_loader
  icd_loader=$(ldconfig -p 2>/dev/null | awk '/libOpenCL\.so\.1 /{print $NF; exit}')
  [ $build_opencl = ON ] && [ -n "$icd_loader" ] && ocl+=(-DOpenCL_LIBRARY_CAND="$icd_loader")
  say "configuring UR in $ur (log: $out/ur_configure.txt)"
  # No build RPATH: LD_LIBRARY_PATH alone picks the loader a test binary gets.
  PATH=$build/fakebin:$PATH cmake -S "$src" -B "$ur" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DUR_BUILD_TESTS=ON -DUR_STATIC_LOADER=OFF -DUR_BUILD_EXAMPLES=OFF -DUR_ENABLE_SANITIZER=OFF \
    -DUR_DEVELOPER_MODE=OFF -DCMAKE_SKIP_BUILD_RPATH=ON -DUR_DPCXX="$dpcxx" \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_GOOGLETEST="$gtest_src" \
    -DUR_BUILD_ADAPTER_NATIVE_CPU=ON -DUR_BUILD_ADAPTER_CUDA=$build_cuda \
    -DUR_BUILD_ADAPTER_OPENCL=$build_opencl "${ocl[@]}" "${prefix[@]}" \
    >"$out/ur_configure.txt" 2>&1 || { tail -20 "$out/ur_configure.txt"; return 1; }
  local targets="ur_loader ur_adapter_native_cpu" g
  [ $build_cuda = ON ] && targets+=" ur_adapter_cuda"
  [ $build_opencl = ON ] && targets+=" ur_adapter_opencl"
  for g in $groups; do targets+=" $g-test"; done
  say "building UR: $targets (log: $out/ur_build.txt)"
  local t0=$SECONDS
  cmake --build "$ur" -j"$jobs" --target $targets >"$out/ur_build.txt" 2>&1 ||
    { grep -m10 -E "error|Error" "$out/ur_build.txt"; return 1; }
  say "UR built in $((SECONDS - t0)) s"
}
[ "$report_only" = 1 ] && skip_build=1
if [ "$skip_build" != 1 ]; then build_ur || exit 1; fi
[ "$build_only" = 1 ] && exit 0

# ---------------------------------------------------------------- running
# One line per test in <results>: group, status (ok failed skipped crashed hung), name.
# A crash or hang ends the binary; the group is run again without the tests already done.
run_group() { # <group> <results> <logdir> ; environment already set by the caller
  local g=$1 results=$2 logdir=$3
  local bin="$ur/test/conformance/$g/$g-test"
  [ -x "$bin" ] || { echo -e "$g\tmissing\t$g-test" >>"$results"; return; }
  local exclude="" attempt=0 rc log filter unfinished last
  while :; do
    log="$logdir/$g.$attempt.txt"
    filter='*'; [ -n "$exclude" ] && filter="-${exclude#:}"
    timeout -k 10 "$run_timeout" "$bin" --gtest_filter="$filter" >"$log" 2>&1
    rc=$?
    # Per-test result lines end in "(N ms)"; the summary's repeats do not.
    # A failure at loading a device binary is a test the stand-in compiler could not
    # serve (build_ur): "nokernel", not "failed".
    awk -v g="$g" '
      /^\[ RUN      \] / { run=$4; nk=0 }
      /failed opening kernel path|failed reading kernel source/ { nk=1 }
      /^\[       OK \] .*ms\)$/ { n=$4; sub(/,$/, "", n); print g "\tok\t" n; run="" }
      /^\[  FAILED  \] .*ms\)$/ { n=$4; sub(/,$/, "", n); print g "\t" (nk ? "nokernel" : "failed") "\t" n; run="" }
      /^\[  SKIPPED \] .*ms\)$/ { n=$4; sub(/,$/, "", n); print g "\tskipped\t" n; run="" }' "$log" >>"$results"
    [ $rc -eq 0 ] && break
    unfinished=$(awk '/^\[ RUN      \] /{r=$4} /^\[ *(OK|FAILED|SKIPPED) *\] .*ms\)$/{r=""} END{print r}' "$log")
    last=$(awk '/^\[ *(OK|FAILED|SKIPPED) *\] .*ms\)$/{n=$4; sub(/,$/, "", n); r=n} END{print r}' "$log")
    local done_now
    done_now=$(awk '/^\[ *(OK|FAILED|SKIPPED) *\] .*ms\)$/{n=$4; sub(/,$/, "", n); printf ":%s", n}' "$log")
    if [ -n "$unfinished" ]; then
      local how=crashed; [ $rc -eq 124 ] || [ $rc -eq 137 ] && how=hung
      # UR's fixtures go on after a missing device binary (or, on native CPU, after
      # KernelsEnvironment::LoadSource skipped for want of one) and release handles
      # they never made: that crash is the harness's, in a test that could not run.
      awk -v t="$unfinished" '$0 == "[ RUN      ] " t {on=1; next} on' "$log" |
        grep -qE 'failed opening kernel path|failed reading kernel source|source/environment\.cpp:[0-9]+: Skipped' &&
        how=nokernel
      echo -e "$g\t$how\t$unfinished\trc=$rc" >>"$results"
      exclude+="$done_now:$unfinished"
    elif grep -q '^\[==========\] .* ran\.' "$log"; then
      # Exit 1 after the summary is gtest's "some test failed"; anything else is a crash
      # after the last test (in teardown or at exit): blame the last one to finish.
      [ $rc -ne 1 ] && echo -e "$g\tcrashed\t${last:-$g}\trc=$rc, after the summary" >>"$results"
      break
    elif [ -z "$done_now" ]; then
      echo -e "$g\tcrashed\t$g (before any test)\trc=$rc" >>"$results"
      break
    else
      # Died between tests: blame the last one to finish, and go on after it.
      echo -e "$g\tcrashed\t$last\trc=$rc, after its result line" >>"$results"
      exclude+="$done_now"
    fi
    attempt=$((attempt + 1))
    [ $attempt -ge 50 ] && break
  done
}

# The UR backend of a column: opencl_intel is OpenCL on another ICD.
backend_of() { case $1 in opencl_intel) echo opencl ;; *) echo "$1" ;; esac; }

# One pairing: <adapter> <loader: ur|ordo> <adapter's source: ur|ordo>
run_pairing() {
  local a=$1 lo=$2 ad=$3 lib file ld b
  b=$(backend_of "$a")
  case $lo in ur) lib=$ur/lib ;; ordo) lib=$ordo/lib ;; esac
  case $ad in ur) file=$ur/lib/libur_adapter_$b.so.0 ;; ordo) file=$ordo/lib/libur_adapter_$b.so.0 ;; esac
  [ $a = level_zero ] && [ $ad = ur ] && file=$ur_l0_adapter
  local tag="$a.$lo-loader.$ad-adapter" results="$out/$a.$lo-loader.$ad-adapter.tsv"
  rm -f "$results"
  [ -e "$file" ] && [ -e "$lib/libur_loader.so.0" ] || { echo "absent" >"$results.absent"; return; }
  rm -f "$results.absent"
  # UR's test binaries also need UR's libur_mock and friends: every UR library but the
  # loader and the adapters, from a folder of links, so the loader stays the one chosen.
  ld=$lib:$build/ur-support
  # The pinned Level Zero loader (docs/level-zero.md): the wheel's adapter opens
  # libze_loader.so.1 by name and needs 1.19 or newer. Before the venv's lib (below),
  # which holds the DPC++ runtime's own libur_loader.so.0.
  [ $a = level_zero ] && ld+=":$ze_loader_dir"
  [ -n "$umf_prefix" ] && ld+=":$umf_prefix/lib"
  [ $a = hip ] && [ -d "$ordo/lib/hip_on_cuda" ] && ld="$ordo/lib/hip_on_cuda:$ld"
  # Backend settings, the same for all four pairings so that they see one device.
  local extra=()
  case $a in
    opencl_intel) extra=(OCL_ICD_VENDORS="$sycl_venv/opencl-vendors-intel") ;;
    # A GPU: the wheel's adapter makes platforms of GPU devices only.
    level_zero) extra=(ZE_ENABLE_ALT_DRIVERS="$ordo/lib/libze_ordo_cpu.so" ORDO_ZE_CPU_AS_GPU=1) ;;
  esac
  local logdir="$out/logs/$tag"
  mkdir -p "$logdir"
  : >"$results"
  # Which loader the binaries really get (the table is meaningless if it is the other one).
  LD_LIBRARY_PATH=$ld:${LD_LIBRARY_PATH:-} ldd "$ur/test/conformance/platform/platform-test" 2>/dev/null |
    grep -m1 libur_loader >"$logdir/loader.txt"
  echo "${extra[*]}" >"$logdir/environment.txt"
  (
    [ ${#extra[@]} -gt 0 ] && export "${extra[@]}"
    for g in $groups; do
      LD_LIBRARY_PATH=$ld:${LD_LIBRARY_PATH:-} UR_ADAPTERS_FORCE_LOAD=$file \
        ONEAPI_DEVICE_SELECTOR="$b:*" run_group "$g" "$results" "$logdir"
    done
  )
  echo "$tag: $(awk -F'\t' '{c[$2]++} END{printf "%d passed, %d failed, %d crashed, %d skipped, %d without their kernel", c["ok"], c["failed"], c["crashed"]+c["hung"], c["skipped"], c["nokernel"]}' "$results") ($(cat "$logdir/loader.txt" | awk '{print $3}'))"
}

run_adapter() {
  local a=$1
  run_pairing "$a" ur ur
  run_pairing "$a" ordo ur
  run_pairing "$a" ur ordo
  run_pairing "$a" ordo ordo
}

rm -rf "$build/ur-support" && mkdir -p "$build/ur-support"
for f in "$ur"/lib/*.so*; do
  case $(basename "$f") in libur_loader*|libur_adapter*) ;; *) ln -s "$f" "$build/ur-support/" ;; esac
done
t0=$SECONDS
if [ "$report_only" = 1 ]; then
  :
elif [ "${UR_CTS_PARALLEL:-0}" = 1 ]; then
  pids=()
  for a in $adapters; do run_adapter "$a" >"$out/progress.$a.txt" 2>&1 & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p"; done
  cat "$out"/progress.*.txt
else
  for a in $adapters; do run_adapter "$a"; done
fi
say "ran in $((SECONDS - t0)) s"

# ---------------------------------------------------------------- report
report() {
  local commit a lo ad f row
  # UR_CTS_COMMIT names the tree when it is a copy whose .git is not the one measured.
  commit=${UR_CTS_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}
  [ -n "${UR_CTS_COMMIT:-}" ] || git -C "$root" diff --quiet HEAD 2>/dev/null ||
    commit+=" (with uncommitted changes)"
  echo "UR's conformance suite (578c2a84, $(echo $groups | wc -w) groups) against Ordo $commit, $(date -u +%Y-%m-%d)"
  echo "passed / failed / crashed (skipped; not run for want of a device binary); n/a: that adapter is not built here"
  echo
  printf '| loader → adapter |'; for a in $adapters; do printf ' %s |' "$a"; done; echo
  printf '|---|'; for a in $adapters; do printf '%s' '---|'; done; echo
  for row in "ur ur" "ordo ur" "ur ordo" "ordo ordo"; do
    set -- $row; lo=$1; ad=$2
    printf '| %s → %s adapter |' "$([ $lo = ur ] && echo UR || echo Ordo)" "$([ $ad = ur ] && echo "UR's" || echo "Ordo's")"
    for a in $adapters; do
      f="$out/$a.$lo-loader.$ad-adapter.tsv"
      if [ -f "$f.absent" ] || [ ! -f "$f" ]; then printf ' n/a |'; continue; fi
      awk -F'\t' '{c[$2]++} END{n=c["crashed"]+c["hung"]; printf " %d / %d / %s (%d; %d) |", c["ok"], c["failed"], (n ? "**" n "**" : "0"), c["skipped"], c["nokernel"]}' "$f"
    done
    echo
  done
  echo
  echo "Every failure, crash and hang, by test (pairings: loader-adapter):"
  for a in $adapters; do
    for f in "$out/$a".*.tsv; do
      [ -f "$f" ] || continue
      local p; p=$(basename "$f" .tsv); p=${p#$a.}; p=${p//-loader./-}; p=${p%-adapter}
      awk -F'\t' -v a="$a" -v p="$p" '$2!="ok" && $2!="skipped" && $2!="nokernel" {print a "\t" $3 "\t" $2 "\t" p "\t" $1 "\t" $4}' "$f"
    done
  done | sort -t$'\t' -k1,1 -k2,2 -k4,4 | awk -F'\t' '
    { key=$1 " " $2; if (key != prev) { if (prev != "") print line; line="  " $1 ": " $2 " [" $5 "]: " $3 " in " $4 (($6!="") ? " (" $6 ")" : ""); prev=key }
      else line=line ", " $3 " in " $4 }
    END { if (prev != "") print line; else print "  none" }'
}
report | tee "$out/table.md"

# The first failure messages of each failing test, for reading the causes.
for f in "$out"/*.tsv; do
  [ -f "$f" ] || continue
  tag=$(basename "$f" .tsv)
  awk -F'\t' '$2=="failed" {print $1 "\t" $3}' "$f" | while IFS=$'\t' read -r g name; do
    echo "--- $tag $name"
    cat "$out/logs/$tag/$g".*.txt | awk -v n="$name" '
      $0 ~ "^\\[ RUN      \\] " && $4 == n {on=1; next}
      on && /^\[ *(OK|FAILED|SKIPPED) *\]/ {exit}
      on {print}' | grep -E "Failure|Expected|Which is|Value of|Actual|error|Error" | head -6
  done
done >"$out/failure_messages.txt"
say "table: $out/table.md; failure messages: $out/failure_messages.txt; logs: $out/logs"
exit 0
}
