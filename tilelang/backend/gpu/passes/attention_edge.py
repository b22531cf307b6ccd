"""The edge mask of a user's attention loop, applied only where it can mask something.

A flash loop written from the brief masks the keys past the end on every block:

    let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
    let s = where(keys < n, s, -1.0e30);

which costs a compare and a select an element of every block, where only the last block has keys past `n`
(`std::attention` tests an `edge` flag instead: `benchmarks/cliffs.py` timed the user's loop at 0.69x SDPA
against 0.92x without the mask, H100 2026-12-06). `unswitch` rewrites such a `where` into

    let s = if off + BN <= n { s } else { where(keys < n, s, -1.0e30) };

with the mask's own ops (the arange, its reshapes and broadcasts, the compare) moved into the `else`
branch. Exact: the condition, computed in i64, says every key `off + c` (c < BN) is below `n`, where the
`where` keeps `s` whole. The attention pass (`passes/__init__._attention`) tries the rewritten kernel
first and keeps the original where the pipeline does not take the rewritten one.

Forms taken: `where(cmp, x, y)` (cmp possibly reshaped or broadcast) with cmp `keys < n`, `keys <= n`,
`n > keys` or `n >= keys`; `keys` = `arange(BN)` (reshaped, broadcast) plus a broadcast scalar `off`
(either order); `n` a broadcast scalar; the loop's own top-level ops only.
"""

from __future__ import annotations

import dataclasses

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh
from .rewrite import uses

E = ir.ElemOp
_VIEW = (ir.Reshape, ir.Broadcast)
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


def enabled() -> bool:
    """`TILEC_ATTN_EDGE` (unset or "1": on; "0": off)."""
    return flag("TILEC_ATTN_EDGE", "1")


def _through_views(v: ir.Value, defs: dict[int, object], chain: list[object]) -> object | None:
    op = defs.get(v.id)
    while isinstance(op, _VIEW) and op.x.shape:
        chain.append(op)
        op = defs.get(op.x.id)
    return op


def _scalar_of(v: ir.Value, defs: dict[int, object], chain: list[object]) -> ir.Value | None:
    """The i32 scalar that tile `v` broadcasts (through reshapes), or None."""
    op = defs.get(v.id)
    seen: list[object] = []
    while isinstance(op, ir.Reshape) and op.x.shape:
        seen.append(op)
        op = defs.get(op.x.id)
    if isinstance(op, ir.Broadcast) and not op.x.shape and op.x.dtype is DType.I32:
        chain += [*seen, op]
        return op.x
    return None


def _keys(v: ir.Value, defs: dict[int, object], chain: list[object]) -> tuple[ir.Value, int] | None:
    """(off, BN) where tile `v` is `arange(BN)` (viewed) plus a broadcast scalar `off`."""
    add = _through_views(v, defs, chain)
    if not (isinstance(add, ir.Elementwise) and add.op is E.ADD):
        return None
    chain.append(add)
    for a, b in (add.operands, add.operands[::-1]):
        sub: list[object] = []
        ar = _through_views(a, defs, sub)
        off = _scalar_of(b, defs, sub)
        if isinstance(ar, ir.Arange) and ar.result.dtype is DType.I32 and off is not None:
            chain += [*sub, ar]
            return off, ar.result.shape[0]
    return None


def _mask(w: ir.Elementwise, defs: dict[int, object]) -> tuple[ir.Value, int, ir.Value, bool, list[object]] | None:
    """(off, BN, n, strict, the mask's ops) for `where(keys < n, ...)` (strict) or `keys <= n`."""
    chain: list[object] = []
    cmp = _through_views(w.operands[0], defs, chain)
    if not (isinstance(cmp, ir.Elementwise) and cmp.op in (E.LT, E.LE, E.GT, E.GE)):
        return None
    chain.append(cmp)
    keys_v, n_v = cmp.operands if cmp.op in (E.LT, E.LE) else cmp.operands[::-1]
    got = _keys(keys_v, defs, chain)
    n = _scalar_of(n_v, defs, chain)
    if got is None or n is None:
        return None
    return got[0], got[1], n, cmp.op in (E.LT, E.GT), chain


@dataclasses.dataclass(frozen=True)
class _Aff:
    """An i32 index tile as bounds: its least element is `const` + the signed scalars `terms`, its greatest that
    plus `span` (aranges added or subtracted, scalars broadcast)."""

    terms: tuple[tuple[int, ir.Value], ...]
    const: int
    span: int


