"""`#[hints(fast_math = true)]` on a kernel: its f32 exp, sigmoid, tanh and division by the GPU's approximate forms
(`fastmath.FAST_MATH`: ex2.approx of x log2(e) with no error term, rcp.approx of 1 + exp(-x), tanh.approx,
div.full), f16/bf16 computed in f32 and rounded once as always; the interpreter unchanged. Held to the documented
bounds: the hint is checked (a value other than `true` / `false` is E0203 with a help), the PTX takes the forms
and loses the precise ones, the numerics table's unary/binary kernels run in llsim at sm_90a with the hint and
every approximate instruction off by its worst error both ways (`llsim.APPROX_ERROR`) within `FAST_MATH`'s
tolerances of the interpreter, the exp form in NumPy on dense ranges of both signs, and the interpreter gives
the same bits with the hint and without."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import llsim
import numerics_cases as nc
import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import compile_kernel, fastmath
from tilelang.dtypes import DType
from tilelang.ir.printer import print_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fast_math_check  # noqa: E402  (the GPU check's kernel is this file's)

F = np.float32

MAIN = """
fn main() {
    let x = ones::<f32>([512]);
    let mut e = zeros::<f32>([512]);
    let mut s = zeros::<f32>([512]);
    let mut t = zeros::<f32>([512]);
    let mut d = zeros::<f32>([512]);
    act(e.partition([256]), s.partition([256]), t.partition([256]), d.partition([256]), &x, &x).sync();
}
"""


def _src(hint: str) -> str:
    """benchmarks/fast_math_check.py's kernel `act` on 256-element tiles under `hint`, with a `main` launching it."""
    return fast_math_check.act(hint, 256) + MAIN


def _kernel(hint: str = "fast_math = true"):  # type: ignore[no-untyped-def]
    return driver.compile(_src(hint), "ir").output[0]


def test_the_hint_is_checked() -> None:
    assert _kernel().fast_math and " fast_math {" in print_kernel(_kernel()).splitlines()[0]
    assert not _kernel("fast_math = false").fast_math and not _kernel("num_warps = 4").fast_math
    for bad, help in (("fast_math = 1", "write `fast_math = true`"), ("fast_math", "write `fast_math = true`"),
                      ("fast_math = yes", "write `fast_math = true`")):
        diags = driver.compile(_src(bad), "ir").context.sink.diagnostics
        assert [d.code for d in diags] == ["E0203"] and help in diags[0].help, (bad, diags)


def test_the_ptx_takes_the_fast_forms() -> None:
    fast = compile_kernel(_kernel(), "sm_90a", None).ptx
    plain = compile_kernel(_kernel("num_warps = 4"), "sm_90a", None).ptx
    assert "tanh.approx.f32" in fast and "tanh.approx" not in plain
    assert "div.full.f32" in fast and "div.full" not in plain and "div.rn.f32" in plain
    assert "rcp.approx.ftz.f32" in fast and "div.rn.f32" not in fast  # (sigmoid's 1 / den too)
    assert "fma.rn.f32" in plain and "fma.rn.f32" not in fast  # (exp's error term; tanh's polynomial)
    # an element: exp's and sigmoid's ex2 and the tanh (no exp in tanh now)
    assert fast.count("ex2.approx.ftz.f32") == 2 * fast.count("tanh.approx.f32") > 0


def test_the_interpreter_ignores_the_hint() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-90, 90, 512).astype(F)
    y = rng.uniform(-4, 4, 512).astype(F)
    outs = []
    for hint in ("fast_math = true", "num_warps = 4"):
        o = [np.zeros(512, F) for _ in range(4)]
        tilelang.compile(_src(hint)).act(*(tilelang.partition(a, [256]) for a in o), x, y).sync()
        outs.append(o)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(*outs, strict=True))


