"""The GPU's f32 `erf` under `TILEC_ERF_F32=0` (`f64math.erf_f32`, round 16; the default is `interp/erf32.py`'s
f32 algorithm on both engines, tests/backend/test_erf32.py): |x| Q(x^2) below 1.5 and erf itself on [1.5, 4) as
Chebyshev series (one Clenshaw walk, its variable and coefficients selected per element), 1 from 4 on, on
the value widened to f64 and rounded once to f32. It replaced the f64 algorithm's continued fraction (80 f64
divisions and an exp an element, both branches computed): an f32 GELU (`0.5 * h * (1 + erf(h / sqrt 2))`,
PyTorch's default) on a 64 x 64 tile was ~430 KB of PTX and 40-60 s of ptxas
(tests/user/programs/o01_fused_mlp_gelu.tile).

Checked here on the host (the emitted LLVM JIT-compiled by llvmlite, as test_f64math does) against the
interpreter's f32 erf, bit for bit: a sweep of every 16th f32 of [1.5, 4) and every 4099th of [0, 1.5) by
default; under `heavy`, every f32 of [1.5, 4) and every 61st of [0, 1.5) (~30 million, ~30 s); plus the
edges (the cuts, NaN, infinities, signed zeros, subnormals). The NumPy model `f64math.erf_f32_model` is the
emitted code's order (checked against it), which the two sweeps also ran over (0 differences).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_f64math import HostEmitter, compile_loop, loop_module

from tilelang.backend import f64math
from tilelang.dtypes import DType
from tilelang.interp.numeric import elementwise
from tilelang.ir.nodes import ElemOp


@pytest.fixture(autouse=True)
def _f64_series(monkeypatch):  # type: ignore[no-untyped-def]
    """Both engines' f32 erf by the f64 series (the interpreter's `erf_f64` rounded once)."""
    monkeypatch.setenv("TILEC_ERF_F32", "0")


def _gpu_erf_f32():  # type: ignore[no-untyped-def]
    em = HostEmitter()
    fn = compile_loop(loop_module(em, f64math.erf_f32(em, "%x")))

    def run(x: np.ndarray) -> np.ndarray:
        wide = np.ascontiguousarray(x.astype(np.float32), dtype=np.float64)
        out = np.empty_like(wide)
        fn(wide.ctypes.data, out.ctypes.data, wide.size)
        return out.astype(np.float32)

    return run


def _interp(x: np.ndarray) -> np.ndarray:
    return elementwise(ElemOp.ERF, [x.astype(np.float32)], DType.F32)


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, (bad.size, got[bad[:5]], want[bad[:5]])


def _middle(step: int, lo: float = 1.5, hi: float = 4.0) -> np.ndarray:
    a, b = (int(np.float32(v).view(np.uint32)) for v in (lo, hi))
    return np.arange(a, b, step, dtype=np.uint32).view(np.float32)


def test_f32_erf_is_the_interpreters_on_the_edges_and_a_sweep() -> None:
    f32 = np.float32
    cuts = [f32(1.5), f32(4.0)]
    near = [np.nextafter(c, d, dtype=np.float32) for c in cuts for d in (f32(0), f32(9))]
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 0.5, 3.99,
                      3.9, 3.85, 5.0, -1.5, -4.0, *cuts, *near, *(-np.array(near))], dtype=np.float32)
    r = np.random.default_rng(16)
    x = np.concatenate([edges, r.uniform(-7, 7, 50_000).astype(np.float32), _middle(16), -_middle(97),
                        _middle(4099, 0.0, 1.5), -_middle(8191, 0.0, 1.5)])
    got, want = _gpu_erf_f32()(x), _interp(x)
    _same_bits(got, want)
    assert np.signbit(got[1]) and got[2] == 1.0 and got[3] == -1.0 and np.isnan(got[4])


@pytest.mark.heavy
def test_f32_erf_is_the_interpreters_on_every_f32_of_the_middle_range_and_a_dense_sweep_below() -> None:
    run = _gpu_erf_f32()
    for x in (_middle(1), _middle(61, 0.0, 1.5)):
        for i in range(0, x.size, 1 << 21):
            _same_bits(run(x[i:i + (1 << 21)]), _interp(x[i:i + (1 << 21)]))


def test_the_numpy_model_is_the_emitted_series() -> None:
    """`f64math.erf_f32_model` (the documented model) agrees with the emitted code to f64 rounding."""
    x = np.concatenate([_middle(4099), _middle(40_009, 0.0, 1.5)]).astype(np.float64)
    em = HostEmitter()
    fn = compile_loop(loop_module(em, f64math.erf_f32(em, "%x")))
    out = np.empty_like(x)
    fn(x.ctypes.data, out.ctypes.data, x.size)
    np.testing.assert_allclose(out, f64math.erf_f32_model(x), rtol=2e-15, atol=1e-300)
