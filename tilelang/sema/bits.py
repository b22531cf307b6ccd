"""Typing of the bit casts, `x.to_bits()` and `from_bits::<T>(u)` (Rust's `f32::to_bits` / `f32::from_bits`,
element-wise on tiles): a float's bits as the unsigned integer of its width and back (f16 and bf16: u16, f32:
u32, f64: u64). `as` converts values (`1.5 as u32` is 1); these keep the bits (`1.0f32.to_bits()` is
0x3F800000), for hashing floats, sign tricks and packing. Kernels only (tiles and scalars), as the IR's
`Cast` with `bits` set."""

from __future__ import annotations

from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType
from tilelang.sema.coerce import settle
from tilelang.sema.context import CallCx, CheckCx
from tilelang.sema.items import is_type_expr, resolve_type
from tilelang.sema.typeops import num_of
from tilelang.sema.types import ERROR, ScalarT, TileT, Type, TypeParam, UntypedFloat, UntypedInt
from tilelang.syntax import ast

#: a float type -> the unsigned integer of its width
BITS_OF: dict[DType, DType] = {DType.F16: DType.U16, DType.BF16: DType.U16, DType.F32: DType.U32,
                               DType.F64: DType.U64}


def _with_elem(ty: Type, dt: DType) -> Type:
    return TileT(dt, ty.shape) if isinstance(ty, TileT) else ScalarT(dt)


def rule_to_bits(tcx: CheckCx, cx: CallCx) -> Type:
    """`x.to_bits()`: a float tile or scalar's bits as the unsigned integer of its width."""
    x, ty = cx.recv, cx.recv_ty
    assert x is not None and ty is not None
    if isinstance(ty, UntypedFloat):
        return tcx.emit(tcx.err(T.CANNOT_INFER, "cannot tell the width of an untyped float's bits", x.span,
                                "an `f16`, `bf16`, `f32` or `f64`?")
                        # (a name or an expression takes no suffix: `sf32.to_bits()` was the help of `let s = 1.5;
                        # s.to_bits()`, hrev22)
                        .with_help(f"give the literal a type: `{tcx.snippet(x)}f32.to_bits()`"
                                   if isinstance(x, ast.FloatLit)
                                   else f"give the value a type: `({tcx.cast_snippet(x)} as f32).to_bits()`"))
    num = num_of(ty, True)
    elem = num.elem if num is not None and num.kind in ("tile", "scalar") else None
    if isinstance(elem, DType) and elem in BITS_OF:
        return _with_elem(ty, BITS_OF[elem])
    if isinstance(elem, DType) and elem.is_int or isinstance(ty, UntypedInt):
        return tcx.emit(tcx.err(T.INVALID_OPERAND, "`to_bits` reads the bits of a float", x.span, f"this is `{ty}`")
                        .with_help(f"an integer's bits are its value: use `{tcx.snippet(x)}` as it is, or "
                                   f"`{tcx.cast_snippet(x)} as u32` for those of another integer type"))
    if isinstance(elem, TypeParam):
        # (hrev22: "call it on an `f16`, `bf16`, `f32` or `f64` tile" led nowhere from a generic kernel)
        v = tcx.cast_snippet(x)
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`to_bits` of a `{elem}`, a type parameter: the width of its "
                                "bits is not known", x.span, f"this is `{ty}`")
                        .with_help(f"the bits of a float are the unsigned integer of its width (`u16` for `f16` and "
                                   f"`bf16`, `u32` for `f32`, `u64` for `f64`): read them from the value as an "
                                   f"`f32`, `({v} as f32).to_bits()`, and make a `{elem}` of such bits with "
                                   f"`from_bits::<f32>(b) as {elem}` (a bit trick then acts on the `f32`'s layout); "
                                   f"or write the kernel for the float type it is launched with (`f32` in place "
                                   f"of `{elem}`)"))
    return tcx.emit(tcx.err(T.INVALID_OPERAND, "`to_bits` expects a float tile or scalar", x.span,
                            f"found `{ty}`")
                    .with_help("call it on an `f16`, `bf16`, `f32` or `f64` tile or scalar (a host tensor: in a "
                               "kernel, on the tile it loads)"))


def rule_from_bits(tcx: CheckCx, cx: CallCx) -> Type:
    """`from_bits::<T>(u)`: the float `T` whose bits are `u` (the unsigned integer of `T`'s width)."""
    if not cx.generics:
        return tcx.emit(tcx.err(T.CANNOT_INFER, "`from_bits` needs the float type it makes", cx.span,
                                "which float type?")
                        .with_help(f"give it with a turbofish: `from_bits::<f32>({tcx.snippet(cx.args[0])})`"))
    g = cx.generics[0]
    want = resolve_type(tcx, g, cx.fx.generics, cx.fx.module, cx.fx.in_kernel) if is_type_expr(g) else None
    dt = want.dtype if isinstance(want, ScalarT) else None
    if isinstance(dt, TypeParam):
        u = tcx.snippet(cx.args[0]) if cx.args else "u"
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"`from_bits::<{dt}>`: `{dt}` is a type parameter, whose width "
                                "is not known", g.span, "a float type of a known width goes here")
                        .with_help(f"make an `f32` of `u32` bits and convert it: `from_bits::<f32>({u}) as {dt}` "
                                   f"(bits read as `(x as f32).to_bits()`); or write the kernel for the float "
                                   f"type it is launched with (`f32` in place of `{dt}`)"))
    if not (isinstance(dt, DType) and dt in BITS_OF):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`from_bits` makes a float type", g.span,
                                "not `f16`, `bf16`, `f32` or `f64`")
                        .with_help("give the float type whose bits the argument holds: `from_bits::<f32>(u)` "
                                   "for a `u32`"))
    bits = BITS_OF[dt]
    x, ty = cx.args[0], cx.arg_tys[0]
    if isinstance(ty, UntypedInt):
        settle(tcx, x, ScalarT(bits))
        return ScalarT(dt)
    num = num_of(ty, True)
    elem = num.elem if num is not None and num.kind in ("tile", "scalar") else None
    if elem is bits:
        return _with_elem(ty, dt)
    if isinstance(elem, DType) and elem.is_int and elem.bits == bits.bits:
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"`from_bits::<{dt.value}>` takes `{bits.value}` bits",
                                x.span, f"this is `{ty}`")
                        .with_help(f"`as` between integers of one width keeps the bits: "
                                   f"`from_bits::<{dt.value}>({tcx.cast_snippet(x)} as {bits.value})`"))
    if isinstance(elem, DType):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"`from_bits::<{dt.value}>` takes `{bits.value}` bits",
                                x.span, f"this is `{ty}`, of another width" if elem.is_int else f"this is `{ty}`")
                        .with_help(f"`{dt.value}` is {bits.bits} bits wide: pass a `{bits.value}` tile or scalar"
                                   + (f" (a float is its own value: `{tcx.cast_snippet(x)} as {dt.value}` "
                                      "converts it)" if elem.is_float else "")))
    return ERROR if ty is ERROR else tcx.emit(
        tcx.err(T.INVALID_OPERAND, "`from_bits` expects an unsigned integer tile or scalar", x.span,
                f"found `{ty}`")
        .with_help(f"pass the `{bits.value}` bits of an `{dt.value}`: `from_bits::<{dt.value}>(u)`"))
