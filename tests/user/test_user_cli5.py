"""`tilec` on round 5's programs (huser, 2026-12-05), as a user drives it:
`check -D warnings` of every `v*.tile` at once; output paths that cannot be
written (`emit -o` into a missing directory or onto a directory, `run
--trace` / `--block-trace` into a missing one), which were internal
compiler errors (status 101) once the whole program had run, and are now
refused first (status 2, a help line, nothing run); a misspelt option
(`--devcie`) named with the option it is close to; `tilec doc` of
another language's names (`program_id`, `tl`, `float16`, `range`); and a
scripted `tilec repl` session with this round's habits (a `let` without
its `;`, which the REPL took as unfinished and joined to the next line), a graph whose
captured tensor is given new values in place between replays, and the
generic host function refusing 2.5 for an `i32` `T`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from userprog import tilec_at_root

from tilelang import cli

P = Path(__file__).parent / "programs"
V04 = str(P / "v04_two_kernel_reduction.tile")


def test_check_every_program_denying_warnings() -> None:
    files = sorted(str(p) for p in P.glob("v0[1-6]_*.tile"))
    assert len(files) == 6
    r = tilec_at_root("check", "-D", "warnings", *files)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == ""


@pytest.mark.parametrize("args", [
    ["emit", V04, "--stage", "ir", "-o", "{missing}/k.txt"],
    ["emit", V04, "--stage", "ptx", "-o", "{dir}"],
    ["run", V04, "--device", "cpu", "--trace", "{missing}/t.json"],
    ["run", V04, "--device", "cpu", "--block-trace", "{missing}/t.json"],
])
def test_an_output_path_that_cannot_be_written_is_refused_before_anything_runs(
        args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.format(missing=tmp_path / "no" / "such", dir=tmp_path) for a in args]
    status = cli.run(argv)
    out, err = capsys.readouterr()
    assert status == cli.EXIT_USAGE, err
    assert "cannot write" in err and "help: " in err and "internal compiler error" not in err, err
    assert out == ""  # v04 prints its sums when it runs: it did not
    assert not (tmp_path / "no").exists()


def test_an_output_path_that_can_be_written_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["emit", V04, "--stage", "ir", "-o", str(tmp_path / "k.txt")]) == cli.EXIT_OK
    assert "partials" in (tmp_path / "k.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "phrase"), [("program_id", "`block_id(axis)`"), ("tl", "`sum(t, 1)`"),
                                              ("float16", "type `f16`"), ("range", "`for i in 0..n { .. }`")])
def test_doc_of_another_language_s_name_says_how_tile_spells_it(
        name: str, phrase: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["doc", name]) == cli.EXIT_ERRORS
    err = capsys.readouterr().err
    assert f"Tile has no `{name}`" in err and phrase in err, err


@pytest.mark.parametrize(("typo", "option"), [("--devcie", "--device"), ("--santize", "--sanitize")])
def test_a_misspelt_option_gets_the_one_it_is_close_to(typo: str, option: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["run", V04, typo, "cpu"] if typo == "--devcie" else ["run", V04, typo]) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert f"help: did you mean `{option}`?" in err and out == "", err


def test_run_reads_the_program_from_stdin(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    # `cat v01.tile | tilec run -` said "couldn't read `-`" (`tilec check -` read stdin)
    import io

    src = (P / "v01_changing_partition.tile").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(src), encoding="utf-8"))
    assert cli.run(["run", "-", "--device", "cpu"]) == cli.EXIT_OK
    assert capsys.readouterr().out == "3145.0 4004\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"fn main() { let x = 1 }\n"), encoding="utf-8"))
    assert cli.run(["run", "-"]) == cli.EXIT_ERRORS
    assert "--> <stdin>:1:22" in capsys.readouterr().err


REPL = """\
let k = arange::<f32>(4)
k.sum() * 2.0
let x = arange::<f32>(6);
print(f"x = {x}");
len(x)
x[1] = 5.0;
let mut z = zeros::<f32>([6]);
kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(z.load() + 1.0); }
let g = graph { inc(z.partition([4])); };
g.replay();
g.replay();
z = ones::<f32>([6]);
z *= 0.0;
g.replay();
z
:load tests/user/programs/v05_generic_host_two_dtypes.tile
scan_scaled(&(arange::<i32>(20) - 5), 2.5)
scan_scaled(&(arange::<f32>(20) as f16), 0.5f16)
:quit
"""


def test_a_repl_session_with_this_round_s_habits() -> None:
    r = tilec_at_root("repl", stdin=REPL)
    out = r.stdout + r.stderr
    assert "Traceback" not in out and "internal compiler error" not in out
    assert "f32 = 12.0" in out  # `let k = ..` with no `;`: the REPL adds it (it waited for more, then failed)
    assert '`print("x = {}", x)`' in out
    assert "`x.shape()[0]`" in out
    assert "cannot assign to a tensor element" in out and "`x = where(arange::<i32>(6) == 1, 5.0, x);`" in out
    assert "error[E0307]" in out and "`z *= 0.0; z += new;`" in out
    assert "Tensor<f32, [6]> = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]" in out  # 2 replays, zeroed in place, 1 more
    assert "expected `i32`, found `{float}`" in out
    assert "45.5, 52.5, 60.0,  8.0, 16.5, 25.5, 35.0], 60.0)" in out  # f16 scan in tiles of 16


@pytest.mark.parametrize(("text", "completed"), [("let x = 5", True), ("let g = graph { k(z.partition([4])); }", True),
                                                 ("let y = x\n    .sum()", True),
                                                 ("let x = 5;", False), ("x + 1", False), ("let x = 1 +", False),
                                                 ("fn f() {", False), ("let s = \"ab", False)])
def test_what_the_repl_completes_with_a_semicolon(text: str, completed: bool) -> None:
    from tilelang.syntax.parser import completed_by_semicolon

    assert completed_by_semicolon(text) is completed
