"""The typing rules of the shape operations of tiles and host tensors:
`reshape`, `broadcast`, `transpose`, `permute` (each a tile rule for kernels
and a host-tensor rule, `_by_receiver` picks by the receiver), `item` and
`shape`. Each is a `Rule` of `rules.RULES` (`(tcx, cx) -> Type`): it decides
the result's shape from the receiver's and the arguments (constants in a
kernel), or reports why the shapes disagree (E0208 element counts, E0202
broadcasting, E0217 ranks, E0207 permutations, E0721 a host `item` of
more than one element when the shape is a constant).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tilelang.diagnostics.bounds import item_not_one
from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.codes.runtime import HOST_INDEX
from tilelang.sema.context import CallCx, CheckCx
from tilelang.sema.kernel import check_tile_limits, reshape_proposal
from tilelang.sema.ruleargs import shape_arg
from tilelang.sema.typeops import deref, numel
from tilelang.sema.types import (
    ERROR,
    Dim,
    ScalarT,
    ShapeT,
    TensorT,
    TileT,
    Type,
    broadcast_shapes,
    const_shape,
    shape_str,
)
from tilelang.sema.widen import generic_count_help, load_like_reshape_help
from tilelang.syntax import ast

Rule = Callable[[CheckCx, CallCx], Type]


def rule_reshape(tcx: CheckCx, cx: CallCx) -> Type:
    x, ty = cx.recv, cx.recv_ty
    assert x is not None and ty is not None
    shape = shape_arg(tcx, cx, cx.args[0], need_const=cx.fx.in_kernel)
    if isinstance(ty, TileT):
        if shape is None:
            return ERROR
        new = tuple(d for d in shape if d is not None)
        a, b = numel(ty.shape), numel(new)
        if a != b and not (a.is_const and b.is_const) and cx.fx.kernel_name is not None:
            # not decidable symbolically (`[B]` -> `[2, B / 2]`): checked per launch
            tcx.kernel_reshapes.setdefault(cx.fx.kernel_name, []).append(
                (ty.shape, new, cx.args[0].span, load_like_reshape_help(tcx, x, ty.shape, new)))
        elif a != b:
            return tcx.emit(tcx.err(T.RESHAPE_COUNT,
                                    f"cannot reshape {shape_str(ty.shape)} ({numel(ty.shape)} elements) into "
                                    f"{shape_str(new)} ({numel(new)} elements)", cx.args[0].span,
                                    "element counts differ")
                            .secondary(x.span, f"this is `{ty}`")
                            .with_help(load_like_reshape_help(tcx, x, ty.shape, new) or generic_count_help(a, b)
                                       or _reshape_count_help(a, new)))
        check_tile_limits(tcx, new, cx.args[0].span, cx.fx.kernel_name)
        return TileT(ty.dtype, new)
    t = deref(ty)
    if not isinstance(t, TensorT):
        return tcx.emit(tcx.err(T.INVALID_OPERAND, f"cannot reshape a `{ty}`", x.span, "not a tile or tensor")
                        .with_help("reshape a tile or a tensor"))
    if shape is None:
        rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
        return TensorT(t.dtype, None if rank is None else (None,) * rank)
    if t.shape is not None and all(d is not None for d in t.shape) and all(d is not None for d in shape):
        a, b = numel(t.shape), numel(shape)  # type: ignore[arg-type]
        if a.is_const and b.is_const and a != b:
            return tcx.emit(tcx.err(T.RESHAPE_COUNT,
                                    f"cannot reshape {shape_str(t.shape)} ({a} elements) into {shape_str(shape)} "
                                    f"({b} elements)", cx.args[0].span, "element counts differ")
                            .secondary(x.span, f"this is `{ty}`")
                            .with_help(_reshape_count_help(a, shape)))  # type: ignore[arg-type]
    return TensorT(t.dtype, shape)


def _reshape_count_help(count: Dim, new: tuple[Dim, ...]) -> str:
    """E0208's help where the counts are constants: a shape that holds them."""
    vals = tuple(d.const_value for d in new)
    fix = None
    if count.is_const and all(v is not None for v in vals):
        fix = reshape_proposal(count.const_value, new, vals)  # type: ignore[arg-type]
    if fix is None:
        return "the new shape must hold the same number of elements"
    return f"`.reshape({shape_str(fix)})` holds its {count} elements"


