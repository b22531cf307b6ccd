"""A product by a one-hot matrix made of index comparisons, read as the gather it is (the FMA engine's `mma`,
`codegen/mma.py`; after `shift_dot`, whose diagonals are constants).

`dot(x, m)` with `m = where(k == x0, 1.0 - lx, 0.0) + where(k == x1, lx, 0.0)`, `k` an `arange` along the
product's index and `x0`, `x1`, `lx` values along the output's other axis (tests/user t09's bilinear resize, g10's
interpolation matrices on either side, s08's one-hot lookup `where(arange(V).reshape([1, V]) == id, 1.0, 0.0)`,
o03's rotation `where(c == r + h, 1.0, 0.0) - where(c + h == r, 1.0, 0.0)`, a08's `((k - j == 1) || (j - k ==
1)) as f32`: a tile has no load at per-element indices, so a gather is written as a one-hot or weight-matrix
product) sums K products an output, all but a few of them by zero. The FMA engine built the [K, N] matrix in
registers (t09 at 128: 283 setp and 271 selp of the kernel's 1,000 PTX instructions), staged it in shared memory
(64 KB a CTA) and ran K FMAs an output. Here the other operand alone goes through shared memory and an output
runs one FMA a distinct index its terms name.

The matrix's recognized form (`onehot_of`), for the product's index k along axis `kax` of `m` and the free
coordinate f along the other: a tree of `+` and `-` over terms `where(c, w, rest)` / `c as f32`, `rest` again
such a tree or the constant 0.0, `w` an f32 value constant along k (a broadcast of a [1, N] / [M, 1] / [N] tile, a
scalar or a constant). A condition `c` is an index comparison `a * k + b * f + c0 == idx` (a = +-1, `shift_dot`'s
linear forms; `idx` an integer value constant along k, or none: a08's `k - j == 1`), or an `&` / `||` of
conditions that is false at every k but its index comparisons' (`||`: both sides such; `&`: one side such, the
other any condition: a bool constant along k, s07's `(r == B - 1) & (c == 0)`, or an order comparison of a
linear form in k, `k < n`). So `m[k, f]` is zero at every k but its comparisons' k = a * (idx(f) - b * f - c0),
and at those the tree's own value, evaluated here with the same selects, adds and subtracts (a comparison's k
where the element is zero after all, under an `&`, is an FMA by zero: the loop's own product there). A tree may
also be multiplied by, or divided by, a value constant along k (`(k == idx) as f32 * w`): its element at every
other k is then +-0.0 or NaN (0 * inf, 0 / 0), and where it is NaN and some k is not an index the output is NaN,
as the loop's product by that element makes it.

The value is the FMA loop's bit for bit (`shift_dot`'s argument): the loop runs k upwards from +0.0, and a
product by zero leaves the sum as it is unless its other factor is an infinity or a NaN. So an output is the FMAs
of its distinct in-range indices in increasing order (sorted by a compare-and-swap network; equal indices are one
element of the matrix, taken once), NaN where another element of its line of x is not finite (a count a line,
less the taken elements' own; skipped by a warp none of whose lines holds one, `vote.any`). Each of the two
paths computes its outputs' indices and elements itself, one output after another (computed once before the
branch they all lived across it: g10's upsample at 32 x 32 took 105 registers so, 72 this way).
Only for f32 products whose accumulator is a constant zero tile (`TILEC_GATHER_DOT=0` off).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from ..gpu import nodes as g
from .shift_dot import (
    _counts,
    _float,
    _is_nonfinite,
    _join_paths,
    _lin,
    _nan_if_others,
    _through,
    _vote_lines,
    band_of,
    defining_ops,
)

# a value constant along the product's index: ("c", number) a constant, ("s", v) a scalar, ("t", v) tile `v`
# whose elements run along the free coordinate (a [1, N], [N, 1] or [N] tile before its broadcast)
Col = tuple[str, Any]
# an index comparison (a, b, c, idx): true at k where a * k + b * f + c == idx(f) (idx None: 0), a = +-1, f the
# free coordinate: its one k is a * (idx - b * f - c)
Term = tuple[int, int, int, Col | None]
# a condition: ("eq", t) terms[t]; ("and", x, y), ("or", x, y); ("b", col) a bool constant along k; ("cmp", op,
# a, b, c, idx) `a * k + b * f + c <op> idx(f)` (op "slt" "sle" "sgt" "sge" "ne", any a)
Cond = tuple[Any, ...]
# the matrix: ("zero", +0.0 or -0.0), ("ind", cond) (`cond as f32`), ("where", cond, weight, rest),
# ("add", x, y), ("sub", x, y), ("mul" / "div", x, weight, whether the weight is on the left)
Tree = tuple[Any, ...]

_MAX_TERMS = 8
_PREDS = {ir.ElemOp.NE: "ne", ir.ElemOp.LT: "slt", ir.ElemOp.LE: "sle", ir.ElemOp.GT: "sgt", ir.ElemOp.GE: "sge"}
_SWAP = {"ne": "ne", "slt": "sgt", "sle": "sge", "sgt": "slt", "sge": "sle"}


def enabled() -> bool:
    """`TILEC_GATHER_DOT` (unset or "1": on; "0": off, the FMA loop over the matrix as before)."""
    return flag("TILEC_GATHER_DOT", "1")


def _number(c: object, dt: tuple[DType, ...]) -> bool:
    """Constant `c` is of one of the kinds `dt` (bool only for bools)."""
    if isinstance(c, bool):
        return DType.BOOL in dt
    return isinstance(c, int | float) and DType.BOOL not in dt


def _col(v: ir.Value, defs: dict[int, object], kax: int, dt: tuple[DType, ...]) -> Col | None:
    """`v` ([K, N] or [M, K] as the matrix) as a value constant along axis `kax`, of a type in `dt`."""
    if v.dtype not in dt:
        return None
    if not v.shape:
        c = _through(defs.get(v.id), defs)
        if isinstance(c, ir.Const) and _number(c.value, dt):
            return ("c", c.value)
        return ("s", v)
    o = _through(defs.get(v.id), defs)
    match o:
        case ir.Const(value=c) if _number(c, dt):
            return ("c", c)
        case ir.Broadcast(x=x):
            if not x.shape:
                return _col(x, defs, kax, dt)
            xs = (1,) * (2 - len(x.shape)) + tuple(x.shape)
            if len(xs) != 2 or xs[kax] != 1:
                return None
            if len(x.shape) == 2 and x.shape[0] == x.shape[1] == 1:  # a [1, 1] tile: one value
                return None
            return ("t", x)
    return None


def _side(p: ir.Value, q: ir.Value, defs: dict[int, object], kax: int) -> tuple[int, int, int, Col | None, bool] | None:
    """Integer tiles `p`, `q` compared as `a * k + b * f + c` against `idx(f)` (a != 0): both linear forms in
    the row and column index (their difference, idx None), or one such form and a value constant along k; the
    last item says the form is `q`'s (an order comparison then turns round)."""
    lp, lq = _lin(p, defs), _lin(q, defs)
    if lp is not None and lq is not None:
        d = tuple(x - y for x, y in zip(lp, lq, strict=True))
        if d[kax] != 0 and d[2] == 0 and (abs(d[0]) + abs(d[1])) * 65536 + abs(d[3]) < 1 << 31:
            return d[kax], d[1 - kax], d[3], None, False
        return None
    for lin, other, swapped in ((lp, q, False), (lq, p, True)):
        if lin is None or lin[kax] == 0 or lin[2] != 0:
            continue
        idx = _col(other, defs, kax, (DType.I32, DType.I64))
        if idx is not None and (idx[0] != "c" or isinstance(idx[1], int)):
            return lin[kax], lin[1 - kax], lin[3], idx, swapped
    return None