def _exp_plain(x: np.ndarray, err: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        t = (x * F(1.4426950408889634)).astype(F)
        p = (np.exp2(t.astype(np.float64)) * (1 + err)).astype(F)
        return np.where(np.abs(p) < 2.0**-126, F(0), p)  # .ftz


@pytest.mark.parametrize("sign", [-1, 1])
def test_the_exp_form_within_fast_maths_bound(sign: int) -> None:
    impl = fastmath.FAST_MATH["exp"]
    bits = np.arange(0, 0x42B20000, 1009, dtype=np.uint64).astype(np.uint32)  # every 1009th f32 in [0, 89]
    x = (bits.view(F) * F(sign)).astype(F)
    x = x[np.abs(x) < 88.7]
    want = np.exp(x.astype(np.float64))
    for err in (0.0, 2.0**-22, -(2.0**-22)):
        got = _exp_plain(x, err).astype(np.float64)
        assert np.all(np.abs(got - want) <= impl.atol + impl.rtol * want)
    assert np.max(np.abs(_exp_plain(x, 2.0**-22) - want) / want) > 3.5e-6  # (the bound is not loose)


def _fast_cases() -> list[object]:
    """The numerics table's unary and binary kernels; f16/bf16 (the same f32 code, rounded: 2-10 s each in llsim)
    are `heavy`."""
    dts = (DType.F32, DType.BF16, DType.F16)
    return [pytest.param(c, id=c.id, marks=() if c.dtype is DType.F32 else (pytest.mark.heavy,))
            for c in nc.cases() if c.group in ("unary", "binary") and c.dtype in dts]


FAST_OPS = {"exp", "sigmoid", "tanh", "div"}


@pytest.mark.parametrize("error", [0, 1, -1], ids=["exact", "up", "down"])
@pytest.mark.parametrize("case", _fast_cases())
def test_fast_math_in_llsim_within_its_tolerances(case: nc.Case, error: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LLSIM_MEMO", "0")
    monkeypatch.setattr(llsim, "APPROX_ERROR", error)
    tol = fastmath.tolerance
    monkeypatch.setattr(nc.fastmath, "tolerance", lambda op, dt: tol(op, dt, True))
    k = dataclasses.replace(case.kernel(), fast_math=True)
    want = nc.run_interp(case, k)
    got = nc.run_sim(case, k, "sm_90a", SimDevice)
    x = [np.asarray(a, np.float64) for a in case.inputs]
    problems = []
    for op, g, w in zip(case.ops, got, want, strict=True):
        if getattr(op, "value", "") not in FAST_OPS:
            continue
        g, w = np.asarray(g, np.float64).copy(), np.asarray(w, np.float64).copy()
        with np.errstate(all="ignore"):
            outside = np.zeros(w.shape, bool)
            if op.value == "exp":
                outside = np.abs(x[0]) >= 88.0  # (the domain)
            if op.value == "div":  # (normal operands and results: a subnormal may flush)
                outside = ~(_normal_or_special(x[0]) & _normal_or_special(x[1]) & _normal_or_special(w))
        g[outside] = w[outside] = 0
        problems += nc.disagreements(case, op, g, w, case.inputs)
    assert not problems, "\n  ".join(problems)


def _normal_or_special(v: np.ndarray) -> np.ndarray:
    a = np.abs(v)
    return (a == 0) | ~np.isfinite(a) | (a >= 2.0**-126)


@pytest.mark.heavy  # (3 s; the forms are covered by the tests above)
def test_a_hinted_user_attention_loop_in_llsim(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The user's flash loop (`cliffs_cases.ATTN`) hinted: the attention pipeline still takes it, its note says
    `fast_math`, and its output is attention's within f16's tolerance (llsim, sm_90a, the MUFU off by its worst
    error)."""
    from tilelang.backend import explain, lower_gpu
    from tilelang.backend.facts import TensorFacts

    import cliffs_cases

    monkeypatch.setattr(llsim, "APPROX_ERROR", 1)
    src = "#[hints(fast_math = true)]\n" + cliffs_cases._elem(cliffs_cases.ATTN, "f16").lstrip()
    assert src.startswith("#[hints(fast_math = true)]\nkernel fn attn<")
    main = ("fn main() { let q = zeros::<f16>([2, 256, 64]); let mut o = zeros::<f16>([2, 256, 64]);"
            " attn::<64, 64, 64>(o.partition([1, 64, 64]), &q, &q, &q, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == "attn")
    s, bh, d = 130, 2, 64
    facts = {n: TensorFacts(True, (False, False, True)) for n in "oqkv"}
    gk = lower_gpu(k, "sm_90a", facts)
    assert k.fast_math and explain.path_of(gk) == "attention-pipeline"
    assert any("ex2.approx of it, `fast_math`" in n.message for n in gk.notes)
    rng = np.random.default_rng(5)
    q, kk, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    o = np.full((bh, s, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, (bh, 3), [o, q, kk, v, scale], facts)
    for b in range(bh):
        sc = q[b].astype(np.float64) @ kk[b].astype(np.float64).T * float(scale)
        p = np.exp(sc - sc.max(1, keepdims=True))
        ref = (p / p.sum(1, keepdims=True)) @ v[b].astype(np.float64)
        np.testing.assert_allclose(o[b].astype(np.float64), ref, atol=3e-3, rtol=1e-2)
