#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest python_wheel (labels python, sycl; docs/python.md "The CI test"):
#   wheel_test.sh <source dir> <build dir> <sycl venv>
# 1. packs the wheel from the build tree CI already built (ORDO_WHEEL_BUILD_DIR: no rebuild)
#    and checks its manylinux tag with auditwheel;
# 2. installs it into the SYCL venv (scripts/sycl_env.sh) beside pinned dpctl;
# 3. urinfo from the wheel lists the same devices as the source build's; `python -m ordo
#    info` runs; ordo.activate() after the runtime found its adapters is refused;
# 4. test/python/dpctl_check.py on PoCL and Intel's CPU OpenCL, through Ordo (decides)
#    and through the runtime's own OpenCL adapter (in the log only);
# 5. a fresh venv: pip install <wheel> dpctl, then the same program through Ordo on PoCL.
# Exits 77 (a skip), saying why, when the venv or dpctl is not there.
set -uo pipefail
src=$1 build=$2 venv=$3
py=$venv/bin/python
# Pinned beside the venv's own pins (scripts/sycl_env.sh), which stay as they are (-c).
extra_pins=(dpctl==0.22.1 numpy==2.2.6 auditwheel==6.4.2 pyelftools==0.33 packaging==26.4)

skip() { echo "SKIP: $*"; exit 77; }
failures=()
fail() { echo "[FAIL] $*"; failures+=("$*"); }
# A device that must be there: Intel's CPU OpenCL always (the venv holds it), PoCL when
# installed. Through Ordo, "device not found" (77) on one of them is a failure.
expected() { [ "$1" = intel_cpu ] || [ -e /etc/OpenCL/vendors/pocl.icd ]; }
# ordo_ok <rc> <device>: did a run through Ordo pass?
ordo_ok() { [ "$1" -eq 0 ] || { [ "$1" -eq 77 ] && ! expected "$2"; }; }
ok() { echo "[ok] $*"; }

[ -x "$py" ] || skip "no SYCL venv at $venv: $(cat "$venv.skip" 2>/dev/null || echo 'scripts/sycl_env.sh makes it')"
work=$(mktemp -d "${TMPDIR:-/tmp}/ordo-wheel-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
t0=$SECONDS

# shellcheck source=/dev/null
source "$src/scripts/sycl_env.sh"
printf '%s\n' "${ORDO_SYCL_PINS[@]}" >"$work/pins.txt"
pipi() { "$1" -m pip install --no-input --disable-pip-version-check --only-binary=:all: \
  --timeout 30 --retries 2 -c "$work/pins.txt" "${@:2}"; }
if ! pipi "$py" "${extra_pins[@]}" >"$work/pip.log" 2>&1; then
  skip "pip could not install ${extra_pins[*]} into $venv: $(grep -m1 '^ERROR' "$work/pip.log" || tail -n1 "$work/pip.log")"
fi
dpctl_err=$("$py" -c "import dpctl" 2>&1) || skip "dpctl does not import: $(echo "$dpctl_err" | tail -n1)"
echo "== dpctl $("$py" -c 'import dpctl; print(dpctl.__version__)') in $venv [$((SECONDS - t0)) s]"

echo "== the wheel, packed from $build"
mkdir -p "$work/dist"
if ! ORDO_WHEEL_BUILD_DIR=$build "$py" -m pip wheel -v --no-deps --no-build-isolation \
    --disable-pip-version-check -w "$work/dist" "$src" >"$work/wheel.log" 2>&1; then
  tail -n 30 "$work/wheel.log"
  echo "[FAIL] building the wheel"; exit 1
fi
grep -E 'ordo_wheel: (platform tag|wrote)' "$work/wheel.log" | sed 's/^ *//'
wheel=$(ls "$work"/dist/ordo_ur-*.whl)
echo "$(basename "$wheel"): $(du -k "$wheel" | cut -f1) KiB"
tag=${wheel##*-py3-none-}; tag=${tag%.whl}
aw_tag=$("$py" -m auditwheel show "$wheel" 2>&1 | tr '\n' ' ' | grep -oE 'consistent with the following platform tag: "[^"]+"' | cut -d'"' -f2)
if [ "$tag" = linux_x86_64 ] || [ "$tag" = "$aw_tag" ]; then
  ok "platform tag $tag (auditwheel 6.4.2: ${aw_tag:-no manylinux tag})"
else
  fail "platform tag $tag, auditwheel 6.4.2 says ${aw_tag:-none}"
fi
"$py" -m pip install -q --no-deps --force-reinstall --disable-pip-version-check "$wheel" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; echo "[FAIL] installing the wheel"; exit 1; }

echo "== urinfo: the wheel's against the source build's (OCL_ICD_VENDORS=$venv/opencl-vendors)"
OCL_ICD_VENDORS=$venv/opencl-vendors UR_LOG_CUDA=level:error UR_LOG_HIP=level:error UR_LOG_LEVEL_ZERO=level:error \
  "$venv/bin/urinfo" >"$work/urinfo.wheel" 2>&1
OCL_ICD_VENDORS=$venv/opencl-vendors UR_LOG_CUDA=level:error UR_LOG_HIP=level:error UR_LOG_LEVEL_ZERO=level:error \
  UR_ADAPTERS_FORCE_LOAD=$(for a in native_cpu opencl level_zero cuda hip; do
    [ -e "$build/lib/libur_adapter_$a.so.0" ] && printf '%s,' "$build/lib/libur_adapter_$a.so.0"; done | sed 's/,$//') \
  "$build/bin/urinfo" >"$work/urinfo.build" 2>&1
sed 's/^/   | /' "$work/urinfo.wheel"
if diff "$work/urinfo.build" "$work/urinfo.wheel" >"$work/urinfo.diff"; then
  ok "urinfo lists the same $(wc -l <"$work/urinfo.wheel") devices as build/bin/urinfo"
else
  sed 's/^/   /' "$work/urinfo.diff"; fail "urinfo from the wheel differs from the source build's"
fi

echo "== python -m ordo info"
if "$py" -m ordo info >"$work/info" 2>&1; then
  grep -v '\[WARNING\]' "$work/info" | sed 's/^/   | /'
  if grep -q 'with ordo.activate()' "$work/info" && grep -q 'libur_adapter_opencl.so.0' "$work/info"; then
    ok "python -m ordo info"
  else
    fail "python -m ordo info: no runtime section naming Ordo's OpenCL adapter"
  fi
else
  sed 's/^/   | /' "$work/info"; fail "python -m ordo info exited non-zero"
fi

late=$("$py" - 2>&1 <<'EOF'
import dpctl
dpctl.get_devices()
import ordo
try:
    ordo.activate()
    print("activate() did not refuse")
except ordo.ActivationError as e:
    print("refused:", e)
EOF
)
echo "   | $late" | cut -c1-220
if [[ "$late" == refused:*"came too late"* ]]; then
  ok "activate() after the runtime loaded its adapters is refused"
else
  fail "late activate() was not refused"
fi

echo "== dpctl through Ordo's OpenCL adapter (decides) and the runtime's own (log only)"
declare -A summary
for device in pocl intel_cpu; do
  for mode in ordo own; do
    "$py" "$src/test/python/dpctl_check.py" "$mode" "$device" >"$work/$mode-$device" 2>&1
    rc=$?
    sed -e '/\[WARNING\]: no \(Level Zero\|CUDA\|HIP\) platform/d' -e "s/^/   | $mode $device: /" "$work/$mode-$device"
    res=$(grep -m1 '^RESULT' "$work/$mode-$device" | sed 's/^RESULT [a-z_]* [a-z_]*: //')
    case $rc in
      0) summary[$mode-$device]="passed ($res)" ;;
      77) summary[$mode-$device]="skipped: $(grep -m1 '^SKIP' "$work/$mode-$device")" ;;
      *) if [ $rc -gt 128 ]; then summary[$mode-$device]="killed by signal $((rc - 128)) after: $(grep -c '^\[ok\]' "$work/$mode-$device") ok; $(grep -m1 "what()" "$work/$mode-$device" | sed 's/^ *//')"
         else summary[$mode-$device]="failed ($res)"; fi ;;
    esac
    if [ "$mode" = ordo ] && ! ordo_ok $rc $device; then fail "dpctl through Ordo on $device: ${summary[$mode-$device]}"; fi
  done