def _cond(v: ir.Value, defs: dict[int, object], kax: int, terms: list[Term], depth: int = 0) -> Cond | None:
    """Bool [R, C] tile `v` as a condition (`Cond`); its index comparisons appended to `terms`."""
    o = _through(defs.get(v.id), defs)
    if depth > 2 * _MAX_TERMS or len(v.shape) != 2:
        return None
    if isinstance(o, ir.Elementwise) and o.op in (ir.ElemOp.AND, ir.ElemOp.OR) and len(o.operands) == 2:
        x = _cond(o.operands[0], defs, kax, terms, depth + 1)
        y = _cond(o.operands[1], defs, kax, terms, depth + 1) if x is not None else None
        return None if y is None else ("and" if o.op is ir.ElemOp.AND else "or", x, y)
    if isinstance(o, ir.Elementwise) and (o.op is ir.ElemOp.EQ or o.op in _PREDS) and len(o.operands) == 2:
        side = _side(o.operands[0], o.operands[1], defs, kax)
        if side is not None:
            a, b, c, idx, swapped = side
            if o.op is ir.ElemOp.EQ and a in (1, -1):
                terms.append((a, b, c, idx))
                return ("eq", len(terms) - 1)
            if o.op is not ir.ElemOp.EQ:
                return ("cmp", _SWAP[_PREDS[o.op]] if swapped else _PREDS[o.op], a, b, c, idx)
            return None
    col = _col(v, defs, kax, (DType.BOOL,))
    if col is None and isinstance(o, ir.Broadcast) and len(o.x.shape) == 2:
        return _cond(o.x, defs, kax, terms, depth + 1)  # (`k < 9` of a [K, 1] k, broadcast)
    return None if col is None else ("b", col)


