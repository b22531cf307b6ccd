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
import os

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh
from .rewrite import uses

E = ir.ElemOp
_VIEW = (ir.Reshape, ir.Broadcast)


def enabled() -> bool:
    """`TILEC_ATTN_EDGE` (unset or "1": on; "0": off)."""
    return os.environ.get("TILEC_ATTN_EDGE", "1") != "0"


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
    for op in body:
        if isinstance(op, ir.Elementwise) and op.op is E.WHERE and op.result.shape:
            got = _mask(op, defs)
            # the mask's ops move into the `else` branch: each read by the mask alone
            if got is not None and all(count.get(r.id) == 1 for o in got[4] for r in g.results(o)):
                plans[id(op)] = got
                moved |= {id(o) for o in got[4]}
    for op in body:
        if id(op) in moved:
            continue
        plan = plans.get(id(op))
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