done

"$py" -m ordo run --selector 'opencl:*' "$src/test/python/dpctl_check.py" run pocl >"$work/run-pocl" 2>&1
rc=$?
res=$(grep -m1 '^RESULT' "$work/run-pocl" || tail -n1 "$work/run-pocl")
if ordo_ok $rc pocl; then ok "python -m ordo run (no activate() in the program), PoCL: $res"
else sed 's/^/   | /' "$work/run-pocl"; fail "python -m ordo run, PoCL: $res"; fi

echo "== a fresh venv: pip install <the wheel> dpctl==0.22.1, one line in the program"
t1=$SECONDS
if python3 -m venv "$work/fresh" >"$work/fresh.log" 2>&1 && \
   pipi "$work/fresh/bin/python" "$wheel" dpctl==0.22.1 numpy==2.2.6 >>"$work/fresh.log" 2>&1; then
  "$work/fresh/bin/python" "$src/test/python/dpctl_check.py" ordo pocl >"$work/fresh-pocl" 2>&1
  rc=$?
  res=$(grep -m1 '^RESULT' "$work/fresh-pocl" || tail -n1 "$work/fresh-pocl")
  if ordo_ok $rc pocl; then ok "fresh venv, PoCL through Ordo: $res [$((SECONDS - t1)) s]"
  else sed 's/^/   | /' "$work/fresh-pocl"; fail "fresh venv, PoCL through Ordo: $res"; fi
else
  echo "   (not run: $(grep -m1 '^ERROR' "$work/fresh.log" || tail -n1 "$work/fresh.log"))"
fi
rm -rf "$work/fresh"

for device in pocl intel_cpu; do
  echo "-- dpctl on $device: through Ordo: ${summary[ordo-$device]}; through the runtime's own adapter: ${summary[own-$device]}"
done
echo "== python wheel test took $((SECONDS - t0)) s"
if [ ${#failures[@]} -ne 0 ]; then printf 'FAILED: %s\n' "${failures[@]}"; exit 1; fi
echo "passed"