def _sparse(c: Cond) -> bool:
    """Condition `c` is false at every k but its index comparisons' (`and`: either side's; `or`: both's)."""
    match c[0]:
        case "eq":
            return True
        case "and":
            return _sparse(c[1]) or _sparse(c[2])
        case "or":
            return _sparse(c[1]) and _sparse(c[2])
    return False


def _zero(v: ir.Value, defs: dict[int, object]) -> float | None:
    """The zero f32 `v` is a constant of (+0.0 or -0.0, through broadcasts: t09's `0.0` is a [1, N] tile
    broadcast again), else None."""
    for _ in range(8):
        o = _through(defs.get(v.id), defs)
        match o:
            case ir.Const(value=c) if not isinstance(c, bool) and isinstance(c, int | float):
                return float(c) if c == 0 else None
            case ir.Broadcast(x=x):
                v = x
            case _:
                return None
    return None


def onehot_of(em: Any, m: ir.Value, kax: int) -> tuple[Tree, list[Term]] | None:
    """f32 [R, C] tile `m` as a one-hot matrix along axis `kax` (the module doc's form): its tree and comparisons;
    None where it is not one."""
    if m.dtype is not DType.F32 or len(m.shape) != 2 or m.shape[kax] < 2:
        return None
    defs = defining_ops(em)
    o = _through(defs.get(m.id), defs)
    if isinstance(o, ir.Permute) and o.perm == (1, 0):
        return onehot_of(em, o.x, 1 - kax)
    terms: list[Term] = []

    def cond(c: ir.Value) -> Cond | None:
        got = _cond(c, defs, kax, terms)
        return got if got is not None and _sparse(got) else None

    def tree(v: ir.Value, depth: int) -> Tree | None:
        if depth > 2 * _MAX_TERMS or len(terms) > _MAX_TERMS:
            return None
        o = _through(defs.get(v.id), defs)
        match o:
            case ir.Cast(x=x) if x.dtype is DType.BOOL and v.dtype is DType.F32:
                c = cond(x)
                return None if c is None else ("ind", c)
            case ir.Elementwise(op=ir.ElemOp.WHERE, operands=(c, x, y)):
                cd, w = cond(c), _col(x, defs, kax, (DType.F32,))
                rest = tree(y, depth + 1) if cd is not None and w is not None else None
                return None if rest is None else ("where", cd, w, rest)
            case ir.Elementwise(op=ir.ElemOp.ADD | ir.ElemOp.SUB, operands=(x, y)):
                lx = tree(x, depth + 1)
                ly = tree(y, depth + 1) if lx is not None else None
                return None if ly is None else ("add" if o.op is ir.ElemOp.ADD else "sub", lx, ly)
            case ir.Elementwise(op=ir.ElemOp.MUL | ir.ElemOp.DIV, operands=(x, y)):
                # a tree times (over) a value constant along k: zero times it is +-0.0 or NaN (`_off_nan`)
                for t, w, swap in ((x, y, False), (y, x, True)):
                    if swap and o.op is ir.ElemOp.DIV:
                        break  # (w / 0.0 is no zero)
                    cw = _col(w, defs, kax, (DType.F32,))
                    lt = tree(t, depth + 1) if cw is not None else None
                    if lt is not None:
                        return ("mul" if o.op is ir.ElemOp.MUL else "div", lt, cw, swap)
                return None
        z = _zero(v, defs)
        return None if z is None else ("zero", z)

    got = tree(m, 0)
    # (an output's cost grows as its terms squared: its sort and its element at each index; the FMA loop's as K)
    if got is None or not terms or len(terms) > _MAX_TERMS or len(terms) ** 2 > m.shape[kax]:
        return None
    return got, terms


