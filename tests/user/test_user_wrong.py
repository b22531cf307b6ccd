"""The wrong versions a user writes of round 2's features (huser): tile walks
and queues (state carried across tiles, `block_id` of the walked axis,
`break`, `return`, a `&mut` named outside the loop, an axis past the grid,
a run-time axis, `tiles` on the host), atomics (outside `unsafe`, a float
into an int tensor, an index of the wrong rank), the group's last block
reading its own tile, misspelt and out-of-range hints, mixed precision
without casts, `where` with an integer mask or unbroadcastable shapes,
shifts of floats, std::nn on f16 or 1-D tiles, std::attention with a wrong
head dimension or generics that nothing fixes, `mma`/`dot` on unsupported
or mixed types and mismatched shapes.

Each file's first line says the code and the place (`line:col`) of the
first error; `tilec check` on all of them at once must report exactly that,
rendered with the `--> file:line:col` header, the span underlined and a
help line.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from pathlib import Path

from userprog import tilec

REPO = Path(__file__).resolve().parents[2]
DIR = Path(__file__).parent / "wrong"
FILES = sorted(DIR.glob("*.tile"))


def _expected(path: Path) -> tuple[str, int, int]:
    m = re.match(r"// a user's mistake: (E\d{4}) at (\d+):(\d+)$", path.read_text(encoding="utf-8").splitlines()[0])
    assert m, f"{path.name}: the first line names the code and the place"
    return m.group(1), int(m.group(2)), int(m.group(3))


def _check(fmt: str) -> subprocess.CompletedProcess[str]:
    """`tilec check` of every file from the checkout's root, in this process (`userprog.tilec`; tests/cli
    covers the console script's own exit path)."""
    with contextlib.chdir(REPO):
        return tilec("check", "--error-format", fmt, "--color", "never", *(str(f.relative_to(REPO)) for f in FILES))


def test_each_mistake_is_refused_where_it_is_with_its_code() -> None:
    assert len(FILES) >= 25
    r = _check("json")
    assert r.returncode == 1
    first: dict[str, tuple[str, int, int, list[str]]] = {}
    for line in r.stderr.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        labels = [lab for lab in d["labels"] if lab["primary"]]
        if d["severity"] != "error" or not labels:
            continue
        name = Path(labels[0]["file"]).name
        first.setdefault(name, (d["code"], labels[0]["line"], labels[0]["col"], d["help"]))
    for f in FILES:
        code, line, col = _expected(f)
        assert f.name in first, f"{f.name}: no error"
        got_code, got_line, got_col, helps = first[f.name]
        assert (got_code, got_line, got_col) == (code, line, col), f.name
        assert helps and all(h.strip() for h in helps), f"{f.name}: no help line"


def test_the_human_rendering_underlines_and_helps() -> None:
    out = _check("human").stderr
    blocks = re.split(r"\n(?=error\[E\d{4}\])", out)
    for f in FILES:
        code, line, col = _expected(f)
        head = f"--> {f.relative_to(REPO)}:{line}:{col}"
        block = next((b for b in blocks if head in b and b.startswith(f"error[{code}]")), None)
        assert block is not None, f"{f.name}: no `error[{code}]` with `{head}`"
        assert re.search(r"^\s*\d* *\| .*\^", block, re.M), f"{f.name}: nothing underlined"
        assert "= help: " in block, f"{f.name}: no help line"
        assert "Traceback" not in block
