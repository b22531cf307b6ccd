"""Arithmetic of an integer literal and a float literal in a kernel (hostile
review, round 13). `1 + 0.5` type-checks (an untyped integer meets an untyped
float: the sum is a float, `f32` by default) but the integer literal, or an
untyped `let n = 3;`, defaults to `i32` on its own, and the lowering unified
the operands to the first one's type: the `0.5` became an `i32` 0. A stored
`full::<f32>([1], 1 + 0.5)` was 1.0 and `n * 0.5` 0.0 (silently, on the
interpreter and the GPU path alike), and where the `i32` sum met an `f32` the
kernel was an internal error (ill-formed IR). The host computes each as the
float it is typed (1.5); the kernel now does too (`operators.float_operands`)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tilelang.run import execute

HERE = Path(__file__).resolve().parent

KERNEL = """
kernel fn k(z: &mut Tensor<f32, [4]>) {{
    {pre}
    z.store(full::<f32>([4], c) + z.load() * c);
}}
fn h() -> f32 {{
    {pre}
    c
}}
fn main() {{
    let mut z = full::<f32>([4], 10.0);
    k(z.partition([4])).sync();
    print(z.max(), h() + 10.0 * h());
}}
"""

FORMS = [
    "let c = 1 + 0.5;",
    "let c = 3 * 0.5;",
    "let n = 3; let c = n * 0.5;",
    "let mut n = 3; for i in 0..4 { n = n + 1; } let c = n + 0.5;",
    "let c = (1 << 3) + 0.5;",
    "let c = 7 / 2 * 1.0;",
    "let c = 256 / 0.5;",
    "let c = 3 % 2.5;",
    "let c = -(1 + 0.5);",
    "let c = 2 * (1 + 0.5);",
    "let c = if 0 < 1 { 1 + 0.5 } else { 2.0 };",
    "let c = maximum(1 + 0.5, 0.0);",
]


def _printed(src: str, device: object = None, monkeypatch: pytest.MonkeyPatch | None = None) -> list[str]:
    import tilelang.run as run

    if device is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(run, "make_device", lambda choice, o: device)
    out = io.StringIO()
    execute(src, "cpu", out=out, name="m.tile")
    return out.getvalue().split()


@pytest.mark.parametrize("pre", FORMS)
def test_the_kernel_computes_what_the_host_computes(pre: str) -> None:
    kernel, host = _printed(KERNEL.format(pre=pre))
    assert float(kernel) == float(host), (kernel, host)


def test_the_gpu_path_too(monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(HERE.parent / "backend"))
    import llsim

    src = KERNEL.format(pre="let n = 3; let c = n * 0.5;")
    assert _printed(src) == ["16.5", "16.5"]
    assert _printed(src, llsim.sim_runtime_device("sm_80"), monkeypatch) == ["16.5", "16.5"]


def test_an_untyped_let_takes_its_uses_type_on_the_host_as_in_kernels() -> None:
    """`(a - b) as f32` of `let a = 16777217; let b = 1;`: a cast is a context, so
    the checker types the uses `f32` and a kernel subtracts in `f32`
    (16777215); the host subtracted the `let`s' `i32` values and converted the
    result (16777216), where the literal form gives 16777215 on both."""
    src = """
kernel fn k(z: &mut Tensor<f32, [1]>) {
    let a = 16777217; let b = 1;
    z.store(zeros::<f32>([1]) + ((a - b) as f32));
}
fn main() {
    let mut z = zeros::<f32>([1]);
    k(z.partition([1])).sync();
    let a = 16777217; let b = 1;
    print(z.sum(), (a - b) as f32, (16777217 - 1) as f32);
}
"""
    assert _printed(src) == ["16777215.0"] * 3


def test_an_untyped_float_let_read_as_f16() -> None:
    """`let c = 2.0 + 1e3;` (an `f32` sum of untyped literals) read in `x + c`
    of an `f16` `x`: the checker types the read `f16`; a kernel kept the `f32`
    value and the sum was an ill-formed-IR internal error (the concrete
    differential, `benchmarks/generic_diff.py --concrete`, seed 11)."""
    src = """
kernel fn k(z: &mut Tensor<f16, [1]>) {
    let x = z.load().item();
    let c = 2.0 + 1e3;
    z.store(zeros::<f16>([1]) + (x + c));
}
fn f(x: f16) -> f16 {
    let c = 2.0 + 1e3;
    x + c
}
fn main() {
    let mut z = full::<f16>([1], 1.5);
    k(z.partition([1])).sync();
    print(z.sum(), f(1.5));
}
"""
    assert _printed(src) == ["1003.5", "1003.5"]
