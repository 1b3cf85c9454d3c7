# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/demo and scripts/test: installs the Debian packages a build needs,
# once, when something is missing. Set ORDO_NO_APT=1 to skip (e.g. without root).
ordo_install_deps() {
  local want=(cmake g++ make python3 python3-venv libgtest-dev libgmock-dev libbenchmark-dev
              ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo clang-15 llvm-spirv-15 clang-format-14
              libze-dev libze1 libamdhip64-5)
  [ -n "${ORDO_NO_APT:-}" ] && return 0
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ordo_jobs() { nproc 2>/dev/null || echo 2; }
