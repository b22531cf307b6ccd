"""The row cases' own checks (CPU): the sanitizer script names cases that exist,
and a scan's tolerance follows the size of its prefixes without hiding a wrong carry."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from row_cases import CASES, compare  # noqa: E402


def test_the_sanitizer_script_runs_cases_that_exist() -> None:
    import rows_sanitize

    names = {c.name for c in CASES}
    assert [n for n in rows_sanitize.FEW if n not in names] == []


class _Kernel:
    def __init__(self, *params: object) -> None:
        self.params = list(params)


def _check(case, want: np.ndarray, got: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir

    y = ir.TensorParam("y", DType.F32, want.ndim, True, want.shape)
    compare(case, _Kernel(y), [want], [got])


def test_a_scan_tolerates_rounding_relative_to_its_largest_prefix() -> None:
    case = next(c for c in CASES if c.name == "cumsum1_f32_2x5000_w8")
    want = np.linspace(-160.0, 160.0, 10000).reshape(2, 5000)
    want[1, 4466] = 0.1394031047821045
    got = want.copy()
    got[1, 4466] = 0.1392679214477539  # measured on the H200: the GPU's order of summation
    _check(case, want, got)
    got[1, 4466] += 1.0  # a lost element in the carry is not rounding
    with pytest.raises(AssertionError):
        _check(case, want, got)


def test_a_reduction_keeps_its_absolute_tolerance() -> None:
    case = next(c for c in CASES if c.name.startswith("sum1_f32"))
    want = np.full((4,), 160.0)
    got = want.copy()
    got[0] += 1e-2
    with pytest.raises(AssertionError):
        _check(case, want, got)
