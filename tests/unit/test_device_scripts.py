"""The device scripts (`benchmarks/*_device.sh`, `benchmarks/device_calls/*.sh`) run only on a card, in calls
the project seldom gets: a script that does not parse, or an arm runner (`benchmarks/arms.sh`) that runs the
wrong command, costs one of them. Checked here on the CPU: every script parses (`bash -n`), and every script
that runs only through the arm runner prints, under `ARM_DRY=1`, one line a test step and arm, and runs
nothing (a `python3`, `timeout` or `nvidia-smi` on PATH that records any call)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted([*BENCH.glob("*.sh"), *(BENCH / "device_calls").glob("*.sh")])
# the scripts whose every step is `gpu_tests` or `arm` (herf also runs `tilec run` and a sweep itself)
ARMED = ("hcliff3", "hcliff5", "hcliff6", "hcliff7", "hcliff8", "hcliff9", "hcliff10", "hcliff11", "hcliff12",
         "hgemv", "hnum", "hstatic", "hstream")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def test_every_device_script_parses() -> None:
    bad = []
    for path in SCRIPTS:
        r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
        if r.returncode:
            bad.append(f"{path.relative_to(ROOT)}: {r.stderr.strip()}")
    assert not bad, "\n".join(bad)


def test_the_armed_scripts_dry_run_prints_and_runs_nothing(tmp_path: Path) -> None:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    called = tmp_path / "called"
    for name in ("python3", "timeout", "nvidia-smi"):
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{called}"\nexit 1\n')
        stub.chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}", "ARM_DRY": "1",
           "TILEC_CACHE_DIR": str(tmp_path / "cache")}
    for name in ARMED:
        script = BENCH / f"{name}_device.sh"
        assert '. "$(dirname "$0")/arms.sh"' in script.read_text(encoding="utf-8"), name
        r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env,
                           cwd=tmp_path)
        assert r.returncode == 0, (name, r.stdout, r.stderr)
        lines = r.stdout.splitlines()
        assert lines[0] == "(ARM_DRY=1: the commands are printed, not run)", (name, lines)
        steps = [x for x in lines[1:] if ": " in x and "timeout " in x]
        assert steps and all(" python3 " in x for x in steps), (name, lines)
        assert not called.exists(), (name, called.read_text())


def test_an_arm_runs_its_command_under_its_switches(tmp_path: Path) -> None:
    """`arm NAME VAR=VALUE.. -- COMMAND`: the command under the switches and ARM_TIMEOUT, its lines prefixed
    but comments and warnings, then the done line; `gpu_tests` skipped under TESTS=0."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "nvidia-smi").write_text("#!/bin/sh\necho card\n")
    (stubs / "timeout").write_text('#!/bin/sh\necho "limit $1 S=$S"\necho "# a comment"\necho "a Warning"\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    body = f'. "{BENCH / "arms.sh"}" S\nARM_TIMEOUT=7 arm one S=2 -- python3 x.py\ngpu_tests tests\n'
    script = tmp_path / "s.sh"
    script.write_text(body)
    env = {**os.environ, "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}", "S": "9", "TESTS": "0",
           "TILEC_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["card", "one limit 7 S=2"], lines
    assert lines[2].startswith("(one done at ") and len(lines) == 3, lines
