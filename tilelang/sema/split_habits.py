"""Helps for PyTorch's ways of cutting a tile or tensor into parts, which Tile spells otherwise (round 16):
`t.chunk(n, k)`, `t.split(size, k)`, `t.tensor_split(n, k)`, `t.unbind(k)` (Tile has no slicing: part j is a
masked sum over a reshape that gives the parts an axis of their own), and `t.transpose(a, b)` with axes
(Tile's `transpose` takes none: it swaps the two axes of a 2-D value; other ranks `permute`).

Round 17 (huser17): moving elements within a tile, written for the value's own shape and element type:
`t.roll(k, axis)` (a product with a 0/1 matrix on the side of the axis; the help had been the [N] row's
form with `N` and `k` to fill in, whose `% N` of a negative shift lost elements), `t.flip(axis)` of a 2-D
tile (the 1-D form's reshape mixed rows), `t.logsumexp(k)`, and PyTorch's keepdim given by position,
`t.sum(1, true)` ("takes 0 to 1 arguments")."""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.sema.typeops import deref
from tilelang.sema.types import Dim, TensorT, TileT
from tilelang.syntax import ast

PARTS = ("chunk", "split", "tensor_split", "unbind", "roll", "logsumexp")
FLIPS = ("flip", "fliplr", "flipud", "reverse")
_REDUCTIONS = ("sum", "max", "min", "prod", "argmax", "argmin", "mean", "amax", "amin")
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
    if name in ("roll", "logsumexp"):
        fn = roll_help if name == "roll" else logsumexp_help
        fn = host_roll_help if name == "roll" and not isinstance(rty, TileT) else fn  # (the host has no `dot`)
        h = fn(shape, getattr(t, "dtype", None), e, x)
        return None if h is None else h.replace("{", "{{").replace("}", "}}")
    h = parts_help(name, shape, getattr(t, "dtype", None), e, x) or _BASE
    return h.replace("{", "{{").replace("}", "}}")


def replay_loop_help(e: Any, count: str | None) -> str | None:
    """`g.replay(25)` or `g.replay(times = 25)` (round 21, the Python API's spelling; `count` the argument as
    written): Tile's `replay` runs the recording once, so n runs are a loop. The keyword's help had been "drop
    `times =`", which led to the other spelling, then "call it with 0 arguments"."""
    if not isinstance(e, ast.MethodCall) or e.method.name != "replay" or len(e.args) != 1:
        return None
    g = e.receiver.ident.name if isinstance(e.receiver, ast.Name) else "g"
    n = count if count and len(count) < 30 else "n"
    return f"`{g}.replay()` runs the recording once: for {n} runs, `for _ in 0..{n} {{ {g}.replay(); }}`"


def arity_help(name: str, rty: Any, e: Any, x: str | None, types: Any = None) -> str | None:
    """The help of a method call with too many arguments that another library's spelling explains:
    `x.transpose(0, 1)`, `x.sum(1, true)` (PyTorch's keepdim by position) of a tile of known shape, and
    `x.load(offs, mask)` (Triton's) with `types` the checker's types of the call's arguments."""
    if name == "transpose":
        return parts(name, rty, e, x)
    if name == "replay":
        a = e.args[0].value if len(e.args) == 1 else None
        return replay_loop_help(e, str(a.value) if isinstance(a, ast.IntLit) else a.ident.name
                                if isinstance(a, ast.Name) else None)
    if name == "load" and e.args and types is not None:
        return triton_load_help(x or "x", "", types.get(e.args[0].value))
    t, x = rty if isinstance(rty, TileT) else deref(rty), x if x and len(x) < 30 else "t"
    shape = getattr(t, "shape", None)
    args = [a.value for a in e.args]
    if name not in _REDUCTIONS or len(args) != 2 or not isinstance(args[1], ast.BoolLit) or not shape \
            or None in shape:
        return None
    axis = _int(args[0])
    if axis is None or not -len(shape) <= axis < len(shape):
        return None
    axis %= len(shape)
    call = f"{x}.{name}({axis})"
    if not args[1].value:
        return f"Tile's reductions take no keepdim: `{call}` removes the axis"
    kept = ", ".join("1" if i == axis else str(d) for i, d in enumerate(shape))
    return f"Tile's reductions take no keepdim: `{call}.reshape([{kept}])` keeps axis {axis} as size 1"


def _paren(d: Any) -> str:
    s = str(d)
    return s if s.isidentifier() or s.isdigit() else f"({s})"