def gather_of(em: Any, op: object) -> tuple[Tree, list[Term], bool] | None:
    """(the one-hot matrix's tree, its comparisons, whether it is the left operand) where `gather_dot` takes
    `op`, else None."""
    if not enabled() or not isinstance(op, ir.Mma | g.DotOp):
        return None
    a, b, acc = op.a, op.b, op.acc
    if a.dtype is not DType.F32 or acc.dtype is not DType.F32 or len(a.shape) != 2:
        return None
    defs = defining_ops(em)
    z = _through(defs.get(acc.id), defs)
    if not (isinstance(z, ir.Const) and not isinstance(z.value, bool) and z.value == 0):
        return None
    if band_of(em, b) is not None or band_of(em, a) is not None:
        return None  # `shift_dot`'s (and with `TILEC_SHIFT_DOT=0` the FMA loop's, as before it)
    got = onehot_of(em, b, 0)
    if got is not None:
        return got[0], got[1], False
    got = onehot_of(em, a, 1)
    return None if got is None else (got[0], got[1], True)


def matrix_read(em: Any, op: object) -> tuple[ir.Value, list[ir.Value]] | None:
    """(the one-hot matrix operand, the values the gather reads instead) where `gather_dot` takes `op`: the
    matrix's own ops are not emitted (`shift_dot.dead_band_ops`)."""
    got = gather_of(em, op)
    if got is None:
        return None
    return (op.a if got[2] else op.b), sources(got[0], got[1])  # type: ignore[attr-defined]


def sources(tree: Tree, terms: list[Term]) -> list[ir.Value]:
    """The values the gather reads besides its other operand: the comparisons' index tiles and scalars,
    the conditions' bools and the weights (kept alive by `shift_dot.dead_band_ops`)."""
    out: list[ir.Value] = [t[3][1] for t in terms if t[3] is not None and t[3][0] != "c"]
    return out + [c[1] for c in _cols(tree) if c[0] != "c"]


def _cols(t: Tree | Cond) -> list[Col]:
    """The weights, bools and compared values of tree or condition `t` (not the index comparisons')."""
    match t[0]:
        case "where":
            return _cols(t[1]) + [t[2]] + _cols(t[3])
        case "ind":
            return _cols(t[1])
        case "add" | "sub" | "and" | "or":
            return _cols(t[1]) + _cols(t[2])
        case "mul" | "div":
            return _cols(t[1]) + [t[2]]
        case "b":
            return [t[1]]
        case "cmp":
            return [] if t[5] is None else [t[5]]
    return []


def _per_output(em: Any, col: Col, r: ir.Value, fax: int, staged: dict[int, int], reg: str) -> list[str]:
    """`col` at each output slot of result `r` (its free coordinate along axis `fax`): a constant, a scalar, the
    source tile's registers where this thread holds them (`views.register_map`), else its shared-memory copy
    (`staged`: the source's byte offset)."""
    kind, v = col
    n = em.nregs(r)
    if kind == "c":
        return [_float(repr(float(v))) if reg == "float" else str(int(v))] * n
    if kind == "s":
        return [em.scalar(v)] * n
    if v.id in staged:
        return [em.smem_load(staged[v.id], v.dtype, cs[fax]) for _, cs in em.out_coords(r)]
    return _local(em, v, r, fax)  # type: ignore[return-value]