def _host_tensor(cx: CallCx) -> TensorT | None:
    """The receiver's tensor type when a host tensor method is called (host
    tensors and tiles share `broadcast`, `transpose`, `permute`)."""
    t = deref(cx.recv_ty) if cx.recv_ty is not None else None
    return t if isinstance(t, TensorT) and not cx.fx.in_kernel else None


def _tile_receiver(cx: CallCx) -> tuple[ast.Expr, TileT]:
    """The receiver of a tile method and its type (`calls` chose the method by
    the receiver's kind; a host tensor receiver was handled before)."""
    x, ty = cx.recv, cx.recv_ty
    assert isinstance(ty, TileT) and x is not None
    return x, ty


def _host_broadcast(tcx: CheckCx, cx: CallCx, host: TensorT) -> Type:
    shape = shape_arg(tcx, cx, cx.args[0], need_const=False)
    if shape is None:
        return ERROR
    if host.shape is not None and all(d is not None for d in (*host.shape, *shape)):
        out = broadcast_shapes(host.shape, shape)
        if out is None or tuple(out) != tuple(shape):
            return tcx.emit(tcx.err(T.SHAPE_MISMATCH, f"cannot broadcast {shape_str(host.shape)} to "
                                    f"{shape_str(shape)}", cx.args[0].span, "incompatible shapes")
                            .with_help("only dimensions of size 1 stretch (NumPy rules)"))
    return TensorT(host.dtype, tuple(shape))


def _tile_broadcast(tcx: CheckCx, cx: CallCx) -> Type:
    x, ty = _tile_receiver(cx)
    shape = shape_arg(tcx, cx, cx.args[0], need_const=True)
    if shape is None:
        return ERROR
    new = tuple(d for d in shape if d is not None)
    out = broadcast_shapes(ty.shape, new)
    if out is None or tuple(out) != new:
        return tcx.emit(tcx.err(T.SHAPE_MISMATCH, f"cannot broadcast {shape_str(ty.shape)} to {shape_str(new)}",
                                cx.args[0].span, "incompatible shapes")
                        .secondary(x.span, f"this is `{ty}`")
                        .note("broadcasting stretches dimensions of size 1 and adds leading dimensions")
                        .with_help("only dimensions of size 1 stretch: reshape to put 1 where the new shape differs"))
    check_tile_limits(tcx, new, cx.args[0].span, cx.fx.kernel_name)
    return TileT(ty.dtype, new)


def _host_transpose(tcx: CheckCx, cx: CallCx, host: TensorT) -> Type:
    if host.shape is None:
        return TensorT(host.dtype, None)  # the rank is checked at run time
    if len(host.shape) != 2:
        return tcx.emit(tcx.err(T.RANK_MISMATCH, f"`transpose` needs a 2-D tensor, found "
                                f"{len(host.shape)}-D", cx.span, f"this is `{cx.recv_ty}`")
                        .with_help("use `.permute([..])` for other ranks"))
    return TensorT(host.dtype, (host.shape[1], host.shape[0]))


def _tile_transpose(tcx: CheckCx, cx: CallCx) -> Type:
    x, ty = _tile_receiver(cx)
    if len(ty.shape) != 2:
        return tcx.emit(tcx.err(T.RANK_MISMATCH, f"`transpose` needs a 2-D tile, found {len(ty.shape)}-D",
                                x.span, f"this is `{ty}`").with_help("use `.permute([..])` for other ranks"))
    return TileT(ty.dtype, (ty.shape[1], ty.shape[0]))


