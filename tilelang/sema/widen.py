"""Helps that rewrite an operand (round 15): a sum or product of a narrow
type stored into (or added to) a wider one is taken in the narrow type, so
the cast belongs on its elements; an operand of `mma`/`dot` that is not
2-D becomes a matrix the way its place in the product reads it."""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.sema.types import Dim, TileT, Type, shape_str
from tilelang.syntax import ast

_SUMS = ("sum", "prod", "cumsum", "cumprod")


def widened_sum_help(tcx: Any, v: ast.Expr, have: object, want: object) -> str | None:
    """E0201's help for `z.store(t.sum(1))` of a `u8` tile into `i32` (round 15: `t.sum(1) as i32` summed in
    `u8`, 20 threes were 60 but 200 were 88): a sum or product of a narrower type than the one it is stored
    into is cast before it is taken, `(t as i32).sum(1)`, where the stored type holds more."""
    if not isinstance(have, DType) or not isinstance(want, DType) or not _holds_more(want, have):
        return None
    name = v.method.name if isinstance(v, ast.MethodCall) else \
        v.callee.ident.name if isinstance(v, ast.Call) and isinstance(v.callee, ast.Name) and v.args else ""
    if name not in _SUMS:
        return None
    call = _cast_inside(tcx, v, want)
    what = "product" if "prod" in name else "sum"
    how = f"rounded to `{have}`" if have.is_float else f"taken in `{have}`, wrapping past its range"
    return f"cast the elements before the {what}: a {what} of `{have}` values is {how}: `{call}`"


def _cast_inside(tcx: Any, v: ast.Expr, want: DType) -> str:
    """`v` with the cast on the elements under its sums (`t.cumsum(1).sum(1)` -> `(t as i32).cumsum(1).sum(1)`)."""
    if isinstance(v, ast.MethodCall) and v.method.name in _SUMS:
        inner = v.receiver
        text = _cast_inside(tcx, inner, want) if _is_sum(inner) else f"({tcx.cast_snippet(inner)} as {want})"
        return f"{text}.{v.method.name}({', '.join(tcx.snippet(a.value) for a in v.args)})"
    assert isinstance(v, ast.Call) and isinstance(v.callee, ast.Name)
    inner = v.args[0].value
    text = _cast_inside(tcx, inner, want) if _is_sum(inner) else f"{tcx.cast_snippet(inner)} as {want}"
    return f"{v.callee.ident.name}({text}{''.join(', ' + tcx.snippet(a.value) for a in v.args[1:])})"


def _is_sum(v: ast.Expr) -> bool:
    return (isinstance(v, ast.MethodCall) and v.method.name in _SUMS) or \
        (isinstance(v, ast.Call) and isinstance(v.callee, ast.Name) and v.callee.ident.name in _SUMS and bool(v.args))


def _holds_more(want: DType, have: DType) -> bool:
    """`want` is wider than `have` (a sum in `want` keeps what one in `have` loses)."""
    if have.is_float:
        return want.is_float and want.bits > have.bits
    return want.is_float or (want.is_int and want.bits > have.bits)


def mma_2d_help(tcx: Any, x: ast.Expr, t: Type, operand: str, cx: Any) -> str:
    """How to make an operand of `mma` 2-D: a batched tile `[1, M, K]` (one
    matrix of a 3-D partition) drops its axes of size 1; a vector `[K]` is a
    row on the left and a column on the right (round 15: `dot(m, v)`, a
    matrix-vector product, was told `[1, N]` for `v` too)."""
    if isinstance(t, TileT) and len(t.shape) == 1 and operand in ("a", "b"):
        k, v = shape_str(t.shape)[1:-1], tcx.receiver_snippet(x)
        if operand == "a":
            return f"a vector on the left is a row: `{v}.reshape([1, {k}])` (the product is then one row)"
        left, lt = cx.args[0], cx.arg_tys[0]
        if cx.name == "dot" and isinstance(lt, TileT) and len(lt.shape) == 2 and len(tcx.snippet(left)) <= 30:
            m, a = shape_str(lt.shape[:1])[1:-1], tcx.snippet(left)
            return (f"a vector on the right is a column: `dot({a}, {v}.reshape([{k}, 1])).reshape([{m}])` is the "
                    f"matrix-vector product (or, with no product, `({tcx.receiver_snippet(left)} * "
                    f"{v}.reshape([1, {k}])).sum(1)`)")
        return f"a vector on the right is a column: `{v}.reshape([{k}, 1])` (the product is then one column)"
    batched = _batched_product_help(tcx, cx)
    if batched is not None:
        return batched
    if isinstance(t, TileT) and len(t.shape) > 2:
        rest = [d for d in t.shape if not (isinstance(d, Dim) and d.const_value == 1) and d != 1]
        snippet = tcx.snippet(x)
        if len(rest) == 2 and snippet and len(snippet) <= 40:
            return (f"drop the axes of size 1: `{snippet}.reshape({shape_str(tuple(rest))})` (the batch "
                    "index is the load's, not the matrix's); `mma` multiplies one 2-D matrix by another")
    return "reshape it to 2-D, e.g. `t.reshape([1, N])`"


