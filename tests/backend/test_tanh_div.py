"""hcliff13: tanh's 2 / (exp(2|x|) + 1) without div.rn's slow path (`codegen/arith.fdiv_fast`) and with |x|
clamped to `fastmath.TANH_ONE`. div.rn.f32 is ptxas's fast path (rcp, a Newton step, a corrected quotient) then
`FCHK` and an out-of-line call for operands it cannot vouch for; in a GEMM epilogue (tests/user l12: bias, tanh
GELU, residual) 128 such calls a thread kept the accumulator live across calls: 4.7 KB of spills a thread at
sm_90a. The fast path alone gives div.rn's bits where the check would pass, which the clamp guarantees (the
divisor in [2, e^20 + 1]); both claims are checked here: the sequence against IEEE division with the MUFU's
reciprocal off by its worst error both ways (NumPy), and the new tanh against the old code bit for bit in
`llsim` (the approximate instructions exact, and off by their worst error up and down)."""

from __future__ import annotations

import llsim
import numerics_cases as nc
import numpy as np
import pytest
from llsim import SimDevice

from tilelang.backend import emit_ptx, fastmath
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

F = np.float32


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """fma.rn.f32 exactly: a * b is exact in f64; the sum with c rounded to odd in f64 (TwoSum, then the
    truncation's last bit set where the sum was inexact), then once to f32 (53 >= 24 + 2 bits: no double
    rounding, which a plain f64 sum gave at 2 / (8 - 2^-21))."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c = c.astype(np.float64)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    trunc = np.where((t != 0) & (np.sign(t) != np.sign(s)), np.nextafter(s, 0.0), s)
    odd = np.where(t != 0, (trunc.view(np.uint64) | np.uint64(1)).view(np.float64), s)
    return odd.astype(F)


def _fdiv_fast(a: np.ndarray, b: np.ndarray, rcp: str) -> np.ndarray:
    """`ArithOps.fdiv_fast` in f32, rcp.approx's result `rcp`: 1 / b rounded to nearest, down or up (the PTX
    ISA's bound for rcp.approx.f32 is 1 ulp: the value below or above the exact reciprocal)."""
    exact = 1.0 / b.astype(np.float64)
    r = exact.astype(F)
    if rcp != "nearest":
        low = np.where(r.astype(np.float64) > exact, np.nextafter(r, F(0)), r)
        r = np.where(low.astype(np.float64) < exact, np.nextafter(low, F(np.inf)), low) if rcp == "up" else low
    r1 = _fma(r, _fma(-b, r, np.ones_like(b)), r)
    q = (a * r1).astype(F)
    return _fma(r1, _fma(-b, q, a), q)


@pytest.mark.parametrize("rcp", ["nearest", "down", "up"])
def test_the_fast_quotient_is_the_ieee_one_on_tanhs_divisors(rcp: str) -> None:
    """2 / d for d in [2, e^20 + 1] (every 211th f32, and the divisors next to powers of two) as div.rn rounds
    it, with the reciprocal rounded to nearest or up; rounded down, all but d = 2^k (1 - 2^-24), where 1 / d is
    2^-k (1 + 2^-24 + ..) and the Newton step ties back to 2^-k. There the hardware's own div.rn runs this same
    sequence on the same MUFU.RCP (ptxas 13, sm_90a: FCHK passes such operands), so `fdiv_fast` and div.rn give
    the same bits whatever that MUFU returns; the MUFU is accurate there, or div.rn would not be IEEE."""
    top = F(np.exp(2 * np.float64(fastmath.TANH_ONE)) + 1)
    bits = np.arange(np.array(2.0, F).view(np.uint32), np.array(top, F).view(np.uint32) + 1, 211, dtype=np.uint32)
    pw = np.array([2.0**k for k in range(1, 29)], F).view(np.uint32).astype(np.int64)
    edges = np.concatenate([pw + d for d in (-2, -1, 0, 1, 2)]).astype(np.uint32)
    d = np.concatenate([bits, edges]).view(F)
    d = d[(d >= 2) & (d <= top)]
    a = np.full_like(d, F(2.0))
    want = a / d  # NumPy's f32 division: IEEE, round to nearest even
    got = _fdiv_fast(a, d, rcp)
    bad = sorted({float(d[i]) for i in np.flatnonzero(got != want)})
    below = [float(np.nextafter(F(2.0**k), F(0))) for k in range(2, 29) if 2.0**k <= top]
    assert bad == (below if rcp == "down" else []), bad[:5]


