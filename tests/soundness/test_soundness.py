"""The soundness corpora of the ownership checker.

`racy/`: programs with a data race, an aliasing violation or a lost launch;
each must be rejected with exactly the ownership errors annotated in it
(`// error[E03xx]` on the primary line, `//~^` for one line up).
`safe/`: programs that look dangerous but are fine (disjoint tensors in
flight, waits in both branches, reads between graph replays, shared reads by
two launches in flight, ...); each must be accepted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.soundness.conftest import HERE, check_file, expected_errors, located

RACY = sorted((HERE / "racy").glob("*.tile"))
SAFE = sorted((HERE / "safe").glob("*.tile"))


def test_corpus_sizes() -> None:
    assert len(RACY) >= 30
    assert len(SAFE) >= 30


@pytest.mark.parametrize("path", RACY, ids=lambda p: p.stem)
def test_racy_rejected(path: Path) -> None:
    sf, _sema, diags, _ = check_file(path)
    want = expected_errors(sf.text)
    assert want, "a racy program must say which error it expects"
    got = located(sf, diags)
    assert got == want, f"expected {sorted(want)}, got {sorted(got)}:\n" + "\n".join(
        f"  {d.code} {d.message}" for d in diags
    )
    assert all(d.code.startswith(("E03", "E04")) for d in diags)


@pytest.mark.parametrize("path", SAFE, ids=lambda p: p.stem)
def test_safe_accepted(path: Path) -> None:
    sf, _sema, diags, _ = check_file(path)
    assert not diags, "\n".join(
        f"{sf.line_col(d.primary_span.start)[0] if d.primary_span else 0}: {d.code} {d.message}"
        for d in diags
    )


@pytest.mark.parametrize("path", SAFE + RACY, ids=lambda p: p.stem)
def test_corpus_type_checks(path: Path) -> None:
    """The corpora are well-typed: the type checker has nothing to say, so the
    ownership checker is what accepts or rejects them in the real pipeline."""
    sf, sema_diags, _, _ = check_file(path)
    assert not sema_diags, "\n".join(
        f"{sf.line_col(d.primary_span.start)[0] if d.primary_span else 0}: {d.code} {d.message}"
        for d in sema_diags
    )
