# SPDX-License-Identifier: Apache-2.0
"""python -m ordo info | run <program> [args...] | env   (docs/python.md)

info  the devices Ordo's loader sees (this package's urinfo), and which adapters the DPC++
      runtime of this environment loads with and without Ordo (asked of the runtime itself
      through dpctl, when dpctl is installed)
run   runs a program (a .py file with this Python, or any executable, e.g. a SYCL binary)
      with the environment activate() would set; later arguments go to the program
env   prints that environment as shell `export` lines
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import ordo

USAGE = ("usage: python -m ordo info [-v]\n"
         "       python -m ordo run [--selector SEL] [--adapters a,b] <program> [args...]\n"
         "       python -m ordo env [--selector SEL] [--adapters a,b]")

# What the runtime's log says about each adapter file with SYCL_UR_TRACE=1.
_LOADED = re.compile(r"loaded adapter 0x\S+ \(([^)]+)\)")
_PROBE = ("import dpctl\n"
          "for d in dpctl.get_devices():\n"
          "    print('device:', d.backend.name, '|', d.device_type.name, '|', d.name, '|', d.driver_version)\n")


def urinfo_main(argv=None):
    """The `urinfo` console script: this package's urinfo, on this package's adapters."""
    argv = sys.argv[1:] if argv is None else argv
    if not ordo.URINFO.exists():
        print(f"urinfo: not in this package ({ordo.URINFO})", file=sys.stderr)
        return 1
    env = dict(os.environ)
    env.setdefault("UR_ADAPTERS_FORCE_LOAD", ",".join(ordo.adapter_paths()))
    extra, _ = ordo.environment(base=env)
    for key, value in extra.items():
        env.setdefault(key, value)
    return subprocess.call([str(ordo.URINFO), *argv], env=env)


def _probe_runtime(env):
    """(devices, adapter files loaded) as the DPC++ runtime reports them, or a reason."""
    env = dict(env, SYCL_UR_TRACE="1")
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "the runtime did not answer within 120 s"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"dpctl could not list devices: {last}"
    text = out.stdout + out.stderr
    devices = [line[len("device: "):] for line in out.stdout.splitlines() if line.startswith("device: ")]
    return devices, sorted(set(_LOADED.findall(text)))


def _info(argv):
    print(f"Ordo {ordo.__version__} in {ordo.PACKAGE_DIR}")
    env, notes = ordo.environment()
    for line in notes:
        print(f"  {line}")
    print("\n== devices Ordo's loader sees (urinfo from this package)", flush=True)
    run_env = dict(os.environ, **env)
    rc = subprocess.call([str(ordo.URINFO), *argv], env=run_env)
    if rc != 0:
        print(f"urinfo exited with {rc}")

    print("\n== the DPC++ runtime in this environment", flush=True)
    try:
        import importlib.util
        has_dpctl = importlib.util.find_spec("dpctl") is not None
    except (ImportError, ValueError):
        has_dpctl = False
    if not has_dpctl:
        sycl = next((Path(p) / "lib" / "libsycl.so.9" for p in ordo._prefixes()
                     if (Path(p) / "lib" / "libsycl.so.9").exists()), None)
        print(f"  libsycl.so.9: {sycl or 'not found'}; install dpctl to ask the runtime itself")
        print("  after ordo.activate() it loads exactly: " + ", ".join(ordo.adapter_paths()))
        return 0
    own_env = {k: v for k, v in os.environ.items() if k != "UR_ADAPTERS_FORCE_LOAD"}
    for title, probe_env in (("with ordo.activate()", run_env),
                             ("without it (its own adapters, this environment unchanged)", own_env)):
        devices, loaded = _probe_runtime(probe_env)
        print(f"-- {title}")
        if devices is None:
            print(f"  {loaded}")
            continue
        forced = "UR_ADAPTERS_FORCE_LOAD" in probe_env
        print("  adapters loaded: " + (", ".join(loaded) or "none from files") +
              ("" if forced else " + its built-in OpenCL adapter (inside libsycl.so.9)"))
        for device in devices or ["(no devices)"]:
            print(f"  {device}")
    return 0


def _parse_activation_options(argv):
    selector = adapters = None
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--":
            break
        if opt in ("--selector", "--adapters") and argv:
            value = argv.pop(0)
            if opt == "--selector":
                selector = value
            else:
                adapters = [a for a in value.split(",") if a]
        else:
            raise SystemExit(f"unknown option {opt}\n{USAGE}")
    return selector, adapters, argv


def _run(argv):
    selector, adapters, argv = _parse_activation_options(list(argv))
    if not argv:
        raise SystemExit(USAGE)
    env, notes = ordo.environment(selector, adapters)
    for line in notes:
        print(f"ordo: {line}", file=sys.stderr)
    os.environ.update(env)
    program = argv[0]
    if program.endswith(".py"):
        argv = [sys.executable, *argv]
    sys.stderr.flush()
    os.execvp(argv[0], argv)


def _env(argv):
    selector, adapters, rest = _parse_activation_options(list(argv))
    if rest:
        raise SystemExit(USAGE)
    env, notes = ordo.environment(selector, adapters)
    for line in notes:
        print(f"# {line}")
    for key, value in env.items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\n" + USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "info":
        return _info(rest)
    if command == "run":
        return _run(rest)
    if command == "env":
        return _env(rest)
    print(f"unknown command {command!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