def test_tanh_clamp_changes_no_result() -> None:
    """1 - 2 / (exp(2x) + 1) is 1.0 in f32 from TANH_ONE on (so the clamp changes nothing), but not just below
    it everywhere: the clamp is not far from where it must be."""
    x = np.float64(fastmath.TANH_ONE)
    assert F(1.0 - 2.0 / (np.exp(2 * x) + 1.0)) == F(1.0)
    assert 2.0 / (np.exp(2 * x) + 1.0) < 2.0**-25  # under half an ulp below 1.0
    assert F(1.0 - 2.0 / (np.exp(2 * 8.0) + 1.0)) < F(1.0)


def _inputs() -> np.ndarray:
    r = np.random.default_rng(13)
    x = np.concatenate([np.linspace(-12, 12, 449), r.standard_normal(256) * 4, r.uniform(9.9, 10.1, 32),
                        [0.0, -0.0, 0.6, -0.6, 1e-30, 20.0, -44.0, 50.0, 88.8, 1e30, np.inf, -np.inf, np.nan]])
    x = x.astype(F)
    return np.concatenate([x, np.zeros(-x.size % nc.TILE, F)])


@pytest.mark.parametrize("error", [0, 1, -1], ids=["exact", "up", "down"])
def test_tanh_keeps_its_bits(error: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new tanh (fdiv_fast, the clamp, exp without its overflow select) gives the old code's bits for every
    input, NaN and infinities included (llsim; the approximate instructions as they are and at their worst)."""
    monkeypatch.setenv("LLSIM_MEMO", "0")
    monkeypatch.setattr(llsim, "APPROX_ERROR", error)
    case = nc.Case("unary", DType.F32, (ir.ElemOp.TANH,), (_inputs(),))
    (new,) = nc.run_sim(case, case.kernel(), "sm_90a", SimDevice)
    monkeypatch.setenv("TILEC_TANH_DIV", "rn")  # (the code before: div.rn, no clamp)
    (old,) = nc.run_sim(case, case.kernel(), "sm_90a", SimDevice)
    same = (new.view(np.uint32) == old.view(np.uint32)) | (np.isnan(new) & np.isnan(old))
    assert same.all(), [(float(x), float(a), float(b)) for x, a, b, s in zip(case.inputs[0], new, old, same,
                                                                            strict=True) if not s][:5]


def test_tanh_has_no_division_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PTX of a tanh has no div.rn (whose slow path is a call), for sm_80 and sm_90a; `TILEC_TANH_DIV=rn`
    has it back, and another value is refused."""
    from tilelang.backend.env_switch import SwitchError

    case = nc.Case("unary", DType.F32, (ir.ElemOp.TANH,), (_inputs(),))
    for arch in ("sm_80", "sm_90a"):
        ptx = emit_ptx(case.kernel(), arch)
        assert "div.rn.f32" not in ptx and "rcp.approx.ftz.f32" in ptx and "min.NaN.f32" in ptx, arch
    monkeypatch.setenv("TILEC_TANH_DIV", "rn")
    assert "div.rn.f32" in emit_ptx(case.kernel(), "sm_90a")
    monkeypatch.setenv("TILEC_TANH_DIV", "fastest")
    with pytest.raises(SwitchError):
        emit_ptx(case.kernel(), "sm_90a")