def _shift_matrix(n: Any, k: int | str, left: bool, dtype: str) -> tuple[str, str]:
    """The [N, N] 0/1 matrix of a cyclic shift by `k` along an axis of length `n`, and the same shift bringing
    in zeros: on the right of a row (`dot(t, s)`, s[i, j] where j - i is k modulo N) or on the left of a
    column (`dot(s, t)`, s[i, j] where i - j is). The difference is tested, not `(i + k) % N == j`: Tile's `%`
    keeps the dividend's sign, and a remainder of 0 is the one that does not care."""
    col, row = f"arange::<i32>({n}).reshape([{n}, 1])", f"arange::<i32>({n}).reshape([1, {n}])"
    diff = f"{col} - {row}" if left else f"{row} - {col}"
    if isinstance(k, int):
        off = "" if k == 0 else f" - {k}" if k > 0 else f" + {-k}"
        kk = str(k)
    else:
        off, kk = f" - {k}", k
    return f"(({diff}{off}) % {_paren(n)} == 0) as {dtype}", f"({diff} == {kk}) as {dtype}"


def roll_help(shape: tuple[Any, ...] | None, dtype: Any, e: ast.MethodCall, x: str) -> str | None:
    """`x.roll(k, axis)` (PyTorch's `torch.roll(t, shifts, dims)`, NumPy's `np.roll(a, shift, axis)`; no axis:
    the flattened value): element i along the axis is element i - k, a product with a 0/1 matrix, written
    for `x`'s shape (1-D, a 2-D value's axis 0 or 1, or the first or last axis of a higher one through a
    reshape) and element type; None where that is not known."""
    if not shape or None in shape or not isinstance(dtype, DType) or dtype is DType.BOOL or not e.args \
            or len(e.args) > 2:
        return None
    k: int | str | None = _int(e.args[0].value)
    if k is None:
        k = e.args[0].value.name.name if isinstance(e.args[0].value, ast.Name) else None  # type: ignore[attr-defined]
        if k is None:
            return None
    dims = [d if isinstance(d, Dim) else Dim.const(int(d)) for d in shape]
    whole = ", ".join(str(d) for d in dims)
    axis = _int(e.args[1].value) if len(e.args) == 2 else None
    if len(e.args) == 2 and (axis is None or not -len(dims) <= axis < len(dims)):
        return None
    if axis is None and len(dims) > 1:  # no axis: the flattened value, shape restored
        total = dims[0]
        for d in dims[1:]:
            total = total * d
        s, z = _shift_matrix(total, k, False, dtype.value)
        expr = f"dot({x}.reshape([1, {total}]), {s}).reshape([{whole}])"
    else:
        axis = 0 if axis is None else axis % len(dims)
        n = dims[axis]
        s, z = _shift_matrix(n, k, axis == 0 and len(dims) > 1, dtype.value)
        if len(dims) == 1:
            expr = f"dot({x}.reshape([1, {n}]), {s}).reshape([{n}])"
        elif axis == len(dims) - 1:
            rest = dims[0]
            for d in dims[1:-1]:
                rest = rest * d
            flat = x if len(dims) == 2 else f"{x}.reshape([{rest}, {n}])"
            expr = f"dot({flat}, {s})"
            expr = expr if len(dims) == 2 else f"{expr}.reshape([{whole}])"
        elif axis == 0:
            rest = dims[1]
            for d in dims[2:]:
                rest = rest * d
            flat = x if len(dims) == 2 else f"{x}.reshape([{n}, {rest}])"
            expr = f"dot({s}, {flat})"
            expr = expr if len(dims) == 2 else f"{expr}.reshape([{whole}])"
        else:
            return None
    if dtype in (DType.F16, DType.BF16):  # (`dot` of 16-bit floats sums in f32)
        expr = f"{expr} as {dtype.value}"
    return (f"Tile has no roll: a cyclic shift is a product with a 0/1 matrix, `{expr}` (`{z}` for the matrix of "
            "a shift that brings in zeros instead); exact for finite values: an infinity or NaN makes its whole "
            "row of the product NaN (0 times infinity)")