def _affine(v: ir.Value, defs: dict[int, object], chain: list[object]) -> _Aff | None:
    """`v` (an i32 tile built from `arange`s and broadcast scalars by `+` and `-`, viewed) as bounds, or None."""
    op = _through_views(v, defs, chain) if v.shape else None
    if not v.shape:
        return _Aff(((1, v),), 0, 0) if v.dtype is DType.I32 else None
    if isinstance(op, ir.Broadcast) and not op.x.shape:  # (reshapes of a broadcast scalar)
        chain.append(op)
        return _affine(op.x, defs, chain)
    if isinstance(op, ir.Const) and isinstance(op.value, int) and not isinstance(op.value, bool):
        chain.append(op)
        return _Aff((), int(op.value), 0)
    if isinstance(op, ir.Arange) and op.result.dtype is DType.I32:
        chain.append(op)
        return _Aff((), 0, op.result.shape[0] - 1)
    if isinstance(op, ir.Elementwise) and op.op in (E.ADD, E.SUB) and op.result.dtype is DType.I32:
        chain.append(op)
        a, b = (_affine(x, defs, chain) for x in op.operands)
        if a is None or b is None:
            return None
        if op.op is E.ADD:
            return _Aff(a.terms + b.terms, a.const + b.const, a.span + b.span)
        neg = tuple((-sg, x) for sg, x in b.terms)
        return _Aff(a.terms + neg, a.const - b.const - b.span, a.span + b.span)
    return None


def _cond(v: ir.Value, defs: dict[int, object], chain: list[object]) -> list[tuple[_Aff, _Aff, bool]] | None:
    """`v` (a bool tile: comparisons of index tiles joined by `&&`) as [(A, B, strict)]: every element holds
    where, for each, every A < B (strict) or A <= B."""
    op = _through_views(v, defs, chain)
    if isinstance(op, ir.Elementwise) and op.op is E.AND and op.result.dtype is DType.BOOL:
        chain.append(op)
        a, b = (_cond(x, defs, chain) for x in op.operands)
        return None if a is None or b is None else a + b
    if not (isinstance(op, ir.Elementwise) and op.op in (E.LT, E.LE, E.GT, E.GE)):
        return None
    chain.append(op)
    lo_v, hi_v = op.operands if op.op in (E.LT, E.LE) else op.operands[::-1]
    a, b = _affine(lo_v, defs, chain), _affine(hi_v, defs, chain)
    return None if a is None or b is None else [(a, b, op.op in (E.LT, E.GT))]


def _general(w: ir.Elementwise, defs: dict[int, object]) -> tuple[list[tuple[_Aff, _Aff, bool]], list[object]] | None:
    """A mask of index comparisons (`keys <= rows`, a window `keys <= rows && keys > rows - W`): its bounds
    and ops, or None."""
    chain: list[object] = []
    got = _cond(w.operands[0], defs, chain)
    return None if got is None or not any(a.span or b.span for a, b, _ in got) else (got, chain)


def _all_true(conds: list[tuple[_Aff, _Aff, bool]], fresh: Fresh, span: object) -> tuple[list[object], ir.Value]:
    """Scalar ops (in i64: exact, and each tile's elements tested to be i32s, as the tiles wrap) computing whether
    every comparison holds on every element: for each,
    the greatest A plus 1 if strict at most the least B."""
    out: list[object] = []

    def value(terms: tuple[tuple[int, ir.Value], ...], const: int) -> ir.Value:
        acc = fresh.value(DType.I64, (), "lo")
        out.append(ir.Const(acc, const, span))
        for sg, x in terms:
            x64, nxt = fresh.value(DType.I64, (), x.hint), fresh.value(DType.I64, (), "lo")
            out.extend([ir.Cast(x64, x, span), ir.Elementwise(nxt, E.ADD if sg > 0 else E.SUB, (acc, x64), span)])
            acc = nxt
        return acc

    whole: ir.Value | None = None

    def also(ok: ir.Value) -> None:
        nonlocal whole
        if whole is not None:
            both = fresh.value(DType.BOOL, (), "whole")
            out.append(ir.Elementwise(both, E.AND, (whole, ok), span))
            ok = both
        whole = ok

    for a, b, strict in conds:
        top = value(a.terms, a.const + a.span + (1 if strict else 0))
        ok = fresh.value(DType.BOOL, (), "whole")
        out.append(ir.Elementwise(ok, E.LE, (top, value(b.terms, b.const)), span))
        also(ok)
        # the tiles are i32 and wrap: the i64 bounds are their values only where every element is an i32
        # (hrev20: `keys <= rows + la` with `rows + la` past 2^31 - 1 masks every key in i32, and the i64 test
        # said no key is masked). With A's least at least -2^31 and B's greatest at most 2^31 - 1, A's greatest
        # and B's least are between them where the test above holds.
        for terms, const, rel in ((a.terms, a.const - _I32_MIN, E.GE), (b.terms, b.const + b.span - _I32_MAX, E.LE)):
            edge = fresh.value(DType.BOOL, (), "whole")
            out.append(ir.Elementwise(edge, rel, (value(terms, const), value((), 0)), span))
            also(edge)
    assert whole is not None
    return out, whole