def _batched_product_help(tcx: Any, cx: Any) -> str | None:
    """`dot(a, b)` of `[B, M, K]` and `[B, K, N]` tiles (torch.matmul's batch, round 18: a batch of 4 x 4 matrix
    exponentials was told "reshape it to 2-D, e.g. `t.reshape([1, N])`"): the batch of products as a broadcast
    product summed over K, the whole call written out."""
    tys = cx.arg_tys[:2]
    if len(tys) < 2 or not all(isinstance(t, TileT) and len(t.shape) == 3 for t in tys):
        return None
    (b1, m, k1), (b2, k2, n) = tys[0].shape, tys[1].shape
    if str(b1) != str(b2) or str(k1) != str(k2) or str(b1) == "1":
        return None
    a, b = (tcx.receiver_snippet(x) for x in cx.args[:2])
    if not a or not b or len(a) > 40 or len(b) > 40:
        return None
    prod = f"({a}.reshape([{b1}, {m}, {k1}, 1]) * {b}.reshape([{b1}, 1, {k1}, {n}])).sum(2)"
    dt = getattr(tys[0], "dtype", None)
    half = str(dt) in ("f16", "bf16")
    if half:
        prod = f"({a} as f32).reshape([{b1}, {m}, {k1}, 1]) * ({b} as f32).reshape([{b1}, 1, {k1}, {n}])"
        prod = f"({prod}).sum(2)"
    if cx.name == "mma" and len(cx.args) > 2:
        prod = f"{tcx.receiver_snippet(cx.args[2])} + {prod}"
    return (f"`{cx.name}` multiplies one 2-D matrix by another; a batch of {b1} products of [{m}, {k1}] by "
            f"[{k1}, {n}] is a broadcast product summed over K: `{prod}`"
            + (" (in `f32`, as `dot` sums)" if half else ""))


def load_like_reshape_help(tcx: Any, x: ast.Expr, before: tuple[Any, ...], new: tuple[Any, ...]) -> str | None:
    """A reshape of `b.load_like(x)` that changes the element count (round 15: `b.load_like(x).reshape([1, M])`
    with `x` a [1, N] tile, a right-hand side of another length): the count help proposed a reshape that
    keeps x's N elements, dropping b's last ones. Where the loaded tile and the reshape each have one
    dimension that is not 1, the tile of `b` is read through a partition in the loaded tile's orientation
    (then reshaped as written)."""
    if not (isinstance(x, ast.MethodCall) and x.method.name == "load_like" and len(x.args) == 1 and len(before) <= 3):
        return None
    b, like = tcx.snippet(x.receiver), tcx.snippet(x.args[0].value)
    wide = [i for i, d in enumerate(before) if str(d) != "1"]
    sizes = [d for d in new if str(d) != "1"]
    if not b.isidentifier() or not like.isidentifier() or len(wide) != 1 or len(sizes) != 1:
        return None
    shape = tuple(sizes[0] if i == wide[0] else d for i, d in enumerate(before))
    ids = ", ".join(f"block_id({i})" for i in range(len(shape)))
    then = "" if shape_str(shape) == shape_str(new) else f".reshape({shape_str(new)})"
    return (f"`{b}.load_like({like})` reads a tile of `{like}`'s shape, {shape_str(before)}; a tile of `{b}` "
            f"with another length is read through a partition: `{b}.partition({shape_str(shape)})"
            f".load([{ids}]){then}`")


def generic_count_help(a: Dim, b: Dim) -> str | None:
    """E0208's help in a generic function (round 16: `re.reshape([LS, 2, R])` of a `Tile<f32, [N]>` with `N`,
    `LS` and `R` three const generics): its shapes are compared as written, for every instance at once (a
    kernel's are checked per launch instead), so the dimension must be spelt as the product."""
    if a.is_const and b.is_const or not (a.symbols() or b.symbols()):
        return None
    from tilelang.sema.types import divisibility_gap, divisibility_help

    gap = divisibility_gap([a], [b])
    if gap is not None:  # huser26: `[BT, H, D]` as `[BT, H, 2, D / 2]`: the quotient as a generic of its own
        return "a function's shapes are compared as written, for every instance at once: " + divisibility_help(gap)
    said = f"a function's shapes are compared as written, for every instance at once: nothing says `{a}` is `{b}`"
    if str(a).isidentifier():
        return f"{said}; in the function's signature write `{b}` where it says `{a}` (`Tile<.., [{b}]>`)"
    return f"{said}; write the tile's dimensions in the function's signature with the generics of `{b}`"
