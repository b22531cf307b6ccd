"""Bounds of the integer scalars a kernel computes, read off the ops that the
lowering built (`Builder.defs`, `Builder.loops`), for the tile index guard
(`views.tile_offset`): a run-time tile index `i` of a tile of `t` elements
whose `i * t` may leave `i32` is tested, one whose bounds keep it inside is
not, so the grid's and the `for` loops' indices cost nothing.

`Ranges(b).of(v)` is an inclusive `(lo, hi)` that holds on every engine,
from constants, `block_id`/`num_blocks` (the grid the `&mut` tiles give:
`Grid`), tensor dimensions (below 2^31), a `for` variable (its range's
bounds), `+ - *` that provably do not wrap, `/` by a non-negative divisor
(`x / 0` is 0), `%` by a positive constant, `min`/`max` (also spelled `if a <
b { a } else { b }`, std's `min_i32`), `&` of a non-negative side, `>>` by a
constant, `where`, casts; anything else is its type's whole range. Every rule
is exact or wider than the truth, never narrower: an index whose bounds are
too wide only costs a test (`tests/unit/test_index_ranges.py` holds each rule
to the interpreter's arithmetic)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

E = ir.ElemOp
_DEPTH = 64  # ops followed back from one index (deeper: the type's range)
DIM_MAX = (1 << 31) - 1  # a tensor's dimension, checked at every launch (`api/call.MAX_DIM`)


@dataclass(slots=True)
class Grid:
    """The most blocks the launch grid can have along each axis: the `&mut`
    parameters' own tiles cut dimensions below 2^31 (`runtime/launch.bind_launch`:
    every `&mut` partition gives the same grid), so `block_id(d)` is below
    ceil((2^31 - 1) / T) for each such tile's size T along d, and 0 along an
    axis no `&mut` tile spans."""

    blocks: list[int] = field(default_factory=lambda: [1, 1, 1])

    @staticmethod
    def of(tiles: list[tuple[tuple[int, ...], int | None]]) -> Grid:
        """`tiles`: each `&mut` parameter's own tile shape and its `last_block`
        group axis (its grid is the launch's with 1 there: no bound), or None."""
        out = [1, 1, 1]
        spanned = [False, False, False]
        for shape, group in tiles:
            for d, t in enumerate(shape[:3]):
                if d == group or t <= 0:
                    continue
                n = -(-DIM_MAX // t)
                out[d] = n if not spanned[d] else min(out[d], n)
                spanned[d] = True
        for d in range(3):
            if not spanned[d] and any(group == d for _, group in tiles):
                out[d] = DIM_MAX  # a group's axis no other tile spans: unknown here
        return Grid(out)


def _type_range(dt: DType) -> tuple[int, int] | None:
    if dt is DType.BOOL:
        return (0, 1)
    if not dt.is_int:
        return None
    bits = dt.bits
    if dt.is_signed:
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return (0, (1 << bits) - 1)


class Ranges:
    """The bounds of one kernel's integer scalars, as its lowering builds it with `b`
    (`grid`: set once the `&mut` parameters are known; every axis unknown before)."""

    def __init__(self, b: Builder) -> None:
        self.b = b
        self.grid = Grid([DIM_MAX, DIM_MAX, DIM_MAX])
        self.memo: dict[int, tuple[int, int]] = {}

    def of(self, v: ir.Value, depth: int = 0) -> tuple[int, int] | None:
        """Inclusive bounds of the integer scalar `v` (None: not an integer scalar)."""
        return _int_range(self, v, depth)


def _int_range(cx: Ranges, v: ir.Value, depth: int = 0) -> tuple[int, int] | None:
    whole = _type_range(v.dtype)
    if whole is None or v.shape:
        return None
    memo = cx.memo
    got = memo.get(v.id)
    if got is not None:
        return got
    r = _derive(cx, v, depth) if depth < _DEPTH else None
    if r is None or r[0] < whole[0] or r[1] > whole[1] or r[0] > r[1]:
        r = whole  # a result that may have wrapped holds any value of its type
    memo[v.id] = r
    return r


def _derive(cx: Ranges, v: ir.Value, depth: int) -> tuple[int, int] | None:
    b = cx.b
    loop = b.loops.get(v.id)
    if loop is not None:
        lower, upper = loop
        lo, hi = _int_range(cx, lower, depth + 1), _int_range(cx, upper, depth + 1)
        if lo is None or hi is None:
            return None
        return (lo[0], hi[1] - 1)  # the body runs only while lower <= iv < upper
    op = b.defs.get(v.id)
    match op:
        case ir.Const(value=c) if isinstance(c, (bool, int)):
            return (int(c), int(c))
        case ir.BlockId(axis=a):
            return (0, cx.grid.blocks[a] - 1)
        case ir.NumBlocks(axis=a):
            return (1, cx.grid.blocks[a])
        case ir.TensorDim():
            return (0, DIM_MAX)
        case ir.Cast(x=x, bits=False):
            return _int_range(cx, x, depth + 1)  # a value outside the new type: its whole range
        case ir.Elementwise(op=eop, operands=xs):
            return _elementwise(cx, eop, xs, depth)
        case ir.If():
            return _if(cx, op, op.results.index(v), depth)
    return None


_MINMAX = {E.LT: E.MINIMUM, E.LE: E.MINIMUM, E.GT: E.MAXIMUM, E.GE: E.MAXIMUM}


def _if(cx: Ranges, op: ir.If, k: int, depth: int) -> tuple[int, int] | None:
    """Result `k` of an `if`: either branch's (`if a < b { a } else { b }`,
    std's `min_i32`, is the min of the two)."""
    ys = [r.ops[-1].values[k] if r.ops and isinstance(r.ops[-1], ir.Yield) else None for r in (op.then, op.else_)]
    if ys[0] is None or ys[1] is None:
        return None
    cmp = cx.b.defs.get(op.cond.id)
    if isinstance(cmp, ir.Elementwise) and cmp.op in _MINMAX and not cmp.result.shape:
        x, y = cmp.operands
        if (ys[0].id, ys[1].id) in ((x.id, y.id), (y.id, x.id)):
            # `a < b ? a : b` is min(a, b), `a < b ? b : a` is max(a, b) (and so with > and >=)
            picks_lesser = (ys[0].id == x.id) == (_MINMAX[cmp.op] is E.MINIMUM)
            return _elementwise(cx, E.MINIMUM if picks_lesser else E.MAXIMUM, (x, y), depth)
    a, b = _int_range(cx, ys[0], depth + 1), _int_range(cx, ys[1], depth + 1)
    return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))


