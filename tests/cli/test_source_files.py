"""Source files that are not what they should be: not UTF-8, a device, a
directory, a file importing itself, files importing each other. Each is a
plain error (a diagnostic at the `use`, or `couldn't read` for the root) in
`check`, `run` and `tilelang.load`, never an ICE, a hang or "no such file"."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest
from clirunner import invoke

from tilelang import driver
from tilelang.source import MAX_SOURCE_BYTES, SourceReadError, decode_source, read_source

LATIN1 = "fn main() {\n    print(\"caf\xe9\");\n}\n".encode("latin-1")


def test_read_source_names_the_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin.tile"
    path.write_bytes(LATIN1)
    with pytest.raises(SourceReadError) as e:
        read_source(path)
    assert "not valid UTF-8" in e.value.strerror
    assert "byte 0xe9 at line 2, column 15" in e.value.strerror


def test_reads_are_bounded() -> None:
    assert read_source.__doc__ and "MAX_SOURCE_BYTES" in read_source.__doc__
    with pytest.raises(SourceReadError, match="larger than"):
        decode_source(b" " * (MAX_SOURCE_BYTES + 1), "big.tile")
    if os.path.exists("/dev/zero"):
        with pytest.raises(SourceReadError, match="larger than"):
            read_source("/dev/zero")  # returns: at most MAX_SOURCE_BYTES + 1 bytes are read


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_root_file_that_is_not_utf8_is_a_read_error(tmp_path: Path, command: str) -> None:
    path = tmp_path / "latin.tile"
    path.write_bytes(LATIN1)
    args = [command, str(path)] + (["--device", "cpu"] if command == "run" else [])
    result = invoke(*args)
    assert result.exit_code in (1, 2), result.output
    assert "not valid UTF-8" in result.stderr and "line 2, column 15" in result.stderr
    assert "Traceback" not in result.stderr and "internal compiler error" not in result.stderr


def test_stdin_that_is_not_utf8_is_a_read_error() -> None:
    result = invoke("check", "-", input=LATIN1)
    assert result.exit_code in (1, 2)
    assert "not valid UTF-8" in result.stderr and "internal compiler error" not in result.stderr


def test_the_python_api_reports_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    import tilelang

    path = tmp_path / "latin.tile"
    path.write_bytes(LATIN1)
    with pytest.raises(tilelang.TileError, match="not valid UTF-8"):
        tilelang.load(path)


def _codes_and_text(root: Path) -> tuple[list[str], str]:
    from tilelang.diagnostics import render

    result = driver.check(root)
    text = render.render(result.diagnostics, result.sources, "human")
    return [d.code for d in result.diagnostics], text


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_use_of_a_device_is_an_error_at_the_use(tmp_path: Path) -> None:
    root = tmp_path / "main.tile"
    root.write_text('use "/dev/zero";\nfn main() {}\n')
    codes, text = _codes_and_text(root)
    assert codes == ["E0109"]
    assert "not a regular file" in text and "main.tile:1:5" in text


def test_use_of_a_directory_or_non_utf8_file_says_why(tmp_path: Path) -> None:
    (tmp_path / "lib.tile").mkdir()
    (tmp_path / "latin.tile").write_bytes(LATIN1)
    root = tmp_path / "main.tile"
    root.write_text('use "lib.tile";\nuse "latin.tile";\nfn main() {}\n')
    codes, text = _codes_and_text(root)
    assert codes == ["E0109", "E0109"]
    assert "it is a directory" in text and "not valid UTF-8" in text
    assert "no such file" not in text


def test_a_file_that_imports_itself_is_e0117(tmp_path: Path) -> None:
    root = tmp_path / "me.tile"
    root.write_text('use "me.tile";\nfn f() -> i32 { 1 }\nfn main() { print(f()); }\n')
    codes, text = _codes_and_text(root)
    assert codes == ["E0117"]
    assert "imports itself" in text and "no such file" not in text


def test_files_that_import_each_other_through_the_root_run(tmp_path: Path) -> None:
    from tilelang.run import execute

    (tmp_path / "b.tile").write_text('use "main.tile";\nfn fb() -> i32 { fa() + 1 }\n')
    root = tmp_path / "main.tile"
    root.write_text('use "b.tile";\nfn fa() -> i32 { 41 }\nfn main() { print(fb()); }\n')
    codes, _ = _codes_and_text(root)
    assert codes == []
    out = io.StringIO()
    execute(root, device="cpu", out=out)
    assert out.getvalue().strip() == "42"


def test_tilec_run_on_a_use_of_dev_zero_finishes(tmp_path: Path) -> None:
    import subprocess

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    root = tmp_path / "main.tile"
    root.write_text('use "/dev/zero";\nfn main() {}\n')
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-m", "tilelang", "run", str(root)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "E0109" in proc.stderr


@pytest.mark.parametrize("use", [
    "use std" + "9" * 5000 + "nm::softmax;",    # a module path no file name can hold
    "use std::" + "n" * 5000 + "::softmax;",     # the same inside the standard library
    "use " + "a" * 300 + "::" + "b" * 5000 + ";",
    'use "' + "n" * 5000 + '.tile";',
    'use "a\\0b.tile";',                          # a NUL in the file name (open raised ValueError)
])
def test_a_use_of_a_name_no_file_can_have_is_e0109(tmp_path: Path, use: str) -> None:
    # hrev (2026-12-04), found by the fuzzer (seed 90210): the first two were
    # internal errors (OSError "File name too long" from `Path.is_file`), the
    # NUL one too (ValueError "embedded null byte" from `open`)
    root = tmp_path / "main.tile"
    root.write_text(use + "\nfn main() {}\n")
    codes, text = _codes_and_text(root)
    assert codes == ["E0109"], text
    assert "main.tile:1:5" in text and "internal" not in text


def test_one_wording_for_an_unreadable_file_everywhere(tmp_path: Path) -> None:
    """`tilec check`, `emit`, `run`, the REPL's `:load` and `tilelang.load` word
    a file they cannot read the same way, through `source.read_error` (check
    said "couldn't read" where run said "cannot read": the review, 2026-12-04)."""
    from tilelang.source import read_error

    bad = tmp_path / "latin.tile"
    bad.write_bytes(LATIN1)
    for path in (tmp_path / "nope.tile", tmp_path, bad):
        try:
            read_source(path)
        except OSError as e:
            want = read_error(path, e)
        assert want.startswith(f"couldn't read `{path}`: ") and len(want) > len(str(path)) + 20, want
        for cmd in (["check"], ["emit", "--stage", "ast"], ["run", "--device", "cpu"]):
            r = invoke(*cmd, str(path))
            assert r.exit_code == 1 and r.stderr.strip() == f"error: {want}", (cmd, r.stderr)
        from tilelang.repl.session import ReplSession

        out = ReplSession().feed(f":load {path}")
        assert not out.ok and out.stderr.strip() == f"error: {want}", out.stderr
        import tilelang

        with pytest.raises(tilelang.CompileError) as ei:
            tilelang.load(path)
        assert ei.value.code == "E0814" and str(ei.value).startswith(f"error[E0814]: {want}\n")
