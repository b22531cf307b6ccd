"""The attention pipeline's epilogue: divisions as reciprocals
(`reciprocals`), and the output tile stored through shared memory by TMA
(FlashAttention-3's epilogue): `TILEC_ATTN_OSTORE`, off by default (on the
H200 no setting beat the direct stores: benchmarks/RESULTS.md, 2026-12-03
fifth session).

The epilogue's store of the normalised O tile (f16/bf16, [.., BM, N] with N
a multiple of 64, to a 2-D or 3-D tensor TMA can describe) becomes
`g.TmaStore`: each consumer warpgroup (or, with `TILEC_ATTN_OSTORE_BY=warp`,
each warp) writes its rows into shared memory, fences, meets (a named
barrier, or `bar.warp.sync`), and one thread issues the TMA stores; the
tensor map's bounds clip the rows past the tensor's edge (what the
interpreter drops), so no thread tests a bound, and nobody waits for the
global writes. Where the buffer lives:

- "q": in the Q buffer, warpgroup g's O rows over its own Q rows (only its
  S products read them, all waited for after the loop). The issuing thread
  waits for the store's read (`g.TmaStoreWait`) before its warp releases Q
  (`qempty`): the next tile's Q copy (the producer's TMA) then starts after
  the epilogue, not during it. Q released in the loop (`TILEC_ATTN_QEARLY`)
  is turned off.
- "buf": in a buffer of its own, [BM, N], where the ring keeps at least 3
  stages beside it: the next tile's store waits for the previous one's read
  at its start (the issuing thread, then the unit's barrier), and the
  role's end waits for the last.
- "v": in the last key block's V stage ([BN, D] = [BM, N]; every consumer
  meets first: all of them read it), released to the producer in the next
  tile before its loop (`released`); Q's buffer where the tile's loop did
  not run.
- "0" (the default) or anything else: the epilogue's stores from registers
  (`codegen/accview.store_rows`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Shared
from .context import PassContext
from .switches import mode as switch_mode

OSTORE_DEFAULT = "0"  # timed on the H200: no setting faster (RESULTS.md, 2026-12-03 fifth session)


def mode() -> str:
    return switch_mode("TILEC_ATTN_OSTORE", OSTORE_DEFAULT, ("0", "q", "buf", "v"))


@dataclass(frozen=True, slots=True)
class OStore:
    mode: str  # "q" or "buf"
    tensor: str
    rows: int  # BM
    cols: int  # N
    unit: int  # threads that store their rows together (`g.TmaStore.unit`)
    desc: g.TmaDesc

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * 2


def plan(after: list[object], k: g.GpuKernel, ctx: PassContext, p: Any, smem: int) -> tuple[OStore | None, Any]:
    """The store of `after` (the ops after the loop) that goes through shared
    memory in this mode (or None), and attention plan `p` with the ring's
    stages that fit beside its buffer ("buf": `smem` bytes for Q, the ring
    and it; at least 3 stages, else None: the overlapped schedules need 3). One store a tensor: the others
    (the log-sum-exp's) keep the register path."""
    m = mode()
    if m == "0":
        return None, p
    for op in after:
        if not isinstance(op, ir.Store) or op.mask is not None:
            continue
        t = k.tensor(op.tensor)
        f = ctx.fact(op.tensor)
        shape = op.value.shape
        if t.rank not in (2, 3) or len(shape) != t.rank or t.dtype not in (DType.F16, DType.BF16):
            continue
        if op.value.dtype != t.dtype or f.bf16_f32 or not f.aligned16 or len(f.dims_div16) != t.rank \
                or not f.dims_div16[-1]:
            continue
        if any(x != 1 for x in shape[:-2]) or shape[-2] != p.BM or shape[-1] % 64 or shape[-1] > 256:
            continue
        if m != "buf" and shape[-1] != p.q.cols:
            continue
        if sum(isinstance(o, ir.Store) and o.tensor == op.tensor for o in after) != 1:
            continue
        unit = 32 if switch_mode("TILEC_ATTN_OSTORE_BY", "warpgroup", ("warp", "warpgroup")) == "warp" else 128
        box = (1, unit // 2, 64) if t.rank == 3 else (unit // 2, 64)  # 64 rows a warpgroup, 16 a warp
        o = OStore(m, op.tensor, p.BM, shape[-1], unit,
                   g.TmaDesc(f"{op.tensor}.tma_o", op.tensor, box, 128, op.span))
        if m != "buf":
            return o, p
        n = min(p.stages, (smem - p.q.nbytes - o.nbytes) // (p.k.nbytes + p.v.nbytes))
        return (o, dataclasses.replace(p, stages=n)) if n >= 3 else (None, p)  # 2: the serial schedule only
    return None, p


def buffer(o: OStore | None, p: Any, qbuf: ir.Value, vbuf: ir.Value, serial: bool, fresh: Any,
           layouts: dict[int, Any], pre: list[object], span: Any) -> tuple[OStore | None, ir.Value]:
    """The store as planned ("v" becomes "q" where the last block's V stage
    is not the tile's shape, or the loop frees every stage itself (the
    serial schedule), or the ring has fewer than 3 stages (the stage is
    released in the next tile, after its first stage's wait)) and the buffer O goes through (Q's, V's ring, or a new one
    allocated in `pre`)."""
    if o is not None and o.mode == "v" and (serial or p.stages < 3 or (p.v.rows, p.v.cols) != (o.rows, o.cols)):
        o = dataclasses.replace(o, mode="q")
    if o is None or o.mode == "q":
        return o, qbuf
    if o.mode == "v":
        return o, vbuf
    b = fresh.value(qbuf.dtype, (1, o.rows, o.cols), "obuf")
    layouts[b.id] = Shared(128, "row")
    pre.append(g.SmemAlloc(b, span=span))
    return o, b


def reciprocals(ops: list[object], fresh: Any) -> list[object]:
    """The epilogue's f32 divisions by a broadcast vector (the softmax's
    `acc / l`) as one reciprocal per vector element and a multiply per
    element: 2 IEEE divisions a thread instead of one (about ten
    instructions) per accumulator element. x * (1 / y) is within an ulp or
    so of x / y (the interpreter's), far inside the f16/bf16 result's."""
    E = ir.ElemOp
    bcast = {op.result.id: op for op in ops if isinstance(op, ir.Broadcast)}
    out: list[object] = []
    for op in ops:
        b = bcast.get(op.operands[1].id) if isinstance(op, ir.Elementwise) and op.op is E.DIV else None
        if b is None or op.result.dtype is not DType.F32 or not b.x.shape:  # type: ignore[union-attr]
            out.append(op)
            continue
        x = b.x
        one, ones = fresh.value(DType.F32, ()), fresh.value(DType.F32, x.shape)
        rcp, wide = fresh.value(DType.F32, x.shape, "rcp"), fresh.value(DType.F32, op.result.shape)  # type: ignore[union-attr]
        out += [ir.Const(one, 1.0), ir.Broadcast(ones, one), ir.Elementwise(rcp, E.DIV, (ones, x)),
                ir.Broadcast(wide, rcp), ir.Elementwise(op.result, E.MUL, (op.operands[0], wide))]  # type: ignore[union-attr]
    return out


def rewrite(epilogue: list[object], o: OStore | None, buf: ir.Value, qbuf: ir.Value, last: ir.Value,
            ran: ir.Value) -> tuple[list[object], list[object]]:
    """`epilogue` with its store of `o.tensor` as a `g.TmaStore` from `buf`
    ("buf": after the wait for the previous tile's store; "v": from the stage
    of the loop's last block `last`, or Q's buffer where it did not run), and
    the wait that ends the store (nothing without one)."""
    if o is None:
        return epilogue, []
    out: list[object] = []
    for op in epilogue:
        if isinstance(op, ir.Store) and op.tensor == o.tensor:
            store = g.TmaStore(o.desc.name, op.tensor, op.offsets, op.value, buf, unit=o.unit, span=op.span)
            if o.mode == "buf":
                out += [g.TmaStoreWait(span=op.span), dataclasses.replace(store, first="group")]
            elif o.mode == "v":
                out.append(dataclasses.replace(store, stage=last, alt=qbuf, ran=ran, first="all"))
            else:
                out.append(store)
        else:
            out.append(op)
    return out, [g.TmaStoreWait(span=o.desc.span)]


def released(o: OStore | None, qrel: g.BarrierArrive, rel: list[object], post: list[object], epilogue: list[object],
             fin: list[object], ran: ir.Value, idle: ir.Value, ring: ir.Value, S: int, empty: ir.Value,
             fresh: Any) -> tuple[list[object], list[object], tuple[tuple[ir.Value, ir.Value, object], ...]]:
    """A persistent tile's consumer ops around the loop: (before it, after
    it, values carried to the next tile, as `attention_tiles.tile_loop`
    takes them). After it: `post` (the loop's last waits and the scalars the
    releases read), the epilogue, Q's release `qrel` and the last block's
    stage's `rel`, in the order the store's buffer needs. Without a store or
    with its own buffer ("buf"; its waits are at the next store and after
    the walk): Q right after the loop. "q": Q after the store has read it.
    "v": Q right after the loop where it ran (`ran`; where it did not,
    `idle`, O went through Q: Q after the store has read it), and the last
    block's stage (O's buffer) in the NEXT tile, before its loop (the issuing
    thread's wait is then long satisfied; the stage is the one before the
    ring's counter `ring`, released where the previous tile's loop ran: the
    carried flag); the walk's end waits for the last store."""
    if o is None or o.mode == "buf":
        return [], [qrel, *post, *rel, *epilogue], ()
    if o.mode == "q":
        return [], [*post, *rel, *epilogue, *fin, qrel], ()
    E = ir.ElemOp
    pend, prev = fresh.value(DType.BOOL, (), "o_pending"), fresh.value(DType.I32, (), "o_stage")
    k1, kS = fresh.value(DType.I32, ()), fresh.value(DType.I32, ())
    up = fresh.value(DType.I32, ())
    head = [ir.Const(k1, S - 1), ir.Const(kS, S), ir.Elementwise(up, E.ADD, (ring, k1)),
            ir.Elementwise(prev, E.REM, (up, kS)), g.TmaStoreWait(pend), g.BarrierArrive(empty, prev, pend)]
    tail = [*post, dataclasses.replace(qrel, pred=ran), *epilogue, g.TmaStoreWait(idle),
            dataclasses.replace(qrel, pred=idle)]
    return head, tail, ((pend, ran, False),)


__all__ = ["OSTORE_DEFAULT", "OStore", "buffer", "mode", "plan", "reciprocals", "released", "rewrite"]
