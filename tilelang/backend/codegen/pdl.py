"""Programmatic dependent launch in the emitter (`Target.pdl`): where a
kernel waits for the previous grid and triggers the next one, and the work
it may do before its wait.

Before `griddepcontrol.wait` the previous grid may still be writing memory,
so a kernel reads nothing there; an L2 prefetch (`prefetch.global.L2`)
consumes nothing and is always safe (L2 is where every write lands, so a
line prefetched early is kept current by the writes that follow). With
`Target.pdl_prefetch`, the prologue prefetches the first tiles the kernel
will load from a tensor it never writes: the top-level loads (and the first
copy of each operand a top-level `cp.async` ring prologue issues: sm_80's
GEMM ring), and the first iteration's loads of each top-level `for` loop, before the kernel's first
write, whose element offsets are computed from nothing the kernel loads
(block ids, numbers, tensor sizes, the loop's start): a GEMV's weight tile,
whose reads then start while the previous kernel drains. Such an address is
recomputed before the wait by the same ops the body runs later (pure
scalar arithmetic); the emitter's value tables are put back afterwards, so
the body is emitted as without the prologue.

A third form, "loads", prefetches nothing: the kernel's leading loads (a
GEMV's first weight tiles, or the copies a weight ring issues before its
loop) are themselves placed before the wait when the runtime found that the
launch before this one does not write their tensors (`early_wait`;
`TensorFacts.early`, `runtime/cuda_pdl.early_names`), so they run while the
previous grid drains, with no second request for the same lines.

Two prefetching forms (`Target.pdl_prefetch`): "prefetch", every thread one
`prefetch.global.L2` per 128-byte line its chunks start (many small
requests, measured 29 % slower on the H200's decode step); "bulk", one
`cp.async.bulk.prefetch.L2` (sm_90: the bulk copy engine fetches a whole
range) per row of the tile, from thread r for row r: a tile's rows are
contiguous along the last dimension, so a [8, 2048] bf16 weight tile is 8
requests of 4 KB instead of 256 threads' 256 line prefetches.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.nodes import regions, walk
from tilelang.ir import nodes as ir

WAIT = '  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()'
TRIGGER = '  call void asm sideeffect "griddepcontrol.launch_dependents;", "~{memory}"()'
LINE = 128  # bytes of an L2 line: one prefetch per line a thread's chunks start

_PURE = (ir.Const, ir.BlockId, ir.NumBlocks, ir.TensorDim, ir.Elementwise, ir.Cast)
_TILE_MATH = (ir.Reduce, ir.Reshape, ir.Broadcast, ir.Arange)


def last_loop(kernel: Any, first_write: object | None) -> object | None:
    """The "last" trigger's loop: the last top-level `for` before the first
    top-level op that writes (`first_write`; None: any), whose last iteration
    triggers the next grid (`emit_last_trigger`): the kernel's last loads are
    then issued, so the next grid's blocks that fit beside this grid's issue
    their early loads while those are served. None: no such loop."""
    ops = list(kernel.body.ops)
    end = ops.index(first_write) if first_write is not None else len(ops)
    return next((op for op in reversed(ops[:end]) if isinstance(op, ir.For)), None)


def emit_last_trigger(em: Any, iv: str, hi: str, step: str, ity: str, signed: bool) -> None:
    """At the top of the "last" loop's body: trigger when `iv + step` reaches
    `hi` (this is the last iteration; a loop that runs no iteration leaves
    the trigger to the block's exit)."""
    nxt = em.emit(f"add {ity} {iv}, {step}")
    last = em.emit(f"icmp {'sge' if signed else 'uge'} {ity} {nxt}, {hi}")
    trig, cont = em.new_label("trigger"), em.new_label("go")
    em.cbr(last, trig, cont)
    em.label(trig)
    em.lines.append(TRIGGER)
    em.br(cont)
    em.label(cont)


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
    copied: set[str] = set()
    for op in kernel.body.ops:
        if writes(op):
            break
        if _pure_scalar(op, pure):
            steps.append(("op", op))
            pure.add(op.result.id)
        elif _prefetchable(op, pure, readonly):
            steps.append(("load", op))
        elif (isinstance(op, g.CpAsyncTile) and op.tensor in readonly and op.tensor not in copied
              and all(v.id in pure for v in op.coords)):
            # sm_80's ring (`pipeline_sm80`; on sm_90a where the Hopper pipeline refused the loop): its
            # prologue's first copy of each operand is the loop's first iteration's tile
            copied.add(op.tensor)
            steps.append(("tile", op.tensor, op.coords, tuple(op.dst.shape[1:])))
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
    return steps if any(s[0] in ("load", "tile") for s in steps) else []


def early_wait(kernel: Any, early: set[str]) -> object | None:
    """"loads" (`Target.pdl_prefetch`): the top-level op before which the
    kernel waits, when its body starts with loads of `early` tensors (ones the
    runtime found the previous launch does not write: `TensorFacts.early`)
    among ops that touch no global memory (scalar and tile arithmetic, a
    ring's shared buffers, its `cp.async` copies of an early tensor; reductions
    and reshapes); None
    when no such load leads (the wait stays at the entry). The leading loads
    then overlap the previous grid's drain, and their values are the same:
    nothing writes those tensors while either kernel runs."""
    leading = False
    for op in kernel.body.ops:
        # tile arithmetic (a reduction's or a reshape's shared memory and
        # barriers too) touches no global memory: `pos = pos_t.load(..).sum(0)`
        # and the key range from it may lead a ring's first copies
        if isinstance(op, (*_PURE, *_TILE_MATH, g.SmemAlloc, g.CpAsyncCommit)):
            continue
        if isinstance(op, ir.Load | g.RingCopy) and op.tensor in early:
            leading = True
            continue
        return op if leading else None
    return None


def emit_prologue(em: Any, steps: list[tuple[Any, ...]], bulk: bool = False) -> int:
    """The steps' code at the current point (before the wait); the emitter's
    value tables as they were. The number of loads prefetched (`bulk`: one
    bulk prefetch a tile row, `_bulk_prefetch`; else every thread's lines)."""
    saved = (dict(em.env), dict(em._mult), set(em._uniform))
    n = 0
    for step in steps:
        match step:
            case ("iv", iv, lower):
                em.env[iv.id] = em.scalar(lower)
            case ("op", op):
                em.op(op)
            case ("load", op):
                (_bulk_prefetch if bulk else _prefetch)(em, op)
                n += 1
            case ("tile", tensor, coords, shape):
                (bulk_prefetch_tile if bulk else line_prefetch_tile)(em, tensor, [em.scalar(c) for c in coords], shape)
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


def _bulk_prefetch(em: Any, op: ir.Load) -> None:
    """The pre-wait "bulk" prefetch of a load's tile (`bulk_prefetch_tile`)."""
    bulk_prefetch_tile(em, op.tensor, [em.scalar(o) for o in op.offsets], tuple(op.result.shape))


def emit_prefetch(em: Any, op: ir.Prefetch) -> None:
    """`p.prefetch([i, ..])` (`ir.Prefetch`): the tile's rows into L2, one
    bulk prefetch a row on sm_90+ (`bulk_prefetch_tile`, rows spread over the
    warps, each request in a branch of its own), else one `prefetch.global.L2`
    a 128-byte line, the lines spread over the threads."""
    offsets = [em.scalar(o) for o in op.offsets]
    if em.k.sm >= 90 and not em.k.source.prefetch_lines:
        bulk_prefetch_tile(em, op.tensor, offsets, tuple(op.shape), spread=True)
    else:
        line_prefetch_tile(em, op.tensor, offsets, tuple(op.shape))


def _row_extent(em: Any, info: Any, offsets: list[str], cols: int) -> tuple[str, list[str]]:
    """The bytes of a tile row inside the tensor (its last dimension from
    the offset, at most `cols` elements, rounded down to 16) and the
    conditions that it is not empty."""
    last = len(offsets) - 1
    rem = em.emit(f"sub i32 {info.dims[last]}, {offsets[last]}")
    short = em.emit(f"icmp slt i32 {rem}, {cols}")
    inside_cols = em.emit(f"select i1 {short}, i32 {rem}, i32 {cols}")
    nbytes = em.emit(f"and i32 {em.emit(f'mul i32 {inside_cols}, {em.msize(info)}')}, -16")
    return nbytes, [em.emit(f"icmp sge i32 {offsets[last]}, 0"), em.emit(f"icmp sgt i32 {nbytes}, 0")]


def _row_start(em: Any, info: Any, offsets: list[str], lead: tuple[int, ...], r: str,
               conds: list[str]) -> str:
    """The address (i64) of row `r` (a flat index over the `lead` dims) of the
    tile at `offsets`; appends the conditions that the row is inside."""
    idx = em.coords(r, lead) if lead else []
    coords = []
    for d, i in enumerate(idx):
        c = offsets[d] if i == "0" else em.emit(f"add i32 {offsets[d]}, {i}")
        conds.append(em.emit(f"icmp ult i32 {c}, {info.dims[d]}"))
        coords.append(c)
    coords.append(offsets[-1])
    return em.emit(f"ptrtoint ptr addrspace(1) {em.address(info, coords)} to i64")


def bulk_prefetch_tile(em: Any, tensor: str, offsets: list[str], shape: tuple[int, ...],
                       spread: bool = False) -> None:
    """`cp.async.bulk.prefetch.L2` of each row (the last dimension) of the
    tile at `offsets` (LLVM i32 values): the row's part inside the tensor,
    from a 16-byte-aligned start, rounded down to 16 bytes (the instruction's
    unit); rows outside the tensor or unaligned are skipped (a prefetch is a
    hint). Row r comes from thread r (r + T, .. when the tile has more rows
    than the block threads), the instruction predicated; `spread`: from lane
    r / W of warp r mod W (W warps), in a branch taken by that lane only. The
    instruction takes its operands in uniform registers, so ptxas issues it
    once per distinct address among a warp's active threads, one after the
    other: spread, a warp issues rows / W of them, not up to 32."""
    info = em.tensors[tensor]
    lead, cols = shape[:-1], shape[-1]
    rows = math.prod(lead)
    nbytes, col_ok = _row_extent(em, info, offsets, cols)
    w = em.T // 32
    if spread and w > 1:
        warp = em.emit(f"udiv i32 {em.tid0()}, 32")
        lane = em.emit(f"urem i32 {em.tid0()}, 32")
        first = em.emit(f"add i32 {em.emit(f'mul i32 {lane}, {w}')}, {warp}")
    else:
        first = em.tid0()
    for t in range(-(-rows // em.T)):
        r = em.emit(f"add i32 {first}, {t * em.T}") if t else first
        conds = [em.emit(f"icmp ult i32 {r}, {rows}"), *col_ok]
        pi = _row_start(em, info, offsets, lead, r, conds)
        conds.append(em.emit(f"icmp eq i64 {em.emit(f'and i64 {pi}, 15')}, 0"))
        ok = em.and_all(conds) or "true"
        if spread:
            go, done = em.new_label("pf_row"), em.new_label("pf_next")
            em.cbr(ok, go, done)
            em.label(go)
            em.stmt('call void asm sideeffect "cp.async.bulk.prefetch.L2.global [$0], $1;", "l,r"'
                    f"(i64 {pi}, i32 {nbytes})")
            em.br(done)
            em.label(done)
            continue
        flag = em.emit(f"zext i1 {ok} to i32")
        em.stmt('call void asm sideeffect "{ .reg .pred pf; setp.ne.b32 pf, $2, 0; '
                '@pf cp.async.bulk.prefetch.L2.global [$0], $1; }", "l,r,r"'
                f"(i64 {pi}, i32 {nbytes}, i32 {flag})")


def line_prefetch_tile(em: Any, tensor: str, offsets: list[str], shape: tuple[int, ...]) -> None:
    """`prefetch.global.L2` of every 128-byte line of the tile's rows (their
    part inside the tensor), line j of row r from thread (r * lines + j) mod
    T: before sm_90, which has no bulk prefetch."""
    info = em.tensors[tensor]
    lead, cols = shape[:-1], shape[-1]
    rows = math.prod(lead)
    lines = -(-cols * em.msize(info) // LINE)
    nbytes, col_ok = _row_extent(em, info, offsets, cols)
    for t in range(-(-rows * lines // em.T)):
        f = em.emit(f"add i32 {em.tid0()}, {t * em.T}") if t else em.tid0()
        r = em.emit(f"udiv i32 {f}, {lines}") if lines > 1 else f
        j = em.emit(f"urem i32 {f}, {lines}") if lines > 1 else "0"
        at = em.emit(f"mul i32 {j}, {LINE}")
        conds = [em.emit(f"icmp ult i32 {f}, {rows * lines}"), *col_ok, em.emit(f"icmp slt i32 {at}, {nbytes}")]
        pi = em.emit(f"add i64 {_row_start(em, info, offsets, lead, r, conds)}, {em.emit(f'zext i32 {at} to i64')}")
        flag = em.emit(f"zext i1 {em.and_all(conds)} to i32")
        em.stmt('call void asm sideeffect "{ .reg .pred pf; setp.ne.b32 pf, $1, 0; '
                f'@pf prefetch.global.L2 [$0]; }}", "l,r"(i64 {pi}, i32 {flag})')
