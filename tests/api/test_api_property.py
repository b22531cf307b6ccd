"""Property tests of the Python API on the CPU interpreter.

- any 1-D length and power-of-two tile: `add` writes exactly `x + y`, in place;
- two contiguous views of one buffer passed as `&mut` and `&`: the call is
  refused (E0303) exactly when NumPy says they share memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import tilelang

MOD = tilelang.load(Path(__file__).resolve().parents[2] / "examples" / "add.tile")
P = tilelang.partition


@given(n=st.integers(1, 5000), log_tile=st.integers(0, 11), seed=st.integers(0, 2**16))
def test_add_any_length_any_tile(n: int, log_tile: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    z = np.full(n, np.nan, np.float32)
    op = MOD.add(P(z, [1 << log_tile]), x, y)
    assert op.grid == (-(-n // (1 << log_tile)),)
    op.sync()
    np.testing.assert_array_equal(z, x + y)


@given(a=st.integers(0, 64), b=st.integers(0, 64), c=st.integers(0, 64))
def test_views_conflict_exactly_when_they_share_memory(a: int, b: int, c: int) -> None:
    buf = np.zeros(128, np.float32)
    z = buf[a:a + 16]
    x = buf[b:b + 16 + c]
    y = np.ones(16 + c, np.float32)
    overlap = np.shares_memory(z, x)
    try:
        MOD.add(P(z, [16]), x, y).sync()
        refused = False
    except tilelang.BorrowError as e:
        assert e.code == "E0303"
        refused = True
    assert refused == overlap
