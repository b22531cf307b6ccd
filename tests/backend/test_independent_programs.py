"""Programs written from the brief alone, independently of the issues (the
lead's check of 2026-12-03; `programs/independent/`): row statistics at width
300, integer scans with `%` and shifts on negative values, column reductions
from f16 into bf16, `mma` with B transposed at 48 x 80 tiles, nested
partitions walked by a loop, 17 math functions, a 3-D permute, f64 math, an
online softmax with a scalar temperature, boolean logic, K smaller than one
tile, a stencil over its neighbours' tiles, u8/i16/i64/u32 wrap-around, prod
and cumsum over axis 0, launches in flight + a graph + atomics in `unsafe`, a
user-written attention, f32 `mma` and `dot`, f16/bf16 arithmetic, argmax over
axis 0, and numeric edges (ties, NaN through max, inf, overflowing casts).

The second batch (`q*`, the independent review of the same day): 2-D tiles
with partial tiles at both edges and `load_padded`, three kernels chained by
`.launch()`/`.wait()` with host arithmetic between, `block_id`-dependent loop
bounds, every reduction over each axis of a 3-D tile, casts between every
integer and float width, scans over both axes with the transcendental
functions, f16/bf16 `mma` and `dot` at odd shapes, generic device functions
from a module, a two-pass softmax finished by `if last_block(1)`, a
histogram of atomics with `print` in a kernel, graphs replayed around host
writes, bit operations and shifts (also on host tensors), a kernel generic
over its element type with a `while` loop, nested stores past the edge,
a bf16 layer norm and f16 math, a 3-D grid, `A·Bᵀ` and a GEMV `dot`,
integer division by zero and wrap-around, imported items and constants, and
host tensor operations with a `.npy` round trip. The third batch (the
hostile review of the safety rules, 2026-12-04): tile indices whose offsets
sit near i32::MAX (q22: the GPU read 8 GB past a tensor before its bounds
test stopped wrapping) and forms found safe and kept accepted (q23: a local
shadowing a `&mut` parameter's name outside a queue's loop, an atomic in a
device function inside `if last_block`, a handle relaunched in a loop, host
compound assignment between graph replays), and signed zeros through
`maximum`/`minimum` and `max`/`min` reductions in four float types (q24),
and sums and prefix sums of signed zeros along both axes (q25).
Each checks its results
against a host computation with `assert_close` inside the program.

On the CPU each must check and run; on the GPU every tensor `main` leaves
must equal the interpreter's: integers exactly, the same infinities and
NaNs, floats within 2e-2 (f16/bf16 and tensor-core products) or 1e-4."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tilelang.run import execute

PROGRAMS = sorted((Path(__file__).parent / "programs" / "independent").glob("*.tile"))
LOOSE = ("p03", "p04", "p11", "p15", "p16", "p17", "p18",  # f16/bf16 values or tensor-core sums
         "q07", "q15", "q17", "q22")


def _tensors(ex) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {k: np.asarray(t.numpy()) for k, t in ex.main_locals.items() if hasattr(t, "numpy")}


def test_the_corpus_is_there() -> None:
    assert len(PROGRAMS) >= 38


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_runs_on_the_cpu(path: Path) -> None:
    ex = execute(str(path), "cpu", out=io.StringIO())
    assert _tensors(ex), "main leaves tensors to compare"


@pytest.mark.gpu
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_gpu_agrees_with_the_interpreter(path: Path) -> None:
    gpu = execute(str(path), "gpu", out=io.StringIO())
    assert gpu.device.kind == "gpu"
    cpu = _tensors(execute(str(path), "cpu", out=io.StringIO()))
    tol = 2e-2 if path.stem.startswith(LOOSE) else 1e-4
    for name, g in _tensors(gpu).items():
        w = cpu[name]
        assert g.shape == w.shape, name
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w, err_msg=f"{path.stem}: {name}")
            continue
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        special = ~np.isfinite(w64) | ~np.isfinite(g64)
        same = (w64 == g64) | (np.isnan(w64) & np.isnan(g64))
        assert np.all(same[special]), f"{path.stem}: {name}: infinities or NaNs differ"
        fin = ~special
        scale = max(1.0, float(np.abs(w64[fin]).max(initial=0.0)))
        np.testing.assert_allclose(g64[fin], w64[fin], rtol=tol, atol=tol * scale, err_msg=f"{path.stem}: {name}")
