"""Warnings on the command line: shown by `check` and `run` (status 0),
errors under `--deny warnings` / `-D warnings` (status 1, nothing run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirunner import invoke

PROGRAM = """\
fn main() {
    let unused = 1;
    print("ran");
}
"""


@pytest.fixture
def warned(tmp_path: Path) -> Path:
    path = tmp_path / "warned.tile"
    path.write_text(PROGRAM)
    return path


def test_check_shows_warnings_and_succeeds(warned: Path) -> None:
    result = invoke("--color", "never", "check", str(warned))
    assert result.exit_code == 0
    assert "warning[W0001]: unused variable: `unused`" in result.stderr
    assert "warning: 1 warning emitted" in result.stderr


def test_deny_warnings_makes_them_errors(warned: Path) -> None:
    for args in (["check", "--deny", "warnings"], ["check", "-D", "warnings"]):
        result = invoke("--color", "never", *args, str(warned))
        assert result.exit_code == 1, result.stderr
        assert "error[W0001]: unused variable: `unused`" in result.stderr
        assert "`--deny warnings` turns this warning into an error" in result.stderr
    bad = invoke("check", "--deny", "everything", str(warned))
    assert bad.exit_code == 2


def test_run_shows_warnings_then_runs_unless_denied(warned: Path) -> None:
    result = invoke("--color", "never", "run", "--device", "cpu", str(warned))
    assert result.exit_code == 0 and result.stdout == "ran\n"
    assert "warning[W0001]" in result.stderr
    denied = invoke("run", "--device", "cpu", "-D", "warnings", str(warned))
    assert denied.exit_code == 1 and denied.stdout == ""
    assert "error[W0001]" in denied.stderr


def test_json_format_carries_the_severity(warned: Path) -> None:
    import json

    result = invoke("--error-format", "json", "check", str(warned))
    obj = json.loads(result.stderr.splitlines()[0])
    assert obj["code"] == "W0001" and obj["severity"] == "warning"
