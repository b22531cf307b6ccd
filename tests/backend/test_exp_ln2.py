"""`exp` with its product's rounding error fed back as x - t ln2 (`codegen/arith.fexp_ln2`, `fastmath.exp_ln2`):
two instructions an element fewer than `fexp`, and one more where the operand is known <= 0
(`nonpositive_exp_args`: an online softmax's `exp(s - mn)`), in the attention pipeline's consumers by default.
Held to `fastmath.MATH["exp"]`'s promise: the numerics table's f32/bf16 unary kernels (exp, sigmoid, tanh) in
llsim with every f32 exp on this code (`TILEC_EXP_LN2=1`) and the MUFU off by its worst error both ways; the
algorithm in NumPy (f32 steps, exact fmas) on dense ranges and the edges, the <= 0 form too; which operands
count as <= 0; and the key loop it shortens."""

from __future__ import annotations

import sys
from pathlib import Path

import llsim
import numerics_cases as nc
import numpy as np
import pytest
from llsim import SimDevice
from test_numerics_diff import FLOAT_MATH, _compare

from tilelang import driver
from tilelang.backend import fastmath, lower_gpu
from tilelang.backend.codegen.arith import LN2_HI, nonpositive_exp_args

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs_cases  # noqa: E402

F = np.float32


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """f32 fma: the f32 product is exact in f64, the sum rounded once to f64 then f32 (the double rounding is
    below these tests' tolerance)."""
    with np.errstate(all="ignore"):
        return (np.float64(a) * np.float64(b) + np.float64(c)).astype(F)


def _exp_ln2(x: np.ndarray, err: float, nonpos: bool) -> np.ndarray:
    """`fexp_ln2`'s steps, the MUFU's 2^t off by relative `err`."""
    with np.errstate(all="ignore"):
        t = (x * F(1.4426950408889634)).astype(F)
        corr = _fma(-t, F(LN2_HI), x)
        p = (np.exp2(t.astype(np.float64)) * (1 + err)).astype(F)
        p = np.where(np.abs(p) < 2.0**-126, F(0), p)  # .ftz
        if nonpos:
            return _fma(p, np.fmin(corr, F(1)), p)  # (np.fmin: a NaN operand gives the other, as minnum)
        y = _fma(p, corr, p)
        return np.where(np.isnan(y), p, y)


@pytest.mark.parametrize("nonpos", [False, True])
def test_the_algorithm_keeps_exps_promise(nonpos: bool) -> None:
    impl = fastmath.MATH["exp"]
    rng = np.random.default_rng(7)
    x = rng.uniform(-88, 0 if nonpos else 88, 1_000_000).astype(F)
    want = np.exp(x.astype(np.float64))
    for err in (0.0, 2.0**-22, -(2.0**-22)):  # the MUFU off by its worst error (llsim's `_APPROX_ERR`)
        got = _exp_ln2(x, err, nonpos).astype(np.float64)
        assert np.all(np.abs(got - want) <= impl.atol + impl.rtol * want)
        normal = want > 2.0**-126  # (below, the MUFU's .ftz flushes to 0: the atol)
        assert np.max(np.abs(got - want)[normal] / want[normal]) < 7e-7  # (ln2's rounding: 2.4e-7 at most)
    edges = np.array([0.0, -0.0, -1e-30, -1.0, -87.0, -88.0, -103.0, -104.0, -200.0, -1e30, -np.inf, np.nan]
                     + ([] if nonpos else [1e-30, 1.0, 88.0, 88.7, 89.0, 1e30, np.inf]), F)
    with np.errstate(all="ignore"):
        want = np.exp(edges.astype(np.float64)).astype(F)
    got = _exp_ln2(edges, 0.0, nonpos)
    both_nan = np.isnan(got) & np.isnan(want)
    close = np.abs(got.astype(np.float64) - want) <= 1e-30 + impl.rtol * np.abs(want.astype(np.float64))
    assert np.all(both_nan | close | (got == want)), list(zip(edges, got, want, strict=True))
    assert _exp_ln2(np.array([0.0], F), 0.0, nonpos)[0] == 1.0  # alpha = 1 exactly where the max stayed


