"""Programmatic dependent launch in the emitter (`Target.pdl`): where a
kernel waits for the previous grid and triggers the next one, and the work
it may do before its wait.

Before `griddepcontrol.wait` the previous grid may still be writing memory,
so a kernel reads nothing there; an L2 prefetch (`prefetch.global.L2`)
consumes nothing and is always safe (L2 is where every write lands, so a
line prefetched early is kept current by the writes that follow). With
`Target.pdl_prefetch`, the prologue prefetches the first tiles the kernel
will load from a tensor it never writes: the top-level loads, and the first
iteration's loads of each top-level `for` loop, before the kernel's first
write, whose element offsets are computed from nothing the kernel loads
(block ids, numbers, tensor sizes, the loop's start): a GEMV's weight tile,
whose reads then start while the previous kernel drains. Such an address is
recomputed before the wait by the same ops the body runs later (pure
scalar arithmetic); the emitter's value tables are put back afterwards, so
the body is emitted as without the prologue.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.gpu.nodes import regions, walk
from tilelang.ir import nodes as ir

WAIT = '  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()'
TRIGGER = '  call void asm sideeffect "griddepcontrol.launch_dependents;", "~{memory}"()'
LINE = 128  # bytes of an L2 line: one prefetch per line a thread's chunks start

_PURE = (ir.Const, ir.BlockId, ir.NumBlocks, ir.TensorDim, ir.Elementwise, ir.Cast)


def writes(op: object) -> bool:
    """Whether `op` (or an op in its regions) writes memory or prints."""
    kinds = (ir.Store, ir.AtomicRMW, ir.Print)
    return isinstance(op, kinds) or any(isinstance(o, kinds) for r in regions(op) for o in walk(r))


def _operands(op: object) -> tuple[ir.Value, ...]:
    if isinstance(op, ir.Elementwise):
        return op.operands
    if isinstance(op, ir.Cast):
        return (op.x,)
    return ()


def _pure_scalar(op: Any, pure: set[int]) -> bool:
    return (isinstance(op, _PURE) and not op.result.shape
            and all(v.id in pure for v in _operands(op)))


def _prefetchable(op: Any, pure: set[int], readonly: set[str]) -> bool:
    return (isinstance(op, ir.Load) and op.tensor in readonly and op.mask is None
            and all(v.id in pure for v in op.offsets))


def prologue(kernel: Any, readonly: set[str]) -> list[tuple[Any, ...]]:
    """The prologue's steps, in order: ("op", op) a pure scalar op to emit,
    ("iv", iv, lower) a loop variable bound to its start, ("load", op) a load
    to prefetch; empty when there is nothing to prefetch."""
    pure = {p.value.id for p in kernel.scalar_params}
    steps: list[tuple[Any, ...]] = []
    for op in kernel.body.ops:
        if writes(op):
            break
        if _pure_scalar(op, pure):
            steps.append(("op", op))
            pure.add(op.result.id)
        elif _prefetchable(op, pure, readonly):
            steps.append(("load", op))
        elif isinstance(op, ir.For) and op.lower.id in pure:
            iv = op.body.args[0]
            inner = pure | {iv.id}
            sub: list[tuple[Any, ...]] = [("iv", iv, op.lower)]
            o: Any
            for o in op.body.ops:
                if _pure_scalar(o, inner):
                    sub.append(("op", o))
                    inner.add(o.result.id)
                elif _prefetchable(o, inner, readonly):
                    sub.append(("load", o))
            if any(s[0] == "load" for s in sub):
                steps += sub
    return steps if any(s[0] == "load" for s in steps) else []


def emit_prologue(em: Any, steps: list[tuple[Any, ...]]) -> int:
    """The steps' code at the current point (before the wait); the emitter's
    value tables as they were. The number of loads prefetched."""
    saved = (dict(em.env), dict(em._mult), set(em._uniform))
    n = 0
    for step in steps:
        match step:
            case ("iv", iv, lower):
                em.env[iv.id] = em.scalar(lower)
            case ("op", op):
                em.op(op)
            case ("load", op):
                _prefetch(em, op)
                n += 1
    em.env, em._mult, em._uniform = saved
    return n


def _prefetch(em: Any, op: ir.Load) -> None:
    """`prefetch.global.L2` of the lines where this thread's chunks of the
    load's tile start (in bounds only)."""
    info = em.tensors[op.tensor]
    lay = em.lay(op.result)
    offsets = [em.scalar(o) for o in op.offsets]
    nbytes = lay.V * em.msize(info)
    for k in range(lay.K):
        coords = em._chunk_coords(lay, k, offsets)
        inside = em.and_all([em.chunk_valid(lay, k), em.in_bounds(info, coords, lay.V)])
        addr = em.address(info, coords)
        pi = em.emit(f"ptrtoint ptr addrspace(1) {addr} to i64")
        lo = em.emit(f"and i64 {pi}, {LINE - 1}")
        starts = em.emit(f"icmp ult i64 {lo}, {nbytes}") if nbytes < LINE else None
        ok = em.and_all([inside, starts]) or "true"
        flag = em.emit(f"zext i1 {ok} to i32")
        em.stmt('call void asm sideeffect "{ .reg .pred pf; setp.ne.b32 pf, $1, 0; '
                f'@pf prefetch.global.L2 [$0]; }}", "l,r"(i64 {pi}, i32 {flag})')