def _host_permute(tcx: CheckCx, cx: CallCx, host: TensorT) -> Type:
    axes = shape_arg(tcx, cx, cx.args[0], need_const=False, kind="axes")
    if axes is None:
        return ERROR
    hv = [d.const_value if d is not None else None for d in axes]
    if host.shape is None or any(v is None for v in hv):
        return TensorT(host.dtype, None if host.shape is None else (None,) * len(host.shape))
    if sorted(hv) != list(range(len(host.shape))):  # type: ignore[type-var]
        return tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"`permute` needs a permutation of "
                                f"0..{len(host.shape)}", cx.args[0].span,
                                f"not a permutation of the {len(host.shape)} axes")
                        .with_help(f"list each axis 0..{len(host.shape)} exactly once"))
    return TensorT(host.dtype, tuple(host.shape[v] for v in hv))  # type: ignore[index]


def _tile_permute(tcx: CheckCx, cx: CallCx) -> Type:
    _, ty = _tile_receiver(cx)
    axes = shape_arg(tcx, cx, cx.args[0], need_const=True, kind="axes")
    if axes is None:
        return ERROR
    vals = [d.const_value if d is not None else None for d in axes]
    if sorted(v for v in vals if v is not None) != list(range(len(ty.shape))) or len(vals) != len(ty.shape):
        return tcx.emit(tcx.err(T.AXIS_OUT_OF_RANGE, f"`permute` needs a permutation of 0..{len(ty.shape)}",
                                cx.args[0].span, f"not a permutation of the {len(ty.shape)} axes")
                        .with_help(f"list each axis 0..{len(ty.shape)} exactly once"))
    return TileT(ty.dtype, tuple(ty.shape[v] for v in vals if v is not None))


def _by_receiver(tile_rule: Rule, host_rule: Callable[[CheckCx, CallCx, TensorT], Type]) -> Rule:
    """The rule of a method that tiles (in kernels) and host tensors share."""

    def rule(tcx: CheckCx, cx: CallCx) -> Type:
        host = _host_tensor(cx)
        return host_rule(tcx, cx, host) if host is not None else tile_rule(tcx, cx)

    return rule


rule_broadcast = _by_receiver(_tile_broadcast, _host_broadcast)
rule_transpose = _by_receiver(_tile_transpose, _host_transpose)
rule_permute = _by_receiver(_tile_permute, _host_permute)


def rule_item(tcx: CheckCx, cx: CallCx) -> Type:
    """`t.item()`: the scalar of a one-element tile (checked now) or host tensor
    (checked now when its shape is a constant, else at run time: E0721)."""
    x, ty = cx.recv, cx.recv_ty
    assert x is not None and ty is not None
    if isinstance(ty, TileT):
        n = numel(ty.shape)
        if (n.is_const and n.const_value != 1) or (ty.shape and not n.is_const):
            return tcx.emit(tcx.err(T.SHAPE_MISMATCH, f"`item` needs a tile of one element, found "
                                    f"{shape_str(ty.shape)}", x.span, f"this is `{ty}`")
                            .with_help("reduce it to one element first, e.g. `t.max(0)` or "
                                       "`t.sum(0)`"))
        return ScalarT(ty.dtype)
    t = deref(ty)
    if isinstance(t, TensorT) and t.dtype is not None:
        shape = const_shape(t.shape)
        bad = item_not_one(shape_str(t.shape), math.prod(shape)) if shape is not None else None
        if bad is not None:  # E0721 when it runs: known now
            tcx.emit(tcx.err(HOST_INDEX, bad.message, cx.node.span, bad.label)
                     .note("the tensor's shape is known before the program runs")
                     .with_help(bad.help))
        return ScalarT(t.dtype)
    return tcx.emit(tcx.err(T.INVALID_OPERAND, f"`item` expects a tile or a tensor, found `{ty}`",
                            x.span, "not a tile or tensor")
                    .with_help("call `.item()` on a one-element tile or tensor"))


def rule_shape(tcx: CheckCx, cx: CallCx) -> Type:
    t = deref(cx.recv_ty)  # type: ignore[arg-type]
    assert isinstance(t, TensorT)
    if t.shape is not None:
        tcx.shape_values[cx.node] = t.shape
        return ShapeT(len(t.shape))
    return ShapeT(None)
