"""The hostile corpus: programs written to break the ownership checker.

Each `hostile/*.tile` is a root program (files under `hostile/lib/` are
modules they import); every error it must get is annotated, in the file
where it is located, with `// error[E0xxx]` on the primary line (`//~^` for
one line up). The test runs the real pipeline (`tilec check`: parser, type
checker, ownership checker over every module) and compares (file, code,
line) exactly: nothing racy may pass, and nothing is reported elsewhere.
Every diagnostic must be located (a primary span), carry a registered code
and a help line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.soundness.conftest import HERE, expected_errors
from tilelang import driver
from tilelang.diagnostics.codes import REGISTRY

HOSTILE = HERE / "hostile"
ROOTS = sorted(HOSTILE.glob("*.tile"))


def test_hostile_corpus_size() -> None:
    # With tests/soundness/test_hostile_runtime.py (the REPL and the Python
    # API), the hostile corpus holds well over 100 programs.
    assert len(ROOTS) >= 95


@pytest.mark.parametrize("path", ROOTS, ids=lambda p: p.stem)
def test_hostile_program_rejected(path: Path) -> None:
    result = driver.check(path)
    diags = [d for d in result.diagnostics if d.severity.value == "error"]
    want: set[tuple[str, str, int]] = set()
    for sf in result.sources:
        p = Path(sf.name)
        if p.resolve().is_relative_to(HOSTILE):
            want |= {(p.name, code, line) for code, line in expected_errors(sf.text)}
    assert want, "a hostile program must say which errors it expects"
    got = set()
    for d in diags:
        span = d.primary_span
        assert span is not None, f"unlocated diagnostic: {d.code} {d.message}"
        sf = result.sources.get(span.file)
        got.add((Path(sf.name).name, d.code, sf.line_col(span.start)[0]))
        assert d.code in REGISTRY
        assert d.help, f"{d.code} {d.message}: no help line"
    assert got == want, f"expected {sorted(want)}, got {sorted(got)}:\n" + "\n".join(
        f"  {d.code} {d.message}" for d in diags
    )
