"""One reduction kernel on the interpreter and on llsim, compared (test_reduce_staged, test_reduce_xpose): integer,
min / max and arg results exactly, floating sums within the element type's tolerance scaled by the largest result."""

from __future__ import annotations

from typing import Any

import numpy as np
from llsim import SimDevice

from tilelang.dtypes import DType
from tilelang.interp import run_kernel


def assert_sim_matches(k: Any, grid: tuple[int, ...], want: list[np.ndarray], facts: dict[str, Any], op: str,
                       dt: DType) -> None:
    """`want` (the kernel's arguments, the result first) run on the interpreter, a copy on llsim (sm_90a)."""
    got = [a.copy() for a in want]
    run_kernel(k, grid, want)
    SimDevice("sm_90a").run(k, grid, got, facts)
    if op.startswith("arg") or dt.is_int or op in ("max", "min"):
        np.testing.assert_array_equal(got[0], want[0])
    else:
        tol = 1e-2 if dt is DType.BF16 else 1e-5
        scale = float(np.abs(want[0].astype(np.float64)).max())
        np.testing.assert_allclose(got[0].astype(np.float64), want[0].astype(np.float64), rtol=tol, atol=tol * scale)
