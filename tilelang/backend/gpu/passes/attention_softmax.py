"""Whether an attention loop's carried state is an online softmax that may be
split along the keys and merged (issue 15: the persistent walk's last round).

The persistent walk (`attention_tiles`) hands each CTA whole (head, query
block) tiles; when the tiles do not divide evenly among the CTAs, the last
round runs a few of them while the other CTAs idle (~3 % of every prefill row
on the H200, RESULTS.md 2026-12-04). Only smaller work removes that: the last
round's tiles split along their key blocks, each piece run by another CTA
from the loop's initial state, and the pieces' states merged before the
epilogue. The loop is the user's code, so the split is correct only for a
loop this module proves to be an online softmax, and an epilogue it proves
blind to how the state was reached. `state` is that proof (None: the loop
keeps whole tiles); `split` is its meaning, the kernel with its loop run in
pieces and merged, which the interpreter runs (the reference a GPU split
must agree with).

The loop (`for j in lo..hi`, step 1) carries exactly three values, in any
order, (m, l, acc) from the constants (k, 0, 0), k finite, and its body
yields them as

    alpha = b^(m - m')                      b = 2 (exp2) or e (exp)
    p     = b^(x - m')                      x - m' spelled `x - m'`, `x + (-m')`
                                            or `fma(x, y, -m')`; x, y read no
                                            carried value
    l'    = l * alpha + sum(p, columns)
    acc'  = mma(p as T, v, acc * alpha)
    m'    = anything (it may read m)

and reads l and acc nowhere else. Then after any blocks, every row keeps the
invariant l = sum_j b^(s_j - m), acc = sum_j b^(s_j - m) v_j over the scores
s_j = x (times y) it saw, whatever m' was: the state of a row is known only up
to a shift d (m + d, l b^-d, acc b^-d). Pieces run from (k, 0, 0) over
disjoint key ranges merge exactly (up to rounding) into the state of the
whole range:

    m = max_i m_i,   l = sum_i l_i b^(m_i - m),   acc = sum_i acc_i b^(m_i - m)

(a piece that saw no key has l_i = acc_i = 0, and with k finite its factor is
0 or 1, never NaN).

The epilogue (the ops after the loop) must then give the same values for any
shift: `_epilogue` classifies each value as invariant (C), a shifted max (M:
m + d), a scaled sum (S: l, acc times b^-d) or the log of one in base b
(N: log l - d), and accepts only these combinations: M +- C, M - M,
M + N (the log-sum-exp), S * C, S / C, S +- S, S / S (acc / l),
max/min/comparisons of like kinds, `where` of an invariant condition, sums
and maxima along the columns, reshapes and broadcasts that keep each row its
own. A store must store an invariant. A comparison of m with its initial
constant k (std's `m > MASKED`: the row saw a key) is invariant when m' is
`maximum(m, y)` or `where(y > m + t, y, m)` (t >= 0, y reading no carried
value: FlashAttention-4's stale max, std's): m then moves from k only to a y
above k (+ t), so m > k holds after the whole range exactly when it holds
after some piece, i.e. for the merged max. Anything else (m stored, l alone,
a cast of acc, a reduction across rows, an `if`) is refused.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh
from .rewrite import substitute, uses

E = ir.ElemOp
_PRODUCTS = (ir.Mma, g.DotOp)
_CMP = (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)


@dataclasses.dataclass(frozen=True, slots=True)
class Softmax:
    """A loop proved an online softmax: the positions of (m, l, acc) among
    its carried values, the exponential's base (2 or e) and m's initial
    constant; `monotone`: m' is a max form (m only grows, and only to a
    value above k), so comparisons of m with k are invariant."""

    m: int
    row_sum: int  # l
    acc: int
    base2: bool
    init: float
    monotone: bool


def state(kernel: Any) -> Softmax | None:
    """The proof for `kernel`'s (an `ir.Kernel` or a `g.GpuKernel`) only
    top-level loop with products (the attention loop), or None."""
    ops = list(kernel.body.ops)
    loops = [op for op in ops if isinstance(op, ir.For) and any(isinstance(o, _PRODUCTS) for o in g.walk(op.body))]
    if len(loops) != 1:
        return None
    i = ops.index(loops[0])
    return prove(loops[0], ops[:i], ops[i + 1:])


def prove(loop: ir.For, before: list[object], after: list[object]) -> Softmax | None:
    """The proof for `loop` (its body and initial values; `before`: the ops
    that define them) and the epilogue `after`, or None."""
    outer = {r.id: op for op in before for r in g.results(op)}
    s = _loop(loop, outer)
    if s is None or not _epilogue(loop, s, after, outer):
        return None
    return s


def _op(defs: dict[int, Any], vid: int) -> Any:
    """The op that defines value `vid` (None: a parameter, a loop index, or defined elsewhere)."""
    return defs.get(vid)


def _through(v: ir.Value, defs: dict[int, Any]) -> ir.Value:
    """`v` behind broadcasts and reshapes."""
    op = _op(defs, v.id)
    while isinstance(op, ir.Broadcast | ir.Reshape):
        v = op.x
        op = _op(defs, v.id)
    return v


def _keeps_rows(op: ir.Broadcast | ir.Reshape, rows: int) -> bool:
    """Whether `op` keeps each of the `rows` rows of its operand (a state
    value: dims of 1, then the rows, then the rest) its own: a broadcast that
    stretches no dim before the rows, a reshape that keeps a row's elements
    together and the dims before it 1."""
    x, r = op.x, op.result
    if not x.shape or x.shape[_row(x.shape)] != rows:
        return False
    a = _row(x.shape)
    if isinstance(op, ir.Broadcast):
        return all(d == 1 for d in r.shape[:a + len(r.shape) - len(x.shape)])
    b = _row(r.shape)
    return r.shape[b] == rows and math.prod(r.shape[b + 1:]) == math.prod(x.shape[a + 1:])


def _rows_chain(v: ir.Value, defs: dict[int, Any], rows: int) -> list[ir.Value]:
    """`v` and the values behind it through broadcasts and reshapes that keep
    the rows (`_keeps_rows`): each is `v` row for row."""
    out = [v]
    op = _op(defs, v.id)
    while isinstance(op, ir.Broadcast | ir.Reshape) and _keeps_rows(op, rows):
        out.append(op.x)
        op = _op(defs, op.x.id)
    return out


def _elem(op: object, *codes: ir.ElemOp) -> bool:
    return isinstance(op, ir.Elementwise) and op.op in codes


def _const(v: ir.Value, defs: dict[int, Any]) -> float | None:
    """The float constant every element of `v` holds (through broadcasts and reshapes), or None."""
    op = _op(defs, _through(v, defs).id)
    if isinstance(op, ir.Const) and isinstance(op.value, int | float) and not isinstance(op.value, bool):
        return float(op.value)
    return None


def _loop(loop: ir.For, outer: dict[int, Any]) -> Softmax | None:
    body = loop.body
    carried = body.args[1:]
    if len(carried) != 3 or not isinstance(body.ops[-1], ir.Yield) or _const(loop.step, outer) != 1.0:
        return None
    yv = body.ops[-1].values
    pos = {a.id: n for n, a in enumerate(carried)}
    defs: dict[int, Any] = {r.id: op for op in g.walk(body) for r in g.results(op)}
    # acc' = mma(p as T, v, acc * alpha)
    prods = [(n, _op(defs, v.id)) for n, v in enumerate(yv) if isinstance(_op(defs, v.id), _PRODUCTS)]
    if len(prods) != 1:
        return None
    ia, o = prods[0]
    scale = _op(defs, o.acc.id)
    if not _elem(scale, E.MUL):
        return None
    x0, x1 = scale.operands
    rows = carried[ia].shape[_row(carried[ia].shape)]
    if pos.get(x0.id) == ia:
        factor = x1
    elif pos.get(x1.id) == ia:
        factor = x0
    else:
        return None
    # alpha = b^(m - m')
    alpha = next((a for a in _rows_chain(factor, defs, rows) if _elem(_op(defs, a.id), E.EXP, E.EXP2)), None)
    if alpha is None:
        return None
    ex = _op(defs, alpha.id)
    base = ex.op
    diff = _op(defs, ex.operands[0].id)
    if not _elem(diff, E.SUB) or diff.operands[0].id not in pos:
        return None
    im, m_new = pos[diff.operands[0].id], diff.operands[1]
    if yv[im].id != m_new.id or im == ia:
        return None
    tainted = _tainted(body, {a.id for a in carried})
    # p = b^(x - m'), x free of the carried values
    cast = _op(defs, o.a.id)
    if not isinstance(cast, ir.Cast):
        return None
    p = cast.x
    pe = _op(defs, p.id)
    if not _elem(pe, base) or not _minus(pe.operands[0], m_new, defs, tainted, rows):
        return None
    # l' = l * alpha + sum(p, columns)
    il = next((n for n in range(3) if n not in (ia, im)), -1)
    if not _row_sum_update(yv[il], carried[il], alpha, p, defs, rows):
        return None
    count = uses(body)
    if count.get(carried[il].id) != 1 or count.get(carried[ia].id) != 1:
        return None  # l or acc read anywhere else
    # the initial state (k, 0, 0), k finite
    k, l0, a0 = (_const(loop.inits[n], outer) for n in (im, il, ia))
    if k is None or not math.isfinite(k) or l0 != 0.0 or a0 != 0.0:
        return None
    return Softmax(im, il, ia, base is E.EXP2, k, _monotone(m_new, carried[im], defs, tainted))


def _tainted(body: ir.Region, seeds: set[int]) -> set[int]:
    """The values of `body` that depend on `seeds` (an op reading one, in
    itself or its nested regions, taints every value it and they define)."""
    out = set(seeds)
    for op in body.ops:
        inner = list(g.walk(ir.Region((), (op,))))
        if any(v.id in out for o in inner for v in g.operands(o)):
            out |= {r.id for o in inner for r in g.results(o)}
    return out


def _minus(e: ir.Value, m_new: ir.Value, defs: dict[int, Any], tainted: set[int], rows: int) -> bool:
    """Whether `e` is x - m' (`x - m'`, `x + (-m')`, `fma(x, y, -m')`) with x, y untainted."""
    op = _op(defs, e.id)

    def is_m(v: ir.Value) -> bool:
        return any(a.id == m_new.id for a in _rows_chain(v, defs, rows))

    def is_neg_m(v: ir.Value) -> bool:
        return any(_elem(n := _op(defs, a.id), E.NEG) and any(
            b.id == m_new.id for b in _rows_chain(n.operands[0], defs, rows)) for a in _rows_chain(v, defs, rows))

    if _elem(op, E.SUB):
        x, y = op.operands
        return is_m(y) and x.id not in tainted
    if _elem(op, E.ADD):
        x, y = op.operands
        return (is_neg_m(y) and x.id not in tainted) or (is_neg_m(x) and y.id not in tainted)
    if _elem(op, E.FMA):
        x, y, z = op.operands
        return is_neg_m(z) and x.id not in tainted and y.id not in tainted
    return False


def _row_sum_update(new: ir.Value, l_arg: ir.Value, alpha: ir.Value, p: ir.Value, defs: dict[int, Any],
                    rows: int) -> bool:
    """Whether `new` is l * alpha + sum(p, columns) (either order of each operation)."""
    add = _op(defs, new.id)
    if not _elem(add, E.ADD) or len(p.shape) != 2 or p.shape[0] != rows:
        return False
    for a, b in (add.operands, add.operands[::-1]):
        mul = _op(defs, a.id)
        if not _elem(mul, E.MUL):
            continue
        u, w = mul.operands
        if not any(x.id == l_arg.id and any(c.id == alpha.id for c in _rows_chain(y, defs, rows))
                   for x, y in ((u, w), (w, u))):
            continue
        if any(isinstance(red := _op(defs, c.id), ir.Reduce) and red.op is ir.ReduceOp.SUM
               and red.x.id == p.id and red.axis == 1 for c in _rows_chain(b, defs, rows)):
            return True
    return False


def _monotone(m_new: ir.Value, m: ir.Value, defs: dict[int, Any], tainted: set[int]) -> bool:
    """Whether m' is `maximum(m, y)` or `where(y > m + t, y, m)` (t >= 0), y untainted."""
    op = _op(defs, m_new.id)
    if _elem(op, E.MAXIMUM):
        a, b = op.operands
        return (a.id == m.id and b.id not in tainted) or (b.id == m.id and a.id not in tainted)
    if _elem(op, E.WHERE):
        c, y, keep = op.operands
        gt = _op(defs, c.id)
        if keep.id != m.id or y.id in tainted or not _elem(gt, E.GT) or gt.operands[0].id != y.id:
            return False
        shifted = _op(defs, gt.operands[1].id)
        if shifted is not None and _elem(shifted, E.ADD):
            a, b = shifted.operands
            t = _const(b, defs) if a.id == m.id else _const(a, defs) if b.id == m.id else None
            return t is not None and t >= 0.0
        return bool(gt.operands[1].id == m.id)
    return False


# ---------------------------------------------------------------- the epilogue

C, Z, M, S, N = "C", "Z", "M", "S", "N"  # invariant, zero (invariant), shifted max, scaled sum, log of a sum


def _row(shape: tuple[int, ...]) -> int:
    """The row axis of a state value: its first dimension larger than 1."""
    return next((a for a, x in enumerate(shape) if x != 1), 0)


def _epilogue(loop: ir.For, s: Softmax, after: list[object], outer: dict[int, Any]) -> bool:
    """Whether every value `after` stores is the same for every shift of the
    state (see the module's docstring); `outer`: the ops before the loop."""
    kind: dict[int, str] = {loop.results[s.m].id: M, loop.results[s.row_sum].id: S, loop.results[s.acc].id: S}
    rows = loop.results[s.acc].shape[_row(loop.results[s.acc].shape)]
    defs: dict[int, Any] = dict(outer)
    log = E.LOG2 if s.base2 else E.LOG
    for op in after:
        for r in g.results(op):
            defs[r.id] = op

    def k(v: ir.Value) -> str:
        if v.id in kind:
            return kind[v.id]
        return Z if _const(v, defs) == 0.0 else C

    for op in after:
        inner = list(g.walk(ir.Region((), (op,))))  # type: ignore[arg-type]
        reads = [v for o in inner for v in g.operands(o)]
        if all(k(v) in (C, Z) for v in reads):
            continue  # invariant in, invariant out
        if isinstance(op, ir.Yield) and not op.values:
            continue
        if not isinstance(op, ir.Elementwise | ir.Reshape | ir.Broadcast | ir.Reduce):
            return False  # a store of a state value, a cast, a region...
        r = op.result
        if isinstance(op, ir.Reshape | ir.Broadcast):
            if not _keeps_rows(op, rows):
                return False  # a row stretched over others, or rows mixed
            kind[r.id] = k(op.x)
            continue
        if isinstance(op, ir.Reduce):
            kx = k(op.x)
            if op.axis == _row(op.x.shape) or not (
                    (kx == S and op.op in (ir.ReduceOp.SUM, ir.ReduceOp.MAX, ir.ReduceOp.MIN))
                    or (kx in (M, N) and op.op in (ir.ReduceOp.MAX, ir.ReduceOp.MIN))):
                return False
            kind[r.id] = kx
            continue
        got = _elementwise(op, [k(v) for v in op.operands], s, log, defs)
        if got is None:
            return False
        kind[r.id] = got
    return True


def _elementwise(op: ir.Elementwise, ks: list[str], s: Softmax, log: ir.ElemOp,
                 defs: dict[int, Any]) -> str | None:
    """The kind of `op`'s result from its operands' kinds `ks`, or None."""
    sc = [S if x == Z else x for x in ks]  # a zero is a scaled sum too
    c = op.op
    if c is E.WHERE:
        if ks[0] not in (C, Z):
            return None
        a, b = ks[1:]
        if a == b or {a, b} <= {S, Z}:
            return S if S in (a, b) else a
        return None
    if len(ks) == 1:
        if c is E.NEG and ks[0] == S:
            return S
        if c is log and ks[0] == S:
            return N
        return None
    if len(ks) != 2:
        return None
    a, b = ks
    if c in _CMP:
        if sc[0] == sc[1] and sc[0] in (S, M, N):
            return C
        if s.monotone and {a, b} <= {M, C, Z}:
            other = op.operands[1] if a == M else op.operands[0]
            return C if _const(other, defs) == s.init else None
        return None
    if c is E.ADD:
        pair = {a, b}
        if pair == {M, N}:
            return C
        if pair in ({M, C}, {M, Z}):
            return M
        if pair in ({N, C}, {N, Z}):
            return N
        return S if set(sc) == {S} else None
    if c is E.SUB:
        if a == b and a in (M, N):
            return C
        if a in (M, N) and b in (C, Z):
            return a
        return S if set(sc) == {S} else None
    if c is E.MUL:
        return S if {a, b} in ({S, C}, {S, Z}) else None
    if c is E.DIV:
        if a == S and b == S:
            return C
        return S if a in (S, Z) and b == C else None
    if c in (E.MAXIMUM, E.MINIMUM):
        if a == b and a in (M, N):
            return a
        return S if set(sc) == {S} else None
    return None


# ---------------------------------------------------------------- the meaning of a split

def split(kernel: ir.Kernel, pieces: int) -> ir.Kernel:
    """`kernel` with its attention loop run as `pieces` loops over
    consecutive key ranges (piece i: lo + n*i/pieces .. lo + n*(i+1)/pieces,
    n = max(hi - lo, 0); some may be empty), each from the initial state,
    merged as the module's docstring says before the epilogue: what a split
    computes, for the interpreter. The kernel must pass `state`."""
    s = state(kernel)
    if s is None:
        raise ValueError("the kernel's loop is not a provable online softmax")
    ops = list(kernel.body.ops)
    loop = next(op for op in ops if isinstance(op, ir.For) and any(isinstance(o, _PRODUCTS) for o in g.walk(op.body)))
    from .attention_tiles import clone

    fresh = Fresh(1 + max((v.id for op in g.walk(kernel.body) for v in (*g.results(op), *g.operands(op))), default=0))
    for op in g.walk(kernel.body):
        for r in (op.body.args if isinstance(op, ir.For) else ()):
            fresh.next = max(fresh.next, r.id + 1)
    for a in kernel.body.args:
        fresh.next = max(fresh.next, a.id + 1)
    new: list[object] = []
    it = loop.lower.dtype

    def elem(code: ir.ElemOp, *xs: ir.Value, dtype: DType | None = None, shape: tuple[int, ...] | None = None) -> ir.Value:
        v = fresh.value(dtype or xs[0].dtype, xs[0].shape if shape is None else shape)
        new.append(ir.Elementwise(v, code, xs))
        return v

    def const(value: float | int, dtype: DType, shape: tuple[int, ...] = ()) -> ir.Value:
        v = fresh.value(dtype, shape)
        new.append(ir.Const(v, value))
        return v

    zero, count = const(0, it), const(pieces, it)
    n = elem(E.MAXIMUM, elem(E.SUB, loop.upper, loop.lower), zero)
    states: list[tuple[ir.Value, ...]] = []
    for i in range(pieces):
        a, b = (elem(E.ADD, loop.lower, elem(E.DIV, elem(E.MUL, n, const(x, it)), count)) for x in (i, i + 1))
        mapping: dict[int, ir.Value] = {}
        (piece,) = clone([loop], fresh, mapping)
        piece = dataclasses.replace(piece, lower=a, upper=b)  # type: ignore[type-var]
        new.append(piece)
        states.append(piece.results)  # type: ignore[attr-defined]
    res = loop.results
    m = states[0][s.m]
    for st in states[1:]:
        m = elem(E.MAXIMUM, m, st[s.m])
    l_sum: ir.Value | None = None
    acc_sum: ir.Value | None = None
    exp = E.EXP2 if s.base2 else E.EXP
    for st in states:
        f = elem(exp, elem(E.SUB, st[s.m], m))
        fb = fresh.value(f.dtype, res[s.acc].shape)
        new.append(ir.Broadcast(fb, f))
        lp, ap = elem(E.MUL, st[s.row_sum], f), elem(E.MUL, st[s.acc], fb)
        l_sum = lp if l_sum is None else elem(E.ADD, l_sum, lp)
        acc_sum = ap if acc_sum is None else elem(E.ADD, acc_sum, ap)
    assert l_sum is not None and acc_sum is not None
    merged = {res[s.m].id: m, res[s.row_sum].id: l_sum, res[s.acc].id: acc_sum}
    i = ops.index(loop)
    rest = [substitute(op, merged) for op in ops[i + 1:]]
    return dataclasses.replace(kernel, body=ir.Region(kernel.body.args, (*ops[:i], *new, *rest)))  # type: ignore[arg-type]


__all__ = ["Softmax", "prove", "split", "state"]
