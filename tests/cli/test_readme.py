"""The README's first commands and `.ci/run` agree and work.

The README opens with a code block of two commands for a fresh machine:
install + a first `tilec` command, then install + the test command. `.ci/run`
runs both lines verbatim (it extracts them from the README), so the two
cannot drift, and runs them inside a fresh virtual environment, the normal
way to install (issue 12: the suite once failed only in a venv, and CI, run
without one, stayed green). This checks the extraction, the venv CI makes,
and runs the first command's `tilec` part.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from tileplugin import run_tilec

REPO = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("```"), "the README must open with the commands block"
    end = lines.index("```", 1)
    return lines[1:end]


def test_readme_opens_with_install_and_test_commands() -> None:
    first, second = readme_commands()[:2]
    assert first.startswith("pip install -e . && tilec ")
    assert second.startswith("pip install -e '.[test]' && ")
    assert "pytest" in second


def _ci(commands: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `commands` in bash after sourcing `.ci/run` (its functions only)."""
    return subprocess.run(
        ["bash", "-c", f"source .ci/run\n{commands}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_ci_runs_exactly_the_readme_commands() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in script
    assert os.access(REPO / ".ci" / "run", os.X_OK)
    proc = _ci("readme_command 1; readme_test_command")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == readme_commands()[:2]
    # Both run, the first before the second, after the venv is entered.
    body = script.split('\nfirst="$(readme_command 1)"', 1)[1]
    assert body.index("enter_fresh_venv") < body.index('-c "$first"') < body.index('-c "$cmd"')
    assert '"${CI_VENV:-1}" != 0' in body


def test_ci_enters_a_fresh_venv_that_sees_nothing_else(tmp_path: Path) -> None:
    """The venv `.ci/run` runs the README's commands in is new, active, and
    its `sys.path` holds none of the outer environment's packages (they come
    from the venv's own pip): `lark` is not importable there until installed."""
    probe = ("import sys, importlib.util; print(sys.prefix != sys.base_prefix, sys.prefix, "
             "importlib.util.find_spec('lark') is None)")
    proc = _ci(f'enter_fresh_venv >/dev/null && command -v python && python -c "{probe}"',
               CI_VENV_OPTS="--without-pip", TMPDIR=str(tmp_path), PYTHONPATH=str(REPO))
    assert proc.returncode == 0, proc.stderr
    where, line = proc.stdout.splitlines()
    active, prefix, no_lark = line.split()
    assert active == "True" and no_lark == "True"
    assert prefix.startswith(str(tmp_path)) and where == f"{prefix}/bin/python"


def test_ci_counts_no_tests_as_failure() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 'exit "$status"' in script and "-eq 5" in script


def test_readme_first_tilec_command_works() -> None:
    first = readme_commands()[0]
    tilec_part = first.split("&&", 1)[1].strip()
    args = shlex.split(tilec_part)
    assert args[0] == "tilec"
    assert (REPO / args[-1]).exists(), f"the README names {args[-1]}, which does not exist"
    proc = run_tilec(*args[1:], cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
