"""A new user's first hour (huser, round 10): every code block of the
user-facing docs, followed literally. `tests/unit/test_docs.py` runs the
reference's ```tile blocks; this runs every OTHER block of README.md,
examples/README.md, examples/llm/README.md, tests/README.md and
docs/reference.md: the README's first program and Python API block, its
command session, the tuning example, the `.tile` test example, the
reference's cluster kernel. Each block is in `HOW` (found by its first line):
run (a Tile program on the CPU, a Python block from the checkout's root or
next to the file the text says to save), checked (a kernel with no `main`),
a UI example (its annotations must be exactly what the checker says), or
left out with the reason (a GPU, hours, a download). A new block with no
entry fails, and so does an entry whose block is gone, so the docs cannot
rot unnoticed.

Found following them: examples/README.md's tuning blocks could not be run
(a kernel whose body was `..`, a Python block using `mod`, `out`, `x` from
nowhere); they are whole programs now. tests/README.md's `.tile` test example
annotated an E0302 (a code never emitted: a second `&mut z` on the host is
no error) and an E0201 (a type error, which ends the check before ownership
runs): written as the plugin would have run it, it failed; now two ownership
errors the checker reports.
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import shlex
from pathlib import Path

import pytest
from tileplugin import compare, emitted_from_diagnostics, parse_spec
from userprog import REPO, run_program, tilec_at_root

from tilelang import driver

DOCS = ["README.md", "examples/README.md", "examples/llm/README.md", "tests/README.md", "docs/reference.md"]
_FENCE = re.compile(r"^(?P<ind> *)```(?P<lang>\w*)\n(?P<body>.*?)^(?P=ind)```", re.S | re.M)

# by the block's file and first line: what a user does with it
HOW: dict[tuple[str, str], tuple[str, str]] = {
    ("README.md", "pip install -e . && tilec run examples/add.tile"):
        ("console", "its commands: tests/cli/test_readme.py runs both lines verbatim in a fresh venv (.ci/run)"),
    ("README.md", "kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>,"): ("run", "readme_add"),
    ("README.md", "$ tilec check examples/gemm.tile                 # nothing printed: it is fine"): ("console", ""),
    ("README.md", "import numpy as np"): ("python", ""),
    ("README.md", "$ python examples/llm/generate.py --config qwen3-4b --random-weights --tokens 256"):
        ("console", "a GPU for the first; the second is the llm README's (below)"),
    ("examples/README.md", "#[autotune(BR = [8, 16, 32], BC = [64, 128], num_warps = [4, 8], key = [x])]"):
        ("save", "rowsum.tile"),
    ("examples/README.md", "import numpy as np"): ("python", "rowsum.tile"),
    ("examples/llm/README.md",
     "$ python examples/llm/generate.py --config qwen3-4b --random-weights --tokens 256      # GPU"):
        ("console", "a GPU (1), ~4 s of CPU for 16 tokens of `tiny` (2: tests/llm/test_engine.py runs generate.py "
                    "on the CPU with a saved model), a downloaded model (3), a GPU and PyTorch (4)"),
    ("tests/README.md", "//@ check-fail                       // optional: the mode (see below)"): ("ui", ""),
    ("docs/reference.md", "#[cluster(1, 4)]"): ("check", ""),
}


def _blocks() -> list[tuple[str, str, str, str]]:
    out = []
    for doc in DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            if doc == "docs/reference.md" and m["lang"] == "tile":
                continue  # tests/unit/test_docs.py runs these
            body = "\n".join(ln[len(m["ind"]):] for ln in m["body"].splitlines()) + "\n"
            out.append((doc, m["lang"], body.splitlines()[0], body))
    return out


BLOCKS = _blocks()


def test_every_block_has_a_way_to_follow_it() -> None:
    found = {(doc, first) for doc, _, first, _ in BLOCKS}
    assert len(found) == len(BLOCKS), "two blocks of a doc open with the same line: give HOW a longer key"
    new = sorted(found - set(HOW))
    assert not new, f"docs blocks nobody runs (add them to HOW with what a user does): {new}"
    gone = sorted(set(HOW) - found)
    assert not gone, f"HOW names blocks that are no longer in the docs: {gone}"
    for doc, _, first, body in BLOCKS:  # a command block this test does not type says why
        what, why = HOW[(doc, first)]
        assert what != "console" or _console(body) or why, (doc, first)


def _python(body: str, cwd: Path) -> str:
    out = io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out):
        path = cwd / "_block.py"
        path.write_text(body, encoding="utf-8")
        runpy.run_path(str(path), run_name="__main__")
    return out.getvalue()


def _console(body: str) -> list[list[str]]:
    """The `$ tilec ...` commands of a console block, as argument lists."""
    cmds = []
    for ln in body.splitlines():
        if ln.startswith("$ "):
            argv = shlex.split(ln[2:], comments=True)
            if argv[0] == "tilec":
                cmds.append(argv[1:])
    return cmds


@pytest.mark.parametrize(("doc", "lang", "first", "body"), BLOCKS,
                         ids=[f"{d}:{HOW.get((d, f), ('?', ''))[0]}:{i}" for i, (d, _, f, _) in enumerate(BLOCKS)])
def test_the_block_does_what_the_text_says(doc: str, lang: str, first: str, body: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    what, arg = HOW.get((doc, first), ("?", ""))
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    if what == "run":
        path = tmp_path / f"{arg}.tile"
        path.write_text(body, encoding="utf-8")
        tensors, printed = run_program(path)  # raises (a failed assert_close too) on any error
        if arg == "readme_add":  # z = x + y; print(z.sum())
            assert abs(float(printed) - float((tensors["x"] + tensors["y"]).sum())) < 1e-2 * (1 << 20) ** 0.5
    elif what == "python":
        if arg:  # next to the file the text says to save
            prev = [b for d, _, f, b in BLOCKS if d == doc and HOW.get((d, f)) == ("save", arg)]
            assert len(prev) == 1
            (tmp_path / arg).write_text(prev[0], encoding="utf-8")
            _python(body, tmp_path)
        else:
            printed = _python(body, REPO)
            assert "kernel fn add<const B: i32>" in printed  # help(mod.add): the Tile signature
    elif what == "save":
        r = driver.check(_write(tmp_path, arg, body))
        assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    elif what == "check":
        r = driver.check(_write(tmp_path, "block.tile", body))
        assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    elif what == "ui":
        path = _write(tmp_path, "block.tile", body)
        spec = parse_spec(body, path)
        r = driver.check(path)
        emitted = emitted_from_diagnostics(r.diagnostics, r.sources)
        assert spec.expectations and [e for e in emitted if e.kind == "error"]
        problems = compare(spec.expectations, emitted, str(path))
        assert not problems, "\n".join(problems)
    elif what == "console":
        for argv in _console(body):
            r = tilec_at_root(*argv)
            assert r.returncode == 0, (argv, r.stderr)
            if argv[0] == "check":
                assert r.stdout == "" and r.stderr == ""  # "nothing printed: it is fine"
            elif argv[0] == "run":
                assert "error" not in r.stderr
            elif argv[0] == "emit":
                assert ".entry add" in r.stdout and ".target sm_90" in r.stdout
            elif argv[0] == "explain":
                assert "borrows the same tensor twice" in r.stdout
    else:
        pytest.fail(f"no way to follow this block: {doc}: {first!r}")


def _write(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    return p
