"""Unit tests of `tilelang.sema.types`: symbolic dims, broadcasting, substitution."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tilelang.dtypes import DType
from tilelang.sema.types import (
    Dim,
    RefT,
    ScalarT,
    TensorT,
    TileT,
    TypeParam,
    broadcast_shapes,
    const_shape,
    eval_dim,
    shape_of,
    shape_str,
    subst_type,
)

B, N = Dim.var("B"), Dim.var("N")


def test_dims_normalise_commutative_products() -> None:
    assert Dim.const(2) * B == B * 2
    assert (B + 1) * 2 == B * 2 + 2
    assert B + N == N + B
    assert B * N == N * B
    assert Dim.const(0) == B - B


def test_exact_division_simplifies_and_inexact_stays_opaque() -> None:
    assert (B * 4).floordiv(2) == B * 2
    assert (B * 2).floordiv(B * 2) == Dim.const(1)
    q = B.floordiv(4)
    assert not q.is_const and q != B
    assert (q * 4) != B  # B / 4 * 4 is not B for B = 5
    assert (B * 8).mod(4) == Dim.const(0)


def test_constant_folding_truncates_toward_zero() -> None:
    assert Dim.const(7).floordiv(2).const_value == 3
    assert Dim.const(-7).floordiv(2).const_value == -3
    assert Dim.const(-7).mod(2).const_value == -1


def test_eval_dim_and_missing_symbol() -> None:
    d = (B * 4).floordiv(3) + B.mod(3) + N
    assert eval_dim(d, {"B": 7, "N": 1}) == 9 + 1 + 1
    assert eval_dim(12, {}) == 12
    with pytest.raises(KeyError):
        eval_dim(B, {})
    with pytest.raises(ValueError):
        eval_dim(None, {})


def test_dim_display() -> None:
    assert str(B * 2 + 1) == "B * 2 + 1"
    assert str(Dim.const(0)) == "0"
    assert str(-B) == "-B"
    assert B.as_symbol() == "B" and (B * 2).as_symbol() is None
    assert shape_str((B, None, Dim.const(64))) == "[B, ?, 64]"


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(1, 9), st.integers(-5, 5))
def test_polynomials_agree_with_integers(b: int, n: int, k: int, c: int) -> None:
    exprs = [
        (B + N) * k - c,
        (B * k + N * c) * (B - N),
        (B * k).floordiv(k) + c,
    ]
    for d in exprs:
        v = eval_dim(d, {"B": b, "N": n})
        assert isinstance(v, int)
    assert eval_dim((B + N) * k - c, {"B": b, "N": n}) == (b + n) * k - c
    assert eval_dim((B * k).floordiv(k), {"B": b}) == b


def test_broadcast_numpy_rules() -> None:
    s = shape_of
    assert broadcast_shapes(s(64, 1), s(1, 32)) == s(64, 32)
    assert broadcast_shapes(s(64, 32), s(32)) == s(64, 32)
    assert broadcast_shapes((), s(8)) == s(8)
    assert broadcast_shapes(s(64, 32), s(32, 64)) is None
    assert broadcast_shapes((B, N), (B, Dim.const(1))) == (B, N)
    assert broadcast_shapes((B, N), (N,)) == (B, N)
    assert broadcast_shapes((B,), (N,)) is None  # unequal symbols never broadcast
    assert broadcast_shapes((None,), s(8)) == s(8)


def test_subst_type_specialises_dims_and_type_params() -> None:
    t = TileT(TypeParam("T"), (B * 2, N.floordiv(4)))
    assert subst_type(t, {"B": 3, "N": 64, "T": DType.F16}) == TileT(DType.F16, shape_of(6, 16))
    r = RefT(True, TensorT(DType.F32, (B, None)))
    assert subst_type(r, {"B": Dim.var("BM")}) == RefT(True, TensorT(DType.F32, (Dim.var("BM"), None)))
    assert subst_type(ScalarT(TypeParam("T")), {"T": DType.I8}) == ScalarT(DType.I8)
    assert const_shape(subst_type(t, {"B": 1, "N": 8, "T": DType.F32}).shape) == (2, 2)  # type: ignore[union-attr]
    assert const_shape((B,)) is None


def test_type_display() -> None:
    assert str(TileT(DType.F32, (B, Dim.const(64)))) == "Tile<f32, [B, 64]>"
    assert str(RefT(True, TensorT(DType.F16, (None,)))) == "&mut Tensor<f16, [?]>"
    assert str(TensorT(None, None)) == "Tensor<?, [..]>"
