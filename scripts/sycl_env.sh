# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/test (or by hand: `source scripts/sycl_env.sh; ordo_sycl_env build`):
# puts the DPC++ SYCL runtime and Intel's CPU OpenCL runtime, both from PyPI, into a
# virtual environment <build>/sycl-venv, for the SYCL interop tests (test/sycl, label
# "sycl") and for anyone who wants to run SYCL programs on Ordo (docs/sycl.md).
#
# Every package is pinned, dependencies included (the set pip resolves for the two
# top-level pins; intel-opencl-rt asks for tbb==2023.*, which resolves to 2023.2.0).
# The venv is made once: a stamp file holding the pins says it is complete, and a later
# call with the same pins does nothing (no network). When the install fails (PyPI out of
# reach, no python3-venv, ...) the venv is removed and <build>/sycl-venv.skip says why;
# the sycl tests then skip with that reason.
#
# It also makes three ICD folders for Debian's OpenCL ICD loader (named by
# OCL_ICD_VENDORS; /etc is never touched):
#   <venv>/opencl-vendors        Intel's CPU OpenCL runtime and PoCL (a copy of /etc's pocl.icd)
#   <venv>/opencl-vendors-pocl   PoCL only
#   <venv>/opencl-vendors-intel  Intel's CPU OpenCL runtime only
# and <venv>/ordo-env.sh, which exports LD_LIBRARY_PATH and OCL_ICD_VENDORS for a shell.

ORDO_SYCL_PINS=(
  intel-sycl-rt==2026.2.0
  intel-opencl-rt==2026.2.0
  intel-cmplr-lib-rt==2026.2.0
  intel-cmplr-lib-ur==2026.2.0
  intel-cmplr-lic-rt==2026.2.0
  umf==1.2.0
  tcmlib==1.6.0
  tbb==2023.2.0
)

# ordo_sycl_env <build-dir>: makes or reuses <build-dir>/sycl-venv; sets and exports
# ORDO_SYCL_VENV (its absolute path, set even when the install failed). Returns 0 always.
ordo_sycl_env() {
  local build=$1
  mkdir -p "$build"
  local venv
  venv="$(cd "$build" && pwd)/sycl-venv"
  export ORDO_SYCL_VENV=$venv
  local stamp=$venv/ordo-stamp want="${ORDO_SYCL_PINS[*]}"
  local log=$venv.log skipfile=$venv.skip

  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -e "$venv/lib/libsycl.so.9" ]; then
    echo "== SYCL runtime: cached in $venv"
  else
    local t0=$SECONDS
    rm -rf "$venv" "$skipfile"
    echo "== SYCL runtime: installing ${ORDO_SYCL_PINS[*]} into $venv (log: $log)"
    if ! python3 -m venv "$venv" >"$log" 2>&1; then
      echo "python3 -m venv failed (is python3-venv installed?): $(tail -n1 "$log")" >"$skipfile"
    elif ! "$venv/bin/pip" install --no-input --disable-pip-version-check --only-binary=:all: \
        --timeout 30 --retries 2 "${ORDO_SYCL_PINS[@]}" >>"$log" 2>&1; then
      local cause
      cause=$(grep -m1 -oE 'Failed to establish a new connection: [^'"'"']*|Name or service not known|Temporary failure in name resolution|Read timed out|SSLError' "$log" || true)
      echo "pip could not install the DPC++ runtime from PyPI (${cause:-see $log}): $(grep -m1 '^ERROR' "$log" || tail -n1 "$log")" >"$skipfile"
    elif [ ! -e "$venv/lib/libsycl.so.9" ] || [ ! -e "$venv/lib/libintelocl.so" ]; then
      echo "the wheels did not bring lib/libsycl.so.9 and lib/libintelocl.so" >"$skipfile"
    fi
    if [ -s "$skipfile" ]; then
      rm -rf "$venv"
      echo "== SYCL runtime: NOT installed, the sycl tests will skip: $(cat "$skipfile")"
      return 0
    fi
    echo "$want" >"$stamp"
    echo "== SYCL runtime: installed in $((SECONDS - t0)) s ($(du -sh "$venv" | cut -f1))"
  fi

  local d
  for d in opencl-vendors opencl-vendors-pocl opencl-vendors-intel; do
    rm -rf "${venv:?}/$d"
    mkdir -p "$venv/$d"
  done
  echo "$venv/lib/libintelocl.so" >"$venv/opencl-vendors/intel-cpu.icd"
  echo "$venv/lib/libintelocl.so" >"$venv/opencl-vendors-intel/intel-cpu.icd"
  if [ -e /etc/OpenCL/vendors/pocl.icd ]; then
    cp /etc/OpenCL/vendors/pocl.icd "$venv/opencl-vendors/"
    cp /etc/OpenCL/vendors/pocl.icd "$venv/opencl-vendors-pocl/"
  fi
  cat >"$venv/ordo-env.sh" <<EOF
# source me: the DPC++ runtime's libraries, and OpenCL with Intel's CPU runtime and PoCL
export ORDO_SYCL_VENV=$venv
export LD_LIBRARY_PATH=$venv/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export OCL_ICD_VENDORS=$venv/opencl-vendors
EOF
  return 0
}