def host_roll_help(shape: tuple[Any, ...] | None, dtype: Any, e: ast.MethodCall, x: str) -> str | None:
    """`x.roll(k)` / `x.roll(k, axis)` of a host tensor (1-D, or 2-D along an axis), which has no `dot`:
    element j along the axis is element j - k, picked by a masked sum over a broadcast that gives the
    axis a partner (as `flip_help`'s reversal); None where the shape or the arguments are not known."""
    if not shape or len(shape) > 2 or None in shape or not e.args or len(e.args) > 2:
        return None
    k = _int(e.args[0].value)
    axis = _int(e.args[1].value) if len(e.args) == 2 else 0 if len(shape) == 1 else None
    if k is None or axis is None or not -len(shape) <= axis < len(shape):
        return None
    axis %= len(shape)
    dims = [str(d) for d in shape]
    n = dims[axis]
    off = "" if k == 0 else f" - {k}" if k > 0 else f" + {-k}"
    zero = "false" if dtype is DType.BOOL else "0.0" if isinstance(dtype, DType) and dtype.is_float else "0"
    if len(dims) == 1:
        j, i, b, red = f"arange::<i32>({n}).reshape([{n}, 1])", f"arange::<i32>({n}).reshape([1, {n}])", \
            f"{x}.reshape([1, {n}]).broadcast([{n}, {n}])", 1
    elif axis == 1:
        m = dims[0]
        j, i, b, red = f"arange::<i32>({n}).reshape([1, {n}, 1])", f"arange::<i32>({n}).reshape([1, 1, {n}])", \
            f"{x}.reshape([{m}, 1, {n}]).broadcast([{m}, {n}, {n}])", 2
    else:
        c = dims[1]
        j, i, b, red = f"arange::<i32>({n}).reshape([{n}, 1, 1])", f"arange::<i32>({n}).reshape([1, {n}, 1])", \
            f"{x}.reshape([1, {n}, {c}]).broadcast([{n}, {n}, {c}])", 1
    how = "max" if dtype is DType.BOOL else "sum"
    return (f"Tile has no roll: element j of the result is element j {'-' if k >= 0 else '+'} {abs(k)} (modulo {n}) "
            f"along axis {axis}, picked by "
            f"a masked {how}: `where(({j} - {i}{off}) % {_paren(n)} == 0, {b}, {zero}).{how}({red})`")


def flip_help(shape: tuple[Any, ...] | None, dtype: Any, e: ast.MethodCall | None, x: str) -> str | None:
    """`x.flip(axis)` of a 2-D tile (`fliplr`: axis 1, `flipud`: axis 0): element i along the axis is element
    N - 1 - i, a masked sum over a broadcast that gives the reversed axis a partner; None but for 2-D values
    of known shape (the 1-D form is `_flip_help`'s)."""
    if not shape or len(shape) != 2 or None in shape or e is None:
        return None
    name = e.method.name
    if name in ("fliplr", "flipud"):
        axis: int | None = 1 if name == "fliplr" else 0
    else:
        axis = _int(e.args[0].value) if len(e.args) == 1 else None
    if axis is None or not -2 <= axis < 2:
        return None
    axis %= 2
    m, n = (str(d) for d in shape)
    zero = "false" if dtype is DType.BOOL else "0.0" if isinstance(dtype, DType) and dtype.is_float else "0"
    r = (m, n)[axis]
    i, j = (f"arange::<i32>({r}).reshape([1, {r}, 1])", f"arange::<i32>({r}).reshape([1, 1, {r}])") if axis else \
        (f"arange::<i32>({r}).reshape([{r}, 1, 1])", f"arange::<i32>({r}).reshape([1, {r}, 1])")
    b = f"{x}.reshape([{m}, 1, {n}]).broadcast([{m}, {n}, {n}])" if axis else \
        f"{x}.reshape([1, {m}, {n}]).broadcast([{m}, {m}, {n}])"
    red = ".max(2)" if dtype is DType.BOOL and axis else ".max(1)" if dtype is DType.BOOL else f".sum({axis + 1})"
    return (f"Tile has no reversal: element i of `{x}` reversed along axis {axis} is element {r} - 1 - i, picked "
            f"by a masked sum: `where({i} + {j} == {r} - 1, {b}, {zero}){red}`")


def logsumexp_help(shape: tuple[Any, ...] | None, dtype: Any, e: ast.MethodCall, x: str) -> str | None:
    """`x.logsumexp(k)` (PyTorch's): the row maximum subtracted and added back, written for `x`'s shape."""
    if not shape or None in shape or len(e.args) != 1:
        return None
    axis = _int(e.args[0].value)
    if axis is None or not -len(shape) <= axis < len(shape):
        return None
    axis %= len(shape)
    kept = ", ".join("1" if i == axis else str(d) for i, d in enumerate(shape))
    m = f"{x}.max({axis})"
    # (round 24: a 1-D tile's maximum is a scalar, which has no `reshape`: `t.max(0).reshape([1])` was E0103)
    back = m if len(shape) == 1 else f"{m}.reshape([{kept}])"
    return (f"`log(exp({x} - {back}).sum({axis})) + {m}` (the maximum subtracted first, so no "
            "`exp` overflows; a row of -inf gives NaN: guard it with `where` as a masked softmax does)")


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


