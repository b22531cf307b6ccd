"""Which reductions end with their result held whole by every thread
(`TILEC_REPLICATE_SMALL`, `layout_assign`; the layout: `layouts.replicated_for`).

A reduction's result in the slice of its input's layout is free to broadcast
back over the rows it came from (softmax's `x - max(x)`), but a small result
that meets a value of another layout (the split attention's row maxima and
sums against the current token's score, a merge's weights against another
reduction's), is reduced again across threads, or is yielded to a carried
value of another layout moves through shared memory there, two barriers a
time, once per such use. Held replicated, it moves once (the reduction's
all-gather, one barrier, often the one its cross-warp step has anyway) and
every later use reads it in registers.

`small_exchanges` finds those results from a first assignment: every place
where the code generator would move a small value between threads (the
same tests it makes: `codegen/views.register_map` for conversions,
broadcasts and reshapes, `reshape_register_map`, a reduction whose input is
not blocked), and, from each, the small reductions it derives from through
element-wise ops, casts, reshapes, broadcasts and `if` results.
"""

from __future__ import annotations

import math

from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Blocked, Layout, Slice, is_replicated

R = ir.ReduceOp


def _pow2(shape: tuple[int, ...]) -> bool:
    return all(n > 0 and n & (n - 1) == 0 for n in shape)


def small_exchanges(k: g.GpuKernel, layouts: dict[int, Layout], defs: dict[int, object], bound: int) -> set[int]:
    """Results of reductions (at most `bound` elements, power-of-two dims) that
    some later op moves between threads in `layouts`."""
    from tilelang.backend.codegen.views import (
        register_map,
        reshape_register_map,
        thread_register_map,
        view_of,
    )

    threads = k.num_warps * 32

    def small(v: ir.Value) -> bool:
        return bool(v.shape) and math.prod(v.shape) <= bound and _pow2(v.shape)

    def view(v: ir.Value):  # type: ignore[no-untyped-def]
        return view_of(layouts.get(v.id), v.shape, threads, v.dtype.itemsize)

    def rep(v: ir.Value) -> bool:
        return is_replicated(layouts.get(v.id), v.shape)

    def moves(src: ir.Value, dst: ir.Value, align: list[int | None] | None) -> bool:
        """The code generator moves `src` between threads to make `dst`."""
        if not src.shape or rep(src):
            return False
        ls, ld = layouts.get(src.id), layouts.get(dst.id)
        if ls is None or ld is None or not isinstance(ls, Blocked | Slice) or not isinstance(ld, Blocked | Slice):
            return False  # other layouts: not this option's
        if align is None:
            return reshape_register_map(view(src), view(dst)) is None
        if ls == ld and src.shape == dst.shape:
            return False
        vs, vd = view(src), view(dst)
        return register_map(vs, vd, align) is None and thread_register_map(vs, vd, align) is None

    moved: list[ir.Value] = []

    def carried(vals: tuple[ir.Value, ...], targets: tuple[ir.Value, ...]) -> None:
        for v, t in zip(vals, targets, strict=True):
            if v.shape and small(v) and moves(v, t, list(range(len(v.shape)))):
                moved.append(v)

    for op in g.walk(k.body):
        match op:
            case ir.Elementwise(result=r) | ir.Cast(result=r):
                for v in g.operands(op):
                    if v.shape and small(v) and moves(v, r, list(range(len(v.shape)))):
                        moved.append(v)
            case ir.Broadcast(result=r, x=x) if x.shape and small(x):
                lead = len(r.shape) - len(x.shape)
                bcast = [None if i < lead or x.shape[i - lead] == 1 else i - lead for i in range(len(r.shape))]
                if moves(x, r, bcast):
                    moved.append(x)
            case ir.Reshape(result=r, x=x) if x.shape and r.shape and small(x):
                xd = [i for i, n in enumerate(x.shape) if n != 1]
                rd = [i for i, n in enumerate(r.shape) if n != 1]
                align: list[int | None] | None = None
                if [x.shape[i] for i in xd] == [r.shape[i] for i in rd]:
                    align = [None] * len(r.shape)
                    for i, j in zip(rd, xd, strict=True):
                        align[i] = j
                if moves(x, r, align) and (align is None or moves(x, r, None)):
                    moved.append(x)
            case ir.Reduce(x=x) if small(x) and not rep(x) and not isinstance(layouts.get(x.id), Blocked):
                moved.append(x)  # reduced across threads through shared memory
            case ir.For(inits=inits, body=body):
                carried(inits, body.args[1:])
                carried(body.ops[-1].values, body.args[1:])  # type: ignore[union-attr]
            case ir.While(inits=inits, body=body):
                carried(inits, body.args)
                carried(body.ops[-1].values, body.args)  # type: ignore[union-attr]
            case ir.If(results=rs, then=t, else_=e):
                for reg in (t, e):
                    if reg.ops and isinstance(reg.ops[-1], ir.Yield):
                        carried(reg.ops[-1].values, rs)

    out: set[int] = set()
    seen: set[int] = set()
    todo = list(moved)
    while todo:
        v = todo.pop()
        if v.id in seen or not small(v):
            continue
        seen.add(v.id)
        d = defs.get(v.id)
        match d:
            case ir.Reduce(result=r, op=rop, x=x) if rop not in (R.ARGMAX, R.ARGMIN) and isinstance(
                    layouts.get(x.id), Blocked | Slice):
                out.add(r.id)  # (a slice's reduction goes through shared memory anyway: now into every thread)
            case ir.Load(result=r):
                out.add(r.id)  # every thread loads all of it (a split merge's log-sum-exps)
            case ir.Elementwise() | ir.Cast():
                todo += [x for x in g.operands(d) if x.shape]
            case ir.Reshape(x=x) | ir.Broadcast(x=x) if x.shape:
                todo.append(x)
            case ir.If(results=rs, then=t, else_=e):
                i = next(j for j, x in enumerate(rs) if x.id == v.id)
                todo += [reg.ops[-1].values[i] for reg in (t, e)
                         if reg.ops and isinstance(reg.ops[-1], ir.Yield)]
    return out


__all__ = ["small_exchanges"]
