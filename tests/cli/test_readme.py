"""The README's first commands and `.ci/run` agree and work.

The README opens with a code block of two commands for a fresh machine:
install + a first `tilec` command, then install + the test command. `.ci/run`
runs the second line verbatim (it extracts it from the README), so the two
cannot drift; this checks the extraction and runs the first command's
`tilec` part.
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


def test_ci_runs_exactly_the_readme_test_command() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in script
    assert os.access(REPO / ".ci" / "run", os.X_OK)
    # Source the script's extraction function without running the tests.
    body = script.split("readme_test_command() {", 1)[1].split("\n}\n", 1)[0]
    proc = subprocess.run(
        ["bash", "-c", f"readme_test_command() {{{body}\n}}\nreadme_test_command"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == readme_commands()[1]


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
