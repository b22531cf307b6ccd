"""Differential fuzzing of lowering + interpreter: random element-wise
expressions over tiles, a scalar parameter and untyped literals, written in
Tile, checked, lowered and interpreted, against the same expression in NumPy.

NumPy's f32 and f16 arithmetic rounds after every operation exactly as the IR
semantics say (f16 math computed in f32 and rounded once), so results must be
bit-identical (NaNs in the same places)."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.interp import run_kernel
from tilelang.ir.lower import lower_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

# An expression is (tile source, numpy function of (t, u, s, dtype), has_tile).
LEAVES = [
    ("t", lambda t, u, s, d: t, True),
    ("u", lambda t, u, s, d: u, True),
    ("s", lambda t, u, s, d: s, False),
    ("2.5", lambda t, u, s, d: d(2.5), False),
    ("0.5", lambda t, u, s, d: d(0.5), False),
]
BINARY = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
}
CALL2 = {"maximum": np.maximum, "minimum": np.minimum}
UNARY = {"abs": np.abs, "exp": np.exp, "neg": np.negative}


def _is_literal(src: str) -> bool:
    return src in ("2.5", "0.5")


@st.composite
def exprs(draw, depth: int = 0):  # type: ignore[no-untyped-def]
    if depth >= 3 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES))
    kind = draw(st.sampled_from(["bin", "call2", "unary", "where"]))
    a = draw(exprs(depth + 1))
    if kind == "unary":
        name = draw(st.sampled_from(sorted(UNARY)))
        if _is_literal(a[0]):
            a = LEAVES[0]
        f = UNARY[name]
        src = f"-({a[0]})" if name == "neg" else f"{name}({a[0]})"
        return (src, lambda t, u, s, d, a=a, f=f: f(a[1](t, u, s, d)), a[2])
    b = draw(exprs(depth + 1))
    if _is_literal(a[0]) and _is_literal(b[0]):
        b = LEAVES[1]  # literal-literal would fold in f64 before rounding
    if kind == "bin":
        op = draw(st.sampled_from(sorted(BINARY)))
        f = BINARY[op]
        return (f"({a[0]} {op} {b[0]})",
                lambda t, u, s, d, a=a, b=b, f=f: f(a[1](t, u, s, d), b[1](t, u, s, d)),
                a[2] or b[2])
    if kind == "call2":
        name = draw(st.sampled_from(sorted(CALL2)))
        f = CALL2[name]
        return (f"{name}({a[0]}, {b[0]})",
                lambda t, u, s, d, a=a, b=b, f=f: f(a[1](t, u, s, d), b[1](t, u, s, d)),
                a[2] or b[2])
    # where(a > b, a, b): the comparison and the selection broadcast together
    return (f"where({a[0]} > {b[0]}, {a[0]}, {b[0]})",
            lambda t, u, s, d, a=a, b=b: np.where(a[1](t, u, s, d) > b[1](t, u, s, d),
                                                  a[1](t, u, s, d), b[1](t, u, s, d)),
            a[2] or b[2])


def lower_expr(src: str, dtype: str):  # type: ignore[no-untyped-def]
    text = f"""
kernel fn k<const B: i32>(z: &mut Tensor<{dtype}, [B]>, x: &Tensor<{dtype}, [?]>,
                          y: &Tensor<{dtype}, [?]>, s: {dtype}) {{
    let t = x.load_like(z);
    let u = y.load_like(z);
    z.store({src});
}}
"""
    sm = SourceMap()
    f = sm.add("fuzz.tile", text)
    sink = DiagnosticSink()
    prog = check_program(parse(f, sink), sm, sink)
    assert not sink.has_errors, (src, [d.message for d in sink.diagnostics])
    return lower_kernel(prog, "k", {"B": 16})


@settings(max_examples=int(os.environ.get("TILE_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(e=exprs(), dtype=st.sampled_from(["f32", "f16"]), n=st.integers(1, 40),
       seed=st.integers(0, 2**16), mode=st.sampled_from(["block", "vector"]))
def test_random_expressions_match_numpy(e, dtype: str, n: int, seed: int, mode: str) -> None:  # type: ignore[no-untyped-def]
    src, fn, has_tile = e
    if not has_tile:
        src, fn = f"({src}) + t", (lambda t, u, s, d, f0=fn: f0(t, u, s, d) + t)
    np_dt = np.float32 if dtype == "f32" else np.float16
    kernel = lower_expr(src, dtype)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 3).astype(np_dt)
    y = (rng.standard_normal(n) * 3).astype(np_dt)
    s = np_dt(rng.standard_normal() * 3)
    z = np.zeros(n, np_dt)
    run_kernel(kernel, (-(-n // 16),), [z, x, y, s], mode=mode)
    with np.errstate(all="ignore"):
        # NumPy's f16 loops also compute in f32 and round each result once
        ref = fn(x, y, s, np_dt)
    np.testing.assert_array_equal(z, np.broadcast_to(ref, z.shape).astype(np_dt), err_msg=src)
