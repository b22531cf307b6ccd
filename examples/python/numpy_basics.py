"""Tile kernels on NumPy arrays: the CPU interpreter, in place.

    python examples/python/numpy_basics.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import tilelang

EXAMPLES = Path(__file__).resolve().parents[1]


def main() -> None:
    mod = tilelang.load(EXAMPLES / "saxpy.tile")
    print(mod.saxpy.signature)

    rng = np.random.default_rng(0)
    x = rng.standard_normal(100_000).astype(np.float32)
    y = rng.standard_normal(100_000).astype(np.float32)
    expected = 2.5 * x + y

    op = mod.saxpy(tilelang.partition(y, [1024]), x, 2.5)  # checked; nothing runs yet
    print(op)                                               # B = 1024, a grid of 98 blocks
    op.sync()                                               # y is written in place
    np.testing.assert_allclose(y, expected, rtol=1e-6)

    # A launch borrows its arrays until `.wait()`: a second launch that writes
    # `y` meanwhile would race, so it is refused.
    h = mod.saxpy(tilelang.partition(y, [1024]), x, 1.0).launch()
    try:
        mod.saxpy(tilelang.partition(y, [1024]), x, 1.0).sync()
    except tilelang.BorrowError as e:
        print(e)
    # The arrays it uses are read-only until then (on the GPU a write would race).
    try:
        y[0] = 0.0
    except ValueError as e:
        print(f"y[0] = 0.0 while the launch is in flight: {e}")
    h.wait()
    y[0] = 0.0  # writeable again

    # A wrong call says what to fix.
    try:
        mod.saxpy(tilelang.partition(y, [1024]), x.astype(np.float64), 2.5)
    except tilelang.CallError as e:
        print(e)


if __name__ == "__main__":
    main()