def _local(em: Any, v: ir.Value, r: ir.Value, fax: int) -> list[str] | None:
    """Tile `v`'s element at each output slot's free coordinate, from this thread's registers; None where some
    slot's element is in another thread."""
    from tilelang.backend.gpu.layouts import replicate_bound

    from .views import register_map, thread_register_map

    u = em.uniform(v)
    if u is not None:
        return [u] * em.nregs(r)
    sa = max(range(len(v.shape)), key=lambda d: v.shape[d])  # the source's axis along the free coordinate
    align: list[int | None] = [None, None]
    align[fax] = sa
    m = register_map(em.lay(v), em.lay(r), align)
    if m is None and replicate_bound():
        m = thread_register_map(em.lay(v), em.lay(r), align)
    if m is None:
        return None
    src = em.tile(v)
    return [src[i] for i in m]


def gather_dot(em: Any, op: ir.Mma | g.DotOp) -> bool:
    """Emit `op` as the gather its one-hot operand is (see the module doc); False where neither is one."""
    got = gather_of(em, op)
    if got is None:
        return False
    tree, terms, left = got
    a, b, r = op.a, op.b, op.result
    M, K = a.shape
    N = b.shape[1]
    other = a if not left else b
    fax = 1 if not left else 0  # the result's axis the matrix's free coordinate runs along
    lines = M if not left else N  # x's rows (b one-hot) or columns (a one-hot) the NaN counts run along
    cols = [t[3] for t in terms if t[3] is not None] + _cols(tree)
    tiles = {c[1].id: c[1] for c in cols if c[0] == "t"}
    far = [v for v in tiles.values() if _local(em, v, r, fax) is None]
    # the sources no thread holds where its outputs are first, the other operand last (`_counts` after it)
    offs = em.to_smem(far + [other], op.span)
    off = offs[-1]
    staged = {v.id: o for v, o in zip(far, offs, strict=False)}
    at: dict[int, list[str]] = {}  # each index, weight, bool or compared value at each output slot

    def value(c: Col) -> list[str]:
        if id(c) not in at:
            reg = "i1" if _dtype(c) is DType.BOOL else "float" if _dtype(c) is DType.F32 else _ity(c)
            at[id(c)] = _per_output(em, c, r, fax, staged, reg)
        return at[id(c)]

    coords = [ij for _, ij in em.out_coords(r)]
    em.declare("declare i1 @llvm.nvvm.vote.any.sync(i32, i1)")
    if lines == 1:
        slow, total_of = _line_count(em, off, K)
    else:
        cnt, parts = _counts(em, off, other.shape, not left, lines, op.span)
        totals, slow = _vote_lines(em, cnt, parts, lines, coords, left)

        def total_of(i: str, j: str) -> str:
            return totals[i if not left else j]

    for c in cols:  # (in the block before the branch: both paths read them)
        value(c)

    def picks(n: int, i: str, j: str) -> tuple[list[tuple[str, str, str]], str | None]:
        """Output slot `n`'s distinct in-range indices in increasing order, each (taken, the matrix's element
        there, the other operand's word), and whether its element at every other k is NaN (a scaled tree)."""
        f = j if not left else i  # the output's free coordinate
        ks = []
        for sgn, fb, c, idx in terms:
            ty = _ity(idx)
            off_f = _affine(em, f, fb, c, ty)  # b * f + c
            x = value(idx)[n] if idx is not None else "0"
            k = em.emit(f"sub {ty} {x}, {off_f}") if off_f != "0" else x
            if sgn == -1:
                k = em.emit(f"sub {ty} 0, {k}")
            inside = em.emit(f"icmp ult {ty} {k}, {K}")
            k = em.emit(f"select i1 {inside}, {ty} {k}, {ty} {K}")
            ks.append(k if ty == "i32" else em.emit(f"trunc i64 {k} to i32"))
        srt = list(ks)
        for end in range(len(srt) - 1, 0, -1):  # a bubble network: the indices in increasing order (K: none)
            for p in range(end):
                lt = em.emit(f"icmp ult i32 {srt[p]}, {srt[p + 1]}")
                srt[p], srt[p + 1] = (em.emit(f"select i1 {lt}, i32 {srt[p]}, i32 {srt[p + 1]}"),
                                      em.emit(f"select i1 {lt}, i32 {srt[p + 1]}, i32 {srt[p]}"))
        out = []
        for p, k in enumerate(srt):
            take = em.emit(f"icmp ult i32 {k}, {K}")
            if p:  # equal indices are one element of the matrix
                take = em.emit(f"and i1 {take}, {em.emit(f'icmp ne i32 {k}, {srt[p - 1]}')}")
            ksafe = em.emit(f"select i1 {take}, i32 {k}, i32 0")
            hits = [em.emit(f"icmp eq i32 {kt}, {k}") for kt in ks]
            w = _element(em, tree, lambda cd: _holds(em, cd, hits, k, f, n, value), n, value)
            flat = (em.emit(f"add i32 {em.emit(f'mul i32 {i}, {K}')}, {ksafe}") if not left
                    else em.emit(f"add i32 {em.emit(f'mul i32 {ksafe}, {N}')}, {j}"))
            out.append((take, w, flat))
        if not _scaled(tree):
            return out, None
        z = _element(em, tree, lambda cd: "false", n, value)  # the element at every k no index names
        taken = "0"
        for take, _, _ in out:
            taken = em.emit(f"add i32 {taken}, {em.emit(f'zext i1 {take} to i32')}")
        some = em.emit(f"icmp ult i32 {taken}, {K}")  # some k is no index
        return out, em.emit(f"and i1 {some}, {em.emit(f'fcmp uno float {z}, 0.0')}")

    # each path computes its outputs one after another (an output's indices and elements live a short while:
    # a thread of a large tile holds many outputs)
    go_fast, go_slow, join = em.new_label("gdf"), em.new_label("gds"), em.new_label("gdj")
    em.cbr(slow, go_slow, go_fast)
    ends, outs = [], []
    for nan in (False, True):
        em.label(go_slow if nan else go_fast)
        vals = []
        for n, (i, j) in enumerate(coords):
            out, off_nan = picks(n, i, j)
            cur, own = "0.0", "0"
            for take, w, flat in out:
                x = em.smem_load(off, DType.F32, flat)
                cur = em.emit(f"select i1 {take}, float {em.fcall('fma', 'float', [x, w, cur])}, float {cur}")
                if nan:
                    hit = em.emit(f"zext i1 {em.emit(f'and i1 {take}, {_is_nonfinite(em, x)}')} to i32")
                    own = em.emit(f"add i32 {own}, {hit}")
            if nan:
                cur = _nan_if_others(em, total_of(i, j), own, cur)
            if off_nan is not None:  # every other k's element is NaN (the FMA loop's product by it)
                cur = em.emit(f"select i1 {off_nan}, float 0x7FF8000000000000, float {cur}")
            vals.append(cur)
        outs.append(vals)
        ends.append(em.cur)
        em.br(join)
    _join_paths(em, r, join, outs, ends)
    return True


