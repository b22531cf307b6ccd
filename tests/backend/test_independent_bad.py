"""Bad programs written from the brief alone (`programs/independent_bad/`,
the second batch of the independent review, 2026-12-03): type errors, shape
mismatches known at compile time, ownership errors, and facts known only at
run time (launch shapes and grids, host shapes and indices, a device
`assert`, a host division by zero).

Each file marks every error it must get with `// error[E0xxx]` on its line.
`tilec run --device cpu --error-format json` must report exactly those
(code and line), each located in the file with a help line, exit with the
user-error status, and never print a Python traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirunner import invoke
from tests.soundness.conftest import expected_errors
from tilelang.diagnostics.codes import REGISTRY

BAD = sorted((Path(__file__).parent / "programs" / "independent_bad").glob("*.tile"))


def test_the_corpus_is_there() -> None:
    assert len(BAD) >= 10


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_located_diagnostic_with_help(path: Path) -> None:
    r = invoke("run", "--device", "cpu", "--error-format", "json", str(path))
    assert "Traceback" not in r.output
    assert r.exit_code not in (0, 101), r.output  # a user error: not success, not an internal error (101)
    diags = [json.loads(line) for line in r.stderr.splitlines() if line.startswith("{")]
    errors = [d for d in diags if d["severity"] == "error"]
    got = set()
    for d in errors:
        primary = [lb for lb in d["labels"] if lb["primary"]]
        assert primary, f"unlocated: {d['code']} {d['message']}"
        assert Path(primary[0]["file"]).name == path.name, d
        assert primary[0]["col"] >= 1
        assert d["code"] in REGISTRY, d["code"]
        assert d["help"], f"{d['code']} {d['message']}: no help line"
        got.add((d["code"], primary[0]["line"]))
    want = expected_errors(path.read_text(encoding="utf-8"))
    assert got == want, f"expected {sorted(want)}, got {sorted(got)}:\n{r.stderr}"