@pytest.mark.parametrize("error", [0, 1, -1], ids=["exact", "up", "down"])
@pytest.mark.parametrize("case", [c for c in FLOAT_MATH if c.dtype.value in ("f32", "bf16")], ids=lambda c: c.id)
def test_every_exp_on_this_code_agrees_with_the_interpreter(case: nc.Case, error: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_EXP_LN2", "1")
    monkeypatch.setenv("LLSIM_MEMO", "0")
    monkeypatch.setattr(llsim, "APPROX_ERROR", error)
    k = case.kernel()
    want = nc.run_interp(case, k)
    got = nc.run_sim(case, k, "sm_90a", SimDevice)
    problems = _compare(case, got, want)
    assert not problems, "\n  ".join(problems)


def _attn(kern: str):  # type: ignore[no-untyped-def]
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = ("fn main() { let q = zeros::<f16>([2, 256, 128]); let mut o = zeros::<f16>([2, 256, 128]);"
            f" {kern}::<128, 128, 128>(o.partition([1, 128, 128]), &q, &q, &q, 0.1).sync(); }}\n")
    return next(k for k in driver.compile(src + main, "ir").output if k.name == kern)


def test_the_online_softmax_exps_count_as_nonpositive() -> None:
    """`exp(s - mn)` and `exp(m - mn)` with `mn = maximum(m, s.max(1).reshape([BM, 1]))`, both; not an exp of
    something else."""
    from tilelang.backend.facts import TensorFacts
    from tilelang.backend.gpu import nodes as g
    from tilelang.ir import nodes as ir

    facts = {n: TensorFacts(True, (False, True, True)) for n in "oqkv"}
    gk = lower_gpu(_attn("attn_dot"), "sm_90a", facts)
    exps = [op for op in g.walk(gk.body) if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.EXP]
    got = nonpositive_exp_args(gk.body)
    assert exps and all(op.operands[0].id in got for op in exps)
    src = """
kernel fn e(o: &mut Tensor<f32, [4, 8]>, x: &Tensor<f32, [?, 8]>) {
    let t = x.load_like(o);
    o.store(exp(t - maximum(t, t + 1.0) + 1.0) + exp(t - t.max(0).reshape([1, 8])));
}
fn main() { let x = zeros::<f32>([4, 8]); let mut o = zeros::<f32>([4, 8]); e(o.partition([4, 8]), &x).sync(); }
"""
    k = driver.compile(src, "ir").output[0]
    assert not nonpositive_exp_args(k.body)  # (`+ 1.0` after the difference; a column max over rows)


# hattn2 (2026-12-06): an online softmax's exp (x <= 0 by construction) as ex2.approx(x * log2(e)) with no error
# term (`codegen/arith.fexp_plain`, `fastmath.exp_nonpos_plain`), in every layout; `exp`'s atol 1e-30 -> 1e-18.
def _exp_plain(x: np.ndarray, err: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        t = (x * F(1.4426950408889634)).astype(F)
        p = (np.exp2(t.astype(np.float64)) * (1 + err)).astype(F)
        return np.where(np.abs(p) < 2.0**-126, F(0), p)  # .ftz


def test_the_plain_form_keeps_exps_promise_where_x_is_at_most_0() -> None:
    impl = fastmath.MATH["exp"]
    bits = np.arange(0x80000000, 0xC2B20000, 1009, dtype=np.uint64).astype(np.uint32)  # every f32 in [-89, -0]
    x = bits.view(F)
    x = x[x >= -88.8]
    want = np.exp(x.astype(np.float64))
    normal = want > 2.0**-126
    for err in (0.0, 2.0**-22, -(2.0**-22)):  # the MUFU off by its worst error (llsim's `_APPROX_ERR`)
        got = _exp_plain(x, err).astype(np.float64)
        diff = np.abs(got - want)
        assert np.all(diff <= impl.atol + impl.rtol * want)
        rel = diff[normal] / want[normal]
        assert rel.max() < 4.2e-6  # (the doc's 4.1e-6: the product's rounding at |t| >= 64, log2(e)'s, the MUFU)
        assert np.all(rel[x[normal] >= -29.7] <= 2.02e-6)  # (2e-6 relative where exp(x) >= 1.3e-13)
        assert np.all(diff[want < 1.3e-13] <= 1e-18)
    # the atol is what the form needs: with the old 1e-30 some x in [-88, -30] is off by more than 2e-6
    got = _exp_plain(x, 2.0**-22).astype(np.float64)
    assert not np.all(np.abs(got - want) <= 1e-30 + impl.rtol * want)
    edges = np.array([0.0, -0.0, -1e-30, -1.0, -87.0, -88.0, -103.0, -1e30, -np.inf, np.nan], F)
    with np.errstate(all="ignore"):
        want_e = np.exp(edges.astype(np.float64))
    got_e = _exp_plain(edges, 0.0).astype(np.float64)
    assert np.all((np.isnan(got_e) & np.isnan(want_e)) | (np.abs(got_e - want_e) <= impl.atol + impl.rtol * want_e))
    assert _exp_plain(np.array([0.0, -0.0], F), 0.0).tolist() == [1.0, 1.0]  # alpha = 1 exactly where the max stayed


ROW_SOFTMAX = """
kernel fn rowexp(y: &mut Tensor<f32, [4, 64]>, x: &Tensor<f32, [?, 64]>) {
    let t = x.load_like(y);
    y.store(exp(t - t.max(1).reshape([4, 1])));
}
fn main() { let x = zeros::<f32>([8, 64]); let mut y = zeros::<f32>([8, 64]); rowexp(y.partition([4, 64]), &x).sync(); }
"""


def _rowexp_ptx(monkeypatch, knob: str) -> str:  # type: ignore[no-untyped-def]
    from tilelang.backend import compile_kernel

    monkeypatch.setenv("TILEC_EXP_NONPOS", knob)
    k = driver.compile(ROW_SOFTMAX, "ir").output[0]
    return compile_kernel(k, "sm_90a", None).ptx


def test_a_row_softmax_exp_takes_the_plain_form(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    plain, old = _rowexp_ptx(monkeypatch, "1"), _rowexp_ptx(monkeypatch, "0")
    assert plain.count("ex2.approx.ftz.f32") == old.count("ex2.approx.ftz.f32") > 0
    assert "fma.rn.f32" in old and "fma.rn.f32" not in plain  # (the error term's fmas are gone)


@pytest.mark.parametrize("error", [0, 1, -1], ids=["exact", "up", "down"])
def test_a_row_softmax_exp_in_llsim_within_exps_promise(error: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import tilelang
    from tilelang.dtypes import DType

    monkeypatch.setenv("LLSIM_MEMO", "0")
    monkeypatch.setattr(llsim, "APPROX_ERROR", error)
    k = driver.compile(ROW_SOFTMAX, "ir").output[0]
    rng = np.random.default_rng(11)
    x = (rng.uniform(-100.0, 0.0, (8, 64)) + rng.uniform(-50.0, 50.0, (8, 1))).astype(F)  # differences to -150
    x[0, 3], x[1, 5], x[2, :] = -np.inf, np.nan, -np.inf  # a -inf key, a NaN row, a row of -inf (NaN: inf - inf)
    got = np.full((8, 64), 7.0, F)
    SimDevice("sm_90a").run(k, (2, 1), [got, x], None)
    want = np.zeros((8, 64), F)
    tilelang.compile(ROW_SOFTMAX).rowexp(tilelang.partition(want, [4, 64]), x).sync()
    rtol, atol = fastmath.tolerance("exp", DType.F32)
    g, w = got.astype(np.float64), want.astype(np.float64)
    same_nan = np.isnan(g) == np.isnan(w)
    assert same_nan.all() and np.isnan(w[1]).all() and np.isnan(w[2]).all()
    ok = np.isnan(w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
    assert ok.all(), (g[~ok], w[~ok])


def test_exp_nonpos_plain_not_beside_loads(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_EXP_NONPOS", raising=False)
    assert fastmath.exp_nonpos_plain(False) and not fastmath.exp_nonpos_plain(True)
    monkeypatch.setenv("TILEC_EXP_NONPOS", "all")
    assert fastmath.exp_nonpos_plain(True)
    monkeypatch.setenv("TILEC_EXP_NONPOS", "0")
    assert not fastmath.exp_nonpos_plain(False)


@pytest.mark.heavy  # (two attention compiles, ~6 s)
def test_a_loop_that_loads_a_bias_keeps_the_error_term(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`attn_bias` (the consumers load a bias tile each key block) keeps `fexp_ln2`'s form: the plain one measured
    slower there (H100, call 17: 0.98x -> 0.87x SDPA; `fastmath.exp_nonpos_plain`); "all" gives it the plain."""
    from tilelang.backend import compile_kernel

    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = ("fn main() { let q = zeros::<f16>([2, 256, 64]); let mut o = zeros::<f16>([2, 256, 64]);"
            " let b = zeros::<f32>([256, 256]);"
            " attn_bias::<128, 128, 64>(o.partition([1, 128, 64]), &q, &q, &q, &b, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == "attn_bias")

    from tilelang.backend.facts import TensorFacts

    facts = {**{n: TensorFacts(True, (False, True, True)) for n in "oqkv"}, "bias": TensorFacts(True, (True, True))}

    def ptx(knob: str) -> str:
        monkeypatch.setenv("TILEC_EXP_NONPOS", knob)
        return compile_kernel(k, "sm_90a", facts).ptx

    assert ptx("1") == ptx("0")
