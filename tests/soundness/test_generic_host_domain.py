"""A generic host function is checked once, for every `T`; an operator its
body applies to `T` that the instance's type does not have (`v << 1` with
`T = f32`, `a + b` with `T = bool`) was run anyway by the host evaluator:
Python's `int()` truncated the float (`sh(3.5)` gave 6.0), `bool + bool` came
out `true`, `!2.5` was -3.0, `arange::<T>` made `bool`s, a sum of `bool`s was `true`
(along an axis: an `i64` tensor where the type says `bool`), and `&` of
two floats was an internal error (the fuzzer, seed 163 case 6414). A kernel's instance is refused by its lowering
(E0204, `ir.verify.domain_problem`); the host refuses the same now, at the
operator (hostile review, round 10)."""

from __future__ import annotations

import io

import pytest

from tilelang.diagnostics.model import TileError
from tilelang.run import CheckFailed, execute

FNS = """
fn sh<T>(v: T) -> T { v << (1 as T) }
fn band<T>(v: T) -> T { v & (3 as T) }
fn add<T>(a: T, b: T) -> T { a + b }
fn neg<T>(v: T) -> T { -v }
fn inv<T>(v: T) -> T { !v }
fn tsh<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x << x }
fn tadd<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x + x }
fn total<T>(x: &Tensor<T, [?]>) -> T { x.sum() }
fn cols<T>(x: &Tensor<T, [?, ?]>) -> Tensor<T, [?]> { x.sum(0) }
fn count<T>(n: i32) -> Tensor<T, [?]> { arange::<T>(n) }
fn most<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { maximum(x, x) }
fn least<T>(v: T) -> T { minimum(v, v) }
fn scan<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { cumsum(x, 0) }
fn power<T>(a: T, b: T) -> T { pow(a, b) }
fn size<T>(v: T) -> T { abs(v) }
fn tneg<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { -x }
fn less<T>(a: T, b: T) -> bool { a < b }
"""


def _run(body: str) -> str:
    out = io.StringIO()
    execute(FNS + "fn main() {\n    " + body + "\n}\n", "cpu", out=out, name="g.tile")
    return out.getvalue().strip()


@pytest.mark.parametrize(("body", "message"), [
    ("print(sh(3.5));", "`<<` is not defined on `f32`"),
    ("print(band(0.5f16));", "`&` is not defined on `f16`"),
    ("print(add(true, true));", "`+` is not defined on `bool`"),
    ("print(neg(true));", "`-` is not defined on `bool`"),
    ("print(inv(2.5));", "`!` is not defined on `f32`"),
    ("print(tsh(&full::<f32>([2], 1.0)));", "`<<` is not defined on `f32` tensors"),
    ("print(tadd(&full::<bool>([2], true)));", "`+` is not defined on `bool` tensors"),
    # `true` (3 trues summed, then made a `bool`), and a `Tensor<T, ..>` of `i64` for `T = bool`
    ("print(total(&full::<bool>([3], true)));", "`sum` of `bool` elements"),
    ("print(cols(&full::<bool>([3, 2], true)));", "`sum` of `bool` elements"),
    ("print(count::<bool>(3));", "`arange` makes numbers, not `bool` values"),
    ("print(most(&full::<bool>([2], true)));", "`maximum` of `bool` values"),
    ("print(least(true));", "`minimum` of `bool` values"),
    ("print(scan(&full::<bool>([2], true)));", "cannot `cumsum` a `bool` tensor"),
    ("print(power(3, 3));", "`pow` is not defined on `i32`"),
    ("print(size(true));", "`abs` is not defined on `bool`"),
    # hrev11: unsigned negation, refused for a concrete `u32` and in a kernel's instance, wrapped here
    ("print(neg(3u32));", "cannot negate `u32`"),
    ("print(tneg(&full::<u8>([2], 3u8)));", "cannot negate `u8` tensors"),
    ("print(less(false, true));", "`<` is not defined on `bool`"),  # an order of `bool`s, as in kernels
])
def test_an_instance_outside_the_operators_domain_is_refused(body: str, message: str) -> None:
    # at `tilec check` (round 14 the scalar operators, round 15 the rest: `sema/host_instances.py`)
    with pytest.raises((TileError, CheckFailed)) as e:
        _run(body)
    (d,) = e.value.diagnostics
    assert d.code == "E0204" and message in d.message, d.message
    assert d.primary_span is not None and d.help


def test_instances_inside_it_run() -> None:
    assert _run("print(sh(5), band(7), add(2, 3), add(1.5, 2.0), band(true), neg(2.5), inv(5), inv(true));") \
        == "10 3 5 3.5 true -2.5 -6 false"
    assert _run("print(tsh(&full::<i32>([2], 1)), tadd(&full::<i32>([2], 1)));") \
        == "Tensor<i32, [2]> [2, 2] Tensor<i32, [2]> [2, 2]"
    assert _run("print(total(&full::<i32>([3], 2)), cols(&full::<i8>([3, 2], 1)), count::<u8>(3));") \
        == "6 Tensor<i8, [2]> [3, 3] Tensor<u8, [3]> [0, 1, 2]"
    assert _run("print(most(&full::<i8>([2], 3)), least(2.5), scan(&full::<u8>([2], 3)));") \
        == "Tensor<i8, [2]> [3, 3] 2.5 Tensor<u8, [2]> [3, 6]"
    assert _run("print(power(2.0, 3.0), size(-3), size(-2.5));") == "8.0 3 2.5"
    assert _run("print(neg(3i8), tneg(&full::<i16>([2], 3i16)), tneg(&full::<f32>([1], 0.5)));") \
        == "-3 Tensor<i16, [2]> [-3, -3] Tensor<f32, [1]> [-0.5]"


def test_from_python_too() -> None:
    import numpy as np

    import tilelang

    mod = tilelang.compile(FNS)
    with pytest.raises(tilelang.TileError, match="E0204"):
        mod.sh(np.float32(3.5))
    with pytest.raises(tilelang.TileError, match="E0204"):
        mod.total(np.ones(3, np.bool_))
    assert mod.sh(np.int32(5)) == 10 and mod.total(np.ones(3, np.int32)) == 3
