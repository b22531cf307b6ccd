"""The verifier rejects ill-formed IR; the printer's text is canonical."""

from __future__ import annotations

import pytest

from tilelang.diagnostics.model import ICE
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir import samples
from tilelang.ir.builder import Builder
from tilelang.ir.printer import print_kernel
from tilelang.ir.verify import check_kernel, verify_kernel

F32, I32 = DType.F32, DType.I32


def T(dt: DType, *shape: int) -> ir.Type:
    return ir.Type(dt, tuple(shape))


def V(i: int, dt: DType, *shape: int) -> ir.Value:
    return ir.Value(i, T(dt, *shape))


def kernel(*ops: ir.Op, params: tuple[ir.Param, ...] = ()) -> ir.Kernel:
    return ir.Kernel("k", params, ir.Region((), (*ops, ir.Yield())))


def problems(*ops: ir.Op, params: tuple[ir.Param, ...] = ()) -> str:
    return "\n".join(check_kernel(kernel(*ops, params=params)))


X = ir.TensorParam("x", F32, 1, False, None, (None,))


def test_use_before_def_and_double_def() -> None:
    a, b = V(0, F32, 4), V(1, F32, 4)
    assert "used before its definition" in problems(ir.Elementwise(b, ir.ElemOp.ADD, (a, a)))
    assert "defined twice" in problems(ir.Const(a, 1.0), ir.Const(a, 2.0))


def test_values_do_not_escape_regions() -> None:
    lo = V(0, I32)
    inner = V(2, I32)
    body = ir.Region((V(1, I32),), (ir.Const(inner, 1), ir.Yield()))
    loop = ir.For((), lo, lo, lo, (), body)
    out = problems(ir.Const(lo, 0), loop, ir.Elementwise(V(3, I32), ir.ElemOp.ADD, (inner, inner)))
    assert "outside its region" in out


def test_region_must_end_with_yield() -> None:
    c = V(0, DType.BOOL)
    bad = ir.If((), c, ir.Region((), ()), ir.Region((), (ir.Yield(),)))
    assert "does not end with `yield`" in problems(ir.Const(c, True), bad)


def test_yield_types_checked() -> None:
    c, one = V(0, DType.BOOL), V(1, F32)
    res = V(2, I32)
    t = ir.Region((), (ir.Yield((one,)),))
    op = ir.If((res,), c, t, t)
    assert "yields (f32)" in problems(ir.Const(c, True), ir.Const(one, 1.0), op)


def test_shape_and_dtype_rules() -> None:
    a, b = V(0, F32, 4), V(1, F32, 8)
    assert "broadcast explicitly" in problems(
        ir.Const(a, 1.0), ir.Const(b, 1.0), ir.Elementwise(V(2, F32, 8), ir.ElemOp.ADD, (a, b)))
    i = V(3, I32, 4)
    assert "dtypes differ" in problems(
        ir.Const(a, 1.0), ir.Const(i, 1), ir.Elementwise(V(4, F32, 4), ir.ElemOp.ADD, (a, i)))
    assert "needs a float" in problems(ir.Const(i, 1), ir.Elementwise(V(5, I32, 4), ir.ElemOp.EXP, (i,)))
    assert "needs an integer" in problems(
        ir.Const(a, 1.0), ir.Elementwise(V(6, F32, 4), ir.ElemOp.SHL, (a, a)))
    assert "cannot broadcast" in problems(ir.Const(b, 1.0), ir.Broadcast(V(7, F32, 4, 4), b))
    assert "cannot reshape" in problems(ir.Const(b, 1.0), ir.Reshape(V(8, F32, 3, 3), b))
    assert "does not fit dtype" in problems(ir.Const(V(9, I32), 1.5))


def test_memory_ops_checked() -> None:
    off = V(0, I32)
    assert "no tensor parameter" in problems(ir.Const(off, 0), ir.Load(V(1, F32, 4), "nope", (off,)))
    assert "2 offsets" in problems(ir.Const(off, 0), ir.Load(V(1, F32, 4), "x", (off, off)),
                                   params=(X,))
    assert "dtype i32" in problems(ir.Const(off, 0), ir.Load(V(1, I32, 4), "x", (off,)),
                                   params=(X,))
    m = V(2, DType.BOOL, 8)
    assert "mask must be" in problems(ir.Const(off, 0), ir.Const(m, True),
                                      ir.Load(V(1, F32, 4), "x", (off,), mask=m), params=(X,))


def test_mma_shapes() -> None:
    a, b, c = V(0, DType.F16, 16, 8), V(1, DType.F16, 16, 8), V(2, F32, 16, 8)
    out = problems(ir.Const(a, 0.0), ir.Const(b, 0.0), ir.Const(c, 0.0), ir.Mma(V(3, F32, 16, 8), a, b, c))
    assert "do not fit" in out


def test_verify_kernel_raises_ice_with_text() -> None:
    with pytest.raises(ICE, match="ill-formed IR"):
        verify_kernel(kernel(ir.Const(V(0, I32), 1.5)))


def test_printer_is_canonical_over_ids() -> None:
    def build(offset: int) -> ir.Kernel:
        b = Builder("k")
        b._next_id = offset  # a different id allocation must print the same
        b.tensor_param("z", F32, 1, mutable=True, tile_shape=(8,))
        n = b.scalar_param("n", I32)
        t = b.const(1.0, F32, (8,))
        with b.for_(b.const(0, I32), n, b.const(1, I32), inits=(t,)) as loop:
            _, acc = loop.args
            b.yield_(b.add(acc, acc))
        b.store("z", (b.block_id(0),), loop.results[0])
        return b.finish()

    assert print_kernel(build(0)) == print_kernel(build(1000))


def test_printer_golden_vector_add() -> None:
    assert print_kernel(samples.vector_add(1024)) == (
        "kernel add<B = 1024>(@z: &mut f32[?] tile [1024], @x: &f32[?], @y: &f32[?]) "
        "grid 1 warps 4 stages 2 {\n"
        "  %pid.0 = block_id 0 : i32\n"
        "  %1 = const 1024 : i32\n"
        "  %2 = mul %pid.0, %1 : i32\n"
        "  %tx.3 = load @x[%2] : f32[1024]\n"
        "  %ty.4 = load @y[%2] : f32[1024]\n"
        "  %5 = add %tx.3, %ty.4 : f32[1024]\n"
        "  store @z[%2], %5\n"
        "  yield\n"
        "}\n"
    )


def test_printer_shows_every_sample() -> None:
    for name, make in samples.ALL.items():
        text = print_kernel(make())
        assert "%?" not in text, name  # every used value was defined
        assert text.count("{") == text.count("}"), name
