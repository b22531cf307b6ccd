"""Internal compiler errors: a short report, the whole trace in a file, and
status 101 even when stderr is a pipe whose reader went away.

A RecursionError's trace used to be printed whole (~3,000 lines), and with
stderr piped into `head` the status became 1 instead of 101.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilelang import cli, driver

REPO = Path(__file__).resolve().parents[2]


def _deep(value, ctx):  # type: ignore[no-untyped-def]
    def down(n: int) -> int:
        return down(n + 1) + 1

    return down(0)


def test_a_recursion_error_gives_a_short_report_and_a_trace_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TILEC_ICE_DIR", str(tmp_path / "ice"))
    monkeypatch.setitem(driver.STAGES, "ast", driver.Stage("ast", _deep, None, "parse"))
    src = tmp_path / "x.tile"
    src.write_text("fn main() {}\n")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check", str(src)])
    assert exit_info.value.code == 101
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0].startswith("error: internal compiler error: ")
    assert "RecursionError" in err and "please report" in err
    assert len(lines) < 40, err
    (trace,) = (tmp_path / "ice").glob("tilec-ice-*.txt")
    assert f"the full trace is in {trace}" in err
    assert "RecursionError" in trace.read_text() and "in down" in trace.read_text()


SCRIPT = """
import sys
from tilelang import cli, driver

def boom(value, ctx):
    def down(n):
        return down(n + 1) + 1
    return down(0)

driver.STAGES["ast"] = driver.Stage("ast", boom, None, "parse")
cli.main(["check", sys.argv[1]])
"""


def test_status_is_101_when_stderr_is_closed_early(tmp_path: Path) -> None:
    src = tmp_path / "x.tile"
    src.write_text("fn main() {}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TILEC_ICE_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(src)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    proc.stderr.close()  # like `2>&1 | head -1` exiting
    assert proc.wait(timeout=120) == 101
    assert first.startswith(b"error: internal compiler error")


@pytest.mark.parametrize("command", [["check"], ["emit", "--stage", "ast"], ["run", "--device", "cpu"]])
def test_an_ice_under_error_format_json_is_one_json_object(
        command: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`--error-format json` holds for an internal error too (it was the one
    human-only report left, the review of 2026-12-04): one object on one line,
    a diagnostic's fields, where to report it, the innermost frames as records
    (a RecursionError's thousands cut to `JSON_FRAMES`) and the trace file."""
    import json

    from tilelang.diagnostics import ice, render

    monkeypatch.setenv("TILEC_ICE_DIR", str(tmp_path / "ice"))
    monkeypatch.setitem(driver.STAGES, "ast", driver.Stage("ast", _deep, None, "parse"))
    src = tmp_path / "x.tile"
    src.write_text("fn main() {}\n")
    try:
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["--error-format", "json", *command, str(src)])
    finally:
        render.configure(format="human")
    assert exit_info.value.code == 101
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    obj = json.loads(lines[0])
    assert obj["severity"] == "error" and obj["internal"] is True and obj["code"] == ""
    assert obj["message"].startswith("internal compiler error: ") and "RecursionError" in obj["message"]
    assert "please report" in obj["report"] and obj["labels"] == [] and obj["version"]
    assert 0 < len(obj["trace"]) <= ice.JSON_FRAMES < obj["frames"]
    assert {"file", "line", "function", "source"} <= set(obj["trace"][-1]) and obj["trace"][-1]["function"] == "down"
    (trace,) = (tmp_path / "ice").glob("tilec-ice-*.txt")
    assert obj["trace_file"] == str(trace) and "in down" in trace.read_text()
