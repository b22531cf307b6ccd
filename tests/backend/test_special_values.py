"""Every element-wise op and every cast of the GPU suites (`backend_cases`),
on the values a test with random normal inputs never meets: +-0, +-inf, NaN,
subnormals, f32's extremes, f16's edge (65504, 70000), overflowing exponents.
The generated code runs on the CPU (`llsim`), and on the GPU where there is
one (the `gpu` cases), and must give what the interpreter gives: the same infinity, NaN where it has NaN, and within the
op's tolerance otherwise (`sin`/`cos` only inside their documented domain,
|x| <= 1e4: `backend/fastmath.py`). This is how GPU `exp` of an overflowing
input was found to give NaN (2026-12-03)."""

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
     65504.0, 70000.0, -70000.0, 1e5, -7.5, 0.5, 2.5, -2.5, 1.0, -1.0, 88.9, -88.9, 3.0, 44.5, 1e4, -1e4],
    np.float32,
)
DOMAIN = {"o_sin": 1e4, "o_cos": 1e4}  # |x| beyond: documented as outside the promise


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
        if p.name in DOMAIN:
            ok |= np.abs(xs) > DOMAIN[p.name]
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
