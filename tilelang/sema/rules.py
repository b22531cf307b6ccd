"""The typing rules of the builtin operations, one per `Signature.rule`.

`RULES` maps each rule name of `tilelang.intrinsics.signatures` to a
function `(tcx, cx) -> Type` that decides the result type of one builtin
call from its operands (`CallCx`), or reports why the call is wrong: tile
creation (`fill`, `arange`, `random`), element-wise math, `where`,
reductions and scans, `mma`/`dot`, `print` and the assertions, and the
host's launch, graph and I/O operations; the rules of loads, stores,
partitions and atomics are in `access.py`, those of the shape operations
(`reshape`, `broadcast`, `transpose`, `permute`, `item`, `shape`) in
`shape_rules.py`, the argument readers they share in `ruleargs.py`. The arity, keywords and
host/kernel context of the call were checked by `calls` before a rule runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tilelang import printfmt
from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.codes.runtime import HOST_SHAPE
from tilelang.dtypes import ACC_RULE, DType, arange_problem, common_dtype, dot_acc_dtype
from tilelang.sema.access import (
    rule_atomic,
    rule_load,
    rule_load_like,
    rule_load_padded,
    rule_num_tiles,
    rule_partition,
    rule_prefetch,
    rule_store,
    rule_store_unchecked,
)
from tilelang.sema.bits import rule_from_bits, rule_to_bits
from tilelang.sema.call_habits import int_pow_error
from tilelang.sema.coerce import coerce, mismatch, settle
from tilelang.sema.combine import rule_cluster_gather, rule_group, rule_last_block, rule_queue
from tilelang.sema.consts import const_value
from tilelang.sema.context import CallCx, CheckCx
from tilelang.sema.items import is_type_expr, resolve_type
from tilelang.sema.kernel import check_tile_limits
from tilelang.sema.operators import binary_types, extremum_signs, is_scalar_ref, scalar_ref_help
from tilelang.sema.program import SymbolKind
from tilelang.sema.ruleargs import axis_arg, axis_forms, const_arg, shape_arg
from tilelang.sema.shape_rules import (
    rule_broadcast,
    rule_item,
    rule_permute,
    rule_reshape,
    rule_shape,
    rule_transpose,
)
from tilelang.sema.typeops import deref, elem_is_float, is_intlike, is_poison, num_of
from tilelang.sema.types import (
    BOOL,
    ERROR,
    F32,
    I32,
    UNIT,
    UNTYPED_FLOAT,
    UNTYPED_INT,
    Dim,
    ElemT,
    FnT,
    GraphT,
    HandleT,
    OpT,
    PartitionT,
    ScalarT,
    ShapeT,
    StrT,
    TensorT,
    TileT,
    Type,
    TypeParam,
    UntypedFloat,
    UntypedInt,
    broadcast_shapes,
    const_shape,
    elem_of,
    shape_str,
)
from tilelang.sema.widen import mma_2d_help
from tilelang.source import Span
from tilelang.syntax import ast

Rule = Callable[[CheckCx, CallCx], Type]


def _elem_generic(tcx: CheckCx, cx: CallCx, default: ElemT | None) -> ElemT | None:
    if not cx.generics:
        if default is None:
            tcx.emit(tcx.err(T.CANNOT_INFER, f"cannot infer the element type of `{cx.name}`", cx.span,
                             "element type needed")
                     .with_help(f"give it with a turbofish: `{cx.name}::<f32>(..)`"))
        return default
    t = cx.generics[0]
    ty = resolve_type(tcx, t, cx.fx.generics, cx.fx.module, cx.fx.in_kernel) if is_type_expr(t) else None
    if isinstance(ty, ScalarT):
        return ty.dtype
    if ty is None or not is_poison(ty):
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"expected an element type for `{cx.name}`", t.span,
                         "not a scalar type")
                 .with_help("give a scalar type such as `f32` or `i32`"))
    return None


def _make_array(tcx: CheckCx, cx: CallCx, elem: ElemT, shape: tuple[Dim | None, ...], span: Span) -> Type:
    if cx.fx.in_kernel:
        tshape = tuple(d for d in shape if d is not None)
        check_tile_limits(tcx, tshape, span, cx.fx.kernel_name)
        return TileT(elem, tshape)
    return TensorT(elem, shape)


def _rule_grid_index(tcx: CheckCx, cx: CallCx) -> Type:
    e = cx.args[0]
    if not is_intlike(cx.arg_tys[0]):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", e.span,
                                f"expected an axis (`i32`), found `{cx.arg_tys[0]}`")
                        .with_help("an axis is an integer constant: 0, 1 or 2"))
    settle(tcx, e, I32)
    v = const_arg(tcx, cx, e, "axis")
    if v is not None and not 0 <= v < 3:
        tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"grid axis {v} is out of range", e.span, "the grid has axes 0, 1, 2")
                 .with_help("use axis 0, 1 or 2"))
    return I32


def _rule_fill(tcx: CheckCx, cx: CallCx) -> Type:
    default: ElemT | None = DType.F32
    if cx.name == "full":  # `full([n], v)`: the value's type, when it has one
        vty = cx.arg_tys[1]
        default = vty.dtype if isinstance(vty, ScalarT) else DType.F32 if isinstance(vty, UntypedFloat) \
            else DType.I32 if isinstance(vty, UntypedInt) else None
    elem = _elem_generic(tcx, cx, default)
    shape = shape_arg(tcx, cx, cx.args[0], need_const=cx.fx.in_kernel)
    if elem is None:
        return ERROR
    if cx.name == "full":
        vty, v = cx.arg_tys[1], cx.args[1]
        want = ScalarT(elem)
        if not coerce(tcx, vty, want, v):
            stored = tcx.store_dtypes.get(cx.node)
            turbo = cx.generics[0] if cx.generics else None
            # `z.store(full::<f32>([B], i))` of an i32 `i` into an i32 `z`: the turbofish is what is wrong
            fix = (f"write the value's type in the turbofish ({stored[1]}): `full::<{vty.dtype}>(..)`"
                   if turbo is not None and stored is not None and isinstance(vty, ScalarT)
                   and stored[0] == vty.dtype else None)
            mismatch(tcx, want, vty, v, turbo, fix)
            if fix is not None:
                return ERROR  # (the store would say it again: f32 stored into i32)
        else:
            settle(tcx, v, want)
    if shape is None:
        if cx.fx.in_kernel:
            return ERROR
        rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
        return TensorT(elem, None if rank is None else (None,) * rank)
    return _make_array(tcx, cx, elem, shape, cx.args[0].span)


def _rule_arange(tcx: CheckCx, cx: CallCx) -> Type:
    elem = _elem_generic(tcx, cx, DType.I32)
    e = cx.args[0]
    if not is_intlike(cx.arg_tys[0]):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", e.span,
                                f"expected an integer length, found `{cx.arg_tys[0]}`")
                        .with_help("give the length as an integer"))
    settle(tcx, e, I32)
    d = tcx.program.dims.get(e)
    if elem is None:
        return ERROR
    if elem is DType.BOOL:
        return tcx.emit(tcx.err(T.INVALID_OPERAND, "`arange` makes numbers, not `bool` values", cx.span,
                                "`arange::<bool>`")
                        .with_help("compare a numeric range instead, e.g. `arange::<i32>(n) > 0`"))
    if cx.fx.in_kernel and d is None:
        tcx.emit(tcx.err(T.NOT_CONSTANT, "the length of `arange` must be a compile-time constant in a kernel",
                         e.span, "not constant")
                 .with_help("use a literal, a const generic or a module constant"))
        return ERROR
    n = d.const_value if d is not None else None
    why = arange_problem(elem, n) if isinstance(elem, DType) and n is not None else None
    if why is not None:
        wider = "i64" if elem in (DType.I64, DType.U32) else "f32" if elem.is_float else \
            {8: "i16", 16: "i32"}.get(elem.bits, "i64")
        tcx.emit(tcx.err(T.ARANGE_RANGE, f"`arange::<{elem}>` of length {n} makes values that `{elem}` cannot hold",
                         e.span, why)
                 .with_help(f"use a type that holds 0..={n - 1}, e.g. `arange::<{wider}>({n})`, or cast a "
                            f"wider range with `as {elem}` where wrapping is what you want"))
        return ERROR
    if n is not None and n < 0 and not cx.fx.in_kernel:
        d = Dim.const(0)  # as it runs: a host `arange` of a negative length is empty
    return _make_array(tcx, cx, elem, (d,), e.span)


def _rule_random(tcx: CheckCx, cx: CallCx) -> Type:
    elem = _elem_generic(tcx, cx, DType.F32)
    shape = shape_arg(tcx, cx, cx.args[0], need_const=False)
    seed, sty = cx.args[1], cx.arg_tys[1]
    if not is_intlike(sty):
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", seed.span, f"expected an integer seed, found `{sty}`")
                 .with_help("give an integer seed, e.g. `0`"))
    settle(tcx, seed, ScalarT(DType.I64))
    if elem is None:
        return ERROR
    # `rand` makes every element type (integers in [0, 100), `bool` coin flips: the
    # runtime's `_random`); only `randn` needs floats
    if cx.name == "randn" and not elem_is_float(elem):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "`randn` makes floating-point tensors",
                                cx.generics[0].span if cx.generics else cx.span, f"`{elem}` is not a float type")
                        .with_help("use `randn::<f32>(..)` and cast with `as`, or `rand` for integers"))
    if shape is None:
        rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
        return TensorT(elem, None if rank is None else (None,) * rank)
    return TensorT(elem, shape)


def _rule_load_npy(tcx: CheckCx, cx: CallCx) -> Type:
    if not isinstance(cx.arg_tys[0], StrT):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", cx.args[0].span,
                                f"expected a path string, found `{cx.arg_tys[0]}`")
                        .with_help("give the path as a string: `load_npy(\"x.npy\")`"))
    elem = _elem_generic(tcx, cx, None) if cx.generics else None
    return TensorT(elem, None)


def _rule_unary_math(tcx: CheckCx, cx: CallCx) -> Type:
    x, ty = cx.operands[0], cx.operand_tys[0]
    num = num_of(ty, cx.fx.in_kernel)
    if num is None:
        d = tcx.err(T.INVALID_OPERAND, f"`{cx.name}` expects a tile, a scalar or a host tensor", x.span,
                    f"found `{ty}`")
        if is_scalar_ref(ty) and not isinstance(x, ast.Ref):  # a `&f32` parameter (`sqrt(&1.0)`: below)
            return tcx.emit(d.with_help(scalar_ref_help(tcx, x, ty, cx.fx)))  # type: ignore[arg-type]
        if cx.fx.in_kernel:
            return tcx.emit(d.with_help("load a tile first"))
        if isinstance(x, ast.Ref):  # `sqrt(&1.0)`, `exp(&t)`: the fuzzer's seed 167, case 3561 (no help line)
            return tcx.emit(d.with_help(f"pass the value itself, without `&`: `{cx.name}(..)` reads it and "
                                        "gives a new value"))
        return tcx.emit(d.with_help(f"give `{cx.name}` a number or a host tensor (it works element-wise)"))
    if cx.name == "abs" and num.elem is DType.BOOL:  # a tile, a scalar and a host tensor alike
        return tcx.emit(tcx.err(T.INVALID_OPERAND, "`abs` is not defined on `bool`", x.span, f"this is `{ty}`")
                        .with_help(f"a `bool` is its own absolute value: use it as it is, or cast first: "
                                   f"`abs({tcx.cast_snippet(x)} as i32)`"))
    if num.kind == "tensor":
        if num.elem is not None and not elem_is_float(num.elem) and cx.name != "abs":
            return _not_float(tcx, cx, x, ty)
        return deref(ty)
    if cx.name in ("abs",):
        return ty if not isinstance(ty, UntypedInt) else UNTYPED_INT
    if num.kind in ("int", "float"):  # `exp(1)` as `exp(1.0)`: its context settles it and its argument
        return UNTYPED_FLOAT
    if not (elem_is_float(num.elem) or isinstance(num.elem, TypeParam)):
        return _not_float(tcx, cx, x, ty)
    return ty


def _not_float(tcx: CheckCx, cx: CallCx, x: ast.Expr, ty: Type, operands: list[ast.Expr] | None = None) -> Type:
    # every operand in the help, the integer ones cast (`fma(2i8 as f32)` dropped two of three)
    parts = []
    for e in operands or [x]:
        el = elem_of(tcx.program.types.get(e))
        parts.append(tcx.snippet(e) if elem_is_float(el) else f"{tcx.cast_snippet(e)} as f32")
    return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{cx.name}` needs floating-point elements", x.span,
                            f"this is `{ty}`")
                    .with_help(f"cast first: `{cx.name}({', '.join(parts)})`"))


def _elementwise(tcx: CheckCx, cx: CallCx, exprs: list[ast.Expr], tys: list[Type], float_only: bool,
                 unify: str | None = None) -> Type:
    nums = [num_of(t, cx.fx.in_kernel) for t in tys]
    for n, t, x in zip(nums, tys, exprs, strict=False):
        if n is None:
            return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{cx.name}` expects tiles or scalars", x.span, f"found `{t}`")
                            .with_help(scalar_ref_help(tcx, x, t, cx.fx) if is_scalar_ref(t)  # type: ignore[arg-type]
                                       else "pass tiles or scalars"))
    if cx.name in ("maximum", "minimum", "where") and (signs := extremum_signs(tcx, cx, int(cx.name == "where"))):
        return signs  # a signed and an unsigned integer: both cast to a type that holds both
    acc_t, acc_e = tys[0], exprs[0]
    stored = tcx.store_dtypes.get(cx.node)  # `h.store(where(c, f32_tile, f16_tile))`: cast toward the store
    for t, x in zip(tys[1:], exprs[1:], strict=False):
        r = binary_types(tcx, unify or ("+" if not float_only else "*"), acc_t, t, acc_e, x, cx.span, cx.fx,
                         stored=stored)
        if is_poison(r):
            return ERROR
        acc_t = r
    for x in exprs:
        settle(tcx, x, acc_t)
    return acc_t


def _rule_elementwise2(tcx: CheckCx, cx: CallCx) -> Type:
    if cx.name in ("maximum", "minimum") and len(cx.args) == 2:
        nums = [num_of(t, cx.fx.in_kernel) for t in cx.arg_tys]
        if any(n is not None and n.elem is DType.BOOL for n in nums):
            # the operator check below would say "cannot apply `+`"
            op, what = ("|", "either is") if cx.name == "maximum" else ("&", "both are")
            a, b = (tcx.snippet(x) for x in cx.args)
            return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{cx.name}` of `bool` values", cx.span,
                                    "takes numbers, not `bool` elements")
                            .with_help(f"`{a} {op} {b}` is true where {what}"))
    return _elementwise(tcx, cx, cx.args, cx.arg_tys, False)


def _rule_elementwise2_float(tcx: CheckCx, cx: CallCx) -> Type:
    """`pow(x, y)` and `x.pow(y)`: float operands broadcast like an operator's.
    An integer literal takes the float type of the other operand (`f32` when
    neither has one); a typed integer operand is an error."""
    exprs, tys = cx.operands, cx.operand_tys
    nums = [num_of(t, cx.fx.in_kernel) for t in tys]
    if nums and all(n is not None and n.kind in ("int", "float") for n in nums):
        return UNTYPED_FLOAT  # untyped numbers only (`pow(2, 3)`): an untyped float, as `exp(1)` (above)
    if cx.name == "pow" and nums[0] is not None and isinstance(nums[0].elem, DType) and nums[0].elem.is_int:
        return int_pow_error(tcx, exprs, tys[0], nums[0].elem)
    fl: Any = next((n.elem for n in nums if n is not None and n.elem is not None and
                    (elem_is_float(n.elem) or isinstance(n.elem, TypeParam))), None)
    for x, n in zip(exprs, nums, strict=True):
        if n is not None and n.kind == "int":
            settle(tcx, x, ScalarT(fl) if fl is not None else F32)
    ty = _elementwise(tcx, cx, exprs, [tcx.program.types.get(x, t) for x, t in zip(exprs, tys, strict=True)],
                      False)
    el = elem_of(ty)
    if isinstance(el, DType) and not el.is_float:
        return _not_float(tcx, cx, exprs[0], ty, list(exprs))
    return ty


def _rule_elementwise3(tcx: CheckCx, cx: CallCx) -> Type:
    """`fma(a, b, c)`: float operands; an integer literal takes the float type
    of another operand (`f32` when none has one), as `pow`'s do (`fma(2, 3, 4)`
    stayed an untyped integer, which an `i16` tile then made an `i16` `fma`:
    the checker passed it and the kernel refused it when it ran)."""
    exprs = list(cx.args)
    nums = [num_of(t, cx.fx.in_kernel) for t in cx.arg_tys]
    if nums and all(n is not None and n.kind in ("int", "float") for n in nums):
        return UNTYPED_FLOAT  # untyped numbers only (`fma(2, 3, 4)`): an untyped float, as `exp(1)`
    fl: Any = next((n.elem for n in nums if n is not None and n.elem is not None and
                    (elem_is_float(n.elem) or isinstance(n.elem, TypeParam))), None)
    if fl is None and any(n is not None and n.kind == "float" for n in nums):
        fl = None  # an untyped float among them: the literals stay untyped floats together
    elif any(n is not None and n.kind == "int" for n in nums):
        for x, n in zip(exprs, nums, strict=False):
            if n is not None and n.kind == "int":
                settle(tcx, x, ScalarT(fl) if fl is not None else F32)
    tys = [tcx.program.types.get(x, t) for x, t in zip(exprs, cx.arg_tys, strict=False)]
    ty = _elementwise(tcx, cx, exprs, tys, True)
    el = elem_of(ty)
    if isinstance(el, DType) and not el.is_float:
        return _not_float(tcx, cx, exprs[0], ty, exprs)
    return ty


def _rule_where(tcx: CheckCx, cx: CallCx) -> Type:
    c, cty = cx.args[0], cx.arg_tys[0]
    cn = num_of(cty, cx.fx.in_kernel)
    if cn is None or (cn.elem is not DType.BOOL and not (cn.kind == "tensor" and cn.elem is None)):
        return tcx.emit(tcx.err(T.MISMATCHED_TYPES, "the condition of `where` must be `bool`", c.span,
                                f"found `{cty}`")
                        .with_help("compare to get a bool tile, e.g. `x > 0.0`"))
    # `where` selects: `bool` values are values too (`where(c, m1, m2)` of masks; the operator `+`
    # unified the branches' types and said "cannot apply `+` to `bool` values")
    bools = [n is not None and n.elem is DType.BOOL for n in (num_of(t, cx.fx.in_kernel) for t in cx.arg_tys[1:])]
    vt = _elementwise(tcx, cx, cx.args[1:], cx.arg_tys[1:], False, "&" if all(bools) else None)
    if is_poison(vt):
        return ERROR
    vn = num_of(vt, cx.fx.in_kernel)
    assert vn is not None
    if cn.kind == "tensor" or vn.kind == "tensor":  # host `where` on tensors
        el = elem_of(vt)
        if el is None and cn.kind == "tensor" and vn.kind != "tensor":
            # untyped literals in both branches: i32 or f32, as in a kernel (not NumPy's float default)
            el = DType.F32 if isinstance(vt, UntypedFloat) else DType.I32
            for x in cx.args[1:]:
                settle(tcx, x, ScalarT(el))
        if cn.shape is None or vn.shape is None:
            return TensorT(el, None)
        tshape = broadcast_shapes(cn.shape, vn.shape)
        if tshape is None:
            return tcx.emit(tcx.err(T.SHAPE_MISMATCH, f"shapes {shape_str(cn.shape)} and "
                                    f"{shape_str(vn.shape)} cannot be broadcast together", cx.span,
                                    "incompatible shapes")
                            .with_help("make the shapes equal, or 1 where they differ"))
        return TensorT(el, tshape)
    assert cn.shape is not None and vn.shape is not None
    shape = broadcast_shapes(cn.shape, vn.shape)
    if shape is None:
        return tcx.emit(tcx.err(T.SHAPE_MISMATCH,
                                f"shapes {shape_str(cn.shape)} and {shape_str(vn.shape)} cannot be broadcast "
                                "together", cx.span, "incompatible shapes")
                        .secondary(c.span, f"the condition has shape {shape_str(cn.shape)}")
                        .note("tiles broadcast only where a dimension is 1 (NumPy rules)")
                        .with_help("make the shapes equal, or 1 where they differ (`reshape` or `broadcast`)"))
    if not shape:
        return vt
    el = elem_of(vt)
    if el is None:  # untyped literals in both branches
        el = DType.F32 if isinstance(vt, UntypedFloat) else DType.I32
        for x in cx.args[1:]:
            settle(tcx, x, ScalarT(el))
    return TileT(el, shape)  # type: ignore[arg-type]


_NUMBER_REDUCTIONS = ("sum", "prod")  # of numbers only: a bool tile's or tensor's max/min are any/all


def _bool_sum_error(tcx: CheckCx, cx: CallCx, span: Any, label: str) -> Any:
    what = "counts the `true` elements" if cx.name == "sum" else "is 1 when all are `true`"
    x = f"{tcx.cast_snippet(cx.operands[0])} as i32"
    axis = [tcx.snippet(a) for a in cx.operands[1:]]
    fixed = f"({x}).{cx.name}({', '.join(axis)})" if cx.recv is not None else \
        f"{cx.name}({', '.join([x, *axis])})"
    return tcx.err(T.INVALID_OPERAND, f"cannot `{cx.name}` `bool` elements", span, label).note(
        "`max` and `min` of `bool` elements are `true` when any / all are; a sum or product needs numbers"
    ).with_help(f"cast them with `as i32` first: `{fixed}` {what}")


def _rule_reduce(tcx: CheckCx, cx: CallCx) -> Type:
    x, ty = cx.operands[0], cx.operand_tys[0]
    axis_e = cx.operands[1] if len(cx.operands) > 1 else None
    arg = cx.name in ("argmax", "argmin")
    match ty:
        case TileT(dtype=d, shape=s):
            if d is DType.BOOL and cx.name in _NUMBER_REDUCTIONS:  # max/min: any/all, as on the host
                return tcx.emit(_bool_sum_error(tcx, cx, x.span, f"this is `{ty}`"))
            out_e: ElemT = DType.I32 if arg else d
            if axis_e is None:
                if arg and len(s) > 1:
                    return tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"`{cx.name}` of a {len(s)}-D tile needs "
                                            "an axis", cx.span, "missing axis")
                                    .with_help(axis_forms(tcx, cx, x, len(s))))
                return ScalarT(out_e)
            ax = axis_arg(tcx, cx, axis_e, len(s))
            if ax is None:
                return ERROR
            rest = s[:ax] + s[ax + 1:]
            return TileT(out_e, rest) if rest else ScalarT(out_e)
        case ScalarT() | UntypedInt() | UntypedFloat():
            diag = tcx.err(T.INVALID_OPERAND, f"cannot `{cx.name}` a scalar", x.span, f"this is `{ty}`")
            if cx.name in ("max", "min"):
                diag = diag.note(f"`{cx.name}` reduces a tile or tensor along an axis").with_help(
                    f"for the {cx.name}imum of two values use `{cx.name}imum(a, b)`")
            else:
                diag = diag.with_help(f"a scalar is already reduced: use it as it is, or `{cx.name}` the tile or "
                                      "tensor it came from")
            return tcx.emit(diag)
        case _:
            tn = num_of(ty, cx.fx.in_kernel)
            if tn is None or tn.kind != "tensor":
                return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{cx.name}` expects a tile or a tensor", x.span,
                                        f"found `{ty}`")
                                .with_help("pass a tile or a tensor"))
            if tn.elem is DType.BOOL and cx.name in _NUMBER_REDUCTIONS:
                # NumPy's sum of bools is an integer count: the checker's type
                # (`bool`) and the run's value (4) disagreed; one rule with tiles
                return tcx.emit(_bool_sum_error(tcx, cx, x.span, f"this is `{ty}`"))
            oe = DType.I32 if arg else tn.elem
            if axis_e is None:
                return ScalarT(oe) if oe is not None else F32
            if tn.shape is None:
                return TensorT(oe, None)
            ax = axis_arg(tcx, cx, axis_e, len(tn.shape))
            if ax is None:
                return ERROR
            rest_t = tn.shape[:ax] + tn.shape[ax + 1:]
            # as for tiles: reducing the only axis leaves a scalar
            return TensorT(oe, rest_t) if rest_t else (ScalarT(oe) if oe is not None else F32)


def _rule_scan(tcx: CheckCx, cx: CallCx) -> Type:
    x, ty = cx.operands[0], cx.operand_tys[0]
    t = deref(ty)
    if isinstance(t, TensorT) and not cx.fx.in_kernel:  # host: NumPy's cumsum along an axis
        if t.dtype is DType.BOOL:
            return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot `{cx.name}` a `bool` tensor", x.span,
                                    f"this is `{ty}`").with_help("cast it with `as i32` first"))
        rank = len(t.shape) if t.shape is not None else None
        if len(cx.operands) < 2:
            if rank not in (None, 1):
                return tcx.arity_error(f"`{cx.name}` of a {rank}-D tensor", "an axis", 0, cx.span, None)
            return t
        if rank is not None and axis_arg(tcx, cx, cx.operands[1], rank) is None:
            return ERROR
        return t
    if not isinstance(ty, TileT):
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`{cx.name}` expects a tile", x.span, f"found `{ty}`")
                        .with_help("pass a tile"))
    if ty.dtype is DType.BOOL:
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot `{cx.name}` a `bool` tile", x.span,
                                f"this is `{ty}`").with_help("cast it with `as i32` first"))
    if len(cx.operands) < 2:
        if len(ty.shape) == 1:
            return ty
        return tcx.arity_error(f"`{cx.name}` of a {len(ty.shape)}-D tile", "an axis", 0, cx.span, None)
    return ty if axis_arg(tcx, cx, cx.operands[1], len(ty.shape)) is not None else ERROR


def _rule_mma(tcx: CheckCx, cx: CallCx) -> Type:
    names = ("a", "b", "acc")[: len(cx.args)]
    tiles: list[TileT] = []
    for n, x, t in zip(names, cx.args, cx.arg_tys, strict=False):
        if not isinstance(t, TileT) or len(t.shape) != 2:
            return tcx.emit(tcx.err(T.MMA_MISMATCH, f"`{cx.name}` operand `{n}` must be a 2-D tile", x.span,
                                    f"found `{t}`")
                            .with_help(mma_2d_help(tcx, x, t, n, cx)))
        tiles.append(t)
    a, b = tiles[0], tiles[1]
    if a.shape[1] != b.shape[0]:
        return tcx.emit(tcx.err(T.MMA_MISMATCH,
                                f"`{cx.name}` inner dimensions differ: {shape_str(a.shape)} x {shape_str(b.shape)}",
                                cx.span, f"{a.shape[1]} != {b.shape[0]}")
                        .secondary(cx.args[0].span, f"`a` is {shape_str(a.shape)} ([M, K])")
                        .secondary(cx.args[1].span, f"`b` is {shape_str(b.shape)} ([K, N])")
                        .with_help("`a`'s columns must match `b`'s rows: load them with the same K "
                                   "(or transpose `b`)"))
    if a.dtype != b.dtype:
        return tcx.emit(tcx.err(T.MMA_MISMATCH, f"`{cx.name}` operands have different dtypes: `{a.dtype}` and "
                                f"`{b.dtype}`", cx.span, "inputs must share a dtype")
                        .with_help(_mixed_help(tcx, cx, a.dtype, b.dtype)))
    want = dot_acc_dtype(a.dtype) if isinstance(a.dtype, DType) else None
    if isinstance(a.dtype, DType) and want is None:  # bool: no product
        return tcx.emit(tcx.err(T.MMA_MISMATCH, f"`{cx.name}` does not support `{a.dtype}` inputs", cx.args[0].span,
                                f"this is `{a}`").note("inputs are numbers: f16, bf16, f32, f64 or integers")
                        .with_help(f"cast both to a number type first: `{tcx.cast_snippet(cx.args[0])} as i32`"))
    out_shape = (a.shape[0], b.shape[1])
    if len(tiles) == 2:  # dot
        return TileT(want if want is not None else a.dtype, out_shape)
    acc = tiles[2]
    acc_dt = want if want is not None else acc.dtype
    if acc.shape != out_shape:
        return tcx.emit(tcx.err(T.MMA_MISMATCH,
                                f"`mma` accumulator has shape {shape_str(acc.shape)}, expected "
                                f"{shape_str(out_shape)}", cx.args[2].span, f"expected {shape_str(out_shape)} ([M, N])")
                        .secondary(cx.args[0].span, f"`a` is {shape_str(a.shape)}")
                        .secondary(cx.args[1].span, f"`b` is {shape_str(b.shape)}")
                        .with_help(f"start from `zeros::<{acc_dt}>({shape_str(out_shape)})`"))
    if want is not None and isinstance(acc.dtype, DType) and acc.dtype is not want:
        return tcx.emit(tcx.err(T.MMA_MISMATCH, f"`mma` of `{a.dtype}` tiles accumulates in `{want}`, not "
                                f"`{acc.dtype}`", cx.args[2].span, f"this is `{acc}`")
                        .secondary(cx.args[0].span, f"`a` is `{a}`")
                        .note(ACC_RULE)
                        .with_help(_mma_acc_help(tcx, cx, a.dtype, acc.dtype, want, out_shape)))
    return acc


def _mixed_help(tcx: CheckCx, cx: CallCx, da: Any, db: Any) -> str:
    """Cast toward a type that holds both inputs' values (round 13: `tb as i8` of a `u8` tile wrapped 200 to
    -56, `tb as f16` of an f32 tile rounds it), written as the whole call."""
    common = common_dtype(da, db) if isinstance(da, DType) and isinstance(db, DType) else None
    if common is None:
        return f"cast one: `{tcx.snippet(cx.args[1])} as {da}`"
    args = [tcx.snippet(x) if d is common else f"{tcx.cast_snippet(x)} as {common}"
            for x, d in zip(cx.args[:2], (da, db), strict=True)] + [tcx.snippet(x) for x in cx.args[2:]]
    which = "cast both" if common not in (da, db) else f"cast `{tcx.snippet(cx.args[0 if da is not common else 1])}`"
    acc = dot_acc_dtype(common)
    new_acc = len(cx.arg_tys) == 3 and acc is not None and getattr(cx.arg_tys[2], "dtype", acc) is not acc
    return (f"{which} to `{common}`, which holds every `{da}` and `{db}` value: `{cx.name}({', '.join(args)})`"
            + (f", with an accumulator of `{acc}`" if new_acc else ""))


def _mma_acc_help(tcx: CheckCx, cx: CallCx, in_dt: DType, acc_dt: DType, want: DType,
                  shape: tuple[Any, ...]) -> str:
    """Make `mma`'s accumulator `want`: a fresh one is `zeros::<want>`; a
    carried one (`acc` of a loop) is declared with that type where it starts.
    8-bit integers into an `f32` accumulator may mean the f16 route instead:
    their values are exact in f16 and the tensor cores sum those in f32."""
    acc = cx.args[2]
    if isinstance(acc, ast.Call) and isinstance(acc.callee, ast.Name) and acc.callee.ident.name in ("zeros", "full"):
        out = f"make the accumulator `{want}`: `zeros::<{want}>({shape_str(shape)})`"
    else:
        out = (f"make the accumulator `{want}` where it starts (`let mut acc = zeros::<{want}>({shape_str(shape)});`),"
               " and cast the result where another type is wanted")
    if in_dt.is_int and in_dt.bits == 8 and acc_dt is DType.F32:
        a, b = (f"{tcx.cast_snippet(x)} as f16" for x in cx.args[:2])
        out += (f"; or keep the `f32` accumulator and cast both inputs to `f16`, which holds every `{in_dt}` "
                f"value exactly (the tensor cores sum f16 products in f32): `mma({a}, {b}, {tcx.snippet(acc)})`")
    return out


def _rule_dot(tcx: CheckCx, cx: CallCx) -> Type:
    return _rule_mma(tcx, cx)


def _rule_print(tcx: CheckCx, cx: CallCx) -> Type:
    for x, t in zip(cx.args, cx.arg_tys, strict=False):
        if cx.fx.in_kernel and not isinstance(t, (ScalarT, UntypedInt, UntypedFloat, TileT, StrT)):
            tcx.emit(tcx.err(T.HOST_ONLY, f"printing a `{t}` is only allowed in host code", x.span,
                             "inside a kernel")
                     .note("inside a kernel, `print` takes strings, scalars and tiles")
                     .with_help("load a tile and print that"))
        elif isinstance(t, (PartitionT, OpT, HandleT, GraphT, FnT)):
            tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot print a value of type `{t}`", x.span,
                             "not printable")
                     .with_help("print scalars, strings, tiles or tensors"))
    _check_format(tcx, cx)
    return UNIT


def _check_format(tcx: CheckCx, cx: CallCx) -> None:
    """A string as `print`'s first argument is a format string (`printfmt`): its
    braces and the arguments after it must agree. A literal, or a string an
    immutable `let` binds to one (`let f = "{} {}"; print(f, x)`), is checked
    here; in a kernel a first string whose value is not known here (a `let mut`,
    an `if`) is refused (its lowering would read it at the launch); on the host
    it is checked where it runs (E0723)."""
    if not cx.args or not isinstance(cx.arg_tys[0], StrT):
        return
    first = cx.args[0]
    known = tcx.const_str(first)
    if known is None:
        if cx.fx.in_kernel:
            tcx.emit(tcx.err(T.FORMAT_STRING, "the first string of a `print` in a kernel must be known where "
                             "it is written", first.span, "its value depends on how the kernel runs")
                     .note("a first string with a brace is a format string, which `tilec check` reads: "
                           "a literal, or an immutable `let` of one")
                     .with_help("pass the string literal to `print`, or bind it once with `let f = \"..\";`"))
        return
    text, lit = known
    p = printfmt.problem_of(text, len(cx.args) - 1)
    if p is None:
        return
    at = printfmt.problem_span(lit.span, len(text), p) if first is lit else first.span
    d = tcx.err(T.FORMAT_STRING, p.message, at, p.label)
    if first is not lit:
        d = d.secondary(printfmt.problem_span(lit.span, len(text), p), "the format string is written here")
    if p.offset is None and len(cx.args) - 1 > 0:
        holes = len(printfmt.pieces(text)) - 1  # well-formed here: only the count disagrees
        for extra in cx.args[1 + holes:]:
            d = d.secondary(extra.span, "no `{}` takes this argument")
    tcx.emit(d.with_help(p.help))


def _rule_assert(tcx: CheckCx, cx: CallCx) -> Type:
    c, t = cx.args[0], cx.arg_tys[0]
    ok = t == BOOL or (isinstance(t, TileT) and t.dtype is DType.BOOL and cx.fx.in_kernel)
    if not ok:
        if isinstance(t, TensorT) and t.dtype is DType.BOOL:  # `assert(a == b)` on host tensors
            help_ = (f"a comparison of tensors is a tensor of `bool`s: assert all of them with "
                     f"`assert(({tcx.snippet(c)}).min())`, or compare whole tensors with `assert_close(&a, &b)`")
        else:
            help_ = "assert a comparison, e.g. `assert(x > 0)`"
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", c.span, f"expected `bool`, found `{t}`")
                 .with_help(help_))
    if len(cx.args) > 1 and not isinstance(cx.arg_tys[1], StrT):
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", cx.args[1].span,
                         f"expected a message string, found `{cx.arg_tys[1]}`")
                 .with_help("give the message as a string literal"))
    return UNIT


def _rule_assert_close(tcx: CheckCx, cx: CallCx) -> Type:
    elems: list[Any] = []
    for x, t in zip(cx.args, cx.arg_tys, strict=False):
        n = num_of(t, False)
        if n is None or n.kind != "tensor":
            tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", x.span, f"expected a tensor, found `{t}`")
                     .with_help("compare tensors: `assert_close(&a, &b)`"))
            return UNIT
        elems.append(n.elem)
    shapes = [const_shape(t.shape) if isinstance(t := deref(ty), TensorT) else None for ty in cx.arg_tys[:2]]
    if len(shapes) == 2 and shapes[0] is not None and shapes[1] is not None and shapes[0] != shapes[1]:
        a, b = (f"[{', '.join(map(str, sh))}]" for sh in shapes)  # E0714 when it runs: known now
        tcx.emit(tcx.err(HOST_SHAPE, f"`assert_close` got shapes {a} and {b}", cx.span,
                         "the two sides differ in shape")
                 .secondary(cx.args[0].span, f"shape {a}")
                 .secondary(cx.args[1].span, f"shape {b}")
                 .note("both shapes are known before the program runs")
                 .with_help("compare tensors of one shape (`.reshape([..])` one side if only the layout differs)"))
    if elems[0] is not None and elems[1] is not None and elems[0] != elems[1]:
        tcx.emit(tcx.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{elems[0]}` and `{elems[1]}`", cx.span,
                         "compared tensors must have the same dtype")
                 .with_help(f"cast with `as`: `&({tcx.cast_snippet(_unref(cx.args[1]))} as {elems[0]})`"))
    for k, (arg, t) in cx.keywords.items():
        if not (isinstance(t, (UntypedFloat, UntypedInt)) or (isinstance(t, ScalarT) and elem_is_float(t.dtype))):
            tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", arg.value.span,
                             f"expected a float tolerance for `{k}`, found `{t}`")
                     .with_help(f"write a float, e.g. `{k} = 1e-4`"))
        else:
            settle(tcx, arg.value, ScalarT(DType.F64))
            v = _tolerance_value(tcx, arg.value, cx)
            if v is not None and (v != v or v < 0):
                tcx.emit(tcx.err(T.BAD_TOLERANCE, f"`{k}` of `assert_close` is {_tol_text(v)}", arg.value.span,
                                 "a tolerance is a distance: zero or more")
                         .note("`|a - b| <= atol + rtol * |b|` with a negative or NaN tolerance fails for every "
                               "element, or passes where it should not")
                         .with_help(f"write `{k} = 0.0` for an exact comparison, or a positive bound such as "
                                    f"`{k} = 1e-4`"))
    return UNIT


def _tolerance_value(tcx: CheckCx, e: ast.Expr, cx: CallCx) -> float | None:
    """The value of a constant tolerance, with IEEE arithmetic and the
    built-in constants (`nan`, `f64::NAN`, `-inf`), which the constant folder
    of dims leaves alone; None when it is known only at run time (E0724)."""
    match e:
        case ast.Name() | ast.Path():
            sym = tcx.program.symbol_of(e)
            if sym is not None and sym.kind is SymbolKind.CONST and isinstance(sym.value, (int, float)) \
                    and not isinstance(sym.value, bool):
                return float(sym.value)
        case ast.Unary(op="-", operand=x):
            v = _tolerance_value(tcx, x, cx)
            return None if v is None else -v
        case ast.Cast(expr=x):
            return _tolerance_value(tcx, x, cx)
        case ast.Binary(op=op, lhs=a, rhs=b) if op in ("+", "-", "*", "/"):
            x, y = _tolerance_value(tcx, a, cx), _tolerance_value(tcx, b, cx)
            if x is not None and y is not None:
                return _ieee(op, x, y)
    v = const_value(tcx, e, cx.fx)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _ieee(op: str, x: float, y: float) -> float:
    """`x op y` in IEEE doubles (Python raises on a division by zero)."""
    if op == "/" and y == 0:
        if x == 0 or math.isnan(x) or math.isnan(y):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    try:
        return {"+": x + y, "-": x - y, "*": x * y}[op] if op != "/" else x / y
    except OverflowError:
        return math.nan


def _tol_text(v: float) -> str:
    return "NaN" if v != v else f"negative ({v})"


def _rule_clone(tcx: CheckCx, cx: CallCx) -> Type:
    t = deref(cx.recv_ty)  # type: ignore[arg-type]
    return t


def _rule_save_npy(tcx: CheckCx, cx: CallCx) -> Type:
    if not isinstance(cx.arg_tys[0], StrT):
        tcx.emit(tcx.err(T.MISMATCHED_TYPES, "mismatched types", cx.args[0].span,
                         f"expected a path string, found `{cx.arg_tys[0]}`")
                 .with_help("give the path as a string: `t.save_npy(\"x.npy\")`"))
    return UNIT


def _rule_sync(tcx: CheckCx, cx: CallCx) -> Type:
    return UNIT


def _rule_launch(tcx: CheckCx, cx: CallCx) -> Type:
    assert isinstance(cx.recv_ty, OpT)
    return HandleT(cx.recv_ty.kernel)


def _rule_wait(tcx: CheckCx, cx: CallCx) -> Type:
    return UNIT


def _rule_replay(tcx: CheckCx, cx: CallCx) -> Type:
    return UNIT


def _unref(e: ast.Expr) -> ast.Expr:
    return e.expr if isinstance(e, ast.Ref) else e


RULES: dict[str, Rule] = {
    "grid_index": _rule_grid_index,
    "last_block": rule_last_block,
    "queue": rule_queue,
    "cluster_gather": rule_cluster_gather,
    "group": rule_group,
    "fill": _rule_fill,
    "arange": _rule_arange,
    "random": _rule_random,
    "load_npy": _rule_load_npy,
    "unary_math": _rule_unary_math,
    "elementwise2": _rule_elementwise2,
    "elementwise3": _rule_elementwise3,
    "elementwise2_float": _rule_elementwise2_float,
    "where": _rule_where,
    "reduce": _rule_reduce,
    "scan": _rule_scan,
    "mma": _rule_mma,
    "dot": _rule_dot,
    "print": _rule_print,
    "assert": _rule_assert,
    "assert_close": _rule_assert_close,
    "atomic": rule_atomic,
    "store_unchecked": rule_store_unchecked,
    "load": rule_load,
    "load_padded": rule_load_padded,
    "prefetch": rule_prefetch,
    "store": rule_store,
    "load_like": rule_load_like,
    "num_tiles": rule_num_tiles,
    "partition": rule_partition,
    "reshape": rule_reshape,
    "broadcast": rule_broadcast,
    "transpose": rule_transpose,
    "permute": rule_permute,
    "item": rule_item,
    "to_bits": rule_to_bits,
    "from_bits": rule_from_bits,
    "shape": rule_shape,
    "clone": _rule_clone,
    "save_npy": _rule_save_npy,
    "sync": _rule_sync,
    "launch": _rule_launch,
    "wait": _rule_wait,
    "replay": _rule_replay,
}
