"""Every element-wise op and every cast of the GPU suites (`backend_cases`),
on the values a test with random normal inputs never meets: +-0, +-inf, NaN,
subnormals, f32's extremes, f16's edge (65504, 70000), overflowing exponents.
The generated code runs on the CPU (`llsim`), and on the GPU where there is
one (the `gpu` cases), and must give what the interpreter gives: the same infinity, NaN where it has NaN, and within the
op's tolerance otherwise (`sin`/`cos` too, on every finite argument: their
exact reduction beyond |x| = 2^13). This is how GPU `exp` of an overflowing
input was found to give NaN (2026-12-03), and `sin`/`cos` of large arguments
to be off (sin(3.4e38): -0.244 against -0.381; fixed 2026-12-04)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from backend_cases import Suite, cast_suite, elementwise_suite
from llsim import SimDevice

from tilelang.dtypes import DType
from tilelang.interp import round_bf16, run_kernel

SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e-30, 3.4e38, -3.4e38, 1e30, -1e30, 100.0, -100.0,
     65504.0, 70000.0, -70000.0, 1e5, -7.5, 0.5, 2.5, -2.5, 1.0, -1.0, 88.9, -88.9, 3.0, 44.5, 1e4, -1e4,
     8191.9995, 8192.0, -8192.0, 16777215.0, 16777216.0, 1e7, -3e9, 6.0e19, 1.2e25, 2.5e33, 1.7014117e38,
     # f32 values close to multiples of pi/2 (the reduction's hard cases), and 2^k
     1.0e22, 1.0e-3, 3.0e6, 102940.0, 51471.85, 4294967296.0, 1.8446744e19, 3.1415927e5],
    np.float32,
)


def _pairs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)  # every value against every other, in some order
    x = np.concatenate([SPECIAL, rng.permutation(SPECIAL), rng.permutation(SPECIAL)])
    y = np.concatenate([rng.permutation(SPECIAL), SPECIAL, rng.permutation(SPECIAL)])
    return x, y


def _sim(k, grid, args) -> None:  # type: ignore[no-untyped-def]
    SimDevice().run(k, grid, args)


def _gpu(k, grid, args) -> None:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    dev = cuda.device()
    on = [dev.upload(a, p.dtype) if isinstance(a, np.ndarray) else a for p, a in zip(k.params, args, strict=True)]
    dev.run(dev.prepare(k), grid, on)
    dev.sync()
    for p, a, g in zip(k.params, args, on, strict=True):
        if isinstance(a, np.ndarray):
            a[...] = dev.download(g, p.dtype, a.shape)


RUNNERS = [pytest.param(_sim, id="llsim"), pytest.param(_gpu, id="gpu", marks=pytest.mark.gpu)]


def _run(suite: Suite, dt: DType, runner) -> list[str]:  # type: ignore[no-untyped-def]
    k = suite.kernel()
    args = suite.args(np.random.default_rng(0))
    x, y = _pairs()
    if dt is DType.BF16:
        x, y = round_bf16(x), round_bf16(y)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        args[0][...] = np.resize(x, args[0].shape).astype(args[0].dtype)
        if len(args) > 1 and args[1].dtype.kind == "f":
            args[1][...] = np.resize(y, args[1].shape).astype(args[1].dtype)
        want = [a.copy() for a in args]
        run_kernel(k, suite.grid, want)
        got = [a.copy() for a in args]
        runner(k, suite.grid, got)
    xs = np.asarray(args[0], np.float64).ravel()
    bad = []
    for p, w, g in zip(k.tensor_params, want, got, strict=True):
        if p.name not in suite.tols:
            continue
        rtol, atol = suite.tols[p.name]
        w64, g64 = np.asarray(w, np.float64).ravel(), np.asarray(g, np.float64).ravel()
        same = (w64 == g64) | (np.isnan(w64) & np.isnan(g64))
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf: `same` has them
            close = np.isfinite(w64) & np.isfinite(g64) & (np.abs(w64 - g64) <= atol + rtol * np.abs(w64))
        ok = same | close
        for i in np.flatnonzero(~ok)[:3]:
            bad.append(f"{p.name}: x={xs[i]!r}: interpreter {w64[i]!r}, generated code {g64[i]!r}")
    return bad


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("dt", [DType.F32, DType.F16, DType.BF16], ids=lambda d: d.value)
def test_element_wise_ops_on_special_values(dt: DType, runner) -> None:  # type: ignore[no-untyped-def]
    assert not (bad := _run(elementwise_suite(dt), dt, runner)), "\n".join(bad)


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("src", [DType.F32, DType.F16, DType.BF16, DType.F64], ids=lambda d: d.value)
def test_casts_of_special_values(src: DType, runner) -> None:  # type: ignore[no-untyped-def]
    assert not (bad := _run(cast_suite(src), src, runner)), "\n".join(bad)