def flip_1d_help(ty: Any, x: str) -> str:
    """How to reverse `x` (`flip(x, 0)`, `x.flip(0)`): element i is element N - 1 - i, a masked sum over an
    [N, N] tile; spelt with a 1-D tile's own length and a zero of its element type."""
    n, zero = "N", "0.0"
    ty = deref(ty) if ty is not None else None
    if isinstance(ty, (TileT, TensorT)) and ty.shape is not None and len(ty.shape) == 1 and ty.shape[0] is not None:
        n = str(ty.shape[0])
        n = n if n.isidentifier() or n.isdigit() else f"({n})"
        zero = "0.0" if not isinstance(ty.dtype, DType) or ty.dtype.is_float else \
            "false" if ty.dtype is DType.BOOL else "0"
    what = f"`{x}` reversed" if n != "N" else f"`{x}` reversed (N elements along the axis)"
    return (f"Tile has no reversal: element i of {what} is element {n} - 1 - i, picked by a masked sum: "
            f"`where(arange::<i32>({n}).reshape([{n}, 1]) + arange::<i32>({n}).reshape([1, {n}]) == {n} - 1, "
            f"{x}.reshape([1, {n}]).broadcast([{n}, {n}]), {zero}).sum(1)`")


def range_adaptor_help(name: str, e: ast.MethodCall, snippet: Any) -> str:
    """`(a..b).rev()` and `(a..b).step_by(s)` (Rust's iterator adaptors; a range in Tile counts up by 1): the
    loop over the steps' count with the index computed from it, written with the range's own bounds (round
    17: the help was a general one about tile indices)."""
    general = ("a range counts up by 1: loop over tile indices (`for k in 0..n`) and multiply (`k * B`), or walk a "
               "partition (`for k in 0..p.num_tiles(1)`)")
    r = e.receiver
    if not isinstance(r, ast.RangeExpr):
        return general
    a, b = snippet(r.start), snippet(r.end)
    if not a or not b or len(a) + len(b) > 40:
        return general

    def wrap(x: str) -> str:
        return x if x.isidentifier() or x.isdigit() else f"({x})"

    hi = f"{wrap(b)} + 1" if r.inclusive else b          # the first value past the range
    last = b if r.inclusive else f"{wrap(b)} - 1"
    count = hi if a == "0" else f"{wrap(hi)} - {wrap(a)}"
    if name == "rev":
        return (f"a range counts up by 1: count up and index from the end, `for r in 0..{count} "
                f"{{ let i = {wrap(last)} - r; .. }}`")
    if len(e.args) != 1 or not (s := snippet(e.args[0].value)) or len(s) > 20:
        return general
    if s == "1":  # (round 21: "count the steps, `for k in 0..(T + 1 - 1) / 1 { let i = k * 1; .. }`")
        rng = f"{a}..{'=' if r.inclusive else ''}{b}"
        return f"a range counts up by 1 already: `{rng}` is `({rng}).step_by(1)`"
    s = wrap(s)
    steps = f"({count} + {s} - 1) / {s}"
    start = f"k * {s}" if a == "0" else f"{wrap(a)} + k * {s}"
    return f"a range counts up by 1: count the steps, `for k in 0..{steps} {{ let i = {start}; .. }}`"


def triton_load_help(x: str, offs: str, offs_ty: Any) -> str | None:
    """`x.load(offs)`, `x.load(offs, mask, other)` of a `&Tensor` with a tile of integer offsets (Triton's
    `tl.load(x_ptr + offs, mask=.., other=..)`, round 17: "takes 0 to 1 arguments" and "call it with 0 to 1
    arguments"): Tile reads a tile by its index; for `offs = i * B + arange(B)` that is tile `i` of a
    partition of `B`, which reads zeros past the end (no mask), `load_padded` another value. None where
    `offs` is not a 1-D integer tile."""
    if not isinstance(offs_ty, TileT) or not offs_ty.shape or len(offs_ty.shape) != 1 \
            or not isinstance(offs_ty.dtype, DType) or not offs_ty.dtype.is_int:
        return None
    b = str(offs_ty.shape[0])
    b = b if b.isidentifier() or b.isdigit() else f"({b})"
    offs = offs if offs and len(offs) < 30 else "offs"
    return (f"Tile reads a tile by its index, not elements by their offsets (Triton's `tl.load(x_ptr + offs, mask, "
            f"other)`): where `{offs}` is `i * {b} + arange::<i32>({b})`, read `{x}.partition([{b}]).load([i])` "
            f"(`{x}.load_like(z)`: the tile at a `&mut z`'s place); past the tensor's end it reads zeros, so it "
            f"needs no mask (`{x}.partition([{b}]).load_padded([i], v)` reads `v` there, Triton's `other`)")