def _dtype(c: Col | None) -> DType:
    """The type of value `c` (a constant: bool, f32 or i32 by its Python type)."""
    if c is None:
        return DType.I32
    if c[0] != "c":
        return c[1].dtype  # type: ignore[no-any-return]
    return DType.BOOL if isinstance(c[1], bool) else DType.F32 if isinstance(c[1], float) else DType.I32


def _ity(c: Col | None) -> str:
    return "i64" if _dtype(c) is DType.I64 else "i32"


def _affine(em: Any, f: str, b: int, c: int, ty: str) -> str:
    """`b * f + c` (f an i32 coordinate, 0 <= f < 2^16) as an integer of LLVM type `ty`."""
    if b == 0:
        return str(c)
    x = f if ty == "i32" else em.emit(f"zext i32 {f} to i64")
    x = x if b == 1 else em.emit(f"mul {ty} {x}, {b}")
    return x if c == 0 else em.emit(f"add {ty} {x}, {c}")  # type: ignore[no-any-return]


def _holds(em: Any, cd: Cond, hits: list[str], k: str, f: str, n: int, value: Any) -> str:
    """i1: condition `cd` at index `k` (i32; in range where it matters) of output slot `n` (free coordinate
    `f`), its index comparisons `hits`."""
    match cd[0]:
        case "eq":
            return hits[cd[1]]
        case "and" | "or":
            x = _holds(em, cd[1], hits, k, f, n, value)
            y = _holds(em, cd[2], hits, k, f, n, value)
            return em.emit(f"{cd[0]} i1 {x}, {y}")  # type: ignore[no-any-return]
        case "b":
            if cd[1][0] == "c":
                return "true" if cd[1][1] else "false"
            return value(cd[1])[n]  # type: ignore[no-any-return]
        case "cmp":
            _, op, a, b, c, idx = cd
            ty = _ity(idx)
            kk = k if ty == "i32" else em.emit(f"zext i32 {k} to i64")
            lhs = kk if a == 1 else em.emit(f"mul {ty} {kk}, {a}")
            off = _affine(em, f, b, c, ty)
            lhs = lhs if off == "0" else em.emit(f"add {ty} {lhs}, {off}")
            rhs = value(idx)[n] if idx is not None else "0"
            return em.emit(f"icmp {op} {ty} {lhs}, {rhs}")  # type: ignore[no-any-return]
    raise AssertionError(cd)


