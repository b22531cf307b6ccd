"""Helps for PyTorch's ways of cutting a tile or tensor into parts, which Tile spells otherwise (round 16):
`t.chunk(n, k)`, `t.split(size, k)`, `t.tensor_split(n, k)`, `t.unbind(k)` (Tile has no slicing: part j is a
masked sum over a reshape that gives the parts an axis of their own), and `t.transpose(a, b)` with axes
(Tile's `transpose` takes none: it swaps the two axes of a 2-D value; other ranks `permute`)."""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.sema.typeops import deref
from tilelang.sema.types import Dim, TileT
from tilelang.syntax import ast

PARTS = ("chunk", "split", "tensor_split", "unbind")
_BASE = ("Tile has no slicing: a part is a masked sum over a reshape that gives the parts an axis of their own "
         "(`where(arange::<i32>(n).reshape([..]) == j, t.reshape([.., n, c, ..]), 0.0).sum(k)`), or, in a kernel, "
         "a tile of its own loaded from the tensor")


def parts(name: str, rty: Any, e: Any, x: str | None) -> str | None:
    """The help of `x.NAME(..)` (a method of `PARTS`, or `transpose` with axes) on a value of type `rty`, braces
    doubled for the caller's `format` (not `transpose`'s, which is emitted as it is)."""
    t, x = rty if isinstance(rty, TileT) else deref(rty), x if x and len(x) < 30 else "t"
    shape = getattr(t, "shape", None)
    if name == "transpose":
        return None if shape is None else transpose_help(len(shape), e, x)
    h = parts_help(name, shape, getattr(t, "dtype", None), e, x) or _BASE
    return h.replace("{", "{{").replace("}", "}}")


def _int(x: ast.Expr | None) -> int | None:
    if isinstance(x, ast.IntLit):
        return int(x.value)
    if isinstance(x, ast.Unary) and x.op == "-" and isinstance(x.operand, ast.IntLit):
        return -int(x.operand.value)
    return None


def parts_help(name: str, shape: tuple[Any, ...] | None, dtype: Any, e: ast.MethodCall, x: str) -> str | None:
    """`x.chunk(2, 1)` of a [4, 16] tile: part j is `where(arange::<i32>(2).reshape([1, 2, 1]) == j,
    x.reshape([4, 2, 8]), 0.0).sum(1)` (a generic tile's dimensions as written: `[BB, 4, H]` of `[BB, H * 4]`);
    None where the arguments are not constants or the parts are not equal."""
    if not shape or any(d is None for d in shape):
        return None
    dims: list[Dim] = [d if isinstance(d, Dim) else Dim.const(int(d)) for d in shape]
    args = [_int(a.value) for a in e.args]
    if name == "unbind":
        axis, count = (args[0] if args else 0), 1
    else:
        axis, count = (args[1] if len(args) > 1 else 0), (args[0] if args else None)
    if axis is None or count is None or count <= 0:
        return None
    axis = axis + len(dims) if axis < 0 else axis
    if not 0 <= axis < len(dims):
        return None
    whole = dims[axis]
    if name == "unbind":
        n, c = whole, Dim.const(1)
    else:
        rest = whole.mod(count)
        if rest.const_value != 0:
            return None
        n, c = (whole.floordiv(count), Dim.const(count)) if name == "split" else (Dim.const(count),
                                                                                  whole.floordiv(count))
    zero = "false" if dtype is DType.BOOL else "0.0" if isinstance(dtype, DType) and dtype.is_float else "0"
    one = c.const_value == 1

    def text(ds: list[Any]) -> str:
        return ", ".join(str(d) for d in ds)

    new = dims[:axis] + [n, c] + dims[axis + 1:]
    mask = [1] * axis + [n] + [1] * (len(dims) - axis)
    part = dims[:axis] + ([] if one else [c]) + dims[axis + 1:]
    expr = (f"where(arange::<i32>({n}).reshape([{text(mask)}]) == j, {x}.reshape([{text(new)}]), {zero})"
            f".sum({axis})" + (f".reshape([{text(part)}])" if one and part else ""))
    return (f"Tile has no slicing: part j of the {n} (a [{text(part)}] value) is `{expr}`; in a kernel, a part "
            "that comes from a tensor is better loaded as its own tile (`p.load([.., j])` of a partition with the "
            "part's shape)")


def transpose_help(rank: int | None, e: ast.MethodCall, x: str) -> str | None:
    """`x.transpose(0, 1)`: Tile's `transpose()` takes no axes."""
    args = [_int(a.value) for a in e.args]
    if rank is None or len(args) != 2 or None in args:
        return None
    a, b = ((v + rank if v < 0 else v) for v in args)  # type: ignore[operator]
    if not (0 <= a < rank and 0 <= b < rank) or a == b:
        return None
    if rank == 2:
        return f"`{x}.transpose()` swaps the two axes (it takes none: a 2-D value has only the one pair)"
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return (f"`{x}.permute([{', '.join(map(str, perm))}])` swaps axes {a} and {b} (`transpose()` takes no axes: "
            "it swaps the two of a 2-D value)")
