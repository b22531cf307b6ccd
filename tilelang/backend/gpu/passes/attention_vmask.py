"""The attention pipeline's value-row mask: a second product written

    acc = mma(p as T, where(keys < sk, v, 0.0), acc')     // keys = arange(BN).reshape([BN, 1]) + k0

(`std::attention::attend_cache`, the decode split on tensor cores: a KV
cache past its valid length may hold anything, NaN included, and a weight
of 0 times NaN is NaN, so the values of keys past `sk` must be zeros, not
just weighted 0). V goes from the TMA ring's shared memory straight to
`wgmma`, so the consumers zero those rows of the stage before its P V is
issued (`g.ZeroRows`: only in an iteration where some row goes, then a
fence for the async proxy and a barrier of the consumers), exactly the
interpreter's `where`. `match` recognises the form (V stored N-major, one
consumer warpgroup; else the generic path takes the loop), `zero` gives the
op each schedule puts right before the product that reads the stage (after
the previous products were waited for: none reads the stage meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g


@dataclass(frozen=True, slots=True)
class VMask:
    """`where(arange(rows) + offset < bound, x, 0)` on the V tile `x`."""

    x: ir.Value  # the V tile the where keeps (the end of its load chain)
    offset: ir.Value  # i32 scalars: row r stays where r + offset < bound
    bound: ir.Value
    ops: tuple[object, ...]  # the where and its mask's tile ops (the consumers skip them)
    span: object


def _scalar_of(v: ir.Value, defs: dict[int, object], ops: list[object]) -> ir.Value | None:
    """The i32 scalar that tile `v` broadcasts."""
    op = defs.get(v.id)
    if isinstance(op, ir.Broadcast) and op.x.shape == () and op.x.dtype is DType.I32:
        ops.append(op)
        return op.x
    return None


def _zero(v: ir.Value, defs: dict[int, object], ops: list[object]) -> bool:
    op = defs.get(v.id)
    if isinstance(op, ir.Broadcast) and op.x.shape == ():
        ops.append(op)
        op = defs.get(op.x.id)
        return isinstance(op, ir.Const) and str(float(op.value)) == "0.0"
    if isinstance(op, ir.Const) and str(float(op.value)) == "0.0":
        ops.append(op)
        return True
    return False


def match(v: ir.Value, defs: dict[int, object], count: dict[int, int], body: tuple[object, ...]) -> VMask | None:
    """The mask when the product's V operand `v` is `where(keys < bound, x,
    0)` with keys `arange(rows).reshape([rows, 1]) + offset` (either order
    of the sum), every tile op of it in the loop body and the `where` read by
    the product alone; None otherwise. Its ops that something else reads as
    well stay in the body (`_unshared`)."""
    E = ir.ElemOp
    w = defs.get(v.id)
    if not (isinstance(w, ir.Elementwise) and w.op is E.WHERE and len(v.shape) == 2):
        return None
    rows = v.shape[0]
    c, x, z = w.operands
    ops: list[object] = [w]
    if not _zero(z, defs, ops):
        return None
    cb = defs.get(c.id)
    if not (isinstance(cb, ir.Broadcast) and cb.x.shape == (rows, 1)):
        return None
    ops.append(cb)
    lt = defs.get(cb.x.id)
    if not (isinstance(lt, ir.Elementwise) and lt.op is E.LT):
        return None
    ops.append(lt)
    keys, bnd = lt.operands
    bound = _scalar_of(bnd, defs, ops)
    add = defs.get(keys.id)
    if bound is None or not (isinstance(add, ir.Elementwise) and add.op is E.ADD and keys.dtype is DType.I32):
        return None
    ops.append(add)
    offset = None
    for r, o in (add.operands, add.operands[::-1]):
        rs = defs.get(r.id)
        ar = defs.get(rs.x.id) if isinstance(rs, ir.Reshape) else None
        if isinstance(ar, ir.Arange) and ar.result.shape == (rows,):
            offset = _scalar_of(o, defs, ops)
            if offset is not None:
                ops += [rs, ar]
                break
    if offset is None:
        return None
    if any(op not in body for op in ops) or count.get(v.id) != 1:
        return None
    return VMask(x, offset, bound, _unshared(ops, count), w.span)


def _unshared(ops: list[object], count: dict[int, int]) -> tuple[object, ...]:
    """The ops of the mask (`ops[0]` its `where`, read by the product alone)
    that nothing outside the mask reads: those the consumers skip. An op
    whose result something else reads too (one `arange(BN)` that the scores'
    column mask shares once common subexpressions are merged) stays, and so
    does every op it reads."""
    skipped = list(ops)
    while True:
        inside: dict[int, int] = {}
        for op in skipped:
            for a in g.operands(op):
                inside[a.id] = inside.get(a.id, 0) + 1
        shared = [op for op in skipped[1:]
                  if any(count.get(r.id, 0) > inside.get(r.id, 0) for r in g.results(op))]
        if not shared:
            return tuple(skipped)
        skipped = [op for op in skipped if op not in shared]


def zero(vm: VMask | None, vbuf: ir.Value, stage: ir.Value, mapping: dict[int, ir.Value],
         threads: int) -> list[object]:
    """The op that zeroes the masked rows of `vbuf[stage]` (nothing without a mask)."""
    if vm is None:
        return []
    return [g.ZeroRows(vbuf, stage, mapping.get(vm.offset.id, vm.offset), mapping.get(vm.bound.id, vm.bound),
                       threads, vm.span)]  # type: ignore[arg-type]


__all__ = ["VMask", "match", "zero"]