def _elementwise(cx: Ranges, eop: ir.ElemOp, xs: tuple[ir.Value, ...], depth: int) -> tuple[int, int] | None:
    rs = [_int_range(cx, x, depth + 1) for x in xs]
    if eop is E.WHERE:
        a, c = rs[1], rs[2]
        return None if a is None or c is None else (min(a[0], c[0]), max(a[1], c[1]))
    if any(r is None for r in rs) or len(rs) != 2:
        return None
    (alo, ahi), (blo, bhi) = rs  # type: ignore[misc]
    match eop:
        case E.ADD:
            return (alo + blo, ahi + bhi)
        case E.SUB:
            return (alo - bhi, ahi - blo)
        case E.MUL:
            ps = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
            return (min(ps), max(ps))
        case E.MINIMUM:
            return (min(alo, blo), min(ahi, bhi))
        case E.MAXIMUM:
            return (max(alo, blo), max(ahi, bhi))
        case E.DIV if blo >= 0 and bhi > 0:
            # truncating, as every engine divides; by 0 it is 0 (Tile's `x / 0`)
            qs = [_tdiv(a, d) for a in (alo, ahi) for d in (max(blo, 1), bhi)] + ([0] if blo == 0 else [])
            return (min(qs), max(qs))
        case E.REM if blo == bhi and blo > 0:
            # truncating: the remainder takes the dividend's sign, below the divisor in size
            return (max(alo, -(blo - 1)) if alo < 0 else 0, max(0, min(ahi, blo - 1)))
        case E.AND if alo >= 0 or blo >= 0:
            return (0, min(h for lo, h in ((alo, ahi), (blo, bhi)) if lo >= 0))
        case E.SHR if blo == bhi and blo >= 0 and alo >= 0:
            # a non-negative value shifted right stays in [0, itself], whatever the engine does
            # with a shift past the width
            return (0, ahi >> blo if blo < 32 else ahi)
    return None


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q