def _element(em: Any, tree: Tree, holds: Any, n: int, value: Any) -> str:
    """The matrix's element at output slot `n` and an index where condition `cd` is `holds(cd)`: the tree
    evaluated with the ops that built it (`where` a select, `+` / `-` an f32 add / sub, a condition cast to
    f32 1.0 or 0.0); `value(col)` a weight at each slot."""
    match tree[0]:
        case "zero":
            return _float(repr(tree[1]))
        case "ind":
            return em.emit(f"select i1 {holds(tree[1])}, float 1.0, float 0.0")  # type: ignore[no-any-return]
        case "where":
            rest = _element(em, tree[3], holds, n, value)
            w = value(tree[2])[n]
            return em.emit(f"select i1 {holds(tree[1])}, float {w}, float {rest}")  # type: ignore[no-any-return]
        case "add" | "sub":
            x = _element(em, tree[1], holds, n, value)
            y = _element(em, tree[2], holds, n, value)
            return em.emit(f"f{tree[0]} float {x}, {y}")  # type: ignore[no-any-return]
        case "mul" | "div":
            x, w = _element(em, tree[1], holds, n, value), value(tree[2])[n]
            x, w = (w, x) if tree[3] else (x, w)
            return em.emit(f"f{tree[0]} float {x}, {w}")  # type: ignore[no-any-return]
    raise AssertionError(tree)


def _scaled(tree: Tree) -> bool:
    """The tree multiplies or divides: its element off the indices may be NaN (0 * inf, 0 / 0), not only +-0."""
    match tree[0]:
        case "mul" | "div":
            return True
        case "add" | "sub":
            return _scaled(tree[1]) or _scaled(tree[2])
        case "where":
            return _scaled(tree[3])
    return False


def _line_count(em: Any, off: int, K: int) -> tuple[str, Any]:
    """Where the other operand is one line (a [1, K] row, a [K, 1] column: element k at word k): every warp
    reads it from shared memory itself, a lane every 32nd element (no count stored, no barrier). Returns
    (whether the line holds an infinity or a NaN, `vote.any`: the same in every thread), the count's getter
    (summed by `shfl.bfly` where it is first asked for: in the branch that needs it)."""
    lane = em.emit(f"and i32 {em.tid0()}, 31")
    bads = []
    for c in range(-(-K // 32)):
        k = em.emit(f"add i32 {lane}, {32 * c}")
        ok = em.emit(f"icmp ult i32 {k}, {K}")
        ks = em.emit(f"select i1 {ok}, i32 {k}, i32 0")
        bads.append(em.emit(f"and i1 {ok}, {_is_nonfinite(em, em.smem_load(off, DType.F32, ks))}"))
    mine = "false"
    for bad in bads:
        mine = em.emit(f"or i1 {mine}, {bad}")
    slow = em.call("i1", "llvm.nvvm.vote.any.sync", f"i32 -1, i1 {mine}")
    memo: dict[str, str] = {}

    def total_of(i: str, j: str) -> str:
        if "t" not in memo:
            total = "0"
            for bad in bads:
                total = em.emit(f"add i32 {total}, {em.emit(f'zext i1 {bad} to i32')}")
            for m in (16, 8, 4, 2, 1):
                total = em.emit(f"add i32 {total}, {em.shfl_xor(total, DType.I32, m)}")
            memo["t"] = total
        return memo["t"]

    return slow, total_of


__all__ = ["enabled", "gather_dot", "gather_of", "matrix_read", "onehot_of", "sources"]
