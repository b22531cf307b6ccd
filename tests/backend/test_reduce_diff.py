"""hrev33: benchmarks/reduce_diff.py, the differential search of the GPU reductions (staged, transposing butterfly,
apart mode) against the interpreter on llsim. Its programs of every form pass the checker (a program it got
wrong would be counted as the GPU's problem), and (heavy) a few cases of each form, the staged path forced too,
agree on sm_90a and sm_80."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import reduce_diff  # noqa: E402

from tilelang import driver  # noqa: E402


def _seed_of(form: str, start: int) -> int:
    for seed in range(start, start + 200):
        c = reduce_diff.Case(seed)
        c.build()
        if f"({form}," in c.build().splitlines()[0]:
            return seed
    raise AssertionError(f"no {form} case in 200 seeds")


@pytest.mark.parametrize("form", sorted(set(reduce_diff.FORMS)))
def test_the_reduction_search_s_programs_are_well_formed(form: str, tmp_path: Path) -> None:
    seed = _seed_of(form, 100)
    c = reduce_diff.Case(seed)
    src = c.build()
    f = tmp_path / f"c{seed}.tile"
    f.write_text(src, encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert not errs and c.outs, (seed, [f"{d.code}: {d.message}" for d in errs])


@pytest.mark.heavy
@pytest.mark.parametrize("staged", [False, True])
def test_reductions_agree_with_the_interpreter(staged: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.backend.codegen import reduce as red
    from tilelang.backend.codegen import reduce_staged as rs

    if staged:  # what the apart mode takes goes to the staged path, in groups of the widest size allowed
        monkeypatch.setattr(red, "_apart_pays", lambda *a: False)
        monkeypatch.setattr(rs, "plan", reduce_diff.widest)
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    seeds = sorted({_seed_of(form, 300) for form in reduce_diff.FORMS} | set(range(300, 306)))
    assert reduce_diff.check_cases(seeds, ["sm_90a", "sm_80"], tmp_path) == []