def unswitch(k: g.GpuKernel) -> g.GpuKernel:
    """`k` with its attention loop's edge masks under a test of whether they mask anything (module doc);
    `k` itself where there is none."""
    ops = list(k.body.ops)
    loops = [op for op in ops if isinstance(op, ir.For) and sum(isinstance(o, g.DotOp) for o in op.body.ops) == 2]
    if len(loops) != 1 or not enabled():
        return k
    loop = loops[0]
    body = list(loop.body.ops)
    defs = {r.id: op for op in body for r in g.results(op)}
    count = uses(loop.body)
    fresh = Fresh(k.next_id)
    changed = False
    out: list[object] = []
    moved: set[int] = set()
    plans: dict[int, tuple[ir.Value, int, ir.Value, bool, list[object]]] = {}
    wide: dict[int, tuple[list[tuple[_Aff, _Aff, bool]], list[object]]] = {}  # masks of index comparisons
    for op in body:
        if isinstance(op, ir.Elementwise) and op.op is E.WHERE and op.result.shape:
            got = _mask(op, defs)
            # the mask's ops move into the `else` branch: each read by the mask alone
            if got is not None and all(count.get(r.id) == 1 for o in got[4] for r in g.results(o)):
                plans[id(op)] = got
                moved |= {id(o) for o in got[4]}
                continue
            gen = _general(op, defs) if got is None else None
            if gen is not None:  # the mask's ops read by the mask alone (some by several of its ops)
                ids = {id(o) for o in gen[1]}
                inside: dict[int, int] = {}
                for o in body:
                    if id(o) in ids or o is op:
                        for v in {x.id: x for x in g.operands(o)}.values():
                            inside[v.id] = inside.get(v.id, 0) + sum(x.id == v.id for x in g.operands(o))
                if all(inside.get(r.id, 0) == count.get(r.id, 0) for o in gen[1] for r in g.results(o)) \
                        and all(o in body for o in gen[1]):
                    wide[id(op)] = gen
                    moved |= ids
    for op in body:
        if id(op) in moved:
            continue
        plan = plans.get(id(op))
        if plan is None and id(op) in wide:
            w = op
            assert isinstance(w, ir.Elementwise)
            conds, chain = wide[id(op)]
            test, full = _all_true(conds, fresh, w.span)
            masked = fresh.value(w.result.dtype, w.result.shape, w.result.hint)
            ids = {id(c) for c in chain}
            inner = [o for o in body if id(o) in ids]  # in program order
            else_ = ir.Region((), (*inner, dataclasses.replace(w, result=masked), ir.Yield((masked,))))  # type: ignore[arg-type]
            out += [*test, ir.If((w.result,), full, ir.Region((), (ir.Yield((w.operands[1],)),)), else_, w.span)]
            changed = True
            continue
        if plan is None:
            out.append(op)
            continue
        off, bn, n, strict, chain = plan
        w = op
        assert isinstance(w, ir.Elementwise)
        o64, n64, top = (fresh.value(DType.I64, (), h) for h in ("off", "n", "top"))
        full = fresh.value(DType.BOOL, (), "whole")
        bnc = fresh.value(DType.I64, (), "bn")
        # every key off + c (c < BN) below n: off + BN <= n (strict), off + BN - 1 <= n (not)
        out += [ir.Cast(o64, off, w.span), ir.Cast(n64, n, w.span),
                ir.Const(bnc, bn if strict else bn - 1, w.span),
                ir.Elementwise(top, E.ADD, (o64, bnc), w.span),
                ir.Elementwise(full, E.LE, (top, n64), w.span)]
        masked = fresh.value(w.result.dtype, w.result.shape, w.result.hint)
        inner = [o for o in body if id(o) in {id(c) for c in chain}]  # in program order
        else_ = ir.Region((), (*inner, dataclasses.replace(w, result=masked), ir.Yield((masked,))))  # type: ignore[arg-type]
        then = ir.Region((), (ir.Yield((w.operands[1],)),))
        out.append(ir.If((w.result,), full, then, else_, w.span))
        changed = True
    if not changed:
        return k
    new_loop = dataclasses.replace(loop, body=ir.Region(loop.body.args, tuple(out)))  # type: ignore[arg-type]
    new_ops = tuple(new_loop if op is loop else op for op in ops)
    return dataclasses.replace(k, body=ir.Region(k.body.args, new_ops), next_id=fresh.next)  # type: ignore[arg-type]


__all__ = ["enabled", "unswitch"]
