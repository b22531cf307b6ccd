"""The standard library (`stdlib/std/*.tile`) computes what its comments say:
each device function runs in a kernel on the CPU interpreter and is compared
with NumPy."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tilelang import run

PROGRAM = """
use std::nn::*;
use std::math::*;

kernel fn apply<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {{
    let t = x.load_like(y);
    y.store({expr});
}}

fn main() {{
    let x = load_npy("{inp}");
    let mut y = zeros::<f32>([16, 32]);
    apply(y.partition([8, 32]), &x).sync();
    y.save_npy("{out}");
}}
"""


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


CASES = {
    "softmax(t)": _softmax,
    "log_softmax(t)": lambda x: np.log(_softmax(x)),
    "layernorm(t, 1e-5)": lambda x: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
    "rmsnorm(t, 1e-6)": lambda x: x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6),
    "gelu(t)": lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3))),
    "silu(t)": lambda x: x / (1 + np.exp(-x)),
    "relu(t)": lambda x: np.maximum(x, 0),
    "clamp(t, -0.5, 0.5)": lambda x: np.clip(x, -0.5, 0.5),
    "lerp(t, t * 2.0, 0.25)": lambda x: x + (2 * x - x) * 0.25,
    "t * (cdiv(10, 3) as f32) + (round_up(10, 4) + min_i32(2, 5) + max_i32(2, 5)) as f32":
        lambda x: x * 4 + (12 + 2 + 5),
    "t * PI + E - SQRT_2 * LN_2": lambda x: x * np.pi + np.e - np.sqrt(2) * np.log(2),
}


@pytest.mark.parametrize("expr", list(CASES), ids=[e.split("(")[0] for e in CASES])
def test_stdlib_function_matches_numpy(expr: str, tmp_path: Path) -> None:
    x = np.random.default_rng(7).standard_normal((16, 32)).astype(np.float32)
    inp, out = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(inp, x)
    src = PROGRAM.format(expr=expr, inp=inp.as_posix(), out=out.as_posix())
    run.execute(src, device="cpu", out=io.StringIO(), name=str(tmp_path / "t.tile"))
    np.testing.assert_allclose(np.load(out), CASES[expr](x.astype(np.float64)), rtol=2e-5, atol=2e-5)


def test_the_math_constants_named_in_help_are_std_math_s() -> None:
    """`MATH_CONSTANTS` (named by the help of `f32::PI` and
    `std::f32::consts::PI`) are exactly the constants `std::math` defines,
    and each is the value its name says."""
    import math
    import re

    from tilelang.intrinsics.constants import MATH_CONSTANTS

    text = (Path(__file__).resolve().parents[2] / "stdlib" / "std" / "math.tile").read_text()
    assert tuple(re.findall(r"^const (\w+)", text, re.M)) == MATH_CONSTANTS
    out = io.StringIO()
    run.execute("use std::math::*;\nfn main() { print(" + ", ".join(MATH_CONSTANTS) + "); }\n",
                device="cpu", out=out)
    want = [math.pi, math.e, math.sqrt(2), math.log(2), 1 / math.log(2)]
    assert [float(v) for v in out.getvalue().split()] == pytest.approx(want, rel=1e-7)  # printed as f32
